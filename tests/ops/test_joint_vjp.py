"""A vjp rule for several inputs at once (``defop(vjp={("a", "b"): rule})``, as
derivatives.yaml's ``input, weight, bias: native_batch_norm_backward(..., grad_input_mask)``):
the engine runs it once per node for every input whose gradient is asked for, and tells it
which those are. Batch norm's backward is declared so; ``torch`` here is PyTorch."""

import numpy
import pytest
import torch

import retrograd
from retrograd.ops._opdef import defop
from retrograd.ops._registry import apply

CALLS = []


def _scaled_sum_backward(xp, grad, a, b, grad_input_mask):
    """d(a * b + b) / da = grad * b, / db = grad * a + grad: one shared ``grad`` read."""
    CALLS.append(grad_input_mask)
    want_a, want_b = grad_input_mask
    return (grad * b if want_a else None), (grad * a + grad if want_b else None)


_scaled_sum = defop("scaled_sum", lambda xp, a, b: a * b + b,
                    vjp={("a", "b"): _scaled_sum_backward}, jvp="transpose")


def _run(needs, create_graph=False):
    CALLS.clear()
    a = retrograd.tensor([1.0, 2.0, 3.0], dtype=retrograd.float64, requires_grad=needs[0])
    b = retrograd.tensor([0.5, -1.0, 4.0], dtype=retrograd.float64, requires_grad=needs[1])
    out = apply(_scaled_sum, (a, b))
    leaves = [t for t in (a, b) if t.requires_grad]
    grads = retrograd.autograd.grad((out * out).sum(), leaves, create_graph=create_graph)
    return a, b, out, grads


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_the_joint_rule_runs_once_with_the_inputs_asked_for(needs):
    a, b, out, grads = _run(needs)
    assert CALLS == [needs]
    g = 2 * out.detach()
    want = [g * b if needs[0] else None, g * a.detach() + g if needs[1] else None]
    for got, expected in zip(grads, [w for w in want if w is not None], strict=True):
        numpy.testing.assert_allclose(got.numpy(), expected.detach().numpy())


def test_a_joint_rule_is_differentiable_again():
    """Under create_graph its gradients are built from the inputs: a second derivative."""
    _, _, _, (ga, gb) = _run((True, True), create_graph=True)
    assert ga.requires_grad and gb.requires_grad
    assert retrograd.autograd.gradcheck(
        lambda a, b: retrograd.autograd.grad((apply(_scaled_sum, (a, b)) ** 2).sum(), (a, b),
                                             create_graph=True),
        (retrograd.rand(3, dtype=retrograd.float64, requires_grad=True),
         retrograd.rand(3, dtype=retrograd.float64, requires_grad=True)))


def test_a_joint_rule_runs_once_in_the_batched_walk():
    a = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64, requires_grad=True)
    b = retrograd.tensor([3.0, -1.0], dtype=retrograd.float64, requires_grad=True)
    out = apply(_scaled_sum, (a, b))
    CALLS.clear()
    eye = retrograd.eye(2, dtype=retrograd.float64)
    ja, jb = retrograd.autograd.grad(out, (a, b), eye, is_grads_batched=True)
    assert CALLS == [(True, True)]
    numpy.testing.assert_allclose(ja.numpy(), numpy.diag(b.detach().numpy()))
    numpy.testing.assert_allclose(jb.numpy(), numpy.diag(a.detach().numpy() + 1))


def test_declaring_a_joint_rule_is_checked():
    def no_mask(xp, grad, a, b):
        return grad, grad
    with pytest.raises(TypeError, match="grad_input_mask last"):
        defop("bad", lambda xp, a, b: a + b, vjp={("a", "b"): no_mask})
    with pytest.raises(TypeError, match="not a differentiable input"):
        defop("bad", lambda xp, a, b: a * b, vjp={("a", "b"): _scaled_sum_backward},
              scalars=("b",))
    with pytest.raises(TypeError, match="elementwise jvp"):
        defop("bad", lambda xp, a, b: a * b, vjp={("a", "b"): _scaled_sum_backward},
              jvp="elementwise")


