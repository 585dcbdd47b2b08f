"""torch's other elementwise math: tan and the inverse and hyperbolic trigonometric functions,
erfc, exp2/log2/log10/expm1, reciprocal, trunc/frac, atan2, copysign, lerp, nan_to_num, and the
tests isnan/isinf/isfinite/isposinf/isneginf/signbit; and erfinv, logit, xlogy, hypot, sinc,
deg2rad/rad2deg, float_power, fmax/fmin, heaviside, logical_xor.

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
from .elementwise import (Arctan, Broadcasting, Cos, Exp, Log, Rsqrt, Sigmoid, Sin, StepFunction,
                          Where, as_dtype, check_operand, check_tensor, floating, input_shapes,
                          is_number, pow, promote, refuse_bool, result_dtype)

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


# ---- erfinv, logit, xlogy, hypot, sinc, degrees, float_power, fmax/fmin, heaviside, xor ------
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2
_WINITZKI = 0.147  # the constant of Winitzki's closed-form approximation of erfinv
_HALLEY_STEPS = 4  # cubic steps from the guess's 2e-3 (relative): float64's last digit by the 3rd


def erfinv_values(y) -> np.ndarray:
    """erfinv(y) in float64: ±inf at ±1, nan beyond (and for NaN). Winitzki's closed form is
    the first guess; Halley steps on erf(x) = |y| refine it. From |y| = 1/2 on, the residual is
    taken as (1 - |y|) - erfc(x) — 1 - |y| is exact there — so that up to 1 - 2⁻⁵³ the digits
    come from erfc, not from an erf that rounds to 1."""
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    out = np.where(a == 1, np.inf, np.nan)  # (a > 1 and NaN: nan)
    inside = a < 1
    a = a[inside]
    with quiet():  # (log(1 - a²) at a = 0 is log 1 = 0: no warning; kept quiet for tiny a)
        w = np.log((1 - a) * (1 + a))
        c = 2 / (math.pi * _WINITZKI) + w / 2
        x = np.sqrt(np.maximum(np.sqrt(c * c - w / _WINITZKI) - c, 0))
        tail, rest = a >= 0.5, 1 - a
        for _ in range(_HALLEY_STEPS):
            residual = np.where(tail, rest - erfc_values(x), erf_values(x) - a)
            step = residual / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
            x = x - step / (1 + x * step)  # Halley: f''/f' = -2x for f = erf
    out[inside] = x
    return np.copysign(out, y)  # (-0 gives -0, as torch)


class Erfinv(Node):
    """d erfinv y = (√π/2) e^(erfinv(y)²) dy — written with the output (inf at ±1, nan beyond);
    float32 is computed in float64 and rounded"""

    elementwise = True

    def forward(ctx, y):
        out = erfinv_values(y).astype(y.dtype, copy=False)
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (_SQRT_PI_OVER_TWO * Exp.call(out * out))


class Logit(Node):
    """logit p = log(p / (1 - p));  d = dp / (p (1 - p)) — nan outside [0, 1] (inf at 0 and 1);
    with ``eps``, p is clamped to [eps, 1 - eps] first and the gradient is 0 outside it (the
    bounds pass it), as torch"""

    elementwise = True

    def forward(ctx, p, eps):
        ctx.save_for_backward(p=p)
        if eps is not None:
            p = np.clip(p, p.dtype.type(eps), p.dtype.type(1 - eps))
        with quiet():  # log(0) = -inf, log of a negative nan
            return np.log(p / (1 - p))

    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        eps, values = ctx.attrs["eps"], np.asarray(p)
        low, high = (0, 1) if eps is None else (eps, 1 - eps)
        outside = (values < low) | (values > high)
        # chosen, not multiplied (torch's where): its second derivative is torch's too
        fill = np.array(np.nan if eps is None else 0, grad.dtype)
        return Where.call(fill, grad / (p * (1 - p)), condition=outside)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: the clamp's bounds
        eps and 1 - eps when eps is given (gradcheck's kink report asks, kinks.py)."""
        eps = self.attrs["eps"]
        return [] if eps is None else [(bound, "the slope inside, 1/(p(1 - p)), at the bound "
                                               "itself, as PyTorch") for bound in (eps, 1 - eps)]


