"""Shape, view and conversion ops: behaviour beyond the op database.

Views versus copies (memory sharing and grad_fn names by layout), the
multi-output nodes of split/unbind, ``view(dtype)``, the argument forms of
``Tensor.to``, and in-place fill/copy, each against PyTorch.
"""

import warnings

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd


def _pair(torch, a, requires_grad=False):
    r = retrograd.tensor(a, requires_grad=requires_grad)
    t = torch.tensor(a, requires_grad=requires_grad)
    return r, t


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _layouts(T, x):
    """The same values laid out contiguous, transposed, and strided (a step slice)."""
    return {"contiguous": x * 1, "transposed": (x * 1).t().contiguous().t(),
            "strided": (T.cat([x, x], 1) * 1)[:, ::2]}


@pytest.mark.torch
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("shape", [(12,), (4, 3), (2, 2, 3), (3, 4)])
def test_reshape_views_when_layout_allows(torch, layout, shape):
    a = numpy.arange(12.0).reshape(3, 4)
    rx, tx = _pair(torch, a, requires_grad=True)
    r, t = _layouts(retrograd, rx)[layout], _layouts(torch, tx)[layout]
    r_out, t_out = r.reshape(shape), t.reshape(shape)
    assert _name(r_out) == _name(t_out)
    shares = numpy.shares_memory(r_out.detach().numpy(), r.detach().numpy())
    assert shares == t_out._is_view()
    numpy.testing.assert_array_equal(r_out.detach().numpy(), t_out.detach().numpy())
    try:
        t_view = t.view(shape)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as r_err:
            r.view(shape)
        assert str(r_err.value) == str(e)
    else:
        assert _name(r.view(shape)) == _name(t_view)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int16", "uint8", "bool"])
def test_view_dtype_matches_torch(torch, dtype):
    a = numpy.linspace(-3, 3, 24, dtype=numpy.float32).reshape(4, 6)
    r, t = retrograd.from_numpy(a.copy()), torch.from_numpy(a.copy())
    rd, td = getattr(retrograd, dtype), getattr(torch, dtype)
    for rr, tt in ((r, t), (r.t(), t.t()), (r[0, 0], t[0, 0])):
        try:
            expected = tt.view(td)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as err:
                rr.view(rd)
            assert str(err.value) == str(e)
            continue
        out = rr.view(rd)
        assert out.shape == expected.shape and out.stride() == expected.stride()
        numpy.testing.assert_array_equal(out.numpy(), expected.numpy())
        assert numpy.shares_memory(out.numpy(), rr.numpy())


def test_identity_ops_return_self():
    x = retrograd.randn(3, 4, requires_grad=True)
    assert x.contiguous() is x
    assert x.flatten(1, -1) is x
    assert x.to(retrograd.float32) is x and x.to("cpu") is x and x.to(x) is x
    assert x.type(retrograd.float32) is x and x.cpu() is x
    assert x.to(retrograd.float32, copy=True) is not x


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_permute_movedim_reshape_match_numpy(shape, rnd):
    a = numpy.arange(numpy.prod(shape), dtype=numpy.float64).reshape(shape)
    x = retrograd.from_numpy(a)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    numpy.testing.assert_array_equal(x.permute(*perm).numpy(), a.transpose(perm))
    src = rnd.sample(range(len(shape)), rnd.randint(1, len(shape)))
    dst = rnd.sample(range(len(shape)), len(src))
    numpy.testing.assert_array_equal(x.movedim(src, dst).numpy(), numpy.moveaxis(a, src, dst))
    p = x.permute(*perm)
    numpy.testing.assert_array_equal(p.reshape(-1).numpy(), a.transpose(perm).reshape(-1))
    numpy.testing.assert_array_equal(p.flatten().numpy(), a.transpose(perm).reshape(-1))


@pytest.mark.torch
@pytest.mark.parametrize("op", ["split", "chunk", "unbind", "split_sizes"])
def test_multi_output_views_one_node(torch, op):
    """One node for all outputs; outputs not used get zero gradient."""
    a = numpy.arange(24.0).reshape(6, 4)
    grads = []
    for T in (torch, retrograd):
        x = T.tensor(a, requires_grad=True)
        y = x * 1
        outs = {"split": (y.split, 4), "chunk": (y.chunk, 4, 1), "unbind": (y.unbind, 1),
                "split_sizes": (y.split, [1, 2, 3])}[op]
        outs = outs[0](*outs[1:])
        assert len({id(o.grad_fn) for o in outs}) == 1
        assert all(o._base is y for o in outs)
        (outs[-1] * 3).sum().backward()
        grads.append((x.grad.numpy().copy(), _name(outs[0]), [o.output_nr for o in outs]))
    numpy.testing.assert_array_equal(grads[0][0], grads[1][0])
    assert grads[0][1:] == grads[1][1:]


