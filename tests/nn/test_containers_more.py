"""ParameterList, ParameterDict and nn.Buffer against torch: printed forms, state_dict
keys, list/dict semantics, conversions of Tensors to Parameters, errors."""

from collections import OrderedDict

import numpy
import pytest

import retrograd
import retrograd.nn as nn

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")


def _lib(m):
    return m, m.nn


def _plist(m):
    t, n = _lib(m)
    pl = n.ParameterList([n.Parameter(t.ones(2, 3)), t.zeros(3),
                          n.Parameter(t.ones(1, dtype=t.float64), requires_grad=False)])
    pl.append(5)
    pl.extend([t.ones(4, 1)])
    pl += [n.Parameter(t.zeros(()))]
    return pl


def _pdict(m, values=None):
    t, n = _lib(m)
    pd = n.ParameterDict(values if values is not None else
                         {"b": n.Parameter(t.ones(2)), "a": t.zeros(3, 3)})
    pd["c"] = "str"
    pd["d"] = t.ones(2, dtype=t.float64)
    return pd


class _Net:
    """The same module in both libraries: containers nested in a Module."""

    @staticmethod
    def build(m):
        t, n = _lib(m)

        class Net(n.Module):
            def __init__(self):
                super().__init__()
                self.pl = n.ParameterList([n.Parameter(t.ones(2)), n.Parameter(t.ones(3, 2))])
                self.pd = n.ParameterDict({"w": n.Parameter(t.ones(1)),
                                           "v": n.Parameter(t.ones(2, 2))})
                self.lin = n.Linear(2, 2)
                self.register_buffer("plain", t.zeros(1))
                self.kept = n.Buffer(t.ones(3))
                self.dropped = n.Buffer(t.ones(1), persistent=False)
        return Net()


def _state(sd):
    return [(k, tuple(v.shape)) for k, v in sd.items()]


def test_reprs_and_state_dicts_match_torch():
    for make in (_plist, _pdict, _Net.build, lambda m: m.nn.ParameterList(),
                 lambda m: m.nn.ParameterDict()):
        r, t = make(retrograd), make(torch)
        assert repr(r) == repr(t)
        assert _state(r.state_dict()) == _state(t.state_dict())
        assert [n for n, _ in r.named_parameters()] == [n for n, _ in t.named_parameters()]
        assert [n for n, _ in r.named_buffers()] == [n for n, _ in t.named_buffers()]


def test_parameter_list_semantics():
    r, t = _plist(retrograd), _plist(torch)
    assert len(r) == len(t) == 6
    for i in range(-6, 6):
        a, b = r[i], t[i]
        assert type(a).__name__ == type(b).__name__
        if isinstance(b, torch.Tensor):
            assert a.requires_grad == b.requires_grad and tuple(a.shape) == tuple(b.shape)
    assert isinstance(r[1], nn.Parameter) and r[3] == 5
    assert repr(r[1:5:2]) == repr(t[1:5:2]) and repr(r[::-1]) == repr(t[::-1])
    r[0] = retrograd.zeros(5)
    t[0] = torch.zeros(5)
    assert repr(r) == repr(t)
    for bad in (lambda pl: pl[6], lambda pl: pl[-7]):
        with pytest.raises(IndexError, match="index -?[67] is out of range"):
            bad(r)
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an "
                                        "iterable, but got Tensor"):
        r.extend(retrograd.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        r(1)
    assert all(not k.isdigit() for k in dir(r))
    assert [type(p).__name__ for p in r] == [type(p).__name__ for p in t]


def test_parameter_dict_semantics():
    r, t = _pdict(retrograd), _pdict(torch)
    assert list(r) == list(t) == ["a", "b", "c", "d"]
    assert list(reversed(r)) == list(reversed(t))
    assert isinstance(r["d"], nn.Parameter) and r["c"] == "str" and "a" in r and "z" not in r
    assert r.get("z", 1) == 1 and r.get("a") is r["a"]
    ordered = OrderedDict([("z", retrograd.ones(1)), ("y", retrograd.ones(2))])
    r.update(ordered)
    t.update(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(2))]))
    r.update([("x", retrograd.ones(3))])
    t.update([("x", torch.ones(3))])
    assert list(r.keys()) == list(t.keys()) and repr(r) == repr(t)
    assert r.popitem()[0] == t.popitem()[0] == "x"
    assert r.pop("z").shape == (1,) and t.pop("z").shape == (1,)
    del r["y"], t["y"]
    assert r.setdefault("n", retrograd.ones(2)) is r["n"]
    t.setdefault("n", torch.ones(2))
    assert repr(r) == repr(t) and _state(r.state_dict()) == _state(t.state_dict())
    assert repr(r.copy()) == repr(t.copy())
    assert repr(r | nn.ParameterDict({"m": retrograd.ones(1)})) == \
        repr(t | torch.nn.ParameterDict({"m": torch.ones(1)}))
    assert list(r.fromkeys(["p", "q"])) == ["p", "q"]
    r.clear()
    assert len(r) == 0 and not list(r.parameters())
    with pytest.raises(KeyError):
        r.popitem()


