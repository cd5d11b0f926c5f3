"""retrograd.vmap against torch.vmap: in_dims and out_dims over pytrees, None and negative
dims, nesting, chunks, PyTorch's errors, randomness, in-place writes, the loop fallback,
and composition with grad, vjp, jacrev and functional_call (per-sample gradients,
ensembles)."""

import warnings

import numpy
import pytest

import retrograd
from retrograd import func as rf
from _func_pairs import close, pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
tf = torch.func
_pair, _close = pair, close


def _both(fn, *shapes, **vmap_kwargs):
    """``vmap(fn(lib))`` on the same random inputs in both libraries."""
    pairs = [_pair(*s, seed=i) for i, s in enumerate(shapes)]
    r = retrograd.vmap(fn(retrograd), **vmap_kwargs)(*(p[0] for p in pairs))
    t = torch.vmap(fn(torch), **vmap_kwargs)(*(p[1] for p in pairs))
    _close(r, t)
    return r


def test_dot_of_rows():
    _both(lambda lib: lib.dot, (5, 3), (5, 3))


@pytest.mark.parametrize("in_dims", [0, 1, -1, (1, None), (None, -2), (0, 1)])
def test_in_dims_placements(in_dims):
    shapes = {0: [(4, 3), (4, 3)], 1: [(3, 4), (3, 4)], -1: [(3, 4), (3, 4)],
              (1, None): [(3, 4), (3,)], (None, -2): [(3,), (4, 3)], (0, 1): [(4, 3), (3, 4)]}
    _both(lambda lib: lambda x, y: lib.sin(x) * y + (x * y).sum(), *shapes[in_dims],
          in_dims=in_dims)


@pytest.mark.parametrize("out_dims", [0, 1, -1, (1, 0)])
def test_out_dims(out_dims):
    _both(lambda lib: lambda x: (x.exp(), x.sum(0)), (4, 3, 2), out_dims=out_dims)


def test_pytrees_in_and_out():
    (rx, tx), (ry, ty) = _pair(4, 3), _pair(3, seed=1)

    def f(d, pair):
        return {"s": d["x"] * pair[0], "t": [pair[1] + d["x"].sum()]}
    r = retrograd.vmap(f, in_dims=({"x": 0}, (None, 0)))({"x": rx}, (ry, rx))
    t = torch.vmap(f, in_dims=({"x": 0}, (None, 0)))({"x": tx}, (ty, tx))
    _close(r, t)


def test_none_out_dim_passes_a_value_through():
    rx, tx = _pair(4, 3)
    r = retrograd.vmap(lambda x: (x * 2, 7), out_dims=(0, None))(rx)
    t = torch.vmap(lambda x: (x * 2, 7), out_dims=(0, None))(tx)
    _close(r[0], t[0])
    assert r[1] == t[1] == 7


def test_unbatched_output_is_expanded():
    (rx, tx), (rw, tw) = _pair(4, 3), _pair(3, seed=1)
    _close(retrograd.vmap(lambda x: rw * 2)(rx), torch.vmap(lambda x: tw * 2)(tx))


def test_nested_vmap_and_closures_over_outer_batches():
    (rx, tx), (ry, ty) = _pair(4, 3), _pair(5, 3, seed=1)

    def outer(lib):
        return lambda x: lib.vmap(lambda y: (x * y).sum() + y.max())(ry if lib is retrograd
                                                                    else ty)
    _close(retrograd.vmap(outer(retrograd))(rx), torch.vmap(outer(torch))(tx))
    _both(lambda lib: lib.vmap(lambda a, b: a @ b), (2, 3, 4, 5), (2, 3, 5, 2))


def test_chunk_size_gives_the_same_result():
    r = _both(lambda lib: lambda x: (x.softmax(0), x.norm()), (7, 3), chunk_size=3)
    assert tuple(r[0].shape) == (7, 3)


def test_matmul_with_a_shared_weight_and_a_module():
    rx, tx = _pair(6, 4)
    lin = retrograd.nn.Linear(4, 3)
    tlin = torch.nn.Linear(4, 3)
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    _close(retrograd.vmap(lin)(rx.float()), torch.vmap(tlin)(tx.float()), atol=1e-6)


