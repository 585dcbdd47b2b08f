"""PyTorch's ``torch.nn.functional`` names and signatures, on tinygrad_pool Tensors.

    import tinygrad_pool.nn.functional as F
    y = F.max_pool2d(F.relu(F.conv2d(x, w, stride=1, padding=1)), 2)

Each function is the op's own (``tinygrad_pool.ops``), which checks its arguments with errors
that name the op, the argument and the shapes; this module only gathers them under torch's names.
"""
from ..ops.activation import elu, gelu, leaky_relu, logsigmoid, silu, softplus
from ..ops.args import REDUCTIONS, check_flag, product_operands, tensor_arg
from ..ops.conv import conv2d, fold, unfold
from ..ops.dropout import dropout, dropout2d
from ..ops.elementwise import BroadcastError
from ..ops.embedding import embedding, one_hot
from ..ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                        huber_loss, l1_loss, log_softmax, mse_loss, nll_loss, smooth_l1_loss,
                        softmax, sum_of_squares)
from ..ops.movement import pad
from ..ops.normalization import batch_norm, layer_norm
from ..ops.pool import (TIE_RULES, adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool2d,
                        max_pool2d, max_unpool2d)
from .. import unsupported
from ..tensor import Tensor

__all__ = ["conv2d", "unfold", "fold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
           "adaptive_max_pool2d", "max_unpool2d", "relu", "sigmoid", "tanh", "leaky_relu", "elu",
           "gelu", "silu", "softmax", "log_softmax", "linear", "pad", "one_hot",
           "embedding", "dropout", "dropout2d", "batch_norm", "layer_norm", "mse_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "sum_of_squares", "TIE_RULES", "REDUCTIONS"]


def relu(input, inplace: bool = False):
    input = tensor_arg("relu", "input", input)
    return input.relu_() if check_flag("relu", "inplace", inplace) else input.relu()


def sigmoid(input): return tensor_arg("sigmoid", "input", input).sigmoid()
def tanh(input): return tensor_arg("tanh", "input", input).tanh()


def linear(input, weight, bias=None) -> Tensor:
    """input @ weightᵀ + bias, with PyTorch's (out_features, in_features) weight layout (a 1-D
    weight, without bias, is one output feature dropped from the shape, as torch's)."""
    input, weight, bias = product_operands("linear", input, weight, bias)
    if not (weight.ndim == 2 or weight.ndim == 1 and bias is None) or input.ndim < 1 \
            or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear: input has shape {input.shape} but weight has shape "
                           f"{weight.shape}; expected input (..., in_features) and a 2-D weight "
                           f"(out_features, in_features)")
    out_shape = input.shape[:-1] + weight.shape[:-1]
    if bias is not None and bias.shape != weight.shape[:1] and not (  # torch expands the bias
            bias.ndim <= len(out_shape) and
            all(b in (1, o) for b, o in zip(bias.shape[::-1], out_shape[::-1]))):
        raise BroadcastError(f"linear: bias of shape {bias.shape} does not expand to the "
                             f"output's shape {out_shape} (input {input.shape}, weight "
                             f"{weight.shape}); expected ({weight.shape[0]},)")
    out = input @ weight.T
    if bias is not None:
        out = out + bias
    return out


__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.functional", "torch.nn.functional")
