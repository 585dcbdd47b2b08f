"""Elementwise ops. Binary ones broadcast like NumPy; ``unbroadcast`` sums each input's gradient
back to that input's shape, so no op here has to think about broadcasting in its backward.

Each op saves what its backward needs with ``ctx.save_for_backward``, and that is what PyTorch
saves (exp, sqrt, relu, sigmoid and tanh their output; log, abs, arctan and pow their input; a
product each factor only when the other needs a gradient; where its condition), so the same
in-place edits are refused. Masks and signs are computed from the saved arrays' values
(``np.asarray``): they are constants, with no derivative of their own.

Infinities and NaNs are values like any other, as in torch: exp(100) is inf in float32, the slope
of log or sqrt at 0 is inf, 0⁻½ is inf — silently. Where NumPy would warn about them the op runs
in ``quiet()`` (``np.errstate(all="ignore")``, cheaper: fast/quiet.py), except in +, * and tanh,
which run on every step of every model.

The functions at the end (``sin(x)``, ``maximum(a, b)``, ``where(c, a, b)``, ``pow``, ``clamp``
...) are torch's entry points: they check their arguments, apply torch's type promotion
(``promote``) and call the Function.
"""
import numpy as np

from .. import dtypes
from ..fast.quiet import quiet
from ..kernels import kernel
from ..engine import BroadcastError, Cast, Node, NotAnOperand, Tensor, unbroadcast
from ..args import check_scalar
from .movement import Fill


# The operators' symbols, named in their errors beside the method's name: ``a + b`` and
# ``a.add(b)`` both fail in Add.
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "matmul": "@",
           "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def check_broadcast(op: str, a: np.ndarray, b: np.ndarray) -> None:
    """Raise a clear error if the shapes do not broadcast (callers skip equal shapes)."""
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        name = f"{op} ({SYMBOLS[op]})" if op in SYMBOLS else op
        raise BroadcastError(
            f"{name}: cannot broadcast shapes {a.shape} and {b.shape} of input and other "
            f"(trailing dimensions must be equal or 1)"
        ) from None


def input_shapes(op: str, a: np.ndarray, b: np.ndarray) -> tuple:
    """The shapes of two inputs that broadcast, for backward to sum their gradients back to
    (checked; a scalar broadcasts to anything)."""
    if a.ndim and b.ndim:
        check_broadcast(op, a, b)
    return a.shape, b.shape


class Broadcasting(Node):
    """A two-input op whose inputs broadcast to the output's shape. Forward notes the inputs'
    shapes only where they differ: with equal shapes (nearly every op) each gradient already
    has its input's shape, and the None left here tells ``unbroadcast`` so. (Two shape tuples
    kept per node are two more objects for the garbage collector to walk, again and again,
    over a long graph; measured: see benchmarks/README.md.)"""

    elementwise = True
    a_shape = b_shape = None


class Add(Broadcasting):
    """d(a + b) = da + db"""

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("add", a, b)
        return a + b

    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return (unbroadcast(grad, ctx.a_shape) if needs_a else None,
                unbroadcast(grad, ctx.b_shape) if needs_b else None)


class Sub(Broadcasting):
    """d(a - b) = da - db"""

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("sub", a, b)
        return a - b

    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return (unbroadcast(grad, ctx.a_shape) if needs_a else None,
                unbroadcast(-grad, ctx.b_shape) if needs_b else None)


