"""The torchrun-compatible launcher: a script written for torchrun runs unchanged on MPI
ranks (the other tests start theirs with plain mpiexec)."""

import sys

import pytest

from retrograd.distributed import run

TORCHRUN_SCRIPT = """
    import os, sys
    import retrograd as torch
    import retrograd.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    assert os.environ["LOCAL_RANK"] == os.environ["ROLE_RANK"] == str(rank)
    assert os.environ["LOCAL_WORLD_SIZE"] == str(world) and os.environ["GROUP_RANK"] == "0"
    assert (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]) == ("127.0.0.1", "29511")
    assert sys.argv[1:] == ["--lr", "0.5"], sys.argv
    dist.init_process_group("gloo", rank=rank, world_size=world)
    assert (dist.get_rank(), dist.get_world_size()) == (rank, world)
    t = torch.ones(1)
    dist.all_reduce(t)
    assert t.item() == world
    sys.stdout.write(f"ok {rank}\\n")
"""

def test_launcher_sets_torchruns_environment(mpirun):
    launcher = [sys.executable, "-m", "retrograd.distributed.run", "--nproc_per_node", "2",
                "--master-port", "29511"]
    mpirun(TORCHRUN_SCRIPT, n=2, args=["--lr", "0.5"], launcher=launcher)


def test_launcher_argv(monkeypatch):
    monkeypatch.setattr(run, "_mpiexec", lambda: "mpiexec")
    args = run.get_args_parser().parse_args(
        ["--nproc-per-node=2", "--standalone", "-m", "pkg.train", "--epochs", "3"])
    argv = run.mpiexec_command(args)
    blocks = " ".join(argv[1:]).split(" : ")
    assert len(blocks) == 2
    for rank, block in enumerate(blocks):
        words = block.split()
        env = {words[i + 1]: words[i + 2] for i, w in enumerate(words) if w == "-env"}
        assert {k: env[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")} \
            == {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
                "LOCAL_WORLD_SIZE": "2"}
        assert words[-5:] == [sys.executable, "-m", "pkg.train", "--epochs", "3"]


@pytest.mark.parametrize("flags, words", [
    (["--nnodes", "2"], "one node"),
    (["--nproc-per-node", "0"], "at least 1"),
    (["--nproc-per-node", "many"], "Unsupported nproc_per_node"),
])
def test_launcher_refuses(flags, words, capsys):
    with pytest.raises(SystemExit) as e:
        run.main([*flags, "train.py"])
    assert e.value.code == 2 and words in capsys.readouterr().err
