"""Reductions over axes: sum, mean, max/min (amax/amin, and with a dim their values and
indices), prod, var/std, norm, logsumexp, cumsum, argmax/argmin (the fused, numerically stable
log-softmax lives in loss.py). Their backward spreads the output gradient back over the axes
that were reduced.

The functions at the end are torch's entry points (``var(x, dim, correction=0)``,
``max(x, dim)`` → ``MaxResult(values, indices)``): they check the arguments and call the
Function.
"""
import builtins
import math
from typing import NamedTuple

import numpy as np

from ..fast.quiet import quiet
from ..engine import OMITTED, Node, Tensor
from ..args import DimensionError, check_flag, check_scalar, warn
from .elementwise import Abs, Exp, Pow, Sign, Where, check_tensor, floating
from .movement import Expand, Fill, Flip, IndexScatter, is_int, wrap_dim



def normalize_axis(op: str, ndim: int, axis: int) -> int:
    """A dim as a non-negative index (movement's ``wrap_dim``: a 0-d tensor accepts 0 and -1)."""
    return wrap_dim(op, axis, ndim)


class RepeatedDimensionError(RuntimeError, ValueError):
    """A dim named twice: torch raises RuntimeError (this package raised ValueError before)."""


def reduce_args(op, shape, axis, keepdims, dim, keepdim) -> dict:
    """Accept NumPy's ``axis``/``keepdims`` and PyTorch's ``dim``/``keepdim`` spellings
    (``keepdim`` OMITTED: not given; None, as torch, is no bool)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{op}() got multiple values for argument 'dim' (axis is its NumPy "
                            f"spelling)")
        axis = dim
    if keepdim is not OMITTED:
        keepdims = keepdim
    if type(keepdims) is not bool:
        check_flag(op, "keepdim", keepdims)
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        if is_int(axis):
            given = (axis,)
        elif isinstance(axis, (tuple, list)):
            given = tuple(axis)
        else:
            raise TypeError(f"{op}: dim must be an int or a tuple of ints, got "
                            f"{type(axis).__name__} ({axis!r})")
        axes = tuple(sorted(normalize_axis(op, len(shape), a) for a in given))
        if len(set(axes)) != len(axes):
            raise RepeatedDimensionError(f"{op}: axis {axis} names a dimension twice "
                                         f"(shape {shape})")
        if not shape:  # dim 0 (or -1) of a 0-d tensor, as torch allows: nothing to reduce
            axes = ()
    return {"axis": axes, "keepdims": bool(keepdims)}


# NumPy sums pairwise (error ~ ε log n) only along the axes its inner loop runs over: the trailing
# axes of a C-contiguous array. Along any other axis it adds one slice at a time, and the error
# grows with the length: a float32 column of 10⁶ numbers came out 3e-6 off, where torch's
# cascade sum is 1e-7 off (its var, std and cumsum accumulate in float64 outright). Such sums of
# floats narrower than float64 accumulate in float64 and are rounded once at the end — several
# times the cost of NumPy's own sum, so only from LONG_SUM elements on; below it the error is as
# small.
LONG_SUM = 256


def sum_accurately(x: np.ndarray, axis: tuple, keepdims: bool = False):
    """``x.sum(axis)``, with a float64 accumulator where NumPy would add a long run naively;
    inf + -inf is nan and an overflow inf, silently, as in torch."""
    with quiet():
        if x.dtype.kind == "f" and x.dtype.itemsize < 8 and not _sums_pairwise(x, axis) \
                and math.prod(x.shape[a] for a in axis) >= LONG_SUM:
            return x.sum(axis=axis, keepdims=keepdims, dtype=np.float64).astype(x.dtype)
        return x.sum(axis=axis, keepdims=keepdims)


def _sums_pairwise(x: np.ndarray, axis: tuple) -> bool:
    """Whether NumPy's inner loop covers the reduced axes (the trailing ones, contiguous)."""
    return x.flags.c_contiguous and axis == tuple(range(x.ndim - len(axis), x.ndim))


def expand_reduced(grad, input_shape: tuple, axis: tuple, keepdims: bool):
    """Put back the reduced axes as length-1 axes, so that the gradient broadcasts over them."""
    if keepdims or grad.ndim == 0 or grad.ndim == len(input_shape):  # 0-d broadcasts as it is
        return grad
    return grad.reshape(tuple(1 if a in axis else n for a, n in enumerate(input_shape)))


class Sum(Node):
    """d Σᵢ xᵢ / d xⱼ = 1: every summed element receives the output gradient unchanged"""

    def forward(ctx, x, axis, keepdims):
        ctx.input_shape = x.shape
        return sum_accurately(x, axis, keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.input_shape, **ctx.attrs)
        return Expand.call(grad, shape=ctx.input_shape)


class Mean(Node):
    """d (Σᵢ xᵢ / n) / d xⱼ = 1 / n"""

    def forward(ctx, x, axis, keepdims):
        if x.dtype.kind != "f":  # torch will not guess a dtype for the mean of integers
            raise RuntimeError(f"mean(): could not infer output dtype. The input's dtype must be a "
                               f"floating point dtype. Got: {x.dtype} (use x.float().mean())")
        ctx.input_shape = x.shape
        ctx.count = int(np.prod([x.shape[a] for a in axis]))
        return mean_accurately(x, axis, keepdims)

    def backward(ctx, grad):
        grad = expand_reduced(grad, ctx.input_shape, **ctx.attrs)
        return Expand.call(grad / ctx.count, shape=ctx.input_shape)


