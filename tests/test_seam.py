"""The array seam: every array call goes through the module of the data
(``retrograd.backend.get_array_module``) or a backend function; NumPy is named only in
the backend package, in the declared NumPy kernels, and where the data is host data by
nature (interop: ``from_numpy``/``.numpy()``, file bytes, MPI buffers, what a viewer
renders or a printer prints).

A use is one reference to a name bound to NumPy (``import numpy``, ``import numpy as
np``, ``import numpy.lib...``, ``from numpy[...] import x``), resolved by scope, so a
parameter ``xp`` is not the ``xp`` of another function's ``import numpy as xp``.
``ALLOWED`` holds every other module that still names NumPy, with its count and why; the
counts only fall (a count below its entry fails the test until the entry is lowered).

``python tests/test_seam.py`` prints the per-module counts and the total outside the
backend (issue 13's acceptance figure).
"""

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "retrograd"

# NumPy is these modules' business: the array backend and the declared NumPy kernels.
FREE = ("retrograd.backend", "retrograd.ops._conv_numpy", "retrograd.ops._conv_winograd",
        "retrograd.ops._conv_direct")

# module: (uses, why); why starts "interop" (host data by nature), "seam" (the layer that
# maps retrograd to NumPy's vocabulary) or "to do".
ALLOWED = {
    "retrograd._checkpoint_reader": (
        6, "interop: bytes read from a checkpoint file, as host arrays"),
    "retrograd._creation": (
        12, "interop: data parsed on the host (Python sequences, NumPy arrays and scalars, "
        "from_numpy and as_tensor sharing a NumPy array, NumPy ints as sizes, strides and "
        "range ends); the filled and range functions make their arrays on the device "
        "(backend.on_device)"),
    "retrograd._dtype": (
        21, "seam: the dtype layer; every array module's dtypes are NumPy's, and a Python "
        "number is cast to one on the host as c10 casts it (checked_convert)"),
    "retrograd._random": (
        9, "interop: the host generator (NumPy's PCG64) and its state's bytes; devices draw "
        "there too"),
    "retrograd._tensor": (
        6, "interop: .numpy() and __array__ hand out the host array, wrap makes NumPy "
        "scalars 0-d arrays; the checks against NumPy's ndarray type are fast paths that only "
        "skip work"),
    "retrograd._tensor_str": (6, "interop: printing formats host values"),
    "retrograd._tensor_types": (1, "interop: legacy constructors take NumPy arrays as data"),
    "retrograd.amp.autocast_mode": (1, "interop: NumPy arrays pass autocast uncast"),
    "retrograd.autograd._disk_offload": (
        4, "interop: a saved tensor's bytes, written to its file and read back on the host"),
    "retrograd.autograd._ownership": (
        1, "interop: only host arrays (NumPy's type) and meta's have memory the engine "
        "steals and books"),
    "retrograd.autograd.node": (
        2, "seam: the engine's hot path tells the CPU's gradients by NumPy's type first, as "
        "get_array_module does"),
    "retrograd.autograd.profiler": (
        2, "interop: self_cpu_memory_usage counts host arrays (NumPy's type) only"),
    "retrograd.backends.cpu": (1, "interop: the host CPU's features, as NumPy detected them"),
    "retrograd.distributed._collectives": (
        44, "interop: MPI send and receive buffers (host memory, as a non-CUDA-aware MPI's: "
        "device tensors are staged through them by explicit copies), pickled objects' "
        "bytes"),
    "retrograd.memory.planner._cost": (
        10, "interop: measures the host's disk, matmul and memory rates on host buffers (a "
        "device's rates are not measured)"),
    "retrograd.memory.tracker": (
        4, "interop: host memory accounting: NumPy's array, scalar and as_strided types are the "
        "CPU's storages"),
    "retrograd.memory.viz": (
        79, "interop: snapshot rendering: a snapshot's numbers laid out for the viewer"),
    "retrograd.nn._functional_dropout": (
        3, "interop: the mask is drawn from the host generator (devices draw there too)"),
    "retrograd.nn.modules.module": (1, "interop: load_state_dict takes NumPy arrays"),
    "retrograd.ops._opdef": (2, "seam: kernel() declares a NumPy kernel by its module"),
    "retrograd.ops._registry": (
        4, "interop: NumPy scalars given as arguments are weak, like Python numbers; the "
        "CPU's arrays skip get_array_module (fast paths that only skip work: _inputs's, "
        "apply's for a float tensor alone or with a number, and _plain_write's in-place "
        "update that records nothing)"),
    "retrograd.ops._tensor_xp": (
        4, "seam: the NumPy-named namespace over Tensors reads NumPy's dtype-likes and host "
        "sequences as NumPy's functions do; of() checks NumPy's ndarray type first (a fast "
        "path that only skips work)"),
    "retrograd.ops.indexing": (
        11, "interop: a Python index (lists, NumPy arrays and scalars) parsed on the host; "
        "Python values made 0-d host tensors (setitem); shape arithmetic on tuples"),
    "retrograd.ops.losses": (
        1, "interop: ctc_loss's lengths given as Python ints (an IntArrayRef: host data in "
        "PyTorch too)"),
    "retrograd.ops.scatter": (1, "interop: shape arithmetic on tuples (broadcast_shapes)"),
    "retrograd.ops.shape": (
        1, "interop: broadcast_shapes takes shapes alone (host ints, no array whose module to "
        "ask)"),
    "retrograd.ops.sorting": (
        3, "interop: an empty median's NaN cast on the host as C casts it; a Python q "
        "checked on the host"),
    "retrograd.optim.optimizer": (1, "interop: load_state_dict takes plain numbers"),
    "retrograd.serialization": (4, "interop: a storage's bytes, written to the file from the host"),
    "retrograd.testing._comparison": (
        14, "interop: compares on the host after .cpu(); NumPy arrays and scalars as inputs"),
    "retrograd.utils._checkpoint_frame": (
        11, "interop: the recomputation-mismatch message, computed on the host"),
    "retrograd.utils.benchmark._measurement": (6, "interop: statistics of host timings"),
    "retrograd.utils.data._utils.collate": (
        7, "interop: collates NumPy arrays and scalars, as PyTorch's"),
    "retrograd.utils.data._utils.worker": (
        1, "interop: seeds NumPy's global generator in each worker, as PyTorch's"),
    "retrograd.utils.data.distributed": (
        1, "interop: the host generator of the sampler's permutation"),
    "retrograd.utils.data.sampler": (3, "interop: draws sample indices on the host from .numpy()"),
}


