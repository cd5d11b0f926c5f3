"""The threads dense work runs on: NumPy's BLAS pools, read and limited through
threadpoolctl as torch.get_num_threads / set_num_threads."""

import operator
import os


from ._registry import register

__all__ = ["get_num_threads", "set_num_threads"]


def _blas_pools():
    try:
        import threadpoolctl
    except ImportError:
        return None, None
    return threadpoolctl, threadpoolctl.threadpool_info()


@register(method=False)
def get_num_threads():
    """The threads of NumPy's BLAS (what runs retrograd's dense work), read through
    threadpoolctl; without it, the CPU count (BLAS's default)."""
    _, pools = _blas_pools()
    blas = [p["num_threads"] for p in pools or () if p.get("user_api") == "blas"]
    return max(blas) if blas else os.cpu_count() or 1


@register(method=False)
def set_num_threads(int):
    """Limit NumPy's BLAS to ``int`` threads (through threadpoolctl; without it, set
    ``OMP_NUM_THREADS`` before starting Python instead: NumPy reads it once)."""
    n = operator.index(int)
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    tpc, _ = _blas_pools()
    if tpc is None:
        raise NotImplementedError("set_num_threads needs threadpoolctl (pip install "
                                  "threadpoolctl), or set OMP_NUM_THREADS before starting")
    tpc.threadpool_limits(limits=n, user_api="blas")
