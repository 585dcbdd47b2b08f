"""PyTorch's ``torch.nn.functional`` names and signatures, on tinygrad_pool Tensors.

    import tinygrad_pool.nn.functional as F
    y = F.max_pool2d(F.relu(F.conv2d(x, w, stride=1, padding=1)), 2)

Each function checks its arguments, with errors that name the op, the argument and the shapes,
then applies one Function from ``tinygrad_pool.ops``.
"""
import numpy as np

from ..ops.conv import Conv2d
from ..ops.loss import CrossEntropy, LogSoftmax, SumOfSquares
from ..ops.pool import AvgPool2d, MaxPool2d
from ..ops.reduce import normalize_axis
from ..ops.window import (check_4d, check_windows_reach_input, pair, pool_output_size,
                          window_extent)
from ..tensor import Tensor

TIE_RULES = ("first", "split", "all")
REDUCTIONS = ("mean", "sum", "none")


def _tensor(op: str, name: str, value) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, list, tuple, int, float)):
        return Tensor(value)
    raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")


def relu(input): return input.relu()
def sigmoid(input): return input.sigmoid()
def tanh(input): return input.tanh()
def flatten(input, start_dim=0, end_dim=-1): return input.flatten(start_dim, end_dim)


def _conv_padding(padding, kernel, dilation, stride) -> tuple:
    """(top, bottom, left, right) from an int, a pair, "valid" or "same"."""
    if padding == "valid":
        return 0, 0, 0, 0
    if padding == "same":
        if stride != (1, 1):
            raise ValueError(f"conv2d: padding='same' needs stride=1, got stride={stride}")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)  # PyTorch puts the odd pixel at the bottom/right
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    if isinstance(padding, str):
        raise ValueError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    ph, pw = pair("conv2d", "padding", padding, minimum=0)
    return ph, ph, pw, pw


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Cross-correlate NCHW ``input`` with ``weight`` (F, C/groups, kh, kw), like torch."""
    input, weight = _tensor("conv2d", "input", input), _tensor("conv2d", "weight", weight)
    check_4d("conv2d", "input", input.data)
    check_4d("conv2d", "weight", weight.data)
    stride, dilation = pair("conv2d", "stride", stride), pair("conv2d", "dilation", dilation)
    if not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    n, c, h, w = input.shape
    f, cg, kh, kw = weight.shape
    if c != cg * groups:
        raise ValueError(f"conv2d: input has {c} channels but weight expects {cg * groups} "
                         f"(weight shape {weight.shape}, groups={groups}; input shape {input.shape})")
    if f % groups:
        raise ValueError(f"conv2d: weight has {f} filters, not divisible by groups={groups}")
    if bias is not None:
        bias = _tensor("conv2d", "bias", bias)
        if bias.shape != (f,):
            raise ValueError(f"conv2d: bias must have shape ({f},) for a weight of shape "
                             f"{weight.shape}, got {bias.shape}")
    pads = _conv_padding(padding, (kh, kw), dilation, stride)
    out_hw = []
    for axis, size, k, s, d, lo, hi in (("height", h, kh, stride[0], dilation[0], *pads[:2]),
                                         ("width", w, kw, stride[1], dilation[1], *pads[2:])):
        if size + lo + hi < window_extent(k, d):
            raise ValueError(f"conv2d: kernel {window_extent(k, d)} (kernel {k}, dilation {d}) is "
                             f"larger than the padded input {axis} {size + lo + hi} "
                             f"(input shape {input.shape}, weight shape {weight.shape})")
        out_hw.append((size + lo + hi - window_extent(k, d)) // s + 1)
    parents = (input, weight) if bias is None else (input, weight, bias)
    return Conv2d.apply(*parents, stride=stride, padding=pads, dilation=dilation, groups=groups,
                        out_hw=tuple(out_hw))


def _pool_args(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked pooling arguments: (the Function's attributes, dilation, the input tensor)."""
    input = _tensor(op, "input", input)
    check_4d(op, "input", input.data)
    kernel = pair(op, "kernel_size", kernel_size)
    stride = kernel if stride is None or stride == [] else pair(op, "stride", stride)
    padding, dilation = pair(op, "padding", padding, minimum=0), pair(op, "dilation", dilation)
    for p, k in zip(padding, kernel):
        if p > k // 2:  # so that no window lies entirely in the padding
            raise ValueError(f"{op}: padding {padding} must be at most half of "
                             f"kernel_size={kernel}")
    out_hw = tuple(pool_output_size(op, size, k, s, p, d, ceil_mode, axis)
                   for size, k, s, p, d, axis in zip(input.shape[2:], kernel, stride, padding,
                                                     dilation, ("height", "width")))
    for size, k, s, p, d, n, axis in zip(input.shape[2:], kernel, stride, padding, dilation,
                                         out_hw, ("height", "width")):
        check_windows_reach_input(op, size, k, s, p, d, n, axis)
    return dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                out_hw=out_hw), dilation, input


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False, *, ties="first"):
    """Max over k×k windows, storing the argmax for backward (torch's signature, plus ``ties``).

    With ``return_indices=True`` also returns the argmax as a flat index into each H×W plane,
    exactly PyTorch's indices. ``ties`` routes the gradient of a window with equal maxima to the
    first ("first", PyTorch), splits it equally ("split"), or gives each the whole ("all", the
    seed article's rule; not a subgradient).
    """
    if ties not in TIE_RULES:
        raise ValueError(f"max_pool2d: ties must be one of {TIE_RULES}, got {ties!r}")
    attrs, dilation, input = _pool_args("max_pool2d", input, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    out, ctx = MaxPool2d.apply_with_ctx(input, dilation=dilation, ties=ties, **attrs)
    if return_indices:
        return out, Tensor(ctx.argmax.astype(np.int64))  # a copy: the op reuses its buffer
    return out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over k×k windows, with torch's padding and divisor rules."""
    attrs, _, input = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    return AvgPool2d.apply(input, count_include_pad=bool(count_include_pad),
                           divisor_override=divisor_override, **attrs)


def sum_of_squares(input) -> Tensor:
    """Σ x² over every element (the seed article's cost is ½ · sum_of_squares(output - target))."""
    return SumOfSquares.apply(_tensor("sum_of_squares", "input", input))


def _check_reduction(op, reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def mse_loss(input, target, reduction="mean") -> Tensor:
    """Mean (or sum) of (input - target)². The shapes must match: silent broadcasting between,
    say, (N, 1) and (N,) is the classic bug this refuses."""
    _check_reduction("mse_loss", reduction)
    input, target = _tensor("mse_loss", "input", input), input._const(target)
    if input.shape != target.shape:
        raise ValueError(f"mse_loss: input has shape {input.shape} but target has shape "
                         f"{target.shape}; they must match")
    squared = (input - target) ** 2
    if reduction == "none":
        return squared
    return squared.sum() if reduction == "sum" else squared.mean()


def log_softmax(input, dim=-1) -> Tensor:
    input = _tensor("log_softmax", "input", input)
    return LogSoftmax.apply(input, dim=normalize_axis("log_softmax", input.ndim, dim))


def softmax(input, dim=-1) -> Tensor:
    return log_softmax(input, dim).exp()


def cross_entropy(input, target, reduction="mean") -> Tensor:
    """Mean of -log softmax(input)[target] over the batch: logits (N, C), integer labels (N,)."""
    _check_reduction("cross_entropy", reduction)
    input = _tensor("cross_entropy", "input", input)
    labels = target.data if isinstance(target, Tensor) else np.asarray(target)
    if input.ndim != 2:
        raise ValueError(f"cross_entropy: input must be 2-D logits (N, C), got shape {input.shape}")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: target must hold integer class labels, got dtype {labels.dtype}")
    if labels.shape != (input.shape[0],):
        raise ValueError(f"cross_entropy: target has shape {labels.shape} but input has shape "
                         f"{input.shape}; expected ({input.shape[0]},)")
    if labels.size and (labels.min() < 0 or labels.max() >= input.shape[1]):
        raise ValueError(f"cross_entropy: labels must lie in [0, {input.shape[1]}), got "
                         f"{labels.min()}..{labels.max()}")
    return CrossEntropy.apply(input, Tensor._make(labels, None), reduction=reduction)


def linear(input, weight, bias=None) -> Tensor:
    """input @ weightᵀ + bias, with PyTorch's (out_features, in_features) weight layout."""
    input, weight = _tensor("linear", "input", input), _tensor("linear", "weight", weight)
    if weight.ndim != 2 or input.ndim < 1 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input has shape {input.shape} but weight has shape "
                         f"{weight.shape}; expected input (..., {weight.shape[-1]}) and a 2-D "
                         f"weight (out_features, in_features)")
    out = input @ weight.T
    if bias is not None:
        out = out + bias
    return out
