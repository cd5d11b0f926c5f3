"""Tensor hooks, retain_grad, post-accumulate-grad hooks and their order, against PyTorch."""

import warnings

import pytest

from _compare import error, values

pytestmark = pytest.mark.torch


def test_hook_order_across_kinds(both):
    """PyTorch's "Backward Hooks execution": tensor pre-hooks, retains-grad, node
    pre-hooks, the node, post-accumulate-grad hooks, node post-hooks."""
    def scenario(T):
        log = []
        a = T.tensor([1., 2.], requires_grad=True)
        b = T.tensor([3., 4.], requires_grad=True)
        c = a * b
        d = c.exp()
        e = c * 2
        f = d + e
        for name, t in [("c", c), ("d", d), ("e", e), ("f", f)]:
            t.grad_fn.register_prehook(lambda g, n=name: log.append("pre " + n))
            t.grad_fn.register_hook(lambda gi, go, n=name: log.append("post " + n))
            t.register_hook(lambda g, n=name: log.append("tensor " + n))
        c.retain_grad()
        c.register_hook(lambda g: log.append(("after retain", values(c.grad))))
        a.register_hook(lambda g: log.append("leaf a"))
        a.register_post_accumulate_grad_hook(lambda t: log.append(("acc a", values(t.grad))))
        acc = c.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda g: log.append("acc pre a"))
        acc.register_hook(lambda gi, go: log.append(("acc post a", gi, len(go))))
        f.backward(T.ones(2))
        return [log, values(a.grad), values(b.grad), values(c.grad)]
    both(scenario)


def test_hooks_replace_gradients_on_leaves_and_non_leaves(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: g + 1)
        x.register_hook(lambda g: g * 3)
        z = y * y
        z.backward(T.ones(2))
        return values(x.grad)
    both(scenario)


def test_hook_handles(both):
    def scenario(T):
        a = T.tensor([1., 2.], requires_grad=True)
        h = a.register_hook(lambda g: g * 3)
        (a * 1).backward(T.ones(2))
        first = values(a.grad)
        h.remove()
        (a * 1).backward(T.ones(2))
        y = a * 1
        with y.register_hook(lambda g: g * 0):
            pass  # removed on leaving the block
        y.backward(T.ones(2))
        return [first, values(a.grad)]
    both(scenario)


def test_hook_removed_during_backward(both):
    """Hooks of one node are snapshotted when it runs; later nodes see removals."""
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        handles = {}

        def h1(g):
            log.append("h1")
            handles["h2"].remove()
            handles["leaf"].remove()

        y.register_hook(h1)
        handles["h2"] = y.register_hook(lambda g: log.append("h2"))
        handles["leaf"] = x.register_hook(lambda g: log.append("leaf"))
        y.backward(T.ones(2), retain_graph=True)
        y.backward(T.ones(2))
        return log
    both(scenario)


def test_hook_result_validation(both):
    def scenario(T):
        def run(hook, leaf):
            x = T.tensor([1., 2.], requires_grad=True)
            y = x * 2
            (x if leaf else y).register_hook(hook)
            (y * 1).backward(T.ones(2))

        def wrong_size(g):
            return T.ones(3)

        def wrong_dtype(g):
            return g * T.ones(2, dtype=T.float64)

        def node_pre(hook):
            x = T.tensor([1., 2.], requires_grad=True)
            y = x * 2
            y.grad_fn.register_prehook(hook)
            y.backward(T.ones(2))
            return values(x.grad)

        def node_post(hook):
            x = T.tensor([1., 2.], requires_grad=True)
            y = x * 2
            y.grad_fn.register_hook(hook)
            y.backward(T.ones(2))
            return values(x.grad)

        res = [error(lambda: run(wrong_size, True)), error(lambda: run(wrong_size, False)),
               error(lambda: run(lambda g: 5, False)), error(lambda: run(lambda g: [g], True)),
               error(lambda: run(wrong_dtype, True)), error(lambda: run(wrong_dtype, False))]
        return res + [
            error(lambda: node_pre(lambda g: (T.ones(3),))),
            error(lambda: node_pre(lambda g: (g[0], g[0]))),
            error(lambda: node_pre(lambda g: g[0])),
            error(lambda: node_pre(lambda g: [g[0]])),
            node_pre(lambda g: (g[0] * 2,)),
            error(lambda: node_post(lambda gi, go: (T.ones(3), None))),
            error(lambda: node_post(lambda gi, go: (gi[0],))),
            error(lambda: node_post(lambda gi, go: [gi[0], None])),
            node_post(lambda gi, go: (gi[0] * 3, None))]
    both(scenario)


