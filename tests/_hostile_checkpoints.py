"""A corpus of hostile checkpoints, built in code (no binaries in the repository).

``corpus()`` returns ``Case``s: a file's bytes, the exception ``retrograd.load`` must raise
(None: it loads), and where PyTorch 2.13 deliberately differs, the type it raises and
why. Kinds: ``bounds`` (a tensor reaching outside its storage), ``state`` (a file trying
to change allowlisted globals for the whole process), ``alloc`` (a file asking for more
memory than it holds), ``archive`` (bad zip structure), ``pickle`` (bad pickle streams).

``snapshot()`` is the process-wide state a hostile load must leave byte-for-byte as it was.
"""

import collections
import io
import pickle
import struct
import warnings
import zipfile
from typing import NamedTuple

import retrograd
from retrograd import _checkpoint_reader, _dtype, serialization
from retrograd.backend import Device

UnpicklingError = pickle.UnpicklingError
F4 = struct.pack("<4f", 1., 2., 3., 4.)


class Case(NamedTuple):
    name: str
    kind: str
    data: bytes
    expect: type = None       # what retrograd.load raises (None: it loads)
    torch_expect: object = "same"  # what torch.load raises, where it differs; "skip": unsafe
    why: str = ""             # the reason for a deliberate difference


# ---- a pickle assembler ----------------------------------------------------------------------

def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def uni(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def num(n):
    """An int or float the way protocol 2 writes it."""
    return pickle.dumps(n, 2)[2:-1]


def tup(*items):
    return b"(" + b"".join(items) + b"t"


def pkl(*ops):
    return b"\x80\x02" + b"".join(ops) + b"."


def storage_pid(numel=4, cls="FloatStorage", key="0", location="cpu"):
    module, _, name = ("torch." + cls).rpartition(".")
    return tup(uni("storage"), glob(module, name), uni(key) if isinstance(key, str) else
               num(key), uni(location), num(numel)) + b"Q"


def ints(values):
    return tup(*(num(v) for v in values))


def tensor(numel=4, offset=0, size=(4,), stride=(1,), cls="FloatStorage", requires_grad=False,
           storage=None):
    """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``."""
    return (glob("torch._utils", "_rebuild_tensor_v2")
            + tup(storage if storage is not None else storage_pid(numel, cls),
                  num(offset), ints(size) if isinstance(size, tuple) else size,
                  ints(stride) if isinstance(stride, tuple) else stride,
                  b"\x88" if requires_grad else b"\x89",
                  glob("collections", "OrderedDict") + b")R")
            + b"R")


# ---- archives --------------------------------------------------------------------------------

def archive(data_pkl, entries=None, name="archive", version=b"3\n", method=zipfile.ZIP_STORED):
    """A zip with ``<name>/data.pkl``, the given ``{entry: bytes}`` and a version record."""
    entries = {"data/0": F4} if entries is None else entries
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr(f"{name}/data.pkl", data_pkl)
        for k, v in entries.items():
            zf.writestr(f"{name}/{k}", v)
        if version is not None:
            zf.writestr(f"{name}/version", version)
    return buf.getvalue()


def _central_headers(data):
    """Offsets of each central-directory record in a zip's bytes."""
    out, at = [], data.find(b"PK\x01\x02")
    while at >= 0:
        out.append(at)
        at = data.find(b"PK\x01\x02", at + 4)
    return out


def declare_size(data, entry, size):
    """The zip with ``entry``'s uncompressed size declared as ``size`` (both headers)."""
    data = bytearray(data)
    for at in _central_headers(bytes(data)):
        n = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46:at + 46 + n]).decode() == entry:
            struct.pack_into("<I", data, at + 24, size)
            local = struct.unpack_from("<I", data, at + 42)[0]
            struct.pack_into("<I", data, local + 22, size)
    return bytes(data)


def point_entry_at(data, entry, other):
    """The zip with ``entry``'s central record pointing at ``other``'s bytes (overlap)."""
    data = bytearray(data)
    offsets = {}
    for at in _central_headers(bytes(data)):
        n = struct.unpack_from("<H", data, at + 28)[0]
        offsets[bytes(data[at + 46:at + 46 + n]).decode()] = at
    src = offsets[other]
    for field, size in ((16, 4), (20, 4), (24, 4), (10, 2), (42, 4)):  # crc, sizes, method
        data[offsets[entry] + field:offsets[entry] + field + size] = \
            data[src + field:src + field + size]
    return bytes(data)


