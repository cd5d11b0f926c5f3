"""retrograd.utils.checkpoint against the plain run and against torch.utils.checkpoint:
the same models and weights give the same gradients in both checkpoint forms; the
warnings and errors are PyTorch's."""

import contextlib
import functools
import warnings

import numpy
import pytest
from _ckpt_models import D, assert_same_grads, block, grads, inputs, mlp

import retrograd
from retrograd.utils import checkpoint as rcp

pytestmark = pytest.mark.torch

BOTH = pytest.mark.parametrize("use_reentrant", [True, False])


def _cp(lib):
    return rcp if lib is retrograd else lib.utils.checkpoint


def _run(lib, build, call, x_array, x_grad=True):
    """Build the model in ``lib``, run ``call(cp, model, x)`` and backward its sum; the
    gradients by name."""
    model = build(lib)
    x = lib.tensor(x_array.copy(), requires_grad=x_grad)
    out = call(_cp(lib), model, x)
    out.sum().backward()
    return grads(model, x)


def _plain(cp, model, x):
    return model(x)


# ---- gradients: plain run, retrograd, PyTorch --------------------------------------------

@BOTH
def test_mlp_matches_plain_and_torch(torch, use_reentrant):
    build = functools.partial(mlp, n_layers=4)
    x = inputs(5, D)

    def call(cp, model, x):
        return cp.checkpoint(model, x, use_reentrant=use_reentrant)

    ref = _run(retrograd, build, _plain, x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


@BOTH
def test_transformer_block_with_dropout_matches_plain(use_reentrant):
    """Dropout draws the same mask when the block is recomputed: the RNG state is
    replayed, so the gradients are the plain run's (both runs seeded alike)."""
    x = inputs(2, 6, D)

    def call(cp, model, x):
        return cp.checkpoint(model, x, use_reentrant=use_reentrant)

    retrograd.manual_seed(7)
    ref = _run(retrograd, block, _plain, x)
    retrograd.manual_seed(7)
    assert_same_grads(_run(retrograd, block, call, x), ref)


def test_without_preserved_rng_state_dropout_changes(torch):
    """The guard of the test above: without the replay the mask differs (as in torch)."""
    x = inputs(2, 6, D)

    def call(cp, model, x):
        return cp.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)

    for lib, seed in ((retrograd, retrograd.manual_seed), (torch, torch.manual_seed)):
        seed(7)
        ref = _run(lib, block, _plain, x)
        seed(7)
        got = _run(lib, block, call, x)
        assert not numpy.allclose(got["qkv.weight"], ref["qkv.weight"])