@pytest.mark.torch
def test_cat_stack_mixed_dtypes_and_partial_grads(torch):
    results = []
    for T in (torch, retrograd):
        a = T.ones(2, 3, dtype=T.float32, requires_grad=True)
        b = T.full((1, 3), 2.0, dtype=T.float64, requires_grad=True)
        c = T.zeros(1, 3, dtype=T.float64)
        out = T.cat([a, c, b])
        (out * T.arange(12.0, dtype=T.float64).reshape(4, 3)).sum().backward()
        s = T.stack([a[0], b[0].float()], -1)
        results.append((out.dtype, a.grad.dtype, a.grad.numpy().copy(), b.grad.numpy().copy(),
                        s.shape, _name(out), _name(s)))
    r, t = results[1], results[0]
    assert str(r[0]) == str(t[0]) and str(r[1]) == str(t[1])
    numpy.testing.assert_array_equal(r[2], t[2])
    numpy.testing.assert_array_equal(r[3], t[3])
    assert tuple(r[4]) == tuple(t[4]) and r[5:] == t[5:]


@pytest.mark.torch
def test_T_and_mT(torch):
    for shape in [(), (3,), (2, 3), (2, 3, 4)]:
        a = numpy.arange(float(numpy.prod(shape))).reshape(shape)
        r, t = _pair(torch, a, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rt, tt = r.T, t.T
        numpy.testing.assert_array_equal(rt.detach().numpy(), tt.detach().numpy())
        assert _name(rt) == _name(tt)
        if len(shape) >= 2:
            assert _name(r.mT) == _name(t.mT)
            numpy.testing.assert_array_equal(r.mT.detach().numpy(), t.mT.detach().numpy())


@pytest.mark.torch
@pytest.mark.parametrize("args, kwargs", [
    (("float64",), {}), ((), {"dtype": "float16"}), (("cpu",), {}), (("cpu", "float64"), {}),
    ((), {"device": "cpu", "dtype": "int32"}), (("float32",), {"copy": True}),
    (("float64", True, True), {}), (("float32",), {"non_blocking": True}),
])
def test_to_argument_forms(torch, args, kwargs):
    def conv(lib, v):
        return getattr(lib, v) if v in ("float64", "float32", "float16", "int32") else v
    a = numpy.linspace(-1, 1, 6).reshape(2, 3)
    r, t = _pair(torch, a.astype(numpy.float32), requires_grad=True)
    r_out = r.to(*(conv(retrograd, v) for v in args),
                 **{k: conv(retrograd, v) for k, v in kwargs.items()})
    t_out = t.to(*(conv(torch, v) for v in args), **{k: conv(torch, v) for k, v in kwargs.items()})
    assert (r_out is r) == (t_out is t)
    assert str(r_out.dtype) == str(t_out.dtype) and _name(r_out) == _name(t_out)
    numpy.testing.assert_array_equal(r_out.detach().numpy(), t_out.detach().numpy())
    if r_out.requires_grad:
        (r_out.float() * 2).sum().backward()
        (t_out.float() * 2).sum().backward()
        assert str(r.grad.dtype) == str(t.grad.dtype)
        numpy.testing.assert_array_equal(r.grad.numpy(), t.grad.numpy())


@pytest.mark.cpu_build
def test_to_other_tensor_and_cuda():
    x = retrograd.ones(2)
    assert x.to(retrograd.zeros(1, dtype=retrograd.int64)).dtype is retrograd.int64
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.cuda()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.to("cuda:0")
    with pytest.raises(TypeError):
        x.to(3.5)


@pytest.mark.torch
def test_type_names_and_casts(torch):
    for name in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool"):
        r = retrograd.zeros(2, dtype=getattr(retrograd, name))
        t = torch.zeros(2, dtype=getattr(torch, name))
        assert r.type() == t.type()
        assert r.type("torch.DoubleTensor").dtype is retrograd.float64
    x = retrograd.ones(2)
    for method, name in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                         ("long", "int64"), ("int", "int32"), ("short", "int16"),
                         ("char", "int8"), ("byte", "uint8"), ("bool", "bool")):
        assert getattr(x, method)().dtype is getattr(retrograd, name)
    assert x.type_as(retrograd.zeros(1, dtype=retrograd.int16)).dtype is retrograd.int16
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")


@pytest.mark.torch
def test_new_constructors(torch):
    for T in (torch, retrograd):
        x = T.ones(2, dtype=T.float64, requires_grad=True)
        assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros((2, 3)).dtype == T.float64
        assert x.new_ones(2, dtype=T.int64).dtype == T.int64
        assert not x.new_empty(3).requires_grad
        assert x.new_full((2,), 7).tolist() == [7.0, 7.0]
        assert x.new_ones(1, requires_grad=True).requires_grad
        assert x.new_tensor([1, 2]).dtype == T.float64
        with pytest.warns(UserWarning, match="To copy construct from a tensor"):
            x.new_tensor(x)


