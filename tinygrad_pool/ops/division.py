"""Division that rounds, and the two remainders, as torch has them:

  div(a, b, rounding_mode="trunc")   a / b rounded towards zero (C's integer division)
  div(a, b, rounding_mode="floor")   a / b rounded down; ``a // b`` and ``floor_divide`` too
  remainder(a, b), ``a % b``         a - ⌊a / b⌋ b: the sign of b, as Python's %
  fmod(a, b)                         a - trunc(a / b) b: the sign of a, as C's fmod

Integers stay integers (``-7 // 2`` is -4), and an integer divided by 0 is torch's
RuntimeError("ZeroDivisionError"); floats divide by 0 into inf or nan. A bool result type is
refused, as torch (it has no such kernel).

Derivatives (torch's derivatives.yaml): a rounded quotient is a step function of both inputs,
so its gradient is 0 — zeros, not None. The remainders are a - q b with such a step q, so
d/da = 1 and d/db = -q. torch gives ``floor_divide`` (``a // b``) and a remainder with a number
on the left (``5 % t``) no derivative at all: backward refuses, as torch's does.

(The remainders jump where a / b crosses an integer, with slope 1 on both sides: kinks.py's
``kink_jumps`` describes a jump whose backward takes 0 and reads one input, so these ops
declare no kink rule and gradcheck names them as ops without one.)
"""
import numpy as np

from ..engine import Tensor, unbroadcast
from ..fast.quiet import quiet
from .elementwise import (Broadcasting, Div, check_broadcast, check_operand, input_shapes,
                          is_number, promote)
from .movement import Fill

ROUNDING_MODES = (None, "trunc", "floor")

# torch's name for each kernel, which its "not implemented for 'Bool'" errors give
KERNELS = {"trunc": "div_trunc_cpu", "floor": "div_floor_cpu", "remainder": "remainder_cpu",
           "fmod": "fmod_cpu"}


def divide_rounded(a: np.ndarray, b: np.ndarray, rounding_mode: str) -> np.ndarray:
    """a / b rounded towards zero ("trunc") or down ("floor"), in a's dtype (a, b: one dtype).
    Floats as torch: floor keeps the sign of a zero quotient and gives a / b where b = 0
    (NumPy's floor_divide is the same algorithm)."""
    with quiet():  # floats: 1 / 0 = inf, 0 / 0 = nan; integers: INT_MIN // -1 wraps, as torch
        if a.dtype.kind == "f":
            return np.trunc(a / b) if rounding_mode == "trunc" else np.floor_divide(a, b)
        floor = np.floor_divide(a, b)
        if rounding_mode == "floor" or a.dtype.kind == "u":
            return floor
        # towards zero: one up from the floor where the quotient is negative and inexact
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return (floor + inexact).astype(a.dtype, copy=False)


def remainder_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - ⌊a / b⌋ b, the sign of b. Floats as torch: fmod, then b added where the signs
    differ; a zero keeps fmod's sign, the sign of a (NumPy's remainder gives it b's)."""
    with quiet():  # x mod 0 = nan, inf mod x = nan
        if a.dtype.kind != "f":
            return np.remainder(a, b)
        mod = np.fmod(a, b)
        return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def fmod_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - trunc(a / b) b, the sign of a (C's fmod, NumPy's too)."""
    with quiet():
        return np.fmod(a, b)


class RoundingDiv(Broadcasting):
    """d round(a / b) = 0 — a step function of both inputs; torch passes back zeros, not None"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, a, b, rounding_mode):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes("div", a, b)
        return divide_rounded(a, b, rounding_mode)

    def backward(ctx, grad):
        return tuple(unbroadcast(Fill.call(grad, value=0), shape) if needed else None
                     for needed, shape in zip(ctx.needs_input_grad, (ctx.a_shape, ctx.b_shape)))


def no_derivative(name: str, instead: str):
    """The backward of an op that torch gives no derivative: it refuses, with torch's words."""
    raise RuntimeError(f"derivative for aten::{name} is not implemented (torch defines none; "
                       f"{instead})")


class FloorDivide(RoundingDiv):
    """``a // b``, torch.floor_divide: div(a, b, rounding_mode="floor")'s values, but torch
    defines no derivative for it, so backward refuses"""

    fresh_gradients = False

    def backward(ctx, grad):
        no_derivative("floor_divide", "div(a, b, rounding_mode='floor') gives the same values "
                                      "with gradient 0")