class Mul(Broadcasting):
    """d(a * b) = b da + a db"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("mul", a, b)
        needs_a, needs_b = ctx.needs_input_grad
        # each factor only where the other's gradient needs it (None in the other slot)
        ctx.save_for_backward(a=a if needs_b else None, b=b if needs_a else None)
        return a * b

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = unbroadcast(grad * b, ctx.a_shape) if needs_a else None
        grad_b = unbroadcast(grad * a, ctx.b_shape) if needs_b else None
        return grad_a, grad_b


class Div(Broadcasting):
    """d(a / b) = da / b - a db / b²"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("div", a, b)
        # b for both gradients, a only for b's (None in its slot otherwise), as torch
        ctx.save_for_backward(a=a if ctx.needs_input_grad[1] else None, b=b)
        with quiet():  # 1/0 = inf, 0/0 = nan
            return a / b

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = unbroadcast(grad / b, ctx.a_shape) if ctx.needs_input_grad[0] else None
        # torch's order, (a / b) / b: no b² to overflow, and at b = 0 an infinity, not the
        # nan of inf · 0 (its derivative too)
        grad_b = unbroadcast(-grad * ((a / b) / b), ctx.b_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Node):
    """d(xᵖ) = p xᵖ⁻¹ dx, for a constant exponent p (0 for p = 0, even at x = 0, as torch)"""

    elementwise = True

    def forward(ctx, x, exponent):
        ctx.save_for_backward(x=x)
        if x.dtype.kind == "f":
            # 0⁻¹ = inf, (-1)^½ = nan, (1e30)² = inf in float32: values, as in torch
            with quiet():
                # torch takes x^½ as √x and x^-½ as 1/√x, and their edges with them:
                # (-0)^-½ = -inf and (-inf)^½'s slope nan, where C's pow says inf and 0
                if exponent == 0.5:
                    return np.sqrt(x)
                if exponent == -0.5:
                    return 1 / np.sqrt(x)
                return x ** x.dtype.type(exponent)
        if float(exponent).is_integer():
            return integer_power(x, np.asarray(int(exponent), dtype=x.dtype))
        return x ** exponent  # (``pow`` promotes integers to float first, as torch)

    def backward(ctx, grad):
        p = ctx.attrs["exponent"]
        if p == 0:  # p x⁻¹ would make 0 · inf = nan at x = 0
            return Fill.call(grad, value=0)
        (x,) = ctx.saved_tensors
        if p == 2.0:  # the common case, without a second call to pow (inf · 0 = nan, as torch)
            return grad * (2 * x)
        return grad * (p * Pow.call(x, exponent=p - 1))


