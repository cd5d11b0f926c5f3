"""``torch.cpu.amp``: the deprecated CPU-bound forms of :mod:`retrograd.amp`."""

from ..amp._deprecated import CPU

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = CPU
