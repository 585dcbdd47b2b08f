"""Matrix product with NumPy's rules: batched over leading axes, 1-D operands promoted."""
import numpy as np

from ..tensor import Function, unbroadcast


def check_matmul(a: np.ndarray, b: np.ndarray) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes "
                         f"{a.shape} and {b.shape} (use * for scalars)")
    inner_a, inner_b = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
    if inner_a != inner_b:
        raise ValueError(f"matmul: inner dimensions differ: a has shape {a.shape} (last dim "
                         f"{inner_a}) but b has shape {b.shape} "
                         f"({'dim -2' if b.ndim > 1 else 'length'} {inner_b})")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} do not "
                         f"broadcast") from None


class MatMul(Function):
    """d(A B) = dA B + A dB, so  ∂L/∂A = G Bᵀ  and  ∂L/∂B = Aᵀ G

    A 1-D operand is treated as a row (a) or column (b) matrix, and the added axis is removed
    from its gradient again; batch axes that were broadcast are summed by ``unbroadcast``.
    """

    def forward(ctx, a, b):
        check_matmul(a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        if ctx.needs_input_grad[1]:
            ctx.a = a
        if ctx.needs_input_grad[0]:
            ctx.b = b
        return a @ b

    def backward(ctx, grad):
        a_shape, b_shape = ctx.a_shape, ctx.b_shape
        if len(b_shape) == 1:  # put back the column axis that b's promotion removed from the output
            grad = grad[..., None]
        if len(a_shape) == 1:  # and the row axis that a's removed
            grad = grad[..., None, :]
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            b = ctx.b[:, None] if len(b_shape) == 1 else ctx.b
            a2_shape = (1,) + a_shape if len(a_shape) == 1 else a_shape
            grad_a = unbroadcast(grad @ b.swapaxes(-1, -2), a2_shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            a = ctx.a[None, :] if len(a_shape) == 1 else ctx.a
            b2_shape = b_shape + (1,) if len(b_shape) == 1 else b_shape
            grad_b = unbroadcast(a.swapaxes(-1, -2) @ grad, b2_shape).reshape(b_shape)
        return grad_a, grad_b
