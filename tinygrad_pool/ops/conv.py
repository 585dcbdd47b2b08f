"""2-D convolution (cross-correlation, as in every deep-learning framework) as one matrix product.

im2col copies every k×k window of the input into a column, so that

    out[n, f, ho, wo] = Σ_{c,i,j} w[f, c, i, j] · x[n, c, ho·s + i·d, wo·s + j·d]

becomes ``W (F × C·k·k) @ cols (C·k·k × N·Ho·Wo)``. Backward is two more products:
``∂L/∂W = G @ colsᵀ`` and ``∂L/∂cols = Wᵀ @ G``; col2im then adds each column back onto the
pixels it was copied from (pixels shared by overlapping windows collect several terms).
"""
import numpy as np

from ..tensor import Function
from .window import pad_hw, tap


def im2col(padded, kernel, stride, dilation, out_hw) -> np.ndarray:
    """Columns laid out channel-major, (C, kh, kw, N, Ho, Wo), filled one tap at a time."""
    n, c = padded.shape[:2]
    kh, kw = kernel
    cols = np.empty((c, kh, kw, n) + out_hw, dtype=padded.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, i, j] = tap(padded, i, j, stride, dilation, out_hw).transpose(1, 0, 2, 3)
    return cols


def col2im(cols, padded_shape, kernel, stride, dilation, out_hw) -> np.ndarray:
    """The adjoint of im2col: add each tap's column back onto the pixels it was read from."""
    padded = np.zeros(padded_shape, dtype=cols.dtype)
    kh, kw = kernel
    for i in range(kh):
        for j in range(kw):
            tap(padded, i, j, stride, dilation, out_hw)[...] += cols[:, i, j].transpose(1, 0, 2, 3)
    return padded


class Conv2d(Function):
    """out = W ⋆ x + b;  ∂L/∂W = G · colsᵀ,  ∂L/∂x = col2im(Wᵀ · G),  ∂L/∂b = Σ G"""

    def forward(ctx, x, weight, bias=None, *, stride, padding, dilation, groups, out_hw):
        n, c, h, w = x.shape
        f, cg, kh, kw = weight.shape
        top, bottom, left, right = padding
        padded = pad_hw(x, top, bottom, left, right)
        cols = im2col(padded, (kh, kw), stride, dilation, out_hw)
        # One matrix product per group; with groups=1 it is a single GEMM.
        cols = cols.reshape(groups, cg * kh * kw, n * out_hw[0] * out_hw[1])
        kernels = weight.reshape(groups, f // groups, cg * kh * kw)
        out = (kernels @ cols).reshape(f, n, *out_hw).transpose(1, 0, 2, 3)
        if bias is not None:
            out = out + bias.reshape(1, f, 1, 1)
        ctx.padded_shape, ctx.input_hw = padded.shape, (h, w)
        if ctx.needs_input_grad[1]:
            ctx.cols = cols
        if ctx.needs_input_grad[0]:
            ctx.weight = weight
        return out

    def backward(ctx, grad):
        a = ctx.attrs
        groups, out_hw = a["groups"], a["out_hw"]
        f = grad.shape[1]
        # G as (groups, F/groups, N·Ho·Wo): the same column order im2col used.
        grad_mat = grad.transpose(1, 0, 2, 3).reshape(groups, f // groups, -1)
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            weight = ctx.weight
            kh, kw = weight.shape[2:]
            kernels = weight.reshape(groups, f // groups, -1)
            grad_cols = (kernels.swapaxes(1, 2) @ grad_mat).reshape(-1, kh, kw, grad.shape[0], *out_hw)
            grad_padded = col2im(grad_cols, ctx.padded_shape, (kh, kw), a["stride"], a["dilation"], out_hw)
            top, _, left, _ = a["padding"]
            h, w = ctx.input_hw
            grad_x = grad_padded[:, :, top: top + h, left: left + w]
        if ctx.needs_input_grad[1]:
            grad_w = (grad_mat @ ctx.cols.swapaxes(1, 2)).reshape(ctx.parents[1].shape)
        if len(ctx.parents) > 2 and ctx.needs_input_grad[2]:
            grad_b = grad.sum(axis=(0, 2, 3))
        return grad_x, grad_w, grad_b
