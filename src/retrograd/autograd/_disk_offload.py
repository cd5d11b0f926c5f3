"""The files behind ``save_on_disk``: private directories, one file per saved tensor, and
the sweep that removes what a killed process left.

Each context writes into its own directory, made 0700 (files 0600) in ``directory`` or
the system's temporary directory, and named ``retrograd-saved-<ns>-<pid>-<start>-<id>``:
the writing process's pid namespace, pid and start time. A process killed by a signal
runs no finalizer, so the first directory a process makes in a parent sweeps that parent
of the directories whose process is provably gone: same owner, same pid namespace, and
that pid is no longer running or now belongs to a process started at another time (the
pid was reused). Only this module's own files are unlinked there, then the directory is
removed if that left it empty; anything else in it keeps it.
"""

import errno
import os
import re
import stat
import tempfile
import threading
import uuid
import weakref

import numpy

from .._tensor import wrap
from ..backend import device_of, meta

_DIR_PREFIX = "retrograd-saved-"
_DIR_NAME = re.compile(r"retrograd-saved-(\d+)-(\d+)-(\d+)-[0-9a-f]{12}\Z")
_FILE_NAME = re.compile(r"retrograd-[0-9a-f]{32}\.bin\Z")
_swept = set()  # parent directories this process has swept
_swept_lock = threading.Lock()


def _pid_namespace():
    """The inode of this process's pid namespace (0 where there is none to read)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _start_time(pid):
    """When ``pid`` started, in clock ticks since boot (Linux's /proc/<pid>/stat field
    22); None when no such process runs; 0 when it runs (or may) but /proc cannot tell."""
    if os.name == "nt":  # no signal 0 to probe with: never provably gone
        return 0
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None
    except (OSError, ValueError, IndexError):
        return 0
    try:  # no /proc (macOS, BSD): whether the pid runs at all
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # it runs, as another user
        pass
    return 0


def _owner_is_gone(ns, pid, start):
    """Whether the process that stamped a directory ``ns-pid-start`` has certainly ended."""
    if ns != _pid_namespace():  # its pids are not ours to look up
        return False
    now = _start_time(pid)
    if now is None:
        return True
    return start != 0 and now != 0 and now != start


def _remove_dir(path, pid=None):
    """Unlink this module's files in ``path``, then remove it if nothing else is left.
    With ``pid``, only that process may (a forked child must not delete its parent's)."""
    if pid is not None and os.getpid() != pid:
        return
    try:
        with os.scandir(path) as entries:
            for e in entries:
                if _FILE_NAME.match(e.name):
                    _unlink(e.path)
        os.rmdir(path)
    except OSError:
        pass


def _unlink(path, pid=None):
    if pid is not None and os.getpid() != pid:
        return
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _sweep(parent):
    """Remove the directories that killed processes left in ``parent`` (once per process
    and parent)."""
    key = os.path.abspath(parent)
    with _swept_lock:
        if key in _swept:
            return
        _swept.add(key)
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        with os.scandir(parent) as entries:
            found = [(e.path, m) for e in entries if (m := _DIR_NAME.match(e.name))]
    except OSError:
        return
    for path, m in found:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
                and (uid is None or st.st_uid == uid)
                and _owner_is_gone(*(int(g) for g in m.groups()))):
            _remove_dir(path)


def _makedirs_private(path):
    """``os.makedirs`` making every missing level 0700 (it gives the leaf alone a mode)."""
    if os.path.isdir(path):
        return
    head = os.path.dirname(os.path.abspath(path))
    if head != os.path.abspath(path):
        _makedirs_private(head)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:  # made meanwhile; a file there fails the next mkdir, named
        pass


def _make_private_dir(parent):
    """A new directory in ``parent`` only its owner can use, stamped with this process."""
    _makedirs_private(parent)
    _sweep(parent)
    pid = os.getpid()
    stamp = f"{_DIR_PREFIX}{_pid_namespace()}-{pid}-{_start_time(pid) or 0}-"
    while True:
        path = os.path.join(parent, stamp + uuid.uuid4().hex[:12])
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # whatever the umask: the mode the sweep recognises
        return path


