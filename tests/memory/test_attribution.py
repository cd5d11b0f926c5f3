"""Per-module attribution: each storage booked to the nn.Module running when it was made."""

import gc

import pytest

import retrograd
from retrograd import _observe, memory, nn
from retrograd.memory.tracker import TRACKER
from retrograd.optim.in_backward import fuse_into_backward
from retrograd.utils.checkpoint import checkpoint


pytestmark = pytest.mark.usefixtures("fresh_books")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 16))

    def forward(self, x):
        return x + self.ff(x)


class AttNet(nn.Module):
    def __init__(self, ckpt=False):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(16, 4)
        self.ckpt = ckpt

    def forward(self, x):
        if self.ckpt:
            x = checkpoint(self.blocks, x, use_reentrant=False)
        else:
            x = self.blocks(x)
        return self.head(x)


def _ours(table):
    return {path: m for path, m in table.items() if path.startswith("AttNet")}


def test_forward_allocations_carry_the_module_path():
    model = AttNet()
    memory._record_memory_history()
    x = retrograd.randn(8, 16)
    out = model(x)
    trace = memory._snapshot()["device_traces"][0]
    allocs = {e["addr"]: e["module"] for e in trace if e["action"] == "alloc"}
    assert allocs[id(out._data)] == "AttNet.head"
    assert "AttNet.blocks.0.ff.1" in allocs.values()  # a ReLU's output
    assert "AttNet.blocks.1.ff.2" in allocs.values()
    assert allocs[id(x._data)] == ""  # made outside any module


def test_backward_allocations_are_booked_to_the_module_whose_forward_made_the_node():
    model = AttNet()
    x = retrograd.randn(8, 16, requires_grad=True)
    memory.memory_allocated()  # nodes keep their module only while accounting is on
    loss = model(x).sum()
    memory._record_memory_history()
    loss.backward()
    trace = memory._snapshot()["device_traces"][0]
    in_backward = [e for e in trace if e["action"] == "alloc"
                   and e["frames"] and e["frames"][0]["filename"] == "<backward>"]
    assert in_backward
    by_node = {}
    for e in in_backward:
        by_node.setdefault(e["frames"][0]["name"], set()).add(e["module"])
    # ReLU's backward runs only inside the blocks' feed-forward stacks
    assert by_node["ReluBackward0"] == {"AttNet.blocks.0.ff.1", "AttNet.blocks.1.ff.1"}
    # x's gradient comes out of the first block's residual add (x + ff(x))
    grad_x = next(e for e in trace if e["action"] == "alloc" and e["addr"] == id(x.grad._data))
    assert grad_x["module"].startswith("AttNet.blocks.0")


def test_optimizer_step_allocations_are_the_optimizers():
    model = AttNet()
    opt = retrograd.optim.Adam(model.parameters())
    model(retrograd.randn(8, 16)).sum().backward()
    memory._record_memory_history()
    opt.step()
    trace = memory._snapshot()["device_traces"][0]
    assert {e["module"] for e in trace if e["action"] == "alloc"} == {"Adam.step"}
    state = sum(v._data.nbytes for st in opt.state.values() for v in st.values())
    assert memory.memory_stats()["by_module"]["Adam.step"]["current"] == {
        "optimizer_state": state}


def test_an_update_fused_into_backward_is_the_optimizers():
    model = AttNet()
    params = list(model.parameters())
    opt = retrograd.optim.SGD(params, lr=0.1, momentum=0.9)
    handle = fuse_into_backward(opt)
    memory.memory_allocated()
    model(retrograd.randn(8, 16)).sum().backward()
    handle.remove()
    assert len(opt.state) == len(params)  # updated in backward
    table = memory.memory_stats()["by_module"]
    bufs = sum(st["momentum_buffer"]._data.nbytes for st in opt.state.values())
    assert table["SGD.step"]["current"] == {"optimizer_state": bufs}


def test_a_module_takes_its_parameters_when_it_first_runs():
    model = AttNet()
    memory.memory_allocated()  # accounting starts after the model was made
    table = memory.memory_stats()["by_module"]
    assert not _ours(table)
    model(retrograd.randn(8, 16))
    table = memory.memory_stats()["by_module"]
    lin = model.blocks[1].ff[2]
    expect = lin.weight._data.nbytes + lin.bias._data.nbytes
    assert table["AttNet.blocks.1.ff.2"]["current"] == {"parameter": expect}


