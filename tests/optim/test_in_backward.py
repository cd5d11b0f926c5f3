"""Optimizer in backward: the tutorial's hook pattern, PyTorch's
``_apply_optimizer_in_backward``, and ``fuse_into_backward``, each against the usual
``backward(); step(); zero_grad()`` loop's parameters."""

import copy
import math
import warnings

import numpy
import pytest

import retrograd
from retrograd.distributed.optim import (
    _apply_optimizer_in_backward,
    _get_in_backward_optimizers,
    param_to_acc_grad_map,
    param_to_optim_hook_handle_map,
)
from retrograd.autograd import Variable
from retrograd.optim import fuse_into_backward
from retrograd.optim.in_backward import active_handles
from retrograd.optim.lr_scheduler import LambdaLR, StepLR

nn = retrograd.nn

OPTIMIZERS = [
    (retrograd.optim.SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    (retrograd.optim.Adam, {"lr": 0.01}),
    (retrograd.optim.AdamW, {"lr": 0.01, "amsgrad": True}),
    (retrograd.optim.RMSprop, {"lr": 0.01, "momentum": 0.5}),
    (retrograd.optim.Adagrad, {"lr": 0.1}),
]


def _model(seed=0):
    retrograd.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def _pair():
    """Two models with equal parameters."""
    a, b = _model(), _model()
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert numpy.array_equal(p.detach().numpy(), q.detach().numpy())
    return a, b


def _batches(n, size=5):
    rng = numpy.random.default_rng(1)
    return [(retrograd.tensor(rng.standard_normal((size, 4)), dtype=retrograd.float32),
             retrograd.tensor(rng.standard_normal((size, 3)), dtype=retrograd.float32))
            for _ in range(n)]


def _loss(model, x, y):
    return ((model(x) - y) ** 2).mean()


def _assert_same(a, b):
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        numpy.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def _assert_close(a, b):
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        numpy.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(),
                                      rtol=1e-5, atol=1e-6)


# ---- the tutorial's pattern ---------------------------------------------------------------

@pytest.mark.parametrize("cls,kw", OPTIMIZERS, ids=lambda x: getattr(x, "__name__", ""))
def test_tutorial_hook_pattern_matches_usual_loop(cls, kw):
    ref, fused = _pair()
    opt = cls(ref.parameters(), **kw)
    optimizer_dict = {p: cls([p], foreach=False, **kw) for p in fused.parameters()}

    def optimizer_hook(parameter):
        optimizer_dict[parameter].step()
        optimizer_dict[parameter].zero_grad()

    for p in fused.parameters():
        p.register_post_accumulate_grad_hook(optimizer_hook)
    for x, y in _batches(4):
        _loss(ref, x, y).backward()
        opt.step()
        opt.zero_grad()
        _loss(fused, x, y).backward()
        assert all(p.grad is None for p in fused.parameters())
    _assert_same(ref, fused)


# ---- _apply_optimizer_in_backward -------------------------------------------------------

def test_apply_optimizer_in_backward_matches_usual_loop():
    ref, fused = _pair()
    ref_params, params = list(ref.parameters()), list(fused.parameters())
    opt1 = retrograd.optim.SGD(ref_params[:1], lr=0.02)
    opt2 = retrograd.optim.Adam(ref_params[1:], lr=0.04)
    _apply_optimizer_in_backward(retrograd.optim.SGD, params[:1], {"lr": 0.02})
    _apply_optimizer_in_backward(retrograd.optim.Adam, params[1:], {"lr": 0.04})
    for x, y in _batches(3):
        _loss(ref, x, y).backward()
        opt1.step()
        opt2.step()
        opt1.zero_grad()
        opt2.zero_grad()
        _loss(fused, x, y).backward()
        assert all(p.grad is None for p in params)
    _assert_same(ref, fused)
    optims = _get_in_backward_optimizers(fused)
    assert [type(o) for o in optims] == [retrograd.optim.SGD] + [retrograd.optim.Adam] * 3
    assert [o.param_groups[0]["params"][0] for o in optims] == params
    assert params[0]._optimizer_classes == [retrograd.optim.SGD]
    assert params[1]._optimizer_kwargs == [{"lr": 0.04}]
    for p in params:
        assert len(param_to_optim_hook_handle_map[p]) == 1
        assert param_to_acc_grad_map[p] is (p * 1).grad_fn.next_functions[0][0]


