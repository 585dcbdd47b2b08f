"""tinygrad_pool: a small, readable autograd engine on NumPy, made to show how backpropagation
flows through a CNN — convolution, max pooling (with the argmax it stores) and ReLU.

    from tinygrad_pool import Tensor
    import tinygrad_pool.nn.functional as F

It speaks PyTorch: ``import tinygrad_pool as torch`` (and ``tinygrad_pool.nn``,
``tinygrad_pool.optim``, ``tinygrad_pool.utils.data``) runs a PyTorch training script unchanged
and prints the same numbers; docs/porting.md lists the names and the known differences. A torch
name that is not here raises AttributeError pointing there.

Graph pictures (``draw_graph``, ``save_graph``) come from ``tinygrad_pool.viz``, imported on
first use: training needs neither it nor the ``graphviz`` package.
"""
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .engine import Node, Size, Tensor
from . import methods  # noqa: F401  (gives Tensor its op methods and operators)
from . import unsupported
from .dtypes import (bool, double, float, float16, float32, float64, get_default_dtype, half,
                     int, int8, int16, int32, int64, long, set_default_dtype, short, uint8)
from .creation import (BoolTensor, ByteTensor, CharTensor, DoubleTensor,  # legacy types
                       FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                       randperm, tensor, zeros, zeros_like)
from .functions import *  # noqa: F401,F403  (torch's module-level functions: exp, cat, where...)
from .functions import __all__ as _FUNCTIONS
from .gradient_check import GradcheckError, NondifferentiablePointWarning, gradcheck, gradcheck_report
from . import autograd  # noqa: E402
from .autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402
from . import nn  # noqa: E402  (after Tensor: nn builds on it)
from . import optim  # noqa: E402
from . import utils  # noqa: E402
from .random import (DEFAULT_GENERATOR as default_generator, Generator,  # noqa: E402
                     get_rng_state, initial_seed, manual_seed, multinomial, seed, set_rng_state)
from .serialization import load, save  # noqa: E402
from .devices import device  # noqa: E402
from . import accelerator, backends, cuda  # noqa: E402
from .kernels import get_kernels, set_kernels  # noqa: E402
from . import fast  # noqa: E402,F401  (registers the faster kernels under their names)
from .threads import (get_num_interop_threads, get_num_threads,  # noqa: E402
                      set_num_interop_threads, set_num_threads)

__version__ = "0.1.0"
__all__ = ["Tensor", "Size", "Node", "no_grad", "enable_grad", "inference_mode",
           "set_grad_enabled", "is_grad_enabled", "is_inference_mode_enabled", "gradcheck",
           "GradcheckError", "gradcheck_report", "NondifferentiablePointWarning",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "autograd", "nn", "optim",
           "utils", "manual_seed", "save", "load", "draw_graph", "save_graph", "GraphvizNotFound",
           "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "device", "cuda", "accelerator", "backends", "Generator",
           "default_generator", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "set_kernels", "get_kernels",
           # dtypes
           "float16", "half", "float32", "float", "float64", "double", "int8", "uint8", "int16",
           "short", "int32", "int", "int64", "long", "bool", "get_default_dtype",
           "set_default_dtype", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
           # making tensors
           "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "rand", "randn", "rand_like", "randn_like",
           "randint", "randperm", "multinomial", "arange", "linspace", "eye",
           ] + list(_FUNCTIONS)

_DRAWING = ("draw_graph", "save_graph", "GraphvizNotFound")


def __getattr__(name):
    # The drawing names load tinygrad_pool.viz (and graphviz) only when first asked for.
    if name in _DRAWING:
        from . import viz
        return getattr(viz, name)
    return _unsupported(name)


_unsupported = unsupported.module_getattr("tinygrad_pool", "torch")
