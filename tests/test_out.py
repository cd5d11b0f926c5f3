"""``out=``: every public function that takes it writes its result into the given tensor
as PyTorch does (values, returned object, version counter, dtype casting, resizing with
the deprecation warning, and the refusal under autograd)."""

import inspect
import warnings

import numpy
import pytest

import retrograd
from retrograd.ops import _out
from retrograd.ops._registry import FUNCTIONS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TAKING_OUT = sorted(n for n, f in FUNCTIONS.items() if "out" in inspect.signature(f).parameters)
# Those whose arguments _call_args can make: elementwise, comparison, logical, matrix
# products and joins (the wrapper is the same for every function; see the last test).
_MADE = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "pow", "eq", "ne",
         "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
         "bitwise_and", "bitwise_or", "bitwise_not", "matmul", "mm", "bmm", "mv", "dot",
         "outer", "addmm", "baddbmm", "tensordot", "inner", "cat", "stack", "exp", "log",
         "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "floor", "ceil", "erf",
         "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "xlogy", "remainder", "fmod",
         "float_power", "floor_divide", "logit", "round", "signbit", "angle",
         "nan_to_num", "hstack", "vstack"}


def _call_args(name):
    """Arguments that suit the function (by its parameter names)."""
    a = numpy.random.default_rng(0).uniform(0.2, 0.9, (3, 3))
    b = numpy.random.default_rng(1).uniform(0.2, 0.9, (3, 3))
    params = list(inspect.signature(FUNCTIONS[name]).parameters)
    if params[0] == "tensors":
        return [[a, b]], {}
    args = [a]
    if len(params) > 1 and params[1] in ("other", "exponent", "mat2", "vec2", "tensor", "b"):
        args.append(b if params[1] != "vec2" else b[0])
    if name == "mv":
        args = [a, b[0]]
    if name in ("dot", "vdot", "outer", "ger", "inner"):
        args = [a[0], b[0]]
    if name in ("addmm", "baddbmm"):
        args = [a, a, b] if name == "addmm" else [a[None], a[None], b[None]]
    if name == "bmm":
        args = [a[None], b[None]]
    if name.startswith(("bitwise", "logical")):
        args = [(x > 0.5) for x in args]
    return args, {}


@pytest.mark.parametrize("name", sorted(_MADE & set(TAKING_OUT)))
def test_out_writes_into_the_given_tensor(name):
    if not hasattr(torch, name):
        pytest.skip(f"torch has no {name}")
    args, kwargs = _call_args(name)
    def conv(lib, x):
        if isinstance(x, list):
            return [conv(lib, e) for e in x]
        return (torch.from_numpy if lib is torch else retrograd.from_numpy)(numpy.asarray(x))
    expected = getattr(torch, name)(*[conv(torch, x) for x in args], **kwargs)
    if not isinstance(expected, torch.Tensor):
        pytest.skip("not a single-tensor result")
    out = retrograd.zeros(tuple(expected.shape), dtype=getattr(retrograd,
                                                                str(expected.dtype)[6:]))
    before = out._version
    res = FUNCTIONS[name](*[conv(retrograd, x) for x in args], out=out, **kwargs)
    assert res is out
    assert out._version == before + 1
    numpy.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)