def _error(call, lib):
    with pytest.raises(Exception) as e:
        call(lib)
    return type(e.value), str(e.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.vmap(lambda x: x, in_dims=[0])(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, in_dims=(0.5,))(lib.ones(2)),
    lambda lib: lib.vmap(lambda x, y: x, in_dims=(0, 0))(lib.ones(2), 3),
    lambda lib: lib.vmap(lambda x: x, in_dims=2)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, in_dims=-2)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x)(),
    lambda lib: lib.vmap(lambda x, y: x + y)(lib.ones(2), lib.ones(3)),
    lambda lib: lib.vmap(lambda x: x, in_dims=None)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x, y: x, in_dims=(None, None))(lib.ones(2), lib.ones(2)),
    lambda lib: lib.vmap(lambda x, y: x, in_dims=(0,))(lib.ones(2), lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, in_dims=({"a": 0},))({"b": lib.ones(2)}),
    lambda lib: lib.vmap(lambda x: x, out_dims=None)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, out_dims="a")(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: 3)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, randomness="x")(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, chunk_size=0)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x, out_dims=3)(lib.ones(2)),
    lambda lib: lib.vmap(lambda x: x.sum().item())(lib.ones(2, 3)),
    lambda lib: lib.vmap(lambda x: x if x.sum() > 0 else -x)(lib.ones(2, 3)),
    lambda lib: lib.vmap(lambda x: x + lib.rand(3))(lib.ones(2, 3)),
    lambda lib: lib.vmap(lambda x: lib.zeros(3).mul_(x))(lib.ones(2, 3)),
    lambda lib: lib.vmap(lambda x: lib.zeros(3).copy_(x))(lib.ones(2, 3)),
    lambda lib: lib.func.stack_module_state([]),
])
def test_errors_are_pytorchs(call):
    rtype, rmsg = _error(call, retrograd)
    ttype, tmsg = _error(call, torch)
    assert rmsg == tmsg
    assert issubclass(rtype, ttype)  # (vmap's value errors: NotImplementedError, see deviations)


def test_randomness_same_and_different():
    x = retrograd.ones(4, 3)
    same = retrograd.vmap(lambda a: a * retrograd.rand(3), randomness="same")(x)
    assert numpy.all(same.numpy() == same.numpy()[0])
    diff = retrograd.vmap(lambda a: a * retrograd.rand(3), randomness="different")(x)
    assert len({tuple(r) for r in diff.numpy()}) == 4
    drop = retrograd.vmap(lambda a: retrograd.nn.functional.dropout(a, 0.5),
                          randomness="different")(retrograd.ones(8, 50))
    assert len({tuple(r) for r in drop.numpy()}) == 8


@pytest.mark.parametrize("draw", ["normal", "poisson"])
def test_randomness_same_refuses_batched_parameters_as_torch(draw):
    def call(lib):
        f = (lambda m: lib.normal(m, 1.0)) if draw == "normal" else lib.poisson
        with pytest.raises(RuntimeError) as e:
            lib.vmap(f, randomness="same")(lib.ones(3, 2))
        return str(e.value)
    assert call(retrograd) == call(torch)


_BERNOULLI = {  # vmapped over p, a (3, 2) batch of probabilities
    "bernoulli(p)": lambda lib: lib.bernoulli,
    "p.bernoulli()": lambda lib: lambda p: p.bernoulli(),
    "bernoulli(p, 0.3)": lambda lib: lambda p: lib.bernoulli(p, 0.3),
    "zeros.bernoulli_(p)": lambda lib: lambda p: lib.zeros(2).bernoulli_(p),
    "zeros.bernoulli_(0.5)": lambda lib: lambda p: lib.zeros(2).bernoulli_(0.5),
    "p.clone().bernoulli_(0.5)": lambda lib: lambda p: p.clone().bernoulli_(0.5),
    "zeros.exponential_()": lambda lib: lambda p: lib.zeros(2).exponential_(),
    "nested, p batched outside": lambda lib: lambda p: lib.vmap(
        lambda q, r: lib.bernoulli(r), in_dims=(0, None), randomness="different")(
        lib.zeros(4), p),
}


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
@pytest.mark.parametrize("case", sorted(_BERNOULLI))
def test_bernoulli_randomness_as_torch(case, randomness):
    """Batched probabilities cannot share one draw ('same'), and an unbatched tensor
    cannot hold a draw per element ('different'): PyTorch's errors, or a batch of draws."""
    def call(lib):
        try:
            out = lib.vmap(_BERNOULLI[case](lib), randomness=randomness)(lib.full((3, 2), 0.5))
        except RuntimeError as e:
            return str(e)
        return tuple(out.shape)
    assert call(retrograd) == call(torch)


_INPLACE_SAMPLERS = {"uniform_": (), "normal_": (), "exponential_": (), "cauchy_": (),
              "log_normal_": (), "geometric_": (0.5,), "bernoulli_": (), "random_": (3,)}


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
@pytest.mark.parametrize("into", ["zeros(2)", "p.clone()"])
@pytest.mark.parametrize("sampler", sorted(_INPLACE_SAMPLERS))
def test_inplace_samplers_randomness_as_torch(sampler, into, randomness):
    """Every in-place sampler refuses a draw per batch element into an unbatched tensor
    ('different'), with PyTorch's error; into a batched one, or with 'same', it draws."""
    def call(lib):
        def f(p):
            t = lib.zeros(2) if into == "zeros(2)" else p.clone()
            return getattr(t, sampler)(*_INPLACE_SAMPLERS[sampler]) + p
        try:
            out = lib.vmap(f, randomness=randomness)(lib.full((3, 2), 0.5))
        except RuntimeError as e:
            return str(e)
        return tuple(out.shape)
    assert call(retrograd) == call(torch)