def integer_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Integer powers as torch computes them: a negative exponent gives 1/base truncated
    (1 for base 1, ±1 for base -1, else 0) where NumPy refuses."""
    negative = exponent < 0
    if not negative.any():
        return base ** exponent
    result = base ** np.where(negative, 0, exponent)
    odd = np.abs(exponent) % 2 == 1
    reciprocal = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, result).astype(result.dtype)


class PowTensor(Node):
    """d(aᵇ) = b aᵇ⁻¹ da + aᵇ log(a) db — torch's rules at the edges: da-part 0 where b = 0,
    db-part 0 where a = 0 and b ≥ 0 (saves a, b and the output, as torch)"""

    elementwise = True

    def forward(ctx, base, exponent):
        if base.shape != exponent.shape and base.ndim and exponent.ndim:
            check_broadcast("pow", base, exponent)
        if base.dtype.kind != "f":
            out = integer_power(base, exponent)
        else:
            with quiet():
                out = base ** exponent
        ctx.save_for_backward(base=base, exponent=exponent, out=out)
        return out

    def backward(ctx, grad):
        base, exponent, out = ctx.saved_tensors
        zero = np.zeros((), grad.dtype)
        grad_base = grad_exponent = None
        # Infinities are part of the answer here (0⁻¹, log 0, log of a negative base is nan),
        # as in torch.
        if ctx.needs_input_grad[0]:
            power = grad * (exponent * PowTensor.call(base, exponent - 1))
            grad_base = unbroadcast(
                Where.call(zero, power, condition=np.asarray(exponent) == 0), base.shape)
        if ctx.needs_input_grad[1]:
            # torch's grad · where(...), the gradient outside: its own derivative through
            # out · log 0 is 0 · -inf = nan there, as torch's
            undefined = (np.asarray(base) == 0) & (np.asarray(exponent) >= 0)
            grad_exponent = unbroadcast(
                grad * Where.call(zero, out * Log.call(base), condition=undefined),
                exponent.shape)
        return grad_base, grad_exponent


class Neg(Node):
    """d(-x) = -dx"""

    elementwise = True

    def forward(ctx, x):
        return -x

    def backward(ctx, grad):
        return -grad


class Exp(Node):
    """d(eˣ) = eˣ dx — the output is its own derivative, so it is what we save"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        with quiet():  # exp(89) is inf in float32, as in torch
            out = np.exp(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class Log(Node):
    """d(log x) = dx / x"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # log 0 = -inf, log -1 = nan
            return np.log(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x  # the slope at 0 is inf


class Sqrt(Node):
    """d(√x) = dx / (2√x)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        with quiet():  # √-1 = nan
            out = np.sqrt(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)  # slope inf at 0


@kernel
def relu(x):
    """max(0, x), in this order so that relu(-0) is -0, as torch's."""
    return np.maximum(0, x)


class ReLU(Node):
    """d relu(x) = [x > 0] dx — 0 at exactly x = 0, as in PyTorch (where out > 0 iff x > 0),
    and 0 whatever arrives there (an inf, a nan); a NaN passes its gradient on: PyTorch's
    threshold_backward, out <= 0 ? 0 : grad"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        out = relu(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        # torch's threshold_backward: 0 where out <= 0, whatever arrives there (an inf, a nan)
        return Where.call(grad, np.zeros((), grad.dtype), condition=~(np.asarray(out) <= 0))

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink report
        asks, kinks.py)."""
        return [(0.0, "relu'(0) = 0, as PyTorch")]


class Sigmoid(Node):
    """d σ(x) = σ(x) (1 - σ(x)) dx"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        # exp(-|x|) ≤ 1 never overflows, and each side divides without cancelling: σ(-30) is
        # 9.4e-14, not the 0 (or 6e-8) that ½(tanh(x/2) + 1) rounds to in float32.
        e = np.exp(-np.abs(x))
        out = np.where(x >= 0, 1, e) / (1 + e)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * (1 - out)


class Tanh(Node):
    """d tanh(x) = (1 - tanh²(x)) dx"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, x):
        out = np.tanh(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 - out * out)


class Arctan(Node):
    """d arctan(x) = dx / (1 + x²)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return np.arctan(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)  # x² = inf far out: slope 0


class Abs(Node):
    """d|x| = sign(x) dx — 0 at x = 0, as in PyTorch"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return np.abs(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sign_values(np.asarray(x))

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink report
        asks, kinks.py)."""
        return [(0.0, "sign(0) = 0, as PyTorch")]


class Clamp(Node):
    """d clamp(x, lo, hi) = [lo ≤ x ≤ hi] dx — the bounds themselves pass the gradient, as in
    PyTorch"""

    elementwise = True

    def forward(ctx, x, low, high):
        ctx.save_for_backward(x=x)
        return np.clip(x, low, high).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        x, low, high = np.asarray(x), ctx.attrs["low"], ctx.attrs["high"]
        inside = np.ones(x.shape, dtype=bool)
        if low is not None:
            inside &= x >= low
        if high is not None:
            inside &= x <= high
        # chosen, not multiplied: outside the bounds torch gives 0 whatever arrives (inf, nan)
        return Where.call(grad, np.zeros((), grad.dtype), condition=inside)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: at each bound given
        (gradcheck's kink report asks, kinks.py)."""
        return [(bound, "slope 1 at the bound itself, as PyTorch")
                for bound in (self.attrs["low"], self.attrs["high"]) if bound is not None]