def mean_accurately(x: np.ndarray, axis: tuple, keepdims: bool = False):
    """``x.mean(axis)`` from ``sum_accurately``; the mean of nothing is nan, without NumPy's
    warning (as torch)."""
    with quiet():  # 0 / 0
        return sum_accurately(x, axis, keepdims) / x.dtype.type(math.prod(x.shape[a] for a in axis))


class Max(Node):
    """d max(x) / d xⱼ = [xⱼ is a maximum] / (number of maxima)

    At a tie the max is not differentiable; splitting the gradient equally among the tied
    maxima is a valid subgradient and matches PyTorch's ``amax`` and full ``max()``. Like
    PyTorch, it saves its input and its output.
    """

    reducer = staticmethod(np.max)

    def forward(ctx, x, axis, keepdims):
        # ("max" or "min". The entry points check the dims a caller named, as amax(0) of an
        # empty tensor; all dims here is max() of the whole tensor, with no dim named.)
        check_nonempty(ctx.reducer.__name__, x.shape, axis if len(axis) < x.ndim else None)
        out = ctx.reducer(x, axis=axis, keepdims=keepdims)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
        x, out = (np.asarray(v) for v in ctx.saved_tensors)
        out = expand_reduced(out, x.shape, axis, keepdims)
        is_max = x == out
        # no element equals a NaN max: 0 / 0, as torch's amax (which multiplies by its mask:
        # an inf or nan arriving gives nan at the others too)
        share = is_max / is_max.sum(axis=axis, keepdims=True, dtype=x.dtype)  # a constant
        return expand_reduced(grad, x.shape, axis, keepdims) * share

    def kink_candidates(self, x) -> tuple:
        """What the max is taken among, for gradcheck's kink report (kinks.py): (values (G, K),
        each group's K candidates, oriented so that the larger wins; cell(g, k) and group(g),
        their names)."""
        axes = tuple(sorted(a % x.ndim for a in self.attrs["axis"])) if x.ndim else ()
        sign = 1 if self.reducer is np.max else -1
        return _reduced_candidates(axes, x.reshape(x.shape or (1,)), sign, self.name)

    def kink_choice(self, group, tied, cell) -> str:
        """Where backward sent the gradient of a group whose maxima tie (gradcheck asks)."""
        return (f"backward splits the gradient equally among the {len(tied)} (1/{len(tied)} each), "
                f"as PyTorch's amax and max()")


class Min(Max):
    """d min(x) / d xⱼ = [xⱼ is a minimum] / (number of minima) — amin's rule, as Max"""

    reducer = staticmethod(np.min)


def evenly_distributed(grad, x, out):
    """torch's evenly_distribute_backward, for a reduction of every element to one of them
    (max(), min(), median()): grad / (how many elements equal out) at each of them (at each
    NaN, where out is NaN), 0 elsewhere — chosen, not multiplied by a 0/1 mask, so that an inf
    or nan arriving gives exactly 0 at the others, as torch's. A selection of grad: its double
    backward in grad is this again; constant in x."""
    x, out = np.asarray(x), np.asarray(out)
    chosen = np.isnan(x) if x.dtype.kind == "f" and np.isnan(out) else x == out
    return Where.call(grad / chosen.sum(dtype=x.dtype), np.zeros((), grad.dtype),
                      condition=chosen)


class MaxAll(Max):
    """``max()`` of every element: Max's rule, except that a NaN maximum sends its gradient
    to the NaNs, shared equally, and the others get exactly 0 (torch's
    evenly_distribute_backward; its amax gives NaN)"""

    def backward(ctx, grad):
        return evenly_distributed(grad, *ctx.saved_tensors)


class MinAll(Min):
    """``min()`` of every element, as MaxAll"""

    backward = MaxAll.backward


def check_nonempty(op: str, shape: tuple, dims) -> None:
    """torch's errors for max/min/argmax of nothing. ``dims``: the dims reduced, spelled as the
    error shows them (negative ones index ``shape`` as they are), or None where the caller
    named none: an empty tensor reduced whole is a RuntimeError; a named dim of length 0 an
    IndexError, even when the dims named are all of them; reducing other dims is fine (the
    result is empty)."""
    _refuse_empty(shape, dims, lambda: RuntimeError(
        f"{op}(): Expected reduction dim to be specified for input.numel() == 0 (an empty "
        f"tensor of shape {shape}). Specify the reduction dim with the 'dim' argument."),
        lambda d: DimensionError(f"{op}(): Expected reduction dim {d} to have non-zero size "
                                 f"(the tensor is empty, shape {shape})"))


def _refuse_empty(shape: tuple, dims, whole_error, dim_error) -> None:
    """A reduction with no value over nothing (max, min, a norm with p < 0 or inf) refuses an
    empty tensor reduced whole (``dims`` None: raises ``whole_error()``) and a named dim of
    length 0 (``dim_error(d)``); with other dims reduced the result is just empty."""
    if math.prod(shape):
        return
    if dims is None:
        raise whole_error()
    for d in dims:
        if shape[d] == 0:
            raise dim_error(d)


