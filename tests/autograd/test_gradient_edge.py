"""GradientEdge / get_gradient_edge: edges as grad() inputs and outputs, as PyTorch's."""

import numpy
import pytest

import retrograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _run(T):
    from_numpy = T.from_numpy
    GE = T.autograd.graph.get_gradient_edge
    x = from_numpy(numpy.array([0.5, -1.0, 2.0])).requires_grad_()
    out = {}
    y = x * 2
    z = y.sin()
    e = GE(y)
    out["edge_type"] = (type(e).__name__, e.output_nr, e.ownership_token is None,
                        type(GE(x).node).__name__)
    out["edge"] = T.autograd.grad(z.sum(), e, retain_graph=True)[0].tolist()
    out["both"] = [g.tolist() for g in T.autograd.grad(z.sum(), (x, e), retain_graph=True)]
    out["same_as_tensor"] = T.autograd.grad(z.sum(), y, retain_graph=True)[0].tolist()
    # an edge as an output, with its grad_output
    out["from_edge"] = T.autograd.grad(GE(z), x, grad_outputs=T.ones(3, dtype=x.dtype),
                                       retain_graph=True)[0].tolist()
    # an unused edge
    w = from_numpy(numpy.ones(3)).requires_grad_()
    out["unused"] = T.autograd.grad(z.sum(), GE(w * 2), allow_unused=True,
                                    retain_graph=True)
    # the edge stays valid after the tensor is modified in place (it names the node)
    y2 = x * 3
    e2 = GE(y2)
    z2 = (y2 * y2).sum()
    out["after_inplace_view"] = T.autograd.grad(z2, e2)[0].tolist()
    errors = []
    for call in (lambda: GE(T.ones(2)),
                 lambda: T.autograd.grad(GE((x * 5).sin()), x),
                 lambda: T.autograd.grad((x * 4).sum(), GE(x * 4), allow_unused=True,
                                         materialize_grads=True)):
        try:
            call()
            errors.append(None)
        except RuntimeError as err:
            errors.append(str(err))
    out["errors"] = errors
    # backward(inputs=[edge]) runs, and stores nothing
    y3 = x * 2
    T.autograd.backward(y3.sin().sum(), inputs=[GE(y3)])
    out["backward_edge_grad"] = x.grad
    return out


def test_gradient_edges_match_torch():
    a, b = _run(retrograd), _run(torch)
    assert a.keys() == b.keys()
    for k in a:
        if k in ("errors", "edge_type", "unused", "backward_edge_grad"):
            assert a[k] == b[k], k
        else:
            numpy.testing.assert_allclose(a[k], b[k], rtol=1e-12, err_msg=k)