class Log1p(Node):
    """d log(1 + x) = dx / (1 + x)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # log1p(-1) = -inf, as torch
            return np.log1p(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)  # the slope at -1 is inf


class Rsqrt(Node):
    """d x^(-½) = -½ x^(-3/2) dx = -½ out³ dx — written with the output, which is what torch saves"""

    elementwise = True

    def forward(ctx, x):
        with quiet():  # rsqrt(0) = inf, rsqrt(-1) = nan
            out = 1 / np.sqrt(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (-0.5 * out * out * out)  # out³ overflows near 0: inf


class Sin(Node):
    """d sin x = cos x dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # sin(inf) = nan
            return np.sin(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Cos.call(x)


class Cos(Node):
    """d cos x = -sin x dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # cos(inf) = nan
            return np.cos(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -Sin.call(x)


class StepFunction(Node):
    """A piecewise-constant function (sign, floor, ceil, round): its derivative is 0 wherever it
    exists, and torch passes back 0 everywhere — zeros, not None, so .grad is filled."""

    elementwise = True
    kink_jumps = True  # gradcheck's kink report: the output itself jumps (kinks.py)

    def backward(ctx, grad):
        return Fill.call(grad, value=0)


class Sign(StepFunction):
    """d sign(x) = 0"""

    def forward(ctx, x):
        return sign_values(x) if x.dtype != bool else x.copy()


def sign_values(x: np.ndarray) -> np.ndarray:
    """torch's sign, [x > 0] - [x < 0]: 0 for a NaN (NumPy says nan) and +0 for -0."""
    return (x > 0).astype(x.dtype) - (x < 0)


class Floor(StepFunction):
    """d ⌊x⌋ = 0"""

    def forward(ctx, x):
        return np.floor(x) if x.dtype.kind == "f" else x.copy()


class Ceil(StepFunction):
    """d ⌈x⌉ = 0"""

    def forward(ctx, x):
        return np.ceil(x) if x.dtype.kind == "f" else x.copy()


class Round(StepFunction):
    """d round(x) = 0 — halves go to the even neighbour (0.5 → 0, 1.5 → 2), as torch and NumPy;
    with ``decimals`` the value is scaled by 10^decimals, rounded and scaled back, as torch"""

    def forward(ctx, x, decimals):
        if x.dtype.kind != "f":
            return x.copy()
        if decimals == 0:
            return np.rint(x)
        # torch's order of operations (so float32 results agree bit for bit): multiply by
        # 10^d for d > 0, divide by 10^-d for d < 0
        scale = x.dtype.type(10.0 ** abs(decimals))
        with quiet():
            return np.rint(x * scale) / scale if decimals > 0 else np.rint(x / scale) * scale


class Maximum(Node):
    """d max(a, b) = [a > b] da + [b > a] db; at a tie each side gets half, as torch
    (a nan on either side sends the whole gradient to both, as torch's masks do)"""

    elementwise = True
    kink_tie = "larger"  # gradcheck's kink report: a kink where a = b (kinks.py)

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:
            check_broadcast("maximum", a, b)
        ctx.save_for_backward(a=a, b=b)
        return np.maximum(a, b)

    def backward(ctx, grad):
        a, b = (np.asarray(v) for v in ctx.saved_tensors)
        return split_at_ties(ctx, grad, a, b, a < b, a > b)


class Minimum(Node):
    """d min(a, b) = [a < b] da + [b < a] db; at a tie each side gets half, as torch"""

    elementwise = True
    kink_tie = "smaller"  # gradcheck's kink report: a kink where a = b (kinks.py)

    def forward(ctx, a, b):
        if a.shape != b.shape and a.ndim and b.ndim:
            check_broadcast("minimum", a, b)
        ctx.save_for_backward(a=a, b=b)
        return np.minimum(a, b)

    def backward(ctx, grad):
        a, b = (np.asarray(v) for v in ctx.saved_tensors)
        return split_at_ties(ctx, grad, a, b, a > b, a < b)


def split_at_ties(ctx, grad, a, b, a_loses, b_loses) -> tuple:
    """torch's gradient of maximum/minimum: the loser gets 0, each side half at a tie (``a``,
    ``b``: the saved inputs' values)."""
    ties = a == b
    shared = grad * np.where(ties, 0.5, 1.0).astype(grad.dtype) if ties.any() else grad
    # the loser's 0 is chosen, not multiplied: an inf or nan arriving gives 0 there, as torch
    zero = np.zeros((), grad.dtype)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = unbroadcast(Where.call(zero, shared, condition=a_loses), a.shape)
    if ctx.needs_input_grad[1]:
        grad_b = unbroadcast(Where.call(zero, shared, condition=b_loses), b.shape)
    return grad_a, grad_b


@kernel
def choose(condition, a, b):
    """a where the condition holds, else b (NumPy broadcasting)."""
    return np.where(condition, a, b)


class Where(Node):
    """where(c, a, b) takes a where c holds, else b: da gets the gradient where c, db where not
    (the condition is a constant, an attribute: it has no gradient; saved, as torch saves it)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    elementwise = True

    def forward(ctx, a, b, condition):
        ctx.save_for_backward(condition=condition)
        return choose(condition, a, b)

    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        a, b = ctx.parents
        zero = np.zeros((), grad.dtype)
        grad_a = unbroadcast(Where.call(grad, zero, condition=condition), a.shape) \
            if ctx.needs_input_grad[0] else None
        grad_b = unbroadcast(Where.call(zero, grad, condition=condition), b.shape) \
            if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class ClampTensor(Node):
    """clamp(x, lo, hi) = min(max(x, lo), hi) with tensor bounds, torch's gradient: x gets dx
    where lo ≤ x ≤ hi; lo gets dlo where x < lo < hi; hi gets dhi where x > hi or hi < lo (the
    output is hi there). ``sides`` names the bounds that follow x: ("min",), ("max",) or both."""

    elementwise = True

    def forward(ctx, x, *bounds, sides):
        given = dict(zip(sides, bounds))
        # x and the bounds given (None for one not given), as torch saves them
        ctx.save_for_backward(x=x, min=given.get("min"), max=given.get("max"))
        out = x
        for side, bound in zip(sides, bounds):
            out = np.maximum(out, bound) if side == "min" else np.minimum(out, bound)
        shape = np.broadcast_shapes(x.shape, *[b.shape for b in bounds])
        return np.broadcast_to(out, shape).copy() if out.shape != shape else out

    def backward(ctx, grad):
        sides = ctx.attrs["sides"]
        x, low, high = [None if v is None else np.asarray(v) for v in ctx.saved_tensors]
        if low is not None and high is not None:
            masks = {"x": (x >= low) & (x <= high), "min": (x < low) & (low < high),
                     "max": (x > high) | (high < low)}
        elif low is not None:
            masks = {"x": x >= low, "min": x < low}
        else:
            masks = {"x": x <= high, "max": x > high}
        zero = np.zeros((), grad.dtype)
        grads = []
        for name, parent, needed in zip(("x",) + sides, ctx.parents, ctx.needs_input_grad):
            grads.append(unbroadcast(Where.call(grad, zero, condition=masks[name]), parent.shape)
                         if needed else None)
        return tuple(grads)

    def kink_bounds(self) -> list:
        """(input index, side) of each bound: the slope jumps where x crosses it (gradcheck's kink
        report asks, kinks.py)."""
        return list(enumerate(self.attrs["sides"], start=1))


# ---- torch's entry points -------------------------------------------------------------------
# Type promotion as torch (torch.result_type): the kinds rank bool < integer < floating. Among
# operands of the same rank a tensor with dimensions decides over a 0-d tensor, which decides
# over a Python number; an operand of a higher kind from a lower tier still lifts the result to
# its kind — a 0-d tensor with its own dtype, a Python float as the default dtype (float32):
#   int64 tensor + 1.5 → float32;  float32 tensor + float64 0-d tensor → float32;
#   int32 tensor + float64 0-d tensor → float64;  bool tensor + 1 → int64;  int8 tensor + 1 → int8.
# A Python integer the common integer dtype cannot hold wraps around into it (``as_dtype``:
# int8 + 300 adds 44), as torch's arithmetic; where a number is a value instead (where, clamp,
# pow's exponent, masked_fill) it is refused (``check_fits``). (Complex numbers are not
# supported.)
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def _promote_pair(a, b):
    """torch.promote_types for two dtypes (None: no operand of that tier)."""
    if a is None or b is None:
        return a if b is None else b
    rank_a, rank_b = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
    if rank_a != rank_b:  # torch: int64 with float16 is float16 (NumPy would say float64)
        return a if rank_a > rank_b else b
    return np.promote_types(a, b)


def _number_dtype(value) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return dtypes.bool
    if isinstance(value, (int, np.integer)):
        return dtypes.int64
    return dtypes.get_default_dtype()


def result_dtype(*operands) -> np.dtype:
    """torch.result_type of Tensors and Python numbers (see the rules above)."""
    if len(operands) == 2:  # the usual call: two tensors of one dtype, decided at once
        a, b = operands
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype is b._data.dtype:
            return a._data.dtype
    tiers = [None, None, None]  # tensors with dimensions, 0-d tensors, Python numbers
    for value in operands:
        if isinstance(value, Tensor):
            tier, dtype = (0 if value.ndim else 1), value.dtype
        else:
            tier, dtype = 2, _number_dtype(value)
        tiers[tier] = _promote_pair(tiers[tier], dtype)
    result = None
    for dtype in reversed(tiers):  # numbers first, then 0-d tensors, then dimensioned ones
        result = _combine_tiers(dtype, result)
    return result


def _combine_tiers(higher, lower):
    """torch's combine_categories: the higher tier's dtype, unless the lower one is of a higher
    kind (then that kind wins, with the lower tier's dtype)."""
    if higher is None:
        return lower
    if higher.kind == "f":
        return higher
    if higher == dtypes.bool or (lower is not None and lower.kind == "f"):
        return _promote_pair(higher, lower)
    return higher


def is_number(value) -> bool:
    return isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))


