"""Full backward pre-hooks (``register_full_backward_pre_hook``) and the global full
backward hooks (``register_module_full_backward_hook`` / ``_pre_hook``) against PyTorch:
their order (global first, pre-hooks before the full hooks), the gradients they see, a
pre-hook's replacement of grad_output and its error for one of the wrong length."""

import pytest

import retrograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _hook(log, name, ret=None):
    def hook(module, *grads):
        log.append((name, [None if g is None else g.tolist() for gs in grads for g in gs]))
        return ret(module) if ret is not None else None
    return hook


def _run(lib, register):
    """One backward through a Linear whose hooks ``register(lib, module, log)`` adds; the
    log, the input's gradient (or the error)."""
    mm = lib.nn.modules.module
    m = lib.nn.Linear(2, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64))
        m.bias.fill_(0.5)
    log = []
    handles = register(lib, mm, m, log)
    x = lib.tensor([[1.0, -1.0]], dtype=lib.float64, requires_grad=True)
    try:
        (m(x) * lib.tensor([[1.0, 3.0]], dtype=lib.float64)).sum().backward()
        out = x.grad.tolist()
    except RuntimeError as e:
        out = str(e)
    for h in handles:
        h.remove()
    return log, out


def _twice(lib):
    return lambda module: (lib.full((1, 2), 2.0, dtype=lib.float64),)


_CASES = {
    "all four": lambda lib, mm, m, log: [
        m.register_full_backward_hook(_hook(log, "full")),
        m.register_full_backward_pre_hook(_hook(log, "pre")),
        mm.register_module_full_backward_hook(_hook(log, "global full")),
        mm.register_module_full_backward_pre_hook(_hook(log, "global pre"))],
    "pre replaces grad_output": lambda lib, mm, m, log: [
        m.register_full_backward_pre_hook(_hook(log, "pre", _twice(lib))),
        m.register_full_backward_hook(_hook(log, "full"))],
    "global pre replaces, module pre sees it": lambda lib, mm, m, log: [
        mm.register_module_full_backward_pre_hook(_hook(log, "global pre", _twice(lib))),
        m.register_full_backward_pre_hook(_hook(log, "pre"))],
    "prepend": lambda lib, mm, m, log: [
        m.register_full_backward_pre_hook(_hook(log, "first")),
        m.register_full_backward_pre_hook(_hook(log, "prepended"), prepend=True)],
    "wrong length": lambda lib, mm, m, log: [
        m.register_full_backward_pre_hook(_hook(log, "pre", lambda module: (None, None)))],
    "global full only": lambda lib, mm, m, log: [
        mm.register_module_full_backward_hook(_hook(log, "global full"))],
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_backward_pre_and_global_hooks_as_torch(case):
    assert _run(retrograd, _CASES[case]) == _run(torch, _CASES[case])


def test_a_global_hook_leaves_with_its_handle():
    def run(lib):
        log = []
        h = lib.nn.modules.module.register_module_full_backward_pre_hook(_hook(log, "g"))
        h.remove()
        m = lib.nn.Linear(2, 1)
        m(lib.ones(1, 2, requires_grad=True)).sum().backward()
        return log
    assert run(retrograd) == run(torch) == []
