"""The package's layers: no module imports one above it, and no two modules import each
other, at module level or inside a function (a function-level import that dodges a cycle
is still a cycle).

Layers, lowest first: dtypes and the array backend; the Tensor; the autograd core (grad
mode, nodes, engine, saved tensors); the op registry; the op families; the autograd API;
the libraries (nn, optim, memory, func, ...); the package root, which assembles them.
What breaks the rule today is listed below with the module it reaches; the lists only
shrink (an entry that no longer occurs fails the test until it is deleted).

An import of a retrograd module inside a function is allowed only where it is listed in
DEFERRED with its reason (loading on first use what ``import retrograd`` leaves out);
anything else belongs at the top of the module.
"""

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "retrograd"

LAYERS = (  # (name, module prefixes); a module belongs to its longest matching prefix
    ("base", ("retrograd._dtype", "retrograd.backend", "retrograd._grad_state",
              "retrograd.return_types", "retrograd.version", "retrograd.torch_version",
              "retrograd._deterministic", "retrograd._observe", "retrograd._hooks",
              "retrograd._layout", "retrograd._memory_format", "retrograd._named")),
    ("tensor", ("retrograd._tensor", "retrograd._tensor_str", "retrograd._random",
                "retrograd._autocast")),
    ("autograd core", ("retrograd.autograd.grad_mode", "retrograd.autograd.node",
                       "retrograd.autograd.engine", "retrograd.autograd.graph",
                       "retrograd.autograd.anomaly_mode", "retrograd.autograd.forward_ad",
                       "retrograd.autograd._disk_offload", "retrograd.autograd._pinned_offload",
                       "retrograd.autograd._batched", "retrograd.autograd._batched_grad",
                       "retrograd.autograd._backward", "retrograd.autograd._forward_state",
                       "retrograd.autograd._batched_loop", "retrograd.autograd._batched_rules",
                       "retrograd.autograd._batched_xp", "retrograd.autograd._ownership",
                       "retrograd.autograd._collector")),
    ("op registry", ("retrograd.ops._registry", "retrograd.ops._opdef",
                     "retrograd.ops._views", "retrograd.ops._out", "retrograd.ops._loss_args")),
    ("op families", ("retrograd.ops", "retrograd._creation", "retrograd._tensor_types")),
    ("autograd API", ("retrograd.autograd",)),
    ("libraries", ("retrograd.",)),
    ("root", ()),
)

# Upward imports still to remove: (importer, imported).
UPWARD = {
    ("retrograd.utils.benchmark._timer", "retrograd"),
}

# Groups of modules of one layer that import each other, still to untangle.
CYCLES = set()

# Imports of retrograd modules inside functions: (importer, imported): why not at the top.
DEFERRED = {
    ("retrograd.backend.cpu_kernels", "retrograd.backend._numba_kernels"):
        "numba loads on the first kernel call, not with retrograd",
    ("retrograd.backend.cpu_kernels", "retrograd.backend._numba_winograd"):
        "numba loads on the first kernel call, not with retrograd",
    ("retrograd.backend.cpu_kernels", "retrograd.backend._numba_col2im"):
        "numba loads on the first kernel call, not with retrograd",
    ("retrograd.backend.cpu_kernels", "retrograd.backend._numba_direct"):
        "numba loads on the first kernel call, not with retrograd",
    ("retrograd.backend.mkl_gemm", "retrograd.backend._numba_gemm"):
        "numba loads on the first product MKL takes, not with retrograd",
    ("retrograd.__main__", "retrograd._runner"): "each command loads only its own module",
    ("retrograd.__main__", "retrograd.demo"): "each command loads only its own module",
    ("retrograd.__main__", "retrograd.memory.viz"): "each command loads only its own module",
    ("retrograd.__main__", "retrograd.memory.planner.cli"):
        "each command loads only its own module",
    ("retrograd._install", "retrograd.models._weights"):
        "retrograd.models loads on first use, not with import retrograd",
    ("retrograd.memory", "retrograd.memory.planner"):
        "the planner (and retrograd.utils under it) loads on first use of memory.plan",
}


def _modules():
    mods = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        mods[".".join(parts)] = (f, package)
    return mods


def _targets(node, name, package, mods):
    """The retrograd modules an import statement of module ``name`` reaches."""
    found = set()
    if isinstance(node, ast.ImportFrom):
        base = name.split(".") if package else name.split(".")[:-1]
        if node.level:
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            full = f"{target}.{alias.name}"
            found.add(full if full in mods else target)
    else:
        for alias in node.names:
            n = alias.name
            while n not in mods and "." in n:
                n = n.rsplit(".", 1)[0]
            found.add(n)
    return {m for m in found if m in mods and m != name}


def _function_imports(tree):
    """The import statements inside function bodies (at any depth)."""
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                out.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef,
                                                           ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _imports(mods):
    """{module: set of retrograd modules it imports, anywhere in its body}."""
    graph = {}
    for name, (path, package) in mods.items():
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name] |= _targets(node, name, package, mods)
    return graph


def _layer(module):
    if module == "retrograd":
        return len(LAYERS) - 1
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if module == p or module.startswith(p if p.endswith(".") else p + "."):
                if best is None or len(p) > best[1]:
                    best = (i, len(p))
    return best[0]


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return set(out)


@pytest.fixture(scope="module")
def graph():
    return _imports(_modules())


def test_every_module_has_a_layer(graph):
    assert all(_layer(m) is not None for m in graph)


def test_no_new_upward_import(graph):
    upward = {(m, t) for m, ts in graph.items() for t in ts if _layer(t) > _layer(m)}
    new = sorted(upward - UPWARD)
    assert not new, (f"imports reaching a higher layer (importer, imported): {new}; import "
                     f"from the layer below, or move the code to the layer it belongs to")
    gone = sorted(UPWARD - upward)
    assert not gone, f"no longer upward, delete from UPWARD: {gone}"


def test_no_new_import_cycle(graph):
    within = {m: {t for t in ts if _layer(t) <= _layer(m)} for m, ts in graph.items()}
    cycles = _cycles(within)
    new = [sorted(c) for c in cycles - CYCLES]
    assert not new, f"modules that import each other: {new}"
    gone = [sorted(c) for c in CYCLES - cycles]
    assert not gone, f"cycles untangled, delete from CYCLES: {gone}"


def test_no_new_function_level_import():
    mods = _modules()
    deferred = set()
    for name, (path, package) in mods.items():
        for node in _function_imports(ast.parse(path.read_text())):
            deferred |= {(name, t) for t in _targets(node, name, package, mods)}
    new = sorted(deferred - DEFERRED.keys())
    assert not new, (f"retrograd modules imported inside a function (importer, imported): "
                     f"{new}; import them at the top of the module, or list them in DEFERRED "
                     f"with the reason they load later")
    gone = sorted(DEFERRED.keys() - deferred)
    assert not gone, f"no longer imported inside a function, delete from DEFERRED: {gone}"
