"""The order of every backward hook kind across a graph, recorded as a log of calls
and compared with PyTorch's ("Backward Hooks execution"), and multi-grad hooks."""

import pytest

from _compare import error, values

pytestmark = pytest.mark.torch


def _instrument(T, log, tensors, leaves):
    """Hook everything: tensor hooks (two per tensor, retain_grad between them), node pre-
    and post-hooks, AccumulateGrad pre/post hooks, post-accumulate-grad hooks, multi-grad
    hooks in both modes. Each hook logs its name and the gradient values it sees."""
    for name, t in tensors.items():
        t.register_hook(lambda g, n=name: log.append(("tensor1", n, values(g))))
        t.retain_grad()
        t.register_hook(lambda g, n=name: log.append(("tensor2", n, values(g))))
        fn = t.grad_fn
        fn.register_prehook(lambda go, n=name: log.append(("node pre", n,
                                                           [values(g) for g in go])))
        fn.register_hook(lambda gi, go, n=name: log.append(
            ("node post", n, [values(g) for g in gi], [values(g) for g in go])))
    for name, leaf in leaves.items():
        leaf.register_hook(lambda g, n=name: log.append(("leaf tensor", n, values(g))))
        leaf.register_post_accumulate_grad_hook(
            lambda p, n=name: log.append(("post acc", n, values(p.grad))))
        acc = (leaf * 1).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go, n=name: log.append(("acc pre", n, values(go[0]))))
        acc.register_hook(lambda gi, go, n=name: log.append(("acc post", n, len(gi),
                                                             values(go[0]))))
        leaf._acc_node = acc  # keep the AccumulateGrad (and its hooks) alive
    # Not the root: PyTorch does not count a lone root's node as part of the graph, so its
    # multi-grad hook would fire before the last leaf's gradient (see the test below).
    names = [*leaves, *(n for n in tensors if n != "f")]
    everything = [leaves[n] if n in leaves else tensors[n] for n in names]
    T.autograd.graph.register_multi_grad_hook(everything, lambda gs: log.append(
        ("multi all", [n for n, g in zip(names, gs, strict=True) if g is not None])))
    T.autograd.graph.register_multi_grad_hook(
        everything, lambda g: log.append(("multi any", values(g))), mode="any")


def _graph(T):
    a = T.tensor([1., 2.], requires_grad=True)
    b = T.tensor([3., -1.], requires_grad=True)
    c = a * b
    d = c.exp()
    e = c * a
    f = d + e
    return {"a": a, "b": b}, {"c": c, "d": d, "e": e, "f": f}


def test_every_hook_kind_in_pytorch_order_backward(both):
    def scenario(T):
        log = []
        leaves, tensors = _graph(T)
        _instrument(T, log, tensors, leaves)
        tensors["f"].backward(T.ones(2), retain_graph=True)
        log.append("---")
        tensors["f"].backward(T.ones(2))
        return [log, values(leaves["a"].grad), values(tensors["c"].grad)]
    both(scenario)


def test_every_hook_kind_in_pytorch_order_with_inputs(both):
    def scenario(T):
        log = []
        leaves, tensors = _graph(T)
        _instrument(T, log, tensors, leaves)
        tensors["f"].backward(T.ones(2), inputs=[leaves["b"]], retain_graph=True)
        log.append("--- e")
        tensors["f"].backward(T.ones(2), inputs=[tensors["e"]])
        return [log, values(leaves["a"].grad), values(leaves["b"].grad),
                values(tensors["e"].grad)]
    both(scenario)


def test_every_hook_kind_in_pytorch_order_with_grad(both):
    def scenario(T):
        log = []
        leaves, tensors = _graph(T)
        _instrument(T, log, tensors, leaves)
        # non-leaf inputs only: PyTorch's multi-grad hook cannot count leaves under grad()
        res = T.autograd.grad(tensors["f"].sum(), [tensors["c"], tensors["d"]])
        return [log, [values(g) for g in res], values(leaves["a"].grad)]
    both(scenario)