def test_inplace_on_a_mapped_input_writes_it():
    (rx, tx), (ry, ty) = _pair(4, 3), _pair(4, 3, seed=1)
    retrograd.vmap(lambda a, b: a.add_(b))(rx, ry)
    torch.vmap(lambda a, b: a.add_(b))(tx, ty)
    _close(rx, tx)


def test_an_op_without_a_batching_rule_loops_with_a_warning():
    # (torch.vmap refuses unique_consecutive's data-dependent shapes: against its own
    # calls per row, whose distinct values give one size)
    rx, tx = _pair(4, 6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = retrograd.vmap(retrograd.unique_consecutive)(rx)
    _close(r, torch.stack([torch.unique_consecutive(row) for row in tx]))
    assert any("batching rule for aten::unique_consecutive" in str(w.message) for w in seen)


# ---- composition ------------------------------------------------------------------------------

def test_per_sample_gradients_of_an_mlp():
    (rx, tx), (rw1, tw1), (rw2, tw2) = _pair(8, 5), _pair(5, 6, seed=1), _pair(6, 2, seed=2)
    ry = retrograd.tensor([0, 1, 1, 0, 1, 0, 0, 1])
    ty = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])

    def loss(lib):
        def f(params, x, y):
            w1, w2 = params
            logits = lib.tanh(x @ w1) @ w2
            return lib.nn.functional.cross_entropy(logits[None], y[None])
        return f
    r = rf.vmap(rf.grad(loss(retrograd)), in_dims=(None, 0, 0))((rw1, rw2), rx, ry)
    t = tf.vmap(tf.grad(loss(torch)), in_dims=(None, 0, 0))((tw1, tw2), tx, ty)
    _close(r, t)


def test_grad_vjp_and_jacrev_over_vmap():
    (rx, tx), (rw, tw) = _pair(4, 3), _pair(3, 3, seed=1)

    def f(lib):
        return lambda w: lib.vmap(lambda x: lib.tanh(x @ w).sum())(rx if lib is retrograd
                                                                   else tx)
    _close(rf.grad(lambda w: f(retrograd)(w).sum())(rw),
           tf.grad(lambda w: f(torch)(w).sum())(tw))
    _close(rf.jacrev(f(retrograd))(rw), tf.jacrev(f(torch))(tw))
    ro, rfn = rf.vjp(f(retrograd), rw)
    to, tfn = tf.vjp(f(torch), tw)
    _close(rfn(ro.cos()), tfn(to.cos()))


def test_vmap_of_jacrev_and_of_vjp():
    rx, tx = _pair(4, 3)
    _close(rf.vmap(rf.jacrev(lambda x: x.sin() * x.sum()))(rx),
           tf.vmap(tf.jacrev(lambda x: x.sin() * x.sum()))(tx))

    def rvjp(x):
        return rf.vjp(lambda a: a.exp() * 2, x)[1](x.cos())[0]

    def tvjp(x):
        return tf.vjp(lambda a: a.exp() * 2, x)[1](x.cos())[0]
    _close(rf.vmap(rvjp)(rx), tf.vmap(tvjp)(tx))


# Ops whose nodes save arrays computed from the input (indices, sorted values): under a
# nested vmap the saved arrays are batched at both levels while the cotangent handed to
# vjp is batched at the outer level only, so the buffers a rule makes must be the inner
# level's (a buffer of the outer level written at the inner one was read-only, or the
# write went to a copy and the gradient came back zero).
_SAVE_INDICES = {
    "sort": lambda lib, x: lib.sort(x, -1).values,
    "cummax": lambda lib, x: lib.cummax(x, -1).values,
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2, -1).values,
    "max_pool1d": lambda lib, x: lib.nn.functional.max_pool1d(x, 2),
    "gather": lambda lib, x: lib.gather(x, -1, x.argsort(-1)),
    "index_select": lambda lib, x: lib.index_select(x, -1, x[0].argsort()),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, x.argsort(-1), -1),
}


@pytest.mark.parametrize("name", sorted(_SAVE_INDICES))
def test_vjp_under_nested_vmap_with_a_cotangent_of_the_outer_level(name):
    op = _SAVE_INDICES[name]
    (rx, tx) = _pair(2, 3, 4, 6)
    (rv, tv) = _pair(2, *op(torch, tx[0, 0]).shape, seed=1)

    def run(lib, v, x):
        def g(v, x):
            return lib.func.vjp(lambda a: op(lib, a), x)[1](v)[0]
        return lib.func.vmap(lib.func.vmap(g, in_dims=(None, 0)))(v, x)
    _close(run(retrograd, rv, rx), run(torch, tv, tx))


