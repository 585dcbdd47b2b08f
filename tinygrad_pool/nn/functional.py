"""PyTorch's ``torch.nn.functional`` names and signatures, on tinygrad_pool Tensors.

    import tinygrad_pool.nn.functional as F
    y = F.max_pool2d(F.relu(F.conv2d(x, w, stride=1, padding=1)), 2)

Each function is the op's own (``tinygrad_pool.ops``), which checks its arguments with errors
that name the op, the argument and the shapes; this module only gathers them under torch's names.
"""
from ..args import REDUCTIONS, check_flag, tensor_arg
from ..ops.activation import (celu, celu_, elu, gelu, glu, hardshrink, hardsigmoid, hardswish,
                              hardtanh, hardtanh_, leaky_relu, logsigmoid, mish, prelu, relu6,
                              rrelu, rrelu_, selu, selu_, silu, softmin, softplus, softshrink,
                              softsign, tanhshrink, threshold, threshold_)
from ..ops.attention import scaled_dot_product_attention
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, fold, unfold
from ..ops.conv3d import conv3d, conv_transpose3d
from ..ops.dropout import dropout, dropout2d
from ..ops.dropout_variants import alpha_dropout, dropout1d, dropout3d, feature_alpha_dropout
from ..ops.embedding import embedding, one_hot
from ..ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                        huber_loss, l1_loss, log_softmax, mse_loss, nll_loss, smooth_l1_loss,
                        softmax, sum_of_squares)
from ..ops.loss import (cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, kl_div,
                        margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
                        multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss,
                        triplet_margin_loss)
from ..ops.matmul import linear
from ..ops.movement import channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..ops.normalization import (batch_norm, cosine_similarity, group_norm, instance_norm,
                                 layer_norm, local_response_norm, normalize, pairwise_distance)
from ..ops.padding import pad
from ..ops.pool import (TIE_RULES, adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool1d,
                        avg_pool2d, max_pool1d, max_pool2d, max_unpool2d)
from ..ops.pool import (adaptive_avg_pool1d, adaptive_max_pool1d, lp_pool1d, lp_pool2d,
                        max_unpool1d)
from ..ops.pool3d import avg_pool3d, max_pool3d
from ..ops.pool3d import adaptive_avg_pool3d, adaptive_max_pool3d, max_unpool3d
from ..ops.resize import interpolate, upsample, upsample_bilinear, upsample_nearest
from .. import unsupported

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold",
           "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_unpool2d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_avg_pool3d",
           "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool3d",
           "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pad",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "relu", "relu6", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "selu_", "celu",
           "celu_", "gelu", "silu", "mish", "softplus", "logsigmoid", "softsign", "hardtanh",
           "hardtanh_", "hardswish", "hardsigmoid", "softmax", "log_softmax", "glu", "prelu",
           "softmin", "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_",
           "rrelu", "rrelu_",
           "scaled_dot_product_attention", "linear", "one_hot", "embedding", "dropout",
           "dropout2d", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
           "batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm",
           "normalize", "cosine_similarity", "pairwise_distance", "mse_loss", "l1_loss",
           "smooth_l1_loss",
           "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "sum_of_squares",
           "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "margin_ranking_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "TIE_RULES", "REDUCTIONS"]


def relu(input, inplace: bool = False):
    input = tensor_arg("relu", "input", input)
    return input.relu_() if check_flag("relu", "inplace", inplace) else input.relu()


def sigmoid(input): return tensor_arg("sigmoid", "input", input).sigmoid()
def tanh(input): return tensor_arg("tanh", "input", input).tanh()


__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.functional", "torch.nn.functional")
