"""The CuPy API retrograd calls exists in the installed CuPy, checked without a GPU.

CuPy imports on a machine without a driver (only array creation needs one), so wherever
it is installed these tests check what code written against it can get wrong unseen:
the names the emulator exposes (:mod:`retrograd.backend._cupy_names`, which the device
tests trust), and every ``cupy.<...>`` attribute chain and keyword the sources use on
CuPy's module (found by reading them), as far as CuPy's own signatures tell.
Skipped where CuPy is not installed.
"""

import ast
import inspect
import pathlib
import re

import numpy
import pytest

from retrograd.backend import _cupy_names

cupy = pytest.importorskip("cupy")

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "retrograd"

# calls that return the cupy module, and the names it is bound to
_CUPY_CALLS = {"cupy", "_cupy", "cupy_or_raise"}
_CUPY_NAMES = {"cp"}


def _missing(names, obj):
    return sorted(n for n in names if not hasattr(obj, n))


def test_module_names_are_cupys():
    assert _missing(_cupy_names.MODULE, cupy) == []
    assert sorted(n for n in _cupy_names.NOT_PROVIDED if hasattr(cupy, n)) == []
    assert _missing(_cupy_names.NDARRAY_METHODS, cupy.ndarray) == []
    assert _missing(_cupy_names.LINALG, cupy.linalg) == []
    assert _missing(_cupy_names.FFT, cupy.fft) == []
    from cupy.lib import stride_tricks
    assert _missing(_cupy_names.STRIDE_TRICKS, stride_tricks) == []
    import cupyx.scipy.special
    assert _missing(_cupy_names.SPECIAL, cupyx.scipy.special) == []


def test_no_numpy_name_cupy_shares_is_left_out():
    """A name both modules have is in MODULE (the emulator would refuse it otherwise)."""
    shared = {n for n in dir(numpy) if not n.startswith("_")} & set(dir(cupy))
    modules = {"exceptions", "fft", "lib", "linalg", "polynomial", "random", "testing",
               "typing"}
    assert sorted(shared - _cupy_names.MODULE - modules) == []


def test_ndarray_flags_are_cupys():
    """CuPy's flags have no ``writeable`` (its arrays always are) and no ``contiguous``."""
    flags = cupy._core.flags.Flags
    assert _missing(_cupy_names.NDARRAY_FLAGS, flags) == []
    public = {n for n in dir(flags) if not n.startswith("_")}
    assert public == set(_cupy_names.NDARRAY_FLAGS)


def test_ndarray_protocols_are_cupys():
    """The Python protocols a CuPy array has, and those it lacks (``operator.index``
    and ``@=`` raise TypeError on it)."""
    for name in _cupy_names.NDARRAY_PROTOCOLS:
        assert hasattr(cupy.ndarray, name), name
    for name in _cupy_names.NDARRAY_NO_PROTOCOLS:
        assert not hasattr(cupy.ndarray, name), name


def _parameters(f):
    """``f``'s parameter names and whether it takes any keyword, from its signature or
    the one Cython writes on its docstring's first line; None when neither is there."""
    try:
        ps = inspect.signature(f).parameters.values()
        return ({p.name for p in ps},
                any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps))
    except (TypeError, ValueError):
        pass
    first = (getattr(f, "__doc__", None) or "").split("\n", 1)[0]
    m = re.match(r"^[\w.]+\((.*)\)", first)
    if m is None:
        return None
    names, var_kw = set(), False
    for part in m.group(1).split(","):
        part = part.split("=")[0].strip()
        if part.startswith("**"):
            var_kw = True
        elif part and part not in ("*", "/") and not part.startswith("*"):
            names.add(part.split()[-1])
    return names, var_kw


def test_method_keywords_are_cupys():
    assert set(_cupy_names.METHOD_KEYWORDS) == _cupy_names.NDARRAY_METHODS
    for name, keywords in _cupy_names.METHOD_KEYWORDS.items():
        names, var_kw = _parameters(getattr(cupy.ndarray, name))
        assert not var_kw and set(keywords) == names - {"self"}, name


