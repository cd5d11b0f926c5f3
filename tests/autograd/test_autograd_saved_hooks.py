"""Saved-tensor hooks and the contexts built on them (save_on_cpu, save_on_disk,
disable_saved_tensors_hooks, allow_mutation_on_saved_tensors), SavedTensor.register_hooks,
increment_version and graph.Node, against PyTorch where it has the feature."""

import gc
import os
import subprocess
import sys
import weakref

import pytest

import retrograd
from _compare import error, values

graph = retrograd.autograd.graph


def _graph_ops(T, x, w):
    """A forward touching many kinds of saved tensors: inputs, outputs, views, a
    multi-output op, an in-place op and a matmul."""
    y = x * w
    z = y.exp() / (x + 2)
    m, _ = z.max(dim=1)
    s = z.sigmoid().tanh()
    s.mul_(2)
    p = (s @ w.t()).pow(2)
    return p.sum() + m.sum() + z[:, 1].sin().sum()


@pytest.mark.torch
def test_pack_sees_every_saved_tensor_in_pytorch_order(both):
    def scenario(T):
        packed = []

        def pack(t):
            packed.append((values(t), t.requires_grad, t.grad_fn and t.grad_fn.name(),
                           T.is_grad_enabled()))
            return t

        x = T.tensor([[1., -1.5, .5], [.25, 3., -1.]], requires_grad=True)
        w = T.tensor([[.5, 1., 2.], [-1., .5, .25]], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = _graph_ops(T, x, w)
        out.backward()
        return [packed, values(x.grad), values(w.grad)]
    both(scenario)


@pytest.mark.torch
def test_unpack_runs_on_every_access(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t * 1,
                                                  lambda p: log.append("unpack") or p):
            y = x.pow(2)
        first = values(y.grad_fn._saved_self)
        second = values(y.grad_fn._saved_self)
        y.sum().backward()
        return [log, first, second, values(x.grad)]
    both(scenario)


def test_packed_object_dies_with_the_saved_tensors():
    class Box:
        def __init__(self, t):
            self.t = t.detach()

    boxes = []

    def pack(t):
        b = Box(t)
        boxes.append(weakref.ref(b))
        return b

    x = retrograd.tensor([1., 2.], requires_grad=True)
    with graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = x.exp().sin()
    assert len(boxes) == 2 and all(b() is not None for b in boxes)
    y.sum().backward(retain_graph=True)
    assert all(b() is not None for b in boxes)  # retained
    y.sum().backward()
    assert all(b() is None for b in boxes)      # freed by the backward that released them
    boxes.clear()
    with graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = x.exp().sin()
    del y                                       # no backward: freed with the graph
    assert len(boxes) == 2 and all(b() is None for b in boxes)


@pytest.mark.torch
def test_raw_saved_tensor_register_hooks(both):
    def scenario(T):
        log = []
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        raw = y.grad_fn._raw_saved_result
        raw.register_hooks(lambda t: log.append(("pack", values(t))) or t.detach() * 2,
                           lambda p: log.append("unpack") or p / 2)
        res = [error(lambda: raw.register_hooks(lambda t: t, lambda p: p)),
               values(y.grad_fn._saved_result)]
        y.sum().backward()
        res += [error(lambda: raw.register_hooks(lambda t: t, lambda p: p)), values(x.grad)]
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
            z = x.sin()
        res.append(error(lambda: z.grad_fn._raw_saved_self.register_hooks(lambda t: t,
                                                                           lambda p: p)))
        return [log, res]
    both(scenario)


@pytest.mark.torch
def test_save_on_cpu(both):
    def scenario(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        w = T.tensor([.5, -1., 2.], requires_grad=True)
        with T.autograd.graph.save_on_cpu():
            y = (x * w).exp()
        with T.autograd.graph.save_on_cpu(pin_memory=True):
            z = (y * x).sum()
        saved = y.grad_fn._saved_result
        z.backward()
        return [values(saved), saved.device.type, values(x.grad), values(w.grad)]
    both(scenario)


def test_save_on_cpu_makes_no_copy_on_cpu():
    x = retrograd.tensor([1., 2., 3.], requires_grad=True)
    with graph.save_on_cpu():
        y = x * x
    assert y.grad_fn._saved_self.data_ptr() == x.data_ptr()
    gc.collect()
    gc.disable()
    try:
        with graph.save_on_cpu():
            e = x.exp()
        node = weakref.ref(e.grad_fn)
        del e  # the packed output must not hold its own node (no reference cycle)
        assert node() is None
    finally:
        gc.enable()


@pytest.mark.torch
def test_disable_saved_tensors_hooks(both):
    def scenario(T):
        g = T.autograd.graph
        res = []
        with g.disable_saved_tensors_hooks("no hooks here"):
            res.append(error(lambda: g.save_on_cpu().__enter__()))
            res.append(error(lambda: g.saved_tensors_hooks(lambda t: t, lambda t: t)
                             .__enter__()))
            with g.disable_saved_tensors_hooks("inner message"):
                res.append(error(lambda: g.save_on_cpu().__enter__()))
            res.append(error(lambda: g.save_on_cpu().__enter__()))
        with g.save_on_cpu():
            pass  # enabled again
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            res.append(error(lambda: g.disable_saved_tensors_hooks("busy").__enter__()))
        with g.save_on_cpu():
            pass
        return res
    both(scenario)


@pytest.mark.torch
def test_allow_mutation_on_saved_tensors(both):
    def scenario(T):
        g = T.autograd.graph
        with g.allow_mutation_on_saved_tensors() as ctx:
            a = T.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            c = a.clone() * 3
            out2 = (c * c).sum()
            c.add_(1)
            c.mul_(2)
            out2.backward()
            res = [values(a.grad), values(b), type(ctx).__name__]
            res.append(error(lambda: g.allow_mutation_on_saved_tensors().__enter__()))
        x = T.ones(2, requires_grad=True)
        with g.allow_mutation_on_saved_tensors():
            y = x * 1
            z = (y * y).sum()
        res.append(error(lambda: z.backward()))  # outside the context it was recorded in
        y = x * 1
        z = (y * y).sum()
        y.add_(1)
        res.append(error(lambda: z.backward())[0])  # without it: the usual version error
        return res
    both(scenario)


def test_allow_mutation_clones_a_saved_view_written_through_its_base():
    """PyTorch (2.13) misses this case (it compares data pointers, and a view's differs
    from its base's) and silently uses the new values; retrograd clones the view."""
    x = retrograd.ones(3, requires_grad=True)
    with graph.allow_mutation_on_saved_tensors():
        y = x * 1
        v = y[1:]
        z = (v * v).sum()
        y.mul_(5)
        z.backward()
    assert x.grad.tolist() == [0., 2., 2.]


@pytest.mark.torch
def test_increment_version(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 1
        z = y.exp()
        v0 = y._version
        T.autograd.graph.increment_version(y)
        T.autograd.graph.increment_version([y, x])
        return [v0, y._version, x._version, error(lambda: z.sum().backward())]
    both(scenario)


@pytest.mark.torch
def test_nodes_are_graph_nodes(both):
    def scenario(T):
        a = T.tensor([0., 0., 0.], requires_grad=True)
        b = a.exp()
        names = dir(b.grad_fn)
        acc = b.grad_fn.next_functions[0][0]
        return [isinstance(b.grad_fn, T.autograd.graph.Node),
                isinstance(acc, T.autograd.graph.Node), "_saved_result" in names,
                "_raw_saved_result" in names, bool(T.allclose(b.grad_fn._saved_result, b)),
                isinstance(a, T.autograd.graph.Node)]
    both(scenario)


# ---- save_on_disk ---------------------------------------------------------------------------

def _files(d):
    """The files under ``d`` (save_on_disk writes them in a private directory there)."""
    return sorted(os.path.join(root, f) for root, _, files in os.walk(d) for f in files)


def test_save_on_disk_writes_large_tensors_and_deletes_them_after_backward(tmp_path):
    x = retrograd.randn(64, 64, requires_grad=True)
    small = retrograd.randn(3, requires_grad=True)
    with graph.save_on_disk(tmp_path, min_bytes=1024):
        y = (x * x).exp()            # x (saved twice, written once) and y: 16 KiB each
        s = (small * small).sum()    # 12 bytes: stays in memory
    assert len(_files(tmp_path)) == 2
    saved = y.grad_fn._saved_result
    assert retrograd.equal(saved, y) and retrograd.equal(y.grad_fn._saved_result, y)
    (y.sum() + s).backward(retain_graph=True)
    assert len(_files(tmp_path)) == 2   # retained for a second backward
    first = x.grad.clone()
    (y.sum() + s).backward()
    assert os.listdir(tmp_path) == []  # the files, then their directory, are gone
    assert retrograd.allclose(x.grad, 2 * first)
    assert retrograd.allclose(first, (2 * x * (x * x).exp()).detach())
    assert retrograd.allclose(small.grad, 4 * small.detach())  # two backwards


def test_save_on_disk_cleans_up_when_the_forward_raises(tmp_path):
    x = retrograd.randn(32, 32, requires_grad=True)
    with pytest.raises(ValueError):
        with graph.save_on_disk(tmp_path, min_bytes=0):
            y = x.exp().sin()
            raise ValueError("forward failed")
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError, match="forward that saved it raised"):
        y.sum().backward()


def test_save_on_disk_cleans_up_when_the_graph_is_dropped(tmp_path):
    x = retrograd.randn(32, 32, requires_grad=True)
    ctx = graph.save_on_disk(tmp_path, min_bytes=0)
    with ctx:
        y = x.exp().sin()
    with ctx:  # a context may be entered again; each use keeps its own files
        z = x.cos()
    assert len(_files(tmp_path)) == 2  # exp's result is sin's input: one file
    del y
    assert len(_files(tmp_path)) == 1
    z.sum().backward()
    assert _files(tmp_path) == []
    del ctx
    assert os.listdir(tmp_path) == []


def test_save_on_disk_private_directory_is_removed():
    x = retrograd.randn(32, 32, requires_grad=True)
    ctx = graph.save_on_disk(min_bytes=0)
    with ctx:
        y = x.exp()
    path = ctx._packer.private.path
    assert len(os.listdir(path)) == 1
    y.sum().backward()
    assert os.listdir(path) == []
    del ctx, y  # no reference cycle: gone without the garbage collector
    assert not os.path.exists(path)


def test_save_on_disk_cleans_up_at_interpreter_exit(tmp_path):
    code = ("import retrograd\n"
            "x = retrograd.randn(32, 32, requires_grad=True)\n"
            f"with retrograd.autograd.graph.save_on_disk({str(tmp_path)!r}, min_bytes=0):\n"
            "    y = x.exp().sin()\n"
            "ctx = retrograd.autograd.graph.save_on_disk(min_bytes=0)\n"
            "with ctx:\n"
            "    z = x.cos()\n"
            "print(ctx._packer.private.path)\n"
            f"assert len(__import__('os').listdir({str(tmp_path)!r})) == 1\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert os.listdir(tmp_path) == []
    assert not os.path.exists(out.stdout.strip())


def test_save_on_disk_keeps_dtype_and_gives_pytorch_gradients(tmp_path):
    x = retrograd.tensor([[1., 2.], [3., 4.]], dtype=retrograd.float64, requires_grad=True)
    with graph.save_on_disk(tmp_path, min_bytes=0):
        y = (x @ x).tanh()
    assert y.grad_fn._saved_result.dtype == retrograd.float64
    y.sum().backward()
    ref = retrograd.tensor([[1., 2.], [3., 4.]], dtype=retrograd.float64, requires_grad=True)
    (ref @ ref).tanh().sum().backward()
    assert retrograd.equal(x.grad, ref.grad)
    assert os.listdir(tmp_path) == []


@pytest.mark.torch
def test_pack_sees_save_for_backward(both):
    if not hasattr(retrograd.autograd, "Function"):
        pytest.skip("retrograd.autograd.Function is not there yet")

    def scenario(T):
        log = []

        class Exp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                y = (x * w).exp()
                ctx.save_for_backward(x, w, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, w, y = ctx.saved_tensors
                return g * y * w, g * y * x

        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([.5, -1.], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("pack", values(t), t.requires_grad)) or t.detach() * 2,
                lambda p: log.append(("unpack", values(p))) or p / 2):
            y = Exp.apply(x, w)
        y.sum().backward()
        return [log, values(x.grad), values(w.grad)]
    both(scenario)
