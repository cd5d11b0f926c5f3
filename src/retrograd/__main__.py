"""``python -m retrograd run | demo | memory-viz``: the project's command line."""

import sys

_USAGE = """usage: python -m retrograd {run,demo,memory-viz,plan} [options]

  run         [--device-map cuda=cpu] [--random-weights] script.py [args]: a PyTorch
              script, unchanged, with `import torch` giving retrograd (run -h: details)
  demo        seed 000 on the CPU: 3 steps with the usual loop, 3 with the optimizer
              fused into backward; memory snapshots, an HTML report and a peak table
              (--dtype bfloat16: those in bfloat16, beside the usual loop in float32)
  memory-viz  SNAPSHOT.pickle -o timeline.html: the offline memory timeline page
  plan        --model vit_b_16 --batch 8 --budget 1.5GiB: the fastest plan that fits a
              memory budget, predicted on meta, verified on real steps, HTML report
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, end="")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        from ._runner import main as run
    elif cmd == "demo":
        from .demo import main as run
    elif cmd == "memory-viz":
        from .memory.viz import main as run
    elif cmd == "plan":
        from .memory.planner.cli import main as run
    else:
        print(_USAGE, end="", file=sys.stderr)
        print(f"python -m retrograd: unknown command {cmd!r}", file=sys.stderr)
        return 2
    return run(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