def valid_pickle():
    return pkl(b"}" + uni("w") + tensor() + b"s")


# ---- the corpus ------------------------------------------------------------------------------

def _bounds():
    big = 2 ** 20
    yield Case("numel_2_20_storage_of_4", "bounds",
               archive(pkl(tensor(numel=big, size=(big,)))), RuntimeError)
    yield Case("numel_2_26_storage_of_4", "bounds",
               archive(pkl(tensor(numel=2 ** 26, size=(2 ** 26,)))), RuntimeError)
    yield Case("size_2_20_over_storage_of_4", "bounds",
               archive(pkl(tensor(size=(big,)))), RuntimeError)
    yield Case("size_2_26_over_storage_of_4", "bounds",
               archive(pkl(tensor(size=(2 ** 26,)))), RuntimeError)
    yield Case("negative_offset", "bounds", archive(pkl(tensor(offset=-1, size=(2,)))),
               RuntimeError)
    yield Case("offset_past_end", "bounds", archive(pkl(tensor(offset=3, size=(2,)))),
               RuntimeError)
    yield Case("huge_offset", "bounds", archive(pkl(tensor(offset=2 ** 62, size=(1,)))),
               RuntimeError)
    yield Case("negative_stride", "bounds",
               archive(pkl(tensor(offset=3, size=(4,), stride=(-1,)))), RuntimeError)
    yield Case("stride_past_end", "bounds", archive(pkl(tensor(size=(2,), stride=(5,)))),
               RuntimeError)
    yield Case("2d_strides_past_end", "bounds",
               archive(pkl(tensor(size=(2, 2), stride=(3, 1)))), RuntimeError)
    yield Case("negative_size", "bounds", archive(pkl(tensor(size=(-2,)))), RuntimeError)
    yield Case("negative_size_pair", "bounds",
               archive(pkl(tensor(size=(-1, -4), stride=(1, 1)))), RuntimeError)
    yield Case("size_stride_lengths_differ", "bounds",
               archive(pkl(tensor(size=(2, 2), stride=(1,)))), RuntimeError)
    yield Case("65_dimensions", "bounds",
               archive(pkl(tensor(size=(1,) * 65, stride=(1,) * 65))), RuntimeError,
               None, "PyTorch allows more than 64 dimensions; NumPy does not")
    yield Case("zero_stride_2_62_elements", "bounds",
               archive(pkl(tensor(size=(2 ** 31, 2 ** 31), stride=(0, 0)))), RuntimeError,
               None, "PyTorch makes the 2**62-element broadcast view; NumPy cannot")
    yield Case("float_size", "bounds", archive(pkl(tensor(size=num(2.5) + b"\x85"))),
               TypeError)
    yield Case("string_stride", "bounds", archive(pkl(tensor(stride=uni("x") + b"\x85"))),
               TypeError)
    yield Case("storage_is_an_int", "bounds", archive(pkl(tensor(storage=num(7)))),
               TypeError, AttributeError, "PyTorch calls .dtype on whatever the storage is")
    yield Case("negative_numel", "bounds", archive(pkl(tensor(numel=-1))), RuntimeError,
               TypeError, "PyTorch's TypeError comes from its C++ binding rejecting a "
               "negative byte count")
    yield Case("numel_is_a_string", "bounds", archive(pkl(tensor(numel="4"))), RuntimeError,
               TypeError, "PyTorch's TypeError comes from multiplying a str")
    yield Case("integer_requires_grad", "bounds",
               archive(pkl(tensor(cls="LongStorage", requires_grad=True)), {"data/0": F4 * 2}),
               RuntimeError)
    v3 = glob("torch._utils", "_rebuild_tensor_v3")
    yield Case("v3_dtype_not_a_dtype", "bounds",
               archive(pkl(v3 + tup(storage_pid(16, "storage.UntypedStorage"), num(0), ints((4,)),
                                    ints((1,)), b"\x89", glob("collections", "OrderedDict")
                                    + b")R", uni("float32")) + b"R"), {"data/0": F4}),
               TypeError)
    yield Case("torch_UntypedStorage_is_not_allowlisted", "bounds",
               archive(pkl(tensor(cls="UntypedStorage"))), UnpicklingError)
    yield Case("v3_past_end", "bounds",
               archive(pkl(v3 + tup(storage_pid(15, "storage.UntypedStorage"), num(0), ints((4,)),
                                    ints((1,)), b"\x89", glob("collections", "OrderedDict")
                                    + b")R", glob("torch", "float32")) + b"R"),
                       {"data/0": F4[:15]}), RuntimeError)
    ftype = glob("torch._tensor", "_rebuild_from_type_v2")
    yield Case("rebuild_from_type_calls_a_non_rebuild", "bounds",
               archive(pkl(ftype + tup(glob("__builtin__", "bytearray"),
                                       glob("torch", "Tensor"), tup(num(2 ** 33)), b"}")
                           + b"R")),
               UnpicklingError, "skip", "PyTorch would call bytearray(2**33): 8 GiB")
    yield Case("parameter_of_a_string", "bounds",
               archive(pkl(glob("torch._utils", "_rebuild_parameter")
                           + tup(uni("x"), b"\x88", glob("collections", "OrderedDict")
                                 + b")R") + b"R")),
               TypeError, AttributeError, "PyTorch calls .detach() on whatever data is")