def test_out_casts_resizes_and_refuses_autograd_as_torch():
    y = retrograd.zeros(3, dtype=retrograd.float64)
    assert retrograd.exp(retrograd.zeros(3), out=y).tolist() == [1.0, 1.0, 1.0]
    assert y.dtype == retrograd.float64
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                           "desired output type Long"):
            lib.add(lib.ones(3), 1.5, out=lib.zeros(3, dtype=lib.int64))
        with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=\.\.\. arguments "
                           "don't support automatic differentiation"):
            lib.exp(lib.ones(3, requires_grad=True), out=lib.zeros(3))
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            lib.exp(lib.ones(3), out=lib.zeros(3, requires_grad=True))
        with pytest.raises(TypeError, match=r"exp\(\): argument 'out' must be Tensor, not list"):
            lib.exp(lib.ones(3), out=[1])
        with lib.no_grad():
            lib.exp(lib.ones(3, requires_grad=True), out=lib.zeros(3))
    messages = []
    for lib in (retrograd, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.zeros(2, 2)
            lib.exp(lib.zeros(3), out=out)
            assert tuple(out.shape) == (3,) and out.tolist() == [1.0] * 3
            lib.exp(lib.zeros(2), out=lib.zeros(0))  # an empty out is resized silently
        messages.append([str(x.message).split(" (Triggered")[0] for x in w])
    assert messages[0] == messages[1] and len(messages[0]) == 1
    y2 = retrograd.zeros(2)
    assert retrograd.add(retrograd.ones(2), retrograd.ones(2), out=y2) is y2


def _product_calls(lib, out_dtype):
    """A call of each matrix product into an ``out`` of ``out_dtype`` (float32 operands)."""
    a, b, v = lib.ones(2, 3), lib.ones(3, 4), lib.ones(3)

    def out(*shape):
        return lib.empty(*shape, dtype=out_dtype)
    return {
        "mm": lambda: lib.mm(a, b, out=out(2, 4)),
        "bmm": lambda: lib.bmm(a[None], b[None], out=out(1, 2, 4)),
        "addmm": lambda: lib.addmm(lib.ones(4), a, b, out=out(2, 4)),
        "baddbmm": lambda: lib.baddbmm(lib.ones(1, 2, 4), a[None], b[None], out=out(1, 2, 4)),
        "addbmm": lambda: lib.addbmm(lib.ones(2, 4), a[None], b[None], out=out(2, 4)),
        "addmv": lambda: lib.addmv(lib.ones(2), a, v, out=out(2)),
        "mv": lambda: lib.mv(a, v, out=out(2)),
        "dot": lambda: lib.dot(v, v, out=out(())),
        "vdot": lambda: lib.vdot(v, v, out=out(())),
        "inner": lambda: lib.inner(a, a, out=out(2, 2)),
        "inner of a 0-d": lambda: lib.inner(lib.ones(()), v, out=out(3)),
        "tensordot": lambda: lib.tensordot(a, b, 1, out=out(2, 4)),
        "matmul 1-D 1-D": lambda: lib.matmul(v, v, out=out(())),
        "matmul 2-D 1-D": lambda: lib.matmul(a, v, out=out(2)),
        "matmul 3-D 1-D": lambda: lib.matmul(a[None], v, out=out(1, 2)),
        "matmul 1-D 2-D": lambda: lib.matmul(v, b, out=out(4)),
        "matmul 3-D": lambda: lib.matmul(a[None], b[None], out=out(1, 2, 4)),
        "matmul by keyword": lambda: lib.matmul(input=v, other=v, out=out(())),
        "linalg.matmul": lambda: lib.linalg.matmul(a, b, out=out(2, 4)),
        "outer": lambda: lib.outer(v, v, out=out(3, 3)),
        "cross": lambda: lib.cross(v, v, out=out(3)),
        "chain_matmul": lambda: lib.chain_matmul(a, b, out=out(2, 4)),
        "linalg.cross": lambda: lib.linalg.cross(v, v, out=out(3)),
        "linalg.vecdot": lambda: lib.linalg.vecdot(a, a, out=out(2)),
        "linalg.multi_dot": lambda: lib.linalg.multi_dot([a, b], out=out(2, 4)),
        "linalg.multi_dot of three": lambda: lib.linalg.multi_dot([a, b, b.t()], out=out(2, 3)),
    }


@pytest.mark.parametrize("out_dtype", ["float64", "float16", "int64", "float32"])
def test_products_take_only_an_out_of_their_dtype_as_torch(out_dtype):
    """PyTorch's BLAS calls refuse an out= of another dtype, even one a cast would fit,
    each with its kernel's message (mm's, addmv's, dot's, tensordot's)."""
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's matmul of a vector resizes its out)
        for lib in (retrograd, torch):
            for name, call in _product_calls(lib, getattr(lib, out_dtype)).items():
                try:
                    call()
                    results.setdefault(name, []).append("written")
                except RuntimeError as e:
                    results.setdefault(name, []).append(str(e))
    for name, (ours, theirs) in results.items():
        assert ours == theirs, name
    if out_dtype != "float32":
        assert results["mm"][0].startswith("Expected out tensor to have dtype float")
        assert results["outer"][0] == "written" or out_dtype == "int64"


@pytest.mark.parametrize("out_dtype", ["float32", "bfloat16"])
def test_out_forms_are_not_autocast_as_torch(out_dtype):
    """PyTorch's autocast wraps the functional overloads only: under it a product with
    ``out=`` computes in the inputs' float32 (a bfloat16 out is refused as any other)."""
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (retrograd, torch):
            with lib.autocast("cpu", dtype=lib.bfloat16):
                for name, call in _product_calls(lib, getattr(lib, out_dtype)).items():
                    try:
                        results.setdefault(name, []).append(str(call().dtype)[6:])
                    except RuntimeError as e:
                        results.setdefault(name, []).append(str(e))
    for name, (ours, theirs) in results.items():
        assert ours == theirs, name
    assert results["mm"][0] == ("float32" if out_dtype == "float32" else
                                "Expected out tensor to have dtype float, but got "
                                "c10::BFloat16 instead")


def test_the_out_dtype_check_reads_keywords_in_the_signature_order():
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError, match="addmv input tensors must have the same"):
            lib.matmul(other=lib.ones(3), input=lib.ones(2, 3),
                       out=lib.empty(2, dtype=lib.float64))


