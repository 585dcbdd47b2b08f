"""Selection by order along a dim: sort, argsort, msort, topk, kthvalue, median, nanmedian.

Each one picks elements of x along ``dim`` by an index computed from their order: its values
are ``x.gather(dim, indices)``. So one Node, ``PickAlongDim``, is the op for all of them; they
differ only in which indices they choose (``choose``). Its derivative sends each output's
gradient back to the element it was picked from (a scatter into zeros), and that scatter's own
derivative reads the same places again (a gather): the pair are adjoints, so gradients of any
order come for free.

The order is NumPy's stable sort, in which NaN sorts as the largest value, as in torch; a
descending order is the ascending one of the reversed slice, reversed, so that it stays stable
(equal values keep their order) and puts NaN first, as torch's. Where torch leaves the index of
tied values unspecified (``stable=False``, topk, kthvalue, median), the one chosen here is the
stable order's: the values are torch's, and the gradient goes to the index returned.

The functions at the end are torch's entry points: they check the arguments, call the Node and
return torch's named tuples (``SortResult(values, indices)``, as ``torch.return_types.sort``).
"""
from typing import NamedTuple

import numpy as np

from ..engine import OMITTED, Node, Tensor
from ..args import check_flag, check_int
from .elementwise import check_tensor
from .movement import IndexScatter, wrap_dim
from .reduce import _return_type_repr, check_nonempty, evenly_distributed, expand_reduced
from .select import along_dim


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The indices that sort x along ``axis`` (int64), equal values keeping their order and NaN
    counted as the largest value (first when descending), as torch's ``stable=True``."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64, copy=False)
    # Reversed, sorted ascending, reversed again: the largest first, and equal values (NaNs
    # among them) in their original order, where argsort(-x) would put NaN last.
    n = x.shape[axis]
    reversed_order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (n - 1 - np.flip(reversed_order, axis)).astype(np.int64)


class PickAlongDim(Node):
    """values = x.gather(dim, indices), the indices chosen from x's order (``choose``);
    ∂values/∂x sends each value's gradient to the element it was picked from:
    dx = zeros.scatter(dim, indices, grad). Saves the indices, as torch.

    ``keepdim=False`` (a reduction: kthvalue, median) drops ``dim`` from the result."""

    def forward(ctx, x, dim, keepdim=True, **how):
        if x.ndim == 0:  # a 0-d tensor is a slice of one element: its own pick, at index 0
            ctx.save_for_backward(indices=np.zeros((), np.int64))
            return x.copy()
        indices = ctx.choose(x, dim, **how)
        ctx.save_for_backward(indices=indices)
        values = np.take_along_axis(x, indices, axis=dim)
        return values if keepdim else values.squeeze(dim)

    def backward(ctx, grad):
        dim, keepdim = ctx.attrs["dim"], ctx.attrs.get("keepdim", True)
        shape = ctx.parents[0].shape
        if not shape:
            return grad
        (indices,) = ctx.saved_tensors
        grad = expand_reduced(grad, shape, (dim,), keepdim)
        return IndexScatter.call(grad, index=along_dim(np.asarray(indices), dim), shape=shape)


class Sort(PickAlongDim):
    """sort: all of x's elements along dim, in order (``PickAlongDim``'s derivative)"""

    def choose(ctx, x, dim, descending):
        return stable_order(x, dim, descending)


class TopK(PickAlongDim):
    """topk: the first k of the descending (``largest``) or ascending order"""

    def choose(ctx, x, dim, k, largest):
        return np.take(stable_order(x, dim, largest), np.arange(k), axis=dim)


class KthValue(PickAlongDim):
    """kthvalue: the k-th smallest along dim (k from 1), NaN counted as the largest"""

    def choose(ctx, x, dim, k):
        return np.take(stable_order(x, dim, False), [k - 1], axis=dim)


