"""Losses, with PyTorch's signatures and semantics, and the log-softmax they rest on.

cross_entropy is log_softmax followed by the negative log-likelihood, as in PyTorch: two small
Functions whose derivatives are each one line. Label smoothing and class-probability targets are
written on top of them as PyTorch defines them, with Tensor operations (autograd is free).

Each Function saves with ``ctx.save_for_backward`` what PyTorch saves (the regression losses
their input and target; log_softmax its output, nothing of the logits; nll_loss its input and,
as 0-d array, the total weight), so the same in-place edits are refused.

Every loss is twice differentiable: a Function's backward is written with operations that also
run on Tensors (``Clamp.call``, ``Log.call``, operators), so ``create_graph=True`` records it.

A reduction of 'mean' over nothing is nan, as in PyTorch (0 / 0, computed without a warning).
"""
import math

import numpy as np

from ..fast.quiet import quiet
from ..grad_mode import is_grad_enabled
from ..engine import Node, Tensor, unbroadcast
from .activation import LogSigmoid
from ..args import (DimensionError, check_flag, check_floating, check_int, check_number,
                   check_reduction, cast_spelling, check_same_dtype, tensor_arg, warn)
from .elementwise import Clamp, Exp, Log, Where, minimum
from .math_functions import xlogy
from .normalization import pairwise_distance
from .reduce import normalize_axis

# binary_cross_entropy's backward divides by max(x (1 - x), EPSILON) (PyTorch's constant: a C
# float, so 1e-12 rounded to float32), and its logs are clamped at LOG_FLOOR, so a prediction of
# exactly 0 or 1 costs 100, not infinity.
EPSILON = float(np.float32(1e-12))
LOG_FLOOR = -100
LABEL_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))  # the class indices torch takes


# ---- the Functions ----------------------------------------------------------------------------
class SumOfSquares(Node):
    """L = Σ xᵢ²;  ∂L/∂x = 2x — the seed article's cost (with its ½ folded into the caller)"""

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return np.vdot(x, x) if x.dtype.kind == "f" else (x * x).sum()

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (2 * grad) * x