def _state():
    """BUILD/SETITEMS/APPENDS on allowlisted globals: refused, as PyTorch refuses them."""
    build_on = {"FloatStorage_dtype": (glob("torch", "FloatStorage"),
                                       tup(b"N", b"}" + uni("dtype") + glob("torch", "int8")
                                           + b"s")),
                "Size_len": (glob("torch", "Size"),
                             tup(b"N", b"}" + uni("__len__") + glob("__builtin__", "complex")
                                 + b"s")),
                "OrderedDict_class": (glob("collections", "OrderedDict"),
                                      b"}" + uni("__repr__") + glob("__builtin__", "set")
                                      + b"s"),
                "float32_itemsize": (glob("torch", "float32"),
                                     tup(b"N", b"}" + uni("itemsize") + num(8) + b"s")),
                "device_instance": (glob("torch", "device") + tup(uni("cpu")) + b"R",
                                    tup(b"N", b"}" + uni("type") + uni("cuda") + b"s")),
                "rebuild_function": (glob("torch._utils", "_rebuild_tensor_v2"),
                                     b"}" + uni("__defaults__") + tup(num(1)) + b"s")}
    for name, (target, state) in build_on.items():
        yield Case(f"build_on_{name}", "state", archive(pkl(target + state + b"b")),
                   UnpicklingError, *((AttributeError, "PyTorch lets BUILD reach the device, "
                                       "whose C type has no __dict__")
                                      if name == "device_instance" else ()))
    yield Case("setitems_on_Size_class", "state",
               archive(pkl(glob("torch", "Size") + b"(" + uni("x") + num(1) + b"u")),
               UnpicklingError)
    yield Case("setitem_on_allowlist_dict_value", "state",
               archive(pkl(glob("torch", "float32") + uni("name") + uni("int8") + b"s")),
               UnpicklingError)
    yield Case("appends_to_set_class", "state",
               archive(pkl(glob("__builtin__", "set") + b"(" + num(1) + b"e")),
               UnpicklingError)
    yield Case("newobj_on_a_function", "state",
               archive(pkl(glob("torch._utils", "_rebuild_tensor_v2") + b")\x81")),
               UnpicklingError, TypeError, "PyTorch calls __new__ on whatever it is given")
    for module, name in (("os", "system"), ("posix", "system"), ("__builtin__", "eval"),
                         ("builtins", "getattr"), ("subprocess", "Popen"),
                         ("copyreg", "_reconstructor"), ("numpy", "load"),
                         ("retrograd.serialization", "load"), ("sys", "modules")):
        yield Case(f"global_{module}_{name}", "state",
                   archive(pkl(glob(module, name) + tup(uni("echo pwned")) + b"R")),
                   UnpicklingError)
    yield Case("reduce_payload_os_system", "state",
               archive(b"cos\nsystem\n(S'echo pwned'\ntR."), UnpicklingError)
    yield Case("complex_of_a_huge_int", "state",
               archive(pkl(glob("__builtin__", "complex") + tup(num(10 ** 400)) + b"R")),
               UnpicklingError, OverflowError, "load raises only its documented types")
    yield Case("bytearray_with_an_unknown_codec", "state",
               archive(pkl(glob("__builtin__", "bytearray") + tup(uni("x"), uni("no-codec"))
                           + b"R")),
               UnpicklingError, LookupError, "load raises only its documented types")
    yield Case("reduce_on_a_built_object", "state",
               archive(pkl(b"]" + tup(num(1)) + b"R")), UnpicklingError)
    yield Case("persistent_id_not_storage", "state",
               archive(pkl(tup(uni("module"), uni("os")) + b"Q")), UnpicklingError)
    yield Case("persistent_id_an_int", "state", archive(pkl(num(3) + b"Q")),
               UnpicklingError, AssertionError, "PyTorch's interpreter passes ints on")