# Ops whose tangent is their vjp rules differentiated (jvp="transpose"): under vmap those
# rules run on Tensors of batched data, and choose a formula by its values (windows wholly
# in padding, zeros of a product), which must read every batch member (a Tensor's bool()
# is vmap's data-dependent error); max pooling's rule scatters into zeros of no batch,
# which must take the batches of its index and gradient (not fall back to a loop).
_TRANSPOSE_JVP = {
    "max_pool1d": lambda lib, x: lib.nn.functional.max_pool1d(x, 3, 2, padding=1),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(2, 2, 3), 2, 1),
    "max_pool3d": lambda lib, x: lib.nn.functional.max_pool3d(x.reshape(1, 2, 2, 3), 2, 1),
    "adaptive_max_pool1d": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 4),
    "prod": lambda lib, x: x.prod(-1),
    "cumprod": lambda lib, x: x.cumprod(-1),
}
# The vmap levels (Outer, Inner) the primal and the tangent are batched over.
_LEVELS = [("O", "OI"), ("OI", "O"), ("OI", "OI"), ("I", "O"), ("O", "I")]


def _at_levels(levels, seed):
    """A (2, 6) sample batched over ``levels`` (2 outer, 3 inner), its vmap in_dims; one
    element zero in one batch member (prod's formula for zeros)."""
    shape = (2,) * ("O" in levels) + (3,) * ("I" in levels) + (2, 6)
    r, t = _pair(*shape, seed=seed)
    r.view(-1)[7] = t.view(-1)[7] = 0.0
    return r, t, 0 if "O" in levels else None, 0 if "I" in levels else None


def _jvp_at_levels(op, levels):
    """``op``'s jvp under two vmaps, the primal and tangent batched over ``levels``."""
    (rx, tx, ox, ix), (rv, tv, ov, iv) = (_at_levels(lv, k) for k, lv in enumerate(levels))

    def run(lib, x, v):
        def f(x, v):
            return lib.func.jvp(lambda a: op(lib, a), (x,), (v,))
        vm = lib.func.vmap
        return vm(vm(f, in_dims=(ix, iv)), in_dims=(ox, ov))(x, v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a loop over the batch warns)
        r = run(retrograd, rx, rv)
    t = run(torch, tx, tv)
    assert [type(o).__name__ for o in r] == [type(o).__name__ for o in t]  # (sort's too)
    _close(*([tuple(o) if isinstance(o, tuple) else o for o in out] for out in (r, t)))


@pytest.mark.parametrize("levels", _LEVELS, ids="-".join)
@pytest.mark.parametrize("name", sorted(_TRANSPOSE_JVP))
def test_transpose_jvp_under_nested_vmap_at_any_levels(name, levels):
    _jvp_at_levels(_TRANSPOSE_JVP[name], levels)


