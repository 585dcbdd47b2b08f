"""Reading and writing elements chosen by an index tensor: gather and scatter, index_select,
masked_fill (and take_along_dim, gather after broadcasting); scatter_reduce (sum, prod, mean,
amax, amin), masked_select, repeat_interleave (an index_select with repeated positions),
tril/triu (a fixed mask) and meshgrid (expanded views).

They are adjoints of one another: gather reads x at index along a dim, and its gradient is the
scatter-add of the output gradient at the same places (an element read twice gets the sum);
scatter_add's gradient for src reads the output gradient back with gather. So each backward
here is written with movement's Index (read at an index) and IndexScatter (add into zeros at
an index), whose own derivatives are each other: gradients of any order come for free.

The index tensor is an input of the op, not a constant: it is saved for backward as in torch,
so writing into it in place before backward is caught (its gradient is always None).
"""
import warnings

import numpy as np

from ..engine import Node, Tensor, unbroadcast
from ..fast.quiet import quiet
from ..args import DimensionError, check_flag, check_int, check_scalar, plural
from .movement import (Clone, Expand, Index, IndexPut, IndexScatter, Pad, Reshape,
                       expanded_shape, wrap_dim)
from .elementwise import Where, check_fits


def along_dim(index: np.ndarray, dim: int) -> tuple:
    """The NumPy index that reads x[i₀, …, index[i₀, …, iₙ], …, iₙ] at every position of
    ``index`` (``index`` standing at dim): open ranges over the other dims, ``index`` at dim."""
    where = list(np.indices(index.shape, sparse=True))
    where[dim] = index
    return tuple(where)


def _read_back(grad, index: np.ndarray, dim: int, src_shape: tuple):
    """grad.gather(dim, index), padded with zeros to src's shape: the gradient of the src
    elements a scatter used (only the first index.shape of src is read, as in torch)."""
    read = Index.call(grad, index=along_dim(index, dim))
    if tuple(index.shape) == tuple(src_shape):
        return read
    return Pad.call(read, widths=tuple((0, s - n) for s, n in zip(src_shape, index.shape)),
                    value=0)


class Gather(Node):
    """out[i][j] = x[index[i][j]][j] (dim 0): each element's gradient goes back where it was
    read from, summed over repeated reads — dx = zeros.scatter_add(dim, index, grad)"""

    def forward(ctx, x, index, dim):
        # x too, though backward reads only its shape: torch saves it, so writing into x in
        # place before backward is refused here as there
        ctx.save_for_backward(x=x, index=index)
        return x[along_dim(index, dim)]

    def backward(ctx, grad):
        x, index = ctx.saved_tensors
        where = along_dim(np.asarray(index), ctx.attrs["dim"])
        return IndexScatter.call(grad, index=where, shape=x.shape), None


class ScatterAdd(Node):
    """out = x, with src[i][j] added at [index[i][j]][j] (dim 0): dx = grad,
    dsrc = grad.gather(dim, index)"""

    def forward(ctx, x, src, index, dim):
        ctx.save_for_backward(index=index)
        ctx.src_shape = src.shape
        out = x.copy()
        # add.at, not +=: an index repeated adds every one of its src values
        np.add.at(out, along_dim(index, dim), src[tuple(slice(n) for n in index.shape)])
        return out

    def backward(ctx, grad):
        needs_x, needs_src, _ = ctx.needs_input_grad
        (index,) = ctx.saved_tensors
        grad_src = _read_back(grad, np.asarray(index), ctx.attrs["dim"], ctx.src_shape) \
            if needs_src else None
        return (grad if needs_x else None), grad_src, None


class Scatter(Node):
    """out = x, with src[i][j] written at [index[i][j]][j] (dim 0): the overwritten places of
    x get no gradient, dsrc = grad.gather(dim, index)"""

    def forward(ctx, x, src, index, dim):
        ctx.save_for_backward(index=index)
        ctx.src_shape = src.shape
        out = x.copy()
        out[along_dim(index, dim)] = src[tuple(slice(n) for n in index.shape)]
        return out

    def backward(ctx, grad):
        needs_x, needs_src, _ = ctx.needs_input_grad
        (index,) = ctx.saved_tensors
        index, dim = np.asarray(index), ctx.attrs["dim"]
        grad_x = IndexPut.call(grad, np.zeros((), grad.dtype), index=along_dim(index, dim)) \
            if needs_x else None
        grad_src = _read_back(grad, index, dim, ctx.src_shape) if needs_src else None
        return grad_x, grad_src, None


class IndexSelect(Node):
    """out = the slices x[..., index[k], ...] along dim: dx = zeros.index_add(dim, index, grad)
    (a slice selected twice gets both gradients)"""

    def forward(ctx, x, index, dim):
        ctx.save_for_backward(index=index)
        ctx.input_shape = x.shape
        return np.take(x, index.reshape(-1), axis=dim)

    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        where = (slice(None),) * ctx.attrs["dim"] + (np.asarray(index).reshape(-1),)
        return IndexScatter.call(grad, index=where, shape=ctx.input_shape), None


class MaskedFill(Node):
    """out = value where mask, else x: dx = grad where not mask; d value = Σ grad where mask"""

    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask=mask)
        ctx.x_shape = x.shape
        # (value takes x's dtype: an integer x keeps its dtype and truncates, as torch's)
        return np.where(mask, value.astype(x.dtype), x)

    def backward(ctx, grad):
        needs_x, _, needs_value = ctx.needs_input_grad
        (mask,) = ctx.saved_tensors
        mask = np.asarray(mask)
        zero = np.zeros((), grad.dtype)
        # Chosen, not multiplied by the mask: an inf or nan arriving at a place the other side
        # took gives 0 there, as torch (inf · 0 would be nan). (mask may have broadcast x to a
        # larger shape: unbroadcast sums x's copies back.)
        grad_x = unbroadcast(Where.call(zero, grad, condition=mask), ctx.x_shape) \
            if needs_x else None
        grad_value = Where.call(grad, zero, condition=mask).sum() if needs_value else None
        return grad_x, None, grad_value


# ---- argument checks ------------------------------------------------------------------------
def _index_tensor(op: str, index, dtypes=("int32", "int64"), name: str = "index") -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor (of int64), got {type(index).__name__}")
    if index.dtype.name not in dtypes:
        raise RuntimeError(f"{op}: expected dtype {' or '.join(dtypes)} for {name}, got "
                           f"{index.dtype}")
    return index