class PrivateDir:
    """One save_on_disk context's directory, removed when the context and every file
    written in it are gone, or at interpreter exit."""

    def __init__(self, parent):
        self.path = _make_private_dir(parent)
        weakref.finalize(self, _remove_dir, self.path, os.getpid())


def _write(path, host):
    """Write ``host``'s bytes to a new file only its owner can read."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600)
    try:
        view = memoryview(host.reshape(-1).view(numpy.uint8))
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class DiskTensor:
    """One saved tensor written to a file once; read back on every unpack; the file is
    deleted when this object dies (the node freed what it saved), by ``discard()``, or at
    interpreter exit. A meta tensor has no bytes to write: it keeps its shape and dtype
    and reads back as a new meta array, so a shape-only run books what the real one
    allocates (the memory planner prices disk offload that way)."""

    __slots__ = ("path", "shape", "dtype", "device", "_dir", "_finalizer", "__weakref__")

    def __init__(self, tensor, directory):
        data = tensor._data
        self.shape, self.dtype, self.device = data.shape, data.dtype, device_of(data)
        self._dir = directory  # the directory lives while this file does
        self.path = os.path.join(directory.path, f"retrograd-{uuid.uuid4().hex}.bin")
        self._finalizer = weakref.finalize(self, _unlink, self.path, os.getpid())
        if self.device.type == "meta":
            return
        host = data if type(data) is numpy.ndarray else data.get()
        try:
            _write(self.path, numpy.ascontiguousarray(host))
        except OSError as e:
            self._finalizer()  # no partial file stays behind
            code = errno.errorcode.get(e.errno, "unknown error")
            raise OSError(e.errno, f"{e.strerror} ({code}): save_on_disk could not write a "
                          f"saved tensor of {host.nbytes} bytes", self.path) from e

    def load(self):
        if not self._finalizer.alive:
            raise RuntimeError("a tensor saved by save_on_disk was deleted: the forward that "
                               "saved it raised an exception, so its graph cannot be used")
        if self.device.type == "meta":
            return wrap(meta.namespace.empty(self.shape, dtype=self.dtype), meta.namespace)
        arr = numpy.fromfile(self.path, dtype=self.dtype).reshape(self.shape)
        t = wrap(arr)
        return t if self.device.type == "cpu" else t.to(self.device)

    def discard(self):
        self._finalizer()
        self._dir = None  # the directory may go before this object


class _OpenEntries(threading.local):
    """This thread's open ``with`` blocks of one context, innermost last, each as
    {id(array): (array ref, version, file ref)}: per thread, since the hooks are, so a
    forward failing in one thread deletes its own files, not another thread's."""

    def __init__(self):
        self.stack = []


class DiskPacker:
    """save_on_disk's pack hook and state, apart from the context object so that the
    context holds its hook without a reference cycle (it is freed, and its directory
    removed, as soon as it is unused, with or without the garbage collector)."""

    def __init__(self, directory, min_bytes):
        self.directory = directory
        self.min_bytes = min_bytes
        self.private = None     # this context's PrivateDir, made with the first file
        self._open = _OpenEntries()

    def pack(self, tensor):
        data = tensor._data
        if data.nbytes < self.min_bytes:
            return tensor.detach()
        written = self._open.stack[-1]
        seen = written.get(id(data))
        if seen is not None and seen[0]() is data and seen[1] == tensor._vc[0]:
            packed = seen[2]()
            if packed is not None:  # this very array, unchanged, is already on disk
                return packed
        if self.private is None:
            parent = (tempfile.gettempdir() if self.directory is None
                      else os.fspath(self.directory))
            self.private = PrivateDir(parent)
        packed = DiskTensor(tensor, self.private)
        written[id(data)] = (weakref.ref(data), tensor._vc[0], weakref.ref(packed))
        return packed

    def enter(self):
        self._open.stack.append({})

    def exit(self, failed):
        """Leave the innermost entry; if its forward ``failed``, delete what it wrote."""
        written = self._open.stack.pop()
        if failed:  # the graph is abandoned
            for _, _, ref in written.values():
                packed = ref()
                if packed is not None:
                    packed.discard()