@pytest.mark.parametrize("name", sorted(_TRANSPOSE_JVP))
def test_reverse_over_reverse_of_value_checking_rules_under_vmap(name):
    """The same rules run on Tensors of batched data for a second derivative under vmap."""
    op = _TRANSPOSE_JVP[name]
    rx, tx, _, _ = _at_levels("O", 0)

    def run(lib, x):
        fl = lib.func
        return fl.vmap(fl.jacrev(fl.jacrev(lambda a: (op(lib, a) ** 3).sum())))(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = run(retrograd, rx)
    _close(r, run(torch, tx))


# jvp rules that make a buffer and write the tangent into it (max unpooling's scatter, a
# constant pad's): its namespace must be the innermost batch's, the tangent's where it is
# batched deeper than the primal (a buffer of the primal's levels was broadcast read-only
# over the tangent's); and results of named fields (sort's) rebuilt as such.
_BUFFER_JVP = {
    "max_unpool1d": lambda lib, x: lib.nn.functional.max_unpool1d(
        x, lib.tensor([[0, 3, 5, 6, 9, 10]] * 2), 2, output_size=(12,)),
    "pad": lambda lib, x: lib.nn.functional.pad(x, (1, 2), value=1.5),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "local_response_norm": lambda lib, x: lib.nn.functional.local_response_norm(x[None], 2),
    "sort": lambda lib, x: lib.sort(x, -1),
    "max.dim": lambda lib, x: lib.max(x, -1),
    # constants of the values (ties) beside an index of no batch
    "scatter_reduce.amax": lambda lib, x: _scatter_into_zeros(lib, x, "amax"),
    "scatter_reduce.amin": lambda lib, x: _scatter_into_zeros(lib, x, "amin"),
    # list ops: their tangent's batch is kept
    "block_diag": lambda lib, x: lib.block_diag(x, x[:1]),
    "cat": lambda lib, x: lib.cat([x, x * 2], -1),
}


def _scatter_into_zeros(lib, x, reduce):
    index = lib.tensor([[0, 1, 1, 2, 3, 3]] * 2)
    return lib.zeros(2, 4, dtype=x.dtype).scatter_reduce(-1, index, x, reduce)


@pytest.mark.parametrize("levels", _LEVELS, ids="-".join)
@pytest.mark.parametrize("name", sorted(_BUFFER_JVP))
def test_jvp_writing_the_tangent_under_nested_vmap_at_any_levels(name, levels):
    _jvp_at_levels(_BUFFER_JVP[name], levels)


@pytest.mark.parametrize("levels", _LEVELS, ids="-".join)
def test_scatter_reduce_prod_jvp_under_nested_vmap_is_reverse_modes_product(levels):
    """PyTorch 2.13's forward mode gives scatter_reduce(prod) a zero tangent (see
    docs/deviations.md), and its vmap of the Jacobian fails (.item()): the reference is
    its reverse-mode Jacobian of each batch member times that member's tangent."""
    (rx, tx, ox, ix), (rv, tv, ov, iv) = (_at_levels(lv, k) for k, lv in enumerate(levels))

    def op(lib, a):
        return lib.ones(2, 4, dtype=a.dtype).scatter_reduce(
            -1, lib.tensor([[0, 1, 1, 2, 3, 3]] * 2), a, "prod")

    def ours(x, v):
        return rf.jvp(lambda a: op(retrograd, a), (x,), (v,))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = rf.vmap(rf.vmap(ours, in_dims=(ix, iv)), in_dims=(ox, ov))(rx, rv)

    def member(a, at, o, i):
        return a[o][i] if "O" in at and "I" in at else a[o] if "O" in at else a[i]
    want = torch.stack([torch.stack([
        (torch.func.jacrev(lambda a: op(torch, a))(member(tx, levels[0], o, i))
         * member(tv, levels[1], o, i)).sum((-2, -1)) for i in range(3)]) for o in range(2)])
    _close(r, want)


# Writes into a tensor of fewer batches than the index and values written (a buffer of
# zeros, as max pooling's rule scatters into): the copy written takes their batches, at
# every level, as PyTorch's batching rules give ``self`` the batch (they fell back to a
# loop over the batch).
_WRITES = {
    "scatter": lambda lib, z, i, s: lib.scatter(z, 1, i, s),
    "scatter_add": lambda lib, z, i, s: lib.scatter_add(z, 1, i, s),
    "scatter_reduce": lambda lib, z, i, s: lib.scatter_reduce(z, 1, i, s, "amax"),
    "index_add": lambda lib, z, i, s: lib.index_add(z.T, 0, i[0], s.T),
    "index_copy": lambda lib, z, i, s: lib.index_copy(z.T, 0, i[0], s.T),
    "index_put": lambda lib, z, i, s: z.index_put((i[0] % 2,), s[0][:, None],
                                                  accumulate=True),
}


@pytest.mark.parametrize("levels", [("OI", "O"), ("O", "OI"), ("I", "O"), ("OI", "OI")],
                         ids="-".join)
@pytest.mark.parametrize("name", sorted(_WRITES))
def test_writes_into_an_unbatched_tensor_under_nested_vmap(name, levels):
    op = _WRITES[name]
    z = numpy.random.default_rng(2).standard_normal((2, 5))
    index = numpy.random.default_rng(3).random((2, 3, 2, 4)).argsort(-1)  # rows: permutations
    outs = []
    for lib, src in zip((retrograd, torch), _at_levels(levels[1], 4)[:2], strict=True):
        i = lib.tensor(index[(slice(None),) * ("O" in levels[0]) + (0,) * ("O" not in levels[0])
                             + (slice(None),) * ("I" in levels[0])
                             + (0,) * ("I" not in levels[0])])
        src = src[..., :4]
        dims = [(0 if lv in levels[0] else None, 0 if lv in levels[1] else None)
                for lv in "IO"]
        vm = lib.func.vmap
        f = vm(vm(lambda i, s, lib=lib: op(lib, lib.tensor(z), i, s), in_dims=dims[0]),
               in_dims=dims[1])
        with warnings.catch_warnings():
            warnings.simplefilter("error" if lib is retrograd else "ignore")
            outs.append(f(i, src))
    _close(*outs)


def _models(lib, n):
    lib.manual_seed(0)
    return [lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
            for _ in range(n)]


def test_ensemble_with_stacked_module_state():
    rms, tms = _models(retrograd, 3), _models(torch, 3)
    for rm, tm in zip(rms, tms, strict=True):
        for rp, tp in zip(rm.parameters(), tm.parameters(), strict=True):
            with torch.no_grad():
                tp.copy_(torch.from_numpy(rp.detach().numpy()))
    rx, tx = _pair(5, 3)
    rp, rb = rf.stack_module_state(rms)
    tp, tb = tf.stack_module_state(tms)
    assert list(rp) == list(tp) and all(p.requires_grad and p.is_leaf for p in rp.values())
    base_r, base_t = rms[0], tms[0]

    def rcall(p, b, x):
        return rf.functional_call(base_r, (p, b), (x.float(),))

    def tcall(p, b, x):
        return tf.functional_call(base_t, (p, b), (x.float(),))
    r = rf.vmap(rcall, in_dims=(0, 0, None))(rp, rb, rx)
    t = tf.vmap(tcall, in_dims=(0, 0, None))(tp, tb, tx)
    _close(r, t, atol=1e-6)
    r.sum().backward()
    t.sum().backward()
    _close({k: v.grad for k, v in rp.items()}, {k: v.grad for k, v in tp.items()}, atol=1e-5)


def test_stack_module_state_errors_are_pytorchs():
    for lib in (retrograd, torch):
        a, b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)
        b.eval()
        with pytest.raises(RuntimeError, match="same training/eval mode"):
            lib.func.stack_module_state([a, b])
        with pytest.raises(RuntimeError, match="same class"):
            lib.func.stack_module_state([a, lib.nn.Identity()])