# ---- batch norm: one backward for input, weight and bias ---------------------------------

def _batch_norm(T, shape, needs, training, seed=0):
    rng = numpy.random.default_rng(seed)
    c = shape[1]
    x = T.from_numpy(rng.standard_normal(shape).astype(numpy.float32)).requires_grad_(needs[0])
    w = T.from_numpy(rng.standard_normal(c).astype(numpy.float32)).requires_grad_(needs[1])
    b = T.from_numpy(rng.standard_normal(c).astype(numpy.float32)).requires_grad_(needs[2])
    stats = T.zeros(c), T.ones(c) + 0.5
    out = T.nn.functional.batch_norm(x, *stats, w, b, training)
    g = T.from_numpy(rng.standard_normal(shape).astype(numpy.float32))
    leaves = [t for t in (x, w, b) if t.requires_grad]
    return out, T.autograd.grad(out, leaves, g)


@pytest.mark.parametrize("shape", [(4, 6, 5, 5), (8, 32, 20), (300, 48), (2, 3)])
@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, True), (False, True, False),
                                   (False, False, True), (True, False, True)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients_match_torch_for_each_mask(shape, needs, training):
    out, got = _batch_norm(retrograd, shape, needs, training)
    out_t, want = _batch_norm(torch, shape, needs, training)
    numpy.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=1e-5,
                                  atol=1e-5)
    for a, b in zip(got, want, strict=True):
        numpy.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_saves_what_pytorchs_node_saves():
    """Its one backward needs the input and weight whichever gradient is asked for (here
    the bias's alone): saved, as PyTorch's NativeBatchNormBackward0 saves them."""
    nodes = []
    for T in (retrograd, torch):
        x = T.from_numpy(numpy.arange(60, dtype=numpy.float32).reshape(4, 3, 5))
        w, b = T.ones(3) * 2, T.zeros(3, requires_grad=True)
        nodes.append(T.nn.functional.batch_norm(x, None, None, w, b, True).grad_fn)
    ours, theirs = nodes
    assert ours.name() == theirs.name() == "NativeBatchNormBackward0"
    for name in ("_saved_input", "_saved_weight"):
        numpy.testing.assert_array_equal(getattr(ours, name).numpy(),
                                         getattr(theirs, name).numpy())


def test_batch_norm_sums_a_transposed_batch_as_accurately_as_a_contiguous_one():
    """A (4096, 512) batch stored transposed: the compiled backward takes it (copied), its
    float32 sums in chunks. NumPy's rule summed a row-major channel one row at a time:
    weight and bias gradients 2e-6 off, where PyTorch's are within 2e-7."""
    rng = numpy.random.default_rng(0)
    xa = rng.standard_normal((512, 4096)).astype(numpy.float32) * 3 + 1
    g = rng.standard_normal((4096, 512)).astype(numpy.float32)

    def grads(T, dtype):
        x = T.from_numpy(xa).to(dtype).t().detach().requires_grad_()
        w, b = T.ones(512, dtype=dtype, requires_grad=True), T.zeros(512, dtype=dtype,
                                                                      requires_grad=True)
        out = T.nn.functional.batch_norm(x, None, None, w, b, True)
        return [t.double().numpy() for t in T.autograd.grad(out, (x, w, b),
                                                            T.from_numpy(g).to(dtype))]
    for got, ref in zip(grads(retrograd, retrograd.float32), grads(torch, torch.float64),
                        strict=True):
        assert numpy.abs(got - ref).max() <= 5e-7 * numpy.abs(ref).max()


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_empty_batch_has_zero_gradients_under_create_graph(training):
    grads = []
    for T in (retrograd, torch):
        x = T.zeros(0, 3, 4, requires_grad=True)
        w, b = T.ones(3, requires_grad=True), T.zeros(3, requires_grad=True)
        out = T.nn.functional.batch_norm(x, T.zeros(3), T.ones(3), w, b, training)
        grads.append(T.autograd.grad(out.sum(), (x, w, b), create_graph=True))
    for ours, theirs in zip(*grads, strict=True):
        assert tuple(ours.shape) == tuple(theirs.shape)
        numpy.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
