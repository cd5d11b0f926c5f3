"""Saved tensors: freeing after backward, reference cycles, version counters and in-place
correctness checks, against PyTorch where observable."""

import gc
import weakref

import pytest

import retrograd
from _compare import error, values


def _collected_garbage(scenario):
    """Run ``scenario`` with the cycle collector off; how many objects it left in cycles.
    A first run outside the count loads the compiled kernels it calls (numba's loader
    leaves cycles of its own behind once)."""
    scenario()
    gc.collect()
    gc.disable()
    try:
        scenario()
        return gc.collect()
    finally:
        gc.enable()


def test_saved_tensors_freed_after_backward_by_refcount():
    gc.collect()
    gc.disable()
    try:
        x = retrograd.tensor([1., 2.], requires_grad=True)
        y = x.exp()          # ExpBackward0 saves y's array, SinBackward0 saves y
        z = y.sin()
        grads = []
        y.register_hook(lambda g: grads.append(weakref.ref(g._data)))
        wy, wdata = weakref.ref(y), weakref.ref(y._data)
        wnode = weakref.ref(y.grad_fn)
        del y
        assert wy() is not None and wdata() is not None  # held by the graph
        z.backward(retrograd.ones(2))
        assert wy() is None and wdata() is None  # released as soon as the nodes ran
        assert grads and grads[0]() is None      # the gradient buffer died too
        assert wnode() is not None               # z still holds the (emptied) graph
        del z
        assert wnode() is None
    finally:
        gc.enable()


def test_retain_graph_keeps_saved_tensors():
    x = retrograd.tensor([1., 2.], requires_grad=True)
    y = x.exp()
    z = y.sin()
    wdata = weakref.ref(y._data)
    del y
    z.backward(retrograd.ones(2), retain_graph=True)
    assert wdata() is not None
    z.backward(retrograd.ones(2))
    assert wdata() is None


def test_typical_graph_has_no_reference_cycles():
    def scenario():
        w = retrograd.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        b = retrograd.tensor([0.5, -0.5], requires_grad=True)
        x = retrograd.tensor([[1., -1.], [2., 0.5]])
        h = (x * w + b).tanh()
        y = (h * h).exp() / (h + 2)
        y.retain_grad()
        h.register_hook(lambda g: g * 2)
        loss = (y * y).sigmoid()
        loss.backward(retrograd.ones(2, 2))
        (gw,) = retrograd.autograd.grad((w * w).exp(), w, retrograd.ones(2, 2))
        e = b.exp()
        e.grad_fn.metadata["k"] = 1
        _ = e.grad_fn._saved_result
        e.backward(retrograd.ones(2), retain_graph=True)
        with retrograd.no_grad():
            w.sub_(w.grad)
        r = (x @ w + b).relu()
        m = r.t().reshape(4)[1:].sum() + r.mean(dim=0).pow(2).sum() + r.max(dim=1)[0].sum()
        m.backward()
        v = (x @ w) * 1
        v[:, :1].mul_(2)  # CopySlices
        v.sum().backward()
    assert _collected_garbage(scenario) == 0


def test_graph_dies_with_its_output_without_backward():
    gc.collect()
    gc.disable()
    try:
        x = retrograd.tensor([1., 2.], requires_grad=True)
        y = (x * 2).exp()
        wnodes = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
        wacc = weakref.ref(y.grad_fn.next_functions[0][0].next_functions[0][0])
        del y
        assert all(w() is None for w in wnodes)
        assert wacc() is None  # the leaf holds its AccumulateGrad weakly
        assert x.grad is None
    finally:
        gc.enable()