def _net(lib, w):
    return lambda a: (lib.tanh(a @ w) ** 2).sum()


@pytest.mark.parametrize("case", ["vmap(hessian)", "hessian(vmap)", "vmap(jacfwd)",
                                  "vmap(jacrev)", "jacfwd(vmap)", "vmap(jvp)",
                                  "vmap(vmap(grad))", "vmap(grad(grad))"])
def test_jacobians_and_hessians_compose_with_vmap(case):
    (rx, tx), (rw, tw) = _pair(4, 3), _pair(3, 3, seed=1)

    def build(lib, x, w):
        fl = lib.func
        return {
            "vmap(hessian)": lambda: fl.vmap(fl.hessian(_net(lib, w)))(x),
            "hessian(vmap)": lambda: fl.hessian(lambda v: fl.vmap(_net(lib, v))(x).sum())(w),
            "vmap(jacfwd)": lambda: fl.vmap(fl.jacfwd(lambda a: a.sin() * a.sum()))(x),
            "vmap(jacrev)": lambda: fl.vmap(fl.jacrev(lambda a: lib.tanh(a @ w)))(x),
            "jacfwd(vmap)": lambda: fl.jacfwd(lambda v: fl.vmap(lambda a: a @ v)(x))(w),
            "vmap(jvp)": lambda: fl.vmap(lambda a: fl.jvp(lambda b: b.sin(), (a,),
                                                          (a.cos(),))[1])(x),
            "vmap(vmap(grad))": lambda: fl.vmap(fl.vmap(fl.grad(lambda a: a.sin().sum())))(
                x[None].expand(2, 4, 3)),
            "vmap(grad(grad))": lambda: fl.vmap(fl.grad(fl.grad(lambda a: a.sin())))(x[:, 0]),
        }[case]()
    _close(build(retrograd, rx, rw), build(torch, tx, tw))


def test_a_batched_tensor_prints_as_pytorchs():
    for nested in (False, True):
        seen = {}
        for lib in (retrograd, torch):
            def show(x, lib=lib, seen=seen):
                seen[lib.__name__] = repr(x)
                return x
            f = lib.vmap(lib.vmap(show)) if nested else lib.vmap(show)
            f(lib.arange(6.0).reshape(2, 3))
        assert seen["retrograd"] == seen["torch"]