class MaxAlongDim(Node):
    """max(x, dim) → values and their indices: the gradient goes to the selected element only
    (torch's rule for max/min with a dim; the first of tied maxima is selected, as on torch's
    CPU). Saves the indices, as torch."""

    pick = staticmethod(np.argmax)

    def forward(ctx, x, dim, keepdim):
        if x.ndim == 0:  # a 0-d tensor is its own max, at index 0
            ctx.save_for_backward(indices=np.zeros((), np.int64))
            return x.copy()
        indices = ctx.pick(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, indices, axis=dim)
        ctx.save_for_backward(indices=indices if keepdim else indices.squeeze(dim))
        return values if keepdim else values.squeeze(dim)

    def backward(ctx, grad):
        dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
        shape = ctx.parents[0].shape
        if len(shape) == 0:
            return grad
        grad = expand_reduced(grad, shape, (dim,), keepdim)
        (indices,) = ctx.saved_tensors
        indices = np.asarray(indices)
        if not keepdim:
            indices = np.expand_dims(indices, dim)
        # The advanced index of each selected element: its own position on every other axis
        index = tuple(indices if a == dim else
                      np.arange(n).reshape([-1 if b == a else 1 for b in range(len(shape))])
                      for a, n in enumerate(shape))
        return IndexScatter.call(grad, index=index, shape=shape)

    def kink_candidates(self, x) -> tuple:
        """What the max is taken among: the elements along ``dim`` (as Max's, gradcheck asks)."""
        sign = 1 if self.pick is np.argmax else -1
        return _reduced_candidates((self.attrs["dim"] % (x.ndim or 1),), x.reshape(x.shape or (1,)),
                                   sign, self.name)

    def kink_choice(self, group, tied, cell) -> str:
        """Where backward sent a group's gradient: the index forward selected (gradcheck asks)."""
        index = int(np.asarray(self.saved_for_backward()["indices"]).reshape(-1)[group])
        return (f"{self.name} selected index {index} (the first, as PyTorch on the CPU): it gets the "
                f"whole gradient")


class MinAlongDim(MaxAlongDim):
    """min(x, dim) → values and indices; the gradient goes to the selected element only"""

    pick = staticmethod(np.argmin)


def _reduced_candidates(axes, x, sign, name) -> tuple:
    """The slices a reduction over ``axes`` takes its max (sign 1) or min (sign -1) of, as
    ``kink_candidates`` gives them: (values (G, K), cell(g, k), group(g))."""
    moved = list(range(x.ndim - len(axes), x.ndim))
    kept_shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    values = np.moveaxis(x, axes, moved).reshape(int(np.prod(kept_shape)), -1) * sign
    where = np.moveaxis(np.indices(x.shape), [d + 1 for d in axes], [d + 1 for d in moved])
    where = where.reshape(x.ndim, values.shape[0], -1)

    def cell(g, k):
        return f"element {tuple(int(i) for i in where[:, g, k])}"

    def group(g):
        return (f"{name} of all elements" if not kept_shape else
                f"the {name} slice at {tuple(int(i) for i in np.unravel_index(g, kept_shape))}")
    return values, cell, group


def _return_type_repr(self) -> str:
    # torch's own text, so that a ported script prints what it printed under torch
    return f"torch.return_types.{self._op}(\nvalues={self.values!r},\nindices={self.indices!r})"


class MaxResult(NamedTuple):
    """What ``max(x, dim)`` returns: a named tuple, as ``torch.return_types.max``."""
    values: Tensor
    indices: Tensor
    _op = "max"
    __repr__ = _return_type_repr


class MinResult(NamedTuple):
    """What ``min(x, dim)`` returns: a named tuple, as ``torch.return_types.min``."""
    values: Tensor
    indices: Tensor
    _op = "min"
    __repr__ = _return_type_repr


class Prod(Node):
    """d Πᵢ xᵢ / d xⱼ = Πᵢ≠ⱼ xᵢ — which is out / xⱼ when no xᵢ is 0 (torch's fast case); with
    zeros the product of the others is computed as such (``ProdOfOthers``), as torch does"""

    def forward(ctx, x, axis, keepdims):
        out = x.prod(axis=axis, keepdims=keepdims)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
        x, out = ctx.saved_tensors
        grad = expand_reduced(grad, x.shape, axis, keepdims)
        if x.ndim == 0:
            return grad
        if not (np.asarray(x) == 0).any():
            return grad * (expand_reduced(out, x.shape, axis, keepdims) / x)
        return grad * ProdOfOthers.call(x, axis=axis)


def exclusive_cumprod(x: np.ndarray, axis: int) -> np.ndarray:
    """[1, x₀, x₀x₁, ...]: the product of the elements before each one along ``axis``."""
    before = np.delete(np.concatenate([np.ones_like(np.take(x, [0], axis)), x], axis), -1, axis)
    return np.cumprod(before, axis=axis)


class ProdOfOthers(Node):
    """yⱼ = Πᵢ≠ⱼ xᵢ along the reduced axes (exact with zeros: no division), and
    ∂yⱼ/∂xₖ = Πᵢ∉{j,k} xᵢ for k ≠ j. Its backward works on arrays only (a third derivative of
    a product with zeros is refused, ``once_differentiable``)."""

    once_differentiable = True

    def forward(ctx, x, axis):
        ctx.save_for_backward(x=x)
        flat = moved_to_end(x, axis)
        before = exclusive_cumprod(flat, -1)
        after = np.flip(exclusive_cumprod(np.flip(flat, -1), -1), -1)
        return moved_back(before * after, x.shape, axis)

    def backward(ctx, grad):
        axis = ctx.attrs["axis"]
        (x,) = ctx.saved_tensors
        shape = x.shape
        x = moved_to_end(np.asarray(x), axis)  # (..., n)
        g = moved_to_end(np.asarray(grad), axis)
        n = x.shape[-1]
        eye = np.eye(n, dtype=bool)
        # Row k: x with xₖ replaced by 1; the product of the others in it, at j ≠ k, is
        # Πᵢ∉{j,k} xᵢ — one n × n slice per reduced row (the O(n²) is only paid with zeros).
        without_k = np.where(eye, 1, x[..., None, :])
        before = exclusive_cumprod(without_k, -1)
        after = np.flip(exclusive_cumprod(np.flip(without_k, -1), -1), -1)
        grad_x = np.where(eye, 0, before * after * g[..., None, :]).sum(-1)
        return moved_back(grad_x, shape, axis)