class Remainder(Broadcasting):
    """d(a mod b) = da - ⌊a / b⌋ db  (a mod b = a - ⌊a / b⌋ b, the quotient a step function)"""

    quotient = "floor"  # the rounding of a / b that the remainder takes away
    torch_name = "remainder"
    values = staticmethod(remainder_values)

    def forward(ctx, a, b):
        if a.shape != b.shape:
            ctx.a_shape, ctx.b_shape = input_shapes(ctx.torch_name, a, b)
        # a and b only for b's gradient (None otherwise), as torch
        needs_b = ctx.needs_input_grad[1]
        ctx.save_for_backward(a=a if needs_b else None, b=b if needs_b else None)
        return ctx.values(a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = unbroadcast(grad, ctx.a_shape) if needs_a else None
        # the quotient through RoundingDiv, so that its derivative (0) is recorded too
        grad_b = unbroadcast(-grad * RoundingDiv.call(a, b, rounding_mode=ctx.quotient),
                             ctx.b_shape) if needs_b else None
        return grad_a, grad_b


class Fmod(Remainder):
    """d fmod(a, b) = da - trunc(a / b) db  (fmod(a, b) = a - trunc(a / b) b)"""

    quotient = "trunc"
    torch_name = "fmod"
    values = staticmethod(fmod_values)


class NumberRemainder(Remainder):
    """``5 % t``, torch's remainder of a number by a tensor: its values, but torch defines no
    derivative for it, so backward refuses"""

    def backward(ctx, grad):
        no_derivative("remainder", "torch.full_like(t, 5) % t, with a tensor on the left, "
                                   "has one")


# ---- torch's entry points -------------------------------------------------------------------
def operands(op: str, input, other, number_first: bool = True,
             true_division: bool = False) -> tuple:
    """(input, other) as Tensors of torch's common dtype (for true division a floating one:
    integers divide as floats): Tensors or real numbers, at least one a Tensor; ``input`` a
    number only where torch takes one (``number_first``)."""
    check_operand(op, "other", other)
    if not isinstance(input, Tensor) and not (number_first and is_number(input) and
                                              isinstance(other, Tensor)):
        what = "Tensor (or a number, with a Tensor other)" if number_first else "Tensor"
        raise TypeError(f"{op}(): argument 'input' must be {what}, not {type(input).__name__}")
    # (a Python integer wraps around into an integer common dtype, as torch's: ``int8 % 300``
    # takes 300 as 44; true division takes it as a float)
    a, b = promote(input, other, floating=true_division)
    if a.shape != b.shape and a.ndim and b.ndim:
        check_broadcast(op, a._data, b._data)
    return a, b


def check_rounding(op: str, rounding_mode) -> None:
    if rounding_mode is not None and not isinstance(rounding_mode, str):
        raise TypeError(f"{op}(): argument 'rounding_mode' must be str or None, not "
                        f"{type(rounding_mode).__name__}")
    if rounding_mode not in ROUNDING_MODES:
        raise RuntimeError(f"{op}: rounding_mode must be None, 'trunc' or 'floor' (div expected "
                           f"rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"{rounding_mode!r})")


def check_integer_division(op: str, kernel: str, a: Tensor, b: Tensor) -> None:
    """torch's refusals for rounded division and remainders: no bool kernel, and an integer
    divisor of 0 is its RuntimeError("ZeroDivisionError") (floats give inf or nan)."""
    dtype = a._data.dtype
    if dtype.kind == "b":
        raise NotImplementedError(
            f"{op}: \"{KERNELS[kernel]}\" not implemented for 'Bool': input and other are both "
            f"bool (convert one with .long() or .float())")
    if dtype.kind != "f" and a._data.size and b._data.size and not np.all(b._data):
        raise RuntimeError(f"ZeroDivisionError: {op}: integer division by zero (other has a 0 "
                           f"and the operands' common dtype is {dtype}; floats divide by 0 "
                           f"into inf or nan)")


def div(input, other, *, rounding_mode=None, op: str = "div") -> Tensor:
    """input / other; rounded towards zero or down with rounding_mode "trunc" or "floor"."""
    check_rounding(op, rounding_mode)
    a, b = operands(op, input, other, true_division=rounding_mode is None)
    if rounding_mode is None:
        return Div.apply(a, b)
    check_integer_division(op, rounding_mode, a, b)
    return RoundingDiv.apply(a, b, rounding_mode=rounding_mode)


def floor_divide(input, other, op: str = "floor_divide") -> Tensor:
    a, b = operands(op, input, other)
    check_integer_division(op, "floor", a, b)
    return FloorDivide.apply(a, b, rounding_mode="floor")


def remainder(input, other, op: str = "remainder") -> Tensor:
    a, b = operands(op, input, other)
    check_integer_division(op, "remainder", a, b)
    return (Remainder if isinstance(input, Tensor) else NumberRemainder).apply(a, b)


def fmod(input, other) -> Tensor:
    a, b = operands("fmod", input, other, number_first=False)
    check_integer_division("fmod", "fmod", a, b)
    return Fmod.apply(a, b)


def inplace_args(op: str, input: Tensor, other, kernel) -> tuple:
    """(node, other as a Tensor, node's attributes, result dtype) of ``input.op_(other)``:
    checked as the function checks them (``kernel`` None: true division)."""
    a, b = operands(op, input, other, number_first=False, true_division=kernel is None)
    dtype = a._data.dtype
    if kernel is None:
        return Div, b, {}, dtype
    check_integer_division(op, kernel, a, b)
    if kernel == "remainder":
        return Remainder, b, {}, dtype
    if kernel == "fmod":
        return Fmod, b, {}, dtype
    node = FloorDivide if op in ("floor_divide_", "//=") else RoundingDiv
    return node, b, {"rounding_mode": kernel}, dtype
