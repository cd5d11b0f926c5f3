"""The table of fuzzed ops: how each is called and how its inputs are drawn.

An ``OpSpec`` names the op, the function both libraries call (``lib`` is ``torch``
or ``retrograd``; most ops are ``lib.<name>`` or ``lib.nn.functional.<name>``), and a
``make(draw) -> (args, kwargs)`` that draws its inputs. Adding an op is one line
when a generic maker fits (``unary``, ``binary``, ``reduction``), a short maker
otherwise. Makers mostly draw valid inputs and sometimes invalid ones (dims out of
range, mismatched shapes, out-of-range indices), so error types are compared too.
"""

import dataclasses
import functools

import numpy

from . import cases as c
from .cases import FLOATS, INTS


@dataclasses.dataclass(frozen=True)
class OpSpec:
    name: str
    call: object   # (lib, *args, **kwargs) -> result
    make: object   # draw -> (args, kwargs)
    label: str     # the torch callable, for reproducers
    sums: bool     # sums its inputs: rounding error scales with their magnitude
    examples: int | None = None  # the default run's examples, where fewer than usual

    def __repr__(self):
        return f"OpSpec({self.name})"


def _resolve(lib, path):
    return functools.reduce(getattr, path.split("."), lib)


def _caller(path):
    return lambda lib, *a, **k: _resolve(lib, path)(*a, **k)


SPECS = {}
_SUMS = set("""sum mean prod nansum nanmean logsumexp std var norm cumsum cumprod logcumsumexp
softmax log_softmax mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy_with_logits
kl_div binary_cross_entropy cross_entropy nll_loss linear layer_norm group_norm batch_norm conv1d
conv2d conv2d_tiles conv2d_depthwise avg_pool1d avg_pool2d adaptive_avg_pool2d matmul mm bmm dot
einsum""".split())


def op(name, make, path=None, call=None, examples=None):
    """Register op ``name``, called as ``lib.<path>`` (default: ``lib.<name>``) or ``call``."""
    path = path or name
    assert name not in SPECS, name
    SPECS[name] = OpSpec(name, call or _caller(path), make, "torch." + path, name in _SUMS,
                         examples)


def reproducer(case):
    """Torch code that builds the case's inputs and calls the op."""
    lines, names = ["from math import inf, nan", "import torch"], {}
    for k, t in enumerate(case.tensors):
        names[id(t)] = f"x{k}"
        lines.append(t.code(f"x{k}"))

    def show(v):
        if isinstance(v, list):
            return "[" + ", ".join(map(show, v)) + "]"
        return names.get(id(v), repr(v))
    args = [show(a) for a in case.args] + [f"{k}={show(v)}" for k, v in case.kwargs.items()]
    lines.append(f"out = {SPECS[case.op].label}({', '.join(args)})")
    return "\n".join(lines)


# ---- makers -------------------------------------------------------------------------------

def _dim(draw, rank, bad=0.05):
    """A dim of a rank-``rank`` tensor (0-d tensors take 0 and -1), sometimes out of range."""
    n = max(rank, 1)
    if draw.boolean(bad):
        return draw.choice((n, -n - 1))
    return draw.integer(-n, n - 1)


def unary(dtypes=FLOATS + INTS, kw=None, min_rank=0):
    def make(draw):
        x = c.tensor(draw, c.shape(draw, min_rank=min_rank), dtypes)
        return [x], (kw(draw, x) if kw else {})
    return make


def binary(dtypes=FLOATS + INTS, scalar=True, kw=None):
    def make(draw):
        s = c.shape(draw)
        t = c.broadcast_shape(draw, s)
        if draw.boolean(0.05):
            t = tuple(n + 1 for n in t)  # does not broadcast
        if draw.boolean():
            s, t = t, s
        a = c.tensor(draw, s, dtypes)
        if scalar and draw.boolean(0.15):
            b = draw.choice((2, -1, 0, 0.5, -2.5, 3.0, float("inf"), float("nan")))
        else:
            b = c.tensor(draw, t, dtypes)
        return [a, b], (kw(draw) if kw else {})
    return make


def reduction(dim="optional", keepdim=True, dtypes=FLOATS + INTS, kw=None, tuple_dims=True):
    """Reduction over ``dim`` ("optional": may be omitted; "required"; "none": whole tensor)."""
    def make(draw):
        x = c.tensor(draw, c.shape(draw, max_rank=3), dtypes)
        k = {}
        r = len(x.shape)
        if dim == "required" or (dim == "optional" and draw.boolean(0.7)):
            if tuple_dims and r >= 2 and draw.boolean(0.2):
                k["dim"] = tuple(sorted({_dim(draw, r, 0), _dim(draw, r, 0)}, key=lambda d: d % r))
            else:
                k["dim"] = _dim(draw, r)
            if keepdim and draw.boolean():
                k["keepdim"] = True
        if kw:
            k.update(kw(draw, x))
        return [x], k
    return make


def _choose(**options):
    """A kwargs strategy: each key present half the time with one of its values."""
    def kw(draw, *_):
        return {k: draw.choice(v) for k, v in options.items() if draw.boolean()}
    return kw


# ---- unary pointwise and activations ------------------------------------------------------

