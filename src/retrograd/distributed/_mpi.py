"""The one place that imports mpi4py, lazily: ``import retrograd`` must work without the
``distributed`` extra, and only asking for the MPI backend needs it."""

import importlib.util

__all__ = ["mpi", "is_mpi_available"]


def is_mpi_available():
    """Whether mpi4py (the ``retrograd[distributed]`` extra) is installed."""
    return importlib.util.find_spec("mpi4py") is not None


def mpi():
    """mpi4py's ``MPI`` module, or a RuntimeError naming the extra to install."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("the mpi backend of retrograd.distributed needs mpi4py and an MPI "
                           "library: pip install 'retrograd[distributed]'") from e
    return MPI
