"""Mutation fuzzing of valid checkpoints (_checkpoint_fuzz.py), in a subprocess so that a
crash fails the test: a few hundred fixed examples by default, thousands of fresh random
ones under ``-m slow``."""

import os
import subprocess
import sys

import pytest

import retrograd

HERE = os.path.dirname(os.path.abspath(__file__))


def _fuzz(examples, *flags, timeout):
    src = os.path.dirname(os.path.dirname(os.path.abspath(retrograd.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, HERE]))
    proc = subprocess.run([sys.executable, "_checkpoint_fuzz.py", str(examples), *flags],
                          capture_output=True, text=True, env=env, cwd=HERE, timeout=timeout)
    assert proc.returncode == 0, (f"fuzzing failed (rc {proc.returncode}):\n"
                                  f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    assert "no crash, no global changed" in proc.stdout


def test_mutation_fuzz():
    _fuzz(250, timeout=120)


@pytest.mark.slow
def test_mutation_fuzz_long():
    _fuzz(5000, "--random", timeout=1800)
