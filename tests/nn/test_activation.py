"""The activation modules and in-place activation functions against PyTorch: reprs,
state_dicts, outputs and gradients; in-place semantics (leaf errors, version counters,
errors of a backward through a saved result); rrelu's random slopes."""

import numpy
import pytest

import retrograd
import retrograd.nn as nn
import retrograd.nn.functional as F

from _nn_util import assert_close, compare_backward, copy_weights, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
tnn, tF = torch.nn, torch.nn.functional

# (module, constructor args, kwargs, input shape)
MODULES = [
    ("LeakyReLU", (), {}, (3, 4)),
    ("LeakyReLU", (0.2, True), {}, (3, 4)),
    ("ELU", (), {"alpha": 0.5}, (3, 4)),
    ("ELU", (), {"inplace": True}, (3, 4)),
    ("CELU", (2.0,), {}, (3, 4)),
    ("CELU", (), {"inplace": True}, (3, 4)),
    ("SELU", (), {}, (3, 4)),
    ("SELU", (True,), {}, (3, 4)),
    ("Hardtanh", (), {}, (3, 4)),
    ("Hardtanh", (-2.0, 0.5, True), {}, (3, 4)),
    ("ReLU6", (), {}, (3, 4)),
    ("ReLU6", (True,), {}, (3, 4)),
    ("Softplus", (), {}, (3, 4)),
    ("Softplus", (2.0, 1.0), {}, (3, 4)),
    ("Mish", (), {}, (3, 4)),
    ("Mish", (True,), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)),
    ("Hardswish", (True,), {}, (3, 4)),
    ("Hardsigmoid", (), {}, (3, 4)),
    ("Hardsigmoid", (True,), {}, (3, 4)),
    ("LogSigmoid", (), {}, (3, 4)),
    ("PReLU", (), {}, (2, 3, 4)),
    ("PReLU", (3,), {"init": 0.1}, (2, 3, 4)),
    ("GLU", (), {}, (3, 4)),
    ("GLU", (0,), {}, (4, 3)),
    ("Softsign", (), {}, (3, 4)),
    ("Softshrink", (), {}, (3, 4)),
    ("Softshrink", (1.0,), {}, (3, 4)),
    ("Hardshrink", (0.3,), {}, (3, 4)),
    ("Tanhshrink", (), {}, (3, 4)),
    ("Threshold", (0.1, 20.0), {}, (3, 4)),
    ("Threshold", (-0.5, 2.0, True), {}, (3, 4)),
    ("Softmin", (1,), {}, (3, 4)),
    ("Softmin", (), {}, (2, 3, 4)),
    ("Softmax2d", (), {}, (2, 3, 2, 2)),
    ("Softmax2d", (), {}, (3, 2, 2)),
    ("RReLU", (), {}, (3, 4)),  # compared in eval mode
    ("RReLU", (0.1, 0.3, True), {}, (3, 4)),
    ("SiLU", (True,), {}, (3, 4)),
]


def _ids():
    return [f"{name}-{i}" for i, (name, *_rest) in enumerate(MODULES)]