def _functions(lib, generate, rule):
    class Exp(lib.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    if rule is not None:
        Exp.vmap = staticmethod(rule)
    return Exp, Old


def test_autograd_function_with_generate_vmap_rule():
    rx, tx = _pair(3, 4)
    r = rf.vmap(rf.grad(lambda a: _functions(retrograd, True, None)[0].apply(a).sum()))(rx)
    t = tf.vmap(tf.grad(lambda a: _functions(torch, True, None)[0].apply(a).sum()))(tx)
    _close(r, t)


def test_autograd_function_vmap_staticmethod():
    calls = []

    def rule(info, in_dims, x):
        calls.append((info.batch_size, info.randomness, in_dims))
        return x.exp(), in_dims[0]
    rx, tx = _pair(3, 4)
    _close(retrograd.vmap(_functions(retrograd, False, rule)[0].apply)(rx), tx.exp())
    assert calls == [(3, "error", (0,))]


@pytest.mark.parametrize("which", [0, 1])
def test_autograd_function_errors_under_vmap_are_pytorchs(which):
    msgs = []
    for lib in (retrograd, torch):
        fn = _functions(lib, False, None)[which]
        with pytest.raises(RuntimeError) as e:
            lib.vmap(fn.apply)(lib.ones(2, 3))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_functorch_alias_module():
    import functorch

    from retrograd import _functorch
    assert _functorch.vmap is rf.vmap and _functorch.jacrev is rf.jacrev
    rm, tm = _models(retrograd, 1)[0], _models(torch, 1)[0]
    for rp, tp in zip(rm.parameters(), tm.parameters(), strict=True):
        with torch.no_grad():
            tp.copy_(torch.from_numpy(rp.detach().numpy()))
    rx, tx = _pair(5, 3)
    with pytest.warns(FutureWarning, match="`functorch.make_functional` is deprecated"):
        rf_, rparams = _functorch.make_functional(rm, disable_autograd_tracking=True)
    with pytest.warns(FutureWarning):
        tf_, tparams = functorch.make_functional(tm, disable_autograd_tracking=True)
    assert not any(p.requires_grad for p in rparams)
    _close(rf_(rparams, rx.float()), tf_(tparams, tx.float()), atol=1e-6)
    bn = retrograd.nn.BatchNorm1d(3)
    with pytest.warns(FutureWarning):
        fm, params, buffers = _functorch.make_functional_with_buffers(bn)
    assert (len(params), len(buffers)) == (2, 3)
    with pytest.raises(RuntimeError, match="has buffers. Please use make_functional_with"):
        with pytest.warns(FutureWarning):
            _functorch.make_functional(bn)
    with pytest.warns(FutureWarning):
        fm, params, buffers = _functorch.combine_state_for_ensemble(_models(retrograd, 4))
    out = rf.vmap(fm, in_dims=(0, 0, None))(params, buffers, rx.float())
    assert tuple(out.shape) == (4, 5, 2)


def _written_through_views(lib):
    """Functions that write in place through a view of a tensor they made: the tangent
    (forward AD) and the gradient (CopySlices, AsStridedBackward0) of the base follow."""
    def row(x):
        y = x.clone()
        y[0].mul_(2.0)
        return y

    def column_by_other(x):
        y = x.clone()
        y[:, 1].mul_(x[:, 0])
        return y * x

    def nested(x):
        y = x.clone()
        y[0][1:].mul_(3.0)
        return y.exp()

    def transposed(x):
        y = x.clone()
        y.t()[2].add_(x[:, 0])
        return y

    def expanded_then_written(x):
        y = x.clone()
        e = y[0].expand(3, 3)
        y[1].mul_(2.0)
        return e * e + y.sum()

    return {"row": row, "column_by_other": column_by_other, "nested": nested,
            "transposed": transposed, "expanded_then_written": expanded_then_written}


@pytest.mark.parametrize("transform", ["vmap_jvp", "vmap_jvp_unbatched_primal", "jacfwd",
                                       "vmap_jacfwd", "jacrev_jacrev", "hessian"])
@pytest.mark.parametrize("name", sorted(_written_through_views(retrograd)))
def test_in_place_on_a_view_under_transforms_as_torch_func(name, transform):
    (rx, tx), (rv, tv) = _pair(4, 2, 3), _pair(4, 2, 3, seed=1)

    def run(lib, x, v):
        f = _written_through_views(lib)[name]
        if transform == "vmap_jvp":
            return lib.func.vmap(lambda a, b: lib.func.jvp(f, (a,), (b,)))(x, v)
        if transform == "vmap_jvp_unbatched_primal":
            return lib.func.vmap(lambda a, b: lib.func.jvp(f, (a,), (b,)),
                                 in_dims=(None, 0))(x[0], v)
        if transform == "jacfwd":
            return lib.func.jacfwd(f)(x[0])
        if transform == "vmap_jacfwd":
            return lib.func.vmap(lib.func.jacfwd(f))(x)
        scalar = lambda a: f(a).sin().sum()  # noqa: E731
        if transform == "jacrev_jacrev":
            return lib.func.jacrev(lib.func.jacrev(scalar))(x[0])
        return lib.func.hessian(scalar)(x[0])
    _close(run(retrograd, rx, rv), run(torch, tx, tv))


@pytest.mark.parametrize("make", [
    lambda T, x: T.zeros_like(x), lambda T, x: T.ones_like(x),
    lambda T, x: T.full_like(x, 2.5), lambda T, x: T.empty_like(x).fill_(1.0),
    lambda T, x: T.zeros_like(x, dtype=T.float32)],
    ids=["zeros_like", "ones_like", "full_like", "empty_like", "zeros_like_dtype"])
def test_like_of_a_batched_tensor_is_batched_and_takes_batched_writes(make):
    """As torch.vmap's: each element gets its own buffer, so a batched value can be
    written or added into it (an unbatched one refused both)."""
    def f(T):
        def g(x):
            y = make(T, x)
            y[1] = x[0]
            return y.add_(x)
        return g
    x = numpy.arange(6.0).reshape(3, 2)
    want = torch.vmap(f(torch))(torch.from_numpy(x))
    for got in (retrograd.vmap(f(retrograd))(retrograd.from_numpy(x)),
                retrograd.vmap(retrograd.vmap(f(retrograd)), in_dims=1)(
                    retrograd.from_numpy(numpy.stack([x, x], 1)))[0]):
        assert got.dtype.is_floating_point and tuple(got.shape) == tuple(want.shape)
        numpy.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


def _written_in_place(lib):
    """In-place writes on a tensor whose tangent is not batched while its primal is:
    PyTorch writes the new tangent into the old one, batched wherever its formula reads a
    batched primal (not add_'s, neg_'s or zero_'s; mul_(2.0)'s reads self's)."""
    def made(op):
        def f(x):
            y = x.clone()
            op(y[0])
            return y
        return f

    def times_one_then_view_mul(x):  # x * 1's tangent is batched: the write fits
        y = x * 1.0
        y[0].mul_(2.0)
        return y

    return {"view mul_": made(lambda v: v.mul_(2.0)), "view div_": made(lambda v: v.div_(2.0)),
            "view exp_": made(lambda v: v.exp_()), "view add_": made(lambda v: v.add_(1.0)),
            "view neg_": made(lambda v: v.neg_()), "view zero_": made(lambda v: v.zero_()),
            "mul_": lambda x: x.clone().mul_(2.0), "add_": lambda x: x.clone().add_(x),
            "times one, view mul_": times_one_then_view_mul,
            **_written_through_views(lib)}


@pytest.mark.parametrize("name", sorted(_written_in_place(retrograd)))
def test_in_place_into_an_unbatched_tangent_under_vmap_jvp_as_torch(name):
    (rx, tx), (rv, tv) = _pair(4, 2, 3), _pair(2, 3, seed=1)

    def run(lib, x, v):
        f = _written_in_place(lib)[name]
        try:
            return lib.func.vmap(lambda a, b: lib.func.jvp(f, (a,), (b,)),
                                 in_dims=(0, None))(x, v)
        except RuntimeError as e:
            return str(e)
    r, t = run(retrograd, rx, rv), run(torch, tx, tv)
    if isinstance(t, str):
        assert r == t
    else:
        _close(r, t)


_LENGTHS = {"same": [[4, 4, 2, 1]] * 3, "same totals": [[4, 3, 2, 1], [4, 2, 2, 2], [4, 3, 2, 1]],
            "totals differ": [[4, 4, 2, 1], [4, 3, 2, 1], [4, 4, 2, 1]],
            "steps differ": [[4, 1, 1, 1], [3, 2, 1, 1], [4, 1, 1, 1]],
            "one unsorted": [[4, 4, 2, 1], [4, 4, 2, 1], [1, 4, 2, 4]],
            "one zero": [[4, 4, 2, 1], [4, 4, 2, 0], [4, 4, 2, 1]]}


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("case", sorted(_LENGTHS))
def test_pack_padded_sequence_with_lengths_varying_over_the_batch(case, enforce_sorted):
    """Each element packs by its own lengths (torch.vmap loops; retrograd batches);
    elements whose packed data or batch sizes differ in size fail as torch.vmap's stack."""
    rx, tx = _pair(3, 4, 4, 2)

    def run(lib, x):
        rnn = lib.nn.utils.rnn

        def f(x, lengths):
            p = rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
            return (p.data, p.batch_sizes) + (() if enforce_sorted else (p.sorted_indices,))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (torch.vmap's loop warns)
                return lib.vmap(f)(x, lib.tensor(_LENGTHS[case]))
        except RuntimeError as e:
            return f"{type(e).__name__}: {e}"
    r, t = run(retrograd, rx), run(torch, tx)
    if isinstance(t, str):
        assert r == t
    else:
        _close(r, t)


@pytest.mark.parametrize("in_dims", [0, 1, -1])
@pytest.mark.parametrize("name", ["as_strided", "as_strided_"])
def test_as_strided_of_a_clone_reads_each_elements_own_storage(name, in_dims):
    """A clone under vmap gives each element its own run of memory, as the loop of calls
    does (torch.vmap's clone keeps a batch mapped on its last dim interleaved, and its
    as_strided_ falls back to a loop that leaves the batch unchanged): the loop is the
    reference."""
    x = numpy.arange(36.0).reshape(3, 3, 4)
    x = numpy.ascontiguousarray(numpy.moveaxis(x, 0, in_dims))

    def f(v):
        return getattr(v.t().clone(), name)((2, 2), (1, 3), 1)
    r = retrograd.vmap(f, in_dims=in_dims)(retrograd.from_numpy(x.copy()))
    loop = torch.stack([f(torch.from_numpy(x).select(in_dims, i)) for i in range(3)])
    _close(r, loop)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pad_packed_sequence_of_lengths_varying_over_the_batch(enforce_sorted):
    """Each element's packed sequence back to its padded layout and lengths."""
    rx, tx = _pair(3, 4, 4, 2)
    lengths = _LENGTHS["same totals"] if enforce_sorted else _LENGTHS["one unsorted"]

    def f(lib):
        rnn = lib.nn.utils.rnn

        def padded(x, lengths):
            p = rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
            return rnn.pad_packed_sequence(p, batch_first=True, total_length=5)
        return padded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.vmap's loop warns)
        t = torch.vmap(f(torch))(tx, torch.tensor(lengths))
    _close(retrograd.vmap(f(retrograd))(rx, retrograd.tensor(lengths)), t)