class Xlogy(Broadcasting):
    """xlogy(x, y) = x log y, 0 where x = 0 (unless y is NaN);  d = log y dx + (x/y) dy, with
    torch's mask: dx gets 0 where x = 0 and y ≤ 0 (log y is -inf or nan there)"""

    def forward(ctx, x, y):
        if x.shape != y.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("xlogy", x, y)
        ctx.save_for_backward(x=x, y=y)
        with quiet():  # log(0) = -inf, 0 · -inf = nan: replaced below
            out = x * np.log(y)
        return np.where((x == 0) & ~np.isnan(y), np.zeros((), out.dtype), out)

    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        grad_x = grad_y = None
        with quiet():
            if needs_x:
                masked = (np.asarray(x) == 0) & (np.asarray(y) <= 0)
                log_y = Where.call(np.zeros((), grad.dtype), Log.call(y), condition=masked)
                grad_x = unbroadcast(grad * log_y, ctx.a_shape)
            if needs_y:
                grad_y = unbroadcast(grad * x / y, ctx.b_shape)
        return grad_x, grad_y


class Hypot(Broadcasting):
    """hypot(a, b) = √(a² + b²) (without overflow);  d = (a da + b db) / hypot — nan at the
    origin, as torch"""

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("hypot", a, b)
        out = np.hypot(a, b)
        ctx.save_for_backward(a=a, b=b, out=out)
        return out

    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        with quiet():  # 0/0 at the origin
            return (unbroadcast(grad * a / out, ctx.a_shape) if needs_a else None,
                    unbroadcast(grad * b / out, ctx.b_shape) if needs_b else None)


class Sinc(Node):
    """sinc x = sin(πx) / (πx), 1 at 0;  d = (πx cos(πx) - sin(πx)) / (πx²) dx, 0 at 0 (torch's
    mask: its second derivative there is nan, as torch's)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        angle = x * x.dtype.type(math.pi)
        with quiet():  # 0/0 at 0: replaced by 1
            out = np.sin(angle) / angle
        return np.where(x == 0, np.ones((), x.dtype), out)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        angle = x * math.pi
        with quiet():
            slope = (angle * Cos.call(angle) - Sin.call(angle)) / (angle * x)
            # masked after the product, as torch: d/dgrad at 0 is then 0 · nan = nan, as torch's
            return Where.call(np.zeros((), grad.dtype), grad * slope,
                              condition=np.asarray(x) == 0)


class Fmax(Broadcasting):
    """fmax(a, b): the larger, NaN ignored (nan only where both are);  d = da where a ≥ b or b
    is NaN (ties to a), else db, as torch"""

    values, op, bound = staticmethod(np.fmax), "fmax", "min"

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes(ctx.op, a, b)
        ctx.save_for_backward(a=a, b=b)
        return ctx.values(a, b)

    def wins(ctx, a, b) -> np.ndarray:
        with quiet():
            return (a >= b) | np.isnan(b)

    def backward(ctx, grad):
        a, b = (np.asarray(v) for v in ctx.saved_tensors)
        chosen = ctx.wins(a, b)
        zero = np.zeros((), grad.dtype)
        needs_a, needs_b = ctx.needs_input_grad
        # chosen, not multiplied: the other side gets exactly 0 whatever arrives
        return (unbroadcast(Where.call(grad, zero, condition=chosen), ctx.a_shape)
                if needs_a else None,
                unbroadcast(Where.call(zero, grad, condition=chosen), ctx.b_shape)
                if needs_b else None)

    def kink_bounds(self) -> list:
        """(input index, side): the slope jumps where input crosses other, which acts as its
        lower bound (fmin: upper), and the tie goes to input (gradcheck's kink report asks,
        kinks.py)."""
        return [(1, self.bound)]


class Fmin(Fmax):
    """fmin(a, b): the smaller, NaN ignored;  d = da where a ≤ b or b is NaN, else db"""

    values, op, bound = staticmethod(np.fmin), "fmin", "max"

    def wins(ctx, a, b) -> np.ndarray:
        with quiet():
            return (a <= b) | np.isnan(b)


class Heaviside(Node):
    """heaviside(x, v) = 0 for x < 0 (and NaN), v at 0, 1 for x > 0; torch defines no
    derivative: backward raises, as torch's"""

    elementwise = True

    def forward(ctx, x, values):
        with quiet():
            return np.where(x == 0, values, (x > 0).astype(x.dtype))

    def backward(ctx, grad):
        raise RuntimeError("heaviside: the derivative for aten::heaviside is not implemented "
                           "(torch defines none; detach the input or use a smooth step such "
                           "as sigmoid)")