def test_out_of_a_multi_output_result():
    values, indices = retrograd.zeros(2), retrograd.zeros(2, dtype=retrograd.int64)
    r = retrograd.return_types.max((retrograd.tensor([3.0, 4.0]), retrograd.tensor([1, 0])))
    res = _out.write("max", r, (values, indices))
    assert type(res) is type(r) and res.values is values and res.indices is indices
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [1, 0]
    with pytest.raises(TypeError, match="must be tuple of 2 Tensors"):
        _out.write("max", r, values)


def test_every_function_declaring_out_is_wrapped():
    wrapped = _out.wrap(len, "len").__code__
    assert len(TAKING_OUT) > 80
    for name in TAKING_OUT:
        assert FUNCTIONS[name].__code__ is wrapped, name


def test_out_of_reductions_and_tuple_results_match_torch():
    a = numpy.random.default_rng(0).standard_normal((3, 4))
    calls = [("sum", (1,), {}), ("mean", (0,), {}), ("cumsum", (1,), {}), ("amax", (1,), {}),
             ("logsumexp", (1,), {}), ("std", (1,), {}), ("max", (1,), {}),
             ("aminmax", (), {"dim": 1}), ("where", (), {})]
    for name, args, kwargs in calls:
        results = []
        for lib in (retrograd, torch):
            x = (retrograd.from_numpy if lib is retrograd else torch.from_numpy)(a.copy())
            if name == "where":
                args = (x, x * 0)
                x = x > 0
            ref = getattr(lib, name)(x, *args, **kwargs)
            outs = (tuple(lib.empty(0, dtype=r.dtype) for r in ref) if isinstance(ref, tuple)
                    else lib.empty(0, dtype=ref.dtype))
            res = getattr(lib, name)(x, *args, out=outs, **kwargs)
            results.append([o.tolist() for o in (outs if isinstance(outs, tuple) else (outs,))])
            assert (res is outs) if not isinstance(outs, tuple) else all(
                r is o for r, o in zip(res, outs, strict=True))
        numpy.testing.assert_allclose(numpy.asarray(results[0], dtype=float),
                                      numpy.asarray(results[1], dtype=float), rtol=1e-12)
