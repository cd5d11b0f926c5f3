"""A recomputation that differs from the first run raises CheckpointError: PyTorch's
message, plus (retrograd's) the op and the nn.Module path that saved each tensor in
question, and with determinism_check="values" where and by how much the values differ."""

import re

import pytest
from _ckpt_models import D, inputs

import retrograd
from retrograd.utils import checkpoint as rcp

pytestmark = pytest.mark.torch


def _outer(lib, state):
    """Outer.ff = Sequential(Linear, Shrink): Shrink's forward reads ``state``, which the
    tests change between forward and backward."""
    nn = lib.nn

    class Shrink(nn.Module):
        def forward(self, x):
            x = x[:, :state["n"]] * state["scale"]
            if state["exp"]:
                x = x.exp()
            return x.tanh()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ff = nn.Sequential(nn.Linear(D, D), Shrink())

        def forward(self, x):
            return lib.utils.checkpoint.checkpoint(self.ff, x, use_reentrant=False,
                                                   **state["kwargs"])

    return Outer()


def _failure(lib, change, **kwargs):
    """The error of a backward after ``change`` was applied to the state."""
    state = {"n": D, "scale": 1.0, "exp": True, "kwargs": kwargs}
    model = _outer(lib, state)
    x = lib.tensor(inputs(5, D), requires_grad=True)
    out = model(x).sum()
    state.update(change)
    try:
        out.backward()
    except Exception as e:  # noqa: BLE001 - the error is the result
        return e
    return None


def _lines(msg):
    return [line for line in str(msg).splitlines() if line]


def test_metadata_mismatch_names_op_tensor_and_module(torch):
    err, ref = _failure(retrograd, {"n": D - 2}), _failure(torch, {"n": D - 2})
    assert type(err) is rcp.CheckpointError and type(ref).__name__ == "CheckpointError"
    msg = str(err)
    # PyTorch's lines, for the first tensor whose metadata changed
    assert _lines(msg)[:4] == _lines(ref)[:4], (msg, str(ref))
    assert "saved metadata: {'shape': torch.Size([5, 16]), 'dtype': torch.float32" in msg
    assert "recomputed metadata: {'shape': torch.Size([5, 14])" in msg
    # retrograd's: which op saved it, in which module
    assert "saved by op exp (ExpBackward0) in module Outer.ff.1 (Shrink)\ntensor" in msg


def test_fewer_tensors_saved_again(torch):
    err, ref = _failure(retrograd, {"exp": False}), _failure(torch, {"exp": False})
    assert type(err) is rcp.CheckpointError
    assert _lines(err)[:3] == _lines(ref)[:3]
    assert "torch.utils.checkpoint: A different number of tensors was saved" in str(err)
    assert re.search(r"The first tensor not saved again \(position \d+\) was saved by op tanh "
                     r"\(TanhBackward0\) in module Outer.ff.1 \(Shrink\)", str(err)), str(err)
    assert "The runs part at position 2: the forward saved a tensor by op exp" in str(err)


def test_more_tensors_saved_again_without_early_stop(torch):
    def failure(lib):
        state = {"n": D, "scale": 1.0, "exp": False, "kwargs": {"early_stop": False}}
        model = _outer(lib, state)
        out = model(lib.tensor(inputs(5, D), requires_grad=True)).sum()
        state["exp"] = True
        with pytest.raises(RuntimeError) as e:
            out.backward()
        return e.value

    err, ref = failure(retrograd), failure(torch)
    assert _lines(err)[0] == _lines(ref)[0] == ("torch.utils.checkpoint: trying to save more "
                                                "tensors during recomputation than during the "
                                                "original forward pass.")
    assert ("is saved by op tanh (TanhBackward0) in module Outer.ff.1 (Shrink)" in str(err))
    assert ("The runs part at position 2: the forward saved a tensor by op tanh (TanhBackward0) "
            "in module Outer.ff.1 (Shrink), the recomputation by op exp (ExpBackward0) in "
            "module Outer.ff.1 (Shrink).") in str(err)


def test_same_metadata_passes_the_default_check(torch):
    for lib in (retrograd, torch):
        assert _failure(lib, {"scale": 2.0}) is None


def test_values_check_gives_the_difference():
    err = _failure(retrograd, {"scale": 2.0}, determinism_check="values")
    assert type(err) is rcp.CheckpointError
    msg = str(err)
    assert msg.startswith("torch.utils.checkpoint: Recomputed values for the following tensors "
                          "differ from the values saved during the forward pass")
    assert "shape [5, 16], dtype torch.float32" in msg
    assert re.search(r"\d+ of 80 elements differ; the largest difference is [0-9.e+-]+ at index "
                     r"\(\d+, \d+\) \(forward -?[0-9.e+-]+, recomputed -?[0-9.e+-]+\)", msg), msg
    assert "saved by op exp (ExpBackward0) in module Outer.ff.1 (Shrink)" in msg
    assert _failure(retrograd, {}, determinism_check="values") is None


def test_none_skips_the_check(torch):
    for lib in (retrograd, torch):
        err = _failure(lib, {"n": D - 2}, determinism_check="none")
        assert not isinstance(err, lib.utils.checkpoint.CheckpointError)  # a shape error


@pytest.mark.parametrize("how", ["argument", "context"])
def test_debug_lists_the_ops_of_both_runs(how):
    if how == "argument":
        err = _failure(retrograd, {"exp": False}, debug=True)
    else:
        with rcp.set_checkpoint_debug_enabled(True):
            err = _failure(retrograd, {"exp": False})
    assert type(err) is rcp.CheckpointError
    msg = str(err)
    assert "Operations executed during the original forward:" in msg
    forward, recompute = msg.split("Operations executed during recomputation:")
    assert "exp" in forward.split("during the original forward:")[1].split()
    assert "exp" not in recompute.split("+---")[0].split()
    assert "test_checkpoint_determinism.py" in msg  # the ops' callers
    assert type(err.__cause__) is rcp.CheckpointError
    assert "A different number of tensors" in str(err.__cause__)
