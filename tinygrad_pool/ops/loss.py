"""Losses and the log-softmax they rest on.

cross_entropy is log_softmax followed by the negative log-likelihood, as in PyTorch: two small
Functions whose derivatives are each one line, and the same saved tensors as PyTorch's (the
log-softmax's output; nothing of the logits).
"""
import math

import numpy as np

from ..tensor import Function, Tensor
from .args import check_reduction, tensor_arg
from .elementwise import Exp
from .reduce import normalize_axis


class SumOfSquares(Function):
    """L = Σ xᵢ²;  ∂L/∂x = 2x — the seed article's cost (with its ½ folded into the caller)"""

    def forward(ctx, x):
        ctx.x = x
        return np.vdot(x, x) if x.dtype.kind == "f" else (x * x).sum()

    def backward(ctx, grad):
        return (2 * grad) * ctx.x


class MSELoss(Function):
    """L = mean (x - t)²;  ∂L/∂x = 2 (x - t) / n,  ∂L/∂t = -∂L/∂x  (saves both, as PyTorch)"""

    def forward(ctx, input, target, reduction):
        ctx.input, ctx.target = input, target
        squared = (input - target) ** 2
        if reduction == "none":
            return squared
        return squared.sum() if reduction == "sum" else squared.mean()

    def backward(ctx, grad):
        reduction = ctx.attrs["reduction"]
        scale = 2 / math.prod(ctx.input.shape) if reduction == "mean" else 2
        grad_input = (ctx.input - ctx.target) * (grad * scale)
        return (grad_input if ctx.needs_input_grad[0] else None,
                -grad_input if ctx.needs_input_grad[1] else None)


class LogSoftmax(Function):
    """y = x - logΣexp(x);  ∂L/∂x = g - softmax(x) · Σg,  softmax(x) = exp(y)

    Subtracting the max before exp keeps every exponent ≤ 0, so nothing overflows.
    """

    def forward(ctx, x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
        ctx.out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        return ctx.out

    def backward(ctx, grad):
        return grad - Exp.call(ctx.out) * grad.sum(axis=ctx.attrs["dim"], keepdims=True)


class NLLLoss(Function):
    """L = -mean log_probs[n, target[n]];  ∂L/∂log_probs = -onehot(target) / N"""

    def forward(ctx, log_probs, target, reduction):
        losses = -log_probs[np.arange(len(target)), target]
        ctx.shape = log_probs.shape
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.mean()

    def backward(ctx, grad):
        target, reduction = ctx.attrs["target"], ctx.attrs["reduction"]
        n = len(target)
        picked = np.zeros(ctx.shape, dtype=grad.dtype)  # a constant: where each label is
        picked[np.arange(n), target] = -1
        if reduction == "none":
            return picked * grad[:, None]
        return picked * (grad / n if reduction == "mean" else grad)


def sum_of_squares(input) -> Tensor:
    """Σ x² over every element (the seed article's cost is ½ · sum_of_squares(output - target))."""
    return SumOfSquares.apply(tensor_arg("sum_of_squares", "input", input))


def mse_loss(input, target, reduction="mean") -> Tensor:
    """Mean (or sum) of (input - target)². The shapes must match: silent broadcasting between,
    say, (N, 1) and (N,) is the classic bug this refuses."""
    check_reduction("mse_loss", reduction)
    input = tensor_arg("mse_loss", "input", input)
    target = input._const(target)
    if input.shape != target.shape:
        raise ValueError(f"mse_loss: input has shape {input.shape} but target has shape "
                         f"{target.shape}; they must match")
    return MSELoss.apply(input, target, reduction=reduction)


def log_softmax(input, dim=-1) -> Tensor:
    input = tensor_arg("log_softmax", "input", input)
    return LogSoftmax.apply(input, dim=normalize_axis("log_softmax", input.ndim, dim))


def softmax(input, dim=-1) -> Tensor:
    return log_softmax(input, dim).exp()


def _labels(op: str, input: Tensor, target) -> np.ndarray:
    """The integer class labels of a (N, C) input, checked."""
    labels = target.data if isinstance(target, Tensor) else np.asarray(target)
    if input.ndim != 2:
        raise ValueError(f"{op}: input must be 2-D (N, C), got shape {input.shape}")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class labels, got dtype {labels.dtype}")
    if labels.shape != (input.shape[0],):
        raise ValueError(f"{op}: target has shape {labels.shape} but input has shape "
                         f"{input.shape}; expected ({input.shape[0]},)")
    if labels.size and (labels.min() < 0 or labels.max() >= input.shape[1]):
        raise ValueError(f"{op}: labels must lie in [0, {input.shape[1]}), got "
                         f"{labels.min()}..{labels.max()}")
    return labels


def nll_loss(input, target, reduction="mean") -> Tensor:
    """-log_probs[n, target[n]], averaged (or summed) over the batch: log-probabilities (N, C)."""
    check_reduction("nll_loss", reduction)
    input = tensor_arg("nll_loss", "input", input)
    return NLLLoss.apply(input, target=_labels("nll_loss", input, target), reduction=reduction)


def cross_entropy(input, target, reduction="mean") -> Tensor:
    """Mean of -log softmax(input)[target] over the batch: logits (N, C), integer labels (N,)."""
    check_reduction("cross_entropy", reduction)
    input = tensor_arg("cross_entropy", "input", input)
    labels = _labels("cross_entropy", input, target)
    return NLLLoss.apply(log_softmax(input, 1), target=labels, reduction=reduction)
