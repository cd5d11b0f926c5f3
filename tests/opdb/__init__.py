"""The op database: one ``OpInfo`` per op, with sample inputs and tolerances.

``tests/test_ops.py`` generates, for every entry: forward values and result
dtype against PyTorch, gradients and grad_fn names against PyTorch, float64
finite-difference gradient checks (first and second order), and the errors
of ``error_inputs`` against PyTorch's; the batched-gradient and half-precision
suites run the same entries. Entries live in this package's modules, one per op
family, each defining ``OPS``; adding an op is one entry there, and a new module
is found by walking the package (an import error fails collection, never drops
its entries silently). Kept out of the installed package, as PyTorch keeps its
OpInfos in its test tree.

Sample functions are called as ``sample_inputs(dtype, requires_grad)`` with
``dtype`` a NumPy-style name ("float32", "int64", "bool"); they build tensors
with :func:`make_tensor` (``requires_grad`` applies to float tensors). The test
suite reseeds :data:`rng` before each call, so samples are reproducible.
"""

import importlib
import pkgutil

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, maker, reseed, rng

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "make_tensor", "maker", "op_db", "rng",
           "reseed", "entries"]


def entries(module):
    """The ``OPS`` of one entry module (``"nn"``, ``"pool"``, ...)."""
    return importlib.import_module(f"{__name__}.{module}").OPS


op_db = [op for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
         for op in entries(info.name)]
