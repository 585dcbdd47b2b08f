"""Running results along a dim: cumprod, cummax/cummin (values and indices), logcumsumexp
(cumsum is with the reductions, in reduce.py).

Their backwards are written with Nodes (``.call``) so that they differentiate again:
- cumprod's gradient never divides by x (torch divides only where x has no zero; its formula
  with zeros is this one): ∂L/∂xₖ = (Πᵢ<ₖ xᵢ) · Sₖ, with Sₖ = Σⱼ≥ₖ gⱼ Πₖ<ᵢ≤ⱼ xᵢ, a sum that
  satisfies Sₖ = gₖ + xₖ₊₁ Sₖ₊₁ — a first-order linear recurrence, ``Recurrence``, whose own
  adjoint is the same recurrence run the other way. On the first-order path (arrays) it is
  torch's first-order choice where x has a zero: the terms past a zero are left out and the
  places after the first zero get exactly 0, not an inf or nan arriving times 0 (under
  create_graph torch, and this, multiply).
- cummax/cummin send each output's gradient to the index it came from (a scatter-add: many
  outputs may share one), read back by a gather in the second derivative.
- logcumsumexp's gradient is torch's, in log space so that nothing overflows:
  ∂L/∂xₖ = Σⱼ≥ₖ gⱼ e^(xₖ - yⱼ), its positive and negative gⱼ summed apart.
"""
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..fast.quiet import quiet
from ..engine import Cast, Node, Tensor
from ..args import check_floating
from .elementwise import Abs, Exp, Log, Where, check_tensor
from .movement import Flip, IndexScatter, Pad, wrap_dim
from .reduce import _return_type_repr
from .select import along_dim


def _accumulated(x: np.ndarray) -> np.ndarray:
    """x as a running product or recurrence is computed: float32 and float16 in float64 (a
    running product's error grows with its length; torch's CPU kernels accumulate so too)."""
    return x.astype(np.float64) if x.dtype.kind == "f" and x.dtype.itemsize < 8 else x


def shifted(x, axis: int, toward_end: bool, fill):
    """x moved one place along ``axis`` (toward its end: out[k] = x[k-1], else out[k] = x[k+1]),
    the place left empty filled with ``fill``: a Pad that crops what falls off the other end."""
    widths = tuple(((1, -1) if toward_end else (-1, 1)) if a == axis else (0, 0)
                   for a in range(x.ndim))
    return Pad.call(x, widths=widths, value=fill)


class Cumprod(Node):
    """yₖ = Πᵢ≤ₖ xᵢ;  ∂L/∂xₖ = (Πᵢ<ₖ xᵢ) · Σⱼ≥ₖ gⱼ Πₖ<ᵢ≤ⱼ xᵢ (no division: exact with zeros)"""

    def forward(ctx, x, axis):
        ctx.save_for_backward(x=x)
        if x.ndim == 0:
            return x.copy()
        return np.cumprod(_accumulated(x), axis=axis).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        axis = ctx.attrs["axis"]
        (x,) = ctx.saved_tensors
        if x.ndim == 0:
            return grad
        products_before = Cumprod.call(shifted(x, axis, True, 1), axis=axis)
        zeros = None if isinstance(grad, Tensor) else x == 0
        if zeros is None or not zeros.any():
            # Sₖ = gₖ + xₖ₊₁ Sₖ₊₁, from the end
            later = Recurrence.call(shifted(x, axis, False, 0), grad, axis=axis, reverse=True)
            return products_before * later
        # First order with a zero in x, as torch's: Sₖ leaves out the terms from the next zero
        # on (xₖ₊₁ = 0 ends the sum), and the places after the first zero get exactly 0
        # (Πᵢ<ₖ xᵢ = 0 there): chosen, so an inf or nan arriving gives 0, not nan
        later = recurrence(shifted(x, axis, False, 0), grad, axis, reverse=True, cut=True)
        after_zero = np.cumsum(zeros, axis=axis) > zeros
        return np.where(after_zero, np.zeros((), grad.dtype), products_before * later)


