"""The Tensor: a backend array plus autograd state.

Ops and their methods are attached by ``retrograd.ops`` (each op module
registers its own functions, methods and operators), so this file holds only
what is not an op: attributes, conversions, grad bookkeeping and hooks. What
needs a layer above the Tensor is installed by the module that holds it, as the
ops are: the legacy constructor (``_creation``), ``__repr__`` (``_tensor_str``),
``backward`` (``autograd._backward``), ``requires_grad`` and ``grad_fn``
(``ops._views``).
"""

import warnings
import weakref

import numpy

from . import _dtype, _layout, _memory_format, _observe
from . import _grad_state
from ._hooks import add_hook
from .backend import device_of, get_array_module
from .backend.functions import functions

__all__ = ["Tensor", "Size", "wrap"]

_ndarray = numpy.ndarray


class Size(tuple):
    """``torch.Size``: a tuple of ints with PyTorch's repr."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    # Slices, concatenations and repeats stay Sizes, as PyTorch's (``shape[:-1] + (n,)``).
    def __getitem__(self, key):
        if type(key) is slice:
            return Size(tuple.__getitem__(self, key))
        return tuple.__getitem__(self, key)

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            "torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


def _not_on_host(t):
    raise TypeError(f"can't convert {t.device} device type tensor to numpy. Use Tensor.cpu() "
                    f"to copy the tensor to host memory first.")


class Tensor:
    """An n-dimensional array that can record the operations applied to it.

    >>> x = retrograd.tensor([1., 2.], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
    """

    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base",
                 "_view_version", "_grad", "_acc", "_hooks", "_post_acc_hooks",
                 "_retains_grad", "_fw", "__weakref__", "__dict__")
    __hash__ = object.__hash__
    __array_priority__ = 1000  # numpy scalars/arrays defer to our reflected operators
    _inference = False  # made under inference_mode (then set on the instance by wrap)

    # ``Tensor(data)``, the legacy constructor, is installed by ``_creation`` (it parses
    # data as ``tensor()`` does).

    # ---- basic attributes -------------------------------------------------------------
    @property
    def dtype(self):
        return _dtype._from_np[self._data.dtype]

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_meta(self):
        return self.device.type == "meta"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    # Every tensor is dense and strided: what library code asks before a sparse, nested,
    # quantized or MKL-DNN path (``torch.layout`` in ``_layout``).
    layout = property(lambda self: _layout.strided)
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = property(
        lambda self: False)

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        item = self._data.itemsize
        st = tuple(s // item for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        if self._base is None:
            return 0
        address = functions(get_array_module(self._data)).address
        return (address(self._data) - address(self._base._data)) // self._data.itemsize

    def data_ptr(self):
        if self.is_meta:  # no memory: PyTorch's meta tensors answer 0
            return 0
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=_memory_format.contiguous_format):
        """Whether the elements lie in ``memory_format``'s order (row-major by default)."""
        fmt = _memory_format.check_memory_format(memory_format, "is_contiguous")
        if fmt is _memory_format.preserve_format:
            return True
        axes = _memory_format.axes_order(fmt, self._data.ndim)
        return _memory_format.is_laid_out(self._data, axes)

    def is_floating_point(self):
        return _dtype.is_float(self._data.dtype)

    def is_inference(self):
        """True for tensors made under ``inference_mode`` and their views."""
        return self._inference or (self._base is not None and self._base._inference)

    def _is_view(self):
        return self._base is not None

    def is_complex(self):
        return self._data.dtype.kind == "c"

    @property
    def T(self):
        n = self._data.ndim
        if n == 0:
            warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.")
        elif n != 2:
            warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                      "dimensions of a tensor.")
        return self.permute(*range(n - 1, -1, -1))

    @property
    def mT(self):
        _check_matrices(self, "mT")
        return self.transpose(-2, -1)

    @property
    def H(self):
        n = self._data.ndim
        if n not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{n}-D tensor." + (" For batches of matrices, consider using "
                                                   "tensor.mH" if n > 2 else ""))
        return self.T.conj()

    @property
    def mH(self):
        _check_matrices(self, "mH")
        return self.mT.conj()

    # ---- data access ------------------------------------------------------------------
    @property
    def data(self):
        """A tensor sharing this one's memory, outside autograd and version tracking."""
        return wrap(self._data)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        if _observe.alloc is not None:
            _observe.alloc.retensored(self)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.reshape(-1)[0].item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is not numpy.ndarray:
            if force:
                return self.cpu()._data
            _not_on_host(self)
        return self._data

    def __array__(self, dtype=None, copy=None):
        if type(self._data) is not numpy.ndarray:
            _not_on_host(self)
        return self._data if dtype is None else self._data.astype(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if not self._data.size else 'more than one value'}"
                               f" is ambiguous")
        return bool(self._data.reshape(-1)[0])

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __complex__(self):
        return complex(self._scalar())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(-1)[0].item()

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    # ``__repr__`` is installed by ``_tensor_str``, which holds PyTorch's printing rules.

    def __format__(self, spec):
        """A plain 0-d tensor formats as its number (``f"{loss:.3f}"``, and ``f"{loss}"``
        prints ``0.5`` as PyTorch's); any other as its repr, refusing a format spec."""
        if self._data.ndim == 0 and type(self) is Tensor and self.device.type != "meta":
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = type(self).__new__(type(self))
        _init(t, self._data.copy())
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = wrap(self._grad._data.copy())
        t.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = t
        return t

    # ---- autograd state ---------------------------------------------------------------
    # ``requires_grad`` and ``grad_fn`` are installed by ``ops._views``: a view's grad_fn
    # is rebuilt when read after an in-place write through its base.

    def requires_grad_(self, requires_grad=True):
        return _set_requires_grad(self, requires_grad, "only Tensors of floating point dtype")

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        return self._vc[0]

    @property
    def grad(self):
        if (self._grad_fn is not None and not self._retains_grad and self._grad is None):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value._data.shape)}' to a tensor of size "
                                   f"'{list(self._data.shape)}'. Please ensure that the "
                                   f"gradient and the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_dtype.CPP_NAMES[value._data.dtype.name]}' to a "
                    f"tensor with grad_dtype '{_dtype.SCALAR_NAMES[self._data.dtype.name]}'. "
                    f"The gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    f"dtype). You can set the tensor's grad_dtype attribute with a specific "
                    f"dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging "
                    f"the dtypes of a tensor and its gradient may break downstream systems that "
                    f"assume they match.")
            if _observe.alloc is not None:
                _observe.alloc.role(value._data, _observe.GRADIENT)
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def _base_tensor(self):
        return self._base

    def detach(self):
        """A new leaf sharing memory and the version counter, outside the graph."""
        t = wrap(self._data)
        t._vc = self._vc
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def retain_grad(self):
        """Make backward populate ``.grad`` of this non-leaf tensor.

        Registered on the current grad_fn; an in-place op that gives the tensor a new
        history calls this again, so ``.grad`` is the gradient of the latest value.
        """
        fn = self.grad_fn
        if fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if fn._retains_grad_hooks is None:
            fn._retains_grad_hooks = {}
        fn._retains_grad_hooks[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a
        replacement gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._grad_fn is None:
            self._hooks, h = add_hook(self._hooks, hook)
            return h
        return self.grad_fn._register_tensor_prehook(self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after ``.grad`` of this leaf was updated."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        self._post_acc_hooks, h = add_hook(self._post_acc_hooks, hook)
        return h

    # ``backward`` is installed by ``autograd._backward``, beside the function it calls.


_warned = set()


def warn_once(message):
    """A UserWarning given once per process, as PyTorch's TORCH_WARN_ONCE."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def _check_matrices(t, attr):
    if t._data.ndim < 2:
        raise RuntimeError(f"tensor.{attr} is only supported on matrices or batches of "
                           f"matrices. Got {t._data.ndim}-D tensor.")


def _set_requires_grad(t, flag, which):
    """``requires_grad_``; ``which`` starts PyTorch's message for a non-float dtype (its
    wording differs between the method, the attribute and the factories)."""
    flag = bool(flag)
    if t._grad_fn is not None:
        if not flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        return t
    if flag and not _dtype.is_inexact(t._data.dtype):
        raise RuntimeError(f"{which} can require gradients")
    if flag and t._data.dtype.kind == "c":
        raise NotImplementedError("autograd of complex tensors is not supported yet")
    t._requires_grad = flag
    return t


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                         f" but got {dim})")
    return dim % n


def _init(t, data):
    """Give ``t`` (from ``__new__``, e.g. of a subclass) the state of a fresh leaf."""
    fresh = wrap(data)
    for name in _STATE:
        setattr(t, name, getattr(fresh, name))
    if fresh._inference:
        t._inference = True


_new = object.__new__
_STATE = tuple(n for n in Tensor.__slots__ if not n.startswith("__"))


def wrap(data, xp=numpy):
    """A new leaf Tensor around a backend array (a NumPy scalar becomes a 0-d array)."""
    if type(data) is not _ndarray and get_array_module(data) is numpy:
        data = xp.asarray(data)
    if _observe.alloc is not None:
        _observe.alloc.made(data)
    t = _new(Tensor)
    t._data = data
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t._view_version = 0
    t._grad = None
    t._acc = None
    t._hooks = None
    t._post_acc_hooks = None
    t._retains_grad = False
    t._fw = None
    if _grad_state.inference_threads and _grad_state.state.inference:
        t._inference = True
    return t


def _rebuild(data, requires_grad):
    t = wrap(data)
    t._requires_grad = requires_grad
    return t
