"""Normalization: batch_norm and layer_norm, PyTorch's functional forms.

Both standardize the input over some axes — x̂ = (x - mean) / √(var + ε), with the biased
variance — and then scale and shift it by a per-feature weight and bias:

    batch_norm   over the batch and spatial axes (N, *spatial), one statistic per channel
    layer_norm   over the trailing ``normalized_shape`` axes, one statistic per sample

The standardization is one Function (``Standardize``); the affine part is ordinary Tensor
arithmetic on the small weight and bias. In training, batch_norm also folds the batch's mean and
**unbiased** variance into the running statistics, in place and outside the graph, as PyTorch does.
"""
import math

import numpy as np

from ..fast.quiet import quiet
from ..grad_mode import no_grad
from ..engine import Node, Tensor
from ..args import check_flag, check_floating, check_number, dtype_advice, tensor_arg


class Standardize(Node):
    """x̂ = (x - μ) / σ, σ = √(var + ε) over ``axes``;  ∂L/∂x = (g - mean(g) - x̂ mean(g x̂)) / σ

    Why a Function and not a composition of mean, subtract, multiply and sqrt (which autograd
    would differentiate for free): the arithmetic is about the same, but the composition's
    nodes keep more full-size arrays alive for their backward (the centered input among
    them), and every fresh full-size array costs a page fault per page written. This one
    keeps only the input (and two values per slice), so it is faster and holds less between
    forward and backward (measured: see benchmarks/README.md).

    It saves the input, and each slice's ``mean`` and biased ``var`` (as torch saves its mean
    and inverse std; batch_norm folds them into its running statistics). Backward needs only
    the input: it recomputes μ and σ from it with operations that work on arrays and on
    Tensors alike, so under ``create_graph=True`` σ's own dependence on x is recorded and
    higher-order gradients come out right. (Using the saved statistics would spare that, but
    would make σ a constant there.)
    """

    def forward(ctx, x, axes, eps):
        x_hat, mean, var = standardized(x, axes, eps)
        ctx.save_for_backward(x=x, mean=mean, var=var)
        return x_hat

    def backward(ctx, grad):
        axes, eps = ctx.attrs["axes"], ctx.attrs["eps"]
        x, _, _ = ctx.saved_tensors  # (the statistics are recomputed: see above)
        x_hat, _, var = standardized(x, axes, eps)
        inv_std = (var + eps) ** -0.5
        mean_grad = grad.mean(axis=axes, keepdims=True)
        mean_grad_x_hat = (grad * x_hat).mean(axis=axes, keepdims=True)
        return (grad - mean_grad - x_hat * mean_grad_x_hat) * inv_std


def standardized(x, axes: tuple, eps: float):
    """(x̂, mean, biased variance) over ``axes`` (kept as length-1 axes) — arrays or Tensors."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=axes, keepdims=True)
    return centered * (var + eps) ** -0.5, mean, var


# ---- argument checks ------------------------------------------------------------------------
def _feature_arg(op: str, name: str, value, input: Tensor, shape: tuple, expected: str):
    """An optional per-feature tensor (weight, bias, running statistic), checked against
    ``shape`` (``expected`` says what that shape is) and the input's dtype; None stays None."""
    if value is None:
        return None
    value = tensor_arg(op, name, value)
    if value.shape != shape:
        raise RuntimeError(f"{op}: expected {name} to have shape {list(shape)} ({expected}), "
                           f"but got {name} of shape {list(value.shape)} (input shape "
                           f"{list(input.shape)})")
    if value.dtype != input.dtype:
        raise RuntimeError(f"{op}: {name} has dtype {value.dtype} but input has dtype "
                           f"{input.dtype}; all inputs must share the same dtype (mixed dtype): "
                           f"{dtype_advice(name, value.dtype, input.dtype)}")
    return value


def _affine(x_hat: Tensor, weight, bias, shape: tuple) -> Tensor:
    """x̂ · weight + bias, with weight and bias broadcast as ``shape``."""
    out = x_hat
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


