"""``torchvision`` under :func:`retrograd.install_as_torch`: the models retrograd has.

Only ``torchvision.models`` (:mod:`retrograd.models`) exists; ``import torchvision.X``
for any other X fails with ModuleNotFoundError naming it, so a script never runs the
real torchvision on top of retrograd's tensors.
"""

from . import models  # noqa: F401

__all__ = ["models"]
__path__ = []  # a package (torchvision.models is its submodule) with no files of its own