def _check_in_range(op: str, index: Tensor, size: int, dim: int,
                    error: type = RuntimeError) -> None:
    """Index values must lie in [0, size): torch does not count back from the end here."""
    values = index._data
    if values.size and (values.min() < 0 or values.max() >= size):
        bad = values.min() if values.min() < 0 else values.max()
        raise error(f"{op}: index {bad} is out of bounds for dimension {dim} with size {size} "
                    f"in input")


def _check_along_dim(op: str, input: Tensor, dim: int, index: Tensor, src=None) -> None:
    """torch's shape rule for gather and scatter: index has input's number of dims and is no
    larger than input in the other dims (nor than src in any dim)."""
    if index.ndim != input.ndim:
        raise RuntimeError(f"{op}: index tensor must have the same number of dimensions as "
                           f"input tensor (index shape {tuple(index.shape)}, input shape "
                           f"{tuple(input.shape)})")
    for d, (n, limit) in enumerate(zip(index.shape, input.shape)):
        if d != dim and n > limit:
            raise RuntimeError(f"{op}: size does not match at dimension {d}: expected index "
                               f"{list(index.shape)} to be no larger than input "
                               f"{list(input.shape)} apart from dimension {dim}")
    if src is not None:
        if src.ndim != index.ndim:
            # (torch reads src's size in each of index's dims: past its last one, IndexError)
            error = DimensionError if 0 < src.ndim < index.ndim else RuntimeError
            raise error(f"{op}: index tensor must have the same number of dimensions as "
                               f"src tensor (index shape {tuple(index.shape)}, src shape "
                               f"{tuple(src.shape)})")
        if any(n > limit for n, limit in zip(index.shape, src.shape)):
            raise RuntimeError(f"{op}: expected index {list(index.shape)} to be no larger "
                               f"than src {list(src.shape)} in any dimension")
    _check_in_range(op, index, input.shape[dim], dim)


def _src_tensor(op: str, input: Tensor, src) -> Tensor:
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected input.dtype to be equal to src.dtype (got "
                           f"{input.dtype} and {src.dtype})")
    return src


def _flat(t: Tensor) -> Tensor:
    """A 0-d tensor as a 1-d one, a view (torch treats a scalar as one element along dim 0)."""
    return Reshape.apply(t, shape=(1,)) if t.ndim == 0 else t


# ---- the functional entries (torch's signatures; Tensor methods call these) ----------------
def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """torch.gather: out[i][j][k] = input[index[i][j][k]][j][k] for dim 0 (and so on)."""
    if sparse_grad:
        raise NotImplementedError("gather: sparse_grad=True is not supported (no sparse "
                                  "tensors here)")
    dim = wrap_dim("gather", dim, input.ndim)
    index = _index_tensor("gather", index)
    if input.ndim == 0:  # one element: read through a 1-d view, and give index's shape back
        return Reshape.apply(gather(_flat(input), 0, Reshape.apply(index, shape=(-1,))),
                             shape=tuple(index.shape))
    _check_along_dim("gather", input, dim, index)
    return Gather.apply(input, index, dim=dim)


def _scatter_args(op: str, input, dim, index, src):
    dim = wrap_dim(op, dim, input.ndim)
    index = _index_tensor(op, index)
    src = _src_tensor(op, input, src)
    if input.ndim:
        _check_along_dim(op, input, dim, index, src)
    return dim, index, src


def _scalar_scatter(fn, input, index, src, **attrs):
    """A scatter into a 0-d input, done on 1-d views of everything."""
    flat = fn.apply(_flat(input), Reshape.apply(src, shape=(-1,)),
                    Reshape.apply(index, shape=(-1,)), dim=0, **attrs)
    return Reshape.apply(flat, shape=())


def scatter_add(input, dim: int, index, src) -> Tensor:
    """torch.scatter_add: a copy of input with src[i][j][k] added at
    [index[i][j][k]][j][k] for dim 0 (and so on); repeated indices add up."""
    dim, index, src = _scatter_args("scatter_add", input, dim, index, src)
    if input.ndim == 0:
        _check_in_range("scatter_add", index, 1, 0)
        return _scalar_scatter(ScatterAdd, input, index, src)
    return ScatterAdd.apply(input, src, index, dim=dim)


def scatter_add_(input, dim: int, index, src) -> Tensor:
    """In place: ``input.scatter_add_(dim, index, src)``; returns input."""
    dim, index, src = _scatter_args("scatter_add_", input, dim, index, src)
    if input.ndim == 0:
        _check_in_range("scatter_add_", index, 1, 0)
        return input.copy_(_scalar_scatter(ScatterAdd, input, index, src))
    return input._inplace(ScatterAdd, src, index, dim=dim)


def _value_src(op: str, input, index, src, value) -> Tensor:
    """scatter's src: the given tensor, or a constant one filled with ``value``."""
    if (src is None) == (value is None):
        raise TypeError(f"{op}: give exactly one of src (a Tensor) and value (a number)")
    if isinstance(src, (bool, int, float, np.number)):  # scatter(dim, index, 2.0), positionally
        src, value = None, src
    if src is not None:
        return src
    if not isinstance(value, (bool, int, float, np.number)):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    shape = tuple(index.shape) if isinstance(index, Tensor) else ()
    return Tensor._make(np.full(shape, value, dtype=input.dtype), None)


def _legacy_reduce(op: str, reduce, src_given: bool):
    """scatter's ``reduce``: None, 'add' or 'multiply' (torch's older form, deprecated for a
    tensor src, with a warning, in favour of scatter_reduce)."""
    if reduce is None:
        return None
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"{op}: reduce argument must be either add or multiply, got "
                           f"{reduce!r}")
    if src_given:
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=4)
    return reduce


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """torch.scatter: a copy of input with src[i][j][k] (or the number ``value``) written at
    [index[i][j][k]][j][k] for dim 0 (and so on); with reduce='add' or 'multiply', added or
    multiplied in instead (no gradient, as in torch: scatter_reduce has one)."""
    reduce = _legacy_reduce("scatter", reduce, isinstance(src, Tensor))
    src = _value_src("scatter", input, index, src, value)
    dim, index, src = _scatter_args("scatter", input, dim, index, src)
    fn, attrs = (Scatter, {}) if reduce is None else (ScatterWithReduce, {"reduce": reduce})
    if input.ndim == 0:
        _check_in_range("scatter", index, 1, 0)
        return _scalar_scatter(fn, input, index, src, **attrs)
    return fn.apply(input, src, index, dim=dim, **attrs)


