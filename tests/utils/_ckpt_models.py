"""The same small models in retrograd and PyTorch, from one set of NumPy weights.

Each builder takes the library (``retrograd`` or ``torch``) and returns a module whose
parameters hold the given arrays, so a run in each library can be compared value by
value (dropout aside: the two libraries' random streams differ).
"""

import math

import numpy

D = 16  # model width


def weights(shapes, seed=0):
    rng = numpy.random.default_rng(seed)
    return {k: (rng.standard_normal(s) / math.sqrt(s[-1])).astype(numpy.float32)
            for k, s in shapes.items()}


def load(lib, module, arrays):
    module.load_state_dict({k: lib.tensor(v.copy()) for k, v in arrays.items()})
    return module


def mlp(lib, n_layers, width=D, seed=0):
    """Linear+ReLU, ``n_layers`` times, as an nn.Sequential."""
    nn = lib.nn
    layers = []
    for _ in range(n_layers):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers)
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    return load(lib, model, weights(shapes, seed))


def block(lib, p_drop=0.1, seed=1):
    """A pre-norm transformer block: single-head self-attention and a GELU MLP, each
    with dropout on its residual branch."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D)
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.ln2 = nn.LayerNorm(D)
            self.ff = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
            self.drop = nn.Dropout(p_drop)

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
            att = (q @ k.transpose(-2, -1) / math.sqrt(D)).softmax(-1)
            x = x + self.drop(self.proj(att @ v))
            return x + self.drop(self.ff(self.ln2(x)))

    model = Block()
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    arrays = weights(shapes, seed)
    for k in arrays:
        if k.startswith("ln") and k.endswith("weight"):
            arrays[k] = arrays[k] + 1
    return load(lib, model, arrays)


def inputs(*shape, seed=2):
    return numpy.random.default_rng(seed).standard_normal(shape).astype(numpy.float32)


def grads(model, x=None):
    """The gradients of the model's parameters (and of ``x``), as arrays by name."""
    out = {k: p.grad.cpu().numpy().copy() for k, p in model.named_parameters()
           if p.grad is not None}
    if x is not None and x.grad is not None:
        out["<input>"] = x.grad.cpu().numpy().copy()
    return out


def assert_same_grads(a, b, atol=1e-5, rtol=1e-4):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    for k in a:
        numpy.testing.assert_allclose(a[k], b[k], atol=atol, rtol=rtol, err_msg=k)