def moved_to_end(x: np.ndarray, axis: tuple) -> np.ndarray:
    """The reduced axes moved last and merged into one (the others keep their order)."""
    kept = [a for a in range(x.ndim) if a not in axis]
    return x.transpose(kept + list(axis)).reshape([x.shape[a] for a in kept] + [-1])


def moved_back(y: np.ndarray, shape: tuple, axis: tuple) -> np.ndarray:
    kept = [a for a in range(len(shape)) if a not in axis]
    order = kept + list(axis)
    y = y.reshape([shape[a] for a in order])
    return y.transpose(np.argsort(order))


class Var(Node):
    """var = Σ (x - x̄)² / (N - c);  d var / d xⱼ = 2 (xⱼ - x̄) / (N - c) (the x̄ terms cancel,
    since Σ (x - x̄) = 0). N - c below 0 counts as 0, so the result is inf or nan, as torch."""

    def forward(ctx, x, axis, correction, keepdims):
        ctx.save_for_backward(x=x)
        with quiet():  # (inf - inf = nan)
            return (sum_of_squares_about_mean(x, axis, keepdims) / degrees_of_freedom(
                x.shape, axis, correction)).astype(x.dtype)

    def backward(ctx, grad):
        axis, correction, keepdims = (ctx.attrs[k] for k in ("axis", "correction", "keepdims"))
        (x,) = ctx.saved_tensors
        scale = np.divide(2.0, degrees_of_freedom(x.shape, axis, correction))
        return (expand_reduced(grad, x.shape, axis, keepdims) * scale) * \
            (x - Mean.call(x, axis=axis, keepdims=True))  # (empty x: nan, no NumPy warning)


class Std(Node):
    """std = √var;  d std / d xⱼ = (xⱼ - x̄) / ((N - c) std) — and 0 where std = 0 (a constant
    slice), as torch, where the formula would divide by 0. Saves x and the output, as torch."""

    def forward(ctx, x, axis, correction, keepdims):
        with quiet():  # (inf - inf = nan)
            out = np.sqrt(sum_of_squares_about_mean(x, axis, keepdims)
                          / degrees_of_freedom(x.shape, axis, correction)).astype(x.dtype)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        axis, correction, keepdims = (ctx.attrs[k] for k in ("axis", "correction", "keepdims"))
        x, out = ctx.saved_tensors
        out = expand_reduced(out, x.shape, axis, keepdims)
        grad = expand_reduced(grad, x.shape, axis, keepdims)
        is_zero = np.asarray(out) == 0  # a constant: where the gradient is defined as 0
        scale = np.divide(1.0, degrees_of_freedom(x.shape, axis, correction))
        per_std = Where.call(np.zeros((), x.dtype), grad / (out + is_zero), condition=is_zero)
        return (per_std * scale) * (x - Mean.call(x, axis=axis, keepdims=True))


def sum_of_squares_about_mean(x: np.ndarray, axis: tuple, keepdims: bool):
    """Σ (x - x̄)² over the axes in float64, as torch's var accumulates (a float32 sum of 100
    squares along a strided axis was 10× torch's error); the caller rounds it to x's dtype."""
    with quiet():  # the mean of nothing, 0 / 0 (np.mean would warn)
        mean = x.sum(axis=axis, keepdims=True, dtype=np.float64) / math.prod(x.shape[a]
                                                                            for a in axis)
    centered = x - mean
    return (centered * centered).sum(axis=axis, keepdims=keepdims)


def degrees_of_freedom(shape: tuple, axis: tuple, correction) -> float:
    """N - correction, at least 0; and 0 where N = 0, whatever the correction: the variance of
    nothing is nan (0 / 0), as torch's."""
    count = math.prod(shape[a] for a in axis)
    return builtins.max(0, count - correction) if count else 0


def warn_without_degrees_of_freedom(op: str, shape: tuple, axis: tuple, correction) -> None:
    """torch's warning where N - correction ≤ 0, N counted its way: the input's elements per
    output element, 0 when the output is empty. (The result there is inf or nan.)"""
    outputs = math.prod(n for a, n in enumerate(shape) if a not in axis)
    count = math.prod(shape) // outputs if outputs else 0
    if count - correction <= 0:
        warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
             f"reduction factor (input numel divided by output numel). (correction={correction}, "
             f"reduction factor {count}, input shape {shape})")


