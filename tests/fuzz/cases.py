"""Random cases: shapes, dtypes, special values and strided layouts, drawn once as NumPy.

Every choice goes through a *draw* object, so the same generators serve hypothesis
(``HypothesisDraw``: shrinkable, replayable) and the report tool (``RandomDraw``: a
seeded NumPy generator, thousands of cases a second). Element values come from a
NumPy generator seeded by one draw: shrinking them one by one would cost more than
it tells.
"""

import dataclasses
import math

import numpy
from hypothesis import strategies as st

FLOATS = ("float32", "float32", "float64", "float16")
INTS = ("int64", "bool")
VIEWS = ("contiguous", "contiguous", "contiguous", "transposed", "sliced", "expanded")


class RandomDraw:
    """Choices from a seeded NumPy generator (the report tool)."""

    def __init__(self, seed):
        self.rng = numpy.random.default_rng(seed)

    def integer(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def boolean(self, p=0.5):
        return self.integer(0, 99) < 100 * p


class HypothesisDraw(RandomDraw):
    """Choices from hypothesis's ``st.data()`` (the pytest suite)."""

    def __init__(self, data):
        self.data = data

    def integer(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))


def special_values(dtype):
    """NaN, infinities, signed zeros, a subnormal, the smallest normal and huge values."""
    fi = numpy.finfo(dtype)
    sub = float(fi.smallest_subnormal)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, sub, -sub, float(fi.tiny),
            float(fi.max) / 2, -float(fi.max) / 2, 1e4, -1e4, 1.0, -1.0, 0.5]


def values(draw, shape, dtype):
    """An array of ``dtype``: normal, special-laden or wide-ranging floats; small ints."""
    rng = numpy.random.default_rng(draw.integer(0, 2**32 - 1))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype != "float16" and not dtype.startswith("float"):
        return rng.integers(-4, 5, shape).astype(dtype)
    kind = draw.choice(("normal", "normal", "special", "wide"))
    a = rng.standard_normal(shape)
    if kind == "special":
        pool = numpy.array(special_values(dtype))
        a = numpy.where(rng.random(shape) < 0.3, pool[rng.integers(0, len(pool), shape)], a)
    elif kind == "wide":
        a = numpy.sign(a) * numpy.exp(rng.uniform(-12, 12, shape))
    with numpy.errstate(over="ignore"):
        return numpy.asarray(a).astype(dtype)


@dataclasses.dataclass
class TensorSpec:
    """One input: a base array, the view taken of it, and whether the base requires grad.

    The base is the leaf gradients are taken for, so strided views test the
    backward of the view too.
    """
    base: numpy.ndarray
    view: str
    requires_grad: bool
    expand_to: int = 0
    bound: int | None = None  # for index tensors: valid values are [0, bound)

    @property
    def dtype(self):
        return self.base.dtype.name

    @property
    def array(self):
        """The values the op sees (the view of the base)."""
        return _VIEWS[self.view](self.base, self.shape)

    @property
    def shape(self):
        s = list(self.base.shape)
        if self.view == "transposed":
            s[-2], s[-1] = s[-1], s[-2]
        elif self.view == "sliced":
            s[-1] = (s[-1] + 1) // 2
        elif self.view == "expanded":
            s[0] = self.expand_to
        return tuple(s)

    def make(self, lib):
        """(leaf, view) in ``lib``."""
        leaf = lib.tensor(self.base.copy(), requires_grad=self.requires_grad)
        return leaf, _VIEWS[self.view](leaf, self.shape)

    def code(self, name):
        """Python lines that build this input in torch (for a reproducer)."""
        vals = repr(self.base.tolist())
        grad = ", requires_grad=True" if self.requires_grad else ""
        view = {"contiguous": "", "transposed": ".transpose(-1, -2)", "sliced": "[..., ::2]",
                "expanded": f".expand{self.shape}"}[self.view]
        return f"{name} = torch.tensor({vals}, dtype=torch.{self.dtype}{grad}){view}"

    def __repr__(self):
        rg = ", grad" if self.requires_grad else ""
        return f"<{self.dtype}{list(self.shape)} {self.view}{rg}>"


_VIEWS = {
    "contiguous": lambda t, shape: t,
    "transposed": lambda t, shape: numpy.swapaxes(t, -1, -2) if isinstance(t, numpy.ndarray)
    else t.transpose(-1, -2),
    "sliced": lambda t, shape: t[..., ::2],
    "expanded": lambda t, shape: numpy.broadcast_to(t, shape) if isinstance(t, numpy.ndarray)
    else t.expand(shape),
}


