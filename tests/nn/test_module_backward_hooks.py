"""Module backward hooks against PyTorch: full hooks when an output takes no part in the
backward or an input gets no gradient, and the deprecated non-full hooks
(``register_backward_hook``, ``register_module_backward_hook``): the node gradients they
see, their FutureWarnings, and the error for mixing the two kinds."""

import warnings

import pytest

import retrograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def _fresh_global_kind(monkeypatch):
    """Whether the global backward hooks are full is process-wide state in both
    libraries (set by the first registration): each test starts with none."""
    monkeypatch.setattr(torch.nn.modules.module, "_global_is_full_backward_hook", None)
    monkeypatch.setattr(retrograd.nn.modules.module, "_global_is_full", [None])


def _grads(gs):
    return [None if g is None else g.tolist() for g in gs]


def _logger(log, name, ret=None):
    def hook(module, *grads):
        log.append((name, *[_grads(g) for g in grads]))
        return ret
    return hook


class _Modules:
    """The modules of the scenarios, in either library."""

    def __init__(self, lib):
        nn = lib.nn

        class Two(nn.Module):
            def forward(self, x):
                return x * 2, x * 3

        class TwoIn(nn.Module):
            def forward(self, x, y):
                return x * 2

        class Sigmoid(nn.Module):
            def forward(self, x):
                return x.sigmoid()

        class ExpSigmoid(nn.Module):
            def forward(self, x):
                return x.exp().sigmoid()

        class Pair(nn.Module):
            def forward(self, x):
                return x.sigmoid(), x.exp()

        class Scaled(nn.Module):
            def forward(self, x, scale):
                return x.sigmoid() * scale

        class Named(nn.Module):
            def forward(self, x):
                return {"out": x.sigmoid()}

        self.__dict__.update(Two=Two, TwoIn=TwoIn, Sigmoid=Sigmoid, ExpSigmoid=ExpSigmoid,
                             Pair=Pair, Scaled=Scaled, Named=Named)


def _x(lib):
    return lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)


_FULL = {
    "one of two outputs used": lambda lib, m, x: m.Two()(x)[0].sum().backward(),
    "both outputs used": lambda lib, m, x: sum(o.sum() for o in m.Two()(x)).backward(),
    "grad through the other output": lambda lib, m, x: lib.autograd.grad(
        m.Two()(x)[1].sum(), x),
    "each output in its own backward": lambda lib, m, x: [
        o.sum().backward(retain_graph=True) for o in m.Two()(x)],
    "an input unused": lambda lib, m, x: m.TwoIn()(x, lib.ones(2, dtype=lib.float64,
                                                               requires_grad=True)
                                                    ).sum().backward(),
}


@pytest.mark.parametrize("case", sorted(_FULL))
def test_full_hooks_when_not_everything_takes_part(case):
    """PyTorch fires the pre-hooks once the outputs that take part have their gradients
    (None for the others), and the full hooks with zeros for an input no gradient
    reaches; once per backward."""
    def run(lib):
        m, log = _Modules(lib), []
        orig = lib.nn.Module.__call__

        def call(module, *args, **kwargs):
            if not module._backward_hooks:
                module.register_full_backward_pre_hook(_logger(log, "pre"))
                module.register_full_backward_hook(_logger(log, "full"))
            return orig(module, *args, **kwargs)
        lib.nn.Module.__call__ = call
        try:
            _FULL[case](lib, m, _x(lib))
        finally:
            lib.nn.Module.__call__ = orig
        return log
    assert run(retrograd) == run(torch)


def _non_full(make, *extra, ret=None, global_=False):
    """A module from ``make`` with a non-full hook (module's or global); one backward
    from the sum of its first output: the hook's log, the FutureWarnings, x's gradient."""
    def run(lib):
        m, log = make(_Modules(lib))(), []
        hook = _logger(log, "hook", ret and ret(lib))
        h = (lib.nn.modules.module.register_module_backward_hook(hook) if global_ else
             m.register_backward_hook(hook))
        x = _x(lib)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = m(x, *extra)
        out = out["out"] if isinstance(out, dict) else out
        (out[0] if isinstance(out, tuple) else out).sum().backward()
        h.remove()
        return log, [(w.category, str(w.message)) for w in seen], x.grad.tolist()
    return run


