"""retrograd.func against torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, their compositions, and functional_call."""

import pytest

import retrograd
from retrograd import func as rf
from _func_pairs import close, pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
tf = torch.func
_pair, _close = pair, close


def _f(lib):
    return lambda x, y: (lib.sin(x) * y).sum() + (x * x).sum()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
def test_grad_argnums(argnums):
    (rx, tx), (ry, ty) = _pair(3, 4), _pair(3, 4, seed=1)
    _close(rf.grad(_f(retrograd), argnums)(rx, ry), tf.grad(_f(torch), argnums)(tx, ty))
    g, v = rf.grad_and_value(_f(retrograd), argnums)(rx, ry)
    tg, tv = tf.grad_and_value(_f(torch), argnums)(tx, ty)
    _close(g, tg)
    _close(v, tv)
    assert not g[0].requires_grad if isinstance(g, tuple) else not g.requires_grad


def test_grad_pytree_has_aux_and_unused_input():
    (ra, ta), (rb, tb), (rc, tc) = _pair(2), _pair(3, seed=1), _pair(2, seed=2)

    def f(lib):
        def loss(p, c):
            out = (p["a"] ** 2).sum() + lib.tanh(p["b"][0]).sum()
            return out, {"aux": out * 2}
        return loss
    r = rf.grad(f(retrograd), has_aux=True)({"a": ra, "b": (rb, rc)}, rc)
    t = tf.grad(f(torch), has_aux=True)({"a": ta, "b": (tb, tc)}, tc)
    _close(r[0], t[0])  # (the unused rc gets zeros, as torch)
    _close(r[1], t[1])


def test_grad_of_grad_and_of_closures():
    rx, tx = _pair(5)
    g2 = rf.grad(lambda x: rf.grad(lambda y: (retrograd.sin(y) * y).sum())(x).sum())(rx)
    t2 = tf.grad(lambda x: tf.grad(lambda y: (torch.sin(y) * y).sum())(x).sum())(tx)
    _close(g2, t2)
    # a closure over a leaf that requires grad: the result stays differentiable outside
    rw, tw = _pair(5, seed=3)
    rw.requires_grad_()
    tw.requires_grad_()
    rg = rf.grad(lambda x: (x * rw).sin().sum())(rx)
    tg = tf.grad(lambda x: (x * tw).sin().sum())(tx)
    _close(rg, tg)
    (rg ** 2).sum().backward()
    (tg ** 2).sum().backward()
    _close(rw.grad, tw.grad)


def test_grad_errors_match_torch():
    rx, tx = _pair(3)
    for bad in (lambda lib: (lambda x: x * 2), ):
        with pytest.raises(RuntimeError) as et:
            tf.grad(bad(torch))(tx)
        with pytest.raises(RuntimeError) as er:
            rf.grad(bad(retrograd))(rx)
        assert str(er.value) == str(et.value)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        rf.grad(lambda x: x.sum(), argnums=2)(rx)
    with pytest.raises(RuntimeError, match="floating point"):
        rf.grad(lambda x: x.sum())(retrograd.arange(3))


def test_vjp_and_jvp_match_torch():
    (rx, tx), (ry, ty) = _pair(3, 2), _pair(3, 2, seed=1)

    def f(lib):
        return lambda x, y: (lib.sin(x) * y, {"s": (x * y).sum(0)})
    ro, rfn = rf.vjp(f(retrograd), rx, ry)
    to, tfn = tf.vjp(f(torch), tx, ty)
    _close(ro, to)
    (rc, tc), (rs, ts) = _pair(3, 2, seed=2), _pair(2, seed=3)
    _close(rfn((rc, {"s": rs})), tfn((tc, {"s": ts})))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        rfn((rs, {"s": rs}))
    (rt, tt), (ru, tu) = _pair(3, 2, seed=4), _pair(3, 2, seed=5)
    _close(rf.jvp(f(retrograd), (rx, ry), (rt, ru)), tf.jvp(f(torch), (tx, ty), (tt, tu)))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        rf.jvp(retrograd.sin, rx, (rt,))


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacobians_match_torch(which, argnums):
    (rx, tx), (ry, ty) = _pair(3, 2), _pair(2, seed=1)

    def f(lib):
        return lambda x, y: (lib.tanh(x @ y), (x * x).sum())
    r = getattr(rf, which)(f(retrograd), argnums)(rx, ry)
    t = getattr(tf, which)(f(torch), argnums)(tx, ty)
    _close(r, t)


def test_jacobian_has_aux():
    rx, tx = _pair(4)
    r = rf.jacrev(lambda x: (x.sin(), x.cos().sum()), has_aux=True)(rx)
    t = tf.jacrev(lambda x: (x.sin(), x.cos().sum()), has_aux=True)(tx)
    _close(r, t)
    r = rf.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(rx)
    t = tf.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(tx)
    _close(r, t)


def test_hessians_and_mixed_compositions():
    rx, tx = _pair(4)

    def f(lib):
        return lambda x: (lib.sin(x) * x.prod()).sum()
    th = tf.hessian(f(torch))(tx)
    _close(rf.hessian(f(retrograd))(rx), th)
    _close(rf.jacfwd(rf.jacrev(f(retrograd)))(rx), th)  # forward over reverse
    rv, tv = _pair(4, seed=1)
    _close(rf.jvp(rf.grad(f(retrograd)), (rx,), (rv,)),
           tf.jvp(tf.grad(f(torch)), (tx,), (tv,)))
    # reverse over forward
    r = rf.grad(lambda x: rf.jvp(f(retrograd), (x,), (rv,))[1])(rx)
    t = tf.grad(lambda x: tf.jvp(f(torch), (x,), (tv,))[1])(tx)
    _close(r, t)
    assert not r.requires_grad


