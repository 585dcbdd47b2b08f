"""Losses and the fused log-softmax they rest on: one Function each, because the fused
derivative is both cheaper and more stable than the chain of its parts."""
import numpy as np

from ..tensor import Function


class SumOfSquares(Function):
    """L = Σ xᵢ²;  ∂L/∂x = 2x — the seed article's cost (with its ½ folded into the caller)"""

    def forward(ctx, x):
        ctx.x = x
        return np.vdot(x, x) if x.dtype.kind == "f" else (x * x).sum()

    def backward(ctx, grad):
        return (2 * grad) * ctx.x


class LogSoftmax(Function):
    """y = x - logΣexp(x);  ∂L/∂x = g - softmax(x) · Σg

    Subtracting the max before exp keeps every exponent ≤ 0, so nothing overflows.
    """

    def forward(ctx, x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.out = out
        return out

    def backward(ctx, grad):
        return grad - np.exp(ctx.out) * grad.sum(axis=ctx.attrs["dim"], keepdims=True)


class CrossEntropy(Function):
    """L = -mean log softmax(x)[label];  ∂L/∂x = (softmax(x) - onehot(label)) / N"""

    def forward(ctx, logits, labels, reduction):
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        rows = np.arange(len(labels))
        losses = -log_probs[rows, labels]
        ctx.log_probs, ctx.labels = log_probs, labels
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.mean()

    def backward(ctx, grad):
        n = len(ctx.labels)
        grad_logits = np.exp(ctx.log_probs)
        grad_logits[np.arange(n), ctx.labels] -= 1
        reduction = ctx.attrs["reduction"]
        if reduction == "none":
            return grad_logits * grad[:, None], None
        return grad_logits * (grad / n if reduction == "mean" else grad), None