def check_tensor(op: str, name: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")
    return value


def check_operand(op: str, name: str, value):
    """A Tensor or a real number. (The error is a TypeError that an operator turns into
    NotImplemented: see ``NotAnOperand``.)"""
    if not (isinstance(value, Tensor) or is_number(value)):
        raise NotAnOperand(f"{op}(): argument '{name}' must be Tensor or Number, not "
                           f"{type(value).__name__}")
    return value


def scaled_operand(op: str, other, alpha):
    """``other * alpha``, the second operand of ``add``/``sub`` (alpha a number; torch allows
    a bool alpha only for bool results, and a complex one only for complex inputs)."""
    check_operand(op, "other", other)
    if type(alpha) is not int and (isinstance(alpha, (bool, np.bool_, complex)) or
                                   not is_number(alpha)):
        error = RuntimeError if isinstance(alpha, (bool, np.bool_, complex)) else TypeError
        raise error(f"{op}(): alpha must be a real number (not a bool), got "
                    f"{type(alpha).__name__} ({alpha!r})")
    return other if alpha == 1 else other * alpha


def check_bound(op: str, name: str, value):
    """The bound of ``clamp_min``/``clamp_max``: a Tensor or a real number."""
    if isinstance(value, complex):
        raise NotImplementedError(f"{op}: {name} is complex ({value!r}): clamp is not "
                                  f"supported for complex types")
    return check_operand(op, name, value)


def is_bool(value) -> bool:
    """A bool operand: a Python or NumPy bool, or a bool tensor."""
    return isinstance(value, (bool, np.bool_)) or (isinstance(value, Tensor) and
                                                   value._data.dtype.kind == "b")


def _described(value) -> str:
    return f"dtype {value.dtype}" if isinstance(value, Tensor) else type(value).__name__


def check_sub(op: str, input, other) -> None:
    """torch refuses a subtraction with a bool operand: ``mask - 1`` is a mistake for ``~mask``."""
    if is_bool(input) or is_bool(other):
        raise RuntimeError(f"{op}: subtraction, the `-` operator, with a bool tensor is not "
                           f"supported (input: {_described(input)}, other: {_described(other)}); "
                           f"to invert a mask use ~ or logical_not()")


def refuse_bool(op: str, input: Tensor) -> None:
    """torch's refusals of a bool input: negation and relu are RuntimeErrors, abs, floor, ceil
    and round are not implemented for 'Bool' (sign, sigmoid, exp... take bools)."""
    name = op.rstrip("_")
    if name in ("-", "neg", "relu"):
        what = ("negation, the `-` operator, on a bool tensor is not supported; to invert a mask "
                "use ~ or logical_not()") if name != "relu" else "Boolean inputs not supported"
        raise RuntimeError(f"{op}: input is a bool tensor: {what}")
    raise NotImplementedError(f"{op}: input is a bool tensor: \"{name}\" is not implemented "
                              f"for 'Bool'")


_INT64_MIN, _UINT64_END = -2 ** 63, 2 ** 64


def wrapped(value, dtype: np.dtype) -> np.ndarray:
    """A Python integer as a 0-d array of integer ``dtype``, wrapped around into its range as
    torch's arithmetic takes it: ``int8 + 300`` adds 44 (300 - 256), ``uint8 & -5`` takes 251.
    torch reads the number as a 64-bit integer first: from -2⁶³ up to 2⁶⁴ - 1, else an
    OverflowError."""
    value = int(value)
    if not _INT64_MIN <= value < _UINT64_END:
        raise OverflowError(f"the Python integer {value} is too big to convert to a 64-bit "
                            f"integer (torch's range for a number operand: -2**63 to 2**64 - 1)")
    # its lowest 64 bits, which a cast to a narrower integer type keeps the lowest bits of
    return np.asarray(value % _UINT64_END, dtype=np.uint64).astype(dtype)


def as_dtype(value, dtype) -> Tensor:
    """A Tensor or Python number as a Tensor of ``dtype`` (a Tensor cast in the graph). A Python
    integer outside an integer dtype's range wraps around (``wrapped``), as in torch's +, -, *,
    //, %, bitwise ops and comparisons."""
    if not isinstance(value, Tensor):
        if type(value) is int and not _INT64_MIN <= value < _UINT64_END:
            wrapped(value, dtype)  # torch's OverflowError, whatever the dtype
        try:
            return Tensor._make(np.asarray(value, dtype=dtype), None)
        except OverflowError:  # (NumPy refuses an integer its integer dtype cannot hold)
            return Tensor._make(wrapped(value, dtype), None)
    if value.dtype == dtype:
        return value
    if value.requires_grad and dtype.kind == "f":
        return Cast.apply(value, dtype=dtype)
    return Tensor._make(value._data.astype(dtype), None)


def promote(*operands, floating: bool = False) -> list:
    """The operands (Tensors and Python numbers) as Tensors of torch's common dtype (with
    ``floating``, integers and bools as the default floating dtype: true division's operands,
    where a Python integer is taken as a float, not wrapped: ``int8 / 300`` divides by 300)."""
    dtype = result_dtype(*operands)
    if floating and dtype.kind != "f":
        dtype = dtypes.get_default_dtype()
    return [as_dtype(value, dtype) for value in operands]


def check_fits(op: str, dtype: np.dtype, **numbers) -> None:
    """The numbers torch takes as values, not as operands of arithmetic (where's other, pow's
    exponent, clamp's bounds, masked_fill's value): one an integer ``dtype`` cannot hold is
    torch's RuntimeError, not wrapped around — except that an unsigned dtype takes a negative
    integer down to -max, wrapped (uint8: -1 is 255), as torch's check does; a float must lie
    within the range itself (uint8: not -1.0, int8: not 127.5). (Other arguments, Tensors and
    None, pass.)"""
    for name, value in numbers.items():
        if type(value) is int and not _INT64_MIN <= value < _UINT64_END:
            wrapped(value, dtype)  # torch's OverflowError, whatever the dtype
        if dtype.kind not in "iu" or isinstance(value, (bool, np.bool_)) or not is_number(value):
            continue
        info = np.iinfo(dtype)
        if isinstance(value, (int, np.integer)):
            low, high = (info.min if dtype.kind == "i" else -int(info.max)), info.max
            fits = low <= value <= high
        else:  # (compared as floats: int64 takes 2.0**63, float(2**63 - 1), as torch)
            low, high = float(info.min), float(info.max)
            fits = bool(low <= value <= high)  # (False for nan)
        if not fits:
            raise RuntimeError(f"{op}: {name}={value} cannot be converted to type {dtype} "
                               f"without overflow (it takes {low} to {high})")


def clamp_bounds(op: str, dtype: np.dtype, low, high) -> tuple:
    """clamp's number bounds for a result of ``dtype``: checked (``check_fits``) and, for an
    integer dtype, as the dtype holds them (uint8's -1 is 255, as torch's)."""
    if dtype.kind == "f" and type(low) is not int and type(high) is not int:
        return low, high  # (floats and None: nothing to check, the common case)
    check_fits(op, dtype, **{side: v for side, v in (("min", low), ("max", high)) if v is not None})
    if dtype.kind in "iu":
        low, high = (None if v is None else wrapped(v, dtype).item() for v in (low, high))
    return low, high


def floating(x: Tensor) -> Tensor:
    """The input of a function that only makes sense on floats (sin, log1p, ...): integers and
    bools become the default floating dtype, as torch."""
    return x if x.dtype.kind == "f" else as_dtype(x, dtypes.get_default_dtype())


def floating_pair(a: Tensor, b: Tensor) -> tuple:
    """Operands of true division, already of one dtype: integers divide as floats (torch)."""
    return (a, b) if a.dtype.kind == "f" else (floating(a), floating(b))


def log1p(input) -> Tensor:
    return Log1p.apply(floating(check_tensor("log1p", "input", input)))


def rsqrt(input) -> Tensor:
    return Rsqrt.apply(floating(check_tensor("rsqrt", "input", input)))


def sin(input) -> Tensor:
    return Sin.apply(floating(check_tensor("sin", "input", input)))


def cos(input) -> Tensor:
    return Cos.apply(floating(check_tensor("cos", "input", input)))


def sign(input) -> Tensor:
    return Sign.apply(check_tensor("sign", "input", input))


def not_bool(op: str, input) -> Tensor:
    """The tensor input of an op that refuses bools (see ``refuse_bool``)."""
    if check_tensor(op, "input", input)._data.dtype == np.bool_:
        refuse_bool(op, input)
    return input


def floor(input) -> Tensor:
    return Floor.apply(not_bool("floor", input))


def ceil(input) -> Tensor:
    return Ceil.apply(not_bool("ceil", input))


def round(input, *, decimals: int = 0) -> Tensor:
    input = not_bool("round", input)
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be int, not "
                        f"{type(decimals).__name__}")
    if decimals != 0 and input.dtype.kind != "f":
        raise NotImplementedError(f"round(): decimals={decimals} is only implemented for "
                                  f"floating tensors; input has dtype {input.dtype}")
    return Round.apply(input, decimals=int(decimals))