@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")
@pytest.mark.parametrize("name,args,kwargs,shape", MODULES, ids=_ids())
def test_module_matches_torch(name, args, kwargs, shape):
    r = getattr(nn, name)(*args, **kwargs).double()
    t = getattr(tnn, name)(*args, **kwargs).double()
    assert repr(r) == repr(t)
    assert list(r.state_dict()) == list(t.state_dict())
    copy_weights(t, r)
    if name == "RReLU":
        r.eval()
        t.eval()
    rx, tx = pair(*shape, low=-3.0, high=3.0, seed=len(shape))
    # an in-place module writes into its input: give it a non-leaf
    r_out, t_out = r(rx * 1), t(tx * 1)
    assert type(r_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert_close(r_out, t_out, atol=1e-12, rtol=1e-10)
    compare_backward(r_out, t_out, [rx, *r.parameters()], [tx, *t.parameters()],
                     atol=1e-12, rtol=1e-10)


def test_inplace_module_returns_its_input():
    x = retrograd.randn(3, 4) * 1
    assert nn.LeakyReLU(inplace=True)(x) is x
    assert nn.Threshold(0.0, 1.0, True)(x) is x
    y = retrograd.randn(3, 4)
    assert nn.ELU()(y) is not y


def test_prelu_parameters_and_state_dict():
    r, t = nn.PReLU(4, init=0.3), tnn.PReLU(4, init=0.3)
    assert isinstance(r.weight, nn.Parameter) and r.weight.shape == (4,)
    assert numpy.array_equal(r.weight.detach().numpy(), t.weight.detach().numpy())
    assert r.weight.dtype == retrograd.float32
    assert [n for n, _ in r.named_parameters()] == ["weight"]
    with torch.no_grad():
        t.weight.copy_(torch.tensor([0.1, -0.2, 0.3, 0.05]))
    r.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    rx, tx = pair(2, 4, 3, dtype="float32")
    compare_backward(r(rx), t(tx), [rx, r.weight], [tx, t.weight], atol=1e-6)
    assert nn.PReLU(dtype=retrograd.float64).weight.dtype == retrograd.float64
    r.weight.data.fill_(0.5)
    r.reset_parameters()
    assert numpy.allclose(r.weight.detach().numpy(), 0.3)


def test_hardtanh_module_checks():
    for mod in (nn, tnn):
        with pytest.raises(AssertionError, match=r"max_val \(1.0\) must be greater than "
                                                 r"min_val \(1.0\)"):
            mod.Hardtanh(1.0, 1.0)
        with pytest.warns(FutureWarning, match="min_value"):
            h = mod.Hardtanh(min_value=-2.0)
        assert h.min_val == -2.0


def test_softmax2d_rejects_other_ranks():
    msg = "Softmax2d: expected input to be 3D or 4D, got 2D instead"
    with pytest.raises(ValueError, match=msg):
        tnn.Softmax2d()(torch.zeros(2, 3))
    with pytest.raises(ValueError, match=msg):
        nn.Softmax2d()(retrograd.zeros(2, 3))


# ---- in-place functions -------------------------------------------------------------------
INPLACE = [
    ("leaky_relu_", (0.2,)), ("elu_", (0.5,)), ("hardtanh_", ()), ("threshold_", (0.1, 2.0)),
    ("rrelu_", ()), ("relu_", ()), ("selu_", ()), ("celu_", (2.0,)),
]


def _namespaces(name):
    """(retrograd function, torch function) of ``name`` in F."""
    return getattr(F, name), getattr(tF, name)


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_on_a_leaf_raises(name, args):
    for fn, x in zip(_namespaces(name), pair(3), strict=True):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation."):
            fn(x, *args)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad "
                                               "is being used in an in-place operation."):
            fn(x[1:], *args)


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_semantics_match_torch(name, args):
    """Same object back, version bumped once, PyTorch's node, values and gradients; a
    write after the op makes backward fail where the node saved the result (the others
    keep a copy of the input)."""
    rx, tx = pair(3, 4, low=-3.0, high=3.0)
    outs = []
    for fn, x in zip(_namespaces(name), (rx, tx), strict=True):
        y = x * 1
        v = y._version
        out = fn(y, *args)
        assert out is y and y._version == v + 1
        outs.append(out)
    assert type(outs[0].grad_fn).__name__ == type(outs[1].grad_fn).__name__
    compare_backward(outs[0], outs[1], [rx], [tx], atol=1e-12)
    for x, fn in zip((rx, tx), _namespaces(name), strict=True):
        y = fn(x * 1, *args)
        y.add_(1)
        if name in ("hardtanh_", "threshold_"):
            y.sum().backward()
            continue
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("name,args", [("leaky_relu_", (-0.5,)), ("elu_", (-0.5,)),
                                       ("celu_", (-0.5,)), ("rrelu_", (-0.5, -0.2))],
                         ids=["leaky_relu_", "elu_", "celu_", "rrelu_"])
def test_inplace_backward_with_negative_slope_raises_like_torch(name, args):
    messages = []
    for fn, x in zip(_namespaces(name), pair(4), strict=True):
        y = fn(x * 1, *args)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "negative slope" in messages[0]


def test_functional_inplace_flags_write_into_the_input():
    for name, args in [("leaky_relu", ()), ("elu", ()), ("selu", ()), ("celu", ()),
                       ("relu6", ()), ("hardtanh", ()), ("mish", ()), ("hardswish", ()),
                       ("hardsigmoid", ()), ("threshold", (0.0, 1.0)), ("rrelu", ()),
                       ("silu", ())]:
        rx, tx = pair(3, 4, requires_grad=False)
        r_out = getattr(F, name)(rx, *args, inplace=True)
        t_out = getattr(tF, name)(tx, *args, inplace=True)
        assert r_out is rx, name
        assert_close(rx, tx, atol=1e-12)
        assert_close(r_out, t_out, atol=1e-12)


