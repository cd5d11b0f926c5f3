"""NAdam, RAdam, Adamax and Adadelta against PyTorch: group defaults, errors, options of
their own, and fusing into backward. Their trajectories and state_dicts against PyTorch
are checked with the other optimizers' (CONFIGS in test_optimizers.py); the helpers are
those of test_optimizers.py and test_in_backward.py."""

import warnings

import numpy
import pytest
from test_in_backward import _assert_same, _batches, _loss, _pair
from test_optimizers import Pair, _error, _grad, _init_values, check_state_dicts

import retrograd
from retrograd.optim import fuse_into_backward
from retrograd.optim import optimizer as _optimizer

NAMES = ["NAdam", "RAdam", "Adamax", "Adadelta"]


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_param_groups_and_defaults_match_torch(torch, name):
    check_state_dicts(torch, Pair(torch, name, {}).ro.state_dict(),
                      Pair(torch, name, {}).to.state_dict())
    extra = {"NAdam": {"momentum_decay": 0.05}, "RAdam": {"decoupled_weight_decay": True},
             "Adamax": {"eps": 1e-3}, "Adadelta": {"rho": 0.5}}[name]
    groups = [([0, 2], {"lr": 0.05, **extra}), ([1], {"weight_decay": 0.1}), ([3], {})]
    pair = Pair(torch, name, {"lr": 0.01}, groups=groups)
    for k in range(4):
        pair.step(k)
        pair.check()


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_step_dtype_follows_default_dtype(torch, name):
    torch.set_default_dtype(torch.float64)
    retrograd.set_default_dtype(retrograd.float64)
    try:
        pair = Pair(torch, name, {"lr": 0.1})
        for k in range(3):
            pair.step(k)
        pair.check()
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_matches_torch(torch, name):
    def run(T):
        w = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
        opt = getattr(T.optim, name)([w], lr=T.tensor(0.1))
        for k in range(3):
            w.grad = T.tensor([0.5, -0.25 * k], dtype=T.float64)
            opt.step()
        return w.tolist()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_training_loop_matches_torch(torch, name):
    """Gradients from backward, zero_grad, a scheduler: a small regression, end to end."""
    rng = numpy.random.default_rng(3)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w0, b0 = rng.standard_normal((3, 1)), rng.standard_normal(1)

    def run(T):
        w = T.tensor(w0, requires_grad=True)
        b = T.tensor(b0, requires_grad=True)
        xt, yt = T.tensor(x), T.tensor(y)
        opt = getattr(T.optim, name)([w, b], lr=0.05)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        losses = []
        for _ in range(8):
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        return losses + w.detach().flatten().tolist() + b.tolist()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-11)