@pytest.mark.torch
def test_copy_fill_zero_gradients(torch):
    a = numpy.arange(6.0).reshape(2, 3)
    out = []
    for T in (torch, retrograd):
        x = T.tensor(a, requires_grad=True)
        src = T.tensor([1.0, 2.0, 3.0], dtype=T.float32, requires_grad=True)
        v = T.tensor(4.0, requires_grad=True)
        y = x * 1
        y[0].copy_(src)
        y[1].fill_(v)
        z = (x * 1).zero_()
        (y * y).sum().backward()
        out.append((x.grad.numpy().copy(), src.grad.numpy().copy(), v.grad.item(),
                    str(src.grad.dtype), _name(z)))
    numpy.testing.assert_array_equal(out[0][0], out[1][0])
    numpy.testing.assert_array_equal(out[0][1], out[1][1])
    assert out[0][2:] == out[1][2:]


def test_copy_into_int_and_plain_tensor_tracks_src():
    y = retrograd.zeros(2, 3)
    w = retrograd.ones(3, requires_grad=True)
    y.copy_(w * 2)
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards" and y.requires_grad
    (y * 3).sum().backward()
    numpy.testing.assert_array_equal(w.grad.numpy(), [12.0, 12.0, 12.0])
    i = retrograd.zeros(2, dtype=retrograd.int64)
    i.copy_(retrograd.tensor([1.7, -2.5]))
    assert i.tolist() == [1, -2]


def test_as_strided_reads_storage_and_accumulates():
    x = retrograd.arange(12.0, requires_grad=True)
    y = x * 1
    v = y[2:].as_strided((3, 3), (1, 1))  # storage offset 2 is kept; windows overlap
    numpy.testing.assert_array_equal(v.detach().numpy(),
                                     [[2, 3, 4], [3, 4, 5], [4, 5, 6]])
    v.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 2, 3, 2, 1, 0, 0, 0, 0, 0])


def test_expand_shares_memory_and_sums_gradient():
    x = retrograd.tensor([[1.0], [2.0]], requires_grad=True)
    e = x.expand(3, 2, 4)
    assert numpy.shares_memory(e.detach().numpy(), x.detach().numpy())
    assert e.stride() == (0, 1, 0)
    e.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [[12.0], [12.0]])


@pytest.mark.torch
def test_writes_through_expand(torch):
    for T in (torch, retrograd):
        y = T.zeros(3, 1)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor "
                                               "refers to a single memory location"):
            y.expand(3, 4).add_(1)
        y[None].expand(2, 3, 1)[1] = 2.0  # one element per location: allowed
        assert y.tolist() == [[2.0], [2.0], [2.0]]


# In-place and out= writes whose input overlaps the written-to tensor: PyTorch raises when
# both are dense and the overlap is partial; the same view, disjoint parts, and views not
# dense (too hard to tell) pass.
_OVERLAPS = {
    "copy_shifted": (lambda T, a: a[1:].copy_(a[:-1]), True),
    "mul_shifted": (lambda T, a: a[1:].mul_(a[:-1]), True),
    "lerp_shifted": (lambda T, a: a[1:].lerp_(a[:-1], 0.5), True),
    "addcmul_shifted": (lambda T, a: a[1:].addcmul_(a[:-1], a[:-1]), True),
    "add_transposed": (lambda T, a: a.view(2, 5).t().add_(a.view(5, 2)), True),
    "out_shifted": (lambda T, a: T.add(a[:-1], 1, out=a[1:]), True),
    "add_itself": (lambda T, a: a.add_(a), False),
    "add_same_view": (lambda T, a: a.view(2, 5).add_(a.view(2, 5)), False),
    "add_disjoint": (lambda T, a: a[:5].add_(a[5:]), False),
    "add_strided": (lambda T, a: a[::2].add_(a[1::2]), False),
    "out_itself": (lambda T, a: T.add(a, 1, out=a), False),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", _OVERLAPS)
def test_partial_overlap_of_input_and_written_tensor(torch, case):
    write, raises = _OVERLAPS[case]
    results = []
    for T in (torch, retrograd):
        a = T.arange(10.0)
        if raises:
            with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                                   "written-to tensor refer to a single memory "
                                                   "location"):
                write(T, a)
            assert a.tolist() == list(map(float, range(10)))  # nothing written
        else:
            write(T, a)
        results.append(a.tolist())
    assert results[0] == results[1]


@pytest.mark.torch
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), (3, (2, 4)), ((3,), 2),
                                    ("size", (2, 1, 5)), ((2, 3), [4, 3], (5, 1, 1)),
                                    ((), (0,), (3,)), ((2, -1), (2, 1)), ((1, 5), (4, 3, 2))])
def test_broadcast_shapes_result_and_errors_as_pytorch(torch, shapes):
    """The first conflicting dimension, argument by argument from the right, named as
    PyTorch names it (its argument as given: a tuple, list or Size)."""
    outcomes = []
    for T in (torch, retrograd):
        args = [T.Size([3, 4]) if s == "size" else s for s in shapes]
        try:
            outcomes.append(tuple(T.broadcast_shapes(*args)))
        except (RuntimeError, ValueError) as e:
            outcomes.append((type(e), str(e).replace("retrograd", "torch")))
    assert outcomes[0] == outcomes[1]