FLOAT_FUNCTIONS["erfinv"] = Erfinv


def logit_eps(op: str, eps):
    """logit's eps: None or a number (a float)."""
    if eps is not None and (isinstance(eps, complex) or not is_number(eps)):
        raise TypeError(f"{op}(): argument 'eps' must be float, not {type(eps).__name__}")
    return None if eps is None else float(eps)


def logit(input, eps=None) -> Tensor:
    """log(p / (1 - p)), p first clamped to [eps, 1 - eps] when eps is given."""
    eps = logit_eps("logit", eps)
    return Logit.apply(floating(check_tensor("logit", "input", input)), eps=eps)


def xlogy(input, other) -> Tensor:
    """input · log(other), 0 where input is 0 (nan where other is); either may be a number
    (not both); integers and bools compute in the default float dtype."""
    if isinstance(input, Tensor):
        check_operand("xlogy", "other", other)
    else:
        check_operand("xlogy", "self", input)
        check_tensor("xlogy", "other", other)
    return Xlogy.apply(*promote(input, other, floating=True))


def hypot(input, other) -> Tensor:
    """√(input² + other²) of two floating tensors (broadcast)."""
    a, b = promote(check_tensor("hypot", "input", input), check_tensor("hypot", "other", other))
    if a.dtype.kind != "f":
        raise NotImplementedError(f"hypot: \"hypot_cpu\" not implemented for "
                                  f"'{_TORCH_NAMES.get(a.dtype.name, a.dtype)}' (it takes "
                                  f"floating tensors: use input.float())")
    return Hypot.apply(a, b)


def sinc(input) -> Tensor:
    return Sinc.apply(floating(check_tensor("sinc", "input", input)))


def deg2rad(input) -> Tensor:
    """input · π/180 (integers and bools in the default float dtype)."""
    return floating(check_tensor("deg2rad", "input", input)) * (math.pi / 180)


def rad2deg(input) -> Tensor:
    """input · 180/π (integers and bools in the default float dtype)."""
    return floating(check_tensor("rad2deg", "input", input)) * (180 / math.pi)


def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in float64 (either may be a number, not both); the gradients
    come back in each input's dtype, through the casts."""
    if isinstance(input, Tensor):
        check_operand("float_power", "exponent", exponent)
    else:
        check_operand("float_power", "input", input)
        check_tensor("float_power", "exponent", exponent)
    base, power = (as_dtype(v, np.dtype(np.float64)) if isinstance(v, Tensor) else float(v)
                   for v in (input, exponent))
    return pow(base, power)


def fmax(input, other, node: type = Fmax) -> Tensor:
    """The elementwise maximum ignoring NaN (both tensors, broadcast; torch's dtype promotion)."""
    a, b = promote(check_tensor(node.op, "input", input), check_tensor(node.op, "other", other))
    return node.apply(a, b)


def fmin(input, other) -> Tensor:
    """The elementwise minimum ignoring NaN."""
    return fmax(input, other, Fmin)


def heaviside(input, values) -> Tensor:
    input, values = (check_tensor("heaviside", "input", input),
                     check_tensor("heaviside", "values", values))
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                           f"(input: {input.dtype}, values: {values.dtype})")
    try:
        np.broadcast_shapes(input.shape, values.shape)
    except ValueError:
        raise BroadcastError(f"heaviside: cannot broadcast shapes {tuple(input.shape)} and "
                             f"{tuple(values.shape)} of input and values") from None
    return Heaviside.apply(input, values)


def logical_xor(input, other) -> Tensor:
    """(input ≠ 0) xor (other ≠ 0), broadcast: a bool tensor, no gradient."""
    a, b = (check_tensor("logical_xor", name, v)._data
            for name, v in (("input", input), ("other", other)))
    try:
        return Tensor._make(np.asarray(np.logical_xor(a, b)), None)
    except ValueError:
        raise BroadcastError(f"logical_xor: cannot broadcast shapes {a.shape} and {b.shape} of "
                             f"input and other") from None
