"""Broadcasting against PyTorch, on shapes drawn by Hypothesis.

Compatible shapes: values, and gradients reduced back to each input's shape
(random cotangents). Incompatible shapes: PyTorch's RuntimeError and message,
out of place and in place.
"""

import numpy
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import retrograd

pytestmark = pytest.mark.torch

_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


def _positive(a):
    return numpy.abs(a) + 0.5


# name -> (number of tensor operands, call, input transform per operand)
_OPS = {
    "add": (2, lambda m, x, y: m.add(x, y, alpha=2), None),
    "sub": (2, lambda m, x, y: x - y, None),
    "mul": (2, lambda m, x, y: x * y, None),
    "div": (2, lambda m, x, y: x / y, (None, _positive)),
    "pow": (2, lambda m, x, y: x ** y, (_positive, None)),
    "maximum": (2, lambda m, x, y: m.maximum(x, y), None),
    "minimum": (2, lambda m, x, y: m.minimum(x, y), None),
    "atan2": (2, lambda m, x, y: m.atan2(x, y), None),
    "where": (3, lambda m, c, x, y: m.where(c > 0, x, y), None),
    "lerp": (3, lambda m, x, y, w: m.lerp(x, y, w), None),
    "addcmul": (3, lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), None),
    "addcdiv": (3, lambda m, x, y, z: m.addcdiv(x, y, z), (None, None, _positive)),
    "clamp": (3, lambda m, x, lo, hi: m.clamp(x, lo, hi), None),
}


def _arrays(shapes, seed, transforms):
    g = numpy.random.default_rng(seed)
    arrays = [g.standard_normal(s) for s in shapes]
    if transforms:
        arrays = [f(a) if f else a for f, a in zip(transforms, arrays, strict=False)]
    return [numpy.asarray(a, dtype=numpy.float64) for a in arrays]


@pytest.mark.parametrize("name", _OPS)
def test_broadcast_values_and_grads(torch, name):
    n, fn, transforms = _OPS[name]

    @_SETTINGS
    @given(mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4, max_side=3),
           st.integers(0, 2**32 - 1))
    def check(shapes, seed):
        arrays = _arrays(shapes.input_shapes, seed, transforms)
        xs = [retrograd.from_numpy(a.copy()).requires_grad_() for a in arrays]
        ts = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
        out, t_out = fn(retrograd, *xs), fn(torch, *ts)
        assert tuple(out.shape) == tuple(t_out.shape) == shapes.result_shape
        numpy.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(),
                                      rtol=1e-12, atol=1e-12)
        cot = numpy.random.default_rng(seed + 1).standard_normal(shapes.result_shape)
        try:
            t_grads = torch.autograd.grad(t_out, ts, torch.from_numpy(cot), allow_unused=True)
        except RuntimeError:  # PyTorch's own clamp backward fails on ((), (), (1,)) bounds
            assume(False)
        grads = retrograd.autograd.grad(out, xs, retrograd.from_numpy(cot), allow_unused=True)
        for x, g, tg in zip(xs, grads, t_grads, strict=True):
            if tg is None:
                assert g is None or not g.numpy().any()
                continue
            assert tuple(g.shape) == tuple(x.shape)
            numpy.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)

    check()


@st.composite
def _incompatible_shapes(draw, num_shapes=2):
    """Shapes where one aligned dimension has two different sizes, neither 1."""
    ndim = draw(st.integers(1, 4))
    base = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    k = draw(st.integers(0, ndim - 1))
    sizes = draw(st.lists(st.integers(2, 4), min_size=2, max_size=2, unique=True))
    shapes = []
    for i in range(num_shapes):
        lead = draw(st.integers(0, k)) if i else 0  # dropping leading dims keeps k aligned
        shape = [draw(st.sampled_from((1, n))) for n in base]
        shape[k] = sizes[min(i, 1)]
        shapes.append(tuple(shape[lead:]))
    order = draw(st.permutations(range(num_shapes)))
    return [shapes[i] for i in order]


def _error(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "where", "lerp", "addcmul"])
def test_incompatible_shapes_raise_like_torch(torch, name):
    n, fn, _ = _OPS[name]

    @_SETTINGS
    @given(_incompatible_shapes(n))
    def check(shapes):
        arrays = [numpy.ones(s) for s in shapes]
        expected = _error(lambda: fn(torch, *[torch.from_numpy(a) for a in arrays]))
        actual = _error(lambda: fn(retrograd, *[retrograd.from_numpy(a) for a in arrays]))
        assert actual == expected

    check()


_INPLACE = {
    "add_": lambda x, y: x.add_(y),
    "mul_": lambda x, y: x.mul_(y),
    "div_": lambda x, y: x.div_(y),
    "sub_": lambda x, y: x.sub_(y, alpha=0.5),
    "clamp_": lambda x, y: x.clamp_(min=y),
    "lerp_": lambda x, y: x.lerp_(y, 0.3),
}


@pytest.mark.parametrize("name", _INPLACE)
def test_inplace_broadcast_like_torch(torch, name):
    """``self.op_(other)``: ``other`` broadcasts to ``self``; anything else raises."""
    fn = _INPLACE[name]

    @_SETTINGS
    @given(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
           st.integers(0, 2**32 - 1))
    def check(shapes, seed):
        a, b = _arrays(shapes.input_shapes, seed, (None, _positive))
        x0 = retrograd.from_numpy(a.copy()).requires_grad_()
        y = retrograd.from_numpy(b.copy()).requires_grad_()
        tx0 = torch.from_numpy(a.copy()).requires_grad_()
        ty = torch.from_numpy(b.copy()).requires_grad_()
        if shapes.result_shape != a.shape:
            assert _error(lambda: fn(x0 * 1, y)) == _error(lambda: fn(tx0 * 1, ty))
            return
        out, t_out = fn(x0 * 1, y), fn(tx0 * 1, ty)
        numpy.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(),
                                      rtol=1e-12, atol=1e-12)
        cot = numpy.random.default_rng(seed + 1).standard_normal(a.shape)
        grads = retrograd.autograd.grad(out, (x0, y), retrograd.from_numpy(cot))
        t_grads = torch.autograd.grad(t_out, (tx0, ty), torch.from_numpy(cot))
        for g, tg in zip(grads, t_grads, strict=True):
            numpy.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)

    check()
