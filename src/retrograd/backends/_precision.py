"""``torch.set_float32_matmul_precision``: which float32 matmul shortcuts are allowed.

The setting is a permission, not a request: retrograd's matmuls always compute in full
float32 (NumPy's BLAS), which every level allows. ``backends.cuda.matmul.allow_tf32``
reads and writes the same setting, as in PyTorch.
"""

import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision"]

_LEVELS = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision):
    """``"highest"`` (the default), ``"high"`` or ``"medium"``.

    >>> set_float32_matmul_precision("high"); get_float32_matmul_precision()
    'high'
    """
    global _precision
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _LEVELS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _precision = precision


def get_float32_matmul_precision():
    return _precision
