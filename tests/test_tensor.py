"""Tensor attributes, conversions and autograd state, compared with PyTorch."""

import numpy
import pytest

import retrograd


def _result(fn):
    """``fn()`` as plain data (tensors as dtype/shape/values), or (error type, message)."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - comparing what is raised
        return type(e).__name__, str(e)
    return _plain(r)


def _plain(r):
    if hasattr(r, "tolist") and hasattr(r, "dtype") and not isinstance(r, numpy.ndarray):
        return "tensor", str(r.dtype), tuple(r.shape), r.tolist()
    if isinstance(r, numpy.ndarray):
        return "ndarray", r.dtype.name, r.tolist()
    if isinstance(r, tuple):  # torch.Size and plain tuples
        return type(r).__name__, tuple(_plain(e) for e in r)
    if isinstance(r, list):
        return [_plain(e) for e in r]
    return r


def _alias_then(t, mutate, look):
    mutate(t)
    return look()


CASES = {
    "shape": lambda T, x: x.shape,
    "size": lambda T, x: x.size(),
    "size(dim)": lambda T, x: [x.size(1), x.size(-1)],
    "size out of range": lambda T, x: x.size(2),
    "stride": lambda T, x: [x.stride(), x.stride(0), x.stride(-1)],
    "stride out of range": lambda T, x: x.stride(-3),
    "Size repr": lambda T, x: repr(x.shape),
    "Size numel": lambda T, x: x.shape.numel(),
    "T": lambda T, x: [x.T, x.T.stride(), x.T.is_contiguous()],
    "T of 0-d and 3-d": lambda T, x: [T.tensor(1.).T, T.ones(2, 3, 4).T.shape],
    "mT": lambda T, x: [x.mT, T.ones(5, 2, 3).mT.shape],
    "mT of 1-d": lambda T, x: T.ones(3).mT,
    "mH of 1-d": lambda T, x: T.ones(3).mH,
    "H of 1-d": lambda T, x: T.ones(2).H,
    "H of 3-d": lambda T, x: T.ones(2, 3, 4).H,
    "H": lambda T, x: x.H,
    "is_contiguous": lambda T, x: [x.is_contiguous(), x.T.contiguous().is_contiguous()],
    "dims and sizes": lambda T, x: [x.dim(), x.ndim, x.numel(), x.nelement(),
                                    x.element_size(), x.itemsize, x.nbytes,
                                    T.ones(2, dtype=T.int16).element_size()],
    "len": lambda T, x: len(x),
    "len of 0-d": lambda T, x: len(T.tensor(1.)),
    "iter": lambda T, x: list(x),
    "iter of 0-d": lambda T, x: list(T.tensor(1.)),
    "item": lambda T, x: [T.tensor(2.5).item(), T.tensor(5).item(), T.tensor([[3.]]).item(),
                          T.tensor(True).item()],
    "item of many": lambda T, x: x.item(),
    "tolist": lambda T, x: [x.tolist(), T.tensor(2.5).tolist(), T.tensor([1, 2]).tolist()],
    "numpy": lambda T, x: x.numpy(),
    "numpy of requires_grad": lambda T, x: T.ones(2, requires_grad=True).numpy(),
    "numpy force": lambda T, x: T.ones(2, requires_grad=True).numpy(force=True),
    "numpy shares memory": lambda T, x: _alias_then(x, lambda t: t.numpy().__setitem__(
        (0, 0), 9), lambda: x.tolist()),
    "bool": lambda T, x: [bool(T.tensor([0.])), bool(T.tensor(2))],
    "bool of many": lambda T, x: bool(x),
    "bool of none": lambda T, x: bool(T.ones(0)),
    "float int complex": lambda T, x: [float(T.tensor(2.5)), int(T.tensor(-2.5)),
                                       complex(T.tensor(1.)), float(T.tensor([[4.]]))],
    "float of many": lambda T, x: float(x),
    "int of many": lambda T, x: int(x),
    "index": lambda T, x: [[0, 1, 2][T.tensor(1)], [0, 1, 2][T.tensor([2])]],
    "index float": lambda T, x: [0, 1][T.tensor(1.)],
    "index many": lambda T, x: [0, 1][T.tensor([1, 0])],
    "dtype and kinds": lambda T, x: [str(x.dtype), x.is_floating_point(), x.is_complex(),
                                     T.tensor([1]).is_floating_point(), str(x.device),
                                     x.is_cuda, x.is_cpu],
    "leaf and requires_grad": lambda T, x: [x.is_leaf, x.requires_grad, x.grad_fn, x.grad,
                                            x._version],
    "storage_offset": lambda T, x: [x.storage_offset(), x[1].storage_offset(),
                                    x[1, 1:].storage_offset()],
    "hash": lambda T, x: hash(x) == hash(x) and hash(x) != hash(x * 1),
}


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Tensor.T is deprecated on 0-D tensors")
@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.parametrize("case", sorted(CASES))
def test_tensor_matches_pytorch(torch, case):
    def run(T):
        return _result(lambda: CASES[case](T, T.arange(6.).reshape(2, 3)))
    assert run(retrograd) == run(torch)


AUTOGRAD_CASES = {
    "is_leaf": lambda T, g: [g.is_leaf, (g * 2).is_leaf, T.ones(1).is_leaf,
                             (T.ones(1) * 2).is_leaf],
    "requires_grad flags": lambda T, g: [g.requires_grad, (g * 2).requires_grad,
                                         (g.detach() * 2).requires_grad],
    "requires_grad_ returns self": lambda T, g: [T.ones(1).requires_grad_() .requires_grad,
                                                 T.ones(1, requires_grad=True)
                                                 .requires_grad_(False).requires_grad],
    "requires_grad_ on int": lambda T, g: T.tensor([1, 2]).requires_grad_(),
    "requires_grad_ False on int": lambda T, g: T.tensor([1]).requires_grad_(False),
    "requires_grad attribute on int": lambda T, g: setattr(T.tensor([1]), "requires_grad",
                                                           True),
    "requires_grad_ False on non-leaf": lambda T, g: (g * 2).requires_grad_(False),
    "requires_grad_ True on non-leaf": lambda T, g: (g * 2).requires_grad_(True),
    "data": lambda T, g: [(g * 2).data, (g * 2).data.requires_grad, (g * 2).data.is_leaf],
    "data does not share the version counter": lambda T, g: _alias_then(
        g.data, lambda d: d.add_(1), lambda: [g._version, g.tolist()]),
    "data setter": lambda T, g: _alias_then(g, lambda t: setattr(t, "data", T.ones(3)),
                                            lambda: [g.shape, g.requires_grad]),
    "data setter type": lambda T, g: setattr(g, "data", [1.]),
    "detach shares memory and version": lambda T, g: _alias_then(
        (y := g * 2).detach(), lambda d: d.add_(1), lambda: [y.tolist(), y._version]),
    "detach": lambda T, g: [(d := (g * 2).detach()).requires_grad, d.is_leaf, d.grad_fn],
    "detach_": lambda T, g: [(y := g * 2).detach_() is y, y.is_leaf, y.requires_grad,
                             y.grad_fn],
    "detach_ of a view": lambda T, g: (g * 2)[0:1].detach_(),
    "version counts in-place ops": lambda T, g: _alias_then(
        y := g * 2, lambda t: (t.add_(1), t.mul_(2), t.zero_()), lambda: y._version),
    "grad setter": lambda T, g: _alias_then(g, lambda t: setattr(t, "grad", T.ones(2)),
                                            lambda: g.grad),
    "grad setter size": lambda T, g: setattr(g, "grad", T.ones(3)),
    "grad setter dtype": lambda T, g: setattr(g, "grad", T.ones(2, dtype=T.float64)),
    "grad setter int dtype": lambda T, g: setattr(g, "grad", T.ones(2, dtype=T.int64)),
    "grad setter type": lambda T, g: setattr(g, "grad", [1., 2.]),
    "grad deleter": lambda T, g: _alias_then(g, lambda t: (setattr(t, "grad", T.ones(2)),
                                                           delattr(t, "grad")),
                                             lambda: g.grad),
    "output_nr": lambda T, g: [g.output_nr, (g * 2).output_nr],
}


@pytest.mark.torch
@pytest.mark.parametrize("case", sorted(AUTOGRAD_CASES))
def test_autograd_state_matches_pytorch(torch, case):
    def run(T):
        return _result(lambda: AUTOGRAD_CASES[case](T, T.tensor([1., 2.], requires_grad=True)))
    assert run(retrograd) == run(torch)


def test_array_protocol():
    x = retrograd.arange(6.).reshape(2, 3)
    assert numpy.asarray(x).dtype == numpy.float32
    assert numpy.asarray(x, dtype=numpy.float64).dtype == numpy.float64
    assert numpy.shares_memory(numpy.asarray(x), x.numpy())


def test_deepcopy_and_pickle():
    import copy
    import pickle
    a = retrograd.tensor([1., 2.], requires_grad=True)
    a.grad = retrograd.ones(2)
    b = copy.deepcopy(a)
    assert b is not a and b.tolist() == a.tolist() and b.requires_grad
    assert b.grad.tolist() == [1., 1.] and not numpy.shares_memory(b.numpy(force=True),
                                                                    a.numpy(force=True))
    c = pickle.loads(pickle.dumps(a))
    assert c.tolist() == [1., 2.] and c.requires_grad
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(a * 2)


def test_size_slices_and_concatenations_stay_sizes():
    torch = pytest.importorskip("torch")
    for lib in (torch, retrograd):
        s = lib.Size([2, 3, 4])
        for got in (s[:-1], s[::-1], s + (5,), (5,) + s, s + lib.Size([1]), s * 2, 2 * s):
            assert type(got) is lib.Size
        assert type(s[0]) is int
    r, t = retrograd.Size([2, 3]), torch.Size([2, 3])
    assert repr(r[1:] + (7,)) == repr(t[1:] + (7,))
    with pytest.raises(TypeError, match=r"can only concatenate tuple \(not list\) to torch.Size"):
        r + [1]


def test_broadcast_tensors_returns_a_tensor_of_the_shape_itself():
    torch = pytest.importorskip("torch")
    for lib in (torch, retrograd):
        a = lib.ones(2, 3, requires_grad=True)
        out = lib.broadcast_tensors(a, lib.ones(3))
        assert out[0] is a and out[1].shape == (2, 3)


def test_where_method_keeps_the_tensor_where_the_condition_holds():
    """``x.where(cond, y)`` is ``where(cond, x, y)`` (the tensor is not the condition)."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (torch, retrograd):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.where(x > 0, -5.0)
        assert y.tolist() == [1.0, -5.0, 3.0]
        y.sum().backward()
        grads.append(x.grad.tolist())
        with pytest.raises(TypeError):
            x.where(x > 0)
    assert grads[0] == grads[1]
