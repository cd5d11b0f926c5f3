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
import zipfile

import numpy

from . import _checkpoint_reader, _dtype, _weights_only_unpickler
from ._checkpoint_reader import STORAGE as _STORAGE
from ._tensor import Size, Tensor, wrap
from .backend import Device, device_of

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "safe_globals"]

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

_ALLOWED = _checkpoint_reader.allowed_globals()
_SAFE = {}  # added by add_safe_globals: "module.name" -> object
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c  # the first pickle of a pre-1.6 torch.save file
# what a bad file raises (PyTorch's types), re-raised with the file's name
_BAD_FILE = (pickle.UnpicklingError, EOFError, RuntimeError, ValueError, TypeError)


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


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global the file names (arbitrary code, by request)."""

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        obj = _ALLOWED.get(full, _SAFE.get(full))
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(f"cannot load {full}: retrograd does not read this "
                                         f"PyTorch object")
        return super().find_class(module, name)


def _unpickle(data, weights_only, persistent_load):
    if not weights_only:
        unpickler = _FullUnpickler(io.BytesIO(data), encoding="utf-8")
        unpickler.persistent_load = persistent_load
        return unpickler.load()
    allowed = {**_ALLOWED, **_SAFE}
    user_types = [v for v in _SAFE.values() if isinstance(v, type)]
    return _weights_only_unpickler.Unpickler(data, allowed, persistent_load,
                                             user_types).load()


def _refuse_storages(pid):
    raise pickle.UnpicklingError("unsupported persistent id encountered")


def _load_non_zip(fh):
    """What PyTorch does with a file that is not a zip archive: unpickle its first object,
    which a legacy (pre-1.6) file starts with; retrograd reads no further."""
    magic = _unpickle(fh.read(1 << 20), True, _refuse_storages)
    if type(magic) is not int or magic != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file? retrograd.load reads "
                           "PyTorch's zip format (torch.save since 1.6)")
    raise RuntimeError("this file is in PyTorch's legacy format (torch.save before 1.6): "
                       "retrograd.load reads only PyTorch's zip format")


def _load_zip(fh, weights_only, map_fn, restore):
    archive = _checkpoint_reader.Archive(fh)
    try:
        data = archive.read("data.pkl")
        storages = _checkpoint_reader.StorageReader(archive, map_fn, restore)
        return _unpickle(data, weights_only, storages)
    finally:
        archive.close()


def _source(f):
    """How an error names the file: its path, or the file object's name or type."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__}>"


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what ``save`` or ``torch.save`` wrote (a path or binary file).

    weights_only (default True, as in PyTorch): only tensors, containers and Python values
    may be in the file; anything else raises ``pickle.UnpicklingError`` naming it. A
    hostile file cannot read or write outside its storages, change any global, or make
    ``load`` take more memory than it holds: it raises PyTorch's exception type
    (``RuntimeError``, ``UnpicklingError``, ``EOFError``...) with the file's name.
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
    map_fn = map_location if callable(map_location) and \
        not isinstance(map_location, (str, Device)) else None
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "rb") if own else f
    try:
        start = fh.tell()
        is_zip = fh.read(4) == b"PK\x03\x04"  # as torch: the magic at the start, only
        fh.seek(start)
        obj = _load_zip(fh, weights_only, map_fn, map_location is None) if is_zip \
            else _load_non_zip(fh)
    except _BAD_FILE as e:
        if type(e) not in _BAD_FILE:  # a subclass (NotImplementedError...) stays as it is
            raise
        raise type(e)(f"{_source(f)}: {e}") from None
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