def test_register_hook_errors(both):
    def scenario(T):
        a = T.tensor([1.], requires_grad=True)
        return [error(lambda: T.tensor([1., 2.]).register_hook(lambda g: g)),
                error(lambda: (a * 2).register_post_accumulate_grad_hook(lambda t: None)),
                error(lambda: T.tensor([1.]).register_post_accumulate_grad_hook(lambda t: None)),
                error(lambda: T.tensor([1.]).retain_grad())]
    both(scenario)


def test_retain_grad(both):
    def scenario(T):
        a = T.tensor([1., 2.], requires_grad=True)
        leaf = T.tensor([1.], requires_grad=True)
        leaf.retain_grad()  # no-op on a leaf
        y = a * 2
        z = y * y
        flags = [y.retains_grad, leaf.retains_grad]
        y.retain_grad()
        y.retain_grad()
        z.retain_grad()
        z.backward(T.ones(2), retain_graph=True)
        first = [values(y.grad), values(z.grad)]
        z.backward(T.ones(2))
        return flags + [y.retains_grad, first, values(y.grad), values(z.grad),
                        values(a.grad), y.is_leaf]
    both(scenario)


def test_retain_grad_follows_in_place_ops(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: log.append(("before", values(g))))
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", values(g))))
        (y * 5).backward(T.ones(2))
        return [values(y.grad), log, y.retains_grad, y.grad_fn.name(), values(x.grad)]
    both(scenario)


def test_non_leaf_grad_access_warns(torch):
    import retrograd
    for T in (retrograd, torch):
        y = T.tensor([1.], requires_grad=True) * 2
        with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
            assert y.grad is None
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert y.grad is None


def test_post_accumulate_grad_hook(both):
    def scenario(T):
        log = []
        p = T.tensor([1., 2.], requires_grad=True)

        def step(t):  # optimizer-in-backward: update and free the gradient
            log.append(values(t.grad))
            with T.no_grad():
                t.sub_(t.grad)
            t.grad = None

        h = p.register_post_accumulate_grad_hook(step)
        (p * p).backward(T.ones(2))
        (p * p).backward(T.ones(2))
        h.remove()
        (p * 3).backward(T.ones(2))
        return [log, values(p), values(p.grad)]
    both(scenario)


def test_hooks_see_tensors_and_run_with_create_graph(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * x
        seen = []
        y.register_hook(lambda g: seen.append((type(g).__name__, g.requires_grad)))
        x.register_hook(lambda g: seen.append((type(g).__name__, g.requires_grad)))
        (g,) = T.autograd.grad(y, x, T.ones(2, requires_grad=True), create_graph=True)
        y2 = x * x
        y2.register_hook(lambda g: g * 2)
        (g2,) = T.autograd.grad(y2, x, T.ones(2), create_graph=True)
        g2.backward(T.ones(2))
        return [seen, values(g), values(g2), values(x.grad)]
    both(scenario)


def test_hooks_on_outputs_of_a_multi_output_node(both):
    """A node's tensor hooks run in registration order across its outputs, and see None
    for an output that received no gradient."""
    def scenario(T):
        x = T.tensor([[1., 5., 3.], [4., 2., 6.]], requires_grad=True)
        a, b = x.unbind(0)
        log = []
        a.register_hook(lambda g: log.append(("a1", values(g))))
        b.register_hook(lambda g: log.append(("b1", values(g))))
        a.register_hook(lambda g: log.append(("a2", values(g))))
        a.grad_fn.register_prehook(lambda go: log.append(("pre", [values(g) for g in go])))
        a.grad_fn.register_hook(lambda gi, go: log.append(("post", [values(g) for g in gi])))
        (a * 2).backward(T.ones(3))
        c, d = x.unbind(1)[:2]
        d.register_hook(lambda g: T.ones(2))
        return [a.grad_fn is b.grad_fn, [a.output_nr, b.output_nr], log, values(x.grad),
                error(lambda: (c * 2).backward(T.ones(2)))]
    both(scenario)