class Median(PickAlongDim):
    """median along dim: the lower median, the ((n - 1) // 2)-th of the sorted slice; a slice
    with a NaN has median NaN, at its first NaN, as torch's"""

    def choose(ctx, x, dim):
        indices = np.take(stable_order(x, dim, False), [(x.shape[dim] - 1) // 2], axis=dim)
        if x.dtype.kind == "f":
            is_nan = np.isnan(x)
            has_nan = is_nan.any(axis=dim, keepdims=True)
            indices = np.where(has_nan, np.argmax(is_nan, axis=dim, keepdims=True), indices)
        return indices


class NanMedian(PickAlongDim):
    """nanmedian along dim: the lower median of the slice's numbers, NaNs left out (NaN, at
    the slice's first NaN, where there are only NaNs: torch's index there is unspecified)"""

    def choose(ctx, x, dim):
        order = stable_order(x, dim, False)  # the numbers first, the NaNs last
        if x.dtype.kind != "f":
            return np.take(order, [(x.shape[dim] - 1) // 2], axis=dim)
        numbers = x.shape[dim] - np.isnan(x).sum(axis=dim, keepdims=True)
        return np.take_along_axis(order, np.maximum((numbers - 1) // 2, 0), axis=dim)


class MedianOfAll(Node):
    """median() (and nanmedian()) of every element: the gradient is split equally among the
    elements equal to the median (or among the NaNs where it is NaN), the others get exactly 0,
    as torch's evenly_distribute_backward. Saves its input and output."""

    def forward(ctx, x, ignore_nan):
        flat = x.reshape(-1)
        numbers = flat[~np.isnan(flat)] if ignore_nan and x.dtype.kind == "f" else flat
        if numbers.size == 0:  # the median of nothing (or of NaNs only) is NaN, as torch's
            # (an integer tensor's NaN is torch's too: NaN cast, the most negative integer)
            out = np.array(np.nan if x.dtype.kind == "f" else np.iinfo(x.dtype).min, x.dtype)
        elif x.dtype.kind == "f" and not ignore_nan and np.isnan(flat).any():
            out = np.array(np.nan, dtype=x.dtype)
        else:
            out = np.asarray(np.sort(numbers)[(numbers.size - 1) // 2])
        ctx.save_for_backward(x=x, out=out)
        return out

    def backward(ctx, grad):
        return evenly_distributed(grad, *ctx.saved_tensors)


# ---- what torch returns -------------------------------------------------------------------
class SortResult(NamedTuple):
    """What ``sort`` returns: a named tuple, as ``torch.return_types.sort``."""
    values: Tensor
    indices: Tensor
    _op = "sort"
    __repr__ = _return_type_repr


class TopKResult(NamedTuple):
    """What ``topk`` returns: a named tuple, as ``torch.return_types.topk``."""
    values: Tensor
    indices: Tensor
    _op = "topk"
    __repr__ = _return_type_repr


class KthValueResult(NamedTuple):
    """What ``kthvalue`` returns: a named tuple, as ``torch.return_types.kthvalue``."""
    values: Tensor
    indices: Tensor
    _op = "kthvalue"
    __repr__ = _return_type_repr


class MedianResult(NamedTuple):
    """What ``median(dim)`` returns: a named tuple, as ``torch.return_types.median``."""
    values: Tensor
    indices: Tensor
    _op = "median"
    __repr__ = _return_type_repr


class NanMedianResult(NamedTuple):
    """What ``nanmedian(dim)`` returns: a named tuple, as ``torch.return_types.nanmedian``."""
    values: Tensor
    indices: Tensor
    _op = "nanmedian"
    __repr__ = _return_type_repr


# ---- torch's entry points -------------------------------------------------------------------
def _picked(node: type, result: type, input: Tensor, keepdim: bool = True, **attrs):
    """Run a PickAlongDim node; its values, and the indices it saved as the caller's own copy
    (backward reads the saved ones), squeezed where the dim was reduced."""
    values, ctx = node.apply(input, keepdim=keepdim, return_ctx=True, **attrs)
    (indices,) = ctx.saved_tensors
    indices = np.array(indices, dtype=np.int64)
    if not keepdim and indices.ndim:
        indices = indices.squeeze(attrs["dim"])
    return result(values, Tensor._make(indices, None))


def _flag_or_none(op: str, name: str, value) -> bool:
    """torch's ``bool? stable``: None means False."""
    return False if value is None else check_flag(op, name, value)


def sort(input, dim=-1, descending=False, *, stable=False) -> SortResult:
    """(values, indices) of input sorted along ``dim``; equal values keep their order (also for
    ``stable=False``, where torch's order of ties is unspecified); NaN sorts as the largest."""
    input = check_tensor("sort", "input", input)
    dim = wrap_dim("sort", dim, input.ndim)
    descending = check_flag("sort", "descending", descending)
    _flag_or_none("sort", "stable", stable)
    return _picked(Sort, SortResult, input, dim=dim, descending=descending)


def argsort(input, dim=-1, descending=False, *, stable=False) -> Tensor:
    """The indices that sort input along ``dim`` (``sort(...).indices``)."""
    input = check_tensor("argsort", "input", input)
    dim = wrap_dim("argsort", dim, input.ndim)
    descending = check_flag("argsort", "descending", descending)
    _flag_or_none("argsort", "stable", stable)
    if input.ndim == 0:
        return Tensor._make(np.zeros((), np.int64), None)
    return Tensor._make(stable_order(input._data, dim, descending), None)


def msort(input) -> Tensor:
    """input sorted along its first dim: ``sort(input, dim=0).values``."""
    return sort(check_tensor("msort", "input", input), 0).values


def topk(input, k, dim=-1, largest=True, sorted=True) -> TopKResult:
    """The k largest (``largest=False``: smallest) values along ``dim`` and their indices, in
    order (also for ``sorted=False``, where torch's order is unspecified)."""
    input = check_tensor("topk", "input", input)
    k = check_int("topk", "k", k)
    dim = wrap_dim("topk", dim, input.ndim)
    largest = check_flag("topk", "largest", largest)
    check_flag("topk", "sorted", sorted)
    if input.dtype == np.bool_:
        raise RuntimeError("topk: topk does not support bool dtypes on CPU (input is a bool "
                           "tensor; use input.long())")
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk: selected index k out of range (k={k}, but dim {dim} has size "
                           f"{size})")
    if input.ndim == 0:  # k = 0 or 1: the element itself, as torch's
        return _picked(TopK, TopKResult, input, dim=dim, k=1, largest=largest)
    return _picked(TopK, TopKResult, input, dim=dim, k=k, largest=largest)


def _reduced_dim(op: str, input, dim) -> tuple:
    """Check a selection that reduces ``dim`` (kthvalue, median): a number dtype (torch has no
    bool kernel) and a dim of at least one element."""
    input = check_tensor(op, "input", input)
    if input.dtype == np.bool_:
        raise NotImplementedError(f"{op}: input is a bool tensor: \"{op}_cpu\" not implemented "
                                  f"for 'Bool' (use input.long())")
    dim = wrap_dim(op, dim, input.ndim)
    if input.ndim:
        check_nonempty(op, input.shape, (dim,))
    return input, dim


def kthvalue(input, k, dim=-1, keepdim=False) -> KthValueResult:
    """The k-th smallest value along ``dim`` (k counts from 1; NaN is the largest) and its
    index."""
    k = check_int("kthvalue", "k", k)
    input, dim = _reduced_dim("kthvalue", input, dim)
    keepdim = check_flag("kthvalue", "keepdim", keepdim)
    size = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim} "
                           f"(k={k}, but the dim has size {size}; k counts from 1)")
    return _picked(KthValue, KthValueResult, input, keepdim, dim=dim, k=k)


def _median(op: str, node: type, result: type, ignore_nan: bool, input, dim, keepdim):
    if dim is OMITTED:
        input = check_tensor(op, "input", input)
        if check_flag(op, "keepdim", keepdim):
            raise TypeError(f"{op}(): keepdim=True needs a dim (torch.{op}(input) takes no "
                            f"keepdim)")
        if input.dtype == np.bool_:
            raise NotImplementedError(f"{op}: input is a bool tensor: \"median_cpu\" not "
                                      f"implemented for 'Bool' (use input.long())")
        return MedianOfAll.apply(input, ignore_nan=ignore_nan)
    input, dim = _reduced_dim(op, input, dim)
    return _picked(node, result, input, check_flag(op, "keepdim", keepdim), dim=dim)


def median(input, dim=OMITTED, keepdim=False):
    """``median(x)``: the lower median of all elements (a 0-d tensor; NaN if any is NaN);
    ``median(x, dim)``: ``MedianResult(values, indices)`` along ``dim``."""
    return _median("median", Median, MedianResult, False, input, dim, keepdim)


def nanmedian(input, dim=OMITTED, keepdim=False):
    """As ``median``, with NaNs left out (NaN only where all are NaN)."""
    return _median("nanmedian", NanMedian, NanMedianResult, True, input, dim, keepdim)