for _n in ("abs neg exp expm1 log log1p log2 log10 sqrt rsqrt sin cos tan asin acos atan "
           "sinh cosh tanh asinh acosh atanh sigmoid erf erfc erfinv floor ceil round trunc "
           "frac sign reciprocal square exp2 deg2rad lgamma isnan isinf isfinite signbit "
           "nan_to_num").split():
    op(_n, unary())
op("logit", unary(kw=_choose(eps=(None, 1e-6, 0.1))))
op("round_decimals", unary(kw=lambda d, x: {"decimals": d.integer(-1, 3)}), path="round")
op("pow_scalar", unary(kw=lambda d, x: {"exponent": d.choice((0, 1, 2, 3, -1, 0.5, -0.5, 2.5))}),
   path="pow")

for _n in ("relu relu6 selu silu mish hardsigmoid hardswish logsigmoid softsign "
           "tanhshrink").split():
    op(_n, unary(), path="nn.functional." + _n)
op("leaky_relu", unary(kw=_choose(negative_slope=(0.01, 0.2, -0.5, 0.0))),
   path="nn.functional.leaky_relu")
op("elu", unary(kw=_choose(alpha=(1.0, 0.5, 2.0))), path="nn.functional.elu")
op("celu", unary(kw=_choose(alpha=(1.0, 0.5, 2.0))), path="nn.functional.celu")
op("gelu", unary(kw=_choose(approximate=("none", "tanh"))), path="nn.functional.gelu")
op("softplus", unary(kw=_choose(beta=(1.0, 2.0, 0.5), threshold=(20.0, 1.0))),
   path="nn.functional.softplus")
op("hardtanh", unary(kw=_choose(min_val=(-1.0, -2.0, 0.5), max_val=(1.0, 2.0, 0.0))),
   path="nn.functional.hardtanh")
op("hardshrink", unary(kw=_choose(lambd=(0.5, 0.0, 1.5))), path="nn.functional.hardshrink")
op("softshrink", unary(kw=_choose(lambd=(0.5, 0.0, 1.5))), path="nn.functional.softshrink")
op("threshold", unary(kw=lambda d, x: {"threshold": d.choice((0.0, 0.5, -1.0)),
                                       "value": d.choice((0.0, 2.0, -1.0))}),
   path="nn.functional.threshold")
op("clamp", unary(kw=_choose(min=(None, -1.0, 0, 0.5), max=(None, 1.0, 0, -0.5))))


def _clamp_tensor(draw):
    (x, lo), _ = binary(scalar=False)(draw)
    return [x], {"min": lo, "max": None if draw.boolean() else c.tensor(draw, lo.shape)}


op("clamp_tensor", _clamp_tensor, path="clamp")

# ---- binary with broadcasting -------------------------------------------------------------

for _n in ("add sub mul div pow atan2 maximum minimum fmax fmin fmod remainder hypot copysign "
           "eq lt ge ne logaddexp floor_divide xlogy").split():
    op(_n, binary())
op("div_mode", binary(kw=lambda d: {"rounding_mode": d.choice(("floor", "trunc", None))}),
   path="div")
for _n in ("bitwise_left_shift", "bitwise_right_shift"):
    op(_n, binary())
op("lshift", binary(), call=lambda lib, a, b: a << b)
op("special_xlog1py", binary(), path="special.xlog1py")
for _n in ("entr", "log_ndtr", "ndtri", "erfcx", "i0e", "i1", "i1e", "ndtr"):
    op(f"special_{_n}", unary(), path=f"special.{_n}")
_FILLS = (0, 1, -1, 255, 300, -129, 2.5, -0.5, 1e39, float("nan"), float("inf"), True,
          2 ** 63, -2 ** 63 - 1, 2 ** 64)


def _fill(draw):
    return [c.tensor(draw, c.shape(draw)), draw.choice(_FILLS)], {}


op("fill_", _fill, call=lambda lib, x, v: x.clone().fill_(v))
op("full_like_value", _fill, call=lambda lib, x, v: lib.full(tuple(x.shape), v, dtype=x.dtype))
op("add_alpha", binary(kw=lambda d: {"alpha": d.choice((2, -1, 0.5))}), path="add")


def _where(draw):
    (x, y), _ = binary(scalar=False)(draw)
    cond = c.tensor(draw, c.broadcast_shape(draw, x.shape), ("bool",), views=True)
    return [cond, x, y], {}


op("where", _where)

# ---- reductions ---------------------------------------------------------------------------

for _n in "sum mean prod amax amin nansum nanmean all any count_nonzero".split():
    op(_n, reduction(keepdim=_n != "count_nonzero"))
for _n in ("argmax", "argmin"):
    op(_n, reduction(tuple_dims=False))
op("max_dim", reduction("required", tuple_dims=False), path="max")
op("min_dim", reduction("required", tuple_dims=False), path="min")
op("max", reduction("none"))
op("median", reduction("none"))
op("median_dim", reduction("required", tuple_dims=False), path="median")
op("logsumexp", reduction("required"))
op("std", reduction(kw=_choose(correction=(0, 1, 2))))
op("var", reduction(kw=_choose(correction=(0, 1, 2))))
op("norm", reduction(kw=_choose(p=(2, 1, 3, float("inf"), 0))))
for _n in ("cumsum", "cumprod", "logcumsumexp"):
    op(_n, reduction("required", keepdim=False, tuple_dims=False))
