"""backward() and grad(): results, execution order, ``inputs=``, errors, against PyTorch."""

import pytest

import retrograd
from _compare import error, values

pytestmark = pytest.mark.torch


def _tag(t, name, log):
    t.grad_fn.register_prehook(lambda g: log.append(name))
    return t


def _diamond(T, log):
    x = T.tensor([1., 2.], requires_grad=True)
    a = _tag(x * 2, "a", log)
    b = _tag(a.exp(), "b", log)
    c = _tag(a.sin(), "c", log)
    d = _tag(b * c, "d", log)
    e = _tag(a.cos(), "e", log)
    f = _tag(d + e, "f", log)
    return x, a, b, c, d, e, f


def test_diamond_execution_order(both):
    def scenario(T):
        log = []
        x, a, b, c, d, e, f = _diamond(T, log)
        res = []
        for roots in ([f], [e, b], [b, e], [c, f, b], [d, a]):
            T.autograd.backward(roots, [T.ones(2)] * len(roots), retain_graph=True)
            res.append(list(log))
            log.clear()
        return res + [values(x.grad)]
    both(scenario)


def test_independent_chains_interleave_by_sequence_number(both):
    def scenario(T):
        log = []
        y = T.tensor([1., 2.], requires_grad=True)
        p1 = _tag(y * 2, "p1", log)
        q1 = _tag(y * 3, "q1", log)
        p2 = _tag(p1.exp(), "p2", log)
        q2 = _tag(q1.exp(), "q2", log)
        _tag(p2 + q2, "s", log).backward(T.ones(2), retain_graph=True)
        first = list(log)
        log.clear()
        _tag(p1 + q2, "r", log).backward(T.ones(2))
        return [first, log]
    both(scenario)


def test_accumulate_grad_order_matches(both):
    """Leaves ready together come out of the ready queue in PyTorch's heap order."""
    def scenario(T):
        log = []
        xs = [T.tensor([1.], requires_grad=True) for _ in range(6)]
        for i, x in enumerate(xs):
            x.register_post_accumulate_grad_hook(lambda t, i=i: log.append(i))
        res = []
        for perm in [(0, 1, 2, 3, 4, 5), (5, 4, 3, 2, 1, 0), (2, 0, 1), (3, 1, 4, 0, 5, 2)]:
            T.autograd.backward([xs[i] for i in perm], [T.ones(1)] * len(perm))
            res.append(list(log))
            log.clear()
        (xs[0] * xs[1] + xs[2] * xs[3]).backward(T.ones(1))
        (xs[0] + xs[1] + xs[2] + xs[3] + xs[4] + xs[5]).backward(T.ones(1))
        (xs[3] * xs[2] * xs[1] * xs[0]).backward(T.ones(1))
        T.autograd.backward([xs[2], xs[0] * xs[1], xs[3]], [T.ones(1)] * 3)
        return res + [log]
    both(scenario)


