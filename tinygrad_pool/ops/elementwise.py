"""Elementwise ops. Binary ones broadcast like NumPy; ``unbroadcast`` sums each input's gradient
back to that input's shape, so no op here has to think about broadcasting in its backward."""
import numpy as np

from ..scratch import take_buffer
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
        if a.shape != b.shape:  # the check costs a call; equal shapes need none
            check_broadcast("add", a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a + b

    def backward(ctx, grad):
        return unbroadcast(grad, ctx.a_shape), unbroadcast(grad, ctx.b_shape)


class Sub(Function):
    """d(a - b) = da - db"""

    def forward(ctx, a, b):
        if a.shape != b.shape:  # the check costs a call; equal shapes need none
            check_broadcast("sub", a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a - b

    def backward(ctx, grad):
        grad_b = unbroadcast(-grad, ctx.b_shape) if ctx.needs_input_grad[1] else None
        return unbroadcast(grad, ctx.a_shape), grad_b


class Mul(Function):
    """d(a * b) = b da + a db"""

    def forward(ctx, a, b):
        if a.shape != b.shape:  # the check costs a call; equal shapes need none
            check_broadcast("mul", a, b)
        ctx.a, ctx.b = a, b
        return a * b

    def backward(ctx, grad):
        a, b = ctx.a, ctx.b
        grad_a = unbroadcast(grad * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(grad * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """d(a / b) = da / b - a db / b²"""

    def forward(ctx, a, b):
        if a.shape != b.shape:  # the check costs a call; equal shapes need none
            check_broadcast("div", a, b)
        ctx.a, ctx.b = a, b
        return a / b

    def backward(ctx, grad):
        a, b = ctx.a, ctx.b
        grad_a = unbroadcast(grad / b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(-grad * a / (b * b), b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """d(xᵖ) = p xᵖ⁻¹ dx, for a constant exponent p"""

    def forward(ctx, x, exponent):
        ctx.x, ctx.exponent = x, exponent
        return x ** x.dtype.type(exponent) if x.dtype.kind == "f" else x ** exponent

    def backward(ctx, grad):
        p = ctx.exponent
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
    """d relu(x) = [x > 0] dx — 0 at exactly x = 0, as in PyTorch"""

    def forward(ctx, x):
        ctx.positive = x > 0
        return np.maximum(x, 0)

    def backward(ctx, grad):
        # Into a reused buffer (see scratch.py): on a conv-sized activation, fresh memory
        # costs more than the product itself.
        return np.multiply(grad, ctx.positive, out=take_buffer(ctx.positive.shape, grad.dtype))


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
        ctx.sign = np.sign(x)
        return np.abs(x)

    def backward(ctx, grad):
        return grad * ctx.sign
