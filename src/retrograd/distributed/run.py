"""``torchrun`` on MPI: ``python -m retrograd.distributed.run --nproc-per-node N script.py
args`` starts N ranks with ``mpiexec``, each with the environment torchrun gives its
workers (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK,
MASTER_ADDR, MASTER_PORT, ...), so a script written for torchrun runs unchanged.

One node per launch: MPI starts the ranks of every node from one command, so a job over
several machines is ``mpiexec -n N -ppn P -f hostfile python script.py``; its ranks take
their rank and size from MPI (``init_process_group`` needs no environment).
"""

import argparse
import os
import shutil
import sys
import uuid
from pathlib import Path

__all__ = ["get_args_parser", "main", "mpiexec_command"]


def get_args_parser():
    """torchrun's common flags, in both spellings (``--nproc-per-node``, ``--nproc_per_node``)."""
    p = argparse.ArgumentParser(prog="python -m retrograd.distributed.run",
                                description="Start a training script on several MPI ranks, "
                                            "with torchrun's environment.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="ranks on this node: a number, or 'cpu'/'auto' for one per core")
    p.add_argument("--nnodes", default="1", help="only 1 (use mpiexec with a hostfile beyond)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted: one node, local")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module, as python -m")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script as an executable, not through Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {value}") from None
    if n < 1:
        raise ValueError(f"nproc_per_node must be at least 1, got {n}")
    return n


def _mpiexec():
    local = Path(sys.executable).parent / "mpiexec"  # the mpich wheel's, beside this Python
    found = str(local) if local.exists() else shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec not found: pip install 'retrograd[distributed]'")
    return found


def mpiexec_command(args):
    """The ``mpiexec`` argv for parsed ``args``: one block per rank, each with its own
    torchrun environment (``-env``), the rest inherited."""
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        raise ValueError("retrograd.distributed.run starts one node (--nnodes 1); for several "
                         "machines run mpiexec -n N -ppn P -f hostfile python script.py")
    n = _nproc(args.nproc_per_node)
    if args.no_python:
        program = [args.training_script]
    elif args.module:
        program = [sys.executable, "-m", args.training_script]
    else:
        program = [sys.executable, args.training_script]
    common = {"WORLD_SIZE": n, "LOCAL_WORLD_SIZE": n, "GROUP_RANK": 0, "GROUP_WORLD_SIZE": 1,
              "ROLE_NAME": "default", "ROLE_WORLD_SIZE": n, "MASTER_ADDR": args.master_addr,
              "MASTER_PORT": args.master_port, "TORCHELASTIC_RUN_ID": uuid.uuid4(),
              "TORCHELASTIC_RESTART_COUNT": 0, "TORCHELASTIC_MAX_RESTARTS": 0}
    if n > 1 and "OMP_NUM_THREADS" not in os.environ:
        common["OMP_NUM_THREADS"] = 1  # as torchrun: N ranks must not each take every core
    argv = [_mpiexec()]
    for rank in range(n):
        env = {**common, "RANK": rank, "LOCAL_RANK": rank, "ROLE_RANK": rank}
        if rank:
            argv.append(":")
        argv += ["-n", "1"]
        for name, value in env.items():
            argv += ["-env", name, str(value)]
        argv += [*program, *args.training_script_args]
    return argv


def main(argv=None):
    """Parse torchrun's flags and replace this process with ``mpiexec``."""
    parser = get_args_parser()
    args = parser.parse_args(argv)
    try:
        command = mpiexec_command(args)
    except (ValueError, RuntimeError) as e:
        parser.error(str(e))
    sys.stdout.flush()
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