def _reduced(losses: np.ndarray, reduction: str):
    """The per-element losses of a Function's forward, reduced ('mean' of nothing: nan)."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    with quiet():
        return losses.sum() / losses.dtype.type(losses.size)


def _mean_scale(ctx) -> float:
    """1/n for a 'mean' (n: the number of elements averaged), else 1."""
    return 1 / max(ctx.count, 1) if ctx.attrs["reduction"] == "mean" else 1


class MSELoss(Node):
    """ℓ = (x - t)², averaged or summed;  ∂ℓ/∂x = 2 (x - t) = -∂ℓ/∂t  (saves both, as PyTorch)

    Input and target broadcast against each other (PyTorch warns, then broadcasts); each
    gradient is summed back to its own shape.
    """

    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input=input, target=target)
        squared = (input - target) ** 2
        ctx.count = squared.size
        return _reduced(squared, reduction)

    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        grad_diff = (input - target) * (grad * (2 * _mean_scale(ctx)))
        return (unbroadcast(grad_diff, input.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-grad_diff, target.shape) if ctx.needs_input_grad[1] else None)


class SmoothL1Loss(Node):
    """ℓ(d) = d²/2β where |d| < β, else |d| - β/2  (d = x - t, β > 0);
    ∂ℓ/∂x = d/β where |d| < β, else sign(d) (= -∂ℓ/∂t).
    ``huber``: β times that, ℓ(d) = d²/2 or β (|d| - β/2), ∂ℓ/∂x = d or β sign(d) — written
    out rather than multiplied by β, so that β = inf gives d²/2 (not inf · 0), as torch's.

    At |d| = β both branches give the slope ±1 (±β), but not the same curvature: torch's
    second derivative there is the linear branch's, 0. Hence a choice of branch, not a clamp
    (clamp's derivative at its bounds is 1, the quadratic branch's)."""

    def forward(ctx, input, target, beta, reduction, huber=False):
        ctx.save_for_backward(input=input, target=target)
        diff = input - target
        size = np.abs(diff)
        with quiet():  # (β = inf: the branch not taken is inf · -inf)
            losses = (np.where(size < beta, 0.5 * diff * diff, beta * (size - 0.5 * beta)) if huber
                      else np.where(size < beta, 0.5 * diff * diff / beta, size - 0.5 * beta))
        ctx.count = losses.size
        return _reduced(losses.astype(diff.dtype, copy=False), reduction)

    def backward(ctx, grad):
        beta, huber = ctx.attrs["beta"], ctx.attrs.get("huber")
        input, target = ctx.saved_tensors
        diff = input - target
        d = np.asarray(diff)
        inside = np.abs(d) < beta  # torch's mask: the only place with a second derivative
        # elsewhere a constant, torch's slope: ±1 (±β) from |d| = β on; NaN for a NaN d
        # (β = inf: sign(0) · inf, in a branch not taken)
        outside = np.where(np.abs(d) >= beta, np.sign(d) * (beta if huber else 1),
                           d if huber else d / beta)
        slope = Where.call(diff if huber else diff / beta, outside, condition=inside)
        grad_diff = slope * (grad * _mean_scale(ctx))
        return (unbroadcast(grad_diff, input.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-grad_diff, target.shape) if ctx.needs_input_grad[1] else None)


class BinaryCrossEntropy(Node):
    """ℓ = -w [t log x + (1 - t) log(1 - x)], each log clamped at -100 (PyTorch's);
    ∂ℓ/∂x = w (x - t) / max(x (1 - x), 1e-12),  ∂ℓ/∂t = -w logit(x)  (PyTorch's formulas)"""

    def forward(ctx, input, target, weight, reduction):
        ctx.save_for_backward(input=input, target=target, weight=weight)  # (weight: or None)
        with quiet():  # log 0 = -inf, clamped to -100 just below
            log_x = np.maximum(np.log(input), LOG_FLOOR)
            log_1m_x = np.maximum(np.log1p(-input), LOG_FLOOR)
        losses = (target - 1) * log_1m_x - target * log_x
        if weight is not None:
            losses = losses * weight
        ctx.count = losses.size
        return _reduced(losses, reduction)

    def backward(ctx, grad):
        x, t, weight = ctx.saved_tensors
        grad = grad * _mean_scale(ctx)
        if weight is not None:
            grad = grad * weight
        grad_x = grad_t = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * (x - t) / Clamp.call(x * (1 - x), low=EPSILON, high=None)
        if ctx.needs_input_grad[1]:
            # x = 0 or 1: an infinite slope, as PyTorch's
            grad_t = grad * (Log.call(1 - x) - Log.call(x))
        return grad_x, grad_t


class LogSoftmax(Node):
    """y = x - logΣexp(x);  ∂L/∂x = g - softmax(x) · Σg,  softmax(x) = exp(y)

    Subtracting the max before exp keeps every exponent ≤ 0, so nothing overflows.
    """

    def forward(ctx, x, dim):
        # (an empty x sums to 0: log 0 of nothing, unused; an inf in x gives inf - inf = nan,
        # as torch)
        with quiet():
            shifted = x - x.max(axis=dim, keepdims=True, initial=-np.inf)  # (initial: empty x)
            out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(out=out)
        return out

    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad - Exp.call(out) * grad.sum(axis=ctx.attrs["dim"], keepdims=True)


def _pick(log_probs, classes):
    """log_probs[n, classes[n, 0, ...], ...]: each position's entry of its class, (N, 1, ...).
    For (N, C), the common case, one fancy index: np.take_along_axis builds its index arrays
    in Python, which costs more than the pick itself on a small batch (see
    benchmarks/README.md)."""
    if log_probs.ndim == 2:
        return log_probs[np.arange(log_probs.shape[0])[:, None], classes]
    return np.take_along_axis(log_probs, classes, axis=1)


def _place(target, classes, values) -> None:
    """The inverse of ``_pick``: target[n, classes[n, 0, ...], ...] = values[n, 0, ...] (the
    same one fancy index for (N, C), for the same reason as ``_pick``)."""
    if target.ndim == 2:
        target[np.arange(target.shape[0])[:, None], classes] = values
    else:
        np.put_along_axis(target, classes, values, axis=1)


class NLLLoss(Node):
    """L = -Σₙ wₙ log_probs[n, tₙ] (÷ Σₙ wₙ for the mean), wₙ = weight[tₙ], 0 where ignored;
    ∂L/∂log_probs[n, c] = -wₙ [c = tₙ] (÷ Σₙ wₙ)

    log_probs is (N, C, d1, ...) and target (N, d1, ...): one class index per position. A
    target equal to ``ignore_index`` weighs 0 (and is never read as a class). Saved: log_probs
    (as torch: backward needs only its shape, but writing into it in place is refused); each
    position's class, whether it counts and its weight (torch's target and weight, in the form
    backward reads them); the total weight, a 0-d array as torch's.
    """

    def forward(ctx, log_probs, target, weight, ignore_index, reduction):
        kept = target != ignore_index
        if weight is None and kept.all():
            # The usual call: every target counts, with weight 1 — so no mask and no weights
            # (their passes are most of a small loss's work: measured, see
            # benchmarks/README.md); the same numbers as below.
            classes, kept, target_weights = target[:, None], None, None
            total_weight = np.array(target.size, log_probs.dtype)
            losses = -_pick(log_probs, classes)[:, 0]
        else:
            # Each target's class as an index along the class axis; an ignored one reads
            # class 0 (any valid class would do) and is left at 0, never multiplied by 0:
            # torch skips it, so a NaN or inf in its row or in its class's weight must not
            # come through.
            classes = np.where(kept, target, 0)
            weights = kept if weight is None else np.where(kept, weight[classes], 0)
            # (N, 1, d1, ...): the class axis put back, to pick and to broadcast along it
            classes, kept = classes[:, None], kept[:, None]
            target_weights = weights.astype(log_probs.dtype, copy=False)[:, None]
            total_weight = np.asarray(target_weights.sum())
            losses = np.zeros(target_weights.shape, log_probs.dtype)
            np.multiply(target_weights, _pick(log_probs, classes), out=losses, where=kept)
            losses = -losses[:, 0]
        # (kept and target_weights None: every target counts, with weight 1)
        ctx.save_for_backward(log_probs=log_probs, classes=classes, kept=kept,
                              target_weights=target_weights, total_weight=total_weight)
        if reduction == "none":
            return losses
        if reduction == "sum":
            return losses.sum()
        with quiet():  # all ignored: 0/0 = nan (PyTorch)
            return losses.sum() / total_weight

    def backward(ctx, grad):
        log_probs, classes, kept, target_weights, total_weight = ctx.saved_tensors
        reduction = ctx.attrs["reduction"]
        if reduction == "none":  # one gradient per position: put back the class axis
            grad = grad.reshape(grad.shape[:1] + (1,) + grad.shape[1:])
        elif reduction == "mean":
            grad = grad / total_weight
        # -wₙ gₙ at each target's class, and 0 at every other class and ignored target: put
        # there, not multiplied by 0, as torch (an inf or nan arriving gives 0 there)
        values = -grad if target_weights is None else -grad * target_weights
        if isinstance(grad, Tensor):  # recorded: a selection of grad, its double backward
            chosen = np.zeros(log_probs.shape, dtype=bool)
            _place(chosen, classes, True if kept is None else kept)
            return Where.call(values, np.zeros((), grad.dtype), condition=chosen)
        if kept is not None:  # ignored targets: exactly 0, even when the total is 0
            values = np.where(kept, values, 0)
        out = np.zeros(log_probs.shape, dtype=grad.dtype)
        _place(out, classes, values)
        return out


# ---- argument checks --------------------------------------------------------------------------
def _reduction(op: str, reduction, size_average=None, reduce=None) -> str:
    """PyTorch's ``reduction``, or what its deprecated ``size_average``/``reduce`` spell."""
    if size_average is not None or reduce is not None:
        if reduce is None or reduce:
            reduction = "mean" if size_average is None or size_average else "sum"
        else:
            reduction = "none"
        warn(f"{op}: size_average and reduce args will be deprecated, please use "
             f"reduction='{reduction}' instead.")
    check_reduction(op, reduction)
    return reduction


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    """Per-element losses (a Tensor) reduced ('mean' of nothing: nan, as in PyTorch)."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    if losses.numel() == 0:  # (NumPy's mean would warn)
        return losses.sum() * math.nan
    return losses.mean()


def _constant(op: str, name: str, value, dtype) -> np.ndarray:
    """A tensor argument the loss is not differentiable in (a weight): its array, in the input's
    dtype. Requiring grad is an error, as in PyTorch."""
    value = tensor_arg(op, name, value)
    if value.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{op}: the loss is not differentiable with respect to {name}; it "
                           f"cannot have requires_grad=True (pass {name}.detach())")
    return value._data.astype(dtype, copy=False)


def _broadcastable_to(op: str, name: str, array: np.ndarray, shape: tuple) -> np.ndarray:
    """``array`` checked to broadcast to ``shape`` (without growing it), as PyTorch's in-place
    multiplication by a weight requires."""
    try:
        fits = np.broadcast_shapes(array.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{op}: {name} has shape {array.shape}, which does not broadcast to "
                           f"the input's shape {shape}")
    return array


def _class_weights(op: str, weight, n_classes: int, dtype):
    """The optional per-class weight: a 1-D tensor of C entries (as an array), or None."""
    if weight is None:
        return None
    weight = _constant(op, "weight", weight, dtype)
    if weight.shape != (n_classes,):
        raise RuntimeError(f"{op}: weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    return weight


def _target_like(op: str, input: Tensor, target, integers_allowed: bool = True) -> Tensor:
    """A regression target, a Tensor as torch requires: a floating one keeps its dtype (mixed
    float dtypes promote, as in PyTorch); integers become a constant in the input's dtype."""
    target = tensor_arg(op, "target", target)
    if target.dtype.kind != "f":
        if not integers_allowed:
            cast = cast_spelling(input.dtype) if input.dtype.kind == "f" else ".float()"
            raise RuntimeError(f"{op}: target must be a floating point tensor (probabilities), "
                               f"got dtype {target.dtype} (convert it with target{cast})")
        return Tensor._make(target._data.astype(input.dtype), None)
    return target


def _regression_pair(op: str, input, target, bools_allowed: bool = True) -> tuple:
    """input and target of an elementwise loss. Different shapes broadcast, with PyTorch's
    warning (an (N, 1) prediction against an (N,) target is usually a bug). Bool tensors are
    refused where torch's loss subtracts them as they are (``bools_allowed=False``)."""
    input, target = tensor_arg(op, "input", input), tensor_arg(op, "target", target)
    if not bools_allowed:
        for name, tensor in (("input", input), ("target", target)):
            if tensor.dtype == np.bool_:
                raise RuntimeError(f"{op}: {name} must hold numbers, got a bool tensor (torch "
                                   f"subtracts it, and subtraction with a bool tensor is not "
                                   f"supported)")
    target = _target_like(op, input, target)
    if target.shape != input.shape:
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise RuntimeError(f"{op}: the size of input {input.shape} and the size of target "
                               f"{target.shape} do not broadcast (trailing dimensions must be "
                               f"equal or 1)") from None
        warn(f"{op}: Using a target size ({target.shape}) that is different to the input size "
             f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
             f"Please ensure they have the same size.")
    return input, target


def _class_input(op: str, input) -> Tensor:
    input = check_floating(op, "input", tensor_arg(op, "input", input))
    if input.ndim == 0:  # (torch: a ValueError from nll_loss, an IndexError from cross_entropy)
        raise DimensionError(f"{op}: Expected 1 or more dimensions (got 0): input must be (C,), "
                             f"(N, C) or (N, C, d1, ...)")
    return input


def _class_labels(op: str, input: Tensor, target, ignore_index: int) -> np.ndarray:
    """The class-index target of an (N, C, d1, ...) input (or (C,) input, 0-d target), checked in
    torch's order: of shape (N, d1, ...), int64 or uint8 (torch's Long or Byte), each in [0, C)
    unless it is ``ignore_index``."""
    labels = tensor_arg(op, "target", target)._data
    shape = input._data.shape  # (a tuple: Tensor.shape builds a Size at every read)
    n_classes = shape[0 if len(shape) == 1 else 1]
    if len(shape) == 1:  # unbatched: one target, 0-d (or of size 1, which PyTorch allows)
        if labels.ndim > 1:
            raise RuntimeError(f"{op}: 0D or 1D target tensor expected for a 1-D input, got "
                               f"target of shape {labels.shape}")
        if labels.ndim == 1 and labels.shape != (1,):
            raise ValueError(f"{op}: For 1D input, 1D target must have size 1, but got target "
                             f"size: {labels.shape[0]}")
    else:
        batch = labels.shape[0] if labels.ndim else 0
        if batch != shape[0]:
            raise ValueError(f"{op}: Expected input batch_size ({input.shape[0]}) to match "
                             f"target batch_size ({batch}) (input {input.shape}, target "
                             f"{labels.shape})")
        if len(shape) == 2 and labels.ndim > 1:
            raise RuntimeError(f"{op}: 0D or 1D target tensor expected, multi-target not "
                               f"supported (input {input.shape}, target {labels.shape})")
        expected = shape[:1] + shape[2:]
        if labels.shape != expected:
            raise RuntimeError(f"{op}: Expected target size {list(expected)}, got "
                               f"{list(labels.shape)} (input {input.shape})")
    if labels.dtype not in LABEL_DTYPES:
        raise RuntimeError(f"{op}: target must hold integer class indices of dtype int64 (or "
                           f"uint8), got dtype {labels.dtype} (class probabilities have the "
                           f"input's shape)")
    # Two passes find any label outside [0, C); only then the exact test, which lets
    # ignore_index through (five passes on every call otherwise).
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        out_of_range = (labels != ignore_index) & ((labels < 0) | (labels >= n_classes))
        if out_of_range.any():
            raise IndexError(f"{op}: Target {labels[out_of_range].flat[0]} is out of bounds: "
                             f"class indices must lie in [0, {n_classes}) or equal ignore_index "
                             f"({ignore_index})")
    return labels.reshape(1) if len(shape) == 1 else labels


# ---- the functional API (torch.nn.functional's signatures) -----------------------------------
def sum_of_squares(input) -> Tensor:
    """Σ x² over every element (the seed article's cost is ½ · sum_of_squares(output - target))."""
    return SumOfSquares.apply(tensor_arg("sum_of_squares", "input", input))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Mean (or sum) of (input - target)²; different shapes broadcast, with PyTorch's warning."""
    reduction = _reduction("mse_loss", reduction, size_average, reduce)
    input, target = _regression_pair("mse_loss", input, target)
    return MSELoss.apply(input, target, reduction=reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Mean (or sum) of |input - target|  (∂/∂input = sign(input - target), 0 where equal)."""
    reduction = _reduction("l1_loss", reduction, size_average, reduce)
    input, target = _regression_pair("l1_loss", input, target, bools_allowed=False)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0) -> Tensor:
    """Quadratic (d²/2β) where |d| = |input - target| < beta, linear (|d| - β/2) beyond;
    beta = 0 is l1_loss."""
    op = "smooth_l1_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    beta = check_number(op, "beta", beta)
    if not beta >= 0:  # (NaN too, as torch's check reads it)
        raise RuntimeError(f"{op}: beta must be non-negative, got {beta}")
    input, target = _regression_pair(op, input, target)
    if beta == 0:  # the quadratic part is gone (PyTorch switches to l1_loss too)
        return _reduce((input - target).abs(), reduction)
    return SmoothL1Loss.apply(input, target, beta=beta, reduction=reduction)


def huber_loss(input, target, reduction="mean", delta=1.0) -> Tensor:
    """d²/2 where |d| < delta, delta (|d| - delta/2) beyond: delta · smooth_l1_loss(beta=delta)."""
    op = "huber_loss"
    reduction = _reduction(op, reduction)
    delta = check_number(op, "delta", delta)
    if not delta > 0:  # (NaN too, as torch's check reads it)
        raise RuntimeError(f"{op}: delta must be positive, got {delta}")
    input, target = _regression_pair(op, input, target)
    if input.dtype.kind != "f":  # (torch's kernel writes the loss in the input's dtype)
        raise RuntimeError(f"{op}: input must be a floating-point tensor, got dtype "
                           f"{input.dtype} (the loss cannot be stored in it); convert it with "
                           f"input.float()")
    return SmoothL1Loss.apply(input, target, beta=delta, reduction=reduction, huber=True)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean") -> Tensor:
    """-weight · [t log p + (1 - t) log(1 - p)] for probabilities p = input in [0, 1]; each
    log is clamped at -100, so p = 0 or 1 gives a finite loss."""
    op = "binary_cross_entropy"
    reduction = _reduction(op, reduction, size_average, reduce)
    input = tensor_arg(op, "input", input)
    target = _target_like(op, input, target, integers_allowed=False)
    if target.dtype != input.dtype:  # (torch's kernel takes one dtype: no promotion)
        fix = (f"the target with target{cast_spelling(input.dtype)}" if input.dtype.kind == "f"
               else f"the input with input{cast_spelling(target.dtype)}")
        raise RuntimeError(f"{op}: target has dtype {target.dtype} but input has dtype "
                           f"{input.dtype}; they must be the same: convert {fix}")
    check_floating(op, "input", input)
    if target.shape != input.shape:
        raise ValueError(f"{op}: target has shape {target.shape} but input has shape "
                         f"{input.shape}; they must be the same")
    if weight is not None:
        weight = _broadcastable_to(op, "weight", _constant(op, "weight", weight, input.dtype),
                                   input.shape)
    # (not (0 <= x <= 1) catches nan too)
    if not ((input._data >= 0) & (input._data <= 1)).all():
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1 (they are "
                           f"probabilities; for logits use binary_cross_entropy_with_logits)")
    if not ((target._data >= 0) & (target._data <= 1)).all():
        raise RuntimeError(f"{op}: all elements of target should be between 0 and 1")
    return BinaryCrossEntropy.apply(input, target, weight=weight, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed from the logits:
    ℓ = -pos_weight · t log σ(x) - (1 - t) log σ(-x), times weight — stable for any |x|."""
    op = "binary_cross_entropy_with_logits"
    reduction = _reduction(op, reduction, size_average, reduce)
    input = check_floating(op, "input", tensor_arg(op, "input", input))
    target = _target_like(op, input, target, integers_allowed=False)
    if target.shape != input.shape:
        raise ValueError(f"{op}: Target size {target.shape} must be the same as input size "
                         f"{input.shape} (target and input must have one shape)")
    if weight is not None:
        weight = _broadcastable_to(op, "weight", _constant(op, "weight", weight, input.dtype),
                                   input.shape)
    if pos_weight is not None:
        if tensor_arg(op, "pos_weight", pos_weight).dtype == np.bool_:
            raise RuntimeError(f"{op}: pos_weight must hold numbers, got a bool tensor (torch "
                               f"computes pos_weight - 1, and does not subtract bools)")
        pos_weight = _broadcastable_to(
            op, "pos_weight", _constant(op, "pos_weight", pos_weight, input.dtype), input.shape)
    # -t log σ(x) - (1 - t) log σ(-x): torch's (1 - t) x - log σ(x) rearranged so that both
    # slopes, -σ(-x) and σ(x), are computed as such (LogSigmoid's backward), never as 1 - σ(-x)
    # — which is 0 in float32 at x = -30, where the slope is 9.4e-14.
    positive, negative = -LogSigmoid.apply(input), -LogSigmoid.apply(-input)
    if pos_weight is not None:  # positives weigh pos_weight, negatives 1
        positive = positive * pos_weight
    losses = target * positive + (1 - target) * negative
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def implicit_softmax_dim(op: str, ndim: int) -> int:
    """The dim torch's softmax picks when called with ``dim=None`` (a legacy rule it warns about):
    0 for 0-, 1- and 3-dimensional input, else 1."""
    warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include "
         f"dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def log_softmax(input, dim=None) -> Tensor:
    input = check_floating("log_softmax", "input", tensor_arg("log_softmax", "input", input))
    if dim is None:
        dim = implicit_softmax_dim("log_softmax", input.ndim)
    return LogSoftmax.apply(input, dim=normalize_axis("log_softmax", input.ndim, dim))


def softmax(input, dim=None) -> Tensor:
    input = check_floating("softmax", "input", tensor_arg("softmax", "input", input))
    if dim is None:
        dim = implicit_softmax_dim("softmax", input.ndim)
    return LogSoftmax.apply(input, dim=normalize_axis("softmax", input.ndim, dim)).exp()


def _nll(op: str, log_probs: Tensor, target, weight, ignore_index: int, reduction: str):
    """The negative log-likelihood of checked arguments; also returns the labels (batched) and
    the per-class weights, for cross_entropy's label smoothing."""
    labels = _class_labels(op, log_probs, target, ignore_index)
    unbatched = log_probs._data.ndim == 1
    weights = None
    if weight is not None:  # (no promotion: torch's kernel takes one dtype)
        check_same_dtype(op, input=log_probs, weight=tensor_arg(op, "weight", weight))
        weights = _class_weights(op, weight, log_probs._data.shape[0 if unbatched else 1],
                                 log_probs.dtype)
    if unbatched:  # one sample: a batch of one, and its loss alone (0-d) for 'none'
        log_probs = log_probs.reshape(1, -1)
    loss = NLLLoss.apply(log_probs, target=labels, weight=weights, ignore_index=ignore_index,
                         reduction=reduction)
    if unbatched and reduction == "none":
        loss = loss.reshape(())
    return loss, labels, weights


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean") -> Tensor:
    """-weight[t] · input[n, t] for log-probabilities input (N, C, d1, ...) and class indices
    target (N, d1, ...) (or (C,) and a 0-d target); 'mean' divides by the sum of the weights of
    the targets that are not ``ignore_index``."""
    reduction = _reduction("nll_loss", reduction, size_average, reduce)
    input = _class_input("nll_loss", input)
    ignore_index = check_int("nll_loss", "ignore_index", ignore_index)
    return _nll("nll_loss", input, target, weight, ignore_index, reduction)[0]


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target) for logits (N, C, d1, ...) or (C,).

    ``target`` holds class indices (N, d1, ...), or class probabilities of input's own shape.
    With ``label_smoothing`` ε the target is mixed with the uniform distribution: the loss is
    (1 - ε) · nll + ε/C · Σ_c -weight[c] log p_c (PyTorch's definition, weights and
    ignore_index included).
    """
    op = "cross_entropy"
    reduction = _reduction(op, reduction, size_average, reduce)
    input = _class_input(op, input)
    target = tensor_arg(op, "target", target)
    ignore_index = check_int(op, "ignore_index", ignore_index)
    label_smoothing = check_number(op, "label_smoothing", label_smoothing)
    if label_smoothing > 1.0:  # (a negative one, or NaN, means none, as PyTorch takes it)
        raise RuntimeError(f"{op}: label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if input._data.ndim == 1 else 1
    n_classes = input._data.shape[class_dim]
    log_probs = log_softmax(input, class_dim)
    if target._data.shape == input._data.shape:
        return _cross_entropy_soft(op, log_probs, target, weight, ignore_index, reduction,
                                   label_smoothing)
    loss, labels, weights = _nll(op, log_probs, target, weight, ignore_index, reduction)
    if not label_smoothing > 0:
        return loss
    # Σ_c -weight[c] log p_c at each position, 0 where the target is ignored
    if input.ndim == 1:
        log_probs = log_probs.reshape(1, -1)
    per_class = log_probs if weights is None else log_probs * _along_classes(weights, log_probs)
    smooth = -per_class.sum(dim=1)
    ignored = labels == ignore_index
    if ignored.any():
        smooth[ignored] = 0.0  # PyTorch's masked_fill_: no gradient reaches ignored positions
    if reduction == "none":
        smooth = smooth.reshape(()) if input.ndim == 1 else smooth
    elif reduction == "sum":
        smooth = smooth.sum()
    else:  # divided by the same total weight as the nll term
        kept = ~ignored
        total = kept.sum() if weights is None else weights[labels[kept]].sum()
        smooth = smooth.sum() / total if total != 0 else smooth.sum() * math.nan
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / n_classes)


def _along_classes(weights: np.ndarray, log_probs: Tensor) -> np.ndarray:
    """Per-class weights shaped (C, 1, ..., 1) to broadcast along axis 1 of (N, C, d1, ...)."""
    return weights.reshape((-1,) + (1,) * (log_probs.ndim - 2))


def _cross_entropy_soft(op, log_probs: Tensor, target: Tensor, weight, ignore_index: int,
                        reduction: str, label_smoothing: float) -> Tensor:
    """cross_entropy with class probabilities: -Σ_c weight[c] target_c log p_c per position;
    'mean' divides by the number of positions (N · d1 ...), whatever the weights."""
    if target.dtype.kind != "f":
        raise RuntimeError(f"{op}: Expected floating point type for target with class "
                           f"probabilities, got {target.dtype} (class indices have shape "
                           f"(N, d1, ...), without the class axis)")
    if ignore_index >= 0:
        raise RuntimeError(f"{op}: ignore_index is not supported for floating point target "
                           f"(got ignore_index={ignore_index})")
    unbatched = log_probs.ndim == 1
    if unbatched:
        log_probs, target = log_probs.reshape(1, -1), target.reshape(1, -1)
    n_classes = log_probs.shape[1]
    weights = _class_weights(op, weight, n_classes, log_probs.dtype)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    products = log_probs * target
    if weights is not None:
        products = products * _along_classes(weights, log_probs)
    if reduction == "none":
        losses = -products.sum(dim=1)
        return losses.reshape(()) if unbatched else losses
    if reduction == "sum":
        return -products.sum()
    positions = products.numel() // n_classes if n_classes else 0
    return -products.sum() / positions if positions else -products.sum() * math.nan


# ---- more of torch.nn.functional's losses: composed of differentiable ops ---------------------
# Each is written as PyTorch writes it (its Python or C++ composite), so values, gradients (torch's
# at the kinks: clamp's 1 at the bound where torch clamps, relu's 0 where torch's kernel counts
# only a positive margin) and second derivatives follow from the ops.
KL_DIV_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
COSINE_EPSILON = 1e-12  # torch's cosine_embedding_loss: added to each squared norm


class ClampedValue(Node):
    """y = max(x, low), ∂y/∂x = 1: torch's ``var.clamp_(min=eps)`` under no_grad on a clone
    (gaussian_nll_loss), whose gradient passes through the clamp unchanged."""

    elementwise = True

    def forward(ctx, x, low):
        return np.maximum(x, x.dtype.type(low))

    def backward(ctx, grad):
        return grad


def _floating_pair(op: str, input, target, integral_refused: bool = False) -> tuple:
    """input and target as Tensors; an integer one becomes a constant of the other's floating
    dtype (float32 if both are integers), as torch's promotion gives."""
    input, target = tensor_arg(op, "input", input), tensor_arg(op, "target", target)
    if integral_refused and (input.dtype.kind != "f" or target.dtype.kind != "f"):
        raise RuntimeError(f"{op}: Integral inputs not supported (input has dtype {input.dtype}, "
                           f"target {target.dtype}); convert them with .float()")
    floating = next((t.dtype for t in (input, target) if t.dtype.kind == "f"), np.dtype(np.float32))
    input, target = (t if t.dtype.kind == "f" else Tensor._make(t._data.astype(floating), None)
                     for t in (input, target))
    _check_broadcast(op, input, target)
    return input, target


def _check_broadcast(op: str, *tensors: Tensor) -> None:
    try:
        np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise RuntimeError(f"{op}: the sizes {' and '.join(str(tuple(t.shape)) for t in tensors)} "
                           f"do not broadcast (trailing dimensions must be equal or 1)") from None


def _mask(condition: np.ndarray, values: Tensor) -> Tensor:
    """values where the condition holds, else 0 (torch's where(c, v, zeros): an inf or nan left
    out is 0, not multiplied by 0)."""
    return Where.apply(values, Tensor._make(np.zeros((), values.dtype), None), condition=condition)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False) -> Tensor:
    """Σ target (log target - input) for log-probabilities input (target as probabilities, or as
    log-probabilities with ``log_target``); 0 where target is 0 (xlogy). 'batchmean' divides the
    sum by the batch size (input.shape[0]); 'mean' by the number of elements, with torch's
    warning."""
    op = "kl_div"
    if size_average is not None or reduce is not None:
        reduction = _reduction(op, reduction, size_average, reduce)
    elif reduction == "mean":
        warn(KL_DIV_MEAN_WARNING)
    if reduction != "batchmean":
        check_reduction(op, reduction)
    log_target = check_flag(op, "log_target", log_target)
    input, target = _floating_pair(op, input, target, integral_refused=True)
    if log_target:
        losses = target.exp() * (target - input)
    else:
        losses = xlogy(target, target) - target * input
    if reduction != "batchmean":
        return _reduce(losses, reduction)
    total = losses.sum()
    return total / input.shape[0] if input.ndim else total


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean") -> Tensor:
    """exp(input) - target · input (``log_input``: input is the log of the rate), else
    input - target · log(input + eps); ``full`` adds Stirling's term for log(target!) where
    target > 1."""
    op = "poisson_nll_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    log_input, full = check_flag(op, "log_input", log_input), check_flag(op, "full", full)
    eps = check_number(op, "eps", eps)
    if full and tensor_arg(op, "target", target).dtype == np.bool_:  # (torch subtracts it)
        raise RuntimeError(f"{op}: target must hold numbers with full=True, got a bool tensor "
                           f"(convert it with target.float())")
    input, target = _floating_pair(op, input, target)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:  # target log target - target + ½ log(2π target), 0 where target ≤ 1 (as torch)
        with quiet():  # (log 0 in the entries masked out)
            stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        losses = losses + _mask(~(target._data <= 1), stirling)
    return _reduce(losses, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor:
    """½ (log var + (input - target)² / var) (+ ½ log 2π with ``full``); var is clamped at eps
    for the value only (its gradient passes the clamp, as torch's). var may have input's shape,
    input's shape without the last dim, or one dim of size 1 where input's differs."""
    op = "gaussian_nll_loss"
    full = check_flag(op, "full", full)
    eps = check_number(op, "eps", eps)
    input, target = tensor_arg(op, "input", input), tensor_arg(op, "target", target)
    if isinstance(var, float):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries (var={var})")
        var = Tensor._make(np.full(input.shape, var, input._data.dtype if input.dtype.kind == "f"
                                   else np.float32), None)
    else:
        if not isinstance(var, Tensor):
            raise TypeError(f"{op}: var must be a Tensor or a float, got {type(var).__name__}")
        if (var._data < 0).any():
            raise ValueError(f"{op}: var has negative entry/entries")
        if var.dtype.kind != "f":  # (torch clamps it in place at a float eps: refused)
            raise RuntimeError(f"{op}: var must be a floating-point tensor, got dtype "
                               f"{var.dtype} (convert it with var.float())")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):  # heteroscedastic
            raise ValueError(f"{op}: var is of incorrect size: {tuple(var.shape)} for input "
                             f"{tuple(input.shape)} (expected input's shape, input's shape "
                             f"without its last dim, or one dim of size 1 where input's differs)")
    if type(reduction) is not str or reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid ({op}: reduction must be 'none', 'mean' or "
                         f"'sum')")
    var = ClampedValue.apply(var, low=eps)
    losses = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (both where it is
    neither, as torch's: where(target != 1, ...) + where(target != -1, ...))."""
    op = "hinge_embedding_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    margin = check_number(op, "margin", margin)
    input, target = tensor_arg(op, "input", input), tensor_arg(op, "target", target)
    if input.dtype.kind != "f":  # (torch: its mean has no integer result)
        raise RuntimeError(f"{op}: input must be a floating-point tensor, got dtype "
                           f"{input.dtype} (convert it with input.float())")
    _check_broadcast(op, input, target)
    labels = target._data
    losses = _mask(labels != 1, (margin - input).clamp(min=0)) + _mask(labels != -1, input)
    return _reduce(losses, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """log(1 + exp(-target · input)) (torch's formula: inf, and a nan slope, once exp overflows)."""
    op = "soft_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    input, target = tensor_arg(op, "input", input), tensor_arg(op, "target", target)
    if input.dtype.kind != "f":  # (torch's kernel writes the loss in the input's dtype)
        raise RuntimeError(f"{op}: input must be a floating-point tensor, got dtype "
                           f"{input.dtype} (convert it with input.float())")
    _check_broadcast(op, input, target)
    if target.dtype != input.dtype:  # (the kernel's: the target in the input's dtype)
        target = target.to(input.dtype)
    if target.requires_grad and is_grad_enabled():  # (torch's kernel has no target gradient)
        raise RuntimeError(f"{op}: the loss is not differentiable with respect to target; it "
                           f"cannot have requires_grad=True (pass target.detach())")
    with quiet():
        return _reduce((-target * input).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean") -> Tensor:
    """-[t log σ(x) + (1 - t) log σ(-x)] (times weight), averaged over the last (class) dim."""
    op = "multilabel_soft_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    input = check_floating(op, "input", tensor_arg(op, "input", input))
    if tensor_arg(op, "target", target).dtype == np.bool_:  # (torch computes 1 - target)
        raise RuntimeError(f"{op}: target must hold numbers, got a bool tensor (convert it "
                           f"with target.float())")
    input, target = _floating_pair(op, input, target)
    if input.ndim == 0:
        raise DimensionError(f"{op}: input must have a class dim (the last), got a 0-d tensor")
    losses = -(target * LogSigmoid.apply(input) + (1 - target) * LogSigmoid.apply(-input))
    if weight is not None:
        losses = losses * tensor_arg(op, "weight", weight)
    return _reduce(losses.sum(dim=-1) / input.shape[-1], reduction)


def _margin_input(op: str, input) -> Tensor:
    """The (C,) or (N, C) scores of a multi-class margin loss (0-d: one class)."""
    input = check_floating(op, "input", tensor_arg(op, "input", input))
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or (
            input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    return input


def _long_target(op: str, target) -> Tensor:
    target = tensor_arg(op, "target", target)
    if target.dtype != np.int64:
        raise RuntimeError(f"{op}: expected scalar type Long but found {target.dtype} (target "
                           f"holds class indices: convert it with target.long())")
    return target


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean") -> Tensor:
    """Σ_{i ≠ y} w_y max(0, margin - x_y + x_i)^p / C per sample (p = 1 or 2), for scores x
    (N, C) or (C,) and class indices y (N,) (or one)."""
    op = "multi_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError(f"{op}: only p == 1 and p == 2 supported, got p={p}")
    margin = check_number(op, "margin", margin)
    if weight is not None and tensor_arg(op, "weight", weight).ndim != 1:
        raise ValueError(f"{op}: weight must be one-dimensional, got shape "
                         f"{tuple(weight.shape)}")
    input, target = _margin_input(op, input), _long_target(op, target)
    scores = input.reshape(-1, input.shape[-1] if input.ndim else 1)
    n, n_classes = scores.shape
    if (input.ndim == 2 and target.shape != (n,)) or (input.ndim < 2 and target.numel() != 1):
        raise RuntimeError(f"{op}: target tensor should be 1-D with size equal to the number of "
                           f"input samples (batch size). Expected target size [{n}], but got "
                           f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    labels = target._data.reshape(n)
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise RuntimeError(f"{op}: target out of range: class indices must lie in "
                           f"[0, {n_classes})")
    if weight is not None:
        if weight.shape != (n_classes,):
            raise RuntimeError(f"{op}: inconsistent weight size, expected {n_classes} but got "
                               f"{list(weight.shape)}")
        check_same_dtype(op, input=input, weight=weight)
    rows = np.arange(n)[:, None]
    # the margin each other class leaves: relu, whose slope at 0 is 0 (torch counts only > 0)
    hinge = (margin - scores[rows, labels[:, None]] + scores).relu()
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * _constant(op, "weight", weight, input.dtype)[labels][:, None]
    others = np.arange(n_classes) != labels[:, None]
    losses = _mask(others, hinge).sum(dim=1) / n_classes
    return _reduce(losses.reshape(target.shape), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction="mean") -> Tensor:
    """Σ_j Σ_{i not a target} max(0, 1 - (x_{y_j} - x_i)) / C per sample, for scores x (N, C)
    or (C,) and target of the same shape holding the target classes y_j, ended by the first -1."""
    op = "multilabel_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    input, target = _margin_input(op, input), _long_target(op, target)
    if target.shape != input.shape:
        raise RuntimeError(f"{op}: inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    scores = input.reshape(-1, input.shape[-1] if input.ndim else 1)
    n, n_classes = scores.shape
    labels = target._data.reshape(n, n_classes)
    if labels.size and (labels.min() < -1 or labels.max() >= n_classes):
        raise RuntimeError(f"{op}: argument #2 'target' is out of range: entries must lie in "
                           f"[-1, {n_classes})")
    listed = np.cumprod(labels != -1, axis=1).astype(bool)  # the targets before the first -1
    classes = np.where(listed, labels, 0)
    is_target = np.zeros((n, n_classes), dtype=bool)
    is_target[np.nonzero(listed)[0], classes[listed]] = True
    rows = np.arange(n)[:, None]
    # (N, J, C): target j against class i; relu, whose slope at 0 is 0 (torch counts only > 0)
    hinge = (1 - (scores[rows, classes][:, :, None] - scores[:, None, :])).relu()
    counted = listed[:, :, None] & ~is_target[:, None, :]
    losses = _mask(counted, hinge).sum(dim=(1, 2)) / n_classes
    return _reduce(losses.reshape(input.shape[:1] if input.ndim == 2 else ()), reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    """max(0, -target · (input1 - input2) + margin): input1 should rank above input2 where
    target is 1, below where it is -1."""
    op = "margin_ranking_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    margin = check_number(op, "margin", margin)
    input1, input2 = tensor_arg(op, "input1", input1), tensor_arg(op, "input2", input2)
    target = tensor_arg(op, "target", target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"{op} : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: "
                           f"{target.shape}")
    _check_broadcast(op, input1, input2, target)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (0
    elsewhere); cos along the last dim, each squared norm + 1e-12 (torch's)."""
    op = "cosine_embedding_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    margin = check_number(op, "margin", margin)
    input1, input2 = tensor_arg(op, "input1", input1), tensor_arg(op, "input2", input2)
    target = tensor_arg(op, "target", target)
    if target.ndim > 1:
        raise RuntimeError(f"{op}: 0D or 1D target tensor expected, multi-target not supported "
                           f"(got target of shape {tuple(target.shape)})")
    if not input1.ndim == input2.ndim == target.ndim + 1:
        raise RuntimeError(f"{op}: {target.ndim}D target tensor expects {target.ndim + 1}D input "
                           f"tensors, but found inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    input1, input2 = (t if t.dtype.kind == "f" else Tensor._make(t._data.astype(np.float32), None)
                      for t in (input1, input2))
    _check_broadcast(op, input1, input2)
    dim = target.ndim
    products = (input1 * input2).sum(dim=dim)
    squares1 = (input1 * input1).sum(dim=dim) + COSINE_EPSILON
    squares2 = (input2 * input2).sum(dim=dim) + COSINE_EPSILON
    cos = products / (squares1 * squares2).sqrt()
    _check_broadcast(op, cos, target)
    losses = (_mask(target._data == 1, 1 - cos)
              + _mask(target._data == -1, (cos - margin).clamp(min=0)))
    return _reduce(losses, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance along
    the last dim (pairwise_distance); ``swap``: d(anchor, negative) is replaced by
    d(positive, negative) where that is smaller."""
    op = "triplet_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    margin = check_number(op, "margin", margin)
    if not margin > 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    p, eps = check_number(op, "p", p), check_number(op, "eps", eps)
    swap = check_flag(op, "swap", swap)
    anchor, positive, negative = (tensor_arg(op, name, t) for name, t in
                                  (("anchor", anchor), ("positive", positive),
                                   ("negative", negative)))
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"{op}: The anchor, positive, and negative tensors are expected to "
                           f"have the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    _check_broadcast(op, anchor, positive, negative)
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_negative = minimum(distance_negative, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + distance_positive - distance_negative).clamp(min=0), reduction)