@pytest.mark.torch
def test_errors_match_torch(torch):
    def cases(T):
        a = T.zeros(2, requires_grad=True)
        a.grad = T.ones(2)
        optim = T.optim
        return [
            lambda: optim.NAdam([a], lr=-1),
            lambda: optim.NAdam([a], lr=T.tensor([0.1, 0.2])),
            lambda: optim.NAdam([a], betas=(1.0, 0.9)),
            lambda: optim.NAdam([a], betas=(0.9, -0.1)),
            lambda: optim.NAdam([a], eps=-1),
            lambda: optim.NAdam([a], weight_decay=-1),
            lambda: optim.NAdam([a], momentum_decay=-1),
            lambda: optim.NAdam([a], fused=True),
            lambda: optim.NAdam([a], capturable=True).step(),
            lambda: optim.RAdam([a], lr=-1),
            lambda: optim.RAdam([a], betas=(0.9, 1.0)),
            lambda: optim.RAdam([a], eps=-1),
            lambda: optim.RAdam([a], weight_decay=-1),
            lambda: optim.RAdam([a], capturable=True).step(),
            lambda: optim.Adamax([a], lr=-1),
            lambda: optim.Adamax([a], betas=(-0.1, 0.9)),
            lambda: optim.Adamax([a], eps=-1),
            lambda: optim.Adamax([a], weight_decay=-1),
            lambda: optim.Adamax([a], capturable=True).step(),
            lambda: optim.Adadelta([a], lr=-1),
            lambda: optim.Adadelta([a], rho=1.5),
            lambda: optim.Adadelta([a], rho=-0.1),
            lambda: optim.Adadelta([a], eps=-1),
            lambda: optim.Adadelta([a], weight_decay=-1),
            lambda: optim.Adadelta([a], capturable=True).step(),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert _error(r) == _error(t), i


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_repr_matches_torch(torch, name):
    def make(T):
        return repr(getattr(T.optim, name)([T.zeros(2, requires_grad=True)]))
    assert make(retrograd) == make(torch)


@pytest.mark.parametrize("name", NAMES)
def test_unsupported_options_raise(name):
    w = retrograd.tensor([1.0], requires_grad=True)
    w.grad = retrograd.ones(1)
    cls = getattr(retrograd.optim, name)
    with pytest.raises(NotImplementedError, match="differentiable"):
        cls([w], differentiable=True).step()
    with pytest.raises(AssertionError, match="capturable"):
        cls([w], capturable=True).step()
    assert w.tolist() == [1.0]


@pytest.mark.parametrize("name", NAMES)
def test_legacy_float_step_becomes_tensor(name):
    w = retrograd.tensor([1.0], requires_grad=True)
    w.grad = retrograd.ones(1)
    opt = getattr(retrograd.optim, name)([w])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1
    if name == "NAdam":
        sd["state"][0]["mu_product"] = float(sd["state"][0]["mu_product"])
    opt.load_state_dict(sd)
    for key in ("step", "mu_product") if name == "NAdam" else ("step",):
        assert isinstance(opt.state[w][key], retrograd.Tensor), key
        assert opt.state[w][key].dtype == retrograd.float32, key


@pytest.mark.parametrize("name", NAMES)
def test_foreach_and_loop_identical(monkeypatch, name):
    """The threaded foreach path and the per-parameter loop give identical bits."""
    monkeypatch.setattr(_optimizer, "_MIN_PARALLEL", 0)
    results = []
    for foreach in (False, True):
        ps = [retrograd.tensor(v, requires_grad=True) for v in _init_values(numpy.float32)]
        opt = getattr(retrograd.optim, name)(ps, lr=0.01, weight_decay=0.1, foreach=foreach)
        for k in range(3):
            for p, g in zip(ps, _grad([p.detach().numpy() for p in ps], k), strict=True):
                p.grad = retrograd.tensor(g.astype(numpy.float32))
            opt.step()
        results.append([p.detach().numpy().copy() for p in ps])
    for a, b in zip(*results, strict=True):
        numpy.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_complex_params_update_as_real_pairs(name):
    z = retrograd.tensor([1 + 2j, -1 - 1j])
    x = retrograd.tensor([1.0, 2.0, -1.0, -1.0])
    oz = getattr(retrograd.optim, name)([z], lr=0.1, weight_decay=0.1)
    ox = getattr(retrograd.optim, name)([x], lr=0.1, weight_decay=0.1)
    for k in range(3):
        z.grad = retrograd.tensor([0.5 - 0.5j * k, 1 + 0.25j])
        x.grad = retrograd.tensor([0.5, -0.5 * k, 1.0, 0.25])
        oz.step()
        ox.step()
    numpy.testing.assert_allclose(z.detach().numpy().view(numpy.float32),
                                  x.detach().numpy(), rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_complex_params_match_torch(torch, name):
    def run(T):
        # (retrograd's autograd has no complex tensors yet; the optimizer needs none)
        z = T.tensor([1 + 2j, -1 - 1j], dtype=T.complex128, requires_grad=T is torch)
        opt = getattr(T.optim, name)([z], lr=0.1, weight_decay=0.1)
        for k in range(3):
            z.grad = T.tensor([0.5 - 0.5j * k, 1 + 0.25j], dtype=T.complex128)
            opt.step()
        return z.detach().numpy().copy()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Rprop", "ASGD",
                                  *NAMES])
