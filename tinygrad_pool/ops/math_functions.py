"""torch's other elementwise math: tan and the inverse and hyperbolic trigonometric functions,
erfc, exp2/log2/log10/expm1, reciprocal, trunc/frac, atan2, copysign, lerp, nan_to_num, and the
tests isnan/isinf/isfinite/isposinf/isneginf/signbit.

They live apart from elementwise.py (the ops every model runs) because they are the long tail
that ported code reaches for now and then; each is still one small Node whose docstring is its
derivative. Each saves what torch saves (tan, exp2, expm1 and reciprocal their output; the
others their input) and writes its backward with operators and ``Node.call`` on the saved
tensors, so that under ``create_graph=True`` it differentiates again, as torch's do. torch's
values at the edges are kept, not "fixed": asin's slope at ±1 is inf, acosh's below 1 nan,
atan2's gradient at (0, 0) is 0 (torch masks the 1/0 there), copysign's at 0 is 0 and at ±inf
nan (its ratio out/x is inf/inf there).

The functions at the end are torch's entry points: they check their arguments, turn integer
and bool inputs into the default float dtype where torch does (``floating``) and call the Node.
The tests (isnan...) give bool tensors, for every dtype, and have no gradient.
"""
import math

import numpy as np

from .. import dtypes
from ..args import _TORCH_NAMES
from ..engine import BroadcastError, Node, Tensor, unbroadcast
from ..fast.quiet import quiet
from .activation import Erf, erf_values, erfc_fraction
from .elementwise import (Arctan, Broadcasting, Exp, Rsqrt, Sigmoid, StepFunction, Where, as_dtype,
                          check_tensor, floating, input_shapes, is_number, promote, refuse_bool,
                          result_dtype)

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_LN2, _LN10 = math.log(2), math.log(10)

# erfc(x) = 1 - erf(x) loses the digits that matter once erf(x) is close to 1: from x = 1.5 on
# it is the continued fraction of erfc itself, with 80 terms (both sides within 2e-14 of
# math.erfc, relative; measured over [0, 8]).
_FRACTION_FROM, _FRACTION_DEPTH = 1.5, 80


def erfc_values(x) -> np.ndarray:
    """erfc(x) = 1 - erf(x) in float64, accurate relative to erfc itself (erfc(10) is 2e-45,
    not the 0 of 1 - erf(10)): ``erf_values`` below 1.5, above it
    erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated from the bottom."""
    x = np.asarray(x, dtype=np.float64)
    with quiet():  # (x² overflows to inf far out: e^-inf = 0, as it should)
        out = np.asarray(1 - erf_values(x))  # (an array at 0-d too; NaN stays NaN: not >= 1.5)
    far = x >= _FRACTION_FROM
    out[far] = erfc_fraction(x[far], _FRACTION_DEPTH)
    return out


class Tan(Node):
    """d tan x = (1 + tan² x) dx — written with the output, which is what torch saves"""

    elementwise = True

    def forward(ctx, x):
        with quiet():  # tan(inf) = nan
            out = np.tan(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 + out * out)