op("softmax", reduction("required", keepdim=False, tuple_dims=False),
   path="nn.functional.softmax")
op("log_softmax", reduction("required", keepdim=False, tuple_dims=False),
   path="nn.functional.log_softmax")
op("sort", reduction(keepdim=False, tuple_dims=False,
                     kw=_choose(descending=(True, False), stable=(True,))))
op("argsort", reduction(keepdim=False, tuple_dims=False, kw=_choose(descending=(True, False))))


def _topk(draw):
    (x,), k = reduction(keepdim=False, tuple_dims=False)(draw)
    d = k.get("dim", -1)
    n = x.shape[d] if -len(x.shape) <= d < len(x.shape) else 1
    k["k"] = draw.integer(0, n + (1 if draw.boolean(0.05) else 0))
    k.update(_choose(largest=(True, False))(draw))  # sorted=False: the order is unspecified
    return [x], k


op("topk", _topk)

# ---- losses -------------------------------------------------------------------------------

_REDUCTION = _choose(reduction=("mean", "sum", "none"))


def _pair_loss(extra=None):
    def make(draw):
        s = c.shape(draw)
        t = s if draw.boolean(0.85) else c.broadcast_shape(draw, s)
        k = _REDUCTION(draw)
        if extra:
            k.update(extra(draw))
        return [c.tensor(draw, s, FLOATS), c.tensor(draw, t, FLOATS)], k
    return make


op("mse_loss", _pair_loss(), path="nn.functional.mse_loss")
op("l1_loss", _pair_loss(), path="nn.functional.l1_loss")
op("smooth_l1_loss", _pair_loss(_choose(beta=(1.0, 0.5, 0.0))),
   path="nn.functional.smooth_l1_loss")
op("huber_loss", _pair_loss(_choose(delta=(1.0, 0.5, 2.0))), path="nn.functional.huber_loss")
op("binary_cross_entropy_with_logits", _pair_loss(), path="nn.functional."
   "binary_cross_entropy_with_logits")
op("kl_div", _pair_loss(_choose(log_target=(True, False))), path="nn.functional.kl_div")


def _bce(draw):
    (x, y), k = _pair_loss()(draw)
    for t in (x, y):  # probabilities, sometimes outside [0, 1]
        if not draw.boolean(0.15):
            t.base = (1 / (1 + abs(t.base.astype("float64")))).astype(t.base.dtype)
    return [x, y], k


op("binary_cross_entropy", _bce, path="nn.functional.binary_cross_entropy")


def _class_inputs(draw):
    """Scores (C,), (N, C) or (N, C, d) and class targets, ignore_index and weights."""
    n, ncls, d = draw.integer(0, 4), draw.integer(1, 4), draw.integer(0, 3)
    shp = draw.choice(((ncls,), (n, ncls), (n, ncls, d)))
    x = c.tensor(draw, shp, FLOATS)
    tshape = () if len(shp) == 1 else (shp[0],) + shp[2:]
    target = c.index(draw, tshape, ncls)
    k = _REDUCTION(draw)
    if draw.boolean(0.4):
        k["ignore_index"] = draw.choice((-100, 0, 1, -1))
        if draw.boolean():  # every target ignored
            target.base[...] = k["ignore_index"]
    if draw.boolean(0.25):
        k["weight"] = c.tensor(draw, (ncls,), FLOATS, grad=False, views=False)
        k["weight"].base = abs(k["weight"].base)
    return x, target, k


def _cross_entropy(draw):
    x, target, k = _class_inputs(draw)
    if draw.boolean(0.2):  # class probabilities as targets
        target = c.tensor(draw, x.shape, (x.dtype,), grad=False)
        k.pop("ignore_index", None)
    if draw.boolean(0.2):
        k["label_smoothing"] = draw.choice((0.1, 0.5))
    return [x, target], k


op("cross_entropy", _cross_entropy, path="nn.functional.cross_entropy")


def _nll(draw):
    x, target, k = _class_inputs(draw)
    return [x, target], k


op("nll_loss", _nll, path="nn.functional.nll_loss")

# ---- nn layers ----------------------------------------------------------------------------


def _embedding(draw):
    v, dim = draw.integer(0, 5), draw.integer(1, 3)
    idx = c.index(draw, c.shape(draw, max_rank=2), v)
    k = {}
    if draw.boolean(0.3):
        k["padding_idx"] = draw.integer(-v, max(v - 1, 0))
    return [idx, c.tensor(draw, (v, dim), FLOATS)], k


op("embedding", _embedding, path="nn.functional.embedding")


def _linear(draw):
    fin, fout = draw.integer(0, 4), draw.integer(0, 3)
    x = c.tensor(draw, c.shape(draw, max_rank=2) + (fin,), FLOATS)
    w_in = fin if draw.boolean(0.9) else fin + 1
    args = [x, c.tensor(draw, (fout, w_in), (x.dtype,))]
    if draw.boolean(0.6):
        args.append(c.tensor(draw, (fout,), (x.dtype,)))
    return args, {}