def maximum(input, other) -> Tensor:
    a, b = promote(check_tensor("maximum", "input", input), check_tensor("maximum", "other", other))
    return Maximum.apply(a, b)


def minimum(input, other) -> Tensor:
    a, b = promote(check_tensor("minimum", "input", input), check_tensor("minimum", "other", other))
    return Minimum.apply(a, b)


def where(condition, input, other) -> Tensor:
    """``condition ? input : other`` elementwise, broadcasting all three (numbers allowed)."""
    condition = check_tensor("where", "condition", condition)
    if condition.dtype != bool:
        raise RuntimeError(f"where: expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype}")
    check_operand("where", "input", input)
    check_operand("where", "other", other)
    # (a number is a value of the result's dtype here: int8 with 300 is refused, not wrapped)
    check_fits("where", result_dtype(input, other), input=input, other=other)
    a, b = promote(input, other)
    shapes = [condition.shape, a.shape, b.shape]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise BroadcastError(f"where: cannot broadcast the shapes of condition, input and other "
                             f"{tuple(map(tuple, shapes))} together") from None
    return Where.apply(a, b, condition=condition._data)


def pow(input, exponent) -> Tensor:
    """``input ** exponent``: tensor ** number, tensor ** tensor, or number ** tensor (``__rpow__``)."""
    if type(exponent) in (int, float) and isinstance(input, Tensor) and input.dtype.kind == "f":
        return Pow.apply(input, exponent=exponent)  # the common case: no promotion to work out
    if not isinstance(input, Tensor):
        check_operand("pow", "self", input)
        check_tensor("pow", "exponent", exponent)
    else:
        check_operand("pow", "exponent", exponent)
    # (a number exponent is a value of the dtype; a number base an operand: 300 ** int8 wraps)
    check_fits("pow", result_dtype(input, exponent), exponent=exponent)
    base, power = promote(input, exponent)
    if isinstance(exponent, Tensor) or not isinstance(input, Tensor):
        return PowTensor.apply(base, power)
    if base.dtype.kind != "f" and exponent < 0:
        raise RuntimeError(f"pow: integers to negative integer powers are not allowed "
                           f"(a {base.dtype} tensor to the power {exponent})")
    return Pow.apply(base, exponent=exponent)


def clamp(input, min=None, max=None) -> Tensor:
    """Limit input to [min, max]: both bounds numbers (or None), or both Tensors (or None)."""
    input = check_tensor("clamp", "input", input)
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    bounds = {side: value for side, value in (("min", min), ("max", max)) if value is not None}
    for side, value in bounds.items():
        if isinstance(value, complex):  # (torch's RuntimeError: it parses, but cannot convert)
            check_scalar("clamp", side, value)
    if all(isinstance(v, Tensor) for v in bounds.values()):
        x, *limits = promote(input, *bounds.values())
        return ClampTensor.apply(x, *limits, sides=tuple(bounds))
    if all(is_number(v) for v in bounds.values()):
        x = as_dtype(input, result_dtype(input, *bounds.values()))
        low, high = clamp_bounds("clamp", x.dtype, min, max)
        return Clamp.apply(x, low=low, high=high)
    kinds = ", ".join(f"{side}={type(value).__name__}" for side, value in bounds.items())
    raise TypeError(f"clamp(): min and max must both be Tensors or both be numbers (or None), "
                    f"got {kinds}")