def test_module_tables_add_up_to_the_device_peak():
    model = AttNet()
    opt = retrograd.optim.Adam(model.parameters())
    memory.reset_peak_memory_stats()
    for _ in range(2):
        model(retrograd.randn(32, 16)).sum().backward()
        opt.step()
        opt.zero_grad()
    s = memory.memory_stats()
    table = s["by_module"]
    for cat in memory.CATEGORIES:
        assert sum(m["at_peak"].get(cat, 0) for m in table.values()) == \
            s[f"allocated_bytes.{cat}.at_peak"]
        assert sum(m["current"].get(cat, 0) for m in table.values()) == \
            s[f"allocated_bytes.{cat}.current"]
    assert sum(sum(m["at_peak"].values()) for m in table.values()) == \
        s["allocated_bytes.all.peak"]
    for m in table.values():
        assert m["peak"] >= sum(m["at_peak"].values())
        assert m["peak"] >= sum(m["current"].values())
    ours = _ours(table)
    assert {"AttNet.blocks.0.ff.0", "AttNet.blocks.1.ff.1", "AttNet.head"} <= set(ours)
    assert any("activation" in m["at_peak"] for m in ours.values())


def test_own_peak_is_the_most_a_module_held_and_resets_with_the_peak():
    model = AttNet()
    memory.memory_allocated()
    out = model(retrograd.randn(64, 16))
    relu = "AttNet.blocks.0.ff.1"
    held = memory.memory_stats()["by_module"][relu]
    assert held["peak"] == sum(held["current"].values()) > 0
    del out
    gc.collect()
    after = memory.memory_stats()["by_module"][relu]
    assert after["current"] == {} and after["peak"] == held["peak"]
    memory.reset_peak_memory_stats()
    assert relu not in memory.memory_stats()["by_module"]  # held nothing since


def test_recomputation_in_backward_keeps_the_module_path():
    model = AttNet(ckpt=True)
    x = retrograd.randn(8, 16, requires_grad=True)
    model(x).sum().backward()  # the paths are known from a first run
    memory._record_memory_history()
    loss = model(x).sum()
    loss.backward()
    trace = memory._snapshot()["device_traces"][0]
    in_backward = [(e["module"], e["size"]) for e in trace if e["action"] == "alloc"
                   and e["frames"] and e["frames"][0]["filename"] == "<backward>"]
    # the first Linear's (8, 64) float32 output is made again only by the recomputation
    assert ("AttNet.blocks.0.ff.0", 8 * 64 * 4) in in_backward
    assert not any(p.startswith(("Block", "Sequential", "ReLU", "Linear"))
                   for p, _ in in_backward)


def test_snapshot_carries_modules_on_blocks_and_a_table():
    model = AttNet()
    memory._record_memory_history()
    out = model(retrograd.randn(8, 16))
    s = memory._snapshot()
    blocks = {b["address"]: b for seg in s["segments"] for b in seg["blocks"]}
    assert blocks[id(out._data)]["module"] == "AttNet.head"
    assert s["by_module"] == memory.memory_stats()["by_module"]


def test_summary_lists_the_modules_holding_most_at_the_peak():
    model = AttNet()
    memory.memory_allocated()
    out = model(retrograd.randn(64, 16))
    text = memory.memory_summary()
    assert "AttNet.blocks.0.ff.1" in text
    assert "AttNet" not in memory.memory_summary(abbreviated=True)
    del out


def test_nothing_is_recorded_on_nodes_or_modules_without_accounting():
    model = AttNet()
    x = retrograd.randn(8, 16, requires_grad=True)
    assert _observe.engine is None
    out = model(x)
    assert not hasattr(out.grad_fn, "_mpath")
    memory.memory_allocated()
    assert _observe.engine is TRACKER and TRACKER.modules and TRACKER.nodes
    assert model(x).grad_fn._mpath == "AttNet.head"
    memory.stop_accounting()
    assert not hasattr(model(x).grad_fn, "_mpath")


def test_a_module_called_outside_its_parent_has_its_last_path():
    model = AttNet()
    memory._record_memory_history()
    model(retrograd.randn(8, 16))
    out = model.head(retrograd.randn(8, 16))
    stray = nn.Linear(16, 4)
    out2 = stray(retrograd.randn(8, 16))
    trace = memory._snapshot()["device_traces"][0]
    allocs = {e["addr"]: e["module"] for e in trace if e["action"] == "alloc"}
    assert allocs[id(out._data)] == "AttNet.head"
    assert allocs[id(out2._data)] == "Linear"


def test_an_exception_in_forward_restores_the_module():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    memory._record_memory_history()
    with pytest.raises(ValueError, match="boom"):
        Boom()(retrograd.randn(2))
    t = retrograd.randn(4)
    trace = memory._snapshot()["device_traces"][0]
    assert next(e for e in trace if e["addr"] == id(t._data))["module"] == ""
