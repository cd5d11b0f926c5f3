"""Vision Transformer (Dosovitskiy et al., 2020) with torchvision's module tree, state-dict
keys and init."""

import math
from collections import OrderedDict
from functools import partial

from .. import _creation, nn
from ..ops.joining import cat
from ._weights import WeightsEnum, legacy_pretrained, load_weights

__all__ = ["VisionTransformer", "vit_b_16", "vit_l_16", "vit_tiny", "ViT_B_16_Weights",
           "ViT_L_16_Weights"]


class MLPBlock(nn.Sequential):
    """Linear-GELU-Dropout-Linear-Dropout: keys ``0`` and ``3`` as in torchvision."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
                         nn.Linear(mlp_dim, in_dim), nn.Dropout(dropout))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:  # torchvision's torch._assert raises AssertionError
            raise AssertionError(
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(_creation.empty(1, seq_length, hidden_dim))
        nn.init.normal_(self.pos_embedding, std=0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                attention_dropout, norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        if input.dim() != 3:  # torchvision's torch._assert raises AssertionError
            raise AssertionError(
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise AssertionError("Input shape indivisible by patch size!")
        if conv_stem_configs is not None:
            raise NotImplementedError("VisionTransformer: conv_stem_configs is not supported")
        self.image_size, self.patch_size = image_size, patch_size
        self.hidden_dim, self.mlp_dim = hidden_dim, mlp_dim
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.norm_layer = norm_layer
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # + the class token
        self.class_token = nn.Parameter(_creation.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)

        fan_in = self.conv_proj.in_channels * patch_size * patch_size
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if representation_size is not None:
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / hidden_dim))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, _, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise AssertionError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise AssertionError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x)  # (n, hidden_dim, h/p, w/p)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        cls = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(cat([cls, x], dim=1))
        return self.heads(x[:, 0])


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_SWAG_E2E_V1 = "IMAGENET1K_SWAG_E2E_V1"
    IMAGENET1K_SWAG_LINEAR_V1 = "IMAGENET1K_SWAG_LINEAR_V1"
    DEFAULT = "IMAGENET1K_V1"


class ViT_L_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_SWAG_E2E_V1 = "IMAGENET1K_SWAG_E2E_V1"
    IMAGENET1K_SWAG_LINEAR_V1 = "IMAGENET1K_SWAG_LINEAR_V1"
    DEFAULT = "IMAGENET1K_V1"


def _vit(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights, weights_enum,
         kwargs):
    if weights_enum is not None:
        weights = legacy_pretrained(weights, kwargs, weights_enum)
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size, patch_size, num_layers, num_heads, hidden_dim,
                              mlp_dim, **kwargs)
    return load_weights(model, weights, weights_enum)


def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16; ``weights`` is None or a local checkpoint path (no downloads)."""
    return _vit(16, 12, 12, 768, 3072, weights, ViT_B_16_Weights, kwargs)


def vit_l_16(*, weights=None, progress=True, **kwargs):
    """ViT-L/16; ``weights`` is None or a local checkpoint path (no downloads)."""
    return _vit(16, 24, 16, 1024, 4096, weights, ViT_L_16_Weights, kwargs)


def vit_tiny(*, weights=None, progress=True, **kwargs):
    """A 2-layer ViT for 32x32 images (patch 8, width 64, 4 heads, MLP 128, 10 classes):
    small enough for tests; not a torchvision model."""
    kwargs.setdefault("image_size", 32)
    kwargs.setdefault("num_classes", 10)
    return _vit(8, 2, 4, 64, 128, weights, None, kwargs)
