"""Neural-network building blocks on top of the engine, with torch.nn's names.

module.py         Module, Parameter and the containers (Sequential, ModuleList, ModuleDict, Identity)
layers.py         Linear, Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                  ConvTranspose3d, MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,
                  AvgPool3d, Flatten, Unflatten, PixelShuffle, PixelUnshuffle, ChannelShuffle
pooling.py        AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, LPPool1d, LPPool2d,
                  MaxUnpool1d/2d/3d, Unfold, Fold
padding.py        ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d, 2d, 3d)
upsampling.py     Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
activation.py     ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Sigmoid, Tanh,
                  Hardtanh, Hardswish, Hardsigmoid, Softplus, Softsign, LogSigmoid, Softmax,
                  LogSoftmax, GLU, PReLU, RReLU, Softmin, Tanhshrink, Softshrink, Hardshrink,
                  Threshold
normalization.py  BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm, InstanceNorm1d,
                  InstanceNorm2d, LocalResponseNorm
distance.py       CosineSimilarity, PairwiseDistance
dropout.py        Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
sparse.py         Embedding
loss.py           CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
                  BCEWithLogitsLoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss,
                  HingeEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                  MultiLabelMarginLoss, MarginRankingLoss, CosineEmbeddingLoss, TripletMarginLoss
functional        the same computations as functions (each one an op's own, from ``ops/``)
init, utils       weight initialisation; gradient clipping and parameter vectors
parallel          DataParallel (the module, run as it is: no GPUs), DistributedDataParallel (refused)
"""
from . import functional
from .. import unsupported
from . import init
from . import utils
from . import parallel
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                         Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6,
                         RReLU, Sigmoid, SiLU, Softmax, Softmin, Softplus, Softshrink, Softsign,
                         Tanh, Tanhshrink, Threshold)
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                      FeatureAlphaDropout)
from .layers import (AvgPool1d, AvgPool2d, AvgPool3d, Conv1d, Conv2d, Conv3d, ConvTranspose1d,
                     ConvTranspose2d, ConvTranspose3d, Flatten, Linear, MaxPool1d, MaxPool2d,
                     MaxPool3d, PixelShuffle, PixelUnshuffle, ChannelShuffle, Unflatten)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .loss import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, KLDivLoss,
                   MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                   MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss)
from .module import Identity, Module, ModuleDict, ModuleList, Parameter, Sequential
from .normalization import (BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            LayerNorm, LocalResponseNorm)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                      ZeroPad3d)
from .parallel import DataParallel
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, Fold, LPPool1d, LPPool2d, MaxUnpool1d,
                      MaxUnpool2d, MaxUnpool3d, Unfold)
from .sparse import Embedding
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["functional", "init", "utils", "parallel", "DataParallel",
           "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "Identity",
           "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "Flatten",
           "Unflatten", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool2d", "MaxUnpool2d", "Unfold", "Fold",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool3d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d",
           "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
           "Tanh", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "LogSigmoid",
           "Softmax", "LogSoftmax", "GLU", "PReLU", "RReLU", "Softmin", "Tanhshrink",
           "Softshrink", "Hardshrink", "Threshold",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "LocalResponseNorm", "CosineSimilarity", "PairwiseDistance",
           "Dropout", "Dropout2d",
           "Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Embedding",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
           "MultiLabelMarginLoss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss"]


# A submodule torch has and we lack (torch.nn.quantized, torch.nn.utils.rnn) is refused on import
unsupported.refuse_submodules(__name__, "torch.nn")
unsupported.refuse_submodules(utils.__name__, "torch.nn.utils")
__getattr__ = unsupported.module_getattr("tinygrad_pool.nn", "torch.nn")
