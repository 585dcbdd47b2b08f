"""tinygrad_pool: a small, readable autograd engine on NumPy, made to show how backpropagation
flows through a CNN — convolution, max pooling (with the argmax it stores) and ReLU.

    from tinygrad_pool import Tensor
    import tinygrad_pool.nn.functional as F
"""
from .gradcheck import GradcheckError, gradcheck
from .tensor import Function, Tensor, is_grad_enabled, no_grad
from . import nn  # noqa: E402  (after Tensor: nn builds on it)
from . import optim  # noqa: E402
from .random import manual_seed  # noqa: E402
from .serialization import load, save  # noqa: E402
from .graph import GraphvizNotFound, draw_graph, save_graph  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Tensor", "Function", "no_grad", "is_grad_enabled", "gradcheck", "GradcheckError", "nn"]
__all__ += ["optim", "manual_seed", "save", "load"]
__all__ += ["draw_graph", "save_graph", "GraphvizNotFound"]