def _alloc():
    """A small file asking for much more memory than it holds."""
    gib4 = 2 ** 30  # float32 elements
    small = archive(pkl(tensor(numel=gib4, size=(gib4,))), {"data/0": F4})
    yield Case("1kb_file_declares_4gib", "alloc",
               declare_size(small, "archive/data/0", 2 ** 32 - 4),
               RuntimeError)
    deflated = archive(pkl(tensor(numel=gib4, size=(gib4,))), {"data/0": F4},
                       method=zipfile.ZIP_DEFLATED)
    yield Case("deflated_entry_declares_4gib", "alloc",
               declare_size(deflated, "archive/data/0", 2 ** 32 - 4), RuntimeError)
    yield Case("honest_deflate_of_4mib_zeros", "alloc",
               archive(pkl(tensor(numel=1 << 20, size=(1 << 20,))), {"data/0": b"\0" * (1 << 22)},
                       method=zipfile.ZIP_DEFLATED), None, "same",
               "a few KB that really inflate to 4 MiB, within deflate's ratio: it loads")
    two = archive(pkl(b"}(" + uni("a") + tensor() + uni("b")
                      + tensor(storage=storage_pid(key="1")) + b"u"),
                  {"data/0": F4, "data/1": F4})
    yield Case("overlapping_entries", "alloc", point_entry_at(two, "archive/data/1",
                                                                "archive/data/0"),
               RuntimeError, None, "PyTorch reads both entries from the same bytes")
    yield Case("two_entries_not_overlapping", "alloc", two, None)
    yield Case("bytearray_of_2_33", "alloc",
               archive(pkl(glob("__builtin__", "bytearray") + tup(num(2 ** 33)) + b"R")),
               UnpicklingError, "skip", "PyTorch allocates the 8 GiB")
    n = 20000  # a list of n items, then Size(list) n times: n**2 copies from a ~200 KB pickle
    amplify = b"]q\x00(" + b"N" * n + b"e" + glob("torch", "Size") + b"q\x01"
    amplify += b"(" + (b"h\x01h\x00\x85R" * n) + b"t"
    yield Case("size_of_big_list_repeated", "alloc", archive(pkl(amplify)), UnpicklingError,
               "skip", "PyTorch makes all n**2 copies (3.2 GB)")
    yield Case("unicode_declares_4gib", "alloc",
               archive(b"\x80\x02X\xfc\xff\xff\xffabc."), UnpicklingError, EOFError,
               "PyTorch reads the 4 bytes there are, then runs out of input")


