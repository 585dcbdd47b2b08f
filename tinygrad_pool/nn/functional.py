"""PyTorch's ``torch.nn.functional`` names and signatures, on tinygrad_pool Tensors.

    import tinygrad_pool.nn.functional as F
    y = F.max_pool2d(F.relu(F.conv2d(x, w, stride=1, padding=1)), 2)

Each function is the op's own (``tinygrad_pool.ops``), which checks its arguments with errors
that name the op, the argument and the shapes; this module only gathers them under torch's names.
"""
from ..ops.conv import conv2d
from ..ops.loss import (cross_entropy, log_softmax, mse_loss, nll_loss, softmax,
                        sum_of_squares)
from ..ops.pool import TIE_RULES, avg_pool2d, max_pool2d
from ..ops.args import REDUCTIONS, tensor_arg
from ..tensor import Tensor

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "relu", "sigmoid", "tanh", "flatten", "linear",
           "mse_loss", "cross_entropy", "nll_loss", "log_softmax", "softmax", "sum_of_squares",
           "TIE_RULES", "REDUCTIONS"]


def relu(input): return input.relu()
def sigmoid(input): return input.sigmoid()
def tanh(input): return input.tanh()
def flatten(input, start_dim=0, end_dim=-1): return input.flatten(start_dim, end_dim)


def linear(input, weight, bias=None) -> Tensor:
    """input @ weightᵀ + bias, with PyTorch's (out_features, in_features) weight layout."""
    input, weight = tensor_arg("linear", "input", input), tensor_arg("linear", "weight", weight)
    if weight.ndim != 2 or input.ndim < 1 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input has shape {input.shape} but weight has shape "
                         f"{weight.shape}; expected input (..., {weight.shape[-1]}) and a 2-D "
                         f"weight (out_features, in_features)")
    out = input @ weight.T
    if bias is not None:
        out = out + bias
    return out