def test_relu6_and_hardtanh_keep_integer_dtypes():
    x = retrograd.tensor([-3, -1, 0, 2, 9])
    assert F.relu6(x).tolist() == [0, 0, 0, 2, 6] and F.relu6(x).dtype == retrograd.int64
    assert F.hardtanh(x, -1.5, 1.5).tolist() == tF.hardtanh(torch.tensor(x.tolist()),
                                                            -1.5, 1.5).tolist()
    t = torch.tensor([-2, -1, 0, 1])
    r = retrograd.tensor([-2, -1, 0, 1])
    assert retrograd.threshold(r, -1.5, 9.5).tolist() == torch.threshold(t, -1.5, 9.5).tolist()


# ---- rrelu ---------------------------------------------------------------------------------
def test_rrelu_training_draws_slopes_in_bounds():
    x = retrograd.linspace(-3, 3, 400, dtype=retrograd.float64).requires_grad_()
    retrograd.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.4, training=True)
    y.sum().backward()
    neg = x.detach().numpy() <= 0
    slope = y.detach().numpy()[neg] / x.detach().numpy()[neg]
    assert ((slope >= 0.1) & (slope <= 0.4)).all() and slope.std() > 0.05
    assert numpy.array_equal(y.detach().numpy()[~neg], x.detach().numpy()[~neg])
    grad = x.grad.numpy()
    assert numpy.allclose(grad[neg], slope) and (grad[~neg] == 1).all()
    retrograd.manual_seed(3)
    again = F.rrelu(x, 0.1, 0.4, training=True)
    assert numpy.array_equal(again.detach().numpy(), y.detach().numpy())
    g = retrograd.Generator().manual_seed(3)
    with retrograd.no_grad():
        assert numpy.array_equal(retrograd.rrelu(x, 0.1, 0.4, True, generator=g).numpy(),
                                 y.detach().numpy())


def test_rrelu_module_modes():
    m = nn.RReLU(0.1, 0.3)
    x = retrograd.tensor([-1.0, -2.0, 3.0])
    assert_close(m.eval()(x), tF.rrelu(torch.tensor([-1.0, -2.0, 3.0])
                                       , 0.1, 0.3), atol=1e-7)
    out = m.train()(x).numpy()
    assert out[2] == 3.0 and ((out[:2] / x.numpy()[:2]) >= 0.1 - 1e-7).all()


@pytest.mark.parametrize("name,args", [
    ("leaky_relu", ()), ("leaky_relu", (1.5,)), ("leaky_relu", (-0.5,)), ("elu", ()),
    ("selu", ()), ("celu", (0.5,)), ("relu6", ()), ("hardtanh", ()), ("softplus", ()),
    ("softplus", (2.0, 3.0)), ("mish", ()), ("hardswish", ()), ("hardsigmoid", ()),
    ("logsigmoid", ()), ("softshrink", ()), ("hardshrink", ()), ("threshold", (0.5, -2.0)),
    ("rrelu", ()), ("glu", ()), ("softsign", ()), ("tanhshrink", ())])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nonfinite_and_signed_zero_inputs_match_torch(name, args, dtype):
    """Infs, nans and -0.0 through the forward and backward selects."""
    a = numpy.array([-numpy.inf, -50.0, -1.0, -0.0, 0.0, 0.3, 4.0, 50.0, numpy.inf, numpy.nan,
                     -2.5, 7.0], dtype=dtype)
    rx = retrograd.from_numpy(a.copy()).requires_grad_()
    tx = torch.from_numpy(a.copy()).requires_grad_()
    r_out, t_out = getattr(F, name)(rx, *args), getattr(tF, name)(tx, *args)
    numpy.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6,
                                  atol=1e-7)
    r, t = r_out.detach().numpy(), t_out.detach().numpy()
    # (PyTorch's own scalar and vectorized softshrink kernels give -0.0 its sign or not)
    sign = [numpy.signbit(a) | numpy.isnan(a) for a in (r, t)]  # a nan's sign is no matter
    assert name == "softshrink" or numpy.array_equal(*sign)
    g = numpy.linspace(-1, 1, r_out.numel()).astype(dtype).reshape(r_out.shape)
    r_out.backward(retrograd.from_numpy(g.copy()))
    t_out.backward(torch.from_numpy(g.copy()))
    numpy.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,args", [("elu_", ()), ("leaky_relu_", (0.1,)),
                                       ("hardtanh_", ()), ("threshold_", (0.2, -1.0))])