def _archive():
    v = valid_pickle()
    yield Case("empty_file", "archive", b"", EOFError)
    yield Case("garbage", "archive", b"hello world garbage", UnpicklingError, KeyError,
               "PyTorch's interpreter lets a memo miss out as KeyError")
    yield Case("random_bytes", "archive", bytes(range(7, 200)), UnpicklingError)
    yield Case("protocol_4_pickle", "archive", pickle.dumps({"a": 1}), UnpicklingError)
    yield Case("protocol_2_dict_not_magic", "archive", pickle.dumps({"a": 1}, 2), RuntimeError)
    yield Case("legacy_magic_number", "archive", pickle.dumps(0x1950a86a20f9469cfc6c, 2),
               RuntimeError, EOFError, "PyTorch reads on into the legacy format")
    yield Case("zip_magic_only", "archive", b"PK\x03\x04", RuntimeError)
    full = archive(v)
    for cut in (10, len(full) // 2, len(full) - 30, len(full) - 1):
        yield Case(f"truncated_at_{cut}", "archive", full[:cut], RuntimeError)
    yield Case("empty_zip", "archive", _zip([]), UnpicklingError)
    yield Case("entry_outside_archive_dir", "archive",
               _zip([("archive/data.pkl", v), ("archive/data/0", F4),
                     ("archive/version", b"3\n"), ("../../etc/passwd", b"x")]), RuntimeError)
    yield Case("archive_dir_is_dotdot", "archive", archive(v, name=".."), None)
    yield Case("absolute_entry_names", "archive", archive(v, name="/abs"), RuntimeError)
    yield Case("entries_in_two_dirs", "archive",
               _zip([("archive/data.pkl", v), ("other/data/0", F4),
                     ("archive/version", b"3\n")]), RuntimeError)
    yield Case("no_directory", "archive",
               _zip([("data.pkl", v), ("data/0", F4), ("version", b"3\n")]), RuntimeError)
    yield Case("storage_key_traversal", "archive",
               archive(pkl(tensor(storage=storage_pid(key="../data.pkl")))), RuntimeError)
    yield Case("storage_key_int", "archive", archive(pkl(tensor(storage=storage_pid(key=0)))),
               None)
    yield Case("missing_storage_entry", "archive", archive(v, {}), RuntimeError)
    yield Case("storage_entry_short", "archive", archive(v, {"data/0": F4[:8]}), RuntimeError)
    yield Case("storage_entry_long", "archive", archive(v, {"data/0": F4 * 2}), RuntimeError)
    yield Case("duplicate_entry", "archive",
               _zip([("archive/data.pkl", v), ("archive/data/0", F4),
                     ("archive/version", b"3\n"), ("archive/data/0", F4 * 2)]), RuntimeError,
               None, "PyTorch reads the first of two same-named entries; retrograd refuses "
               "the ambiguity")
    yield Case("no_version", "archive", archive(v, version=None), RuntimeError)
    yield Case("version_99", "archive", archive(v, version=b"99\n"), RuntimeError)
    yield Case("version_garbage", "archive", archive(v, version=b"abc\n"), RuntimeError)
    yield Case("bad_byteorder", "archive", archive(v, {"data/0": F4, "byteorder": b"middle"}),
               ValueError)
    yield Case("torchscript_archive", "archive", archive(v, {"data/0": F4,
                                                            "constants.pkl": b"x"}),
               RuntimeError)
    yield Case("bzip2_entry", "archive", archive(v, method=zipfile.ZIP_BZIP2), RuntimeError)
    yield Case("lzma_entry", "archive", archive(v, method=zipfile.ZIP_LZMA), RuntimeError)
    crc = bytearray(full)
    crc[crc.find(F4)] ^= 0xff  # the storage's bytes no longer match their CRC
    yield Case("storage_crc_mismatch", "archive", bytes(crc), RuntimeError, None,
               "PyTorch does not check a stored entry's CRC")
    corrupt = bytearray(archive(v, method=zipfile.ZIP_DEFLATED))
    at = corrupt.find(b"archive/data/0") + len("archive/data/0")
    corrupt[at:at + 6] = b"\xff" * 6  # an invalid deflate stream
    yield Case("corrupt_deflate_stream", "archive", bytes(corrupt), RuntimeError, None,
               "PyTorch inflates what it can and checks no CRC: it loads garbage")


def _zip(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: that is the case
        for n, d in entries:
            zf.writestr(n, d)
    return buf.getvalue()


def _pickles():
    """Malformed pickles inside a well-formed archive."""
    t = tensor()
    yield Case("stop_on_empty_stack", "pickle", archive(b"\x80\x02."), UnpicklingError,
               IndexError, "PyTorch's interpreter lets IndexError out")
    yield Case("no_stop", "pickle", archive(b"\x80\x02N"), EOFError)
    yield Case("memo_miss", "pickle", archive(pkl(b"h\x05")), UnpicklingError, KeyError,
               "PyTorch's interpreter lets KeyError out")
    yield Case("reduce_on_empty_stack", "pickle", archive(pkl(b"R")), UnpicklingError,
               IndexError, "PyTorch's interpreter lets IndexError out")
    yield Case("tuple_without_mark", "pickle", archive(pkl(b"Nt")), UnpicklingError,
               IndexError, "PyTorch's interpreter lets IndexError out")
    yield Case("unsupported_opcode_frame", "pickle", archive(b"\x80\x04\x95" + b"\0" * 8 + b"N."),
               UnpicklingError)
    yield Case("text_string_opcode", "pickle", archive(b"S'abc'\n."), UnpicklingError)
    yield Case("truncated_binint", "pickle", archive(b"\x80\x02J\x01\x02"), UnpicklingError,
               struct.error, "PyTorch's interpreter lets struct.error out")
    yield Case("global_without_newline", "pickle", archive(b"\x80\x02ctorch"),
               UnpicklingError)
    yield Case("bad_utf8", "pickle", archive(b"\x80\x02X\x02\x00\x00\x00\xff\xfe."),
               UnpicklingError, UnicodeDecodeError, "PyTorch lets UnicodeDecodeError out")
    yield Case("setitems_odd_items", "pickle", archive(pkl(b"}(" + uni("a") + b"u")),
               UnpicklingError, IndexError, "PyTorch's interpreter lets IndexError out")
    deep = b")" + b"\x85" * 10 ** 6  # ((((),),),) a million deep, from a 1 MB pickle
    yield Case("million_deep_tuple_as_dict_key", "pickle", archive(pkl(b"}" + deep + b"Ns")),
               UnpicklingError, "skip", "PyTorch overflows the C stack hashing it: a segfault")
    yield Case("million_deep_tuple_in_a_set", "pickle",
               archive(pkl(glob("__builtin__", "set") + deep + b"\x85\x85R")),
               UnpicklingError, "skip", "PyTorch overflows the C stack hashing it: a segfault")
    yield Case("million_deep_tuple_as_a_value", "pickle", archive(pkl(deep)), UnpicklingError,
               None, "PyTorch returns it, a landmine for the caller's first hash of it")
    yield Case("tuples_1000_deep", "pickle", archive(pkl(b"}" + b")" + b"\x85" * 999 + b"Ns")),
               None)
    yield Case("valid_tensor_in_a_dict", "pickle", archive(pkl(b"}" + uni("w") + t + b"s")),
               None)


def corpus():
    return [*_bounds(), *_state(), *_alloc(), *_archive(), *_pickles()]


# ---- process-wide state ----------------------------------------------------------------------

def _describe(obj):
    """What can be changed of ``obj``: its attributes (by identity), slots, and values."""
    parts = [type(obj).__qualname__]
    for attr in getattr(type(obj), "__slots__", ()):
        if hasattr(obj, attr):
            parts.append((attr, repr(getattr(obj, attr))))
    if hasattr(obj, "__dict__"):
        parts.append(sorted((k, id(v), repr(v)[:200]) for k, v in vars(obj).items()))
    for attr in ("__code__", "__defaults__", "__kwdefaults__"):
        if hasattr(obj, attr):
            parts.append((attr, id(getattr(obj, attr)), repr(getattr(obj, attr))))
    return repr(parts)


def snapshot():
    """Every allowlisted global and class a load can reach, described byte for byte."""
    objs = dict(serialization._ALLOWED)
    objs.update({"Size": retrograd.Size, "Device": Device, "Tensor": retrograd.Tensor,
                 "OrderedDict": collections.OrderedDict, "Counter": collections.Counter,
                 "StorageType": _checkpoint_reader.StorageType, "dtype": _dtype.dtype,
                 "cpu": retrograd.device("cpu")})
    state = {name: _describe(obj) for name, obj in objs.items()}
    state["_ALLOWED"] = repr(sorted((k, id(v)) for k, v in serialization._ALLOWED.items()))
    state["_SAFE"] = repr(sorted(serialization._SAFE))
    state["_from_np"] = repr(sorted((str(k), id(v)) for k, v in _dtype._from_np.items()))
    return state


# ---- the subprocess runner -------------------------------------------------------------------

def _in_bounds(obj):
    """Every tensor in ``obj`` views memory inside the array it was cut from."""
    import numpy
    from numpy.lib.array_utils import byte_bounds
    if isinstance(obj, retrograd.Tensor):
        arr = obj._data
        root = arr
        while isinstance(root.base, numpy.ndarray):
            root = root.base
        lo, hi = byte_bounds(arr)
        rlo, rhi = byte_bounds(root)
        return arr.size == 0 or rlo <= lo <= hi <= rhi
    if isinstance(obj, dict):
        return all(_in_bounds(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_in_bounds(v) for v in obj)
    return True


def main():
    """Load every case; one JSON line per case (``start`` first, so a crash names it), with
    how much the peak RSS grew while loading it (``ru_maxrss`` is a high-water mark, so
    a case that needs less than the peak so far reads 0)."""
    import json
    import resource
    import sys
    warnings.simplefilter("ignore")
    for case in corpus():
        print(json.dumps({"start": case.name}), flush=True)
        before = snapshot()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            obj = retrograd.load(io.BytesIO(case.data))
        except Exception as e:  # the test compares the type with the case's expectation
            outcome, message, bounded = type(e).__name__, str(e), True
        else:
            outcome, message, bounded = None, "", _in_bounds(obj)
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) * 1024
        obj = None
        after = snapshot()
        changed = [k for k in before if before[k] != after.get(k)]
        print(json.dumps({"name": case.name, "raised": outcome, "message": message[:300],
                          "changed": changed, "in_bounds": bounded, "peak_rss_growth": grown,
                          "size": len(case.data)}), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
