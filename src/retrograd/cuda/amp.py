"""``torch.cuda.amp``: the deprecated CUDA-bound forms of :mod:`retrograd.amp`."""

from ..amp._deprecated import CUDA, cuda_custom_bwd as custom_bwd, cuda_custom_fwd as custom_fwd

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler"]

autocast, GradScaler = CUDA
