"""The observer hooks (retrograd._observe): what the allocation and engine observers are
told, how several nest, and frames found by module name."""

import pytest

import retrograd
from retrograd import _observe, memory


@pytest.fixture(autouse=True)
def nothing_attached():
    memory.stop_accounting()
    assert _observe.alloc is None and _observe.engine is None
    yield
    assert _observe.alloc is None and _observe.engine is None


class _Log(_observe.EngineObserver):
    nodes = ops = True

    def __init__(self, tag, rank, log):
        self.tag, self.rank, self.log = tag, rank, log

    def node_created(self, node):
        self.log.append((self.tag, "node", node.name()))

    def backward_begin(self):
        self.log.append((self.tag, "begin"))

    def backward_end(self):
        self.log.append((self.tag, "end"))

    def run_node(self, call, node, buf, create_graph):
        self.log.append((self.tag, "run", node.name()))
        outs = call(node, buf, create_graph)
        self.log.append((self.tag, "ran", node.name()))
        return outs

    def run_op(self, call, op, values, attrs, self_):
        self.log.append((self.tag, "op", op.name))
        return call(op, values, attrs, self_)

    def run_call(self, call, name, args, kwargs):
        self.log.append((self.tag, "call", name))
        return call(name, args, kwargs)


def test_engine_observers_nest_by_rank_whatever_the_attach_order():
    log = []
    inner, outer = _Log("inner", 5, log), _Log("outer", -5, log)
    _observe.attach("engine", inner)
    _observe.attach("engine", outer)
    try:
        x = retrograd.ones(2, requires_grad=True)
        y = retrograd.cat([x.exp()])
        y.sum().backward()
    finally:
        _observe.detach("engine", inner)
        _observe.detach("engine", outer)
    log = [e for e in log if "AccumulateGrad" not in e[-1]]
    assert log[:6] == [("outer", "op", "exp"), ("inner", "op", "exp"),
                       ("outer", "node", "ExpBackward0"), ("inner", "node", "ExpBackward0"),
                       ("outer", "call", "cat"), ("inner", "call", "cat")]
    bwd = log[log.index(("outer", "begin")):]
    assert bwd[:4] == [("outer", "begin"), ("inner", "begin"),
                       ("outer", "run", "SumBackward0"), ("inner", "run", "SumBackward0")]
    assert bwd[4:6] == [("inner", "ran", "SumBackward0"), ("outer", "ran", "SumBackward0")]
    assert bwd[-2:] == [("inner", "end"), ("outer", "end")]
    assert x.grad.tolist() == pytest.approx([2.718281828] * 2)


def test_flags_choose_the_events_an_observer_is_shown():
    log = []
    quiet = _Log("q", 0, log)
    quiet.nodes = quiet.ops = False
    _observe.attach("engine", quiet)
    try:
        x = retrograd.ones(2, requires_grad=True)
        retrograd.cat([x * 2]).sum().backward()
    finally:
        _observe.detach("engine", quiet)
    assert {e[1] for e in log} == {"begin", "run", "ran", "end"}


def test_attaching_twice_is_an_error_and_detaching_a_stranger_is_not():
    obs = _observe.EngineObserver()
    _observe.attach("engine", obs)
    with pytest.raises(RuntimeError, match="already attached"):
        _observe.attach("engine", obs)
    _observe.detach("engine", obs)
    _observe.detach("engine", obs)


class _Allocs(_observe.AllocObserver):
    def __init__(self):
        self.arrays, self.roles, self.tensors = [], [], []
        self.n_saved = self.n_steps = 0

    def made(self, arr, role=0):
        self.arrays.append((arr, role))

    def role(self, arr, role):
        self.roles.append((arr, role))

    def retensored(self, t):
        self.tensors.append(t)

    def saved(self, saved_tensor):
        self.n_saved += 1

    def optimizer_state(self, states):
        self.n_steps += 1


def test_allocation_observer_is_told_storages_and_roles():
    obs = _Allocs()
    _observe.attach("alloc", obs)
    try:
        w = retrograd.nn.Parameter(retrograd.ones(3))
        opt = retrograd.optim.SGD([w], lr=0.1, momentum=0.9)
        (w.exp() * 2).sum().backward()
        opt.step()
    finally:
        _observe.detach("alloc", obs)
    assert any(t is w for t in obs.tensors)  # a Parameter: its array is a parameter's
    assert obs.n_saved >= 1  # exp saved its result
    grads = [a for a, r in obs.roles if r == _observe.GRADIENT]
    assert any(a is w.grad._data for a in grads)
    states = [a for a, r in obs.arrays if r == _observe.OPTIMIZER_STATE]
    assert any(a is opt.state[w]["momentum_buffer"]._data for a in states)
    assert obs.n_steps == 1


def test_one_allocation_observer_at_a_time():
    obs = _observe.AllocObserver()
    _observe.attach("alloc", obs)
    try:
        with pytest.raises(RuntimeError, match="one allocation observer"):
            memory.memory_allocated()
    finally:
        _observe.detach("alloc", obs)
        memory.stop_accounting()


# ---- frames by module name, never by file path --------------------------------------------

_USER_CODE = """
def user_forward(x):
    return x.exp()
"""


def _user_module(filename):
    """``user_forward`` as if defined by a user's module named ``user_script`` whose file
    is ``filename``."""
    ns = {"__name__": "user_script"}
    exec(compile(_USER_CODE, filename, "exec"), ns)
    return ns["user_forward"]


def _inside_package():
    """A file name inside retrograd's own folder (a checkout or a user's project laid out
    so): a path-based test would take its frames for retrograd's."""
    import os
    return os.path.join(os.path.dirname(retrograd.__file__), "user_script.py")


def test_user_frames_are_found_by_module_name():
    forward = _user_module(_inside_package())
    x = retrograd.ones(2, requires_grad=True)
    with retrograd.autograd.profiler.profile(with_stack=True) as prof:
        forward(x)
    exp = next(e for e in prof.function_events if e.name == "aten::exp")
    assert any("user_forward" in line for line in exp.stack)
    with retrograd.autograd.set_detect_anomaly(True):
        y = forward(x)
    trace = retrograd.autograd.anomaly_mode.forward_trace(y.grad_fn)
    assert trace.rstrip().splitlines()[-1].endswith("in user_forward")
    memory._record_memory_history()
    try:
        z = forward(x)
        s = memory._snapshot()
    finally:
        memory._record_memory_history(None)
        memory.stop_accounting()
    alloc = next(e for e in s["device_traces"][0]
                 if e["action"] == "alloc" and e["addr"] == id(z._data))
    assert any(f["name"] == "user_forward" for f in alloc["frames"])


def test_library_and_user_modules_are_told_apart_by_name():
    import sys
    here = sys._getframe()
    assert not _observe.in_library(here)
    assert _observe.user_frame(here) is here
    from retrograd.autograd import engine
    frame = type("F", (), {"f_globals": vars(engine), "f_back": here})()
    assert _observe.in_library(frame) and _observe.user_frame(frame) is here
    named_alike = type("F", (), {"f_globals": {"__name__": "retrograd_tools.x"},
                                 "f_back": None})()
    assert not _observe.in_library(named_alike)