class Arcsin(Node):
    """d arcsin x = dx / √(1 - x²) — inf at ±1, nan outside [-1, 1], as torch"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # arcsin(2) = nan
            return np.arcsin(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Rsqrt.call(1 - x * x)


class Arccos(Node):
    """d arccos x = -dx / √(1 - x²)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():
            return np.arccos(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -Rsqrt.call(1 - x * x)


class Sinh(Node):
    """d sinh x = cosh x dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # sinh(1000) = inf
            return np.sinh(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Cosh.call(x)


class Cosh(Node):
    """d cosh x = sinh x dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():
            return np.cosh(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Sinh.call(x)


class Arcsinh(Node):
    """d arcsinh x = dx / √(x² + 1)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return np.arcsinh(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Rsqrt.call(x * x + 1)  # x² = inf far out: slope 0


class Arccosh(Node):
    """d arccosh x = dx / √(x² - 1) — inf at 1, nan below, as torch"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # arccosh(0) = nan
            return np.arccosh(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Rsqrt.call(x * x - 1)


class Arctanh(Node):
    """d arctanh x = dx / (1 - x²) — inf at ±1, as torch"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # arctanh(1) = inf, arctanh(2) = nan
            return np.arctanh(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x)


class Erfc(Node):
    """d erfc x = -(2/√π) e^(-x²) dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return erfc_values(x).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (-_TWO_OVER_SQRT_PI * Exp.call(-(x * x)))


class Exp2(Node):
    """d 2ˣ = 2ˣ ln 2 dx — written with the output, which is what torch saves"""

    elementwise = True

    def forward(ctx, x):
        with quiet():  # 2^200 is inf in float32
            out = np.exp2(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * _LN2


class Log2(Node):
    """d log₂ x = dx / (x ln 2)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # log2(0) = -inf, log2(-1) = nan
            return np.log2(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * _LN2)


class Log10(Node):
    """d log₁₀ x = dx / (x ln 10)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():
            return np.log10(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * _LN10)


class Expm1(Node):
    """d (eˣ - 1) = eˣ dx = (out + 1) dx — written with the output, which is what torch saves"""

    elementwise = True

    def forward(ctx, x):
        with quiet():
            out = np.expm1(x)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)


class Reciprocal(Node):
    """d (1/x) = -dx / x² = -out² dx — written with the output, which is what torch saves"""

    elementwise = True

    def forward(ctx, x):
        with quiet():  # 1/0 = inf
            out = 1 / x
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * (out * out)


class Trunc(StepFunction):
    """d trunc(x) = 0 — rounds toward zero (integers stay as they are)"""

    def forward(ctx, x):
        return np.trunc(x) if x.dtype.kind == "f" else x.copy()


class SignOf(StepFunction):
    """copysign(1, x): ±1 by x's sign bit (-0 and a negative NaN give -1); d = 0. The sign that
    copysign takes from its ``other``, as a node of its own, so that gradcheck names the jump
    there (kink_jumps, kinks.py) and ``other`` gets torch's zero gradient"""

    def forward(ctx, x):
        return np.copysign(np.ones((), x.dtype), x)


class Atan2(Broadcasting):
    """d atan2(a, b) = (b da - a db) / (a² + b²) — 0 where a² + b² = 0, as torch masks it"""

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("atan2", a, b)
        ctx.save_for_backward(a=a, b=b)
        return np.arctan2(a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        squares = a * a + b * b
        zero = np.zeros((), grad.dtype)
        # torch's masked reciprocal: its second derivative is nan at the origin, as torch's
        recip = Where.call(zero, Reciprocal.call(squares), condition=np.asarray(squares) == 0)
        needs_a, needs_b = ctx.needs_input_grad
        return (unbroadcast(grad * b * recip, ctx.a_shape) if needs_a else None,
                unbroadcast(grad * -a * recip, ctx.b_shape) if needs_b else None)


class Copysign(Broadcasting):
    """copysign(x, s) = |x| with the sign of s;  d = (out / x) dx, 0 at x = 0 (torch's ratio,
    nan at x = ±inf where it is inf/inf); the sign s gets a zero gradient"""

    def forward(ctx, x, sign):
        if x.shape != sign.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("copysign", x, sign)
        out = np.copysign(x, sign)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        needs_x, needs_sign = ctx.needs_input_grad
        grad_x = grad_sign = None
        if needs_x:
            zero = np.zeros((), grad.dtype)
            ratio = Where.call(zero, out / x, condition=np.asarray(x) == 0)
            grad_x = unbroadcast(grad * ratio, ctx.a_shape)
        if needs_sign:
            shape = grad.shape if ctx.b_shape is None else ctx.b_shape
            grad_sign = np.zeros(shape, grad.dtype)
        return grad_x, grad_sign

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: x = 0, where |x| has
        its kink (gradcheck's kink report asks, kinks.py)."""
        return [(0.0, "0, as PyTorch")]


class Lerp(Node):
    """lerp(a, b, w) = a + w (b - a);  d = (1 - w) da + w db + (b - a) dw (w a tensor, or a
    number held as a 0-d constant)"""

    elementwise = True

    def forward(ctx, start, end, weight):
        needs_weight = ctx.needs_input_grad[2]
        # the weight for the other two gradients, the ends only for the weight's (as torch)
        ctx.save_for_backward(start=start if needs_weight else None,
                              end=end if needs_weight else None, weight=weight)
        # torch's two forms, each exact at its end: a + w (b - a) for |w| < ½, else
        # b - (b - a)(1 - w) (so lerp(a, b, 1) is b, and lerp(1, inf, 0.7) = inf - inf = nan)
        with quiet():
            return np.where(np.abs(weight) < 0.5, start + weight * (end - start),
                            end - (end - start) * (1 - weight))

    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        a, b, w = ctx.parents
        needs_a, needs_b, needs_w = ctx.needs_input_grad
        return (unbroadcast(grad * (1 - weight), a.shape) if needs_a else None,
                unbroadcast(grad * weight, b.shape) if needs_b else None,
                unbroadcast(grad * (end - start), w.shape) if needs_w else None)


class NanToNum(Node):
    """nan_to_num(x) replaces NaN, +inf and -inf by numbers;  d = [x finite] dx (torch's
    grad · isfinite(x): an inf or nan arriving at a replaced place still makes nan)"""

    elementwise = True

    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x=x)
        if x.dtype.kind != "f":
            return x.copy()
        with quiet():  # a posinf beyond the dtype's range is inf, as torch
            return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * np.isfinite(np.asarray(x)).astype(grad.dtype)


# ---- torch's entry points -------------------------------------------------------------------
# The float functions: integer and bool inputs compute in the default float dtype, as torch.
FLOAT_FUNCTIONS = {"tan": Tan, "asin": Arcsin, "acos": Arccos, "atan": Arctan, "sinh": Sinh,
                   "cosh": Cosh, "asinh": Arcsinh, "acosh": Arccosh, "atanh": Arctanh,
                   "erf": Erf, "erfc": Erfc, "exp2": Exp2, "log2": Log2, "log10": Log10,
                   "expm1": Expm1, "reciprocal": Reciprocal}


def float_function(name: str, input) -> Tensor:
    """The function ``name`` of FLOAT_FUNCTIONS on ``input`` (a Tensor), integers and bools
    first made the default float dtype."""
    input = floating(check_tensor(name, "input", input))
    with quiet():  # (erf_values squares x: 1e300² overflows to inf, and erf is ±1 all the same)
        return FLOAT_FUNCTIONS[name].apply(input)


def trunc(input) -> Tensor:
    input = check_tensor("trunc", "input", input)
    if input.dtype == np.bool_:
        refuse_bool("trunc", input)
    return Trunc.apply(input)


def floating_only(op: str, input: Tensor) -> Tensor:
    """A floating tensor, for what torch does not define on integers and bools (frac, lerp)."""
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{op}: input must be a floating-point tensor, got dtype "
                                  f"{input.dtype} (\"{op}\" not implemented for "
                                  f"'{_TORCH_NAMES.get(input.dtype.name, input.dtype)}')")
    return input


def frac(input) -> Tensor:
    """x - trunc(x): the fractional part, with x's sign (its gradient 1, trunc's 0). Written
    as that difference, so a graph shows trunc, whose jumps gradcheck names."""
    input = floating_only("frac", check_tensor("frac", "input", input))
    with quiet():  # frac(±inf) = inf - inf = nan, as torch
        return input - Trunc.apply(input)


def frac_(input: Tensor) -> Tensor:
    """frac in place: input -= trunc(input) (one write, so one version)."""
    floating_only("frac_", input)
    with quiet():
        return input.sub_(Trunc.apply(input))


def atan2(input, other) -> Tensor:
    """The angle of the point (other, input), in (-π, π]: both tensors, broadcast."""
    a, b = promote(check_tensor("atan2", "input", input), check_tensor("atan2", "other", other))
    return Atan2.apply(floating(a), floating(b))


def copysign(input, other) -> Tensor:
    """|input| with the sign of other (a tensor, broadcast, or a number)."""
    input = check_tensor("copysign", "input", input)
    if not (isinstance(other, Tensor) or is_number(other)):
        raise TypeError(f"copysign(): argument 'other' must be Tensor or Number, not "
                        f"{type(other).__name__}")
    dtype = result_dtype(input, other)
    if dtype.kind != "f":  # integers and bools: the default float dtype, as torch
        dtype = dtypes.get_default_dtype()
    x, sign = as_dtype(input, dtype), as_dtype(other, dtype)
    if sign.requires_grad:  # its sign through a step node of its own (see SignOf)
        sign = SignOf.apply(sign)
    return Copysign.apply(x, sign)


def check_lerp(op: str, input, end, weight) -> tuple:
    """lerp's arguments as torch takes them: a floating input, an ``end`` tensor of its dtype,
    and a weight that is a number, a 0-d tensor, or a tensor of input's dtype. Returns
    (input, end, weight as a tensor of input's dtype)."""
    input, end = check_tensor(op, "input", input), check_tensor(op, "end", end)
    floating_only(op, input)
    if end.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected dtype {input.dtype} for `end` but got dtype "
                           f"{end.dtype} (end must have input's dtype)")
    if isinstance(weight, Tensor):
        if weight.dtype != input.dtype and weight.ndim:
            raise RuntimeError(f"{op}: expected dtype {input.dtype} for `weight` but got dtype "
                               f"{weight.dtype} (a weight tensor with dimensions must have "
                               f"input's dtype)")
        return input, end, as_dtype(weight, input.dtype)
    if isinstance(weight, complex):  # (torch parses it, then cannot convert it)
        raise RuntimeError(f"{op}: weight {weight!r} is complex: value cannot be converted to "
                           f"type {input.dtype} without overflow")
    if not is_number(weight):
        raise TypeError(f"{op}(): argument 'weight' must be Tensor or Number, not "
                        f"{type(weight).__name__}")
    return input, end, Tensor._make(np.asarray(weight, dtype=input.dtype), None)


def lerp(input, end, weight) -> Tensor:
    """input + weight · (end - input), all broadcast."""
    input, end, weight = check_lerp("lerp", input, end, weight)
    shapes = [input.shape, end.shape, weight.shape]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise BroadcastError(f"lerp: cannot broadcast the shapes of input, end and weight "
                             f"{tuple(map(tuple, shapes))} together") from None
    return Lerp.apply(input, end, weight)


def replacements(op: str, nan, posinf, neginf) -> dict:
    """nan_to_num's numbers (None: 0 for nan, the dtype's largest/smallest for the infinities)."""
    values = {}
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (isinstance(value, complex) or not is_number(value)):
            raise TypeError(f"{op}(): argument '{name}' must be float, not {type(value).__name__}")
        values[name] = None if value is None else float(value)
    if values["nan"] is None:
        values["nan"] = 0.0
    return values


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    input = check_tensor("nan_to_num", "input", input)
    return NanToNum.apply(input, **replacements("nan_to_num", nan, posinf, neginf))


def _test(op: str, input, test) -> Tensor:
    """A bool tensor of ``test`` on the values (floats; integers and bools have no NaN or
    infinity: ``test`` gets them as float too, where it tells them apart the same way)."""
    data = check_tensor(op, "input", input)._data
    return Tensor._make(np.asarray(test(data if data.dtype.kind == "f" else
                                        data.astype(np.float64))), None)


def isnan(input) -> Tensor:
    return _test("isnan", input, np.isnan)


def isinf(input) -> Tensor:
    return _test("isinf", input, np.isinf)


def isfinite(input) -> Tensor:
    return _test("isfinite", input, np.isfinite)


def isposinf(input) -> Tensor:
    return _test("isposinf", input, np.isposinf)


def isneginf(input) -> Tensor:
    return _test("isneginf", input, np.isneginf)


def signbit(input) -> Tensor:
    """True where the sign bit is set: negatives, -0.0 and a negative NaN."""
    return _test("signbit", input, np.signbit)


class LogAddExp(Broadcasting):
    """out = log(eᵃ + eᵇ);  d out = σ(a - b) da + σ(b - a) db (each input's share of the sum,
    written with the difference: exact where a and b are huge and equal)"""

    values, log_base = staticmethod(np.logaddexp), 1.0

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes(type(ctx).__name__.lower(), a, b)
        ctx.save_for_backward(a=a, b=b)
        with quiet():  # (-inf, -inf) gives -inf, and its gradient nan, as torch's
            return ctx.values(a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        # (each share from its own difference: 1 - σ(a - b) would round σ(b - a) away to 0)
        return (unbroadcast(grad * Sigmoid.call((a - b) * ctx.log_base), ctx.a_shape)
                if needs_a else None,
                unbroadcast(grad * Sigmoid.call((b - a) * ctx.log_base), ctx.b_shape)
                if needs_b else None)


class LogAddExp2(LogAddExp):
    """out = log₂(2ᵃ + 2ᵇ);  d out = σ((a - b) ln 2) da + σ((b - a) ln 2) db"""

    values, log_base = staticmethod(np.logaddexp2), math.log(2)


def logaddexp(input, other, op: str = "logaddexp", node: type = LogAddExp) -> Tensor:
    """log(eˣ + eʸ) without overflow (both tensors, broadcast; floating dtypes only)."""
    a, b = promote(check_tensor(op, "input", input), check_tensor(op, "other", other))
    if a.dtype.kind != "f":
        raise RuntimeError(f"{op}: \"{op}_cpu\" not implemented for '{_TORCH_NAMES.get(a.dtype.name, a.dtype)}' "
                           f"(it takes floating tensors: use input.float())")
    return node.apply(a, b)


def logaddexp2(input, other) -> Tensor:
    """log₂(2ˣ + 2ʸ) without overflow."""
    return logaddexp(input, other, "logaddexp2", LogAddExp2)