def test_unsupported_keywords_are_refused_by_cupy():
    for name, refused in _cupy_names.UNSUPPORTED_KEYWORDS.items():
        f = getattr(cupy, name, None)
        got = None if f is None else _parameters(f)
        if got is None or got[1]:
            continue  # lu is cupyx.scipy.linalg's; einsum takes **kwargs and checks them
        assert set(refused).isdisjoint(got[0]), name


def _is_cupy(node):
    """Whether expression ``node`` is the cupy module as the sources name it."""
    if isinstance(node, ast.Name):
        return node.id in _CUPY_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in _CUPY_NAMES and isinstance(node.value, ast.Name)  # self.cp
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
        return name in _CUPY_CALLS and not node.args
    return False


def _chains():
    """``(file:line, ["cuda", "Stream"], call)`` for every attribute chain on the cupy
    module in the sources (``call``: the Call node when the chain is called)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or isinstance(parents.get(node),
                                                                 ast.Attribute):
                continue  # the outermost attribute of a chain only
            chain, base = [], node
            while isinstance(base, ast.Attribute) and not _is_cupy(base):
                chain.append(base.attr)
                base = base.value
            if not chain or not _is_cupy(base):
                continue
            parent = parents.get(node)
            call = parent if isinstance(parent, ast.Call) and parent.func is node else None
            found.append((f"{path.relative_to(SRC)}:{node.lineno}", chain[::-1], call))
    return found


def test_the_sources_find_cupy_chains():
    """The scan sees the runtime calls (so the next test is not vacuous)."""
    seen = {".".join(c) for _, c, _ in _chains()}
    assert {"cuda.runtime.getDeviceCount", "cuda.Device", "ElementwiseKernel",
            "cuda.Stream", "cuda.Event", "get_default_memory_pool"} <= seen


def test_every_cupy_chain_in_the_sources_exists_with_its_keywords():
    bad = []
    for where, chain, call in _chains():
        obj = cupy
        for i, attr in enumerate(chain):
            if not hasattr(obj, attr):
                bad.append(f"{where}: cupy.{'.'.join(chain[:i + 1])} does not exist")
                break
            obj = getattr(obj, attr)
        else:
            if call is None or not call.keywords:
                continue
            got = _parameters(obj)
            if got is None or got[1]:
                continue
            for kw in call.keywords:
                if kw.arg is not None and kw.arg not in got[0]:
                    bad.append(f"{where}: cupy.{'.'.join(chain)} takes no {kw.arg}=")
    assert bad == []


def test_the_objects_retrograd_reads_have_those_attributes():
    """Attributes read on CuPy's objects (not its module): on the class, or documented
    as an instance attribute (``~Stream.ptr``) where CuPy sets it in ``__init__``."""
    def has(cls, name):
        return hasattr(cls, name) or f"~{cls.__name__}.{name}" in (cls.__doc__ or "")

    for cls, names in ((cupy.cuda.Stream, ("ptr", "use", "wait_event", "done", "record",
                                           "synchronize", "null")),
                       (cupy.cuda.Event, ("ptr", "record", "done", "synchronize")),
                       (cupy.cuda.Device, ("id", "use")),
                       (cupy.cuda.MemoryPool, ("total_bytes", "used_bytes",
                                               "free_all_blocks")),
                       (cupy.cuda.PinnedMemoryPool, ("free_all_blocks",)),
                       (cupy.cuda.PinnedMemoryPointer, ("ptr",)),
                       (cupy.cuda.MemoryPointer, ("ptr",)),
                       (cupy.ndarray, ("get", "set", "device", "data", "base", "flags"))):
        assert [n for n in names if not has(cls, n)] == [], cls
    from cupy.cuda import nvtx
    assert callable(nvtx.RangePush) and callable(nvtx.RangePop)