# ---- the functions --------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5) -> Tensor:
    """Normalize each channel of an (N, C, ...) input by its statistics over (N, ...).

    training: the batch's mean and biased variance normalize; running_mean and running_var
    (when given) become (1 - momentum) · running + momentum · batch statistic, the variance
    unbiased (× n / (n - 1)), written in place with no graph (their version is bumped).
    Otherwise: the running statistics normalize, and receive no gradient.
    """
    op = "batch_norm"
    input = tensor_arg(op, "input", input)
    check_floating(op, "input", input)
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions (N, C, ...), got "
                           f"shape {input.shape}")
    training = check_flag(op, "training", training)
    momentum, eps = check_number(op, "momentum", momentum), check_number(op, "eps", eps)
    channels = (input.shape[1],)
    per_channel = "one element per channel, input.shape[1]"
    running_mean = _feature_arg(op, "running_mean", running_mean, input, channels, per_channel)
    running_var = _feature_arg(op, "running_var", running_var, input, channels, per_channel)
    weight = _feature_arg(op, "weight", weight, input, channels, per_channel)
    bias = _feature_arg(op, "bias", bias, input, channels, per_channel)
    if (running_mean is None) != (running_var is None):
        if training:
            raise ValueError(f"{op}: running_mean and running_var must either both be None "
                             f"or neither be None")
    if not training and (running_mean is None or running_var is None):
        missing = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{op}: {missing} must be defined in evaluation mode "
                           f"(training=False normalizes by the running statistics)")
    axes = (0,) + tuple(range(2, input.ndim))
    count = math.prod(input.shape[a] for a in axes)  # values per channel
    if training and count == 1:
        raise ValueError(f"{op}: expected more than 1 value per channel when training, got "
                         f"input size {list(input.shape)}")
    if training and eps <= 0:
        raise ValueError(f"{op}: eps must be positive during training, but got {eps}")
    if eps < 0:
        raise ValueError(f"{op}: eps must be non-negative, but got {eps}")
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)

    if not training:
        # One scale and one shift per channel, as PyTorch's CPU kernel computes it:
        # (x - mean) / σ · w + b = x · (w / σ) + (b - mean · w / σ).
        # (1 / √, as torch's kernel: a variance of -inf gives NaN there, where ** -0.5 gives 0)
        with quiet():  # a negative or zero variance
            inv_std = 1 / np.sqrt(running_var._data + input.dtype.type(eps))
        scale = Tensor._make(inv_std, None) if weight is None else weight * inv_std
        shift = -running_mean._data * scale
        if bias is not None:
            shift = shift + bias
        return input * scale.reshape(shape) + shift.reshape(shape)

    x_hat, node = Standardize.apply(input, axes=axes, eps=eps, return_ctx=True)
    if running_mean is not None:
        _, batch_mean, batch_var = node.saved_tensors
        with no_grad():
            _update_running(running_mean, batch_mean, momentum)
            _update_running(running_var, batch_var * (count / (count - 1)), momentum)
    return _affine(x_hat, weight, bias, shape)


def _update_running(running: Tensor, batch_statistic: np.ndarray, momentum: float) -> None:
    """running ← (1 - momentum) · running + momentum · batch statistic, in place."""
    statistic = np.asarray(batch_statistic).reshape(running.shape)
    running._data *= 1 - momentum
    running._data += momentum * statistic
    running._bump_version()  # graphs that saved the buffer must notice the write


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` axes of each sample, then scale by
    weight and shift by bias (both of shape ``normalized_shape``)."""
    op = "layer_norm"
    input = tensor_arg(op, "input", input)
    if not isinstance(normalized_shape, (tuple, list)) or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in normalized_shape):
        raise TypeError(f"{op}: normalized_shape must be a tuple (or list) of ints, got "
                        f"{type(normalized_shape).__name__} {normalized_shape!r}")
    normalized_shape = tuple(int(n) for n in normalized_shape)
    if not normalized_shape:
        raise RuntimeError(f"{op}: expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = []")
    eps = check_number(op, "eps", eps)
    k = len(normalized_shape)
    if input.ndim < k or input.shape[input.ndim - k:] != normalized_shape:
        raise RuntimeError(f"{op}: given normalized_shape={list(normalized_shape)}, expected "
                           f"input with shape [*, {', '.join(map(str, normalized_shape))}], but "
                           f"got input of size {list(input.shape)}")
    check_floating(op, "input", input)
    weight = _feature_arg(op, "weight", weight, input, normalized_shape, "normalized_shape")
    bias = _feature_arg(op, "bias", bias, input, normalized_shape, "normalized_shape")
    axes = tuple(range(input.ndim - k, input.ndim))
    x_hat = Standardize.apply(input, axes=axes, eps=eps)
    return _affine(x_hat, weight, bias, normalized_shape)
