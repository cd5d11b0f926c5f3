"""Reading a ``torch.save`` archive without trusting it: ``serialization.load``'s engine.

Every number a file declares is checked against what the file really holds before
memory is taken or a view is made:

- the archive: one top directory holding every entry (as PyTorch's reader requires), a
  ``version`` record, no two entries of one name, entries stored or deflated only,
  entries that do not overlap (an overlapping-entry zip bomb), and no entry declaring
  more bytes than its compressed bytes can produce (stored: exactly as many; deflated:
  at most 1032 per byte, deflate's own limit) -- so a 1 KB file cannot ask for 4 GiB;
- a storage: its entry's size must be exactly ``numel * itemsize`` (PyTorch's check);
- a tensor: storage offset, sizes and strides must be non-negative ints that reach only
  elements of its storage, checked before ``as_strided`` makes the view.

Errors are PyTorch's types: ``RuntimeError`` for a bad archive or tensor (naming the
entry), ``pickle.UnpicklingError``/``EOFError`` for a bad pickle, ``TypeError`` for an
argument of the wrong type.
"""

import collections
import math
import pickle
import zipfile
import zlib

import numpy

from . import _dtype
from ._tensor import Size, Tensor, wrap
from .backend import Device, gpu
from .nn.parameter import Parameter

# Legacy storage class names PyTorch pickles, by NumPy dtype (bfloat16: ml_dtypes').
STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
           "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
           "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
           "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage",
           "bfloat16": "BFloat16Storage"}
_MAX_VERSION = 10        # the newest archive version PyTorch 2.13 reads
_DEFLATE_MAX_RATIO = 1032  # deflate cannot expand one input byte to more output bytes
_LOCAL_HEADER = 30        # bytes of a zip local file header before its name
_MAX_DIMS = 64            # as PyTorch's dimension limit


# ---- the archive -----------------------------------------------------------------------

class Archive:
    """A zip archive checked as a whole before any entry is read (see module doc)."""

    def __init__(self, fh):
        try:
            self.zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        infos = self.zf.infolist()
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: no entries")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first[:first.index("/") + 1]
        if len(self.zf.NameToInfo) != len(infos):
            raise RuntimeError("the archive holds two entries of one name: which one is "
                               "meant is ambiguous")
        for info in infos:
            self._check_entry(info)
        self._check_no_overlap(infos)
        self.version = self._version()
        if self.has("constants.pkl"):
            raise RuntimeError("this is a TorchScript archive (torch.jit.save): retrograd "
                               "cannot load it")

    def _check_entry(self, info):
        name = info.filename
        if not name.startswith(self.prefix):
            raise RuntimeError(f"file in archive is not in a subdirectory {self.prefix}: "
                               f"{name}")
        if info.compress_type == zipfile.ZIP_STORED:
            limit = info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            limit = info.compress_size * _DEFLATE_MAX_RATIO
        else:
            raise RuntimeError(f"entry {name}: unsupported compression method "
                               f"{info.compress_type} (PyTorch reads stored and deflated "
                               f"entries only)")
        if info.file_size > limit:
            raise RuntimeError(f"entry {name} declares {info.file_size} bytes, more than its "
                               f"{info.compress_size} bytes in the file can hold")

    def _check_no_overlap(self, infos):
        """Each entry's bytes lie before the next entry's header and the central directory."""
        spans = sorted((i.header_offset, i.header_offset + _LOCAL_HEADER + i.compress_size,
                        i.filename) for i in infos)
        ends = [s[0] for s in spans[1:]] + [self.zf.start_dir]
        for (start, end, name), limit in zip(spans, ends, strict=True):
            if start < 0 or end > limit:
                raise RuntimeError(f"entry {name} overlaps another entry or the central "
                                   f"directory (a zip bomb?)")

    def _version(self):
        name = ".data/version" if self.has(".data/version") else "version"
        if not self.has(name):
            raise RuntimeError(f"no {self.prefix}version record: not a checkpoint written by "
                               f"torch.save")
        text = bytes(self.read(name)).strip()
        try:
            version = int(text)
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text[:32]!r} as an integer "
                               f"(entry {self.prefix}{name})") from None
        if not 1 <= version <= _MAX_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but "
                               f"the supported versions are 1 to {_MAX_VERSION}")
        return version

    def has(self, name):
        return self.prefix + name in self.zf.NameToInfo

    def byteorder(self):
        """'little' or 'big' (from the file's record; little when it has none)."""
        if not self.has("byteorder"):
            return "little"
        order = bytes(self.read("byteorder"))
        if order not in (b"little", b"big"):
            raise ValueError(f"Unknown endianness type: {order[:32].decode('latin1')}")
        return order.decode()

    def read(self, name, nbytes=None):
        """Entry ``<prefix><name>``'s bytes in a new writable buffer (tensors view it);
        ``nbytes``: the size the pickle declared, checked before memory is taken."""
        full = self.prefix + name
        info = self.zf.NameToInfo.get(full)
        if info is None:
            raise RuntimeError(f"failed locating file {full}: file not found")
        if nbytes is not None and info.file_size != nbytes:
            raise RuntimeError(f"record size ({info.file_size} bytes) of entry {full} does not "
                               f"match expected size ({nbytes} bytes)")
        buf = bytearray(info.file_size)
        try:
            with self.zf.open(info) as fh:
                view, n = memoryview(buf), 0
                while n < len(buf):
                    got = fh.readinto(view[n:])
                    if not got:
                        raise RuntimeError(f"truncated checkpoint: entry {full} ends after "
                                           f"{n} of its {len(buf)} bytes")
                    n += got
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise RuntimeError(f"entry {full} cannot be read: {e}") from None
        return buf

    def close(self):
        self.zf.close()


