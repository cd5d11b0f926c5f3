"""Forward hooks registered with ``always_call=True`` (a module's and the global ones of
``register_module_forward_hook``) run even when the call raises, against PyTorch: the
event log, the arguments they see, the warning for a hook that fails then, and the
removal of the flags with the handle."""

import warnings

import pytest

import retrograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


class _Boom(Exception):
    pass


def _module(lib, fail, log):
    class M(lib.nn.Module):
        def forward(self, x, scale=1.0):
            log.append(("forward", scale))
            if fail in ("forward", "forward and always"):
                raise _Boom("forward failed")
            return x * scale
    return M()


def _hook(log, name, fail=False):
    def hook(module, args, *rest):
        log.append((name, len(args), len(rest), bool(rest) and rest[-1] is None))
        if fail:
            raise ValueError(f"{name} failed")
    return hook


def _scenario(lib, fail, always_call, with_kwargs, glob):
    """The events of one call of a module with a pre-hook, plain and always-called forward
    hooks (its own, or global ones), and the warnings the call gave."""
    log = []
    m = _module(lib, fail, log)
    register = (lib.nn.modules.module.register_module_forward_hook if glob
                else m.register_forward_hook)
    handles = [m.register_forward_pre_hook(_hook(log, "pre", fail == "pre")),
               register(_hook(log, "plain")),
               register(_hook(log, "always", fail in ("always", "forward and always")),
                        always_call=always_call, with_kwargs=with_kwargs),
               register(_hook(log, "after", fail == "hook"))]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            m(lib.ones(2), scale=2.0)
        except (_Boom, ValueError) as e:
            log.append(("raised", type(e).__name__, str(e)))
    for h in handles:
        h.remove()
    return log, [str(w.message) for w in seen]


@pytest.mark.parametrize("glob", [False, True], ids=["module", "global"])
@pytest.mark.parametrize("with_kwargs", [False, True])
@pytest.mark.parametrize("always_call", [False, True])
@pytest.mark.parametrize("fail", [None, "pre", "forward", "hook", "always",
                                  "forward and always"])
def test_always_call_forward_hooks_as_torch(fail, always_call, with_kwargs, glob):
    assert _scenario(retrograd, fail, always_call, with_kwargs, glob) == \
        _scenario(torch, fail, always_call, with_kwargs, glob)


def test_global_hooks_run_before_the_modules_own_as_torch():
    def events(lib):
        log = []
        m = _module(lib, None, log)
        mm = lib.nn.modules.module
        handles = [m.register_forward_pre_hook(_hook(log, "pre")),
                   mm.register_module_forward_pre_hook(_hook(log, "global pre")),
                   m.register_forward_hook(_hook(log, "hook")),
                   mm.register_module_forward_hook(_hook(log, "global hook"))]
        m(lib.ones(2))
        for h in handles:
            h.remove()
        m(lib.ones(2))  # no hook left
        return log
    assert events(retrograd) == events(torch)


def test_always_called_flag_goes_with_the_handle_as_torch():
    def flags(lib):
        m = lib.nn.Linear(2, 2)
        h = m.register_forward_hook(_hook([], "h"), always_call=True)
        before = dict(m._forward_hooks_always_called) == {h.id: True}
        h.remove()
        return before, dict(m._forward_hooks_always_called)
    assert flags(retrograd) == flags(torch)


def test_a_module_pickled_without_the_newer_hook_dicts_loads_as_torch():
    """Its state lacks ``_forward_hooks_always_called`` and ``_backward_pre_hooks``: they
    are made empty on load, so it runs and takes such hooks."""
    def run(lib):
        m = lib.nn.Linear(2, 2)
        state = dict(m.__dict__)
        del state["_forward_hooks_always_called"], state["_backward_pre_hooks"]
        old = lib.nn.Linear.__new__(lib.nn.Linear)
        old.__setstate__(state)
        log = []
        old.register_forward_hook(_hook(log, "always"), always_call=True)
        old.register_full_backward_pre_hook(lambda mod, g: log.append("pre"))
        old(lib.ones(1, 2, requires_grad=True)).sum().backward()
        return log
    assert run(retrograd) == run(torch)
