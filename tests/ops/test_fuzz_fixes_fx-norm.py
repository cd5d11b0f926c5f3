"""Layer, group and batch norm against PyTorch where the differential fuzz found them apart:
argument checks (their order, types and messages), empty inputs (no NumPy warning, PyTorch's
NaN statistics, running stats left alone) and gradients at degenerate sizes."""

import math
import warnings

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch


def _outcome(lib, fn):
    """``fn(lib)``'s result as NumPy arrays (output and gradients of its leaves), or the
    exception's type and message; and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, leaves = fn(lib)
            out.sum().backward()
            got = [out.detach().numpy()] + [x.grad.numpy() for x in leaves]
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            got = (type(e), str(e))
    return got, [(w.category, str(w.message)) for w in caught]


def _same(fn, torch):
    (r, rw), (t, tw) = _outcome(retrograd, fn), _outcome(torch, fn)
    assert rw == tw
    if isinstance(t, tuple):
        assert r == t
    else:
        for a, b in zip(r, t, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            numpy.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _leaf(lib, *shape):
    n = math.prod(shape)
    x = lib.linspace(-1, 2, max(1, n), dtype=lib.float64)[:n]
    return x.reshape(shape).requires_grad_()


def _gn(shape, groups, affine=True):
    def fn(lib):
        x = _leaf(lib, *shape)
        c = shape[1] if len(shape) > 1 else 1
        w, b = (_leaf(lib, c), _leaf(lib, c)) if affine else (None, None)
        return lib.nn.functional.group_norm(x, groups, w, b), [x] + ([w, b] if affine else [])
    return fn


@pytest.mark.parametrize("shape,groups", [
    ((2, 1), 2),  # one value per group: ValueError before the divisibility check
    ((1, 2), 2),
    ((1, 3, 2), 2),
    ((4,), 1),  # too few dimensions
    ((2, 4), -1),
    ((2, 4), 0),
    ((0, 3, 2), 1),  # empty batch
    ((2, 0, 3), 1),  # no channels
    ((3, 4, 2), 2),
    ((2, 4, 3, 0), 2),  # groups with no elements: NaN statistics, so a NaN weight gradient
    ((1, 2, 0), 1),
])
def test_group_norm_checks_and_empty(torch, shape, groups):
    _same(_gn(shape, groups), torch)


def _bn(shape, training, eps=1e-5):
    def fn(lib):
        x = _leaf(lib, *shape)
        c = shape[1]
        w, b = _leaf(lib, c), _leaf(lib, c)
        stats = lib.zeros(c, dtype=lib.float64), lib.ones(c, dtype=lib.float64)
        out = lib.nn.functional.batch_norm(x, *stats, w, b,
                                           training=training, eps=eps)
        return out, [x, w, b]
    return fn


@pytest.mark.parametrize("shape,training,eps", [
    ((2, 1, 0, 0), True, 1e-5),  # empty: PyTorch normalises nothing, quietly
    ((0, 2, 3), True, 1e-5),
    ((1, 2), True, 1e-5),  # one value per channel
    ((2, 2), True, 0.0),  # eps must be positive in training...
    ((2, 2), False, 0.0),
    ((2, 2), False, -1.0),  # ...and non-negative in evaluation
    ((3, 2, 2), True, 1e-5),
])
def test_batch_norm_checks_and_empty(torch, shape, training, eps):
    _same(_bn(shape, training, eps), torch)


def test_batch_norm_empty_batch_keeps_running_stats():
    rm, rv = retrograd.full((2,), 5.0), retrograd.full((2,), 3.0)
    retrograd.nn.functional.batch_norm(retrograd.zeros(0, 2, 3), rm, rv, training=True)
    assert rm.tolist() == [5.0, 5.0] and rv.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("shape,normalized", [((3, 0), (0,)), ((0, 3), (3,)), ((2, 0, 2), (0, 2))])
def test_layer_norm_empty(torch, shape, normalized):
    def fn(lib):
        x = _leaf(lib, *shape)
        w, b = _leaf(lib, *normalized), _leaf(lib, *normalized)
        return lib.nn.functional.layer_norm(x, normalized, w, b), [x, w, b]
    _same(fn, torch)


def test_layer_norm_grad_with_infinite_weight_is_nan_like_pytorch(torch):
    """An infinite weight makes a row's sum of grad * weight infinite: PyTorch's backward then
    gives NaN across the row (not a mixture of infinities and NaN)."""
    def fn(lib):
        x = lib.tensor([[1.25, 0.5, -0.25], [0.75, -1.5, 2.0]], dtype=lib.float64,
                       requires_grad=True)
        w = lib.tensor([-float("inf"), 0.25, -1.5], dtype=lib.float64, requires_grad=True)
        return lib.nn.functional.layer_norm(x, (3,), w), [x]
    r, t = _outcome(retrograd, fn)[0], _outcome(torch, fn)[0]
    assert numpy.isnan(t[1]).all()
    numpy.testing.assert_array_equal(r[1], t[1])


def test_layer_norm_grad_float32_constant_row(torch):
    """Over a constant row the input gradient sums to 0 but for the rounding of
    db * mean - ds, which PyTorch rounds once (a fused multiply-add) and rstd**3 ~ 3e7 then
    scales: rounded twice, the expanded input's gradient was a quarter of PyTorch's."""
    def fn(lib):
        x = lib.tensor([0.016720114275813103], requires_grad=True)
        w = lib.tensor([1.6676304340362549]).expand(4)
        out = lib.nn.functional.layer_norm(x.expand(4), (4,), w)
        out.backward(lib.tensor([1.2219294, 1.9887844, 0.3589409, 0.26031876]))
        return x.grad.numpy()
    r, t = fn(retrograd), fn(torch)
    assert t[0] != 0
    numpy.testing.assert_allclose(r, t, rtol=1e-6)


def test_batch_norm_grad_huge_weight_multiplies_last(torch):
    """PyTorch multiplies the input gradient by the channel's weight last: a huge weight gives
    large finite gradients where scaling the output gradient first overflowed."""
    def fn(lib):
        x = lib.tensor([[347.75, 0.25], [6757.5, -0.125], [0.125, 0.0078125]],
                       requires_grad=True)
        w = lib.tensor([1.7014117331926443e+38, -0.90625])
        out = lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), w, training=True)
        return out * lib.tensor([[1.0, 2.0], [-3.0, 0.5], [2.0, 1.0]]), [x]
    r, t = _outcome(retrograd, fn)[0], _outcome(torch, fn)[0]
    assert numpy.isfinite(t[1]).all()
    numpy.testing.assert_allclose(r[1], t[1], rtol=1e-4)


@pytest.mark.parametrize("values,kwargs", [
    ([1.7e38, -1.7e38, 0.0], {}),  # squares overflow float32; the std fits again
    ([[1.7e38, 0.5], [-1.7e38, 2.0], [3.0, 1.0]], {"dim": 0}),
    ([1.6751139163970947] * 3, {"dim": -1}),  # the float32 mean's rounding shows, as in PyTorch
])
def test_std_var_float32_square_in_float64(torch, values, kwargs):
    for name in ("std", "var"):
        r = getattr(retrograd, name)(retrograd.tensor(values), **kwargs)
        t = getattr(torch, name)(torch.tensor(values), **kwargs)
        assert r.dtype == retrograd.float32
        numpy.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-6)



def test_batch_norm_weight_grad_scales_the_sum_by_invstd(torch):
    """PyTorch's weight gradient is ``sum((x - mean) * grad) * invstd``: with a mean near
    float32's limit the products overflow to inf before invstd scales them down (scaled
    first, they stayed finite)."""
    def fn(lib):
        x = lib.tensor([[0.5, 1.0], [-0.25, 2.0], [1.5, -1.0]], requires_grad=True)
        w = lib.tensor([0.75, -1.25], requires_grad=True)
        out = lib.nn.functional.batch_norm(x, lib.tensor([1.7e38, 0.5]),
                                           lib.tensor([25029.0, 0.25]), w)
        return out * lib.tensor([[-3.0, 1.0], [-2.5, 0.5], [0.5, 2.0]]), [x, w]
    r, t = _outcome(retrograd, fn)[0], _outcome(torch, fn)[0]
    assert numpy.isinf(t[2][0])
    numpy.testing.assert_allclose(r[2], t[2], rtol=1e-6)


def test_batch_norm_weight_grad_of_an_empty_batch_is_zero(torch):
    """The empty batch's invstd is NaN, its sum 0: PyTorch's gradient is 0."""
    def fn(lib):
        x = lib.zeros((0, 2, 3), requires_grad=True)
        w = lib.tensor([0.75, -1.25], requires_grad=True)
        return lib.nn.functional.batch_norm(x, None, None, w, training=True), [x, w]
    _same(fn, torch)


@pytest.mark.parametrize("dtype,weight", [
    ("float32", [-1.4937050342559814, 0.8569439053535461, -1.7014117331926443e+38, 2.1]),
    ("float64", [float("nan"), 5e-324, -8.988465674311579e+307, 1.5]),
])
def test_group_norm_grad_with_a_huge_weight_in_pytorchs_form(torch, dtype, weight):
    """PyTorch's input gradient is ``rstd * weight * g + b * x + c`` from the group's sums
    of weight * g * x and weight * g: a huge weight makes those sums infinite, and the group
    NaN, where the normalised form stayed finite."""
    def fn(lib):
        x = lib.tensor([[[-62112.44, 0.0099], [-1125.55, -1328.97], [2487.64, 63980.67],
                         [1655.52, 52122.82]]], dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.group_norm(x, 2, lib.tensor(weight, dtype=getattr(lib, dtype)))
        return out * lib.tensor([[0.5, -1.25], [2.0, 0.75], [-1.5, 1.0], [0.25, -2.0]],
                                dtype=getattr(lib, dtype)), [x]
    r, t = _outcome(retrograd, fn)[0], _outcome(torch, fn)[0]
    assert numpy.isnan(t[1]).any()
    numpy.testing.assert_allclose(r[1], t[1], rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_std_of_equal_values_along_a_dim_is_zero(torch, dtype):
    """PyTorch's Welford running mean is exact for equal values: the std is 0 and so is
    its gradient (a float64 mean of sum / n is off by an ulp, giving O(1) gradients)."""
    row = [[[-1831.5264916174986, -13737.80012075615, 1965.9765112109885, -887.77718901]]]

    def fn(lib):
        x = lib.tensor(row, dtype=getattr(lib, dtype), requires_grad=True)
        return lib.std(x.expand(3, 1, 4), dim=-3), [x]
    _same(fn, torch)


def test_std_gradient_in_float16_where_the_sum_overflows(torch):
    """PyTorch's float16 mean sums in float32 and rounds once: three equal -30832s have
    the mean -30832 (their half sum is -inf), so the std and its gradient are 0."""
    def fn(lib):
        x = lib.tensor([[-30832.0, 2418.0, 0.5]], dtype=lib.float16, requires_grad=True)
        return lib.std(x.expand(3, 3), dim=0, keepdim=True, correction=2), [x]
    _same(fn, torch)


def test_std_gradient_in_float16(torch):
    """PyTorch's std backward is a composite of float16 ops (the mean rounded to float16
    before ``self - mean``), so the two gradients of a pair are not opposite."""
    def fn(lib):
        x = lib.tensor([-1.1015625, -0.9326171875, 0.25, 3.0], dtype=lib.float16,
                       requires_grad=True)
        return lib.stack([lib.std(x[:2]), lib.std(x), lib.std(x.reshape(2, 2), dim=0)[1]]), [x]
    _same(fn, torch)


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_eval_of_zero_variance_without_eps_follows_the_layout(torch, strided,
                                                                         affine):
    """Slow-run seed: PyTorch folds contiguous inputs into ``x * alpha + beta`` (inf - inf:
    NaN) and computes strided ones as ``(x - mean) * invstd * weight + bias`` (+-inf)."""
    def fn(lib):
        x = lib.tensor([[0.125, 0.5], [0.25, 0.375]], dtype=lib.float64)
        x = (x.t().contiguous().t() if strided else x).requires_grad_()
        w = lib.tensor([0.125, 2.0], dtype=lib.float64) if affine else None
        b = lib.tensor([0.125, 1.0], dtype=lib.float64) if affine else None
        out = lib.nn.functional.batch_norm(x, lib.tensor([0.3, 0.1], dtype=lib.float64),
                                           lib.zeros(2, dtype=lib.float64), w, b, eps=0.0)
        return out, [x]
    _same(fn, torch)