class VectorNorm(Node):
    """‖x‖ₚ = (Σ |xᵢ|ᵖ)^(1/p);  d‖x‖ₚ / dxⱼ = sign(xⱼ) |xⱼ|ᵖ⁻¹ / ‖x‖ₚᵖ⁻¹ — and torch's special
    cases: p = 2 gives x / ‖x‖ (0 where ‖x‖ = 0), p = 1 sign(x), p = ±inf splits among the
    elements of largest (smallest) |x|, p = 0 (a count) has gradient 0. Saves x and the output.

    The backward is torch's formula term for term, masks included: a masked term still passes
    its zero gradient back through the division (or power) under the mask, 0 · inf = nan, so
    the second derivative is nan where ‖x‖ = 0 (and, for p < 1, where an xᵢ = 0), as torch's.
    """

    def forward(ctx, x, ord, axis, keepdims):
        magnitude = np.abs(x)
        if ord == np.inf or ord == -np.inf:
            out = (np.max if ord > 0 else np.min)(magnitude, axis=axis, keepdims=keepdims)
        elif ord == 0:
            out = (x != 0).sum(axis=axis, keepdims=keepdims, dtype=x.dtype)
        elif ord == 1:
            out = magnitude.sum(axis=axis, keepdims=keepdims)
        elif ord == 2:
            out = np.sqrt((x * x).sum(axis=axis, keepdims=keepdims))
        else:
            with quiet():
                out = (magnitude ** x.dtype.type(ord)).sum(axis=axis, keepdims=keepdims) \
                    ** x.dtype.type(1 / ord)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        p, axis, keepdims = (ctx.attrs[k] for k in ("ord", "axis", "keepdims"))
        x, out = ctx.saved_tensors
        grad = expand_reduced(grad, x.shape, axis, keepdims)
        norm = expand_reduced(out, x.shape, axis, keepdims)
        zero = np.zeros((), x.dtype)
        if p == 0:
            return Fill.call(x, value=0) * grad
        if p == 1:
            return Sign.call(x) * grad
        norm_is_zero = np.asarray(norm) == 0  # constants, as torch's masked_fill
        if p == 2:
            return grad * Where.call(zero, x / norm, condition=norm_is_zero)
        if p == np.inf or p == -np.inf:
            magnitude = np.abs(np.asarray(x))
            chosen = (magnitude == np.asarray(norm)) | np.isnan(magnitude)
            share = chosen / chosen.sum(axis=axis, keepdims=True, dtype=x.dtype)
            return Sign.call(x) * (grad * share)
        if p < 1:  # |x|ᵖ⁻¹ is infinite at 0, where torch defines the gradient as 0
            scaled = Sign.call(x) * Where.call(zero, Pow.call(Abs.call(x), exponent=p - 1),
                                               condition=np.asarray(x) == 0)
            return scaled * grad * Pow.call(norm, exponent=1 - p)
        if p < 2:
            scaled = Sign.call(x) * Pow.call(Abs.call(x), exponent=p - 1)
        else:
            scaled = x * Pow.call(Abs.call(x), exponent=p - 2)
        return scaled * Where.call(zero, grad / Pow.call(norm, exponent=p - 1),
                                   condition=norm_is_zero)


class LogSumExp(Node):
    """y = log Σ eˣ;  dy/dxⱼ = e^(xⱼ - y) (the softmax). The max is subtracted before exp, so no
    exponent is positive; an infinite max is not (inf - inf would be nan), as torch."""

    def forward(ctx, x, axis, keepdims):
        shift = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        shift = np.where(np.isinf(shift), 0, shift)
        # log 0 = -inf: an empty or all -inf slice; inf - inf = nan: an inf in x, as torch
        with quiet():
            out = np.log(sum_accurately(np.exp(x - shift), axis, keepdims=True)) + shift
        if not keepdims:
            out = out.squeeze(axis)
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
        x, out = ctx.saved_tensors
        out = expand_reduced(out, x.shape, axis, keepdims)
        # x - out at x = out = ±inf: nan, as torch
        return expand_reduced(grad, x.shape, axis, keepdims) * Exp.call(x - out)


class Cumsum(Node):
    """yᵢ = Σⱼ≤ᵢ xⱼ;  ∂L/∂xⱼ = Σᵢ≥ⱼ gᵢ: the gradient summed from the end (flip, cumsum, flip)"""

    def forward(ctx, x, axis):
        if x.ndim == 0:
            return x.astype(np.int64) if x.dtype.kind in "biu" else x.copy()
        if x.dtype.kind in "biu":
            return np.cumsum(x, axis=axis, dtype=np.int64)
        if x.dtype.itemsize < 8:  # a running sum's error grows with its length: float64, as torch
            return np.cumsum(x, axis=axis, dtype=np.float64).astype(x.dtype)
        return np.cumsum(x, axis=axis)

    def backward(ctx, grad):
        axis = ctx.attrs["axis"]
        if grad.ndim == 0:
            return grad
        return Flip.call(Cumsum.call(Flip.call(grad, dims=(axis,)), axis=axis), dims=(axis,))


# ---- torch's entry points -------------------------------------------------------------------
def _dims(op: str, x: Tensor, dim, empty_means_all: bool = True) -> tuple:
    """dim as torch takes it (None, an int, or a sequence of ints) → sorted axes."""
    if dim is None or (empty_means_all and isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(x.ndim))
    return reduce_args(op, x.shape, dim, False, None, OMITTED)["axis"]


def _single_dim(op: str, x: Tensor, dim) -> int:
    return normalize_axis(op, x.ndim, dim)


