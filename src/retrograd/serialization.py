"""``save``/``load`` in PyTorch's own file format, without importing PyTorch.

A file is the zip archive ``torch.save`` writes (entries stored, data 64-byte aligned):

- ``<name>/data.pkl``: the object, pickled (protocol 2). A tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
  OrderedDict())``; a storage is a persistent id ``("storage", torch.FloatStorage,
  key, "cpu", numel)`` naming the entry that holds its bytes;
- ``<name>/data/<key>``: the raw little-endian bytes of each storage;
- ``<name>/version``, ``byteorder``, ``.format_version``, ``.storage_alignment``,
  ``.data/serialization_id``: as PyTorch writes them.

Tensors that are views of one array share one storage, in the file and after
loading. Reading maps PyTorch's rebuild functions and storage classes to
retrograd; with ``weights_only=True`` (the default, as in PyTorch) no other
global is allowed, so loading never runs code from the file.
"""

import _compat_pickle
import collections
import io
import os
import pickle
import secrets
import struct
import warnings
import zipfile

import numpy

from . import _dtype
from ._tensor import Size, Tensor, wrap
from .backend import Device, device_of

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "safe_globals"]

# Legacy storage class names PyTorch pickles, by NumPy dtype. bfloat16 has no NumPy
# dtype: it is read (exactly) as float32.
_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
            "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
            "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_BFLOAT16 = "bfloat16"
_ALIGN = 64


# ---- writing ------------------------------------------------------------------------------

