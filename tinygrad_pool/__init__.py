"""tinygrad_pool: a small, readable autograd engine on NumPy, made to show how backpropagation
flows through a CNN — convolution, max pooling (with the argmax it stores) and ReLU.

    from tinygrad_pool import Tensor
    import tinygrad_pool.nn.functional as F

Graph pictures (``draw_graph``, ``save_graph``) come from ``tinygrad_pool.viz``, imported on
first use: training needs neither it nor the ``graphviz`` package.
"""
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .tensor import Function, Tensor
from .gradcheck import GradcheckError, gradcheck
from . import autograd  # noqa: E402
from . import nn  # noqa: E402  (after Tensor: nn builds on it)
from . import optim  # noqa: E402
from .random import manual_seed  # noqa: E402
from .serialization import load, save  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Tensor", "Function", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled",
           "is_grad_enabled", "is_inference_mode_enabled", "gradcheck", "GradcheckError",
           "autograd", "nn", "optim", "manual_seed", "save", "load",
           "draw_graph", "save_graph", "GraphvizNotFound"]

_DRAWING = ("draw_graph", "save_graph", "GraphvizNotFound")


def __getattr__(name):
    # The drawing names load tinygrad_pool.viz (and graphviz) only when first asked for.
    if name in _DRAWING:
        from . import viz
        return getattr(viz, name)
    raise AttributeError(f"module 'tinygrad_pool' has no attribute {name!r}")
