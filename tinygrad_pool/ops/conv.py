"""2-D convolution (cross-correlation, as in every deep-learning framework) as one matrix product.

im2col copies every k×k window of the input into a column, so that

    out[n, f, ho, wo] = Σ_{c,i,j} w[f, c, i, j] · x[n, c, ho·s + i·d, wo·s + j·d]

becomes ``W (F × C·k·k) @ cols (C·k·k × N·Ho·Wo)``. Backward is two more products:
``∂L/∂W = G @ colsᵀ`` and ``∂L/∂cols = Wᵀ @ G``; col2im then adds each column back onto the
pixels it was copied from (pixels shared by overlapping windows collect several terms).
"""
import numpy as np

from ..scratch import give_buffer, take_buffer, zeros
from ..tensor import Function
from .window import pad_hw, tap

def im2col(padded, kernel, stride, dilation, out_hw) -> np.ndarray:
    """Columns laid out channel-major, (C, kh, kw, N, Ho, Wo), filled one tap at a time."""
    n, c = padded.shape[:2]
    kh, kw = kernel
    cols = take_buffer((c, kh, kw, n) + out_hw, padded.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, i, j] = tap(padded, i, j, stride, dilation, out_hw).transpose(1, 0, 2, 3)
    return cols


def col2im(cols, padded_shape, kernel, stride, dilation, out_hw) -> np.ndarray:
    """The adjoint of im2col: add each tap's column back onto the pixels it was read from.

    The sums run in the columns' own channel-major order, (C, N, H, W), so that each tap adds a
    contiguous block (adding a transposed view was about twice as slow); the result is handed
    back as an (N, C, H, W) view of that array.
    """
    n, c, hp, wp = padded_shape
    padded = zeros((c, n, hp, wp), cols.dtype)
    kh, kw = kernel
    for i in range(kh):
        for j in range(kw):
            tap(padded, i, j, stride, dilation, out_hw)[...] += cols[:, i, j]
    return padded.transpose(1, 0, 2, 3)


def col2im_product(kernels, grad_mat, padded_shape, stride, dilation, out_hw) -> np.ndarray:
    """``col2im(Wᵀ @ G)`` one tap at a time: the same sums, without the k·k-times-larger matrix.

    ``kernels`` is (groups, F/groups, C/groups, kh, kw) and ``grad_mat`` (groups, F/groups,
    N·Ho·Wo). Tap (i, j)'s block of Wᵀ @ G is ``W[..., i, j]ᵀ @ G``, which is added onto the
    pixels that tap read, as col2im does; only one tap's block (C × N·Ho·Wo) exists at a time,
    in a reused buffer. Measured as fast as the single product plus col2im, with a ninth of the
    memory. Tests compare it with ``col2im`` of the full product.
    """
    groups, _, cg, kh, kw = kernels.shape
    n, c, hp, wp = padded_shape
    padded = zeros((c, n, hp, wp), grad_mat.dtype)
    block = take_buffer((groups, cg, grad_mat.shape[2]), grad_mat.dtype)
    for i in range(kh):
        for j in range(kw):
            np.matmul(kernels[:, :, :, i, j].swapaxes(1, 2), grad_mat, out=block)
            tap(padded, i, j, stride, dilation, out_hw)[...] += block.reshape(c, n, *out_hw)
    give_buffer(block)
    return padded.transpose(1, 0, 2, 3)


class Conv2d(Function):
    """out = W ⋆ x + b;  ∂L/∂W = G · colsᵀ,  ∂L/∂x = col2im(Wᵀ · G),  ∂L/∂b = Σ G"""

    scratch_saved = ("cols",)  # handed back after backward, for the next forward's im2col

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
        if padded is not x:
            give_buffer(padded)  # im2col has copied what it needs
        if ctx.needs_input_grad[1]:
            ctx.cols = cols
        else:
            give_buffer(cols.base)
        if ctx.needs_input_grad[0]:
            ctx.weight = weight
        return out

    def backward(ctx, grad):
        a = ctx.attrs
        groups, out_hw = a["groups"], a["out_hw"]
        f = grad.shape[1]
        # G as (groups, F/groups, N·Ho·Wo): the same column order im2col used (a temporary,
        # so it lives in a reused buffer).
        grad_mat = take_buffer((f,) + grad.shape[:1] + grad.shape[2:], grad.dtype)
        np.copyto(grad_mat, grad.transpose(1, 0, 2, 3))
        grad_mat = grad_mat.reshape(groups, f // groups, -1)
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            weight = ctx.weight
            kh, kw = weight.shape[2:]
            kernels = weight.reshape(groups, f // groups, -1)
            grad_padded = col2im_product(kernels.reshape(groups, f // groups, -1, kh, kw), grad_mat,
                                         ctx.padded_shape, a["stride"], a["dilation"], out_hw)
            top, _, left, _ = a["padding"]
            h, w = ctx.input_hw
            # Copied out in (N, C, H, W) order, so that the (C, N, H', W') sum goes back to
            # the scratch buffers and the engine can recycle grad_x in turn.
            grad_x = take_buffer(grad.shape[:1] + grad_padded.shape[1:2] + (h, w), grad.dtype)
            np.copyto(grad_x, grad_padded[:, :, top: top + h, left: left + w])
            give_buffer(grad_padded.base)
        if ctx.needs_input_grad[1]:
            grad_w = (grad_mat @ ctx.cols.swapaxes(1, 2)).reshape(ctx.parents[1].shape)
        if len(ctx.parents) > 2 and ctx.needs_input_grad[2]:
            grad_b = grad_mat.sum(axis=2).reshape(f)  # contiguous rows: faster than grad's axes
        give_buffer(grad_mat.base)
        return grad_x, grad_w, grad_b