op("linear", _linear, path="nn.functional.linear")


def _layer_norm(draw):
    x = c.tensor(draw, c.shape(draw, min_rank=1), FLOATS)
    ns = x.shape[len(x.shape) - draw.integer(1, len(x.shape)):]
    k = {"normalized_shape": ns}
    if draw.boolean(0.6):
        k["weight"] = c.tensor(draw, ns, (x.dtype,))
        if draw.boolean():
            k["bias"] = c.tensor(draw, ns, (x.dtype,))
    k.update(_choose(eps=(1e-5, 0.0, 1.0))(draw))
    return [x], k


op("layer_norm", _layer_norm, path="nn.functional.layer_norm")


def _nc_input(draw, dtypes=FLOATS, spatial=(0, 2)):
    n, ch = draw.integer(0, 3), draw.integer(1, 4)
    rest = tuple(draw.integer(0, 4) for _ in range(draw.integer(*spatial)))
    return c.tensor(draw, (n, ch) + rest, dtypes)


def _group_norm(draw):
    x = _nc_input(draw)
    ch = x.shape[1]
    groups = draw.choice([g for g in range(1, ch + 1) if ch % g == 0] + [ch + 1])
    k = {"num_groups": groups}
    if draw.boolean(0.6):
        k["weight"], k["bias"] = c.tensor(draw, (ch,), (x.dtype,)), c.tensor(draw, (ch,),
                                                                             (x.dtype,))
    return [x], k


op("group_norm", _group_norm, path="nn.functional.group_norm")


def _batch_norm(draw):
    x = _nc_input(draw)
    ch = x.shape[1]
    stats = [c.tensor(draw, (ch,), (x.dtype,), grad=False, views=False) for _ in range(2)]
    stats[1].base = abs(stats[1].base)
    k = {"training": draw.boolean()}
    if draw.boolean(0.6):
        k["weight"], k["bias"] = c.tensor(draw, (ch,), (x.dtype,)), c.tensor(draw, (ch,),
                                                                             (x.dtype,))
    k.update(_choose(momentum=(0.1, 0.0, 1.0), eps=(1e-5, 0.0))(draw))
    return [x] + stats, k


op("batch_norm", _batch_norm, path="nn.functional.batch_norm")


