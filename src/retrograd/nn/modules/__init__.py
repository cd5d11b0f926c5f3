"""The layers of ``retrograd.nn``."""

from .activation import (GELU, LogSoftmax, MultiheadAttention, ReLU, Sigmoid, SiLU,  # noqa: F401
                         Softmax, Tanh)
from .container import DataParallel, ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .flatten import Flatten  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss,  # noqa: F401
                   NLLLoss, SmoothL1Loss)
from .module import Module  # noqa: F401
from .norm import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm  # noqa: F401
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .transformer import TransformerEncoder, TransformerEncoderLayer  # noqa: F401

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose2d", "CrossEntropyLoss",
    "DataParallel", "Dropout", "Embedding", "Flatten", "GELU", "GroupNorm", "Identity",
    "L1Loss", "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "ReLU", "Sequential", "SiLU",
    "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "TransformerEncoder",
    "TransformerEncoderLayer"]

from .conv_nd import Conv3d, ConvTranspose1d, ConvTranspose3d  # noqa: E402,F401
from .pooling_nd import (AdaptiveAvgPool1d, AdaptiveAvgPool3d,  # noqa: E402,F401
                         AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
                         AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool3d,
                         MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)

__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose3d", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "AvgPool1d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
            "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
