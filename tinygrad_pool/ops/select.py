"""Reading and writing elements chosen by an index tensor: gather and scatter, index_select,
masked_fill (and take_along_dim, gather after broadcasting).

They are adjoints of one another: gather reads x at index along a dim, and its gradient is the
scatter-add of the output gradient at the same places (an element read twice gets the sum);
scatter_add's gradient for src reads the output gradient back with gather. So each backward
here is written with movement's Index (read at an index) and IndexScatter (add into zeros at
an index), whose own derivatives are each other: gradients of any order come for free.

The index tensor is an input of the op, not a constant: it is saved for backward as in torch,
so writing into it in place before backward is caught (its gradient is always None).
"""
import numpy as np

from ..engine import Node, Tensor, unbroadcast
from ..args import DimensionError, check_scalar, plural
from .movement import (Clone, Expand, Index, IndexPut, IndexScatter, Pad, Reshape,
                       expanded_shape, wrap_dim)


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
        # (mask may have broadcast x to a larger shape: unbroadcast sums x's copies back)
        grad_x = unbroadcast(grad * ~mask, ctx.x_shape) if needs_x else None
        grad_value = (grad * mask).sum() if needs_value else None
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


def _scalar_scatter(fn, input, index, src):
    """A scatter into a 0-d input, done on 1-d views of everything."""
    flat = fn.apply(_flat(input), Reshape.apply(src, shape=(-1,)),
                    Reshape.apply(index, shape=(-1,)), dim=0)
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


def scatter(input, dim: int, index, src=None, *, value=None) -> Tensor:
    """torch.scatter: a copy of input with src[i][j][k] (or the number ``value``) written at
    [index[i][j][k]][j][k] for dim 0 (and so on)."""
    src = _value_src("scatter", input, index, src, value)
    dim, index, src = _scatter_args("scatter", input, dim, index, src)
    if input.ndim == 0:
        _check_in_range("scatter", index, 1, 0)
        return _scalar_scatter(Scatter, input, index, src)
    return Scatter.apply(input, src, index, dim=dim)


def scatter_(input, dim: int, index, src=None, *, value=None) -> Tensor:
    """In place: ``input.scatter_(dim, index, src)`` or ``(dim, index, value=...)``."""
    src = _value_src("scatter_", input, index, src, value)
    dim, index, src = _scatter_args("scatter_", input, dim, index, src)
    if input.ndim == 0:
        _check_in_range("scatter_", index, 1, 0)
        return input.copy_(_scalar_scatter(Scatter, input, index, src))
    return input._inplace(Scatter, src, index, dim=dim)


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