def test_same_root_twice_and_root_reachable_from_root(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        a = _tag(x * 2, "a", log)
        b = _tag(a * a, "b", log)
        T.autograd.backward([a, b, a], [T.ones(2), T.ones(2), T.ones(2)])
        return [log, values(x.grad)]
    both(scenario)


def test_backward_gradient_argument_forms(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        (x * 3).backward(T.tensor([1., 10.]))
        s = T.tensor(2., requires_grad=True)
        (s * s).backward()
        (s * s).backward(T.tensor(1.))
        T.autograd.backward(x * 2, grad_tensors=T.ones(2))
        T.autograd.backward([x * x], [T.ones(2, dtype=T.float64)])
        return [values(x.grad), values(s.grad)]
    both(scenario)


def test_backward_errors(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        return [error(lambda: y.backward()),
                error(lambda: T.tensor([1.]).backward()),
                error(lambda: T.tensor(1.).backward()),
                error(lambda: T.autograd.backward([y, y], [T.ones(2)])),
                error(lambda: y.backward(T.ones(3))),
                error(lambda: y.backward(T.ones(1, 2))),
                error(lambda: y.backward([1., 1.])),
                error(lambda: y.backward(T.ones(2), inputs=[])),
                error(lambda: y.backward(T.ones(2), inputs=[T.ones(2)])),
                error(lambda: (x.detach() * 2).backward(T.ones(2))),
                error(lambda: T.autograd.backward([y, T.ones(2)], [T.ones(2)] * 2))]
    both(scenario)


def test_backward_twice_through_freed_graph(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.backward(T.ones(2))
        first = error(lambda: y.backward(T.ones(2)))
        z = x * x
        z.backward(T.ones(2), retain_graph=True)
        z.backward(T.ones(2))
        second = error(lambda: z.backward(T.ones(2)))
        w = x + 1  # saves nothing: a second backward is allowed
        w.backward(T.ones(2))
        w.backward(T.ones(2))
        return [first, second, values(x.grad)]
    both(scenario)


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
def test_grad_returns_without_touching_dot_grad(both):
    def scenario(T):
        log = []
        x, a, b, c, d, e, f = _diamond(T, log)
        g1 = T.autograd.grad(f, [a], T.ones(2), retain_graph=True)
        l1 = list(log)
        log.clear()
        g2 = T.autograd.grad([f], [b, x], T.ones(2), retain_graph=True)
        l2 = list(log)
        log.clear()
        g3 = T.autograd.grad(f, x, T.ones(2), retain_graph=True)
        g4 = T.autograd.grad([d, e], [a, x], [T.ones(2), T.ones(2)], retain_graph=True)
        g5 = T.autograd.grad(f, [f, a], T.ones(2))
        return [[values(g) for g in gs] for gs in (g1, g2, g3, g4, g5)] + [
            l1, l2, x.grad, a.grad is None, type(g3).__name__]
    both(scenario)


def test_named_inputs(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([3., 4.], requires_grad=True)
        y = x * w
        g = T.autograd.grad(y, {"x": x, "w": w}, T.ones(2), retain_graph=True)
        y.backward(T.ones(2), inputs={"x": x})
        return [type(g).__name__, list(g), values(g["x"]), values(g["w"]), values(x.grad),
                w.grad]
    both(scenario)


def test_grad_allow_unused_and_materialize(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = T.tensor([1.], requires_grad=True)
        f = x * 3
        r1 = T.autograd.grad(f, [y, x], T.ones(2), retain_graph=True, allow_unused=True)
        r2 = T.autograd.grad(f, [y, x], T.ones(2), retain_graph=True, materialize_grads=True)
        return [[values(g) for g in r1], [values(g) for g in r2],
                error(lambda: T.autograd.grad(f, [y], T.ones(2), retain_graph=True)),
                error(lambda: T.autograd.grad(f, [x, y], T.ones(2), retain_graph=True)),
                error(lambda: T.autograd.grad(f, [x], T.ones(2), allow_unused=False,
                                              materialize_grads=True))]
    both(scenario)


def test_grad_errors(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        return [error(lambda: T.autograd.grad([y, y], [x], [T.ones(2)])),
                error(lambda: T.autograd.grad(y, [x], T.ones(3))),
                error(lambda: T.autograd.grad(y, [x])),
                error(lambda: T.autograd.grad(y, [T.ones(2)], T.ones(2))),
                error(lambda: T.autograd.grad(y, [], T.ones(2))),
                error(lambda: T.autograd.grad(T.ones(1), x))]
    both(scenario)


def test_grad_of_leaf_and_repeated_outputs(both):
    def scenario(T):
        z = T.tensor([3.], requires_grad=True)
        r1 = T.autograd.grad(z, [z], T.ones(1))
        zz = z * 1
        r2 = T.autograd.grad([zz, zz], [z], [T.ones(1), T.tensor([2.])], retain_graph=True)
        r3 = T.autograd.grad(zz * zz, [zz, z], T.ones(1))
        return [values(r1[0]), values(r2[0]), [values(g) for g in r3], z.grad]
    both(scenario)


def test_backward_inputs_accumulates_only_into_inputs(both):
    def scenario(T):
        log = []
        x, a, b, c, d, e, f = _diamond(T, log)
        res = []
        f.backward(T.ones(2), inputs=[a], retain_graph=True)
        res += [list(log), values(x.grad), values(a.grad), a.retains_grad]
        log.clear()
        f.backward(T.ones(2), inputs=[a, x], retain_graph=True)
        res += [list(log), values(x.grad), values(a.grad)]
        log.clear()
        f.backward(T.ones(2), inputs=x, retain_graph=True)
        res += [list(log), values(x.grad), values(a.grad)]
        y = T.tensor([1.], requires_grad=True)
        f.backward(T.ones(2), inputs=[y])  # unreachable leaf: nothing happens
        return res + [values(y.grad)]
    both(scenario)


def test_backward_inputs_with_hooks_on_inputs(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        a = x * 2
        a.register_hook(lambda g: g * 10)
        f = a * 3
        res = [values(g) for g in T.autograd.grad(f, [a], T.ones(2), retain_graph=True)]
        res += [values(g) for g in T.autograd.grad(f, [a, x], T.ones(2), retain_graph=True)]
        x.register_hook(lambda g: g * 100)
        res += [values(g) for g in T.autograd.grad(f, [x], T.ones(2), retain_graph=True)]
        f.backward(T.ones(2), inputs=[a], retain_graph=True)
        res += [values(a.grad), x.grad]
        f.backward(T.ones(2))
        return res + [values(a.grad), values(x.grad)]
    both(scenario)


def test_create_graph_double_backward(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x ** 3
        (g,) = T.autograd.grad(y, x, T.ones(2), create_graph=True)
        (gg,) = T.autograd.grad(g, x, T.ones(2), create_graph=True)
        (ggg,) = T.autograd.grad(gg, x, T.ones(2))
        w = T.tensor([0.5, 2.], requires_grad=True)
        (h,) = T.autograd.grad((w * x).exp(), x, T.ones(2), create_graph=True)
        h.backward(T.ones(2))
        return [values(g), g.requires_grad, g.grad_fn is not None, values(gg), values(ggg),
                values(w.grad), values(x.grad)]
    both(scenario)


def test_grad_output_with_graph(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        v = T.tensor([3., 4.], requires_grad=True)
        (g,) = T.autograd.grad(x * x, x, v, create_graph=True)
        g.backward(T.ones(2))
        return [values(g), values(v.grad), values(x.grad)]
    both(scenario)


def test_retain_graph_defaults_to_create_graph(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        T.autograd.grad(y, x, T.ones(2), create_graph=True)
        T.autograd.grad(y, x, T.ones(2))  # the graph was kept
        return error(lambda: T.autograd.grad(y, x, T.ones(2)))
    both(scenario)


@pytest.mark.filterwarnings("ignore:Using backward.. with create_graph=True")
def test_engine_runs_with_grad_mode_of_create_graph(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(lambda g: seen.append(T.is_grad_enabled()))
        y.backward(T.ones(2), retain_graph=True)
        y.backward(T.ones(2), create_graph=True)
        with T.no_grad():
            y.backward(T.ones(2), retain_graph=True)
        return [seen, T.is_grad_enabled()]
    both(scenario)


def test_long_chain_is_iterative():
    x = retrograd.tensor([1.], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.backward(retrograd.ones(1))
    assert x.grad.tolist() == [1.]