def scatter_(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """In place: ``input.scatter_(dim, index, src)`` or ``(dim, index, value=...)``, with
    ``reduce=`` as scatter."""
    reduce = _legacy_reduce("scatter_", reduce, isinstance(src, Tensor))
    src = _value_src("scatter_", input, index, src, value)
    dim, index, src = _scatter_args("scatter_", input, dim, index, src)
    fn, attrs = (Scatter, {}) if reduce is None else (ScatterWithReduce, {"reduce": reduce})
    if input.ndim == 0:
        _check_in_range("scatter_", index, 1, 0)
        return input.copy_(_scalar_scatter(fn, input, index, src, **attrs))
    return input._inplace(fn, src, index, dim=dim, **attrs)


def index_select(input, dim: int, index) -> Tensor:
    """torch.index_select: the slices of input along dim at the positions in ``index`` (a 1-d
    or 0-d integer tensor), in that order, repeats allowed."""
    dim = wrap_dim("index_select", dim, input.ndim)
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError(f"index_select: index is supposed to be a vector (0-d or 1-d), got "
                         f"shape {tuple(index.shape)}")
    index = _index_tensor("index_select", index)
    if input.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select: a 0-d input takes exactly one index, got "
                               f"{index.numel()}")
        _check_in_range("index_select", index, 1, 0, IndexError)
        return Clone.apply(input)
    if input.shape[dim] == 0 and index.numel():
        raise RuntimeError(f"index_select: input has size 0 in dim {dim}: there is nothing to "
                           f"select")
    # (torch's CPU kernels: IndexError along dim 0, RuntimeError along the others)
    _check_in_range("index_select", index, input.shape[dim], dim,
                    IndexError if dim == 0 else RuntimeError)
    return IndexSelect.apply(input, index, dim=dim)


def _mask_and_value(op: str, input, mask, value):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}: mask must be a bool Tensor, got {type(mask).__name__}")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"{op}: only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{op}: only supports a 0-dimensional value tensor, but got "
                               f"tensor with {plural(value.ndim, 'dimension')}")
        if input.dtype.kind != "f":  # an integer result cannot carry a gradient
            value = value.detach()
        return mask, value
    if not isinstance(value, (bool, int, float, np.number)):
        if isinstance(value, complex):  # (torch's RuntimeError: it parses, but cannot convert)
            check_scalar(op, "value", value)
        raise TypeError(f"{op}: value must be a number or a 0-d Tensor, got "
                        f"{type(value).__name__}")
    if input.dtype.kind == "f" and type(value) is not int:  # (the common case: nothing to check)
        return mask, Tensor._make(np.asarray(value).astype(input.dtype), None)
    check_fits(op, input.dtype, value=value)  # (300 into int8 is an error, not wrapped)
    with quiet():  # (int64 takes 2.0**63, the float nearest its largest, as -2**63: torch's)
        return mask, Tensor._make(np.asarray(value).astype(input.dtype), None)


def masked_fill(input, mask, value) -> Tensor:
    """torch.masked_fill: ``value`` where ``mask`` is True, input elsewhere (mask broadcasts
    with input; a 0-d tensor value receives the gradient of every place it fills)."""
    mask, value = _mask_and_value("masked_fill", input, mask, value)
    try:
        np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"masked_fill: the mask's shape {tuple(mask.shape)} does not "
                           f"broadcast with the input's {tuple(input.shape)}") from None
    return MaskedFill.apply(input, mask, value)


def masked_fill_(input, mask, value) -> Tensor:
    """In place: ``input.masked_fill_(mask, value)`` (mask must broadcast to input's shape)."""
    mask, value = _mask_and_value("masked_fill_", input, mask, value)
    try:
        fits = np.broadcast_shapes(input.shape, mask.shape) == tuple(input.shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"masked_fill_: the mask's shape {tuple(mask.shape)} does not "
                           f"broadcast to the input's {tuple(input.shape)}")
    return input._inplace(MaskedFill, mask, value)


def take_along_dim(input, indices, dim=None) -> Tensor:
    """torch.take_along_dim: gather after broadcasting input and indices against each other
    in every dim but ``dim``; with dim=None, gather from the flattened input."""
    indices = _index_tensor("take_along_dim", indices, dtypes=("int64",), name="indices")
    if dim is None:
        return gather(Reshape.apply(input, shape=(-1,)), 0, Reshape.apply(indices, shape=(-1,)))
    dim = wrap_dim("take_along_dim", dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of "
                           f"dimensions, but got {plural(input.ndim, 'dimension')} for input, "
                           f"and {plural(indices.ndim, 'dimension')} for indices")
    if input.ndim == 0:
        return gather(input, 0, indices)
    _check_in_range("take_along_dim", indices, input.shape[dim], dim)
    # Broadcast everything but dim: indices keeps its length there, input its own.
    others = [list(input.shape), list(indices.shape)]
    for shape in others:
        shape[dim] = 1
    try:
        common = list(np.broadcast_shapes(*map(tuple, others)))
    except ValueError:
        raise RuntimeError(f"take_along_dim: input {tuple(input.shape)} and indices "
                           f"{tuple(indices.shape)} do not broadcast apart from dim "
                           f"{dim}") from None
    input_shape, index_shape = list(common), list(common)
    input_shape[dim], index_shape[dim] = input.shape[dim], indices.shape[dim]
    if tuple(input_shape) != tuple(input.shape):
        input = Expand.apply(input, shape=expanded_shape(input.shape, (tuple(input_shape),)))
    index = Tensor._make(np.broadcast_to(indices._data, tuple(index_shape)), None)
    return gather(input, dim, index)


# ---- triangles, masks and repeats (issue 33) --------------------------------------------------
class Tril(Node):
    """out = x on and below the ``diagonal``-th diagonal of the last two dims, 0 above: the same
    mask passes the gradient, dx = tril(grad)"""

    fresh_gradients = True  # (np.tril makes a new array)

    def forward(ctx, x, diagonal):
        return np.tril(x, diagonal)  # (NumPy's tril works on the last two axes of a batch)

    def backward(ctx, grad):
        return Tril.call(grad, diagonal=ctx.attrs["diagonal"])


class Triu(Node):
    """out = x on and above the ``diagonal``-th diagonal of the last two dims, 0 below:
    dx = triu(grad)"""

    fresh_gradients = True

    def forward(ctx, x, diagonal):
        return np.triu(x, diagonal)

    def backward(ctx, grad):
        return Triu.call(grad, diagonal=ctx.attrs["diagonal"])