def test_zero_dim_complex_params_match_torch(torch, name, foreach):
    # (a 0-d complex array cannot be viewed as its real pairs directly: every optimizer
    # but SGD raised NumPy's ValueError)
    def run(T):
        z = T.tensor(1 + 2j, dtype=T.complex64)
        opt = getattr(T.optim, name)([z], lr=0.1, foreach=foreach)
        for k in range(3):
            z.grad = T.tensor(0.5 - 0.25j * k, dtype=T.complex64)
            opt.step()
        return z.numpy().copy()
    r, t = run(retrograd), run(torch)
    assert r.shape == t.shape == ()
    numpy.testing.assert_allclose(r, t, rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Rprop", "ASGD",
                                  *NAMES])
def test_transposed_complex_params_match_torch(torch, name, foreach):
    # (a complex array whose last axis is not contiguous cannot be viewed as its real
    # pairs along that axis: every optimizer but SGD raised NumPy's ValueError)
    values = numpy.arange(6).reshape(2, 3) + 1j * numpy.arange(6, 0, -1).reshape(2, 3)

    def run(T):
        z = T.tensor(values, dtype=T.complex64).t()
        decay = {} if name == "Rprop" else {"weight_decay": 0.1}
        opt = getattr(T.optim, name)([z], lr=0.1, foreach=foreach, **decay)
        for k in range(3):
            z.grad = T.tensor(values.T * (0.5 - 0.25j * k), dtype=T.complex64)
            opt.step()
        return z.numpy().copy(), z.stride()
    (r, r_stride), (t, t_stride) = run(retrograd), run(torch)
    assert r_stride == t_stride == (1, 3)
    numpy.testing.assert_allclose(r, t, rtol=1e-5)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_every_modules_real_pairs_keep_the_parts_apart(shape):
    """The base view (CuPy's, the emulator's: the last axis as pairs, where a new axis of
    one element would have stride 0 on CuPy and alias the parts) and NumPy's (a new last
    axis, any layout) each give the real parts then the imaginary ones, writable."""
    from retrograd.backend.functions import ArrayFunctions, functions
    for f in (ArrayFunctions(numpy), functions(numpy)):
        z = numpy.array(numpy.arange(6.0)[:numpy.prod(shape, dtype=int)].reshape(shape)
                        * (1 + 2j), numpy.complex64)  # (an array, 0-d too: not a scalar)
        pairs = f.real_pairs(z).reshape(-1, 2)
        numpy.testing.assert_array_equal(pairs[:, 0], z.real.reshape(-1))
        numpy.testing.assert_array_equal(pairs[:, 1], z.imag.reshape(-1))
        pairs[:, 1] += 1
        numpy.testing.assert_array_equal(z.imag.reshape(-1), pairs[:, 1])


@pytest.mark.torch
def test_lbfgs_takes_a_zero_dim_complex_param_as_torch(torch):
    def run(T):
        z = T.tensor(1 + 2j, dtype=T.complex64)
        opt = T.optim.LBFGS([z], lr=0.5, max_iter=5)

        def closure():
            value = complex(z.numpy())
            z.grad = T.tensor(2 * value, dtype=T.complex64)
            return T.tensor(abs(value) ** 2)
        for _ in range(2):
            opt.step(closure)
        return z.numpy().copy()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-6)


@pytest.mark.parametrize(("cls", "kw"), [
    (retrograd.optim.NAdam, {"lr": 0.01, "weight_decay": 0.01}),
    (retrograd.optim.NAdam, {"lr": 0.01, "weight_decay": 0.01, "decoupled_weight_decay": True}),
    (retrograd.optim.RAdam, {"lr": 0.01, "betas": (0.9, 0.6)}),
    (retrograd.optim.Adamax, {"lr": 0.01}),
    (retrograd.optim.Adadelta, {"lr": 0.5, "maximize": True}),
    (retrograd.optim.Rprop, {"lr": 0.01}),
    (retrograd.optim.ASGD, {"lr": 0.05, "t0": 2, "weight_decay": 0.01}),
    (retrograd.optim.Adafactor, {"lr": 0.05}),
], ids=lambda x: getattr(x, "__name__", ""))
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
        opt.step()
        opt.zero_grad()
    _assert_same(ref, fused)
    handle.remove()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert opt.state_dict()["state"].keys() == opt_ref.state_dict()["state"].keys()
