"""save_on_disk's files: freed without the garbage collector, private to the user, swept
after a killed process, left alone by a forked child, and a failed write names its file."""

import errno
import gc
import multiprocessing
import os
import signal
import stat
import threading
import weakref

import pytest

import retrograd
from retrograd.autograd import _disk_offload, graph


def _files(d):
    return sorted(os.path.join(root, f) for root, _, files in os.walk(d) for f in files)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _save(directory=None):
    """A graph whose saved tensor is on disk, with its context."""
    x = retrograd.randn(16, 16, requires_grad=True)
    ctx = graph.save_on_disk(directory, min_bytes=0)
    with ctx:
        y = x.exp()
    return y, ctx


def test_contexts_are_freed_without_the_garbage_collector(tmp_path):
    """No reference cycle: with gc off, used contexts leave no directory behind."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        refs = []
        for _ in range(200):
            y, ctx = _save(tmp_path)
            refs.append(weakref.ref(ctx))
            del y, ctx
        assert os.listdir(tmp_path) == []
        assert all(r() is None for r in refs)
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("where", ["tempdir", "directory", "new directory"])
def test_directories_and_files_are_private(tmp_path, monkeypatch, where):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    parent = {"tempdir": None, "directory": tmp_path, "new directory": tmp_path / "a" / "b"}
    old = os.umask(0o022)
    try:
        y, ctx = _save(parent[where])
    finally:
        os.umask(old)
    private = ctx._packer.private.path
    assert os.path.dirname(private) == str(parent[where] or tmp_path)
    if where == "new directory":
        assert _mode(tmp_path / "a") == _mode(tmp_path / "a" / "b") == 0o700
    [f] = _files(tmp_path)
    assert _mode(private) == 0o700 and _mode(f) == 0o600
    y.sum().backward()


def test_a_forward_failing_in_one_thread_keeps_another_thread_s_files(tmp_path):
    """One context entered in two threads at once: each thread's block is its own (the
    other thread enters last, so a shared stack would hand it to this thread's exit)."""
    ctx = graph.save_on_disk(tmp_path, min_bytes=0)
    entered, failed, out = threading.Event(), threading.Event(), {}

    def other():
        out["x"] = x = retrograd.randn(8, requires_grad=True)
        with ctx:
            out["y"] = x.exp()
            entered.set()
            failed.wait()

    t = threading.Thread(target=other)
    with pytest.raises(ValueError):
        with ctx:
            retrograd.randn(8, requires_grad=True).exp()
            t.start()
            entered.wait()
            raise ValueError("this thread's forward failed")
    failed.set()
    t.join()
    out["y"].sum().backward()  # the other thread's file was kept
    assert retrograd.allclose(out["x"].grad, out["y"].detach())


def _child_saves_then_sleeps(directory, ready):
    y, ctx = _save(directory)
    ready.send(ctx._packer.private.path)
    signal.pause()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_files_of_a_killed_process_are_swept_at_the_next_start(tmp_path, sig):
    mp = multiprocessing.get_context("fork")
    procs = []
    for _ in range(2):  # one to kill, one that keeps running
        recv, send = mp.Pipe(duplex=False)
        p = mp.Process(target=_child_saves_then_sleeps, args=(tmp_path, send))
        p.start()
        procs.append((p, recv.recv()))
    (killed, killed_dir), (alive, alive_dir) = procs
    try:
        os.kill(killed.pid, sig)
        killed.join()
        assert len(os.listdir(killed_dir)) == 1  # a killed process cleans nothing up
        y, ctx = _save(tmp_path)  # this process's first directory there: the sweep
        assert not os.path.exists(killed_dir)
        assert len(os.listdir(alive_dir)) == 1  # its process still runs
        y.sum().backward()
    finally:
        alive.kill()
        alive.join()


def _fake_dir(parent, pid, start, tag, ns=None, mode=0o700, files=("0" * 32,)):
    """A directory named as save_on_disk names them, holding ``files``."""
    ns = _disk_offload._pid_namespace() if ns is None else ns
    d = parent / f"retrograd-saved-{ns}-{pid}-{start}-{tag * 12}"
    d.mkdir()
    for f in files:
        (d / (f"retrograd-{f}.bin" if f.isdigit() else f)).write_bytes(b"x")
    d.chmod(mode)
    return d


def _dead_pid():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_the_sweep_removes_only_what_is_provably_a_dead_process_s(tmp_path):
    me, dead = os.getpid(), _dead_pid()
    start = _disk_offload._start_time(me)
    gone = [_fake_dir(tmp_path, dead, 123, "a"),
            _fake_dir(tmp_path, me, start + 1, "b")]  # the pid now runs another process
    kept = [_fake_dir(tmp_path, me, start, "c"),       # this very process
            _fake_dir(tmp_path, dead, 0, "d", ns=1),   # another pid namespace's pid
            _fake_dir(tmp_path, dead, 0, "e", mode=0o755)]  # a mode save_on_disk never makes
    foreign = _fake_dir(tmp_path, dead, 0, "f", files=("0" * 32, "notes.txt"))
    link = tmp_path / f"retrograd-saved-{_disk_offload._pid_namespace()}-{dead}-0-{'9' * 12}"
    link.symlink_to(kept[0])
    (tmp_path / "retrograd-saved-junk").mkdir()
    y, ctx = _save(tmp_path)  # this process's first directory there: the sweep
    assert not any(p.exists() for p in gone)
    assert all(p.exists() for p in kept)
    assert os.listdir(foreign) == ["notes.txt"]  # only save_on_disk's own files go
    assert (tmp_path / "retrograd-saved-junk").is_dir() and link.is_symlink()
    assert len(os.listdir(kept[0])) == 1
    y.sum().backward()


def _child_drops_the_graph(holder):
    holder.clear()  # runs the finalizers of the file and of its directory


def test_a_forked_child_leaves_its_parent_s_files(tmp_path):
    holder = list(_save(tmp_path))
    y = holder[0]
    p = multiprocessing.get_context("fork").Process(target=_child_drops_the_graph,
                                                    args=(holder,))
    p.start()
    p.join()
    assert p.exitcode == 0 and len(_files(tmp_path)) == 1
    y.sum().backward()
    del holder, y
    assert os.listdir(tmp_path) == []


def test_a_full_disk_raises_an_oserror_naming_the_file(tmp_path, monkeypatch):
    real_write = os.write

    def full(fd, data):  # half of the bytes fit, then the disk is full
        if len(data) > 1:
            return real_write(fd, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    x = retrograd.randn(16, 16, requires_grad=True)
    with pytest.raises(OSError) as info:
        with graph.save_on_disk(tmp_path, min_bytes=0):
            x.exp()
    e = info.value
    assert e.errno == errno.ENOSPC and "ENOSPC" in str(e) and "1024 bytes" in str(e)
    assert os.path.dirname(os.path.dirname(e.filename)) == str(tmp_path)
    assert e.filename in str(e)
    assert _files(tmp_path) == []  # the partial file is gone
    del info, e
    assert os.listdir(tmp_path) == []