@BOTH
def test_transformer_block_matches_torch_without_dropout(torch, use_reentrant):
    build = functools.partial(block, p_drop=0.0)
    x = inputs(2, 6, D)

    def call(cp, model, x):
        return cp.checkpoint(model, x, use_reentrant=use_reentrant)

    ref = _run(torch, build, _plain, x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


@BOTH
@pytest.mark.filterwarnings("ignore:None of the inputs")  # the reentrant inner ones, as torch
def test_nested_checkpoints(torch, use_reentrant):
    build = functools.partial(mlp, n_layers=4)
    x = inputs(5, D)

    def call(cp, model, x):
        ck = functools.partial(cp.checkpoint, use_reentrant=use_reentrant)

        def outer(h):
            h = ck(lambda t: model[1](model[0](t)), h)
            h = ck(lambda t: ck(model[3], model[2](t)), h)
            return model[7](model[6](model[5](model[4](h))))
        return ck(outer, x)

    ref = _run(retrograd, build, _plain, x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


@BOTH
@pytest.mark.parametrize("segments", [1, 2, 3, 4])
def test_checkpoint_sequential(torch, use_reentrant, segments):
    build = functools.partial(mlp, n_layers=5)
    x = inputs(5, D)

    def call(cp, model, x):
        return cp.checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)

    ref = _run(retrograd, build, _plain, x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


def test_checkpoint_sequential_of_a_list_of_functions(torch):
    build = functools.partial(mlp, n_layers=3)
    x = inputs(5, D)

    def call(cp, model, x):
        fns = [*model.children(), lambda t: t * 2]
        return cp.checkpoint_sequential(fns, 2, x, use_reentrant=False)

    for lib in (retrograd, torch):
        ref = _run(lib, build, lambda cp, m, x: m(x) * 2, x)
        assert_same_grads(_run(lib, build, call, x), ref)


def test_no_input_requires_grad_non_reentrant(torch):
    """A frozen input (embeddings, an adapter's base): the weights still get gradients."""
    build = functools.partial(mlp, n_layers=3)
    x = inputs(5, D)

    def call(cp, model, x):
        return cp.checkpoint(model, x, use_reentrant=False)

    ref = _run(retrograd, build, _plain, x, x_grad=False)
    assert ref and "<input>" not in ref
    assert_same_grads(_run(retrograd, build, call, x, x_grad=False), ref)
    assert_same_grads(_run(torch, build, call, x, x_grad=False), ref)


def test_no_input_requires_grad_reentrant_warns_and_detaches(torch):
    for lib in (retrograd, torch):
        model = mlp(lib, 2)
        x = lib.tensor(inputs(5, D))
        with pytest.warns(UserWarning) as rec:
            out = _cp(lib).checkpoint(model, x, use_reentrant=True)
        assert [str(w.message) for w in rec] == [
            "None of the inputs have requires_grad=True. Gradients will be None"]
        assert not out.requires_grad


def test_autograd_grad_non_reentrant(torch):
    res = []
    for lib in (retrograd, torch):
        model = mlp(lib, 3)
        x = lib.tensor(inputs(5, D), requires_grad=True)
        out = _cp(lib).checkpoint(model, x, use_reentrant=False)
        gx, gw = lib.autograd.grad(out.sum(), (x, model[0].weight))
        res.append((gx.detach().numpy(), gw.detach().numpy()))
    for a, b in zip(*res, strict=True):
        numpy.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-4)


def _reentrant_errors(lib):
    model = mlp(lib, 2)
    x = lib.tensor(inputs(5, D), requires_grad=True)
    out = _cp(lib).checkpoint(model, x, use_reentrant=True).sum()
    msgs = []
    for run in (lambda: lib.autograd.grad(out, x, retain_graph=True),
                lambda: out.backward(inputs=[x], retain_graph=True)):
        with pytest.raises(RuntimeError) as e:
            run()
        msgs.append(str(e.value))
    return msgs


def test_reentrant_refuses_grad_and_backward_inputs(torch):
    assert _reentrant_errors(retrograd) == _reentrant_errors(torch)
    assert "incompatible with .grad()" in _reentrant_errors(retrograd)[0]


def test_keyword_arguments(torch):
    build = functools.partial(mlp, n_layers=2)
    x = inputs(5, D)

    def f(model, h, *, scale):
        return model(h) * scale

    def call(cp, model, x):
        return cp.checkpoint(f, model, x, use_reentrant=False, scale=3.0)

    ref = _run(retrograd, build, lambda cp, m, x: f(m, x, scale=3.0), x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)
    for lib in (retrograd, torch):
        with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale$"):
            _cp(lib).checkpoint(f, mlp(lib, 1), lib.ones(2, D), use_reentrant=True, scale=1.0)


@BOTH
def test_non_tensor_outputs(torch, use_reentrant):
    build = functools.partial(mlp, n_layers=2)
    x = inputs(5, D)

    def f(model, h):
        y = model(h)
        return y, 3, "tag"

    def call(cp, model, x):
        y, n, tag = cp.checkpoint(f, model, x, use_reentrant=use_reentrant)
        assert (n, tag) == (3, "tag")
        return y * n

    ref = _run(retrograd, build, lambda cp, m, x: m(x) * 3, x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


def test_nested_outputs_non_reentrant(torch):
    build = functools.partial(mlp, n_layers=2)
    x = inputs(5, D)

    def f(model, h):
        y = model(h)
        return {"y": y, "more": [y.sin(), (y.exp(), None)]}

    def call(cp, model, x):
        d = cp.checkpoint(f, model, x, use_reentrant=False)
        return d["y"] + d["more"][0] * d["more"][1][0]

    ref = _run(retrograd, build, lambda cp, m, x: call(_Direct, m, x), x)
    assert_same_grads(_run(retrograd, build, call, x), ref)
    assert_same_grads(_run(torch, build, call, x), ref)


class _Direct:
    """A stand-in for the checkpoint module that just calls the function."""

    @staticmethod
    def checkpoint(fn, *args, use_reentrant=None, **kwargs):
        return fn(*args, **kwargs)


def test_retain_graph_recomputes_for_each_backward(torch):
    build = functools.partial(mlp, n_layers=3)
    x = inputs(5, D)

    def twice(cp, model, x):
        out = cp.checkpoint(model, x, use_reentrant=False).sum()
        out.backward(retain_graph=True)
        return out

    ref = _run(retrograd, build, lambda cp, m, x: twice(_Direct, m, x), x)
    assert_same_grads(_run(retrograd, build, twice, x), ref)
    assert_same_grads(_run(torch, build, twice, x), ref)


def test_composes_with_save_on_cpu_and_save_on_disk(tmp_path):
    build = functools.partial(mlp, n_layers=4)
    x = inputs(5, D)
    ref = _run(retrograd, build, _plain, x)
    seen = []

    def on_cpu(cp, model, x):
        with retrograd.autograd.graph.save_on_cpu():
            return cp.checkpoint(model, x, use_reentrant=False)

    def on_disk(cp, model, x):
        with retrograd.autograd.graph.save_on_disk(tmp_path, min_bytes=0):
            out = cp.checkpoint(model, x, use_reentrant=False).sin()
        seen.append(sorted(p.name for p in tmp_path.rglob("*.bin")))
        return out

    def inside(cp, model, x):  # offload inside the region: its saves go to disk, and so do
        def f(h):              # the recomputation's (both runs agree on what they save)
            with retrograd.autograd.graph.save_on_disk(tmp_path, min_bytes=0):
                return model(h)
        return cp.checkpoint(f, x, use_reentrant=False)

    assert_same_grads(_run(retrograd, build, on_cpu, x), ref)
    sin_ref = _run(retrograd, build, lambda cp, m, x: m(x).sin(), x)
    assert_same_grads(_run(retrograd, build, on_disk, x), sin_ref)
    assert len(seen[0]) == 2  # the region's input (for the recomputation) and its output
    assert not list(tmp_path.rglob("*.bin"))  # deleted with the graph
    assert_same_grads(_run(retrograd, build, inside, x), ref)


def test_early_stop_ends_the_recomputation(torch):
    """The recomputation stops at the last tensor the forward saved; with
    set_checkpoint_early_stop(False) it runs the whole region, as in torch."""
    logs = {}
    for lib in (retrograd, torch):
        for early in (True, False):
            log = []

            def f(x, log=log):
                y = x.sin()
                log.append("after the last save")
                return y * 2

            x = lib.ones(3, requires_grad=True)
            with _cp(lib).set_checkpoint_early_stop(early):
                out = _cp(lib).checkpoint(f, x, use_reentrant=False)
            out.sum().backward()
            logs[lib.__name__, early] = len(log)
    assert logs == {("retrograd", True): 1, ("retrograd", False): 2,
                    ("torch", True): 1, ("torch", False): 2}


def test_checkpoint_under_no_grad_just_runs(torch):
    for lib in (retrograd, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            out = _cp(lib).checkpoint(lambda t: t.exp(), x, use_reentrant=False)
        assert not out.requires_grad


# ---- warnings and errors, as PyTorch's -------------------------------------------------

def _warnings(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in rec]


def test_missing_use_reentrant_warns_as_torch(torch):
    def warned(lib):
        cp = _cp(lib)
        model = mlp(lib, 2)
        x = lib.ones(2, D, requires_grad=True)
        return (_warnings(lambda: cp.checkpoint(model, x)),
                _warnings(lambda: cp.checkpoint_sequential(model, 2, x)))

    got = [warned(retrograd), warned(torch)]
    assert got[0] == got[1]
    assert "use_reentrant parameter should be passed explicitly" in got[0][0][0][1]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return type(e).__name__, str(e)
    return None


def _errors(lib):
    cp = _cp(lib)
    x = lib.ones(2, requires_grad=True)
    f = lib.sin

    def unneeded():  # the rerun's output does not require grad
        out = cp.checkpoint(lambda t: t.detach() * 1, x, use_reentrant=True)
        out.sum().backward()

    def saved_twice():
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                first = ctx.saved_tensors[0]
                return ctx.saved_tensors[0] * first * g

        cp.checkpoint(lambda t: Twice.apply(t.sin()), x, use_reentrant=False).sum().backward()

    def suppressed():
        class Swallow:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return True

        def boom(t):
            raise KeyError("boom")
        cp.checkpoint(boom, x, use_reentrant=False,
                      context_fn=lambda: (Swallow(), Swallow()))

    return [
        _error(lambda: cp.checkpoint(f, x, use_reentrant=True, context_fn=lambda: None)),
        _error(lambda: cp.checkpoint(f, x, use_reentrant=True, debug=True)),
        _error(lambda: cp.checkpoint(f, x, use_reentrant=False, determinism_check="exact")),
        _error(lambda: cp.checkpoint(f, x, use_reentrant=False, debug=True,
                                     context_fn=lambda: None)),
        _error(lambda: cp.checkpoint_sequential([f], 1, x, use_reentrant=False, extra=1)),
        _error(lambda: cp.detach_variable([x])),
        _error(unneeded),
        _error(saved_twice),
        _error(suppressed),
    ]


def test_errors_as_torch(torch):
    got, want = _errors(retrograd), _errors(torch)
    # retrograd's determinism_check also offers "values": the list in that message differs
    assert got[2] == ("ValueError", "determinism_check should be one of ['default', 'none', "
                      "'values'], but got exact")
    assert want[2] == ("ValueError", "determinism_check should be one of ['default', 'none'], "
                       "but got exact")
    del got[2], want[2]
    assert got == want
    assert all(e is not None for e in got)


def test_utils_exposes_checkpoint():
    assert retrograd.utils.checkpoint is rcp
    assert rcp.CheckpointError.__mro__[1] is RuntimeError


def test_graph_exec_group_recomputes_once(torch):
    def recomputes(lib, group, overlap=False):
        runs = []

        def f(t):
            runs.append(1)
            return t.sin(), t.cos()

        x = lib.ones(3, requires_grad=True)
        a, b = _cp(lib).checkpoint(f, x, use_reentrant=False)
        second = a if overlap else b
        with group() if group else contextlib.nullcontext():
            a.sum().backward(retain_graph=True)
            second.sum().backward()
        return len(runs), x.grad.tolist()

    for lib in (retrograd, torch):
        group = _cp(lib).GraphExecGroup
        assert recomputes(lib, None)[0] == 3  # forward, then once per backward
        assert recomputes(lib, group)[0] == 2
        with pytest.raises(RuntimeError, match="two backward calls that overlap"):
            recomputes(lib, group, overlap=True)
        with group(), pytest.raises(RuntimeError, match="^GraphExecGroup contexts cannot be "
                                    "nested. Already inside group"), group():
            pass
    numpy.testing.assert_allclose(recomputes(retrograd, rcp.GraphExecGroup)[1],
                                  recomputes(torch, torch.utils.checkpoint.GraphExecGroup)[1],
                                  rtol=1e-6)


def test_runner_maps_torch_utils_checkpoint(python_run, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "import torch.nn as nn\n"
        "from torch.utils.checkpoint import checkpoint_sequential\n"
        "import torch.utils.checkpoint as tuc\n"
        "m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))\n"
        "x = torch.randn(3, 4, requires_grad=True)\n"
        "checkpoint_sequential(m, 2, x, use_reentrant=False).sum().backward()\n"
        "print(tuc.__name__, torch.utils.checkpoint is tuc, tuple(x.grad.shape))\n")
    res = python_run("-m", "retrograd", "run", script)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[-2] == "retrograd.utils.checkpoint True (3, 4)"
