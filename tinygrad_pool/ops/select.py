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
from ..args import DimensionError, check_int, check_scalar, plural
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