class _Global:
    """Stands for ``module.name`` in the pickle stream (a PyTorch global that retrograd
    must name without importing PyTorch). Callable only so pickle accepts it as a reducer."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pragma: no cover - never called, only pickled
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH_DEVICE = _Global("torch", "device")
_TORCH_SIZE = _Global("torch", "Size")
_STORAGE_GLOBALS = {k: _Global("torch", v) for k, v in _STORAGE.items()}
_DTYPE_GLOBALS = {d: _Global("torch", d.name) for d in _dtype._from_np.values()}


class _Storage:
    """One storage being written: the array whose memory it is, and its entry key."""

    __slots__ = ("key", "array", "location")

    def __init__(self, key, array, location):
        self.key, self.array, self.location = key, array, location


class _Pickler(pickle._Pickler):  # the Python pickler: it lets _Global write its own GLOBAL
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}  # (id of memory owner, dtype) -> _Storage

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            a = obj.array
            return ("storage", _STORAGE_GLOBALS[a.dtype.name], obj.key, obj.location, a.size)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Device):
            return _TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if type(obj) is Size:
            return _TORCH_SIZE, (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        if type(t).__module__.startswith("retrograd.nn"):  # a Parameter: its data, rebuilt
            return _REBUILD_PARAMETER, (wrap(t._data), t._requires_grad,
                                        collections.OrderedDict())
        storage, offset, stride = self._storage_of(t._data)
        return _REBUILD_TENSOR, (storage, offset, tuple(t._data.shape), stride,
                                 t._requires_grad, collections.OrderedDict())

    def _storage_of(self, data):
        """(storage, element offset, element strides) of an array; views of one
        contiguous array share its storage, anything else gets a compact copy."""
        location = str(device_of(data))
        if type(data) is not numpy.ndarray:
            data = data.get()  # a device array: its bytes come to the host
        owner = data
        while isinstance(owner.base, numpy.ndarray):
            owner = owner.base
        item = data.itemsize
        if data.dtype.name not in _STORAGE:
            raise TypeError(f"cannot save a tensor of dtype {data.dtype}")
        ptr = data.__array_interface__["data"][0]
        start = owner.__array_interface__["data"][0]
        if (owner.flags.c_contiguous or owner.flags.f_contiguous) and \
                (ptr - start) % item == 0 and owner.nbytes % item == 0 and \
                all(s >= 0 and s % item == 0 for s in data.strides):
            flat = (owner if owner.flags.c_contiguous else owner.T).reshape(-1)
            flat = flat.view(numpy.uint8).view(data.dtype) if flat.dtype != data.dtype else flat
            key = (id(owner), data.dtype.str)
            offset = (ptr - start) // item
        else:
            flat = numpy.ascontiguousarray(data).reshape(-1)
            key = (id(flat), data.dtype.str)
            offset = 0
            data = flat.reshape(data.shape)
        s = self.storages.get(key)
        if s is None:
            # (the _Storage holds ``flat``, a view of the owner: ids stay unique while saving)
            s = self.storages[key] = _Storage(str(len(self.storages)), flat, location)
        return s, offset, tuple(st // item for st in data.strides)


def _save_dtype(pickler, obj):
    """A dtype is the global ``torch.<name>``, as PyTorch pickles it."""
    pickler.save(_DTYPE_GLOBALS[obj])


_Pickler.dispatch[_dtype.dtype] = _save_dtype


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def _write_entry(zf, name, data):
    """A stored entry whose data starts on a 64-byte boundary (padding in the local
    header's extra field, as PyTorch's writer does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = zf.fp.tell() + 30 + len(name.encode())
    pad = -(start + 4) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, data)


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` (tensors, and dicts/lists/tuples of them and of Python values) to the
    path or binary file ``f``, in PyTorch's format: ``torch.load`` reads it. (The pickle
    is always written by retrograd's own pickler: ``pickle_module`` is accepted for
    PyTorch's signature only.)

    >>> retrograd.save({"w": w}, "model.pt")
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("retrograd.save writes only PyTorch's zip format "
                                  "(_use_new_zipfile_serialization=True)")
    if pickle_protocol != 2:
        raise NotImplementedError("retrograd.save writes pickle protocol 2, as PyTorch does")
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    name = _archive_name(f)
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "wb") if own else f
    try:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
            _write_entry(zf, f"{name}/data.pkl", buf.getvalue())
            _write_entry(zf, f"{name}/.format_version", b"1")
            _write_entry(zf, f"{name}/.storage_alignment", str(_ALIGN).encode())
            if not _disable_byteorder_record:
                _write_entry(zf, f"{name}/byteorder", b"little")
            for s in pickler.storages.values():
                arr = s.array
                _write_entry(zf, f"{name}/data/{s.key}",
                             arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())
            _write_entry(zf, f"{name}/version", b"3\n")
            _write_entry(zf, f"{name}/.data/serialization_id",
                         str(secrets.randbits(128)).zfill(40).encode())
    finally:
        if own:
            fh.close()


# ---- reading ------------------------------------------------------------------------------

class _StorageType:
    """What ``torch.FloatStorage`` (and the other storage classes) unpickle to."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """A tensor viewing ``storage`` (so tensors of one storage share memory)."""
    item = storage.itemsize
    if 0 in size:
        arr = numpy.empty(size, storage.dtype)
    else:
        arr = numpy.lib.stride_tricks.as_strided(
            storage[storage_offset:], shape=tuple(size), strides=[s * item for s in stride])
    t = wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    storage = storage.view(numpy.uint8).view(dtype.np)
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                              backward_hooks)


def _parameter_class():
    try:
        from .nn import Parameter
    except ImportError:  # pragma: no cover - only while retrograd.nn is absent
        return None
    return Parameter


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    cls = _parameter_class()
    if cls is None:
        return data.detach().requires_grad_(requires_grad)
    return cls(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor subclass (Parameter) or a tensor with attributes: the tensor, as a
    Parameter when it was one."""
    t = func(*args)
    return _rebuild_parameter(t, t.requires_grad, None) if new_type is _PARAMETER_TYPE else t


_PARAMETER_TYPE = object()  # what torch.nn.parameter.Parameter unpickles to
_TENSOR_TYPE = object()     # torch.Tensor


def _allowed():
    """PyTorch's globals a weights-only load accepts, mapped to retrograd."""
    g = {"collections.OrderedDict": collections.OrderedDict,
         "collections.Counter": collections.Counter,
         "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
         "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
         "torch._utils._rebuild_parameter": _rebuild_parameter,
         "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
         "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
         "torch.nn.parameter.Parameter": _PARAMETER_TYPE,
         "torch.Tensor": _TENSOR_TYPE,
         "torch.Size": Size,
         "torch.device": Device,
         "_codecs.encode": _encode,
         "builtins.bytearray": bytearray,
         "builtins.set": set,
         "builtins.complex": complex,
         "torch.storage.UntypedStorage": _StorageType(numpy.dtype(numpy.uint8)),
         "torch.UntypedStorage": _StorageType(numpy.dtype(numpy.uint8)),
         "torch.BFloat16Storage": _StorageType(_BFLOAT16)}
    for np_name, cls in _STORAGE.items():
        g[f"torch.{cls}"] = _StorageType(numpy.dtype(np_name))
    for d in _dtype._from_np.values():
        g[f"torch.{d.name}"] = d
    return g


def _encode(obj, encoding="latin1"):
    """``_codecs.encode``: how protocol-2 pickles spell bytes."""
    return obj.encode(encoding)


_ALLOWED = _allowed()
_SAFE = {}  # added by add_safe_globals: "module.name" -> object


def add_safe_globals(safe_globals):
    """Allow these classes/functions in ``load(weights_only=True)``."""
    for obj in safe_globals:
        _SAFE[f"{obj.__module__}.{obj.__qualname__}"] = obj


def get_safe_globals():
    return list(_SAFE.values())


class safe_globals:
    """Context manager: ``add_safe_globals`` for the duration of the block."""

    def __init__(self, safe_globals):
        self.globals = list(safe_globals)

    def __enter__(self):
        self._prev = dict(_SAFE)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _SAFE.clear()
        _SAFE.update(self._prev)


def _weights_only_error(full):
    full = full[len("builtins."):] if full.startswith("builtins.") else full  # as PyTorch
    return pickle.UnpicklingError(
        f"Weights only load failed. Unsupported global: GLOBAL {full} was not an allowed "
        f"global by default. Re-running `load` with `weights_only=False` will likely succeed, "
        f"but it can result in arbitrary code execution: do it only if you got the file from "
        f"a trusted source. Alternatively allow this global with "
        f"`retrograd.serialization.add_safe_globals([{full}])`.")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix, weights_only, map_fn):
        super().__init__(file, encoding="utf-8")
        self.zf, self.prefix, self.weights_only = zf, prefix, weights_only
        self.map_fn = map_fn  # a map_location callable, or None
        self.raw = {}      # key -> bytearray
        self.typed = {}    # (key, dtype) -> array

    def find_class(self, module, name):
        # protocol 2 spells Python 3 names the Python 2 way (__builtin__.print)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        obj = _ALLOWED.get(full)
        if obj is None:
            obj = _SAFE.get(full)
        if obj is not None:
            return obj
        if self.weights_only or module == "torch" or module.startswith("torch."):
            if not self.weights_only:
                raise pickle.UnpicklingError(f"cannot load {full}: retrograd does not read "
                                             f"this PyTorch object")
            raise _weights_only_error(full)
        return super().find_class(module, name)

    def _read(self, name):
        """An entry's bytes, read once into a writable buffer (tensors view it)."""
        buf = bytearray(self.zf.getinfo(name).file_size)
        with self.zf.open(name) as fh:
            view, n = memoryview(buf), 0
            while n < len(buf):
                got = fh.readinto(view[n:])
                if not got:
                    raise RuntimeError(f"truncated checkpoint: entry {name} ends early")
                n += got
        return buf

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"unsupported persistent id encountered: {pid!r}")
        _, kind, key, location, numel = pid
        dtype = kind.dtype
        arr = self.typed.get((key, str(dtype)))
        if arr is None:
            raw = self.raw.get(key)
            if raw is None:
                raw = self.raw[key] = self._read(f"{self.prefix}data/{key}")
            if dtype is _BFLOAT16:
                warnings.warn("bfloat16 tensors are loaded as float32 (exactly): retrograd "
                              "has no bfloat16", UserWarning, stacklevel=2)
                bits = numpy.frombuffer(raw, "<u2").astype(numpy.uint32) << 16
                arr = bits.view(numpy.float32)
            else:
                arr = numpy.frombuffer(raw, dtype.newbyteorder("<"))
                if not arr.dtype.isnative:
                    arr = arr.astype(dtype)
            self.typed[(key, str(dtype))] = arr
            moved = arr if self.map_fn is None else self.map_fn(arr, location)
            if moved is not None and moved is not arr:
                raise NotImplementedError("a map_location callable may only keep each storage "
                                          "on the CPU (as `lambda storage, loc: storage` does)")
        return arr


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what ``save`` or ``torch.save`` wrote (a path or binary file).

    weights_only (default True, as in PyTorch): only tensors, containers and Python values
    may be in the file; anything else raises ``pickle.UnpicklingError`` naming it.
    map_location: None, a device (tensors are read onto the CPU, then moved there), a
    dict {saved location: device} sending every location to the CPU, or a callable
    ``(storage, location)`` that keeps storages on the CPU. ``pickle_module``
    and ``pickle_load_args`` are accepted for PyTorch's signature only.

    >>> state = retrograd.load("model.pt")
    """
    if mmap:
        raise NotImplementedError("load(mmap=True) is not supported: the file is read into "
                                  "memory")
    if weights_only is None:
        weights_only = True
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "rb") if own else f
    try:
        if not zipfile.is_zipfile(fh):
            raise RuntimeError("retrograd.load reads PyTorch's zip format (torch.save since "
                               "1.6); this file is in another (legacy or unknown) format")
        fh.seek(0)
        with zipfile.ZipFile(fh) as zf:
            pkl = next((n for n in zf.namelist() if n.endswith("/data.pkl")
                        and n.count("/") == 1), None)
            if pkl is None:
                raise RuntimeError("not a PyTorch checkpoint: no <name>/data.pkl in the archive")
            prefix = pkl[:-len("data.pkl")]
            map_fn = map_location if callable(map_location) and \
                not isinstance(map_location, (str, Device)) else None
            unpickler = _Unpickler(io.BytesIO(zf.read(pkl)), zf, prefix, weights_only, map_fn)
            obj = unpickler.load()
    finally:
        if own:
            fh.close()
    return _map_location(obj, map_location)


def _map_location(obj, map_location):
    if map_location is None:
        return obj
    if isinstance(map_location, dict):
        if any(Device(v).type != "cpu" for v in map_location.values()):
            raise NotImplementedError("load(map_location=<dict>) can only map to the CPU")
        return obj
    if callable(map_location) and not isinstance(map_location, (str, Device)):
        return obj  # applied to each storage while reading
    dev = Device(map_location) if not isinstance(map_location, Device) else map_location
    if dev.type == "cpu":
        return obj
    return _move(obj, dev)


def _move(obj, dev):
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, dict):
        return type(obj)((k, _move(v, dev)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_move(v, dev) for v in obj)
    return obj