def test_apply_optimizer_in_backward_two_optimizers_one_param():
    w = retrograd.nn.Parameter(retrograd.tensor([1.0, 2.0]))
    _apply_optimizer_in_backward(retrograd.optim.SGD, [w], {"lr": 0.5})
    _apply_optimizer_in_backward(retrograd.optim.SGD, [w], {"lr": 0.25})
    (w * w).sum().backward()  # both optimizers step with grad 2w, then the grad is freed
    numpy.testing.assert_allclose(w.detach().numpy(), [1 - 1.0 - 0.5, 2 - 2.0 - 1.0])
    assert w.grad is None
    assert len(param_to_optim_hook_handle_map[w]) == 2
    assert len(w._in_backward_optimizers) == 2


def test_apply_optimizer_in_backward_without_hook():
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    _apply_optimizer_in_backward(retrograd.optim.SGD, model.parameters(), {"lr": 0.1},
                                 register_hook=False)
    _loss(model, *_batches(1)[0]).backward()
    for p, b in zip(model.parameters(), before, strict=True):
        assert p.grad is not None
        assert numpy.array_equal(p.detach().numpy(), b.numpy())
        assert p not in param_to_optim_hook_handle_map
    assert len(_get_in_backward_optimizers(model)) == 4


def test_distributed_imports_without_mpi():
    import retrograd.distributed as dist
    assert dist.optim._apply_optimizer_in_backward is _apply_optimizer_in_backward


# ---- fuse_into_backward -------------------------------------------------------------------

@pytest.mark.parametrize("cls,kw", OPTIMIZERS, ids=lambda x: getattr(x, "__name__", ""))
def test_fuse_matches_usual_loop(cls, kw):
    ref, fused = _pair()
    opt_ref = cls(ref.parameters(), **kw)
    opt = cls(fused.parameters(), **kw)
    handle = fuse_into_backward(opt)
    for x, y in _batches(4):
        _loss(ref, x, y).backward()
        opt_ref.step()
        opt_ref.zero_grad()
        _loss(fused, x, y).backward()
        assert all(p.grad is None for p in fused.parameters())  # freed in backward
        opt.step()       # harmless no-ops while fused
        opt.zero_grad()
    _assert_same(ref, fused)
    handle.remove()


def test_fuse_param_groups_and_unused_params():
    ref, fused = _pair()

    def groups(m):
        ps = list(m.parameters())
        return [{"params": ps[:2], "lr": 0.05}, {"params": ps[2:]}]

    opt_ref = retrograd.optim.Adam(groups(ref), lr=0.01)
    opt = retrograd.optim.Adam(groups(fused), lr=0.01)
    fuse_into_backward(opt)
    for x, _ in _batches(3):
        ref[0](x).sum().backward()  # only the first layer gets gradients
        opt_ref.step()
        opt_ref.zero_grad()
        fused[0](x).sum().backward()
    _assert_same(ref, fused)
    assert len(opt.state) == 2 and len(opt_ref.state) == 2


