"""The op database's samples in a low-precision dtype, shared by the float16 and
bfloat16 tests (tests/ops/test_half_compute.py, test_bfloat16_compute.py)."""

import zlib

import pytest

import retrograd
from opdb import op_db, reseed


def entries():
    """Op-database entries compared with PyTorch in float32 (and so in half precision)."""
    return [op for op in op_db if "float32" in op.dtypes and not op.skip_torch]


def samples(op, dtype, requires_grad):
    """``op``'s samples in ``dtype`` (a name), the same on every run."""
    reseed(zlib.crc32(f"{op.id}/{dtype}/{requires_grad}".encode()))
    return list(op.sample_inputs(dtype, requires_grad))


def params(dtype, requires_grad, keep=lambda op: True):
    """``(op, sample index)`` parameters for every kept entry's samples in ``dtype``."""
    return [pytest.param(op, i, id=f"{op.id}-{i}-{s.name}")
            for op in entries() if keep(op)
            for i, s in enumerate(samples(op, dtype, requires_grad))]


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def leaves(sample):
    """The tensors of a sample that require grad, each once, in order of appearance."""
    seen = {}

    def visit(x):
        if isinstance(x, retrograd.Tensor):
            seen.setdefault(id(x), x)
        elif isinstance(x, (list, tuple)):
            for e in x:
                visit(e)
        elif isinstance(x, dict):
            for e in x.values():
                visit(e)
    visit((sample.input, sample.args, sample.kwargs))
    return [t for t in seen.values() if t.requires_grad]