def _module_name(path):
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_free(module):
    return any(module == p or module.startswith(p + ".") for p in FREE)


def _numpy_import(node):
    """The names ``node`` binds to NumPy or a part of it."""
    names = set()
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.name == "numpy" or a.name.startswith("numpy."):
                names.add(a.asname or a.name.split(".")[0])
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
        if node.module == "numpy" or node.module.startswith("numpy."):
            names.update(a.asname or a.name for a in node.names)
    return names


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _scope_nodes(scope):
    """The nodes of ``scope``'s own body (nested scopes' bodies excluded; their names,
    decorators and defaults belong to it)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(node.decorator_list + node.args.defaults
                        + [d for d in node.args.kw_defaults if d is not None])
        elif isinstance(node, ast.Lambda):
            todo.extend(node.args.defaults + [d for d in node.args.kw_defaults if d])
        elif isinstance(node, ast.ClassDef):
            todo.extend(node.decorator_list + node.bases + node.keywords)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _bindings(scope):
    """(names bound to NumPy, other names bound, lines of the imports of names bound to
    NumPy and to something else too) in ``scope`` itself."""
    numpy_names, other, declared, imports = set(), set(), set(), {}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        other.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
        other.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    for node in _scope_nodes(scope):
        found = _numpy_import(node)
        numpy_names |= found
        for name in found:
            imports.setdefault(name, []).append(node.lineno)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not found:
            other.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            other.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    other -= declared
    mixed = [line for name in numpy_names & other for line in imports[name]]
    return numpy_names - other, other, mixed


def numpy_uses(tree):
    """Line numbers of the references to NumPy in module ``tree``, one per reference."""
    lines = []

    def visit(scope, outer):
        numpy_names, other, mixed = _bindings(scope)
        active = (outer - other) | numpy_names
        lines.extend(mixed)  # a name that is NumPy on one path only: its import is the use
        for node in _scope_nodes(scope):
            if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                    and node.id in active):
                lines.append(node.lineno)
            if isinstance(node, _SCOPES):
                # a class body's names are not seen from its methods
                visit(node, outer if isinstance(scope, ast.ClassDef) else active)

    visit(tree, set())
    return sorted(lines)


def counts():
    """{module: sorted lines of its NumPy uses} for every module with one."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        lines = numpy_uses(ast.parse(path.read_text()))
        if lines:
            found[_module_name(path)] = lines
    return found


def test_uses_are_found():
    src = ("import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\n"
           "def f(xp):\n    return xp.sum(np.ones(2)), as_strided\n"
           "def g():\n    import numpy as xp\n    return xp.zeros(1)\n"
           "def h(np):\n    return np.zeros(1)\n"
           "class C:\n    import numpy as nn\n    def m(self):\n        return nn\n"
           "def k(a):\n    if a:\n        import numpy as xp\n    else:\n        xp = a\n"
           "    return xp.ones(1), xp.zeros(1)\n")
    assert numpy_uses(ast.parse(src)) == [4, 4, 7, 16]


def test_numpy_only_where_allowed():
    found = {m: lines for m, lines in counts().items() if not _is_free(m)}
    over = [f"{m}: {len(lines)} uses (allowed {ALLOWED.get(m, (0,))[0]}), lines {lines}"
            for m, lines in sorted(found.items()) if len(lines) > ALLOWED.get(m, (0,))[0]]
    assert not over, ("NumPy named outside the backend; take the array module of the data "
                      "(backend.get_array_module) or a backend function (host data by nature: "
                      "an interop entry in ALLOWED):\n" + "\n".join(over))
    stale = [f"{m}: {len(found.get(m, ()))} uses, ALLOWED says {n}"
             for m, (n, _) in sorted(ALLOWED.items()) if len(found.get(m, ())) < n]
    assert not stale, "fewer NumPy uses than ALLOWED says; lower the entry:\n" + "\n".join(stale)


def test_every_entry_says_why():
    assert all(why.startswith(("interop: ", "seam: ", "to do")) for _, why in ALLOWED.values())


if __name__ == "__main__":
    outside = {m: len(lines) for m, lines in counts().items()
               if not m.startswith("retrograd.backend.") and m != "retrograd.backend"}
    for m, n in sorted(outside.items()):
        print(f"{n:5d}  {m}{'  (NumPy kernels)' if _is_free(m) else ''}")
    print(f"{sum(outside.values()):5d}  total outside the backend")
    print(f"{sum(n for m, n in outside.items() if not _is_free(m)):5d}  of which in ALLOWED "
          f"(the NumPy kernels excluded)")