# ---- storages ----------------------------------------------------------------------------

class StorageType:
    """What ``torch.FloatStorage`` (and the other storage classes) unpickle to."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


class Storage:
    """A storage read from the file: its elements, the entry they came from, and the GPU
    its tensors go back to (None: they stay on the CPU)."""

    __slots__ = ("array", "name", "device")

    def __init__(self, array, name, device=None):
        self.array, self.name, self.device = array, name, device


class StorageReader:
    """``persistent_load``: each ``("storage", type, key, location, numel)`` id becomes a
    ``Storage``, every entry read once (storages of one key share its memory). With
    ``restore`` (no map_location), a storage saved on a GPU goes back to it where there is
    one, as PyTorch's load does."""

    def __init__(self, archive, map_fn, restore=False):
        self.archive, self.map_fn, self.restore = archive, map_fn, restore
        self.byteorder = archive.byteorder()
        self.raw = {}    # key -> bytearray
        self.typed = {}  # (key, NumPy dtype) -> Storage

    def __call__(self, pid):
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id encountered: a "
                                         f"{type(pid).__name__} of length {_len(pid)}")
        _, kind, key, location, numel = pid
        if type(kind) is not StorageType:
            raise pickle.UnpicklingError(f"persistent id: {type(kind).__name__} is not a "
                                         f"storage class")
        if type(key) not in (str, int) or type(location) is not str:
            raise pickle.UnpicklingError("persistent id: a storage's key and location must "
                                         "be strings")
        name = f"data/{key}"
        if type(numel) is not int or numel < 0:
            raise RuntimeError(f"storage {self.archive.prefix}{name}: invalid element count "
                               f"{_short(numel)}")
        dtype = kind.dtype
        storage = self.typed.get((key, dtype))
        if storage is None:
            storage = self.typed[(key, dtype)] = self._typed(key, name, dtype, numel)
            moved = storage.array if self.map_fn is None else \
                self.map_fn(storage.array, location)
            if moved is not None and moved is not storage.array:
                raise NotImplementedError("a map_location callable may only keep each storage "
                                          "on the CPU (as `lambda storage, loc: storage` does)")
            if self.restore and location.startswith("cuda") and gpu.cupy() is not None:
                storage.device = Device(location)
        elif storage.array.size != numel:
            raise RuntimeError(f"storage {self.archive.prefix}{name} is declared with "
                               f"{numel} and {storage.array.size} elements")
        return storage

    def _typed(self, key, name, dtype, numel):
        item = dtype.itemsize
        raw = self.raw.get(key)
        if raw is None:
            raw = self.raw[key] = self.archive.read(name, numel * item)
        elif len(raw) != numel * item:
            raise RuntimeError(f"record size ({len(raw)} bytes) of entry "
                               f"{self.archive.prefix}{name} does not match expected size "
                               f"({numel * item} bytes)")
        order = "<" if self.byteorder == "little" else ">"
        arr = numpy.frombuffer(raw, dtype.newbyteorder(order))
        if not arr.dtype.isnative:
            arr = arr.astype(dtype)
        return Storage(arr, self.archive.prefix + name)


# ---- rebuilding tensors -------------------------------------------------------------------

def _len(obj):
    return len(obj) if isinstance(obj, (tuple, list)) else "?"


def _short(obj):
    """``obj`` for a message, at most 60 characters of it."""
    text = repr(obj) if isinstance(obj, (int, float, str, bool, type(None))) else \
        f"a {type(obj).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _ints(value, what, name):
    if not isinstance(value, (tuple, list)) or not all(type(v) is int for v in value):
        raise TypeError(f"tensor in {name}: {what} must be a tuple of ints, got {_short(value)}")
    return tuple(value)


