"""``torch.special``: the special functions under their SciPy-style names. Most are the
ops retrograd already has (``expit`` is sigmoid, ``gammaln`` lgamma, ``psi`` digamma,
...); ``entr``, ``log_ndtr``, ``ndtri``, ``erfcx``, ``i0e``, ``i1``, ``i1e`` and
``xlog1py`` are ops of their own (``ops.special``), and ``ndtr`` PyTorch's composite,
``(1 + erf(x / sqrt(2))) / 2``. The Bessel, Airy and orthogonal-polynomial families and
``zeta`` are not here (PyTorch gives them no gradient)."""

import math

from .ops.activation import log_softmax as _log_softmax
from .ops.activation import softmax as _softmax
from .ops.binary import xlogy
from .ops.pointwise import erf, exp2, expm1, log1p, logit, sigmoid
from .ops.pointwise import round as _round
from .ops.reduction import logsumexp as _logsumexp
from .ops.special import (digamma, erfc, erfinv, i0, igamma, igammac, lgamma, mvlgamma,
                          polygamma, sinc, special_function, xlog1py)

__all__ = ["digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "i0", "log1p", "log_softmax", "logit", "logsumexp",
           "multigammaln", "polygamma", "round", "sinc", "softmax", "xlogy", "ndtr", "entr",
           "log_ndtr", "ndtri", "erfcx", "i0e", "i1", "i1e", "xlog1py"]

psi, expit, gammaln, multigammaln = digamma, sigmoid, lgamma, mvlgamma
gammainc, gammaincc = igamma, igammac
entr, log_ndtr, ndtri, erfcx, i0e, i1, i1e = (special_function(n) for n in (
    "entr", "log_ndtr", "ndtri", "erfcx", "i0e", "i1", "i1e"))


def round(input, *, decimals=0, out=None):  # noqa: A001 (torch.special.round)
    return _round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _logsumexp(input, dim, keepdim, out=out)


def ndtr(input, *, out=None):
    """The standard normal CDF, as PyTorch composes it: ``(1 + erf(x / sqrt(2))) * 0.5``
    (so it underflows to 0 below about -8.3 in float64, as PyTorch's)."""
    if out is not None:
        raise NotImplementedError("special.ndtr: out= is not supported")
    return (1 + erf(input * math.sqrt(0.5))) * 0.5
