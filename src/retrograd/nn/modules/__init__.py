"""The layers of ``retrograd.nn``."""

from .activation import (GELU, LogSoftmax, MultiheadAttention, ReLU, Sigmoid, SiLU,  # noqa: F401
                         Softmax, Tanh)
from .container import DataParallel, ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from .dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,  # noqa: F401
                      FeatureAlphaDropout)
from .flatten import Flatten  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss,  # noqa: F401
                   NLLLoss, SmoothL1Loss)
from .module import Module  # noqa: F401
from .norm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,  # noqa: F401
                   InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm,
                   LocalResponseNorm, RMSNorm)
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                          TransformerEncoder, TransformerEncoderLayer)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401

__all__ = [
    "AdaptiveAvgPool2d", "AlphaDropout", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose2d",
    "CrossEntropyLoss", "DataParallel", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "Embedding", "FeatureAlphaDropout", "Flatten", "GELU", "GroupNorm", "Identity",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "L1Loss", "LayerNorm", "Linear",
    "LocalResponseNorm", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict",
    "ModuleList", "MultiheadAttention", "NLLLoss", "RMSNorm", "ReLU", "Sequential", "SiLU",
    "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]
from .activation import (CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid,  # noqa: F401,E402
                         Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, PReLU, ReLU6,
                         RReLU, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
                         Tanhshrink, Threshold)

__all__ += ["CELU", "ELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
            "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "RReLU", "ReLU6", "SELU", "Softmax2d",
            "Softmin", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold"]

from .container import ParameterDict, ParameterList  # noqa: E402

__all__ += ["ParameterDict", "ParameterList"]

__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402,F401
from .loss import (CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss,  # noqa: E402,F401
                   HuberLoss, KLDivLoss, MarginRankingLoss, MultiLabelMarginLoss,
                   MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss)

__all__ += ["CosineSimilarity", "PairwiseDistance", "CTCLoss", "CosineEmbeddingLoss",
            "GaussianNLLLoss",
            "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
            "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
            "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss"]

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
from .conv_nd import Conv3d, ConvTranspose1d, ConvTranspose3d  # noqa: E402,F401
from .pooling_nd import (AdaptiveAvgPool1d, AdaptiveAvgPool3d,  # noqa: E402,F401
                         AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
                         AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool3d,
                         MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)

__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose3d", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "AvgPool1d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
            "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