@pytest.mark.parametrize("made", ["before", "after"])
@pytest.mark.parametrize("sched", ["step", "lambda"])
def test_fuse_lr_scheduler(sched, made):
    """A scheduler made before or after fusing drives the in-backward updates' lr."""
    ref, fused = _pair()
    opt_ref = retrograd.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = retrograd.optim.SGD(fused.parameters(), lr=0.1, momentum=0.9)

    def make(o):
        return StepLR(o, step_size=2, gamma=0.5) if sched == "step" \
            else LambdaLR(o, lambda e: 1.0 / (1 + e))

    s_ref = make(opt_ref)
    if made == "before":
        s = make(opt)
        fuse_into_backward(opt)
    else:
        fuse_into_backward(opt)
        s = make(opt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no step-order / overridden-step warnings
        for x, y in _batches(6):
            _loss(ref, x, y).backward()
            opt_ref.step()
            opt_ref.zero_grad()
            s_ref.step()
            _loss(fused, x, y).backward()  # no optimizer.step() call at all
            s.step()
    assert s.get_last_lr() == s_ref.get_last_lr() != [0.1]
    _assert_same(ref, fused)


def test_fuse_state_dict_roundtrip():
    ref, fused = _pair()
    opt_ref = retrograd.optim.Adam(ref.parameters(), lr=0.01)
    opt = retrograd.optim.Adam(fused.parameters(), lr=0.01)
    handle = fuse_into_backward(opt)
    batches = _batches(4)
    for x, y in batches[:2]:
        _loss(ref, x, y).backward()
        opt_ref.step()
        opt_ref.zero_grad()
        _loss(fused, x, y).backward()
    sd, sd_ref = opt.state_dict(), opt_ref.state_dict()
    assert sd["param_groups"] == sd_ref["param_groups"]
    for i in sd_ref["state"]:
        for k in sd_ref["state"][i]:
            numpy.testing.assert_array_equal(sd["state"][i][k].numpy(),
                                             sd_ref["state"][i][k].numpy())
    # Load the fused optimizer's (copied) state into a fresh fused optimizer over a copy
    # of the model; training continues exactly as the usual loop.
    fused2 = _model()
    fused2.load_state_dict(fused.state_dict())
    opt2 = retrograd.optim.Adam(fused2.parameters(), lr=0.5)
    fuse_into_backward(opt2)
    opt2.load_state_dict(copy.deepcopy(sd))
    assert opt2.param_groups[0]["lr"] == 0.01
    for x, y in batches[2:]:
        _loss(ref, x, y).backward()
        opt_ref.step()
        opt_ref.zero_grad()
        _loss(fused2, x, y).backward()
    _assert_same(ref, fused2)
    handle.remove()


@pytest.mark.parametrize("k", [2, 3])
def test_fuse_gradient_accumulation(k):
    ref, fused = _pair()
    opt_ref = retrograd.optim.Adam(ref.parameters(), lr=0.01)
    opt = retrograd.optim.Adam(fused.parameters(), lr=0.01)
    fuse_into_backward(opt, accumulate_steps=k)
    before = [p.detach().clone() for p in fused.parameters()]
    for i, (x, y) in enumerate(_batches(2 * k)):
        (_loss(ref, x, y) / k).backward()
        if (i + 1) % k == 0:
            opt_ref.step()
            opt_ref.zero_grad()
        (_loss(fused, x, y) / k).backward()
        opt.zero_grad()  # a no-op: must not lose the accumulation
        last = (i + 1) % k == 0
        assert all((p.grad is None) == last for p in fused.parameters())
        if i == 0:  # no update before the last micro-batch
            for p, b in zip(fused.parameters(), before, strict=True):
                assert numpy.array_equal(p.detach().numpy(), b.numpy())
    _assert_same(ref, fused)


def _clip(params, max_norm):
    """The usual loop's global-norm clipping (``clip_grad_norm_``)."""
    grads = [p.grad.numpy() for p in params]
    total = math.sqrt(math.fsum(float(numpy.linalg.norm(g.ravel())) ** 2 for g in grads))
    coef = min(max_norm / (total + 1e-6), 1.0)
    for p in params:
        p.grad.mul_(coef)
    return total


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("max_norm", [0.05, 100.0])
def test_fuse_clip_grad_norm_two_pass(k, max_norm):
    ref, fused = _pair()
    opt_ref = retrograd.optim.SGD(ref.parameters(), lr=0.5, momentum=0.9)
    opt = retrograd.optim.SGD(fused.parameters(), lr=0.5, momentum=0.9)
    handle = fuse_into_backward(opt, accumulate_steps=k, clip_grad_norm=max_norm)
    clipped = False
    for i, (x, y) in enumerate(_batches(3 * k)):
        (_loss(ref, x, y) / k).backward()
        if (i + 1) % k == 0:
            clipped |= _clip(list(ref.parameters()), max_norm) > max_norm
            opt_ref.step()
            opt_ref.zero_grad()
        handle.backward(_loss(fused, x, y) / k)
    assert clipped == (max_norm < 1)
    _assert_close(ref, fused)


def test_fuse_clip_manual_passes():
    """The two passes by hand: ``backward(retain_graph=True)`` then ``backward()``."""
    ref, fused = _pair()
    opt_ref = retrograd.optim.Adam(ref.parameters(), lr=0.01)
    opt = retrograd.optim.Adam(fused.parameters(), lr=0.01)
    fuse_into_backward(opt, clip_grad_norm=0.1)
    for x, y in _batches(3):
        _loss(ref, x, y).backward()
        _clip(list(ref.parameters()), 0.1)
        opt_ref.step()
        opt_ref.zero_grad()
        loss = _loss(fused, x, y)
        loss.backward(retain_graph=True)  # the norm pass: nothing changes, no gradients
        assert all(p.grad is None for p in fused.parameters())
        loss.backward()
    _assert_close(ref, fused)


def test_fuse_remove_restores_usual_loop():
    ref, fused = _pair()
    opt_ref = retrograd.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = retrograd.optim.SGD(fused.parameters(), lr=0.1, momentum=0.9)
    handle = fuse_into_backward(opt)
    assert opt.step.__func__ is not retrograd.optim.SGD.step
    for i, (x, y) in enumerate(_batches(4)):
        if i == 2:
            handle.remove()
            handle.remove()  # idempotent
            assert "step" not in opt.__dict__ and "zero_grad" not in opt.__dict__
        _loss(ref, x, y).backward()
        opt_ref.step()
        opt_ref.zero_grad()
        _loss(fused, x, y).backward()
        assert all((p.grad is None) == (i < 2) for p in fused.parameters())
        opt.step()
        opt.zero_grad()
    _assert_same(ref, fused)
    fuse_into_backward(opt).remove()  # can fuse again after removing


def test_fuse_step_closure():
    ref, fused = _pair()
    opt_ref = retrograd.optim.SGD(ref.parameters(), lr=0.1)
    opt = retrograd.optim.SGD(fused.parameters(), lr=0.1)
    fuse_into_backward(opt)
    for x, y in _batches(2):
        def closure(m=fused, x=x, y=y):
            opt.zero_grad()
            loss = _loss(m, x, y)
            loss.backward()
            return loss

        _loss(ref, x, y).backward()
        opt_ref.step()
        opt_ref.zero_grad()
        assert isinstance(opt.step(closure), retrograd.Tensor)
    _assert_same(ref, fused)
    assert opt.step() is None


def test_fuse_errors():
    opt = retrograd.optim.SGD(_model().parameters(), lr=0.1)
    with pytest.raises(TypeError):
        fuse_into_backward(object())
    with pytest.raises(ValueError, match="accumulate_steps"):
        fuse_into_backward(opt, accumulate_steps=0)
    with pytest.raises(ValueError, match="clip_grad_norm"):
        fuse_into_backward(opt, clip_grad_norm=0.0)
    h = fuse_into_backward(opt)
    with pytest.raises(RuntimeError, match="already fused"):
        fuse_into_backward(opt)
    h.remove()

    class Custom(retrograd.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            pass

    with pytest.raises(NotImplementedError, match="per-parameter update"):
        fuse_into_backward(Custom(_model().parameters()))
    with pytest.raises(NotImplementedError, match="differentiable"):
        fuse_into_backward(retrograd.optim.SGD(_model().parameters(), lr=0.1,
                                               differentiable=True))


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.distributed's import
def test_apply_optimizer_in_backward_against_torch(torch):
    from torch.distributed.optim import _apply_optimizer_in_backward as torch_apply
    model = _model()
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters(), strict=True):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    _apply_optimizer_in_backward(retrograd.optim.Adam, model.parameters(), {"lr": 0.01})
    torch_apply(torch.optim.Adam, tmodel.parameters(), {"lr": 0.01})
    for x, y in _batches(3):
        _loss(model, x, y).backward()
        tx, ty = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
        ((tmodel(tx) - ty) ** 2).mean().backward()
    for p, q in zip(model.parameters(), tmodel.parameters(), strict=True):
        assert p.grad is None and q.grad is None
        numpy.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                      atol=1e-6)