def shape(draw, min_rank=0, max_rank=3, min_size=0, max_size=4):
    """A shape; sizes of 0 come up about one dimension in eight."""
    rank = draw.integer(min_rank, max_rank)
    return tuple(0 if min_size == 0 and draw.boolean(0.12) else draw.integer(max(min_size, 1),
                                                                               max_size)
                 for _ in range(rank))


def tensor(draw, shp, dtypes=FLOATS + INTS, grad=True, views=True):
    """A ``TensorSpec`` of shape ``shp``: a drawn dtype, values and (maybe strided) view."""
    dtype = draw.choice(dtypes)
    view = draw.choice(VIEWS) if views else "contiguous"
    if (view == "transposed" and len(shp) < 2) or (view != "contiguous" and len(shp) < 1):
        view = "contiguous"
    base_shape = list(shp)
    expand_to = 0
    if view == "transposed":
        base_shape[-2], base_shape[-1] = base_shape[-1], base_shape[-2]
    elif view == "sliced":
        base_shape[-1] = 2 * base_shape[-1] - draw.integer(0, min(1, base_shape[-1]))
    elif view == "expanded":
        base_shape[0], expand_to = 1, shp[0]
    floating = dtype.startswith("float")
    return TensorSpec(values(draw, tuple(base_shape), dtype), view,
                      grad and floating and draw.boolean(0.9), expand_to)


def index(draw, shp, high, bad=0.1):
    """An int64 index tensor in ``[0, high)``; with probability ``bad`` some entries are
    out of range (negative or ``high``), which PyTorch refuses."""
    rng = numpy.random.default_rng(draw.integer(0, 2**32 - 1))
    a = rng.integers(0, max(high, 1), shp)
    if high == 0 or draw.boolean(bad):
        a = numpy.where(rng.random(shp) < 0.5, rng.choice([-1, -high - 1, high], shp), a)
    return TensorSpec(numpy.asarray(a, dtype="int64"), "contiguous", False, bound=high)


def broadcast_shape(draw, shp):
    """A shape that broadcasts with ``shp``: trailing dims kept, some set to 1, some dropped."""
    keep = draw.integer(0, len(shp))
    tail = [1 if draw.boolean(0.3) else n for n in shp[len(shp) - keep:]]
    return tuple(tail)


@dataclasses.dataclass
class Case:
    """One call: op name, positional and keyword arguments (``TensorSpec``s, lists of
    them, or plain values), and the seed of the random cotangents."""
    op: str
    args: list
    kwargs: dict
    seed: int

    @property
    def tensors(self):
        """Every ``TensorSpec`` among the arguments, in order."""
        out = []
        for v in list(self.args) + list(self.kwargs.values()):
            out.extend(x for x in (v if isinstance(v, (list, tuple)) else [v])
                       if isinstance(x, TensorSpec))
        return out

    # ---- predicates on the inputs, for the registries ----

    @property
    def dtypes(self):
        """The dtypes of the data inputs (index tensors left out)."""
        return {t.dtype for t in self.tensors if t.bound is None}

    def mixed_dtypes(self):
        return len(self.dtypes) > 1

    def empty(self):
        return any(0 in t.shape for t in self.tensors)

    def zero_dim(self):
        return any(t.shape == () for t in self.tensors if t.bound is None)

    def nonfinite(self):
        return any(t.array.dtype.kind == "f" and not numpy.isfinite(t.array).all()
                   for t in self.tensors)

    def view(self, kind):
        """Whether some input is a ``kind`` view ("transposed", "sliced", "expanded")."""
        return any(t.view == kind for t in self.tensors)

    def bad_index(self):
        """Whether an index or class target holds a value outside ``[0, bound)``."""
        return any(t.bound is not None and ((t.base < 0) | (t.base >= t.bound)).any()
                   for t in self.tensors)

    def all_ignored(self):
        """Whether every class target equals ``ignore_index`` (-100 by default)."""
        ii = self.kwargs.get("ignore_index", -100)
        return any(t.bound is not None and (t.base == ii).all() for t in self.tensors)

    def kwarg(self, name, *values):
        """Whether keyword ``name`` was given (with one of ``values``, when any)."""
        return name in self.kwargs and (not values or self.kwargs[name] in values)

    def __repr__(self):
        kw = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.op}({', '.join(map(repr, self.args))}{', ' if kw else ''}{kw})"