def _conv(nd):
    def make(draw):
        n, groups = draw.integer(0, 2), draw.choice((1, 1, 2))
        cin, cout = groups * draw.integer(1, 2), groups * draw.integer(1, 2)
        spatial = tuple(draw.integer(0, 5) for _ in range(nd))
        x = c.tensor(draw, ((n,) if draw.boolean(0.8) else ()) + (cin,) + spatial, FLOATS)
        kernel = tuple(draw.integer(1, 3) for _ in range(nd))
        w = c.tensor(draw, (cout, cin // groups) + kernel, (x.dtype,))
        k = {"groups": groups}
        if draw.boolean():
            k["bias"] = c.tensor(draw, (cout,), (x.dtype,))
        k.update(_choose(stride=(1, 2), padding=(0, 1, 2, "same", "valid"), dilation=(1, 2))(draw))
        return [x, w], k
    return make


op("conv1d", _conv(1), path="nn.functional.conv1d")
op("conv2d", _conv(2), path="nn.functional.conv2d")


def _conv_tiles(depthwise):
    """2-D convolutions wide enough for the direct tiles (``ops/_conv_direct.py``: 8 or 16
    output columns and more, few taps); ``depthwise``, a group per channel."""
    def make(draw):
        cin = draw.integer(4, 6) if depthwise else draw.integer(1, 3)
        cout = cin if depthwise else draw.integer(4, 6)
        kernel = (draw.integer(1, 3), draw.integer(1, 3))
        x = c.tensor(draw, (draw.integer(1, 2), cin, draw.integer(1, 4), draw.integer(18, 40)),
                     FLOATS)
        w = c.tensor(draw, (cout, 1 if depthwise else cin) + kernel, (x.dtype,))
        k = {"groups": cin if depthwise else 1}
        if draw.boolean():
            k["bias"] = c.tensor(draw, (cout,), (x.dtype,))
        k.update(_choose(stride=(1, 2), padding=(0, 1, 2, "same", "valid"),
                         dilation=(1, 2))(draw))
        return [x, w], k
    return make


op("conv2d_tiles", _conv_tiles(False), path="nn.functional.conv2d")
op("conv2d_depthwise", _conv_tiles(True), path="nn.functional.conv2d")


def _pool(nd, kind):
    def make(draw):
        x = _nc_input(draw, spatial=(nd, nd))
        if draw.boolean(0.2):
            x = c.tensor(draw, x.shape[1:], (x.dtype,))  # unbatched
        ks = draw.integer(1, 3)
        k = {"kernel_size": ks, "padding": draw.integer(0, ks // 2 + (draw.boolean(0.1)))}
        k.update(_choose(stride=(None, 1, 2), ceil_mode=(True, False))(draw))
        if kind == "max":
            k.update(_choose(dilation=(1, 2))(draw))
        else:
            k.update(_choose(count_include_pad=(True, False))(draw))
        return [x], k
    return make


for _nd in (1, 2):
    for _kind in ("max", "avg"):
        op(f"{_kind}_pool{_nd}d", _pool(_nd, _kind), path=f"nn.functional.{_kind}_pool{_nd}d")


def _adaptive(draw):
    x = _nc_input(draw, spatial=(2, 2))
    return [x], {"output_size": (draw.integer(1, 3), draw.integer(1, 3))}


op("adaptive_avg_pool2d", _adaptive, path="nn.functional.adaptive_avg_pool2d")
op("adaptive_max_pool2d", _adaptive, path="nn.functional.adaptive_max_pool2d")

# ---- shape and view ops -------------------------------------------------------------------


def _reshape(draw):
    x = c.tensor(draw, c.shape(draw))
    s = list(x.shape)
    if len(s) >= 2 and draw.boolean():
        s = [s[0] * s[1]] + s[2:]
    if s and draw.boolean(0.3):
        s[draw.integer(0, len(s) - 1)] = -1
    if draw.boolean(0.05):
        s.append(2)
    return [x], {"shape": tuple(s)}


op("reshape", _reshape)
op("transpose", unary(kw=lambda d, x: {"dim0": _dim(d, len(x.shape)),
                                        "dim1": _dim(d, len(x.shape))}))


def _permute(draw):
    x = c.tensor(draw, c.shape(draw))
    dims = list(range(len(x.shape)))
    if draw.boolean():
        dims.reverse()
    if dims and draw.boolean(0.3):
        dims[0] -= len(dims)
    return [x], {"dims": tuple(dims)}


op("permute", _permute)
op("flatten", unary(kw=lambda d, x: {"start_dim": _dim(d, len(x.shape)),
                                      "end_dim": _dim(d, len(x.shape))}))
op("squeeze", unary(kw=lambda d, x: {} if d.boolean() else {"dim": _dim(d, len(x.shape))}))
op("unsqueeze", unary(kw=lambda d, x: {"dim": _dim(d, len(x.shape) + 1)}))
op("flip", unary(kw=lambda d, x: {"dims": tuple({_dim(d, len(x.shape), 0)
                                                 for _ in range(d.integer(0, 2))})}))
op("roll", unary(kw=lambda d, x: {"shifts": d.integer(-3, 3)} | (
    {} if d.boolean() else {"dims": _dim(d, len(x.shape))})))
op("movedim", unary(kw=lambda d, x: {"source": _dim(d, len(x.shape)),
                                      "destination": _dim(d, len(x.shape))}))
op("tril", unary(kw=_choose(diagonal=(0, 1, -1)), min_rank=2))
op("triu", unary(kw=_choose(diagonal=(0, 1, -2)), min_rank=2))
op("diagonal", unary(kw=_choose(offset=(0, 1, -1)), min_rank=2))


def _narrow(draw):
    x = c.tensor(draw, c.shape(draw, min_rank=1))
    d = _dim(draw, len(x.shape))
    n = x.shape[d] if -len(x.shape) <= d < len(x.shape) else 0
    start = draw.integer(0, n)
    return [x], {"dim": d, "start": start, "length": draw.integer(0, n - start + 1)}


op("narrow", _narrow)


def _expand(draw):
    x = c.tensor(draw, c.shape(draw))
    s = tuple(draw.integer(0, 3) if n == 1 else n for n in x.shape)
    return [x], {"size": (draw.integer(1, 2),) * draw.integer(0, 1) + s}


op("expand", _expand, path="Tensor.expand", call=lambda lib, x, size: x.expand(size))


def _cat(stack):
    def make(draw):
        base = c.shape(draw, min_rank=0 if stack else 1)
        d = _dim(draw, len(base) + (1 if stack else 0))
        xs = []
        for _ in range(draw.integer(0 if draw.boolean(0.05) else 1, 3)):
            s = list(base)
            if not stack and s and -len(s) <= d < len(s):
                s[d] = draw.integer(0, 3)
            xs.append(c.tensor(draw, tuple(s)))
        return [xs], {"dim": d}
    return make


op("cat", _cat(False))
op("stack", _cat(True))

# ---- indexing -----------------------------------------------------------------------------


def _index_select(draw):
    x = c.tensor(draw, c.shape(draw))
    d = _dim(draw, len(x.shape))
    n = x.shape[d] if -len(x.shape) <= d < len(x.shape) else 1
    return [x], {"dim": d, "index": c.index(draw, (draw.integer(0, 4),), n)}


op("index_select", _index_select)


def _gather_like(src):
    def make(draw):
        x = c.tensor(draw, c.shape(draw))
        r = len(x.shape)
        d = _dim(draw, r)
        ishape = tuple(draw.integer(0, n) for n in x.shape)
        n = x.shape[d] if -r <= d < r and x.shape else 1
        k = {"dim": d, "index": c.index(draw, ishape, n)}
        if src:
            k["src"] = c.tensor(draw, ishape, (x.dtype,))
        return [x], k
    return make


op("gather", _gather_like(False))
op("scatter", _gather_like(True))
op("scatter_add", _gather_like(True))


def _masked_fill(draw):
    x = c.tensor(draw, c.shape(draw))
    mask = c.tensor(draw, c.broadcast_shape(draw, x.shape), ("bool",))
    return [x, mask], {"value": draw.choice((0.0, -1.5, float("inf"), float("nan")))}


op("masked_fill", _masked_fill)


def _setitem(draw):
    x = c.tensor(draw, c.shape(draw, min_rank=1))
    n = x.shape[0]
    start = draw.integer(0, n)
    stop = draw.integer(start if draw.boolean(0.8) else 0, n)  # stop < start: an empty view
    src = c.tensor(draw, c.broadcast_shape(draw, (max(stop - start, 0),) + x.shape[1:]),
                   (x.dtype,))
    return [x, src], {"start": start, "stop": stop}


def _assign(lib, x, src, start, stop):
    """``y[start:stop] = src`` on a copy (differentiable in both)."""
    y = x.clone()
    y[start:stop] = src
    return y


op("setitem", _setitem, path="Tensor.__setitem__", call=_assign)

# ---- linear algebra -----------------------------------------------------------------------


def _matmul(draw):
    n, m, k = draw.integer(0, 3), draw.integer(0, 3), draw.integer(0, 3)
    batch = c.shape(draw, max_rank=1)
    a = draw.choice(((k,), (n, k), batch + (n, k)))
    b = draw.choice(((k,), (k, m), batch + (k, m)))
    if draw.boolean(0.05):
        b = (k + 1,) + b[1:]
    dt = draw.choice(FLOATS + INTS)
    return [c.tensor(draw, a, (dt,)), c.tensor(draw, b, (dt,))], {}


op("matmul", _matmul)


def _mm(batched):
    def make(draw):
        n, m, k, bt = (draw.integer(0, 3) for _ in range(4))
        pre = (bt,) if batched else ()
        dt = draw.choice(FLOATS + INTS)
        return [c.tensor(draw, pre + (n, k), (dt,)),
                c.tensor(draw, pre + (k + draw.boolean(0.05), m), (dt,))], {}
    return make


op("mm", _mm(False))
op("bmm", _mm(True))


def _vectors(outer):
    def make(draw):
        n = draw.integer(0, 4)
        dt = draw.choice(FLOATS + INTS)
        m = draw.integer(0, 4) if outer else n + draw.boolean(0.05)
        return [c.tensor(draw, (n,), (dt,)), c.tensor(draw, (m,), (dt,))], {}
    return make


op("dot", _vectors(False))
op("outer", _vectors(True))

_EINSUM = {  # equation: operand shapes in letters
    "ij,jk->ik": ("ij", "jk"), "bij,bjk->bik": ("bij", "bjk"), "ii->i": ("ii",),
    "ij->": ("ij",), "i,i->": ("i", "i"), "i,j->ij": ("i", "j"), "ij->ji": ("ij",),
    "bij,jk->bik": ("bij", "jk"), "...ij,...jk->...ik": ("bij", "jk"),
    "ij,ij->i": ("ij", "ij"),
}


def _einsum(draw):
    eq = draw.choice(sorted(_EINSUM))
    sizes = {ch: draw.integer(0, 3) for ch in "bijk"}
    dt = draw.choice(FLOATS)
    xs = []
    for letters in _EINSUM[eq]:
        s = [sizes[ch] for ch in letters]
        if draw.boolean(0.15):  # a size-1 dim that broadcasts (or fails to)
            s[draw.integer(0, len(s) - 1)] = 1
        xs.append(c.tensor(draw, tuple(s), (dt,)))
    return [eq] + xs, {}


op("einsum", _einsum)

# ---- torch.distributions: densities, cdfs, entropies and KL divergences ------------------
# Parameters and values of broadcasting shapes and any floating dtype, special values
# included; validation on or off (off, invalid parameters give NaN where PyTorch does).

def _dist_make(n_params, value=True, value_dtypes=FLOATS, param_kw=None):
    def make(draw):
        s = c.shape(draw, max_rank=2)
        params = [c.tensor(draw, c.broadcast_shape(draw, s) if draw.boolean(0.3) else s,
                           FLOATS) for _ in range(n_params)]
        args = params + ([c.tensor(draw, s, value_dtypes)] if value else [])
        kw = {"validate_args": draw.boolean(0.3)}
        if param_kw:
            kw.update(param_kw(draw))
        return args, kw
    return make


def _dist_call(cls, method, n_params, build=None):
    """``lib.distributions.<cls>(*params, validate_args=...).<method>(value)``."""
    def call(lib, *args, validate_args=True, **kw):
        D = getattr(lib.distributions, cls)
        params = args[:n_params]
        dist = build(D, params, validate_args) if build else D(*params,
                                                               validate_args=validate_args)
        rest = args[n_params:]
        return getattr(dist, method)(*rest)
    return call


def _dist(name, cls, n_params, methods=("log_prob", "entropy"), build=None):
    for method in methods:
        value = method in ("log_prob", "cdf", "icdf")
        op(f"dist_{name}_{method}", _dist_make(n_params, value),
           call=_dist_call(cls, method, n_params, build))


_dist("normal", "Normal", 2, ("log_prob", "entropy", "cdf", "icdf"))
_dist("laplace", "Laplace", 2, ("log_prob", "entropy", "cdf", "icdf"))
_dist("cauchy", "Cauchy", 2, ("log_prob", "entropy", "cdf", "icdf"))
_dist("gumbel", "Gumbel", 2)
_dist("lognormal", "LogNormal", 2)
_dist("studentt", "StudentT", 3)
_dist("uniform", "Uniform", 2, ("log_prob", "entropy", "cdf"))
_dist("exponential", "Exponential", 1, ("log_prob", "entropy", "cdf", "icdf"))
_dist("gamma", "Gamma", 2)
_dist("beta", "Beta", 2)
_dist("poisson", "Poisson", 1, ("log_prob",))
_dist("halfnormal", "HalfNormal", 1, ("log_prob", "entropy", "cdf"))
_dist("bernoulli_logits", "Bernoulli", 1,
      build=lambda D, p, v: D(logits=p[0], validate_args=v))
_dist("bernoulli_probs", "Bernoulli", 1, build=lambda D, p, v: D(probs=p[0], validate_args=v))
_dist("geometric", "Geometric", 1, build=lambda D, p, v: D(probs=p[0], validate_args=v))
_dist("binomial", "Binomial", 1, ("log_prob",),
      build=lambda D, p, v: D(4, logits=p[0], validate_args=v))
_dist("negbinomial", "NegativeBinomial", 2, ("log_prob",),
      build=lambda D, p, v: D(p[0], logits=p[1], validate_args=v))


def _categorical(draw):
    s = c.shape(draw, min_rank=1, max_rank=3, min_size=1)
    logits = c.tensor(draw, s, FLOATS)
    value = c.index(draw, s[:-1], s[-1])
    return [logits, value], {"validate_args": draw.boolean(0.3)}


op("dist_categorical_log_prob", _categorical,
   call=lambda lib, logits, value, validate_args: lib.distributions.Categorical(
       logits=logits, validate_args=validate_args).log_prob(value))
op("dist_categorical_entropy", _categorical,
   call=lambda lib, logits, value, validate_args: lib.distributions.Categorical(
       probs=logits, validate_args=validate_args).entropy())


def _kl(cls, n_params, build=None):
    def call(lib, *args, validate_args=True):
        D = getattr(lib.distributions, cls)
        make = build or (lambda p: D(*p, validate_args=validate_args))
        return lib.distributions.kl_divergence(make(args[:n_params]), make(args[n_params:]))
    return call


for _name, _cls, _n in (("normal", "Normal", 2), ("laplace", "Laplace", 2),
                        ("gamma", "Gamma", 2), ("beta", "Beta", 2),
                        ("exponential", "Exponential", 1), ("uniform", "Uniform", 2),
                        ("poisson", "Poisson", 1), ("gumbel", "Gumbel", 2)):
    op(f"dist_kl_{_name}", _dist_make(2 * _n, value=False), call=_kl(_cls, _n))

# ---- KL divergences across families: every pair PyTorch registers -------------------------
# Parameters mostly in each family's support (so the closed forms, not just NaN, are
# compared), drawn to meet the supports' edges: Uniforms inside, touching and reaching past
# [0, 1] and 0, Pareto alphas at 1 and 2, ContinuousBernoulli probs near 1/2; one parameter
# in ten is the generic draw (special values, any sign), for validation and NaN. float32 and
# float64: the forms cancel lgamma and digamma terms that float16 keeps no digits of. Five
# examples per pair in the default run (64 pairs, about 5 s), 200 with ``-m slow``.

# family -> (its parameters' kinds, the constructor given the module and the parameters)
KL_FAMILIES = {
    "Normal": (("real", "positive"), lambda D, p, v: D.Normal(*p, validate_args=v)),
    "Laplace": (("real", "positive"), lambda D, p, v: D.Laplace(*p, validate_args=v)),
    "Gumbel": (("real", "positive"), lambda D, p, v: D.Gumbel(*p, validate_args=v)),
    "Gamma": (("positive", "positive"), lambda D, p, v: D.Gamma(*p, validate_args=v)),
    "Beta": (("positive", "positive"), lambda D, p, v: D.Beta(*p, validate_args=v)),
    "Pareto": (("positive", "positive"), lambda D, p, v: D.Pareto(*p, validate_args=v)),
    "Exponential": (("positive",), lambda D, p, v: D.Exponential(*p, validate_args=v)),
    "Poisson": (("positive",), lambda D, p, v: D.Poisson(*p, validate_args=v)),
    "Uniform": (("low", "high"), lambda D, p, v: D.Uniform(*p, validate_args=v)),
    "Bernoulli": (("unit",), lambda D, p, v: D.Bernoulli(probs=p[0], validate_args=v)),
    "Binomial": (("unit",), lambda D, p, v: D.Binomial(4, probs=p[0], validate_args=v)),
    "ContinuousBernoulli": (("unit",), lambda D, p, v: D.ContinuousBernoulli(
        probs=p[0], validate_args=v)),
    # over events of n dims: loc (n,), cov_factor (n, rank), cov_diag (n,)
    "LowRankMultivariateNormal": (("real", "factor", "positive"), lambda D, p, v:
                                  D.LowRankMultivariateNormal(*p, validate_args=v)),
    # loc (n,), the strict lower triangle (n, n) and the diagonal (n,) of scale_tril
    "MultivariateNormal": (("real", "square", "positive"), lambda D, p, v: D.MultivariateNormal(
        p[0], scale_tril=p[1].tril(-1) + p[2].diag_embed(), validate_args=v)),
}
KL_CROSS_PAIRS = (
    ("Bernoulli", "Poisson"), ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"),
    ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Pareto"), ("Beta", "Uniform"),
    ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "Pareto"), ("ContinuousBernoulli", "Uniform"),
    ("Exponential", "Beta"), ("Exponential", "ContinuousBernoulli"), ("Exponential", "Gamma"),
    ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Exponential", "Pareto"),
    ("Exponential", "Uniform"), ("Gamma", "Beta"), ("Gamma", "ContinuousBernoulli"),
    ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Pareto"),
    ("Gamma", "Uniform"), ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"),
    ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Normal"), ("Gumbel", "Pareto"),
    ("Gumbel", "Uniform"), ("Laplace", "Beta"), ("Laplace", "ContinuousBernoulli"),
    ("Laplace", "Exponential"), ("Laplace", "Gamma"), ("Laplace", "Normal"),
    ("Laplace", "Pareto"), ("Laplace", "Uniform"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"), ("Normal", "Beta"),
    ("Normal", "ContinuousBernoulli"), ("Normal", "Exponential"), ("Normal", "Gamma"),
    ("Normal", "Gumbel"), ("Normal", "Laplace"), ("Normal", "Pareto"), ("Normal", "Uniform"),
    ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Exponential"),
    ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Pareto", "Uniform"), ("Poisson", "Bernoulli"),
    ("Poisson", "Binomial"), ("Uniform", "Beta"), ("Uniform", "ContinuousBernoulli"),
    ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Gumbel"),
    ("Uniform", "Normal"), ("Uniform", "Pareto"))
# A Uniform's (low's range and the value it is sometimes exactly, the same of high): inside,
# touching and reaching past [0, 1] and 0; past a Pareto's scale or not
_UNIFORM_RANGES = (((-2.0, 0.5), 0.0, (0.5, 2.5), 1.0), ((-0.3, 0.5), 0.0, (0.5, 1.3), 1.0),
                   ((0.0, 0.5), 0.0, (0.5, 1.0), 1.0), ((0.1, 2.0), 1.0, (2.0, 5.0), 2.0))


def _kl_values(draw, kind, shape, uniform):
    """Values of ``kind`` in a family's support, seeded by one draw."""
    rng = numpy.random.default_rng(draw.integer(0, 2**32 - 1))
    snap = rng.random(shape) < 0.15
    if kind in ("real", "factor", "square"):
        return rng.standard_normal(shape) * draw.choice((1.0, 3.0))
    if kind == "positive":
        a = numpy.exp(rng.uniform(*draw.choice(((-2, 2), (-2, 2), (-6, 6))), shape))
        return numpy.where(snap, rng.choice([1.0, 2.0], shape), a)  # Pareto's edges
    if kind == "unit":
        if draw.boolean(0.3):  # around 1/2, where ContinuousBernoulli takes a Taylor series
            return numpy.where(snap, 0.5, 0.5 + rng.uniform(-2e-3, 2e-3, shape))
        return rng.uniform(1e-3, 1 - 1e-3, shape)
    low, low_snap, high, high_snap = uniform
    bounds, at = (high, high_snap) if kind == "high" else (low, low_snap)
    return numpy.where(snap, at, rng.uniform(*bounds, shape))


def _kl_cross_make(kinds, multivariate):
    def make(draw):
        batch = c.shape(draw, max_rank=2, max_size=3)
        n, rank = draw.integer(1, 3), draw.integer(1, 2)
        dtype, uniform = draw.choice(("float64", "float32")), draw.choice(_UNIFORM_RANGES)
        params = []
        for kind in kinds:
            event = {"factor": (n, rank), "square": (n, n)}.get(kind, (n,)) if multivariate else ()
            shape = (c.broadcast_shape(draw, batch) if draw.boolean(0.3) else batch) + event
            t = c.tensor(draw, shape, (dtype if draw.boolean(0.9) else "float32",))
            if not draw.boolean(0.1):
                t = dataclasses.replace(t, base=_kl_values(draw, kind, t.base.shape, uniform)
                                        .astype(t.dtype))
            params.append(t)
        return params, {"validate_args": draw.boolean(0.5)}
    return make


def _kl_cross_call(p, q):
    (p_kinds, p_make), (_, q_make) = KL_FAMILIES[p], KL_FAMILIES[q]

    def call(lib, *args, validate_args):
        D, n = lib.distributions, len(p_kinds)
        return D.kl_divergence(p_make(D, args[:n], validate_args),
                               q_make(D, args[n:], validate_args))
    return call


KL_CROSS = {}  # op name -> (p's family, q's family)
for _p, _q in KL_CROSS_PAIRS:
    KL_CROSS[f"dist_kl_{_p.lower()}_{_q.lower()}"] = _p, _q
    op(f"dist_kl_{_p.lower()}_{_q.lower()}",
       _kl_cross_make(KL_FAMILIES[_p][0] + KL_FAMILIES[_q][0], "Multivariate" in _p),
       call=_kl_cross_call(_p, _q), examples=5)