def _view(storage, storage_offset, size, stride):
    """The array ``storage[storage_offset:]`` viewed with ``size``/``stride`` (elements),
    once they are proven to reach only the storage's elements."""
    if type(storage) is not Storage:
        raise TypeError(f"a tensor's storage must come from the file's storages, got "
                        f"{_short(storage)}")
    arr, name = storage.array, storage.name
    if type(storage_offset) is not int:
        raise TypeError(f"tensor in {name}: storage offset must be an int, got "
                        f"{_short(storage_offset)}")
    size, stride = _ints(size, "size", name), _ints(stride, "stride", name)
    if len(size) != len(stride):
        raise RuntimeError(f"tensor in {name}: unequal size length ({len(size)}) and stride "
                           f"length ({len(stride)})")
    if len(size) > _MAX_DIMS:
        raise RuntimeError(f"tensor in {name}: {len(size)} dimensions, more than "
                           f"{_MAX_DIMS}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset} (in {name})")
    if any(n < 0 for n in size):
        raise RuntimeError(f"tensor in {name}: negative dimension in size {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"tensor in {name}: negative strides are not supported, got "
                           f"{list(stride)}")
    if 0 in size:
        return numpy.empty(size, arr.dtype)
    needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    item = arr.itemsize
    if needed > arr.size:
        raise RuntimeError(f"tensor in {name}: sizes {list(size)}, strides {list(stride)}, "
                           f"storage offset {storage_offset}, and itemsize {item} requiring a "
                           f"storage size of {needed * item} are out of bounds for storage of "
                           f"size {arr.size * item}")
    if math.prod(size) * item >= 2 ** 63:
        raise RuntimeError(f"tensor in {name}: {list(size)} elements are too many")
    return numpy.lib.stride_tricks.as_strided(arr[storage_offset:], shape=size,
                                              strides=[s * item for s in stride])


def _requires_grad(t, requires_grad):
    if type(requires_grad) is not bool:
        raise TypeError(f"requires_grad must be a bool, got {_short(requires_grad)}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """A tensor viewing ``storage`` (so tensors of one storage share memory)."""
    t = wrap(_view(storage, storage_offset, size, stride))
    return _requires_grad(t if storage.device is None else t.to(storage.device), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """A tensor of ``dtype`` viewing an untyped (byte) storage."""
    if type(storage) is not Storage or storage.array.dtype != numpy.uint8:
        raise TypeError(f"_rebuild_tensor_v3 needs an untyped storage, got {_short(storage)}")
    if type(dtype) is not _dtype.dtype:
        raise TypeError(f"tensor in {storage.name}: dtype must be a dtype, got "
                        f"{_short(dtype)}")
    raw = storage.array
    typed = raw[:raw.size - raw.size % dtype.itemsize].view(dtype.np)
    return _rebuild_tensor_v2(Storage(typed, storage.name, storage.device), storage_offset,
                              size, stride,
                              requires_grad, backward_hooks)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    if not isinstance(data, Tensor):
        raise TypeError(f"a Parameter's data must be a tensor, got {_short(data)}")
    if type(requires_grad) is not bool:
        raise TypeError(f"requires_grad must be a bool, got {_short(requires_grad)}")
    return Parameter(data, requires_grad)


PARAMETER_TYPE = object()  # what torch.nn.parameter.Parameter unpickles to
TENSOR_TYPE = object()     # torch.Tensor
_REBUILDS = (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor subclass (Parameter) or a tensor with attributes: the tensor, as a
    Parameter when it was one."""
    if not any(func is f for f in _REBUILDS) or type(args) is not tuple or \
            new_type is not PARAMETER_TYPE and new_type is not TENSOR_TYPE:
        raise pickle.UnpicklingError("_rebuild_from_type_v2 may only rebuild a tensor or a "
                                     "Parameter with a tensor rebuild function")
    t = func(*args)
    return _rebuild_parameter(t, t.requires_grad, None) if new_type is PARAMETER_TYPE else t


def _encode(obj, encoding="latin1"):
    """``_codecs.encode``: how protocol-2 pickles spell bytes (text codecs only)."""
    if type(obj) is not str or type(encoding) is not str:
        raise pickle.UnpicklingError("_codecs.encode takes a string and an encoding name")
    try:
        return obj.encode(encoding)
    except (LookupError, UnicodeError) as e:
        raise pickle.UnpicklingError(f"_codecs.encode: {e}") from None


def _bytearray(*args):
    """``bytearray`` from bytes or text, never from a size (``bytearray(2**40)`` would
    allocate what the file does not hold)."""
    if args and isinstance(args[0], int):
        raise pickle.UnpicklingError("bytearray(<int>) would allocate memory the file does "
                                     "not hold")
    return bytearray(*args)


def allowed_globals():
    """PyTorch's globals a weights-only load accepts, mapped to retrograd."""
    g = {"collections.OrderedDict": collections.OrderedDict,
         "collections.Counter": collections.Counter,
         "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
         "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
         "torch._utils._rebuild_parameter": _rebuild_parameter,
         "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
         "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
         "torch.nn.parameter.Parameter": PARAMETER_TYPE,
         "torch.Tensor": TENSOR_TYPE,
         "torch.Size": Size,
         "torch.device": Device,
         "_codecs.encode": _encode,
         "builtins.bytearray": _bytearray,
         "builtins.set": set,
         "builtins.complex": complex,
         "torch.storage.UntypedStorage": StorageType(numpy.dtype(numpy.uint8))}
    for np_name, cls in STORAGE.items():
        g[f"torch.{cls}"] = StorageType(_dtype._names[np_name].np)
    for d in _dtype._from_np.values():
        g[f"torch.{d.name}"] = d
    return g