def test_inplace_on_a_view_of_a_non_leaf(name, args):
    """The write rebases the view's history: the base's gradient goes through the op."""
    rx, tx = pair(3, 4, low=-3.0, high=3.0)
    outs = []
    for fn, x in zip(_namespaces(name), (rx, tx), strict=True):
        y = x * 2
        fn(y[1:, ::2], *args)
        outs.append(y)
    assert type(outs[0].grad_fn).__name__ == type(outs[1].grad_fn).__name__
    assert_close(outs[0], outs[1], atol=1e-12)
    compare_backward(outs[0], outs[1], [rx], [tx], atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_errors_and_implicit_dim_warning_match_torch(name):
    import warnings
    for dtype, dim in (("int64", 1), ("int64", 0), ("bool", 0), ("uint8", -1)):
        a = numpy.ones((2, 3), dtype=dtype)
        with pytest.raises(Exception) as et:  # (softmin negates first: bool fails there)
            getattr(tF, name)(torch.from_numpy(a), dim)
        with pytest.raises(type(et.value)) as er:
            getattr(F, name)(retrograd.from_numpy(a), dim)
        assert str(er.value) == str(et.value)
    messages = []
    for lib in (F, tF):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib, name)((retrograd if lib is F else torch).ones(2, 3))
        messages.append([(str(x.message), x.filename) for x in w])
    assert [m for m, _ in messages[0]] == [m for m, _ in messages[1]]
    assert messages[0][0][1] == __file__  # the warning points at the caller's line


def test_numpy_and_tensor_scalars_do_not_promote_the_result():
    x = retrograd.ones(3)
    calls = [lambda a: F.leaky_relu(x, a(0.3)), lambda a: F.elu(x, a(2.0)),
             lambda a: F.celu(x, a(2.0)), lambda a: F.hardtanh(x, a(-1.0), a(0.5)),
             lambda a: F.softplus(x, a(2.0), a(10.0)), lambda a: F.softshrink(x, a(0.5)),
             lambda a: F.hardshrink(x, a(0.5)), lambda a: F.threshold(x, a(0.1), a(2.0)),
             lambda a: F.rrelu(x, a(0.1), a(0.2)), lambda a: nn.LeakyReLU(a(0.1))(x)]
    for call in calls:
        for make in (numpy.float64, lambda v: retrograd.tensor(v, dtype=retrograd.float64)):
            assert call(make).dtype == retrograd.float32


def test_softmax_dim_errors_match_torch():
    for call in (lambda lib: lib.softmax(lib.ones(3), None),
                 lambda lib: lib.softmax(lib.ones(3), 5),
                 lambda lib: lib.log_softmax(lib.ones(2, 3), -3),
                 lambda lib: lib.nn.functional.softmax(lib.ones(2, 3), 2)):
        with pytest.raises(Exception) as et:
            call(torch)
        with pytest.raises(type(et.value), match=str(et.value).replace("(", r"\(").replace(
                ")", r"\)").replace("[", r"\[").replace("]", r"\]")):
            call(retrograd)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "celu", "selu", "softplus", "mish",
                                  "hardswish", "hardsigmoid", "logsigmoid", "softshrink",
                                  "hardshrink", "hardtanh", "relu6"])
def test_complex_input_is_refused_as_torch(name):
    with pytest.raises(NotImplementedError) as et:
        getattr(tF, name)(torch.ones(2, dtype=torch.complex64))
    with pytest.raises(NotImplementedError) as er:
        getattr(F, name)(retrograd.ones(2, dtype=retrograd.complex64))
    assert str(er.value) == str(et.value)
    for dtype in ("complex64", "bool"):
        with pytest.raises(Exception) as et:
            tF.threshold(torch.ones(2, dtype=getattr(torch, dtype)), 0.5, 0.1)
        with pytest.raises(type(et.value)) as er:
            F.threshold(retrograd.ones(2, dtype=getattr(retrograd, dtype)), 0.5, 0.1)
        assert str(er.value) == str(et.value)


def test_mish_second_derivative_at_zero_matches_torch():
    res = []
    for lib in (retrograd, torch):
        x = lib.tensor([0.0, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.mish(x).sum(), x, create_graph=True)
        res.append(lib.autograd.grad(g.sum(), x)[0].detach().numpy())
    numpy.testing.assert_allclose(res[0], res[1], rtol=1e-12)