def _named_dims(dim):
    """The dims a caller named, as given (the error messages show them so), or None for all."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """The maximum over ``dim`` (all dims for ``()``); the gradient is split among ties."""
    input = check_tensor("amax", "input", input)
    axis = _dims("amax", input, dim)
    check_nonempty("amax", input.shape, _named_dims(dim))
    return Max.apply(input, axis=axis, keepdims=check_flag("amax", "keepdim", keepdim))


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """The minimum over ``dim`` (all dims for ``()``); the gradient is split among ties."""
    input = check_tensor("amin", "input", input)
    axis = _dims("amin", input, dim)
    check_nonempty("amin", input.shape, _named_dims(dim))
    return Min.apply(input, axis=axis, keepdims=check_flag("amin", "keepdim", keepdim))


def _extreme(op: str, input, dim, keepdim, full: type, along: type, result: type, other_op):
    if isinstance(dim, Tensor):  # torch.max(a, b): the elementwise maximum
        return other_op(input, dim)
    input = check_tensor(op, "input", input)
    keepdim = check_flag(op, "keepdim", keepdim)
    if dim is OMITTED:
        if keepdim:
            raise TypeError(f"{op}(): keepdim=True needs a dim (torch.{op}(input) takes no "
                            f"keepdim)")
        return full.apply(input, axis=tuple(range(input.ndim)), keepdims=False)
    dim = _single_dim(op, input, dim)
    check_nonempty(op, input.shape, (dim,) if input.ndim else ())  # (torch shows it wrapped)
    values, ctx = along.apply(input, dim=dim, keepdim=keepdim, return_ctx=True)
    (indices,) = ctx.saved_tensors
    # The indices are the caller's to keep (a copy: backward reads the saved ones)
    return result(values, Tensor._make(np.array(indices, dtype=np.int64), None))


def max(input, dim=OMITTED, keepdim: bool = False):
    """torch.max: ``max(x)`` a 0-d tensor (gradient split among ties); ``max(x, dim)`` a
    ``MaxResult(values, indices)`` (gradient to the selected index); ``max(x, other)`` the
    elementwise maximum."""
    from .elementwise import maximum
    return _extreme("max", input, dim, keepdim, MaxAll, MaxAlongDim, MaxResult, maximum)


def min(input, dim=OMITTED, keepdim: bool = False):
    """torch.min: as ``max``, for the minimum (``MinResult``)."""
    from .elementwise import minimum
    return _extreme("min", input, dim, keepdim, MinAll, MinAlongDim, MinResult, minimum)


def _arg_extreme(op: str, pick, input, dim, keepdim) -> Tensor:
    input = check_tensor(op, "input", input)
    if input._data.dtype == np.bool_:
        raise RuntimeError(f"{op}(): input is a bool tensor: {op} does not support bool input")
    keepdim = check_flag(op, "keepdim", keepdim)
    if dim is None:
        if input._data.size == 0:
            raise DimensionError(f"{op}(): Expected reduction dim to be specified for "
                                 f"input.numel() == 0 (shape {input.shape}).")
        index = np.asarray(pick(input._data), dtype=np.int64)  # into the flattened tensor
        return Tensor._make(index.reshape((1,) * input.ndim) if keepdim else index, None)
    dim = _single_dim(op, input, dim)
    if input.ndim == 0:
        return Tensor._make(np.zeros((), np.int64), None)
    check_nonempty(op, input.shape, (dim,))
    return Tensor._make(pick(input._data, axis=dim, keepdims=keepdim).astype(np.int64), None)


def argmax(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the maximum (the first one at ties; the flattened index when dim is None)."""
    return _arg_extreme("argmax", np.argmax, input, dim, keepdim)


def argmin(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the minimum (the first one at ties; the flattened index when dim is None)."""
    return _arg_extreme("argmin", np.argmin, input, dim, keepdim)


def prod(input, dim=OMITTED, keepdim: bool = False) -> Tensor:
    """The product of all elements, or along one dim (torch takes a single int)."""
    input = check_tensor("prod", "input", input)
    keepdim = check_flag("prod", "keepdim", keepdim)
    if dim is OMITTED:
        if keepdim:
            raise TypeError("prod(): keepdim=True needs a dim (torch.prod(input) takes no "
                            "keepdim)")
        axis = tuple(range(input.ndim))
    else:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
        axis = (_single_dim("prod", input, dim),) if input.ndim else _dims("prod", input, dim)
    if input.dtype.kind in "biu":  # torch: integer and bool products are int64
        input = Tensor._make(input._data.astype(np.int64), None)
    return Prod.apply(input, axis=axis, keepdims=keepdim)


def _variance_args(op: str, input, dim, unbiased, keepdim, correction):
    """torch's three spellings: (dim=None, *, correction=1, keepdim=False), the legacy
    (dim, unbiased, keepdim) and (unbiased) — ``var(x, True)`` passes a bool as dim."""
    input = check_tensor(op, "input", input)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}(): give either unbiased= (legacy; a bool passed as dim is read "
                        f"as unbiased) or correction=, not both")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    elif correction is None:
        correction = 1
    elif type(correction) is not int:
        correction = float(check_scalar(op, "correction", correction))
    if input.dtype.kind != "f":
        raise RuntimeError(f"{op}(): std and var only support floating point dtypes, got an "
                           f"input of dtype {input.dtype} (use input.float().{op}())")
    args = dict(axis=_dims(op, input, dim), correction=correction,
                keepdims=check_flag(op, "keepdim", keepdim))
    warn_without_degrees_of_freedom(op, input.shape, args["axis"], correction)
    return input, args


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The variance Σ (x - x̄)² / (N - correction) over ``dim`` (all dims for None)."""
    input, args = _variance_args("var", input, dim, unbiased, keepdim, correction)
    return Var.apply(input, **args)


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The standard deviation √var over ``dim`` (all dims for None)."""
    input, args = _variance_args("std", input, dim, unbiased, keepdim, correction)
    return Std.apply(input, **args)


def norm(input, p="fro", dim=None, keepdim: bool = False) -> Tensor:
    """torch.Tensor.norm: the vector p-norm over ``dim`` (all elements for None); ``'fro'``
    is the 2-norm (over at most two dims); ``inf``/``-inf`` the largest/smallest |x|."""
    input = check_tensor("norm", "input", input)
    if p is None:  # torch's default order: 2
        p = 2
    if isinstance(p, (bool, np.bool_)):
        p = int(p)
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"norm: p={p!r} is not supported: the order of a norm is a number, "
                               f"'fro' or 'nuc'")
        if p != "fro":
            raise ValueError(f"norm: p={p!r} is not supported (only 'fro' and numbers: the "
                             f"nuclear norm needs an SVD)")
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise RuntimeError(f"norm: the Frobenius norm is over at most 2 dims, got dim={dim}")
        p = 2
    if isinstance(p, complex):
        raise RuntimeError(f"norm: p={p!r}: expected a non-complex scalar as the order of norm")
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', got "
                        f"{type(p).__name__}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"norm: expected a floating point tensor as input, got "
                           f"{input.dtype} (use input.float().norm())")
    axis = _dims("norm", input, dim)
    if p < 0 or p == math.inf:
        _check_norm_has_identity(p, input.shape, _named_dims(dim))
    return VectorNorm.apply(input, ord=float(p), axis=axis,
                            keepdims=check_flag("norm", "keepdim", keepdim))


def _check_norm_has_identity(p, shape: tuple, dims) -> None:
    """A p-norm with p < 0 or p = inf is a min or a max: over nothing it has no value (torch's
    errors; p ≥ 0 sums, and a sum over nothing is 0). ``dims`` as ``check_nonempty``'s."""
    _refuse_empty(shape, dims, lambda: RuntimeError(
        f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because the "
        f"operation does not have an identity (shape {shape}; name the dims to reduce)"),
        lambda d: RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the "
                               f"dimension {d} because this dimension is empty and the "
                               f"operation does not have an identity (shape {shape})"))


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """log Σ exp(x) over ``dim`` (an int or a tuple), computed without overflow."""
    input = floating(check_tensor("logsumexp", "input", input))
    if dim is None:  # (torch requires the dims: sum(), mean() take None for all of them)
        raise TypeError("logsumexp(): dim must be an int or a tuple of ints, got None")
    return LogSumExp.apply(input, axis=_dims("logsumexp", input, dim),
                           keepdims=check_flag("logsumexp", "keepdim", keepdim))