def _triangle(op: str, input, diagonal) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape "
                           f"{tuple(input.shape)}")
    return check_int(op, "diagonal", diagonal)


def tril(input, diagonal: int = 0) -> Tensor:
    """torch.tril: the lower triangle (and the diagonals up to ``diagonal``) of each matrix in
    the last two dims; the rest zeros."""
    return Tril.apply(input, diagonal=_triangle("tril", input, diagonal))


def triu(input, diagonal: int = 0) -> Tensor:
    """torch.triu: the upper triangle (from the ``diagonal``-th diagonal on); the rest zeros."""
    return Triu.apply(input, diagonal=_triangle("triu", input, diagonal))


def tril_(input, diagonal: int = 0) -> Tensor:
    """In place: ``input.tril_(diagonal)``; returns input."""
    return input._inplace(Tril, diagonal=_triangle("tril_", input, diagonal))


def triu_(input, diagonal: int = 0) -> Tensor:
    """In place: ``input.triu_(diagonal)``; returns input."""
    return input._inplace(Triu, diagonal=_triangle("triu_", input, diagonal))


class MaskedSelect(Node):
    """out = the elements of x (broadcast with mask) where mask is True, as a 1-d tensor: each
    one's gradient goes back to its place, dx = unbroadcast(zeros.index_put(mask, grad))"""

    fresh_gradients = True  # (scattered into new zeros)

    def forward(ctx, x, mask):
        shape = np.broadcast_shapes(x.shape, mask.shape)
        ctx.save_for_backward(mask=mask)
        ctx.x_shape, ctx.shape = x.shape, shape
        return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]

    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        places = (np.broadcast_to(np.asarray(mask), ctx.shape),)  # (a bool index: a 0-d too)
        return unbroadcast(IndexScatter.call(grad, index=places, shape=ctx.shape),
                           ctx.x_shape), None


def masked_select(input, mask) -> Tensor:
    """torch.masked_select: the elements of input where the bool ``mask`` is True (the two
    broadcast against each other), in order, as a 1-d tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked_select(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_select(): argument 'mask' must be Tensor, not "
                        f"{type(mask).__name__}")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {mask.dtype}")
    try:
        np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: the mask's shape {tuple(mask.shape)} does not "
                           f"broadcast with the input's {tuple(input.shape)}") from None
    return MaskedSelect.apply(input, mask)


def _repeat_counts(input, repeats, dim) -> np.ndarray:
    """repeat_interleave's repeats as one count per slice of input along dim, checked as torch."""
    length = input.shape[dim] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError(f"repeat_interleave: repeats must be 0-dim or 1-dim tensor, got "
                               f"shape {tuple(repeats.shape)}")
        if repeats.dtype.kind not in "iu":
            raise NotImplementedError(f"repeat_interleave: \"repeat_interleave_cpu\" not "
                                      f"implemented for repeats of dtype {repeats.dtype}")
        counts = repeats._data.reshape(-1)
        if counts.size == 1:
            counts = np.full(length, counts[0], dtype=np.int64)
        elif counts.size != length:
            raise RuntimeError(f"repeat_interleave: repeats must have the same size as input "
                               f"along dim, but got repeats.size(0) = {counts.size} and "
                               f"input.size({dim}) = {length}")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        return counts.astype(np.int64)
    repeats = check_int("repeat_interleave", "repeats", repeats)
    if repeats < 0:
        raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got {repeats}")
    return np.full(length, repeats, dtype=np.int64)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """torch.repeat_interleave: each slice of input along dim (of the flattened input if dim is
    None) repeated ``repeats`` times (an int, or a tensor of one count per slice), in place
    order. It is an index_select with each position repeated, and so is its gradient: the
    copies' gradients are summed. ``repeat_interleave(counts)`` alone gives the indices
    0, 1, ... each repeated counts[i] times."""
    if not isinstance(input, Tensor):
        raise TypeError(f"repeat_interleave(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if repeats is None:  # the one-argument form: input holds the counts
        if input.ndim != 1:
            raise RuntimeError(f"repeat_interleave: repeat_interleave only accept 1D vector as "
                               f"repeat, got shape {tuple(input.shape)}")
        counts = _repeat_counts(Reshape.apply(input, shape=(-1,)), input, 0)
        return Tensor._make(np.repeat(np.arange(len(counts), dtype=input.dtype), counts), None)
    if dim is None:
        input, dim = Reshape.apply(input, shape=(-1,)), 0
    else:
        dim = wrap_dim("repeat_interleave", dim, input.ndim)
        if input.ndim == 0:  # (torch refuses any dim of a 0-d input here)
            raise DimensionError(f"repeat_interleave: Dimension specified as {dim} but tensor "
                                 f"has no dimensions (dim=None repeats its one element)")
    counts = _repeat_counts(input, repeats, dim)
    if output_size is not None and check_int("repeat_interleave", "output_size",
                                             output_size) != counts.sum():
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {counts.sum()} "
                           f"but got {output_size}")
    positions = np.repeat(np.arange(len(counts)), counts)
    return IndexSelect.apply(input, Tensor._make(positions, None), dim=dim)


