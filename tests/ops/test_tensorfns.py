"""Sorting, special functions, misc functions and in-place shape ops: what the op database
does not cover (gradients of composites whose last node PyTorch names after a Scalar
overload, warnings, sampling, dtype limits, in-place geometry changes), against PyTorch.
"""

import collections
import math
import warnings

import numpy
import pytest

import retrograd


def _pair(torch, a, dtype="float64", requires_grad=True):
    return (retrograd.tensor(a, dtype=getattr(retrograd, dtype), requires_grad=requires_grad),
            torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def _close(r, t, atol=1e-10):
    numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-7,
                                  atol=atol, equal_nan=True)


def _grads_match(torch, fn, *arrays):
    """``fn`` on retrograd and on torch: values and gradients agree (names aside)."""
    rs = [retrograd.tensor(a, dtype=retrograd.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    r_out, t_out = fn(retrograd, *rs), fn(torch, *ts)
    _close(r_out, t_out)
    cot = numpy.random.default_rng(1).standard_normal(tuple(t_out.shape))
    r_out.backward(retrograd.tensor(cot))
    t_out.backward(torch.tensor(cot))
    for r, t in zip(rs, ts, strict=True):
        _close(r.grad, t.grad)


_RNG = numpy.random.default_rng(0)
_X = _RNG.standard_normal((3, 5))
_XS = numpy.cumsum(_RNG.uniform(0.1, 1, 5))


@pytest.mark.torch
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_gradients_match_torch(torch, name, interpolation):
    q = [0.1, 0.5, 0.93]
    _grads_match(torch, lambda m, x: getattr(m, name)(
        x, m.tensor(q, dtype=m.float64), dim=1, interpolation=interpolation), _X)
    _grads_match(torch, lambda m, x: getattr(m, name)(x, 0.37, interpolation=interpolation),
                 _X)


@pytest.mark.torch
def test_nanquantile_skips_nan_and_all_nan_slices(torch):
    a = _X.copy()
    a[0, [1, 3]] = numpy.nan
    a[2] = numpy.nan
    r, t = _pair(torch, a)
    _close(r.nanquantile(0.4, dim=1), t.nanquantile(0.4, dim=1))
    _close(r.quantile(0.4, dim=1), t.quantile(0.4, dim=1))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_gradients_match_torch(torch, name):
    _grads_match(torch, lambda m, y: getattr(m, name)(y), _X)
    _grads_match(torch, lambda m, y, x: getattr(m, name)(y, x), _X, _XS)
    _grads_match(torch, lambda m, y: getattr(m, name)(y, dx=0.3, dim=0), _X)


@pytest.mark.torch
def test_sinc_gradient_at_zero_matches_torch(torch):
    r, t = _pair(torch, [0.0, 0.5, -1.0])
    r.sinc().sum().backward()
    t.sinc().sum().backward()
    _close(r.grad, t.grad)


@pytest.mark.torch
@pytest.mark.parametrize("call", [lambda m, x: m.unique(x), lambda m, x: x.unique(dim=0),
                                  lambda m, x: m.unique_consecutive(x)])
def test_unique_has_no_derivative_like_torch(torch, call):
    r, t = _pair(torch, [[1.0, 2.0], [1.0, 2.0]])
    r_out, t_out = call(retrograd, r), call(torch, t)
    assert r_out.grad_fn.name() == t_out.grad_fn.name()
    with pytest.raises(NotImplementedError) as expected:
        t_out.sum().backward()
    with pytest.raises(NotImplementedError) as actual:
        r_out.sum().backward()
    assert str(actual.value) == str(expected.value)


def test_sort_gradient_is_differentiable_again():
    x = retrograd.tensor([3.0, 1.0, 2.0], dtype=retrograd.float64, requires_grad=True)
    v = x.sort(descending=True).values
    (g,) = retrograd.autograd.grad((v * v * retrograd.tensor([1.0, 2.0, 3.0])).sum(), x,
                                   create_graph=True)
    assert g.tolist() == [6.0, 6.0, 8.0]
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 6.0, 4.0]


@pytest.mark.torch
def test_meshgrid_warns_without_indexing_like_torch(torch):
    a, b = retrograd.tensor([1, 2]), retrograd.tensor([3, 4, 5])
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        grids = retrograd.meshgrid(a, b)
    assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        retrograd.meshgrid(a, b, indexing="xy")


@pytest.mark.torch
@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_torch(torch, name):
    r, t = retrograd.finfo(getattr(retrograd, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                  "dtype"):
        assert getattr(r, field) == getattr(t, field), field
    assert repr(r) == repr(t)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(torch, name):
    r, t = retrograd.iinfo(getattr(retrograd, name)), torch.iinfo(getattr(torch, name))
    assert (r.bits, r.min, r.max, r.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert repr(r) == repr(t)


@pytest.mark.torch
@pytest.mark.parametrize("call", [lambda m: m.finfo(m.int64), lambda m: m.iinfo(m.float32),
                                  lambda m: m.iinfo(m.bool)])
def test_type_info_errors_match_torch(torch, call):
    with pytest.raises(TypeError) as expected:
        call(torch)
    with pytest.raises(TypeError) as actual:
        call(retrograd)
    assert str(actual.value) == str(expected.value)


def test_finfo_default_is_the_default_dtype():
    assert retrograd.finfo() == retrograd.finfo(retrograd.float32)


def test_set_num_threads_limits_blas():
    pytest.importorskip("threadpoolctl")
    before = retrograd.get_num_threads()
    try:
        retrograd.set_num_threads(1)
        assert retrograd.get_num_threads() == 1
    finally:
        retrograd.set_num_threads(before)


# ---- sampling -----------------------------------------------------------------------------

def test_bernoulli_records_a_zero_gradient():
    p = retrograd.tensor([0.2, 0.9], requires_grad=True)
    s = retrograd.bernoulli(p)
    assert s.grad_fn.name() == "BernoulliBackward0"
    s.sum().backward()
    assert p.grad.tolist() == [0.0, 0.0]


def test_sampling_is_reproducible_and_has_the_right_means():
    g = retrograd.Generator().manual_seed(3)
    p = retrograd.full((20000,), 0.3)
    first = retrograd.bernoulli(p, generator=g)
    g.manual_seed(3)
    assert retrograd.equal(first, retrograd.bernoulli(p, generator=g))
    assert abs(first.mean().item() - 0.3) < 0.02
    x = retrograd.zeros(20000, dtype=retrograd.float64)
    x.bernoulli_(0.7, generator=g)
    assert abs(x.mean().item() - 0.7) < 0.02
    assert abs(retrograd.poisson(retrograd.full((20000,), 4.0), g).mean().item() - 4) < 0.1


def test_multinomial_frequencies():
    g = retrograd.Generator().manual_seed(0)
    w = retrograd.tensor([1.0, 2.0, 7.0])
    draws = retrograd.multinomial(w.expand(4000, 3), 1, generator=g).reshape(-1).tolist()
    freq = collections.Counter(draws)
    assert [round(freq[k] / 4000, 1) for k in range(3)] == [0.1, 0.2, 0.7]
    pairs = retrograd.multinomial(w.expand(4000, 3), 2, generator=g)
    assert (pairs[:, 0] != pairs[:, 1]).all()  # without replacement
    first_two = collections.Counter(tuple(r) for r in pairs.tolist())[(2, 1)] / 4000
    assert abs(first_two - 0.7 * 2 / 3) < 0.03
    zero = retrograd.multinomial(retrograd.tensor([0.0, 1.0, 1.0]), 2, generator=g)
    assert sorted(zero.tolist()) == [1, 2]
    rep = retrograd.multinomial(retrograd.tensor([[0.0, 1.0], [1.0, 0.0]]), 5, True,
                                generator=g)
    assert rep.tolist() == [[1] * 5, [0] * 5]


@pytest.mark.torch
@pytest.mark.parametrize("args", [((1.0, 2.0), 3), ((((1.0,),),), 1), ((0.0, 0.0), 1),
                                  ((-1.0, 2.0), 1), ((1.0, 2.0), 0)])
def test_multinomial_errors_match_torch(torch, args):
    data, n = args
    with pytest.raises(RuntimeError) as expected:
        torch.multinomial(torch.tensor(data), n)
    with pytest.raises(RuntimeError) as actual:
        retrograd.multinomial(retrograd.tensor(data), n)
    assert str(actual.value) == str(expected.value)


# ---- in-place shape ops -------------------------------------------------------------------

def test_inplace_shape_op_keeps_memory_and_bumps_the_version():
    base = retrograd.arange(6.0).reshape(2, 3)
    flat = base.view(6)
    v = base._version
    assert base.t_() is base
    assert base.shape == (3, 2) and base._version == v + 1
    flat.mul_(2)  # one storage: the transposed tensor sees the write
    assert base.tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]


def test_inplace_shape_op_on_a_view_keeps_its_base():
    base = retrograd.zeros(2, 1, 3, requires_grad=True)
    x = base * 1
    v = x[0]
    v.squeeze_(0)
    assert v.shape == (3,) and v._base is x
    v.mul_(2)
    x.sum().backward()
    assert base.grad.tolist() == [[[2.0] * 3], [[1.0] * 3]]


def test_inplace_shape_op_carries_the_forward_tangent():
    from retrograd.autograd import forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(retrograd.arange(6.0).reshape(2, 3), retrograd.ones(2, 3))
        y = x * 2
        y.t_()
        assert fwAD.unpack_dual(y).tangent.shape == (3, 2)


@pytest.mark.torch
def test_top_level_inplace_functions_exist_where_torch_has_them(torch):
    names = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
             and hasattr(torch.Tensor, n) and hasattr(retrograd.Tensor, n)]
    assert names and all(hasattr(retrograd, n) for n in names), \
        [n for n in names if not hasattr(retrograd, n)]
    x = retrograd.tensor([0.0, 1.0])
    assert retrograd.exp_(x) is x


# ---- predicates -----------------------------------------------------------------------------

@pytest.mark.torch
def test_predicates_match_torch(torch):
    for m in (torch, retrograd):
        assert m.is_nonzero(m.tensor([2.0])) and not m.tensor(0).is_nonzero()
        assert m.is_same_size(m.zeros(2, 3), m.ones(2, 3))
        assert not m.is_same_size(m.zeros(2, 3), m.ones(3, 2))
        assert m.tensor([1]).is_signed() and not m.tensor([1], dtype=m.uint8).is_signed()
        assert not m.tensor([True]).is_signed()
        assert m.zeros(2).get_device() == -1
        x = m.zeros(2, requires_grad=True)
        assert not m.detach(x).requires_grad
    for bad in ([], [1.0, 2.0]):
        with pytest.raises(RuntimeError) as expected:
            torch.is_nonzero(torch.tensor(bad))
        with pytest.raises(RuntimeError) as actual:
            retrograd.is_nonzero(retrograd.tensor(bad))
        assert str(actual.value) == str(expected.value)


@pytest.mark.torch
def test_can_cast_matches_torch(torch):
    names = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            assert retrograd.can_cast(getattr(retrograd, a), getattr(retrograd, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@pytest.mark.parametrize("name, args, mean", [("exponential_", (2.0,), 0.5),
                                              ("geometric_", (0.25,), 4.0),
                                              ("log_normal_", (0.0, 0.5), 1.1331),
                                              ("cauchy_", (), None)])
def test_inplace_samplers(name, args, mean):
    g = retrograd.Generator().manual_seed(0)
    x = retrograd.zeros(40000, dtype=retrograd.float64)
    assert getattr(x, name)(*args, generator=g) is x
    if mean is None:  # Cauchy: no mean; the median is the location
        assert abs(x.median().item()) < 0.05
    else:
        assert abs(x.mean().item() - mean) < 0.05 * mean


_SAMPLER_CALLS = [("exponential_", (), {"lambd": 2.0}), ("exponential_", (0.0,), {}),
                  ("exponential_", (-1.0,), {}), ("geometric_", (), {"p": 0.3}),
                  ("geometric_", (0.0,), {}), ("geometric_", (1.5,), {}),
                  ("log_normal_", (), {"mean": 0.0}), ("log_normal_", (0.0, 0.0), {}),
                  ("cauchy_", (), {"median": 1.0}), ("cauchy_", (0.0, -1.0), {}),
                  ("normal_", (), {"mean": 1.0}), ("normal_", (0.0, -1.0), {}),
                  ("uniform_", (0.0, 5.0), {"dtype": "int64"}),
                  ("uniform_", (), {"from": 1.0, "to": 2.0}), ("uniform_", (1.0, 0.0), {}),
                  ("uniform_", (0.0, math.inf), {}), ("uniform_", (-1e39, 0.0), {}),
                  ("uniform_", (math.nan, 1.0), {}), ("uniform_", (-3e38, 3e38), {}),
                  ("uniform_", (0.0, 1e39), {"dtype": "float64"}),
                  ("uniform_", (0.0, 1e5), {"dtype": "float16"}),
                  ("uniform_", (0.0, 1e5), {"dtype": "bfloat16"}),
                  ("uniform_", (-3e38, 3e38), {"dtype": "bfloat16"})]


@pytest.mark.parametrize("name, args, kwargs", _SAMPLER_CALLS)
def test_inplace_sampler_arguments_as_torch(name, args, kwargs):
    """Keyword arguments by PyTorch's names, and PyTorch's error for a bad parameter."""
    torch = pytest.importorskip("torch")

    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", "float32")

    def call(lib):
        try:
            getattr(lib.zeros(3, dtype=getattr(lib, dtype)), name)(*args, **kwargs)
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        return "drawn"
    assert call(retrograd) == call(torch)
