"""Neural-network building blocks on top of the engine, with torch.nn's names.

module.py         Module, Parameter and the containers (Sequential, ModuleList, ModuleDict, Identity)
layers.py         Linear, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, Flatten,
                  Unflatten
pooling.py        AdaptiveAvgPool2d, AdaptiveMaxPool2d, MaxUnpool2d, Unfold, Fold
activation.py     ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh, Softplus, LogSigmoid, Softmax,
                  LogSoftmax
normalization.py  BatchNorm1d, BatchNorm2d, LayerNorm
dropout.py        Dropout, Dropout2d
sparse.py         Embedding
loss.py           CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
                  BCEWithLogitsLoss
functional        the same computations as functions (each one an op's own, from ``ops/``)
init, utils       weight initialisation; gradient clipping and parameter vectors
parallel          DataParallel (the module, run as it is: no GPUs), DistributedDataParallel (refused)
"""
from . import functional
from .. import unsupported
from . import init
from . import utils
from . import parallel
from .activation import (ELU, GELU, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax,
                         Softplus, Tanh)
from .dropout import Dropout, Dropout2d
from .layers import (AvgPool2d, Conv2d, ConvTranspose2d, Flatten, Linear, MaxPool2d,
                     Unflatten)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Identity, Module, ModuleDict, ModuleList, Parameter, Sequential
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .parallel import DataParallel
from .pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d, Fold, MaxUnpool2d, Unfold
from .sparse import Embedding

__all__ = ["functional", "init", "utils", "parallel", "DataParallel",
           "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "Identity",
           "Linear", "Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "Flatten", "Unflatten",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "MaxUnpool2d", "Unfold", "Fold",
           "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout", "Dropout2d", "Embedding",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "BCELoss", "BCEWithLogitsLoss"]
# ==== [math] (issue 33: insert below this line) ====

# ==== [division] (issue 33: insert below this line) ====

# ==== [activation] (issue 33: insert below this line) ====
from .activation import (CELU, SELU, Hardsigmoid, Hardswish, Hardtanh, Mish,  # noqa: E402
                         ReLU6, Softsign)
__all__ += ["ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "Mish", "SELU", "CELU", "Softsign"]

# ==== [conv] (issue 33: insert below this line) ====
from .layers import (AvgPool1d, AvgPool3d, Conv1d, Conv3d, ConvTranspose1d, MaxPool1d,
                     MaxPool3d)
__all__ += ["Conv1d", "Conv3d", "ConvTranspose1d", "MaxPool1d", "AvgPool1d", "MaxPool3d",
            "AvgPool3d"]

# ==== [resize] (issue 33: insert below this line) ====
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: E402
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402
__all__ += ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
            "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
            "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

# ==== [sort] (issue 33: insert below this line) ====

# ==== [select] (issue 33: insert below this line) ====



# A submodule torch has and we lack (torch.nn.quantized, torch.nn.utils.rnn) is refused on import
unsupported.refuse_submodules(__name__, "torch.nn")
unsupported.refuse_submodules(utils.__name__, "torch.nn.utils")
__getattr__ = unsupported.module_getattr("tinygrad_pool.nn", "torch.nn")