def test_fuse_frees_each_gradient_during_backward():
    """The memory point: by the time the first layer's gradients arrive, the last layer
    is already updated and its gradients are gone."""
    model = _model()
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1)
    fuse_into_backward(opt)
    last = list(model[2].parameters())
    before = [p.detach().clone() for p in last]
    seen = []

    def check(p):
        seen.append([q.grad is None for q in last])
        seen.append([not numpy.array_equal(q.detach().numpy(), b.numpy())
                     for q, b in zip(last, before, strict=True)])

    model[0].weight.register_post_accumulate_grad_hook(check)
    _loss(model, *_batches(1)[0]).backward()
    assert seen == [[True, True], [True, True]]


class _NoGradForFirst(retrograd.autograd.Function):
    """``a + b`` whose backward gives ``a`` no gradient (None)."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return None, g


@pytest.mark.parametrize("clip", [None, 0.1])
def test_fuse_param_that_gets_a_none_gradient(clip):
    """Post-accumulate hooks run for a None gradient too (as PyTorch's do): the fused
    update skips that parameter, as ``step()`` does, in the norm pass as well."""
    def params():
        retrograd.manual_seed(0)
        return retrograd.randn(3, requires_grad=True), retrograd.randn(3, requires_grad=True)

    (a0, b0), (a, b) = params(), params()
    opt_ref = retrograd.optim.SGD([a0, b0], lr=0.1)
    handle = fuse_into_backward(retrograd.optim.SGD([a, b], lr=0.1), clip_grad_norm=clip)
    for _ in range(2):
        loss = (_NoGradForFirst.apply(a0, b0) ** 2).sum()
        loss.backward()
        if clip is not None:
            retrograd.nn.utils.clip_grad_norm_([a0, b0], clip)
        opt_ref.step()
        opt_ref.zero_grad()
        handle.backward((_NoGradForFirst.apply(a, b) ** 2).sum())
    assert retrograd.equal(a, a0) and retrograd.allclose(b, b0)
    assert a.grad is None and b.grad is None


def test_fuse_hand_over_to_a_caller_that_decides_when_gradients_are_final():
    """``hand_over`` takes the handle's hooks off the parameters (backward leaves them
    alone); the caller's ``grad_ready(p)`` then runs the same update ``step()`` would."""
    a, b = _pair()
    x = retrograd.randn(5, 4)
    opt_a = retrograd.optim.Adam(a.parameters(), lr=0.01)
    handle = fuse_into_backward(retrograd.optim.Adam(b.parameters(), lr=0.01))
    assert handle in active_handles() and handle.active
    params = list(b.parameters())
    assert handle.hand_over(params) == params and handle.hand_over(params) == []
    before, seen = [p.detach().clone() for p in params], []

    def at_end():  # the caller's moment: all gradients are in, backward not yet over
        assert all(retrograd.equal(p, q) for p, q in zip(params, before, strict=True))
        for p in params:
            handle.grad_ready(p)

    def arrived(p):
        if not seen:
            Variable._execution_engine.queue_callback(at_end)
        seen.append(p)

    for p in params:
        p.register_post_accumulate_grad_hook(arrived)
    for model in (a, b):
        model(x).square().sum().backward()
    opt_a.step()
    for p, q in zip(a.parameters(), params, strict=True):
        assert retrograd.equal(p, q) and q.grad is None
    with pytest.raises(RuntimeError, match="during the backward pass"):
        handle.grad_ready(params[0])
    handle.remove()
    assert handle not in active_handles() and not handle.active
