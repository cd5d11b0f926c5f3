"""Running a script on several MPI ranks: the ``mpirun`` fixture, skipped cleanly when mpi4py
or ``mpiexec`` (the ``retrograd[distributed]`` extra) is missing."""

import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import retrograd


def mpiexec():
    """The ``mpiexec`` beside this Python (the mpich wheel's), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


@pytest.fixture(scope="session")
def mpirun(tmp_path_factory):
    """``mpirun(source, n=2, args=(), timeout=60, launcher=None, ok=True, env=None)``:
    ``source`` (dedented) as a script on ``n`` ranks started by ``mpiexec`` (or by
    ``launcher``, an argv prefix before the script), one BLAS thread each, ``env`` added to
    the environment; the CompletedProcess, text output captured. Scripts import their
    common set-up from ``ddp_prelude``. With ``ok`` the job must
    succeed and every rank r write the line ``ok r`` (in one write: the ranks' output is
    interleaved)."""
    if importlib.util.find_spec("mpi4py") is None or mpiexec() is None:
        pytest.skip("mpi4py and mpiexec are not installed (pip install 'retrograd[distributed]')")
    src = str(Path(retrograd.__file__).resolve().parents[1])
    here = str(Path(__file__).parent)  # ddp_prelude, the DDP scripts' shared set-up
    base = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [src, here,
                                                        os.environ.get("PYTHONPATH")]))}
    folder = tmp_path_factory.mktemp("ranks")
    count = itertools.count()

    def run(source, n=2, args=(), timeout=60, launcher=None, ok=True, env=None):
        script = folder / f"script{next(count)}.py"
        script.write_text(textwrap.dedent(source))
        prefix = launcher or [mpiexec(), "-n", str(n), sys.executable]
        proc = subprocess.run([*prefix, str(script), *map(str, args)],
                              env={**base, **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)
        if ok:
            said = proc.stdout + proc.stderr
            assert proc.returncode == 0, said
            oks = sorted(line for line in proc.stdout.splitlines() if line.startswith("ok "))
            assert oks == [f"ok {r}" for r in range(n)], said
        return proc
    return run
