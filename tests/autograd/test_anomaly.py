"""Anomaly detection (the "Anomaly detection" section of the autograd reference): forward
tracebacks for failing backward nodes, NaN checks, and the on/off switches, against
PyTorch where observable."""

import sys
import warnings

import pytest

import retrograd
from retrograd.autograd import anomaly_mode

ENABLED = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
           "should only be enabled for debugging.")


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    retrograd.autograd.set_detect_anomaly(False)


def _run(fn):
    """Run ``fn``; return (its exception or None, the warning messages but "enabled")."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except Exception as e:  # noqa: BLE001 - the test inspects it
            err = e
    return err, [str(x.message) for x in w if str(x.message) != ENABLED]


def _line_of(code):
    """The line number in this file of the first line containing ``code``."""
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if code in line and "_line_of" not in line:
                return i
    raise AssertionError(code)


def _last_frame(trace):
    """(file, line, code) of the innermost frame of a formatted traceback."""
    lines = trace.rstrip("\n").split("\n")
    head = lines[-2] if lines[-1].startswith("    ") else lines[-1]
    code = lines[-1].strip() if lines[-1].startswith("    ") else None
    file = head.split('"')[1]
    lineno = int(head.split("line ")[1].split(",")[0])
    return file, lineno, code


# ---- switches ----------------------------------------------------------------------------

@pytest.mark.torch
def test_defaults_and_switches_match_pytorch(torch):
    for T in (retrograd, torch):
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (False, True)
        s = T.autograd.set_detect_anomaly(True, check_nan=False)
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (True, False)
        T.autograd.set_detect_anomaly(False)
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (False, True)
        with s:  # a context manager too: restores what was on before it was made
            pass
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (False, True)
        with T.autograd.set_detect_anomaly(True):
            assert T.is_anomaly_enabled()
        assert not T.is_anomaly_enabled()


def test_autograd_namespace_exports():
    ag = retrograd.autograd
    assert ag.is_anomaly_enabled is anomaly_mode.is_anomaly_enabled
    assert ag.is_anomaly_check_nan_enabled is anomaly_mode.is_anomaly_check_nan_enabled
    assert ag.detect_anomaly is anomaly_mode.detect_anomaly
    assert ag.set_detect_anomaly is anomaly_mode.set_detect_anomaly


@pytest.mark.torch
def test_detect_anomaly_warns_and_restores(torch):
    for T in (retrograd, torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled") as rec:
            ctx = T.autograd.detect_anomaly(check_nan=False)
        assert rec[0].filename == __file__  # attributed to the caller
        with ctx:
            assert T.is_anomaly_enabled() and not T.is_anomaly_check_nan_enabled()
        assert not T.is_anomaly_enabled() and T.is_anomaly_check_nan_enabled()
        with pytest.raises(TypeError):  # not a decorator in PyTorch either
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                T.autograd.detect_anomaly()(lambda: None)


def test_nodes_record_nothing_when_off():
    a = retrograd.ones(3, requires_grad=True)
    b = a.exp()
    assert b.grad_fn._anomaly is None and b.grad_fn._extra is None
    assert anomaly_mode.forward_trace(b.grad_fn) is None


# ---- tracebacks of failing nodes ----------------------------------------------------------

@pytest.mark.torch
def test_engine_op_error_shows_forward_traceback(torch):
    res = {}
    for T in (retrograd, torch):
        def fn(T=T):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ctx = T.autograd.detect_anomaly()
            with ctx:
                a = T.ones(3, requires_grad=True)
                b = a.exp()  # the forward call of the failing node
                b.register_hook(lambda g: T.ones(4))
                b.sum().backward()
        res[T] = _run(fn)
    (err, msgs), (terr, tmsgs) = res[retrograd], res[torch]
    assert type(err) is type(terr) and str(err) == str(terr)
    head = "Error detected in ExpBackward0. Traceback of forward call that caused the error:\n"
    assert len(msgs) == 1 and msgs[0].startswith(head) and tmsgs[0].startswith(head)
    trace = msgs[0][len(head):]
    assert _last_frame(trace) == (__file__, _line_of("b = a.exp()  # the forward"),
                                  "b = a.exp()  # the forward call of the failing node")
    assert _last_frame(trace) == _last_frame(tmsgs[0][len(head):].split(" (Triggered")[0])
    assert f"Traceback of forward call that caused the error:\n{trace}" in err.__notes__


@pytest.mark.torch
def test_custom_function_error_shows_forward_traceback(torch):
    res = {}
    for T in (retrograd, torch):
        class MyFunc(T.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("Some error in backward")

        def run_fn(a, MyFunc=MyFunc):
            out = MyFunc.apply(a)  # the custom Function's forward call
            return out.sum()

        def fn(T=T, run_fn=run_fn):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ctx = T.autograd.detect_anomaly()
            with ctx:
                inp = T.rand(10, 10, requires_grad=True)
                out = run_fn(inp)
                out.backward()
        res[T] = _run(fn)
    (err, msgs), (terr, tmsgs) = res[retrograd], res[torch]
    assert str(err) == str(terr) == "Some error in backward"
    head = "Error detected in MyFuncBackward. Traceback of forward call that caused the error:\n"
    assert msgs[0].startswith(head) and tmsgs[0].startswith(head)
    trace = msgs[0][len(head):]
    assert _last_frame(trace) == (__file__, _line_of("out = MyFunc.apply(a)  # the custom"),
                                  "out = MyFunc.apply(a)  # the custom Function's forward call")
    assert f'line {_line_of("out = run_fn(inp)")}, in fn\n    out = run_fn(inp)\n' in trace


def test_error_without_anomaly_warns_nothing():
    def fn():
        a = retrograd.ones(3, requires_grad=True)
        b = a.exp()
        b.register_hook(lambda g: retrograd.ones(4))
        b.sum().backward()
    err, msgs = _run(fn)
    assert isinstance(err, RuntimeError) and msgs == []
    assert not getattr(err, "__notes__", None)


def test_node_made_before_anomaly_has_no_forward_information():
    a = retrograd.ones(3, requires_grad=True)
    b = a.exp()
    b.register_hook(lambda g: retrograd.ones(4))

    def fn():
        with retrograd.autograd.set_detect_anomaly(True):
            b.sum().backward()
    err, msgs = _run(fn)
    assert isinstance(err, RuntimeError)
    assert msgs == ["Error detected in ExpBackward0. No forward pass information available. "
                    "Enable detect anomaly during forward pass for more information."]


@pytest.mark.torch
def test_double_backward_names_the_inducing_node(torch):
    res = {}
    for T in (retrograd, torch):
        def fn(T=T):
            with T.autograd.set_detect_anomaly(True):
                a = T.tensor([1.0, 2.0], requires_grad=True)
                b = a.pow(2)  # induces the failing node
                g, = T.autograd.grad(b.sum(), a, create_graph=True)
                T.autograd.grad(g, a, grad_outputs=T.tensor([float("nan"), 1.0]))
        res[T] = _run(fn)
    (err, msgs), (terr, tmsgs) = res[retrograd], res[torch]
    assert str(err) == str(terr) == "Function 'MulBackward0' returned nan values in its 1th output."
    assert len(msgs) == len(tmsgs) == 2
    assert msgs[0].startswith("Error detected in MulBackward0. Traceback of forward call")
    assert _last_frame(msgs[0])[2] == "g, = T.autograd.grad(b.sum(), a, create_graph=True)"
    prev = ("\n\nPrevious calculation was induced by PowBackward0. Traceback of forward call "
            "that induced the previous calculation:\n")
    assert msgs[1].startswith(prev) and tmsgs[1].startswith(prev)
    assert _last_frame(msgs[1])[2] == "b = a.pow(2)  # induces the failing node"


def test_traceback_of_inplace_list_and_view_ops():
    with retrograd.autograd.set_detect_anomaly(True):
        a = retrograd.ones(4, requires_grad=True)
        b = a * 1
        b.add_(1)
        c = retrograd.cat([b, b])
        d = c[1:3]
    for t, code in ((b, "b.add_(1)"), (c, "c = retrograd.cat([b, b])"), (d, "d = c[1:3]")):
        assert _last_frame(anomaly_mode.forward_trace(t.grad_fn))[2] == code


# ---- NaN checks ---------------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("case", ["sqrt", "mul0", "mul1", "unbind"])
def test_nan_check_message_matches_pytorch(torch, case):
    def scenario(T):
        with T.autograd.set_detect_anomaly(True):
            a = T.tensor([-1.0, 2.0], requires_grad=True)
            b = T.tensor([1.0, 2.0], requires_grad=True)
            if case == "sqrt":
                a.sqrt().sum().backward()
            elif case == "mul0":
                (a * b).backward(T.tensor([float("nan"), 1.0]))
            elif case == "mul1":
                (a * b.detach()).backward(T.tensor([1.0, float("nan")]))
            else:
                a.unbind()[1].backward(T.tensor(float("nan")))
    errs = [_run(lambda T=T: scenario(T))[0] for T in (retrograd, torch)]
    assert type(errs[0]) is type(errs[1]) is RuntimeError
    assert str(errs[0]) == str(errs[1])


@pytest.mark.torch
def test_nan_check_off_and_leaf_and_inf(torch):
    for T in (retrograd, torch):
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            a = T.tensor([-1.0, 0.0], requires_grad=True)
            a.sqrt().sum().backward()  # no error: NaN checks are off
        with T.autograd.set_detect_anomaly(True):
            b = T.tensor([1.0, 2.0], requires_grad=True)
            b.backward(T.tensor([float("nan"), 1.0]))  # AccumulateGrad returns nothing
            c = T.tensor([1.0, 2.0], requires_grad=True)
            (c * 1).backward(T.tensor([float("inf"), -float("inf")]))  # inf is not NaN
        assert [str(v) for v in a.grad.tolist()] == ["nan", "inf"]
        assert str(b.grad.tolist()[0]) == "nan"


def test_nan_check_under_create_graph():
    with retrograd.autograd.set_detect_anomaly(True):
        a = retrograd.tensor([-1.0, 4.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values in its "
                                               "0th output"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                retrograd.autograd.grad(a.sqrt().sum(), a, create_graph=True)


def test_grads_unchanged_and_parent_reset():
    with retrograd.autograd.set_detect_anomaly(True):
        a = retrograd.tensor([1.0, 4.0], requires_grad=True)
        (a.sqrt() * a).sum().backward()
    assert a.grad.tolist() == pytest.approx([1.5, 3.0])
    assert anomaly_mode.debug.parent is None and not anomaly_mode.debug.enabled
    err, _ = _run(_error_in_backward)
    assert isinstance(err, RuntimeError) and anomaly_mode.debug.parent is None


def _error_in_backward():
    with retrograd.autograd.set_detect_anomaly(True):
        a = retrograd.ones(2, requires_grad=True)
        b = a.exp()
        b.register_hook(lambda g: retrograd.ones(3))
        b.sum().backward()


def test_traceback_drops_only_retrograd_frames():
    with retrograd.autograd.set_detect_anomaly(True):
        a = retrograd.ones(2, requires_grad=True)
        b = a.tanh()
    frames, parent = b.grad_fn._anomaly
    assert parent is None
    assert frames[-1].filename == __file__
    assert frames[-1].lineno == sys._getframe().f_lineno - 4