def _nets():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(),
                            torch.nn.Linear(4, 2)).double()
    r = retrograd.nn.Sequential(retrograd.nn.Linear(3, 4), retrograd.nn.BatchNorm1d(4),
                                retrograd.nn.Tanh(), retrograd.nn.Linear(4, 2)).double()
    r.load_state_dict({k: v.detach().numpy() for k, v in t.state_dict().items()})
    return r, t


def test_functional_call_per_parameter_gradients():
    r, t = _nets()
    rx, tx = _pair(5, 3)
    rp = {k: v.detach() for k, v in r.named_parameters()}
    tp = {k: v.detach() for k, v in t.named_parameters()}
    rb = {k: v.clone() for k, v in r.named_buffers()}
    tb = {k: v.clone() for k, v in t.named_buffers()}

    def loss(lib, f, m, x):
        return lambda p, b: f.functional_call(m, (p, b), (x,)).pow(2).sum()
    rg = rf.grad(loss(retrograd, rf, r, rx))(rp, rb)
    tg = tf.grad(loss(torch, tf, t, tx))(tp, tb)
    _close(rg, tg)
    _close(rb, tb)  # the running statistics given were updated in place, as torch
    for v, w in zip(r.state_dict().values(), t.state_dict().values(), strict=True):
        _close(v, w)  # the modules themselves are untouched


def test_functional_call_strict_ties_and_errors():
    lin = retrograd.nn.Linear(2, 2)
    x = retrograd.ones(1, 2)
    out = rf.functional_call(lin, {"weight": retrograd.zeros(2, 2)}, x)
    assert out.tolist() == [lin.bias.tolist()]
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        rf.functional_call(lin, {"weight": retrograd.zeros(2, 2)}, (x,), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        rf.functional_call(lin, ({"weight": lin.weight}, {"weight": lin.weight}), (x,))
    tied = retrograd.nn.Sequential(retrograd.nn.Linear(2, 2, bias=False),
                                   retrograd.nn.Linear(2, 2, bias=False))
    tied[1].weight = tied[0].weight
    eye = retrograd.eye(2)
    assert rf.functional_call(tied, {"0.weight": eye}, (x,)).tolist() == [[1.0, 1.0]]
    assert rf.functional_call(tied, {"0.weight": eye}, (x,), tie_weights=False).tolist() != [
        [1.0, 1.0]]


def test_unused_outputs_and_inputs_give_zeros_as_torch():
    rx, tx = _pair(3)
    for r, t in ((rf, tf),):
        _close(r.grad(lambda x: retrograd.tensor(2.0, dtype=retrograd.float64))(rx),
               t.grad(lambda x: torch.tensor(2.0, dtype=torch.float64))(tx))
        _close(r.jacrev(lambda x: retrograd.zeros(2, dtype=retrograd.float64))(rx),
               t.jacrev(lambda x: torch.zeros(2, dtype=torch.float64))(tx))
        _, rfn = r.vjp(lambda x: retrograd.tensor(1.0, dtype=retrograd.float64), rx)
        _, tfn = t.vjp(lambda x: torch.tensor(1.0, dtype=torch.float64), tx)
        _close(rfn(retrograd.tensor(1.0, dtype=retrograd.float64)),
               tfn(torch.tensor(1.0, dtype=torch.float64)))


def test_cotangent_structure_must_match_the_outputs():
    rx, _ = _pair(3)
    _, fn = rf.vjp(lambda x: {"a": x, "b": x * 2}, rx)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        fn({"b": rx, "a": rx})  # the same leaves in another order: not the same structure
    with pytest.raises(RuntimeError, match="same python structure"):
        rf.jvp(lambda a, b: a * b, (rx, rx), ([rx], rx))


def test_jacfwd_stays_differentiable_where_needed():
    rx, tx = _pair(2)
    rw, tw = _pair(2, seed=1)
    rw.requires_grad_()
    tw.requires_grad_()
    rf.jacfwd(lambda x: (x * rw) ** 2)(rx).sum().backward()
    tf.jacfwd(lambda x: (x * tw) ** 2)(tx).sum().backward()
    _close(rw.grad, tw.grad)  # through a closure

    def f(lib):
        return lambda x: (lib.sin(x) * x.prod()).sum()
    th = tf.hessian(f(torch))(tx)
    _close(rf.jacfwd(rf.jacfwd(f(retrograd)))(rx), th)
    _close(rf.jacrev(rf.jacfwd(f(retrograd)))(rx), th)


def test_forward_over_reverse_through_in_place_ops():
    rx, tx = _pair(3)

    def f(x):
        return x.clone().sin_().mul_(x).exp_().sum()
    _close(rf.jacfwd(rf.grad(f))(rx), tf.jacfwd(tf.grad(f))(tx))


def test_argument_errors_match_torch():
    cases = [lambda f, lib: f.grad(lambda x: x.sum())(lib.arange(3)),
             lambda f, lib: f.grad(lambda x: x * 2)(3.0),
             lambda f, lib: f.jacfwd(lambda x: x)(lib.arange(3)),
             lambda f, lib: f.jacrev(lambda x: x)(lib.arange(3)),
             lambda f, lib: f.vjp(lambda x: x, lib.arange(3)),
             lambda f, lib: f.grad(lambda x: x.sum(), argnums=(0, 0))(lib.ones(2)),
             lambda f, lib: f.grad(lambda x: x.sum(), argnums=[0])(lib.ones(2))]
    for case in cases:
        with pytest.raises(Exception) as et:
            case(tf, torch)
        with pytest.raises(type(et.value)) as er:
            case(rf, retrograd)
        assert str(er.value) == str(et.value)
