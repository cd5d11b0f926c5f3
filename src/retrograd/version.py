"""``torch.version``: the PyTorch API this build implements, and the build's facts.

``__version__`` is PyTorch's (2.13.0, the API retrograd follows) with retrograd's own
release as its local part, so code that gates on ``torch.__version__`` takes its
PyTorch 2.13 paths and anyone printing it still sees it is retrograd.
"""

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "retrograd_version"]

retrograd_version = "0.1.0"  # this package's own release (pyproject.toml's version)
__version__ = f"2.13.0+retrograd.{retrograd_version}"
debug = False
cuda = None  # no CUDA toolkit: as a CPU-only PyTorch build
git_version = "Unknown"  # what PyTorch reports for a build made outside a git checkout
hip = None
rocm = None
xpu = None