class Recurrence(Node):
    """yₖ = bₖ + aₖ yₖ₋₁ along ``axis`` from y₋₁ = 0 (``reverse``: yₖ = bₖ + aₖ yₖ₊₁ from the
    end). y is linear in b; its adjoint is the recurrence run the other way:
    ∂L/∂bₖ = λₖ = gₖ + aₖ₊₁ λₖ₊₁ and ∂L/∂aₖ = λₖ yₖ₋₁ (indices mirrored for ``reverse``)."""

    def forward(ctx, a, b, axis, reverse):
        y = recurrence(a, b, axis, reverse)
        ctx.save_for_backward(a=a, y=y)
        return y

    def backward(ctx, grad):
        axis, reverse = ctx.attrs["axis"], ctx.attrs["reverse"]
        a, y = ctx.saved_tensors
        adjoint = Recurrence.call(shifted(a, axis, reverse, 0), grad, axis=axis,
                                  reverse=not reverse)
        return adjoint * shifted(y, axis, not reverse, 0), adjoint


def recurrence(a: np.ndarray, b: np.ndarray, axis: int, reverse: bool,
               cut: bool = False) -> np.ndarray:
    """Recurrence's values: yₖ = bₖ + aₖ yₖ₋₁ along ``axis`` (``reverse``: from the end).
    ``cut``: a zero aₖ ends the chain, yₖ = bₖ, whatever yₖ₋₁ is (an inf or nan there
    does not come through as 0 · inf)."""
    along = (lambda v: np.flip(v, axis)) if reverse else (lambda v: v)  # (its own inverse)
    y = _scan(np.moveaxis(_accumulated(along(a)), axis, -1),
              np.moveaxis(_accumulated(along(b)), axis, -1), cut)
    return along(np.moveaxis(y, -1, axis)).astype(np.result_type(a, b))


def _scan(a: np.ndarray, b: np.ndarray, cut: bool = False) -> np.ndarray:
    """yₖ = bₖ + aₖ yₖ₋₁ along the last axis, in ⌈log₂ n⌉ vectorised steps (Hillis–Steele):
    after the step with stride d, yₖ = Bₖ + Aₖ yₖ₋d, where Aₖ is the product of the d
    coefficients down to k-d+1 and Bₖ the recurrence summed over them; d doubles each step.
    ``cut``: where one of Aₖ's coefficients is 0, the term Aₖ yₖ₋d is left out (not 0 · inf)."""
    coefficient, total = a.copy(), b.copy()
    has_zero = a == 0 if cut else None  # (for Aₖ: one of its coefficients is 0)
    n, d = a.shape[-1], 1
    with quiet():  # (inf · 0 where a product overflows: as the sequential sum would)
        while d < n:
            term = coefficient[..., d:] * total[..., :-d]
            if cut:
                term[has_zero[..., d:]] = 0
                has_zero[..., d:] = has_zero[..., d:] | has_zero[..., :-d]
            total[..., d:] = total[..., d:] + term
            coefficient[..., d:] = coefficient[..., d:] * coefficient[..., :-d]
            d *= 2
    return total


class CumulativeExtreme(Node):
    """cummax (cummin): yₖ = max (min) of x up to k, and the index it was found at;
    ∂L/∂x = zeros.scatter_add(dim, indices, g): each output's gradient to that index.
    A later equal value takes over the index (torch's ``>=``), and so does a NaN, after which
    the values stay NaN. Saves the indices, as torch."""

    accumulate = np.maximum.accumulate

    def forward(ctx, x, axis):
        if x.ndim == 0:
            ctx.save_for_backward(indices=np.zeros((), np.int64))
            return x.copy()
        values = ctx.accumulate(x, axis=axis)
        taken = x == values  # where the running extreme was (re)set ...
        if x.dtype.kind == "f":
            taken |= np.isnan(x)
        position = np.arange(x.shape[axis]).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
        # ... and, at each k, the last such place up to k
        indices = np.maximum.accumulate(np.where(taken, position, 0), axis=axis).astype(np.int64)
        ctx.save_for_backward(indices=indices)
        return values

    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        indices = np.asarray(indices)
        if not indices.shape:
            return grad
        return IndexScatter.call(grad, index=along_dim(indices, ctx.attrs["axis"]),
                                 shape=indices.shape)


