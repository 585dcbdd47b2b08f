"""Reductions over axes: sum, mean, max (and the fused, numerically stable log-softmax lives in
loss.py). Their backward spreads the output gradient back over the axes that were reduced."""
import numpy as np

from ..tensor import Function
from .movement import Expand


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


def expand_reduced(grad, input_shape: tuple, axis: tuple, keepdims: bool):
    """Put back the reduced axes as length-1 axes, so that the gradient broadcasts over them."""
    if keepdims or grad.ndim == 0 or grad.ndim == len(input_shape):  # 0-d broadcasts as it is
        return grad
    return grad.reshape(tuple(1 if a in axis else n for a, n in enumerate(input_shape)))


class Sum(Function):
    """d Σᵢ xᵢ / d xⱼ = 1: every summed element receives the output gradient unchanged"""

    def forward(ctx, x, axis, keepdims):
        ctx.input_shape = x.shape
        return x.sum(axis=axis, keepdims=keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.input_shape, **ctx.attrs)
        return Expand.call(grad, shape=ctx.input_shape)


class Mean(Function):
    """d (Σᵢ xᵢ / n) / d xⱼ = 1 / n"""

    def forward(ctx, x, axis, keepdims):
        ctx.input_shape = x.shape
        ctx.count = int(np.prod([x.shape[a] for a in axis]))
        return x.mean(axis=axis, keepdims=keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.input_shape, **ctx.attrs)
        return Expand.call(grad / ctx.count, shape=ctx.input_shape)


class Max(Function):
    """d max(x) / d xⱼ = [xⱼ is a maximum] / (number of maxima)

    At a tie the max is not differentiable; splitting the gradient equally among the tied
    maxima is a valid subgradient and matches PyTorch's ``amax`` and full ``max()``. Like
    PyTorch, it saves its input and its output.
    """

    def forward(ctx, x, axis, keepdims):
        if x.size == 0:
            raise ValueError(f"max: cannot take the max of an empty tensor (shape {x.shape})")
        ctx.x = x
        ctx.out = x.max(axis=axis, keepdims=keepdims)
        return ctx.out

    def backward(ctx, grad):
        axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
        x = np.asarray(ctx.x)
        is_max = x == expand_reduced(np.asarray(ctx.out), x.shape, axis, keepdims)
        share = is_max / is_max.sum(axis=axis, keepdims=True, dtype=x.dtype)  # a constant
        return expand_reduced(grad, x.shape, axis, keepdims) * share
