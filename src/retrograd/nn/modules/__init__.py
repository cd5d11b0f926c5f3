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

from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402,F401

__all__ += ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
from .fold import Fold, Unfold  # noqa: E402,F401
from .flatten import Unflatten  # noqa: E402,F401
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle  # noqa: E402,F401

__all__ += ["ChannelShuffle", "Fold", "PixelShuffle", "PixelUnshuffle", "Unflatten", "Unfold"]
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d,  # noqa: E402,F401
                      ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
                      ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)

__all__ += ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
            "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
            "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
            "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