@pytest.mark.torch
def test_version_counters(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        v = [x._version, y._version]
        y.add_(1)
        y.mul_(2)
        d = y.detach()
        d.add_(1)
        v += [y._version, d._version]
        data = y.data
        data.add_(1)
        v += [y._version, data._version]
        with T.no_grad():
            x.add_(1)
        return v + [x._version, values(x), values(y)]
    both(scenario)


@pytest.mark.torch
def test_modified_saved_tensor_raises_with_pytorch_message(both):
    def scenario(T):
        def case(make, modify, dtype=None, shape=(3,)):
            x = T.ones(*shape, dtype=dtype or T.float32).requires_grad_()
            saved, out = make(T, x)
            modify(saved)
            return error(lambda: out.backward(T.ones_like(out)))

        return [
            # an op's own output (ExpBackward0 saves result), modified in place
            case(lambda T, x: (x.exp(),) * 2, lambda y: y.add_(1)),
            case(lambda T, x: (x.sigmoid(),) * 2, lambda y: y.mul_(2)),
            # an input saved by the next op: named by its grad_fn after the write
            case(lambda T, x: ((w := x * 1), w * w), lambda w: w.mul_(2)),
            case(lambda T, x: ((w := x.exp()), w.sin()), lambda w: w.mul_(2),
                 dtype=T.float64),
            case(lambda T, x: ((w := x.exp()), w.sin()), lambda w: w.mul_(2), shape=(1, 3)),
            case(lambda T, x: ((w := x ** 2), w ** 3), lambda w: w.add_(1)),
            # bumped through a detached alias (shared version counter)
            case(lambda T, x: ((w := x.exp()), w.sin()), lambda w: w.detach().add_(0)),
            # a plain tensor that does not require grad, saved by mul
            case(lambda T, x: ((c := T.ones(3)), x * c), lambda c: c.add_(1)),
            # through .data the version is not tracked: no error
            case(lambda T, x: ((w := x.exp()), w.sin()), lambda w: w.data.add_(0)),
            # ops saving nothing are not affected
            case(lambda T, x: ((w := x * 1), w + 1), lambda w: w.mul_(2)),
        ]
    both(scenario)


@pytest.mark.torch
def test_in_place_rules(both):
    def scenario(T):
        a = T.tensor([1., 2.], requires_grad=True)
        res = [error(lambda: a.add_(1)), error(lambda: a.mul_(2)),
               error(lambda: a.exp_())]
        with T.no_grad():
            a.mul_(3)
        res += [values(a), a.requires_grad, a.is_leaf, a._version]
        b = T.tensor([1., 2.])
        b.add_(a)  # a plain tensor becomes part of the graph
        res += [b.requires_grad, b.grad_fn.name(), b.is_leaf]
        b.backward(T.ones(2))
        res += [values(a.grad)]
        c = a * 1
        c.exp_()
        c.backward(T.ones(2))
        return res + [values(a.grad), c.grad_fn.name()]
    both(scenario)


@pytest.mark.torch
def test_in_place_gradients(both):
    def scenario(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        y.mul_(y)  # the operand was saved before the write: backward must refuse
        res = [error(lambda: y.backward(T.ones(3)))]
        y = x * 2
        y.mul_(y * 3)  # saves a copy of the old y
        y.add_(x, alpha=3)
        y.sin_()
        y.backward(T.ones(3))
        return res + [values(x.grad), y.grad_fn.name(), structure_names(y.grad_fn)]
    both(scenario)


def structure_names(fn):
    out, stack = [], [fn]
    while stack:
        n = stack.pop()
        out.append(n.name())
        stack.extend(nx for nx, _ in n.next_functions if nx is not None)
    return out


@pytest.mark.torch
def test_detach_and_detach_(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        d = y.detach()
        res = [d.requires_grad, d.is_leaf, d.grad_fn, d._version == y._version]
        d.add_(1)
        res += [values(y), y._version]
        z = x * 3
        z.detach_()
        res += [z.requires_grad, z.is_leaf, z.grad_fn]
        return res + [error(lambda: z.backward(T.ones(2)))]
    both(scenario)


@pytest.mark.torch
def test_saved_tensors_hooks(both):
    def scenario(T):
        log = []

        def pack(t):
            log.append(("pack", values(t), T.is_grad_enabled(), t.requires_grad))
            return t * 4

        def unpack(t):
            log.append(("unpack", values(t), T.is_grad_enabled()))
            return t / 4

        x = T.tensor([1., 2.], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * 1
            z = y.pow(2)
            w = x.pow(3)
            e = x.exp()
        saved = [z.grad_fn._saved_self, w.grad_fn._saved_self, e.grad_fn._saved_result]
        res = [[(values(s), s.requires_grad, s.is_leaf, s.grad_fn and s.grad_fn.name())
                for s in saved]]
        (g,) = T.autograd.grad((z + w + e).sum(), x, create_graph=True)
        g.sum().backward()
        return res + [log, values(g), values(x.grad)]
    both(scenario)


@pytest.mark.torch
def test_saved_tensors_hooks_nest_and_check_unpacked_type(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        outer = T.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                     lambda t: t)
        inner = T.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                     lambda t: t)
        with outer:
            with inner:
                a = x.exp()
            b = x.sin()
        c = x.cos()
        with T.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: 2):
            d = x.exp()
        (a + b + c).sum().backward()
        return [log, values(x.grad), error(lambda: d.sum().backward())]
    both(scenario)