def test_hooks_replacing_gradients_at_every_stage(both):
    """Each stage sees what the previous one returned."""
    def scenario(T):
        log = []
        a = T.tensor([1., 2.], requires_grad=True)
        y = a * 3
        y.register_hook(lambda g: g * 2)
        y.retain_grad()
        y.register_hook(lambda g: log.append(("after retain", values(g))) or g + 1)
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] - 1, *gi[1:]))
        a.register_hook(lambda g: g * -1)
        a.register_post_accumulate_grad_hook(lambda p: log.append(("acc", values(p.grad))))
        (y * y).sum().backward()
        return [log, values(y.grad), values(a.grad)]
    both(scenario)


def test_hooks_added_and_removed_during_backward(both):
    def scenario(T):
        log = []
        a = T.tensor([1., 2.], requires_grad=True)
        b = a * 2
        c = b * 3
        handles = {}

        def on_c(g):
            log.append("c")
            handles["b"].remove()
            b.register_hook(lambda g: log.append("b added during backward"))
            b.grad_fn.register_prehook(lambda go: log.append("b pre added"))
            handles["multi"].remove()

        c.register_hook(on_c)
        handles["b"] = b.register_hook(lambda g: log.append("b removed"))
        handles["multi"] = T.autograd.graph.register_multi_grad_hook(
            (b, c), lambda gs: log.append("multi"))
        c.sum().backward()
        return [log, values(a.grad)]
    both(scenario)


def test_multi_grad_hook_ignores_tensors_outside_the_graph(both):
    """The seed's example: a tensor of another graph, then tensors not needed for
    ``inputs``, are not waited for (None in the list)."""
    def scenario(T):
        log = []
        a = T.rand(2, 3, requires_grad=True)
        b = T.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        h = T.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: log.append([g is not None for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        T.autograd.grad((c + d).sum(), (c,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward()
        return log
    both(scenario)


def test_multi_grad_hook_any_mode_and_errors(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        z = y * 3
        T.autograd.graph.register_multi_grad_hook(
            (x, y, z), lambda g: log.append(values(g)), mode="any")
        z.sum().backward(retain_graph=True)
        z.sum().backward()
        return [log, error(lambda: T.autograd.graph.register_multi_grad_hook(
            (x,), lambda g: None, mode="some")),
            error(lambda: T.autograd.graph.register_multi_grad_hook((T.ones(2),), print)),
            len(T.autograd.graph.register_multi_grad_hook((T.ones(2), x), print,
                                                          mode="any").handles)]
    both(scenario)


def test_multi_grad_hook_with_a_multi_output_node(both):
    """An output of a node that ran but got no gradient counts, with None."""
    def scenario(T):
        log = []
        x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        p, q = x.unbind(0)
        T.autograd.graph.register_multi_grad_hook(
            (p, q, x), lambda gs: log.append([values(g) for g in gs]))
        (p * 2).sum().backward()
        return [log, values(x.grad)]
    both(scenario)


def test_nested_backward_inside_a_hook_is_its_own_task(both):
    """A backward run from inside a hook has its own multi-grad bookkeeping."""
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([3., 4.], requires_grad=True)
        y = x * w
        z = y * 2
        T.autograd.graph.register_multi_grad_hook((y, z), lambda gs: log.append(
            ("outer", [values(g) for g in gs])))

        def inner(g):
            with T.enable_grad():
                u = w * w
                v = u * 3
                T.autograd.graph.register_multi_grad_hook((u, v), lambda gs: log.append(
                    ("inner", [values(g) for g in gs])))
                (gu,) = T.autograd.grad(v.sum(), u)
            log.append(("inner grad", values(gu)))

        z.register_hook(inner)
        z.sum().backward()
        return log
    both(scenario)

def test_multi_grad_hook_waits_for_the_root_tensor_too():
    """As documented (every tensor of the graph is waited for): PyTorch 2.13 leaves a lone
    backward root's node out of its count, so it fires early and reports b's gradient as
    None; retrograd waits for b."""
    import retrograd as T
    log = []
    a = T.tensor([1., 2.], requires_grad=True)
    b = T.tensor([3., 4.], requires_grad=True)
    c = a * b
    T.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: log.append(
        [values(g) for g in gs]))
    a.register_hook(lambda g: log.append("a"))
    b.register_hook(lambda g: log.append("b"))
    c.backward(T.ones(2))
    assert log == ["a", [[3.0, 4.0], [1.0, 2.0], [1.0, 1.0]], "b"]  # fired by b's first hook