@pytest.mark.parametrize("bad, exc", [
    (lambda m: m.nn.ParameterDict(5), TypeError),
    (lambda m: m.nn.ParameterDict([5]), TypeError),
    (lambda m: m.nn.ParameterDict([("a", 1, 2)]), ValueError),
    (lambda m: m.nn.ParameterDict()[3], TypeError),
    (lambda m: m.nn.ParameterDict()(1), RuntimeError),
])
def test_parameter_dict_errors_match_torch(bad, exc):
    with pytest.raises(exc) as te:
        bad(torch)
    with pytest.raises(exc) as re:
        bad(retrograd)
    assert str(re.value) == str(te.value)


def test_containers_train_and_load_torch_weights():
    r, t = _Net.build(retrograd), _Net.build(torch)
    t.load_state_dict({k: torch.randn_like(v) for k, v in t.state_dict().items()})
    r.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    for (kr, a), (kt, b) in zip(r.state_dict().items(), t.state_dict().items(), strict=True):
        assert kr == kt
        numpy.testing.assert_array_equal(a.numpy(), b.numpy())
    loss_r = (r.pl[1] @ r.pl[0]).sum() + (r.pd["v"] * r.pd["w"]).sum()
    loss_t = (t.pl[1] @ t.pl[0]).sum() + (t.pd["v"] * t.pd["w"]).sum()
    loss_r.backward()
    loss_t.backward()
    for a, b in zip(r.parameters(), t.parameters(), strict=True):
        if b.grad is not None:
            numpy.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)


def test_buffer_matches_torch():
    r, t = _Net.build(retrograd), _Net.build(torch)
    for m, lib in ((r, retrograd), (t, torch)):
        assert type(m.kept) is lib.Tensor and m.kept.persistent and not m.dropped.persistent
        assert isinstance(m.kept, lib.nn.Buffer) and not isinstance(lib.ones(1), lib.nn.Buffer)
        m.dropped = lib.ones(3)  # a plain tensor keeps the buffer's persistence
        m.dropped = lib.nn.Buffer(lib.ones(3))  # a Buffer brings its own
        m.c = 3
    assert _state(r.state_dict()) == _state(t.state_dict())
    b = nn.Buffer(retrograd.ones(2, requires_grad=True))
    assert b.requires_grad and b.is_leaf and nn.Buffer().shape == (0,)
    for m, lib in ((r, retrograd), (t, torch)):
        with pytest.raises(KeyError, match="attribute 'c' already exists"):
            m.c = lib.nn.Buffer(lib.ones(1))
        with pytest.raises(TypeError, match=r"cannot assign 'int' as buffer 'kept' "
                                            r"\(torch.nn.Buffer, torch.Tensor or None"):
            m.kept = 3
    with pytest.raises(AttributeError, match="cannot assign buffer before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.x = nn.Buffer(retrograd.ones(1))
        Early()


def test_module_list_repr_groups_runs_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (retrograd, torch):
        lib.manual_seed(0)
    reprs = []
    for lib in (retrograd, torch):
        nn_ = lib.nn
        m = nn_.ModuleList([nn_.Linear(2, 2), nn_.Linear(2, 2), nn_.ReLU(), nn_.Linear(2, 3),
                            nn_.ModuleList(), nn_.ReLU(), nn_.ReLU(), nn_.ReLU()])
        reprs.append((repr(m), repr(nn_.ModuleList()), repr(nn_.Sequential(m))))
    assert reprs[0] == reprs[1]
