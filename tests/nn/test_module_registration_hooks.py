"""The global registration hooks (``register_module_{module,parameter,buffer}_registration_
hook``) against PyTorch: which registrations call them (by method, by assignment,
inside the library's own modules), with what, and what a returned value does."""

import pytest

import retrograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _what(lib, v):
    if v is None:
        return None
    if isinstance(v, lib.nn.Module):
        return type(v).__name__
    return type(v).__name__, tuple(v.shape)


def _custom(lib):
    nn = lib.nn
    m = nn.Module()
    m.register_parameter("p", nn.Parameter(lib.ones(2)))
    m.register_parameter("unset", None)
    m.p = None
    m.q = nn.Parameter(lib.ones(3))
    m.register_buffer("b", lib.zeros(1))
    m.b = lib.ones(2)
    m.b = None
    m.register_buffer("kept", None, persistent=False)
    m.c = nn.Buffer(lib.ones(4))
    m.add_module("child", nn.ReLU())
    m.register_module("empty", None)
    m.child = None
    m.other = nn.Tanh()
    return m


_SCENARIOS = {
    "by method and by assignment": _custom,
    "Linear": lambda lib: lib.nn.Linear(2, 3),
    "BatchNorm1d": lambda lib: lib.nn.BatchNorm1d(3),
    "BatchNorm1d without affine or running stats": lambda lib: lib.nn.BatchNorm1d(
        3, affine=False, track_running_stats=False),
    "Sequential": lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU()),
}


@pytest.mark.parametrize("case", sorted(_SCENARIOS))
def test_registration_hooks_see_what_torch_registers(case):
    def run(lib):
        mm, log = lib.nn.modules.module, []
        handles = [register(lambda m, name, v, kind=kind: log.append(
            (kind, type(m).__name__, name, _what(lib, v))))
            for kind, register in (("module", mm.register_module_module_registration_hook),
                                   ("parameter",
                                    mm.register_module_parameter_registration_hook),
                                   ("buffer", mm.register_module_buffer_registration_hook))]
        try:
            _SCENARIOS[case](lib)
        finally:
            for h in handles:
                h.remove()
        return log
    got, want = run(retrograd), run(torch)
    assert got == want and want


def test_a_returned_value_is_registered_instead():
    def run(lib):
        nn, mm = lib.nn, lib.nn.modules.module
        hs = [mm.register_module_parameter_registration_hook(
                  lambda m, name, p: nn.Parameter(p.detach() * 2)),
              mm.register_module_buffer_registration_hook(
                  lambda m, name, b: None if b is None else b + 1),
              mm.register_module_module_registration_hook(
                  lambda m, name, sub: nn.Identity() if isinstance(sub, nn.ReLU) else None)]
        try:
            m = nn.Module()
            m.w = nn.Parameter(lib.ones(2))
            m.register_buffer("b", lib.zeros(2))
            m.act = nn.ReLU()
            m.add_module("kept", nn.Tanh())
        finally:
            for h in hs:
                h.remove()
        return m.w.tolist(), m.b.tolist(), [type(c).__name__ for c in m.children()]
    assert run(retrograd) == run(torch) == ([2.0, 2.0], [1.0, 1.0], ["Identity", "Tanh"])


def test_a_removed_hook_is_not_called():
    seen = []
    h = retrograd.nn.modules.module.register_module_parameter_registration_hook(
        lambda *a: seen.append(a[1]))
    retrograd.nn.Linear(1, 1)
    h.remove()
    retrograd.nn.Linear(1, 1)
    assert seen == ["weight", "bias"]
