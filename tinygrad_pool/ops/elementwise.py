"""Elementwise ops. Binary ones broadcast like NumPy; ``unbroadcast`` sums each input's gradient
back to that input's shape, so no op here has to think about broadcasting in its backward.

What each op saves for backward is what PyTorch saves (exp, sqrt, relu, sigmoid and tanh their
output; log, abs, arctan and pow their input; a product each factor only when the other needs a
gradient), so the same in-place edits are refused. Masks and signs are computed from the saved
arrays' values (``np.asarray``): they are constants, with no derivative of their own.
"""
import numpy as np

from ..fast import memory
from ..tensor import Function, unbroadcast


def check_broadcast(op: str, a: np.ndarray, b: np.ndarray) -> None:
    """Raise a clear error if the shapes do not broadcast (callers skip equal shapes)."""
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"{op}: cannot broadcast shapes {a.shape} and {b.shape} (trailing dimensions "
            f"must be equal or 1)"
        ) from None


class Add(Function):
    """d(a + b) = da + db"""

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:  # equal shapes and scalars need no check
            check_broadcast("add", a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a + b

    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return (unbroadcast(grad, ctx.a_shape) if needs_a else None,
                unbroadcast(grad, ctx.b_shape) if needs_b else None)


class Sub(Function):
    """d(a - b) = da - db"""

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:  # equal shapes and scalars need no check
            check_broadcast("sub", a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a - b

    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return (unbroadcast(grad, ctx.a_shape) if needs_a else None,
                unbroadcast(-grad, ctx.b_shape) if needs_b else None)


class Mul(Function):
    """d(a * b) = b da + a db"""

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:  # equal shapes and scalars need no check
            check_broadcast("mul", a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        if ctx.needs_input_grad[1]:
            ctx.a = a
        if ctx.needs_input_grad[0]:
            ctx.b = b
        return a * b

    def backward(ctx, grad):
        grad_a = unbroadcast(grad * ctx.b, ctx.a_shape) if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(grad * ctx.a, ctx.b_shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """d(a / b) = da / b - a db / b²"""

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:  # equal shapes and scalars need no check
            check_broadcast("div", a, b)
        ctx.a_shape, ctx.b = a.shape, b
        if ctx.needs_input_grad[1]:
            ctx.a = a
        return a / b

    def backward(ctx, grad):
        b = ctx.b
        grad_a = unbroadcast(grad / b, ctx.a_shape) if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(-grad * ctx.a / (b * b), b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """d(xᵖ) = p xᵖ⁻¹ dx, for a constant exponent p"""

    def forward(ctx, x, exponent):
        ctx.x = x
        return x ** x.dtype.type(exponent) if x.dtype.kind == "f" else x ** exponent

    def backward(ctx, grad):
        p = ctx.attrs["exponent"]
        if p == 2.0:  # the common case, without a second call to pow
            return grad * (2 * ctx.x)
        return grad * (p * ctx.x ** (p - 1))


class Neg(Function):
    """d(-x) = -dx"""

    def forward(ctx, x):
        return -x

    def backward(ctx, grad):
        return -grad


class Exp(Function):
    """d(eˣ) = eˣ dx — the output is its own derivative, so it is what we save"""

    def forward(ctx, x):
        ctx.out = np.exp(x)
        return ctx.out

    def backward(ctx, grad):
        return grad * ctx.out


class Log(Function):
    """d(log x) = dx / x"""

    def forward(ctx, x):
        ctx.x = x
        return np.log(x)

    def backward(ctx, grad):
        return grad / ctx.x


class Sqrt(Function):
    """d(√x) = dx / (2√x)"""

    def forward(ctx, x):
        ctx.out = np.sqrt(x)
        return ctx.out

    def backward(ctx, grad):
        return grad / (2 * ctx.out)


class ReLU(Function):
    """d relu(x) = [x > 0] dx — 0 at exactly x = 0, as in PyTorch (where out > 0 iff x > 0)"""

    def forward(ctx, x):
        ctx.out = np.maximum(x, 0)
        return ctx.out

    def backward(ctx, grad):
        # The product goes into a reused buffer (fast/memory.py): on a conv-sized activation,
        # fresh memory costs more than the product itself.
        return memory.product(grad, np.asarray(ctx.out) > 0)


class Sigmoid(Function):
    """d σ(x) = σ(x) (1 - σ(x)) dx"""

    def forward(ctx, x):
        # Written through tanh so that large |x| neither overflows exp nor loses precision.
        ctx.out = 0.5 * (np.tanh(0.5 * x) + 1)
        return ctx.out

    def backward(ctx, grad):
        return grad * ctx.out * (1 - ctx.out)


class Tanh(Function):
    """d tanh(x) = (1 - tanh²(x)) dx"""

    def forward(ctx, x):
        ctx.out = np.tanh(x)
        return ctx.out

    def backward(ctx, grad):
        return grad * (1 - ctx.out * ctx.out)


class Arctan(Function):
    """d arctan(x) = dx / (1 + x²)"""

    def forward(ctx, x):
        ctx.x = x
        return np.arctan(x)

    def backward(ctx, grad):
        return grad / (1 + ctx.x * ctx.x)


class Abs(Function):
    """d|x| = sign(x) dx — 0 at x = 0, as in PyTorch"""

    def forward(ctx, x):
        ctx.x = x
        return np.abs(x)

    def backward(ctx, grad):
        return grad * np.sign(np.asarray(ctx.x))


class Clamp(Function):
    """d clamp(x, lo, hi) = [lo ≤ x ≤ hi] dx — the bounds themselves pass the gradient, as in
    PyTorch"""

    def forward(ctx, x, low, high):
        ctx.x = x
        return np.clip(x, low, high).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        x, low, high = np.asarray(ctx.x), ctx.attrs["low"], ctx.attrs["high"]
        inside = np.ones(x.shape, dtype=bool)
        if low is not None:
            inside &= x >= low
        if high is not None:
            inside &= x <= high
        return grad * inside
