"""retrograd.models against torchvision's architectures.

torchvision is not installed here, so the reference is a compact torch copy of its
ResNet and ViT (same module tree, so the same state-dict keys). Weights go torch ->
retrograd through a file written by ``torch.save`` and read by ``retrograd.load``.
"""

import collections
import math

import numpy
import pytest

import retrograd
from retrograd import models


def _torch_models(torch):
    """torchvision's resnet / vision_transformer module trees, written compactly in torch."""
    nn = torch.nn

    def conv(i, o, k, s=1):
        return nn.Conv2d(i, o, k, s, padding=k // 2, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, i, p, s, down):
            super().__init__()
            self.conv1, self.bn1 = conv(i, p, 3, s), nn.BatchNorm2d(p)
            self.relu = nn.ReLU(inplace=True)
            self.conv2, self.bn2 = conv(p, p, 3), nn.BatchNorm2d(p)
            self.downsample = down

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            return self.relu(out + idt)

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, i, p, s, down):
            super().__init__()
            self.conv1, self.bn1 = conv(i, p, 1), nn.BatchNorm2d(p)
            self.conv2, self.bn2 = conv(p, p, 3, s), nn.BatchNorm2d(p)
            self.conv3, self.bn3 = conv(p, 4 * p, 1), nn.BatchNorm2d(4 * p)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = down

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn3(self.conv3(self.relu(self.bn2(self.conv2(out)))))
            return self.relu(out + idt)

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=1000):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1, self.relu = nn.BatchNorm2d(64), nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            for n, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
                setattr(self, f"layer{n + 1}", self._layer(block, planes, blocks, 1 + (n > 0)))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * block.expansion, num_classes)

        def _layer(self, block, planes, blocks, stride):
            out = planes * block.expansion
            down = None
            if stride != 1 or self.inplanes != out:
                down = nn.Sequential(conv(self.inplanes, out, 1, stride), nn.BatchNorm2d(out))
            layers = [block(self.inplanes, planes, stride, down)]
            self.inplanes = out
            layers += [block(out, planes, 1, None) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    class EncoderBlock(nn.Module):
        def __init__(self, heads, dim, mlp):
            super().__init__()
            self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
            self.self_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
            self.dropout = nn.Dropout(0.0)
            self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Dropout(0.0),
                                     nn.Linear(mlp, dim), nn.Dropout(0.0))

        def forward(self, inp):
            x = self.ln_1(inp)
            x, _ = self.self_attention(x, x, x, need_weights=False)
            x = self.dropout(x) + inp
            return x + self.mlp(self.ln_2(x))

    class Encoder(nn.Module):
        def __init__(self, seq, layers, heads, dim, mlp):
            super().__init__()
            self.pos_embedding = nn.Parameter(torch.empty(1, seq, dim).normal_(std=0.02))
            self.dropout = nn.Dropout(0.0)
            self.layers = nn.Sequential(collections.OrderedDict(
                (f"encoder_layer_{i}", EncoderBlock(heads, dim, mlp)) for i in range(layers)))
            self.ln = nn.LayerNorm(dim, eps=1e-6)

        def forward(self, x):
            return self.ln(self.layers(self.dropout(x + self.pos_embedding)))

    class ViT(nn.Module):
        def __init__(self, image, patch, layers, heads, dim, mlp, num_classes=1000):
            super().__init__()
            self.patch, self.dim = patch, dim
            self.conv_proj = nn.Conv2d(3, dim, patch, patch)
            self.class_token = nn.Parameter(torch.zeros(1, 1, dim))
            self.encoder = Encoder((image // patch) ** 2 + 1, layers, heads, dim, mlp)
            self.heads = nn.Sequential(collections.OrderedDict(
                head=nn.Linear(dim, num_classes)))

        def forward(self, x):
            n = x.shape[0]
            x = self.conv_proj(x).reshape(n, self.dim, -1).permute(0, 2, 1)
            x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
            return self.heads(self.encoder(x)[:, 0])

    return {
        "resnet18": lambda: ResNet(BasicBlock, [2, 2, 2, 2]),
        "resnet34": lambda: ResNet(BasicBlock, [3, 4, 6, 3]),
        "resnet50": lambda: ResNet(Bottleneck, [3, 4, 6, 3]),
        "vit_b_16": lambda: ViT(224, 16, 12, 12, 768, 3072),
        "vit_tiny": lambda: ViT(32, 8, 2, 4, 64, 128, num_classes=10),
    }


def _shapes(state):
    return [(k, tuple(v.shape)) for k, v in state.items()]


def _copy(torch, tmodel, tmp_path, builder, **kwargs):
    """The retrograd model built with ``weights=`` a file that ``torch.save`` wrote."""
    path = tmp_path / "weights.pth"
    torch.save(tmodel.state_dict(), path)
    state = retrograd.load(path)
    assert isinstance(state["fc.weight" if "fc.weight" in state else "heads.head.weight"],
                      retrograd.Tensor)
    return builder(weights=str(path), **kwargs)


def _close(actual, expected, rtol=1e-7, atol=1e-9):
    numpy.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(),
                                  rtol=rtol, atol=atol)


def _forward_backward(torch, tmodel, rmodel, tx, train):
    """Outputs, parameter gradients and buffers agree, in float64 so that float32 rounding
    (amplified by train-mode BatchNorm over few values) does not hide real differences."""
    tmodel.double().train(train)
    rmodel.double().train(train)
    tx = tx.double()
    rx = retrograd.tensor(tx.numpy())
    tout, rout = tmodel(tx), rmodel(rx)
    _close(rout, tout)
    w = torch.randn(tout.shape, dtype=torch.float64)
    (tout * w).sum().backward()
    (rout * retrograd.tensor(w.numpy())).sum().backward()
    tparams = dict(tmodel.named_parameters())
    for name, p in rmodel.named_parameters():
        if not p.requires_grad:
            assert p.grad is None and tparams[name].grad is None, name
            continue
        scale = float(tparams[name].grad.abs().max()) + 1e-12
        _close(p.grad / scale, tparams[name].grad / scale, atol=1e-8)
    tbuffers = dict(tmodel.named_buffers())
    for name, b in rmodel.named_buffers():
        _close(b, tbuffers[name])


@pytest.mark.torch
@pytest.mark.parametrize("name, entries, params", [
    ("resnet18", 122, 11689512), ("resnet34", 218, 21797672), ("resnet50", 320, 25557032),
    ("vit_b_16", 152, 86567656)])
def test_state_dict_keys_and_shapes_match_torchvision(torch, name, entries, params):
    """The keys and shapes of the torch copy, and torchvision's entry and parameter counts."""
    model = getattr(models, name)()
    state = model.state_dict()
    assert len(state) == entries
    assert sum(p.numel() for p in model.parameters()) == params
    assert _shapes(state) == _shapes(_torch_models(torch)[name]().state_dict())


@pytest.mark.torch
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_resnet18_matches_torch(torch, tmp_path, train):
    torch.manual_seed(0)
    tmodel = _torch_models(torch)["resnet18"]()
    with torch.no_grad():  # non-trivial BN statistics and affine parameters
        for m in tmodel.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    rmodel = _copy(torch, tmodel, tmp_path, models.resnet18)
    _forward_backward(torch, tmodel, rmodel, torch.randn(4, 3, 32, 32), train)


@pytest.mark.torch
def test_resnet18_num_classes_and_frozen_backbone(torch, tmp_path):
    torch.manual_seed(1)
    tmodel = _torch_models(torch)["resnet18"]()
    tmodel.fc = torch.nn.Linear(512, 10)
    rmodel = _copy(torch, tmodel, tmp_path, models.resnet18, num_classes=10)
    for m in (tmodel, rmodel):
        for name, p in m.named_parameters():
            p.requires_grad = name.startswith("fc.")
    _forward_backward(torch, tmodel, rmodel, torch.randn(2, 3, 32, 32), True)
    assert [n for n, p in rmodel.named_parameters() if p.grad is not None] == \
        ["fc.weight", "fc.bias"]


@pytest.mark.torch
def test_vit_tiny_matches_torch(torch, tmp_path):
    torch.manual_seed(0)
    tmodel = _torch_models(torch)["vit_tiny"]()
    with torch.no_grad():  # torchvision zero-inits the head, which would hide the body
        tmodel.heads.head.weight.normal_(std=0.1)
        tmodel.heads.head.bias.normal_(std=0.1)
        tmodel.class_token.normal_()
    rmodel = _copy(torch, tmodel, tmp_path, models.vit_tiny)
    assert _shapes(rmodel.state_dict()) == _shapes(tmodel.state_dict())
    _forward_backward(torch, tmodel, rmodel, torch.randn(3, 3, 32, 32), True)


def test_vit_image_size_and_num_classes():
    model = models.vit_tiny(image_size=48, num_classes=3)
    assert model.encoder.pos_embedding.shape == (1, 37, 64)
    assert model(retrograd.rand(2, 3, 48, 48)).shape == (2, 3)
    with pytest.raises(AssertionError, match="Wrong image height"):
        model(retrograd.rand(1, 3, 32, 32))


def test_torchvision_init():
    model = models.resnet18()
    w = model.layer1[0].conv1.weight  # kaiming_normal_, fan_out, relu: std sqrt(2 / (64*9))
    assert abs(float(w.std()) - math.sqrt(2 / (64 * 9))) < 0.005
    assert bool((model.bn1.weight == 1).all()) and bool((model.bn1.bias == 0).all())
    vit = models.vit_tiny()
    assert bool((vit.heads.head.weight == 0).all()) and bool((vit.class_token == 0).all())
    assert abs(float(vit.encoder.pos_embedding.std()) - 0.02) < 0.005


@pytest.mark.parametrize("weights", [models.ResNet18_Weights.DEFAULT,
                                     models.ResNet18_Weights.IMAGENET1K_V1, "DEFAULT",
                                     "IMAGENET1K_V1"])
def test_weight_names_explain_that_downloads_are_unavailable(weights):
    with pytest.raises(ValueError, match="cannot download pretrained weights.*local"):
        models.resnet18(weights=weights)


def test_weights_from_a_retrograd_checkpoint(tmp_path):
    model = models.vit_tiny()
    retrograd.nn.init.normal_(model.heads.head.weight)
    retrograd.save(model.state_dict(), tmp_path / "vit.pt")
    loaded = models.vit_tiny(weights=tmp_path / "vit.pt")
    x = retrograd.rand(1, 3, 32, 32)
    assert bool((loaded(x) == model(x)).all())


def test_models_is_imported_lazily():
    import subprocess
    import sys
    code = ("import sys, retrograd; assert 'retrograd.models' not in sys.modules; "
            "assert retrograd.models.resnet18 is sys.modules['retrograd.models'].resnet18")
    subprocess.run([sys.executable, "-c", code], check=True)