def cumsum(input, dim) -> Tensor:
    """Running sums along ``dim`` (integers and bools sum as int64, as torch)."""
    input = check_tensor("cumsum", "input", input)
    return Cumsum.apply(input, axis=_single_dim("cumsum", input, dim))


# ---- nansum, nanmean, trace, aminmax --------------------------------------------------------
class NanSum(Node):
    """d Σ_{xᵢ not nan} xᵢ / d xⱼ = [xⱼ is not nan]: a NaN counts as 0 and gets no gradient
    (torch's grad · ~isnan(x), multiplied: an inf arriving at a NaN still makes nan there)"""

    def forward(ctx, x, axis, keepdims):
        ctx.save_for_backward(x=x)
        return sum_accurately(np.where(np.isnan(x), x.dtype.type(0), x), axis, keepdims)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        grad = expand_reduced(grad, x.shape, **ctx.attrs)
        counted = ~np.isnan(np.asarray(x))  # a constant, as torch's mask
        return Expand.call(grad, shape=x.shape) * counted.astype(grad.dtype)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum over ``dim`` (all dims for None or ()), NaNs counted as 0 (integers and bools
    sum as int64, as ``sum``)."""
    input = check_tensor("nansum", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    args = dict(axis=_dims("nansum", input, dim), keepdims=check_flag("nansum", "keepdim", keepdim))
    if input.dtype.kind != "f":  # no NaN to skip: sum's integer rule
        return Sum.apply(as_int64(input), **args)
    return NanSum.apply(input, **args)


def as_int64(input: Tensor) -> Tensor:
    """An integer or bool tensor as int64, the dtype of torch's integer sums (a constant)."""
    return input if input.dtype == np.int64 else Tensor._make(input._data.astype(np.int64), None)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the values that are not NaN over ``dim``: nansum / their count (torch's
    composition, so a NaN gets gradient 0, and a slice of NaNs gives 0/0 = nan)."""
    input = check_tensor("nanmean", "input", input)
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {np.dtype(dtype)}")
    if dtype is None and input.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype} (use input.float())")
    total = nansum(input, dim, keepdim, dtype=dtype)
    axis = _dims("nanmean", input, dim)
    count = (~np.isnan(input._data)).sum(axis=axis, keepdims=bool(keepdim))
    with quiet():  # 0 / 0 where a slice is all NaN
        return total / Tensor._make(np.asarray(count, dtype=total.dtype), None)


def trace(input) -> Tensor:
    """The sum of a matrix's main diagonal (integers and bools as int64, as torch)."""
    from .movement import diagonal
    input = check_tensor("trace", "input", input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype == np.bool_:
        raise NotImplementedError("trace: input is a bool tensor: \"trace\" not implemented for "
                                  "'Bool'")
    if input.dtype.kind != "f":
        input = as_int64(input)
    return Sum.apply(diagonal(input), axis=(0,), keepdims=False)


def _aminmax_repr(self) -> str:
    return f"torch.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"


class AminmaxResult(NamedTuple):
    """What ``aminmax`` returns: a named tuple, as ``torch.return_types.aminmax``."""
    min: Tensor
    max: Tensor
    __repr__ = _aminmax_repr


def aminmax(input, *, dim=None, keepdim: bool = False) -> AminmaxResult:
    """(amin, amax) over ``dim`` (all dims for None), as torch.aminmax: each gradient split
    among ties, as amin's and amax's."""
    input = check_tensor("aminmax", "input", input)
    keepdim = check_flag("aminmax", "keepdim", keepdim)
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError(f"aminmax(): cannot compute aminmax over an empty dimension as "
                               f"the operation has no identity (shape {input.shape}).")
        axis = tuple(range(input.ndim))
    else:
        dim = _single_dim("aminmax", input, dim)
        axis = (dim,) if input.ndim else ()
        if input.ndim and input.shape[dim] == 0:
            raise DimensionError(f"aminmax: Expected reduction dim {dim} to have non-zero size "
                                 f"(shape {input.shape}).")
    return AminmaxResult(Min.apply(input, axis=axis, keepdims=keepdim),
                         Max.apply(input, axis=axis, keepdims=keepdim))


# ---- mode and quantile ----------------------------------------------------------------------
class Mode(Node):
    """The most frequent value along dim (the smallest of those equally frequent, at its last
    occurrence, as torch's CPU kernel): a picked element, so dx = grad scattered back to the
    element picked, zeros elsewhere"""

    def forward(ctx, x, dim, keepdim):
        if x.ndim == 0:
            ctx.save_for_backward(indices=np.zeros((), np.int64))
            return x.copy()
        rows = np.moveaxis(x, dim, -1)
        order = np.argsort(rows, axis=-1, kind="stable")  # equal values: in their order in x
        ordered = np.take_along_axis(rows, order, axis=-1)
        n = ordered.shape[-1]
        # the length of the run of equal values up to each position (a NaN is a run of one):
        # the first longest run's end is the smallest most frequent value's last occurrence
        starts = np.ones(ordered.shape, dtype=bool)
        starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
        positions = np.broadcast_to(np.arange(n), ordered.shape)
        run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
        best = np.argmax(positions - run_start, axis=-1)[..., None]
        indices = np.moveaxis(np.take_along_axis(order, best, axis=-1), -1, dim)
        ctx.save_for_backward(indices=indices.astype(np.int64))
        values = np.take_along_axis(x, indices, axis=dim)
        return values if keepdim else values.squeeze(dim)

    def backward(ctx, grad):
        dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
        shape = ctx.parents[0].shape
        if not shape:
            return grad
        (indices,) = ctx.saved_tensors
        where = list(np.indices(np.asarray(indices).shape, sparse=True))
        where[dim] = np.asarray(indices)
        grad = expand_reduced(grad, shape, (dim,), keepdim)
        return IndexScatter.call(grad, index=tuple(where), shape=shape)


def _mode_repr(self) -> str:
    return f"torch.return_types.mode(\nvalues={self.values!r},\nindices={self.indices!r})"


class ModeResult(NamedTuple):
    """What ``mode`` returns: a named tuple, as ``torch.return_types.mode``."""
    values: Tensor
    indices: Tensor
    __repr__ = _mode_repr


def mode(input, dim: int = -1, keepdim: bool = False) -> ModeResult:
    """The most frequent value along ``dim`` and its index (ties: the smallest value, at its
    last occurrence, as torch's CPU kernel; torch leaves the result with NaNs unspecified)."""
    input = check_tensor("mode", "input", input)
    dim = wrap_dim("mode", dim, input.ndim)
    keepdim = check_flag("mode", "keepdim", keepdim)
    if input.ndim and input.shape[dim] == 0:
        raise DimensionError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    if input.ndim and input._data.size == 0:  # other dims empty: empty results
        shape = list(input.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return ModeResult(Tensor._make(np.zeros(shape, input.dtype), None),
                          Tensor._make(np.zeros(shape, np.int64), None))
    values, ctx = Mode.apply(input, dim=dim, keepdim=keepdim, return_ctx=True)
    (indices,) = ctx.saved_tensors
    indices = np.array(indices, dtype=np.int64)
    if not keepdim and indices.ndim:
        indices = indices.squeeze(dim)
    return ModeResult(values, Tensor._make(indices, None))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, input, q, dim, keepdim, interpolation, ignore_nan: bool) -> Tensor:
    """torch's quantile as a composition: sort (NaNs last), read the two neighbours of each
    rank q·(n - 1) and interpolate between them, so the gradient goes to the (one or two)
    elements each quantile is read from, as torch's."""
    input = check_tensor(op, "input", input)
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got "
                           f"{input.dtype}")
    keepdim = check_flag(op, "keepdim", keepdim)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation!r}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape "
                               f"{tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor, got "
                               f"{q.dtype} and {input.dtype}")
        qs, q_dims = np.asarray(q._data, np.float64).reshape(-1), q.ndim
    else:
        check_scalar(op, "q", q)
        qs, q_dims = np.array([float(q)]), 0
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1], got {qs}")
    if input._data.size == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    # the values along one last dim, sorted (NaN sorts last)
    if dim is None:
        out_shape = [1] * input.ndim if keepdim else []
        rows = input.reshape(-1)
    else:
        dim = wrap_dim(op, dim, input.ndim)
        out_shape = list(input.shape)
        if out_shape:
            if keepdim:
                out_shape[dim] = 1
            else:
                del out_shape[dim]
        rows = input.movedim(dim, -1) if input.ndim else input.reshape(1)
    ordered = rows.sort(dim=-1).values
    n = ordered.shape[-1]
    lead = tuple(ordered.shape[:-1])
    if ignore_nan:
        count = (~np.isnan(ordered._data)).sum(axis=-1, keepdims=True)
    else:
        count = np.full(lead + (1,), n)
    ranks = qs * (np.maximum(count, 1) - 1)  # (…, len(q))
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as torch's round
    below = np.floor(ranks).astype(np.int64)
    above = np.ceil(ranks).astype(np.int64)
    weight = 0.5 * (above != below) if interpolation == "midpoint" else ranks - below
    low = ordered.gather(-1, Tensor._make(below, None))
    high = ordered.gather(-1, Tensor._make(above, None))
    result = low + (high - low) * Tensor._make(weight.astype(input.dtype), None)
    # a slice with a NaN (quantile) or only NaNs (nanquantile) gives NaN
    nan_rows = np.isnan(ordered._data[..., -1:]) if not ignore_nan else (count == 0)
    if nan_rows.any():
        result = result.masked_fill(Tensor._make(np.broadcast_to(nan_rows, result.shape), None),
                                    np.nan)
    result = result.movedim(-1, 0) if result.ndim > 1 else result  # q's dim first
    shape = ([len(qs)] if q_dims else []) + out_shape
    return result.reshape(tuple(shape))


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The q-th quantiles along ``dim`` (all elements for None): q a number or a 1-d tensor
    (its dim comes first in the result); NaN where a slice has a NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """As quantile, with NaNs left out (NaN only where a slice is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
