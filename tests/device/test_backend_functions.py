"""The backend functions (``retrograd.backend.functions``): each array module's
implementation agrees with NumPy's, the CuPy-shaped ones use only what CuPy has, and the
differentiable facade records ops."""

import numpy
import pytest
import scipy.linalg

import retrograd
from retrograd import backend
from retrograd.backend import emulated, meta
from retrograd.backend.functions import functions, scipy_linalg
from retrograd.ops import _tensor_xp
from device.emulated_run import emulating

dev = emulated.namespace


def _on(a):
    return dev.asarray(numpy.asarray(a))


@pytest.mark.parametrize("name", ["maximum", "minimum", "logaddexp", "add"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_accumulate_as_a_scan_matches_numpy(name, axis):
    rng = numpy.random.default_rng(0)
    a = rng.standard_normal((5, 7))
    a[1, 3] = numpy.nan
    a[2, 2] = -numpy.inf
    want = getattr(numpy, name).accumulate(a, axis=axis)
    if name != "add":  # what CuPy lacks, the scan stands in for
        with pytest.raises(NotImplementedError):
            getattr(dev, name).accumulate(_on(a), axis=axis)
    got = functions(dev).accumulate(name, _on(a), axis).get()
    numpy.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("shape", [(1,), (0,), (6,)])
def test_accumulate_of_short_axes(shape):
    a = numpy.arange(float(shape[0]))
    got = functions(dev).accumulate("maximum", _on(a), 0)
    assert type(got) is emulated.ndarray
    numpy.testing.assert_array_equal(got.get(), numpy.maximum.accumulate(a))


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_multiply_at_in_rounds_matches_numpy(dtype):
    rng = numpy.random.default_rng(1)
    a = rng.integers(1, 4, (4, 3)).astype(dtype)
    rows = numpy.array([0, 2, 0, 0, 3, 2])
    cols = numpy.array([1, 1, 1, 0, 2, 1])
    b = rng.integers(-3, 4, 6).astype(dtype)
    want = a.copy()
    numpy.multiply.at(want, (rows, cols), b)
    got = _on(a)
    functions(dev).ufunc_at("multiply", got, (_on(rows), _on(cols)), _on(b))
    numpy.testing.assert_array_equal(got.get(), want)
    want = a.reshape(-1).copy()  # one flat index array, a scalar value
    numpy.multiply.at(want, rows, 2)
    flat = _on(a.reshape(-1))
    functions(dev).ufunc_at("multiply", flat, _on(rows), 2)
    numpy.testing.assert_array_equal(flat.get(), want)
    want = a.copy()  # slices beside the index arrays (a batched scatter's index)
    numpy.multiply.at(want, (slice(None), cols[:3]), b[:3])
    got = _on(a)
    functions(dev).ufunc_at("multiply", got, (slice(None), _on(cols[:3])), _on(b[:3]))
    numpy.testing.assert_array_equal(got.get(), want)


def test_lu_per_matrix_matches_scipys_batched_lu():
    rng = numpy.random.default_rng(2)
    for shape in [(3, 3), (2, 4, 3), (2, 3, 5)]:
        a = rng.standard_normal(shape)
        p, L, U = scipy.linalg.lu(a, p_indices=True)
        dp, dL, dU = functions(dev).lu(_on(a))
        numpy.testing.assert_array_equal(dp.get(), p)
        numpy.testing.assert_allclose(dL.get(), L, rtol=1e-13, atol=1e-15)
        numpy.testing.assert_allclose(dU.get(), U, rtol=1e-13, atol=1e-15)
    p, L, U = functions(dev).lu(_on(numpy.ones((0, 2, 3))))  # an empty batch
    assert (p.shape, L.shape, U.shape) == ((0, 2), (0, 2, 2), (0, 2, 3))


def test_expm_per_matrix_keeps_dtype():
    a = numpy.random.default_rng(3).standard_normal((2, 3, 3)).astype(numpy.float32) / 4
    got = functions(dev).expm(_on(a))
    assert got.dtype == numpy.float32
    numpy.testing.assert_allclose(got.get(), functions(numpy).expm(a), rtol=1e-5)


def test_cupyx_linalg_namespace_has_cupyx_names_and_takes_one_matrix():
    la = scipy_linalg(dev)
    assert la is emulated.scipy_linalg
    assert hasattr(la, "lu_factor") and not hasattr(la, "schur")  # cupyx has no schur
    with pytest.raises(ValueError, match="2-D"):
        la.lu(_on(numpy.eye(2)[None]))
    with pytest.raises(TypeError, match="p_indices"):
        la.lu(_on(numpy.eye(2)), p_indices=True)


def test_where_sigmoid_and_address_agree_across_modules():
    x = numpy.linspace(-800, 800, 1 << 16)  # large: NumPy's bit select
    want = functions(numpy).sigmoid(x)
    assert numpy.isfinite(want).all() and want[0] == 0 and want[-1] == 1
    numpy.testing.assert_array_equal(functions(dev).sigmoid(_on(x)).get(), want)
    d = _on(numpy.arange(6.0))
    assert functions(dev).address(d[2:]) - functions(dev).address(d) == 16


def test_the_facade_records_ops():
    x = retrograd.tensor([-1.0, 2.0], requires_grad=True)
    f = functions(_tensor_xp)
    assert f.sigmoid(x).grad_fn.name() == "SigmoidBackward0"
    assert f.clamp_max(x, 0).grad_fn.name() == "ClampMaxBackward0"
    assert f.matmul_tn(x[None], x[None]).shape == (2, 2)  # the array form, on Tensors


def test_factor_info_names_each_failing_matrix_on_both_modules():
    a = numpy.stack([numpy.eye(3), [[1.0, 2, 3], [2, 4, 6], [0, 0, 1]], -numpy.eye(3)])
    a = a.reshape(3, 1, 3, 3)
    lu, chol = functions(numpy).factor_info(a, "lu"), functions(numpy).factor_info(a, "cholesky")
    assert lu.dtype == numpy.int32 and lu.shape == (3, 1)
    assert lu[:, 0].tolist() == [0, 2, 0] and chol[:, 0].tolist() == [0, 2, 1]
    for kind, want in (("lu", lu), ("cholesky", chol)):
        got = functions(dev).factor_info(_on(a), kind)
        assert type(got) is emulated.ndarray
        numpy.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("name", ["erfc", "gammaln", "psi", "i0"])
def test_special_keeps_the_dtype_and_agrees_across_modules(name):
    x = numpy.linspace(0.25, 4, 7, dtype=numpy.float32)
    want = functions(numpy).special(name, x)
    assert want.dtype == numpy.float32
    got = functions(dev).special(name, _on(x))
    assert type(got) is emulated.ndarray
    numpy.testing.assert_array_equal(got.get(), want)


def test_draw_reads_device_arguments_on_the_host():
    rates = numpy.array([[0.5, 3.0], [10.0, 0.0]])
    want = functions(numpy).draw(numpy.random.default_rng(4), "poisson", (rates,), (2, 2))
    got = functions(dev).draw(numpy.random.default_rng(4), "poisson", (_on(rates),), (2, 2))
    assert type(got) is type(_on(rates))  # drawn on the host, returned on the device
    numpy.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("xp", [numpy, dev], ids=["numpy", "emulated"])
def test_errstate_governs_the_arrays_of_the_module(xp):
    nan = xp.asarray(numpy.full(3, numpy.nan))
    with functions(xp).errstate(invalid="raise"), pytest.raises(FloatingPointError):
        nan.astype(numpy.int64)
    with functions(xp).errstate(invalid="ignore"):
        nan.astype(numpy.int64)


# ---- creation on a device (backend.on_device) ----------------------------------------------

@pytest.mark.parametrize("device, kind, index", [("cpu", numpy.ndarray, None),
                                                 ("meta", meta.ndarray, None),
                                                 ("cuda:0", emulated.ndarray, 0),
                                                 ("cuda:1", emulated.ndarray, 1)])
def test_on_device_makes_with_the_devices_module_there(device, kind, index):
    with emulating():
        seen = []
        got = backend.on_device(retrograd.device(device),
                                lambda xp: seen.append(xp) or xp.arange(3) * 2)
        assert type(got) is kind and backend.device_of(got) == retrograd.device(device)
        assert seen == [backend.get_array_module(got)]
        if index is not None:
            assert got._dev == index
            assert emulated.Device().id == 0  # the current device is given back
            numpy.testing.assert_array_equal(got.get(), [0, 2, 4])


def test_on_device_gives_the_current_device_back_on_error():
    with emulating(), pytest.raises(ZeroDivisionError):
        backend.on_device(retrograd.device("cuda:1"), lambda xp: 1 / 0)
    assert emulated.Device().id == 0


@pytest.mark.parametrize("shapes", [((7,), (5,)), ((3, 7), (3, 5)), ((2, 3, 7), (2, 3, 5)),
                                    ((3, 7), (5,)), ((1, 7), (3, 5))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_outer_agrees_across_modules_and_batches(shapes, dtype):
    """NumPy's (the compiled kernel over equal leading dims), the emulator's and a batch's
    outer products are the broadcast product's, bit for bit."""
    from retrograd.autograd._batched import Batched
    from retrograd.autograd._batched_xp import BatchedNumpy
    rng = numpy.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    want = a[..., :, None] * b[..., None, :]
    got = functions(numpy).outer(a, b)
    assert got.dtype == want.dtype and numpy.array_equal(got, want)
    assert numpy.array_equal(functions(dev).outer(_on(a), _on(b)).get(), want)
    if a.ndim == b.ndim >= 2:  # a batch of each, over their first dim, at one level
        xp = BatchedNumpy(a.shape[0], 1, numpy)
        got = functions(xp).outer(Batched(a, 1), Batched(b, 1))
        assert type(got) is Batched and numpy.array_equal(got.data, want)
        got = functions(xp).outer(Batched(a, 1), b[0])  # one batched: the broadcast product
        assert numpy.array_equal(got.data, a[..., :, None] * b[0][..., None, :])
