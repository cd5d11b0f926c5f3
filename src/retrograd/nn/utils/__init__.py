"""``retrograd.nn.utils``: gradient clipping, parameter/vector conversion, parametrize,
weight_norm, and the packed sequences of ``rnn``."""

from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import parametrizations, parametrize, rnn  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
           "remove_weight_norm", "rnn", "vector_to_parameters", "weight_norm"]