def meshgrid(*tensors, indexing=None) -> tuple:
    """torch.meshgrid: coordinate grids from 1-d (or 0-d) tensors; output k holds tensor k's
    values along its own dim, expanded along the others. indexing='ij' (matrix, the default)
    or 'xy' (Cartesian: the first two dims swapped). Each is an expanded view, as torch's."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument (indexing='ij' is used now).", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid(): expected Tensor as element {k} in argument 0, but got "
                            f"{type(t).__name__}")
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got shape {tuple(t.shape)} (element {k})")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype (element "
                               f"{k} is {t.dtype}, element 0 {tensors[0].dtype})")
    # Which output dim each tensor runs along: its own, but for 'xy' the first two swap.
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        shape[axis] = t.numel()
    grids = []
    for t, axis in zip(tensors, axes):
        alone = [1] * len(tensors)
        alone[axis] = t.numel()
        grids.append(Expand.apply(Reshape.apply(t, shape=tuple(alone)), shape=tuple(shape)))
    return tuple(grids)


# ---- scatter with a reduction: scatter(..., reduce=) and scatter_reduce ------------------------
_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_ACCUMULATE = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
               "amin": np.minimum}


def _reduce_into(x: np.ndarray, src: np.ndarray, index: np.ndarray, dim: int, reduce: str,
                 include_self: bool) -> np.ndarray:
    """x with src reduced into it at index along dim (NumPy's ufunc.at: repeated places reduce
    every value they receive). Without include_self, the places written start from the
    reduction's identity, so x's old values there take no part."""
    out = x.copy()
    where = along_dim(index, dim)
    src = src[tuple(slice(n) for n in index.shape)]
    if not include_self:
        if reduce in _IDENTITY:
            identity = _IDENTITY[reduce]
        else:  # the lowest (amax) or highest (amin) value of the dtype
            info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
            identity = (-np.inf if x.dtype.kind == "f" else info.min) if reduce == "amax" \
                else (np.inf if x.dtype.kind == "f" else info.max)
        out[where] = identity
    _ACCUMULATE[reduce].at(out, where, src)
    if reduce == "mean":
        count = np.full(x.shape, int(include_self), dtype=np.int64)
        np.add.at(count, where, 1)
        count = np.maximum(count, 1)  # (a place nothing reached keeps its value)
        # integers divide rounding down, as torch's
        out = out // count if x.dtype.kind in "iub" else (out / count).astype(x.dtype)
    return out


class ScatterWithReduce(Node):
    """torch's legacy ``scatter(dim, index, src, reduce='add'|'multiply')``: torch has no
    derivative for it, so neither does this (backward raises, as there)"""

    def forward(ctx, x, src, index, dim, reduce):
        return _reduce_into(x, src, index, dim, "sum" if reduce == "add" else "prod", True)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::scatter is not implemented (scatter with "
                           "reduce=; scatter_reduce has gradients)")


class RefusedSecondDerivative(Node):
    """The identity, whose own derivative is refused: torch's DelayedError, which lets a first
    derivative through and raises only when it is differentiated again"""

    def forward(ctx, x, message):
        return x.view()  # (the same values, in an array object of its own)

    def backward(ctx, grad):
        raise RuntimeError(ctx.attrs["message"])


def _masked(t, mask: np.ndarray, value):
    """t.masked_fill(mask, value) for a Tensor or an array: the filled places take no gradient
    (chosen, so an inf or nan there is dropped, not multiplied by 0)."""
    return Where.call(np.asarray(value, dtype=np.asarray(t).dtype), t, condition=mask)


class ScatterReduce(Node):
    """out = x with src reduced into it at [index[i][j]][j] (dim 0), by sum, prod, mean, amax
    or amin (include_self: x's old value takes part). The gradients are torch's:
    sum: dx = grad, dsrc = grad.gather(index);  mean: both divided by the count at the place;
    prod: out/x and out/src (the product of the others where that is 0);
    amax/amin: grad shared evenly among the elements equal to the result.
    Without include_self, dx is 0 at the places written."""

    def forward(ctx, x, src, index, dim, reduce, include_self):
        ctx.save_for_backward(x=x, src=src, index=index)
        return _reduce_into(x, src, index, dim, reduce, include_self)

    def backward(ctx, grad):
        x, src, index = ctx.saved_tensors
        needs_x, needs_src, _ = ctx.needs_input_grad
        dim, reduce, include_self = (ctx.attrs[k] for k in ("dim", "reduce", "include_self"))
        index = np.asarray(index)
        where = along_dim(index, dim)
        src_shape = np.shape(src)
        used = src[tuple(slice(n) for n in index.shape)]  # the src elements scattered
        x_array, used_array = np.asarray(x), np.asarray(used)

        def gathered(t):  # t.gather(dim, index)
            return Index.call(t, index=where)

        def scattered(values: np.ndarray) -> np.ndarray:  # zeros.scatter_add(dim, index, values)
            total = np.zeros(x_array.shape, dtype=x_array.dtype)
            np.add.at(total, where, values)
            return total

        if reduce == "sum":
            grad_x, grad_src = grad, gathered(grad)
        elif reduce == "mean":
            count = np.maximum(scattered(np.ones(index.shape, x_array.dtype)) + include_self, 1)
            grad_x = grad / count
            grad_src = gathered(grad_x)
        elif reduce in ("amax", "amin"):
            result = _reduce_into(x_array, used_array, index, dim, reduce, include_self)
            x_is = x_array == result
            src_is = used_array == result[where]
            share = grad / (x_is + scattered(src_is.astype(x_array.dtype)))
            grad_x = share * x_is
            grad_src = gathered(share) * src_is
        else:  # prod: divide the product by the element, unless it is 0
            x_nonzero = _masked(x, x_array == 0, 1)
            grad_x = grad * ScatterReduce.call(x_nonzero, used, index, dim=dim, reduce="prod",
                                               include_self=include_self) / x_nonzero
            src_zero = used_array == 0
            zeros_there = scattered(src_zero.astype(x_array.dtype))[where]
            single_zero = src_zero & (zeros_there == 1)
            # a lone 0: its derivative is the product of the others, the product with it as 1
            others = ScatterReduce.call(x, _masked(used, single_zero, 1), index, dim=dim,
                                        reduce="prod", include_self=include_self)
            result = ScatterReduce.call(x, used, index, dim=dim, reduce="prod",
                                        include_self=include_self)
            # chosen, as torch: the side not taken may be inf or nan (inf · 0 = nan)
            grad_src = Where.call(gathered(grad * others),
                                  gathered(grad * result) / _masked(used, src_zero, 1),
                                  condition=single_zero)
            if (zeros_there > 1).any() and isinstance(grad_src, Tensor):
                grad_src = RefusedSecondDerivative.apply(
                    grad_src, message="scatter_reduce(): Double backward is unsupported for "
                    "src when >1 zeros in src are scattered to the same position in self")
        if not include_self:  # x's old values at the places written took no part
            written = scattered(np.ones(index.shape, x_array.dtype)) > 0
            grad_x = _masked(grad_x, written, 0)
        if needs_src and tuple(index.shape) != tuple(src_shape):
            grad_src = Pad.call(grad_src, widths=tuple(
                (0, s - n) for s, n in zip(src_shape, index.shape)), value=0)
        return (grad_x if needs_x else None), (grad_src if needs_src else None), None


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_args(op: str, input, dim, index, src, reduce, include_self):
    if isinstance(reduce, str) and reduce in ("max", "min"):  # torch's older names, still taken
        reduce = "a" + reduce
    if not isinstance(reduce, str):
        raise TypeError(f"{op}(): argument 'reduce' must be str, not {type(reduce).__name__}")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"{op}: reduce argument must be either sum, prod, mean, amax or "
                           f"amin, got {reduce}")
    if not isinstance(include_self, (bool, np.bool_)):
        raise TypeError(f"{op}(): argument 'include_self' must be bool, not "
                        f"{type(include_self).__name__}")
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    dim, index, src = _scatter_args(op, input, dim, index, src)
    return dim, index, src, reduce, bool(include_self)


def _flat_reduce(input, src, index, **attrs):
    """A scatter_reduce into a 0-d input, done on 1-d views of everything."""
    return Reshape.apply(ScatterReduce.apply(_flat(input), Reshape.apply(src, shape=(-1,)),
                                             Reshape.apply(index, shape=(-1,)), **attrs),
                         shape=())


def scatter_reduce(input, dim: int, index, src, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: a copy of input with src[i][j][k] reduced into
    [index[i][j][k]][j][k] (dim 0, and so on) by ``reduce``: 'sum', 'prod', 'mean', 'amax' or
    'amin'; include_self=False leaves input's old values out at the places written."""
    dim, index, src, reduce, include_self = _scatter_reduce_args(
        "scatter_reduce", input, dim, index, src, reduce, include_self)
    attrs = dict(dim=dim, reduce=reduce, include_self=include_self)
    if input.ndim == 0:
        _check_in_range("scatter_reduce", index, 1, 0)
        return _flat_reduce(input, src, index, **{**attrs, "dim": 0})
    return ScatterReduce.apply(input, src, index, **attrs)


def scatter_reduce_(input, dim: int, index, src, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In place: ``input.scatter_reduce_(dim, index, src, reduce, include_self=True)``."""
    dim, index, src, reduce, include_self = _scatter_reduce_args(
        "scatter_reduce_", input, dim, index, src, reduce, include_self)
    attrs = dict(dim=dim, reduce=reduce, include_self=include_self)
    if input.ndim == 0:
        _check_in_range("scatter_reduce_", index, 1, 0)
        return input.copy_(_flat_reduce(input, src, index, **{**attrs, "dim": 0}))
    return input._inplace(ScatterReduce, src, index, **attrs)


# ---- index_add, index_copy, index_fill, masked_scatter ---------------------------------------
def _slices_at(dim: int, index: np.ndarray) -> tuple:
    """The NumPy index of the slices x[..., index[k], ...] along dim."""
    return (slice(None),) * dim + (np.asarray(index).reshape(-1),)


class IndexAdd(Node):
    """out = x with alpha·src[..., k, ...] added to the slice x[..., index[k], ...]:
    dx = grad, dsrc = alpha · grad.index_select(dim, index)"""

    def forward(ctx, x, src, index, dim, alpha):
        ctx.save_for_backward(index=index)
        out = x.copy()
        # add.at, not +=: an index repeated adds every one of its slices
        np.add.at(out, _slices_at(dim, index), src if alpha == 1 else (src * alpha).astype(x.dtype))
        return out

    def backward(ctx, grad):
        needs_x, needs_src, _ = ctx.needs_input_grad
        (index,) = ctx.saved_tensors
        alpha = ctx.attrs["alpha"]
        grad_src = None
        if needs_src:
            grad_src = Index.call(grad, index=_slices_at(ctx.attrs["dim"], index))
            if alpha != 1:
                grad_src = grad_src * alpha
        return (grad if needs_x else None), grad_src, None


class IndexCopy(Node):
    """out = x with the slice x[..., index[k], ...] replaced by src[..., k, ...]: the replaced
    slices of x get no gradient, dsrc = grad.index_select(dim, index)"""

    def forward(ctx, x, src, index, dim):
        ctx.save_for_backward(index=index)
        out = x.copy()
        out[_slices_at(dim, index)] = src
        return out

    def backward(ctx, grad):
        needs_x, needs_src, _ = ctx.needs_input_grad
        (index,) = ctx.saved_tensors
        where = _slices_at(ctx.attrs["dim"], index)
        grad_x = IndexPut.call(grad, np.zeros((), grad.dtype), index=where) if needs_x else None
        grad_src = Index.call(grad, index=where) if needs_src else None
        return grad_x, grad_src, None


def _index_slices_args(op: str, input, dim, index, source, dtypes=("int32", "int64")):
    """torch's checks shared by index_add and index_copy; returns (dim, index, source) with
    a 0-d input, index or source seen as 1-d."""
    dim = wrap_dim(op, dim, input.ndim)
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError(f"{op}: index is supposed to be a vector (0-d or 1-d), got shape "
                         f"{tuple(index.shape)}")
    index = _index_tensor(op, index, dtypes=dtypes)
    source = _src_tensor(op, input, source)
    n, along = index.numel(), (source.shape[dim] if source.ndim else 1)
    if n != along:
        raise (IndexError if op.startswith("index_copy") else RuntimeError)(
            f"{op}: number of indices ({n}) should be equal to source.size(dim) ({along}), "
            f"for dim {dim}")
    # the slices must match: index_add compares the shapes as given, index_copy with a 0-d
    # tensor taken as 1-d (as torch's kernels)
    shapes = [tuple(t.shape) or ((1,) if op.startswith("index_copy") else ()) for t in
              (input, source)]
    if len(shapes[0]) != len(shapes[1]) or any(
            a != b for d, (a, b) in enumerate(zip(*shapes)) if d != dim):
        raise RuntimeError(f"{op}: source tensor shape must match self tensor shape, excluding "
                           f"the specified dimension; got self.shape = {list(input.shape)}, "
                           f"source.shape = {list(source.shape)}")
    size = input.shape[dim] if input.ndim else 1
    _check_in_range(op, index, size, dim,
                    IndexError if op.startswith("index_copy") else RuntimeError)
    index = _flat(index)
    if source.ndim == 0 and input.ndim:
        source = Reshape.apply(source, shape=(1,) * input.ndim)
    return dim, index, source


def _on_flat(fn, input, source, index, **attrs):
    """fn on input (1-d views of a 0-d input and source), shaped back as input."""
    if input.ndim:
        return fn.apply(input, source, index, **attrs)
    return Reshape.apply(fn.apply(_flat(input), _flat(source), index, **attrs), shape=())


def _alpha(op: str, input, alpha):
    """index_add's scale: a real number, truncated to an integer for an integer input (as
    torch's, which takes alpha=2.5 for an int64 tensor as 2)."""
    check_scalar(op, "alpha", alpha)
    return int(alpha) if input.dtype.kind in "iu" else alpha


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """torch.index_add: a copy of input with alpha · source[..., k, ...] added to the slice
    input[..., index[k], ...] along dim; repeated indices add up."""
    dim, index, source = _index_slices_args("index_add", input, dim, index, source)
    alpha = _alpha("index_add", input, alpha)
    return _on_flat(IndexAdd, input, source, index, dim=dim, alpha=alpha)


def index_add_(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """In place: ``input.index_add_(dim, index, source, alpha=...)``; returns input."""
    dim, index, source = _index_slices_args("index_add_", input, dim, index, source)
    alpha = _alpha("index_add_", input, alpha)
    if input.ndim == 0:
        return input.copy_(_on_flat(IndexAdd, input, source, index, dim=0, alpha=alpha))
    return input._inplace(IndexAdd, source, index, dim=dim, alpha=alpha)


def index_copy(input, dim: int, index, source) -> Tensor:
    """torch.index_copy: a copy of input with the slice input[..., index[k], ...] along dim
    replaced by source[..., k, ...] (index must be int64)."""
    dim, index, source = _index_slices_args("index_copy", input, dim, index, source, ("int64",))
    return _on_flat(IndexCopy, input, source, index, dim=dim)


def index_copy_(input, dim: int, index, source) -> Tensor:
    """In place: ``input.index_copy_(dim, index, source)``; returns input."""
    dim, index, source = _index_slices_args("index_copy_", input, dim, index, source,
                                            ("int64",))
    if input.ndim == 0:
        return input.copy_(_on_flat(IndexCopy, input, source, index, dim=0))
    return input._inplace(IndexCopy, source, index, dim=dim)


def _index_mask(op: str, input, dim, index) -> Tensor:
    """index_fill's places as a bool mask that broadcasts to input: True on the slices at
    ``index`` along dim (negative indices count from the end, as torch's index_fill)."""
    dim = wrap_dim(op, dim, input.ndim)
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError(f"{op}: index is supposed to be a vector (0-d or 1-d), got shape "
                         f"{tuple(index.shape)}")
    if isinstance(index, Tensor) and index.dtype != np.int64:
        raise IndexError(f"{op}: expected dtype int64 for index, got {index.dtype}")
    index = _index_tensor(op, index, dtypes=("int64",))
    size = input.shape[dim] if input.ndim else 1
    values = index._data.reshape(-1)
    if values.size and (values.min() < -size or values.max() >= size):
        bad = values.min() if values.min() < -size else values.max()
        raise IndexError(f"{op}: index {bad} is out of bounds for dimension {dim} with size "
                         f"{size}")
    shape = [1] * input.ndim
    if input.ndim:
        shape[dim] = size
    mask = np.zeros(size, dtype=bool)
    mask[values] = True
    return Tensor._make(mask.reshape(shape), None)


def index_fill(input, dim: int, index, value) -> Tensor:
    """torch.index_fill: a copy of input with the slices at ``index`` along dim filled with
    ``value`` (a number or a 0-d tensor, which then gets the gradient of every filled place)."""
    return masked_fill(input, _index_mask("index_fill", input, dim, index), value)


def index_fill_(input, dim: int, index, value) -> Tensor:
    """In place: ``input.index_fill_(dim, index, value)``; returns input."""
    return masked_fill_(input, _index_mask("index_fill_", input, dim, index), value)


class MaskedScatter(Node):
    """out = x where not mask, and where mask the elements of src in order (row-major):
    dx = grad where not mask; dsrc = grad[mask] in the first places, zeros after"""

    def forward(ctx, x, src, mask):
        shape = np.broadcast_shapes(x.shape, mask.shape)
        mask = np.broadcast_to(mask, shape)
        ctx.save_for_backward(mask=mask)
        ctx.x_shape, ctx.src_shape = x.shape, src.shape
        out = np.array(np.broadcast_to(x, shape))
        out[mask] = src.reshape(-1)[:np.count_nonzero(mask)]
        return out

    def backward(ctx, grad):
        needs_x, needs_src, _ = ctx.needs_input_grad
        (mask,) = ctx.saved_tensors
        mask = np.asarray(mask)
        grad_x = unbroadcast(Where.call(np.zeros((), grad.dtype), grad, condition=mask),
                             ctx.x_shape) if needs_x else None
        grad_src = None
        if needs_src:
            read = Index.call(grad, index=mask)  # the used src elements' gradients, in order
            total = int(np.prod(ctx.src_shape))
            grad_src = Reshape.call(Pad.call(read, widths=((0, total - read.shape[0]),),
                                             value=0), shape=ctx.src_shape)
        return grad_x, grad_src, None


def _masked_scatter_args(op: str, input, mask, source, inplace: bool):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}: mask must be a bool Tensor, got {type(mask).__name__}")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"{op}: expected mask with dtype bool, got {mask.dtype}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected self and source to have the same dtype, got "
                           f"{input.dtype} and {source.dtype}")
    try:
        shape = np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        shape = None
    if shape is None or (inplace and shape != tuple(input.shape)):
        raise RuntimeError(f"{op}: the mask's shape {tuple(mask.shape)} does not broadcast "
                           f"{'to' if inplace else 'with'} the input's {tuple(input.shape)}")
    count = int(np.count_nonzero(np.broadcast_to(mask._data, shape)))
    if count > source.numel():
        raise RuntimeError(f"{op}: number of elements of source < number of ones in mask "
                           f"({source.numel()} < {count})")


def masked_scatter(input, mask, source) -> Tensor:
    """torch.masked_scatter: input, with the places where ``mask`` (broadcast with input) is
    True filled by source's elements in row-major order."""
    _masked_scatter_args("masked_scatter", input, mask, source, inplace=False)
    return MaskedScatter.apply(input, source, mask)


def masked_scatter_(input, mask, source) -> Tensor:
    """In place: ``input.masked_scatter_(mask, source)``; returns input."""
    _masked_scatter_args("masked_scatter_", input, mask, source, inplace=True)
    return input._inplace(MaskedScatter, source, mask)


def _addc_args(op: str, input, tensor1, tensor2, value):
    """addcmul's and addcdiv's checks; returns value, truncated to an integer where all three
    tensors are integers (torch casts it to the result's dtype: value=0.5 adds nothing)."""
    for name, t in (("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    check_scalar(op, "value", value)
    kinds = {t.dtype.kind for t in (input, tensor1, tensor2)}
    if op.startswith("addcdiv") and tensor1.dtype.kind in "iub" and tensor2.dtype.kind in "iub":
        raise RuntimeError(f"{op}: integer division with addcdiv is no longer supported; got "
                           f"tensor1 and tensor2 of integer dtypes (use a floating dtype)")
    if kinds == {"b"}:
        raise NotImplementedError(f"{op}: \"{op.rstrip('_')}_cpu_out\" not implemented for "
                                  f"'Bool'")
    return int(value) if kinds <= set("iub") else value


def _scaled(t: Tensor, value) -> Tensor:
    return t if value == 1 else t * value


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """torch.addcmul: input + value · tensor1 · tensor2 (broadcasting, dtypes promoted)."""
    value = _addc_args("addcmul", input, tensor1, tensor2, value)
    return input + _scaled(tensor1 * tensor2, value)


def addcmul_(input, tensor1, tensor2, *, value=1) -> Tensor:
    """In place: ``input.addcmul_(tensor1, tensor2, value=...)``; returns input."""
    value = _addc_args("addcmul_", input, tensor1, tensor2, value)
    return input.add_(_scaled(tensor1 * tensor2, value))


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """torch.addcdiv: input + value · tensor1 / tensor2 (true division; integer tensor1 and
    tensor2 together are refused, as in torch)."""
    value = _addc_args("addcdiv", input, tensor1, tensor2, value)
    return input + _scaled(tensor1 / tensor2, value)


def addcdiv_(input, tensor1, tensor2, *, value=1) -> Tensor:
    """In place: ``input.addcdiv_(tensor1, tensor2, value=...)``; returns input."""
    value = _addc_args("addcdiv_", input, tensor1, tensor2, value)
    return input.add_(_scaled(tensor1 / tensor2, value))


# ---- counting: unique, unique_consecutive, bincount, histc (no gradients) -------------------
def _constant(array, dtype=None) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=dtype), None)


def _unique_result(values, inverse, counts, return_inverse: bool, return_counts: bool):
    """torch's return shape: the values alone, or a tuple with the asked-for extras."""
    extras = [_constant(inverse, np.int64)] * bool(return_inverse) + \
        [_constant(counts, np.int64)] * bool(return_counts)
    return (values, *extras) if extras else values


def _slices_as_rows(op: str, input: Tensor, dim) -> tuple:
    """The input as rows to compare: one element per row (dim=None, flattened), or one slice
    along dim per row; and how to shape the chosen rows back."""
    data = input._data
    if dim is None:
        return data.reshape(-1, 1), lambda rows: rows.reshape(-1)
    dim = wrap_dim(op, dim, input.ndim)
    moved = np.moveaxis(data, dim, 0)
    rest = moved.shape[1:]
    return (moved.reshape(moved.shape[0], -1),
            lambda rows: np.moveaxis(rows.reshape((rows.shape[0],) + rest), 0, dim))


def unique(input, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """torch.unique: the distinct elements (or slices along dim) in ascending order (torch's CPU
    kernel sorts even with sorted=False), and optionally where each input element went
    (inverse) and how often each occurs (counts); NaNs are each distinct, as torch's."""
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse),
                       ("return_counts", return_counts)):
        check_flag("unique", name, flag)
    data = input._data
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        return _unique_result(_constant(values, data.dtype),
                              np.asarray(inverse).reshape(data.shape), counts,
                              return_inverse, return_counts)
    rows, shape_back = _slices_as_rows("unique", input, dim)
    if rows.shape[0] == 0:
        values, inverse, counts = rows, np.zeros(0), np.zeros(0)
    else:
        values, inverse, counts = np.unique(rows, axis=0, return_inverse=True,
                                            return_counts=True)
    return _unique_result(_constant(shape_back(values), data.dtype),
                          np.asarray(inverse).reshape(-1), counts, return_inverse,
                          return_counts)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):
    """torch.unique_consecutive: each run of equal consecutive elements (or slices along dim)
    kept once, with optionally the run each input element is in (inverse) and run lengths."""
    for name, flag in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        check_flag("unique_consecutive", name, flag)
    rows, shape_back = _slices_as_rows("unique_consecutive", input, dim)
    starts = np.ones(rows.shape[0], dtype=bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), rows.shape[0]))
    values = _constant(shape_back(rows[starts]), input.dtype)
    if dim is None:
        inverse = inverse.reshape(input.shape)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """torch.bincount: how often each value 0, 1, … max occurs in a 1-d tensor of non-negative
    integers (int64), or the sum of ``weights`` at each value (float64 for integer weights, as
    torch); at least ``minlength`` bins."""
    minlength = check_int("bincount", "minlength", minlength)
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"bincount: \"bincount_cpu\" not implemented for "
                                  f"{input.dtype} input (expected an integer tensor)")
    data = input._data
    if input.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got "
                           f"shape {tuple(input.shape)})")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    if weights is None or data.size == 0:  # (no elements: int64 zeros, weights unread, as torch)
        return _constant(np.bincount(data, minlength=minlength), np.int64)
    if not isinstance(weights, Tensor):
        raise TypeError(f"bincount: weights must be a Tensor, got {type(weights).__name__}")
    if weights.ndim != 1 or weights.shape[0] != data.shape[0]:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as "
                           f"input (got shapes {tuple(weights.shape)} and {tuple(input.shape)})")
    dtype = weights.dtype if weights.dtype.kind == "f" else np.dtype(np.float64)
    counted = np.bincount(data, weights=weights._data.astype(np.float64), minlength=minlength)
    return _constant(counted, dtype)


def histc(input, bins: int = 100, min=0, max=0) -> Tensor:
    """torch.histc: counts of the elements in ``bins`` equal-width bins over [min, max] (the
    data's range where min == max; elements outside are left out), in input's float dtype."""
    bins = check_int("histc", "bins", bins)
    low, high = float(check_scalar("histc", "min", min)), float(check_scalar("histc", "max", max))
    if input.dtype.kind != "f":
        raise NotImplementedError(f"histc: \"histogram_cpu\" not implemented for "
                                  f"{input.dtype} input (expected a floating tensor)")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    data = input._data.reshape(-1)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:  # (one value, or no data): a range of width 2 around it
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min={low}, "
                           f"max={high})")
    kept = data[(data >= low) & (data <= high)]
    # torch's bin of an element: ⌊(x - min) · bins / (max - min)⌋, max itself in the last bin
    where = ((kept - low) * bins / (high - low)).astype(np.int64)
    counted = np.bincount(np.minimum(where, bins - 1), minlength=bins)
    return _constant(counted, input.dtype)
