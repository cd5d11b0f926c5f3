"""``python -m retrograd run [options] script.py [args]``: a PyTorch script, unchanged, on
retrograd.

The script runs as ``python script.py args`` would run it (``sys.argv``, ``sys.path[0]``,
a ``__main__`` module with its ``__file__``, exit status, and a traceback of the
script's frames only) after :func:`retrograd.install_as_torch`, so ``torch`` and every
``torch.*`` module it imports are retrograd's.
"""

import atexit
import builtins
import importlib.machinery
import os
import signal
import sys
import types

from ._install import install_as_torch

USAGE = """\
usage: python -m retrograd run [--device-map SRC=DST] [--random-weights] script.py [args ...]

Runs script.py as `python script.py args` would, with `import torch` (every torch.*
module, and torchvision.models) resolving to retrograd.

  --device-map SRC=DST  run what asks for device SRC on DST instead, said once on stderr
                        (cuda=cpu: a GPU script runs on the CPU without edits)
  --random-weights      models asked for pretrained weights keep their random
                        initialisation (nothing is downloaded), said once on stderr
"""


class _UsageError(Exception):
    pass


def main(argv):
    """Run the script ``argv`` names; its exit status."""
    try:
        parsed = _parse(argv)
        if parsed is None:
            print(USAGE, end="")
            return 0
        device_map, random_weights, script, args = parsed
        try:
            install_as_torch(device_map=device_map, random_weights=random_weights)
        except Exception as e:  # only the device map can be refused
            raise _UsageError(f"--device-map: {e}") from None
    except _UsageError as e:
        print(USAGE.splitlines()[0], file=sys.stderr)
        print(f"python -m retrograd run: {e} (-h for help)", file=sys.stderr)
        return 2
    return _run_script(script, args)


def _parse(argv):
    """(device_map, random_weights, script, script args) from the options before the
    script; None for --help."""
    device_map, random_weights, i = {}, False, 0
    while i < len(argv) and argv[i].startswith("-"):
        arg, i = argv[i], i + 1
        if arg in ("-h", "--help"):
            return None
        if arg == "--":
            break
        if arg == "--random-weights":
            random_weights = True
        elif arg == "--device-map" or arg.startswith("--device-map="):
            if arg == "--device-map":
                if i == len(argv):
                    raise _UsageError("--device-map needs a value, e.g. cuda=cpu")
                arg, i = argv[i], i + 1
            for pair in arg.removeprefix("--device-map=").split(","):
                src, eq, dst = pair.partition("=")
                if not (src and eq and dst):
                    raise _UsageError(f"--device-map expects SRC=DST (e.g. cuda=cpu), "
                                      f"got {pair!r}")
                device_map[src] = dst
        else:
            raise _UsageError(f"unknown option {arg!r}")
    if i == len(argv):
        raise _UsageError("no script given")
    return device_map, random_weights, argv[i], argv[i + 1:]


def _run_script(path, args):
    filename = os.path.abspath(path)
    try:
        with open(filename, "rb") as f:
            source = f.read()
    except OSError as e:
        print(f"{sys.orig_argv[0]}: can't open file {filename!r}: [Errno {e.errno}] "
              f"{e.strerror}", file=sys.stderr)
        return 2
    sys.argv = [path, *args]
    if not sys.flags.safe_path:  # python -P script.py does not prepend the script's folder
        sys.path[0] = os.path.dirname(os.path.realpath(path))
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=filename, __cached__=None, __annotations__={},
                         __builtins__=builtins,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", filename))
    sys.modules["__main__"] = main  # for good, as for a script: pickle and spawn look here
    try:
        _exec(source, filename, main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: B036 (reported as Python reports it, then exit)
        return _report(e)
    return 0


def _exec(source, filename, namespace):
    exec(compile(source, filename, "exec", dont_inherit=True), namespace)


def _report(exc):
    """Print ``exc`` as Python prints an uncaught exception, from the script's first frame
    on (the runner's own frames are not the script's), and exit as Python would."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not _exec.__code__:
        tb = tb.tb_next
    tb = None if tb is None else tb.tb_next
    exc.__traceback__ = tb
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    sys.excepthook(type(exc), exc, tb)
    if isinstance(exc, KeyboardInterrupt):
        # Python ends on an uncaught KeyboardInterrupt by SIGINT once atexit has run, so
        # a shell (or a caller's subprocess) sees the interrupt.
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return 1
