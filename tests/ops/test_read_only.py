"""Writes into a tensor whose memory is a read-only NumPy array (``from_numpy`` of one):
refused with ValueError at every size, before anything is written. Large ones went to
compiled kernels that write through the array's address: they wrote past NumPy's flag, and
into a file mapped read-only the process died of SIGSEGV. (PyTorch writes after a warning
at ``from_numpy``: docs/deviations.md.)"""

import os
import subprocess
import sys
import textwrap

import numpy
import pytest

import retrograd

SIZES = (16, 1 << 20)  # (the second takes the kernels' split paths)

IN_PLACE = {
    "mul_ number": lambda t, o: t.mul_(2.0),
    "add_ number": lambda t, o: t.add_(0.5),
    "div_ number": lambda t, o: t.div_(2.0),
    "mul_ tensor": lambda t, o: t.mul_(o),
    "add_ tensor": lambda t, o: t.add_(o),
    "add_ alpha": lambda t, o: t.add_(o, alpha=2.0),
    "sub_ alpha": lambda t, o: t.sub_(o, alpha=2.0),
    "addcmul_": lambda t, o: t.addcmul_(o, o, value=0.5),
    "addcdiv_": lambda t, o: t.addcdiv_(o, o, value=0.5),
    "sqrt_": lambda t, o: t.sqrt_(),
    "relu_": lambda t, o: t.relu_(),
    "clamp_": lambda t, o: t.clamp_(0.0, 0.5),
    "zero_": lambda t, o: t.zero_(),
    "fill_": lambda t, o: t.fill_(3.0),
    "copy_": lambda t, o: t.copy_(o),
    "setitem": lambda t, o: t.__setitem__(0, 3.0),
    "index_add_": lambda t, o: t.index_add_(0, retrograd.tensor([0, 1]), o[:2]),
    "detached": lambda t, o: t.detach().mul_(2.0),
}


def _read_only(n):
    a = numpy.linspace(1, 2, n, dtype=numpy.float32)
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_writes_are_refused(name, n):
    a = _read_only(n)
    before = a.copy()
    t = retrograd.from_numpy(a)
    with pytest.raises(ValueError, match="the tensor written in place is read-only"):
        IN_PLACE[name](t, retrograd.full((n,), 0.25))
    assert numpy.array_equal(a, before) and t._version == 0


@pytest.mark.parametrize("n", SIZES)
def test_out_is_refused(n):
    a = _read_only(n)
    o = retrograd.ones(n)
    with pytest.raises(ValueError, match="out is read-only"):
        retrograd.add(o, o, out=retrograd.from_numpy(a))
    assert numpy.array_equal(a, numpy.linspace(1, 2, n, dtype=numpy.float32))


@pytest.mark.parametrize("n", SIZES)
def test_a_grad_added_into_is_refused(n):
    a = numpy.zeros(n, numpy.float32)
    a.flags.writeable = False
    p = retrograd.ones(n, requires_grad=True)
    p.grad = retrograd.from_numpy(a)
    with pytest.raises(ValueError, match="a .grad added into is read-only"):
        (p * 2).sum().backward()
    assert not a.any()


OPTIMIZERS = {
    "SGD momentum": lambda ps: retrograd.optim.SGD(ps, lr=0.1, momentum=0.9),
    "Adam": lambda ps: retrograd.optim.Adam(ps, lr=0.1, foreach=False),
    "Adam foreach": lambda ps: retrograd.optim.Adam(ps, lr=0.1, foreach=True),
    "AdamW": lambda ps: retrograd.optim.AdamW(ps, lr=0.1),
    "LBFGS": lambda ps: retrograd.optim.LBFGS(ps, max_iter=2),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_an_optimizer_changes_nothing_before_refusing(name, n):
    """A writable parameter before the read-only one, in another group for all but LBFGS
    (one group): neither changes, and no state is made."""
    w = retrograd.nn.Parameter(retrograd.ones(n))
    ro = retrograd.nn.Parameter(retrograd.from_numpy(_read_only(n)))
    groups = [w, ro] if name == "LBFGS" else [{"params": [w]}, {"params": [ro]}]
    opt = OPTIMIZERS[name](groups)

    def closure():
        opt.zero_grad()
        loss = (w * 2).sum() + (ro * 3).sum()
        loss.backward()
        return loss
    closure()
    with pytest.raises(ValueError, match="a parameter is read-only"):
        opt.step(closure)
    assert (w.detach().numpy() == 1).all() and not opt.state


def test_fused_into_backward_refuses_a_read_only_parameter():
    ro = retrograd.nn.Parameter(retrograd.from_numpy(_read_only(1 << 20)))
    opt = retrograd.optim.Adam([ro], lr=0.1)
    retrograd.optim.fuse_into_backward(opt)
    with pytest.raises(ValueError, match="a parameter is read-only"):
        (ro * 3).sum().backward()
    assert not opt.state


_MAPPED = """
import numpy, retrograd
a = numpy.load({path!r}, mmap_mode="r")
t = retrograd.nn.Parameter(retrograd.from_numpy(a))
for write in (lambda: t.data.mul_(2.0), lambda: t.data.add_(t.data, alpha=0.5)):
    try:
        write()
    except ValueError as e:
        print("refused", e)
(t * 2).sum().backward()
try:
    retrograd.optim.Adam([t], lr=0.1).step()
except ValueError as e:
    print("refused", e)
print("alive", float(a[0]), float(a[-1]))
"""


def test_a_file_mapped_read_only_is_not_written(tmp_path):
    """In a child: a write into read-only pages would kill it."""
    path = str(tmp_path / "w.npy")
    numpy.save(path, numpy.ones(1 << 20, numpy.float32))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_MAPPED.format(path=path))],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and all(ln.startswith("refused") for ln in lines[:3]), lines
    assert lines[3] == "alive 1.0 1.0"