_NON_FULL = {
    "one node": _non_full(lambda m: m.Sigmoid),
    "one node, global": _non_full(lambda m: m.Sigmoid, global_=True),
    "replaces grad_input": _non_full(
        lambda m: m.Sigmoid, ret=lambda lib: (lib.ones(2, dtype=lib.float64),)),
    "several nodes": _non_full(lambda m: m.ExpSigmoid),
    "outputs of two nodes": _non_full(lambda m: m.Pair),
    "an input that is not a tensor": _non_full(lambda m: m.Scaled, 3.0),
    "a dict output": _non_full(lambda m: m.Named),
}


@pytest.mark.parametrize("case", sorted(_NON_FULL))
def test_non_full_hooks_as_torch(case):
    """The hook sees the gradients of the node that made the first output, and the call
    warns (FutureWarning) what it will miss."""
    assert _NON_FULL[case](retrograd) == _NON_FULL[case](torch)


_MIXED = {
    "full, then non-full": lambda lib, m: (m.register_full_backward_hook(print),
                                           m.register_backward_hook(print)),
    "non-full, then full": lambda lib, m: (m.register_backward_hook(print),
                                           m.register_full_backward_hook(print)),
    "global full, then non-full": lambda lib, m: (
        lib.nn.modules.module.register_module_full_backward_hook(print).remove(),
        lib.nn.modules.module.register_module_backward_hook(print)),
    "global non-full, then full": lambda lib, m: (
        lib.nn.modules.module.register_module_backward_hook(print).remove(),
        lib.nn.modules.module.register_module_full_backward_hook(print)),
}


@pytest.mark.parametrize("case", sorted(_MIXED))
def test_both_kinds_of_backward_hook_are_refused_as_torch(case):
    """On one module, or among the global hooks (even after the first was removed)."""
    def run(lib):
        with pytest.raises(RuntimeError) as e:
            _MIXED[case](lib, lib.nn.Linear(2, 2))
        return str(e.value)
    assert run(retrograd) == run(torch)


def _positional(lib):
    nn = lib.nn

    class Scaled(nn.Module):
        def forward(self, x, scale):
            return x.sigmoid() * scale, "not a tensor"

    class Const(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(2))

        def forward(self, *args):
            return self.w * 2
    return Scaled, Const


_POSITIONAL = {
    "a number among the inputs and outputs": lambda lib, S, C: S()(
        lib.ones(2, requires_grad=True), 3.0)[0],
    "no input": lambda lib, S, C: C()(),
    "inputs that need no gradient": lambda lib, S, C: C()(lib.ones(2), 1),
}


@pytest.mark.parametrize("case", sorted(_POSITIONAL))
@pytest.mark.parametrize("returns", [None, "grads"])
def test_full_hooks_see_an_entry_per_argument_and_output(case, returns):
    """grad_input has one entry per positional argument and grad_output one per output
    (None where no gradient flows). With no input that requires grad the hooks run from
    the outputs' side, warn, and may return only Nones."""
    def run(lib):
        scaled, const = _positional(lib)
        log = []
        orig = lib.nn.Module.__call__

        def call(module, *args, **kwargs):
            if not module._backward_hooks:
                module.register_full_backward_pre_hook(_logger(log, "pre"))
                module.register_full_backward_hook(_logger(
                    log, "full", returns and (lib.ones(2),) * len(args)))
            return orig(module, *args, **kwargs)
        lib.nn.Module.__call__ = call
        try:
            out = _POSITIONAL[case](lib, scaled, const)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                try:
                    out.sum().backward()
                except RuntimeError as e:
                    log.append(str(e))
        finally:
            lib.nn.Module.__call__ = orig
        return log, [(w.category, str(w.message)) for w in seen]
    assert run(retrograd) == run(torch)