class CumulativeMin(CumulativeExtreme):
    """cummin: as cummax, for the minimum"""

    accumulate = np.minimum.accumulate


class LogCumSumExp(Node):
    """yₖ = log Σᵢ≤ₖ e^xᵢ (NumPy's logaddexp: no overflow; -inf terms add nothing);
    ∂L/∂xₖ = Σⱼ≥ₖ gⱼ e^(xₖ - yⱼ), computed as torch does, in log space (see the module's
    docstring). Saves its input and output."""

    def forward(ctx, x, axis):
        if x.ndim == 0:
            out = x.copy()
        else:
            with quiet():  # inf - inf inside logaddexp: nan, as torch
                out = np.logaddexp.accumulate(_accumulated(x), axis=axis).astype(x.dtype)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        axis = ctx.attrs["axis"]
        x, out = ctx.saved_tensors
        if not x.shape or not np.asarray(x).size:
            return grad
        lowest = np.array(np.finfo(x.dtype).min, x.dtype)  # torch's stand-in for log 0
        signs = np.asarray(grad)  # which gₖ are positive and negative: constants
        log_magnitude = Log.call(Abs.call(grad))

        def summed_from_the_end(log_terms):
            flipped = Flip.call(log_terms - out, dims=(axis,))
            return Exp.call(Flip.call(LogCumSumExp.call(flipped, axis=axis), dims=(axis,)) + x)
        positive = summed_from_the_end(Where.call(log_magnitude, lowest, condition=signs > 0))
        negative = summed_from_the_end(Where.call(log_magnitude, lowest, condition=signs < 0))
        return positive - negative


# ---- what torch returns -------------------------------------------------------------------
class CummaxResult(NamedTuple):
    """What ``cummax`` returns: a named tuple, as ``torch.return_types.cummax``."""
    values: Tensor
    indices: Tensor
    _op = "cummax"
    __repr__ = _return_type_repr


class CumminResult(NamedTuple):
    """What ``cummin`` returns: a named tuple, as ``torch.return_types.cummin``."""
    values: Tensor
    indices: Tensor
    _op = "cummin"
    __repr__ = _return_type_repr


# ---- torch's entry points -------------------------------------------------------------------
def cumprod(input, dim, *, dtype=None) -> Tensor:
    """Running products along ``dim``; integers and bools multiply as int64, as torch;
    ``dtype``: input is cast to it first."""
    input = check_tensor("cumprod", "input", input)
    dim = wrap_dim("cumprod", dim, input.ndim)
    if dtype is not None:
        input = Cast.apply(input, dtype=dtypes.as_dtype("cumprod", dtype))
    elif input.dtype.kind in "biu":
        input = Cast.apply(input, dtype=np.dtype(np.int64))
    return Cumprod.apply(input, axis=dim)


def _cumulative_extreme(op: str, node: type, result: type, input, dim):
    input = check_tensor(op, "input", input)
    values, ctx = node.apply(input, axis=wrap_dim(op, dim, input.ndim), return_ctx=True)
    (indices,) = ctx.saved_tensors
    # The indices are the caller's to keep (a copy: backward reads the saved ones)
    return result(values, Tensor._make(np.array(indices, dtype=np.int64), None))


def cummax(input, dim) -> CummaxResult:
    """(values, indices): the largest value so far along ``dim`` and where it was (the latest
    place at ties; NaN, once met, stays)."""
    return _cumulative_extreme("cummax", CumulativeExtreme, CummaxResult, input, dim)


def cummin(input, dim) -> CumminResult:
    """(values, indices): the smallest value so far along ``dim`` and where it was."""
    return _cumulative_extreme("cummin", CumulativeMin, CumminResult, input, dim)


def logcumsumexp(input, dim) -> Tensor:
    """log Σᵢ≤ₖ exp(xᵢ) along ``dim``, computed without overflow (floating point only)."""
    input = check_floating("logcumsumexp", "input", check_tensor("logcumsumexp", "input", input))
    return LogCumSumExp.apply(input, axis=wrap_dim("logcumsumexp", dim, input.ndim))
