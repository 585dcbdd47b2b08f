"""Reductions over axes: sum, mean, max (and the fused, numerically stable log-softmax lives in
loss.py). Their backward spreads the output gradient back over the axes that were reduced."""
import numpy as np

from ..tensor import Function


def normalize_axis(op: str, ndim: int, axis: int) -> int:
    if not isinstance(axis, (int, np.integer)) or not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(
            f"{op}: axis {axis} is out of range for a tensor with {ndim} dimensions"
        )
    return int(axis) % max(ndim, 1)


def reduce_args(op, shape, axis, keepdims, dim, keepdim) -> dict:
    """Accept NumPy's ``axis``/``keepdims`` and PyTorch's ``dim``/``keepdim`` spellings."""
    if dim is not None:
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(sorted(normalize_axis(op, len(shape), a) for a in given))
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: axis {axis} names a dimension twice (shape {shape})")
    return {"axis": axes, "keepdims": bool(keepdims)}


def expand_reduced(grad: np.ndarray, axis: tuple, keepdims: bool) -> np.ndarray:
    """Put back the reduced axes as length-1 axes so the gradient broadcasts over them.

    (A full reduction's 0-d gradient broadcasts as it is.)"""
    return grad if keepdims or grad.ndim == 0 else np.expand_dims(grad, axis)


class Sum(Function):
    """d Σᵢ xᵢ / d xⱼ = 1: every summed element receives the output gradient unchanged"""

    def forward(ctx, x, axis, keepdims):
        ctx.input_shape = x.shape
        return x.sum(axis=axis, keepdims=keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.attrs["axis"], ctx.attrs["keepdims"])
        return np.broadcast_to(grad, ctx.input_shape)


class Mean(Function):
    """d (Σᵢ xᵢ / n) / d xⱼ = 1 / n"""

    def forward(ctx, x, axis, keepdims):
        ctx.input_shape = x.shape
        ctx.count = int(np.prod([x.shape[a] for a in axis]))
        return x.mean(axis=axis, keepdims=keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.attrs["axis"], ctx.attrs["keepdims"])
        return np.broadcast_to(grad / ctx.count, ctx.input_shape)


class Max(Function):
    """d max(x) / d xⱼ = [xⱼ is a maximum] / (number of maxima)

    At a tie the max is not differentiable; splitting the gradient equally among the tied
    maxima is a valid subgradient and matches PyTorch's ``amax`` and full ``max()``.
    """

    def forward(ctx, x, axis, keepdims):
        if x.size == 0:
            raise ValueError(f"max: cannot take the max of an empty tensor (shape {x.shape})")
        out = x.max(axis=axis, keepdims=True)
        is_max = x == out
        ctx.share = is_max / is_max.sum(axis=axis, keepdims=True, dtype=x.dtype)
        return out if keepdims else out.squeeze(axis)

    def backward(ctx, grad):
        return expand_reduced(grad, ctx.attrs["axis"], ctx.attrs["keepdims"]) * ctx.share
