"""Shape ops: they move elements without changing them, so backward moves the gradient back.

Reshape, permute, flip, expand and basic indexing return views (``is_view``): the output shares
the input's memory and version counter, as in PyTorch. Writes into a tensor's memory are ops
too (copy_, fill_, ``t[index] = value``): recorded like any other op when they need a gradient.
"""
import math

import numpy as np

from ..tensor import Function, Tensor, unbroadcast


def resolve_shape(op: str, old_shape: tuple, shape) -> tuple:
    """Accept reshape(2, 3) and reshape((2, 3)); fill in a single -1."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = tuple(int(n) for n in shape)
    size = math.prod(old_shape)
    if shape.count(-1) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"{op}: invalid shape {shape}: at most one -1 and no other negative sizes")
    known = math.prod(n for n in shape if n != -1)
    if -1 in shape:
        if known == 0 or size % known:
            raise ValueError(f"{op}: cannot reshape a tensor of shape {old_shape} ({size} "
                             f"elements) into {shape}")
        shape = tuple(size // known if n == -1 else n for n in shape)
    elif known != size:
        raise ValueError(f"{op}: cannot reshape a tensor of shape {old_shape} ({size} elements) "
                         f"into {shape} ({known} elements)")
    return shape


def normalize_dims(op: str, ndim: int, dims) -> tuple:
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    for d in dims:
        if not -ndim <= d < ndim:
            raise ValueError(f"{op}: dimension {d} is out of range for a tensor with {ndim} dimensions")
    return tuple(int(d) % ndim for d in dims)


def swap_dims(ndim: int, dim0, dim1) -> tuple:
    if dim0 is None and dim1 is None:
        return tuple(reversed(range(ndim)))
    if dim0 is None or dim1 is None:
        raise ValueError("transpose: give both dimensions to swap, or none to reverse them all")
    dim0, dim1 = normalize_dims("transpose", ndim, (dim0, dim1))
    dims = list(range(ndim))
    dims[dim0], dims[dim1] = dim1, dim0
    return tuple(dims)


def check_permutation(ndim: int, dims) -> tuple:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    normalized = normalize_dims("permute", ndim, dims)
    if sorted(normalized) != list(range(ndim)):
        raise ValueError(f"permute: dims {tuple(dims)} are not a permutation of the {ndim} "
                         f"dimensions of the tensor")
    return normalized


def flattened_shape(shape: tuple, start_dim: int, end_dim: int) -> tuple:
    if not shape:
        return (1,)
    start, end = normalize_dims("flatten", len(shape), (start_dim, end_dim))
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"(shape {shape})")
    return shape[:start] + (int(np.prod(shape[start:end + 1])),) + shape[end + 1:]


def normalize_index(index):
    """Tensors used as indices become their arrays; lists become arrays (NumPy's advanced rules)."""
    def convert(i):
        if isinstance(i, Tensor):
            return i.data
        if isinstance(i, list):
            return np.asarray(i)
        return i
    return tuple(convert(i) for i in index) if isinstance(index, tuple) else convert(index)


def expanded_shape(shape: tuple, sizes) -> tuple:
    """PyTorch's expand(): -1 keeps a size; new leading dimensions may be added."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    sizes = tuple(int(n) for n in sizes)
    if len(sizes) < len(shape):
        raise ValueError(f"expand: the number of sizes {len(sizes)} must be at least the number "
                         f"of dimensions {len(shape)} (shape {shape})")
    full = (1,) * (len(sizes) - len(shape)) + tuple(shape)
    result = tuple(old if new == -1 else new for old, new in zip(full, sizes))
    for old, new in zip(full, result):
        if old != new and old != 1:
            raise ValueError(f"expand: the expanded size {new} must match the existing size "
                             f"{old} at a non-singleton dimension (shape {shape}, sizes {sizes})")
    return result


def is_advanced(index) -> bool:
    """Advanced (NumPy) indexing with integer or boolean arrays: the result is a copy."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and (i.ndim > 0 or i.dtype == bool) for i in parts)


class Reshape(Function):
    """Reshaping only relabels elements: the gradient is reshaped back"""

    is_view = True

    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape)


class Permute(Function):
    """Permuting axes: the gradient is permuted by the inverse permutation"""

    is_view = True

    def forward(ctx, x, dims):
        return x.transpose(dims)

    def backward(ctx, grad):
        return Permute.call(grad, dims=tuple(np.argsort(ctx.attrs["dims"]).tolist()))


class Flip(Function):
    """Reversing axes is its own inverse (a copy, as PyTorch's flip)"""

    def forward(ctx, x, dims):
        return np.flip(x, dims).copy()

    def backward(ctx, grad):
        return Flip.call(grad, dims=ctx.attrs["dims"])


class Expand(Function):
    """Broadcasting to a larger shape copies each element; the copies' gradients are summed"""

    is_view = True

    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return np.broadcast_to(x, shape)

    def backward(ctx, grad):
        return unbroadcast(grad, ctx.input_shape)


class Clone(Function):
    """A copy: the gradient passes through unchanged"""

    def forward(ctx, x):
        return x.copy()

    def backward(ctx, grad):
        return grad


class Cast(Function):
    """A change of dtype: the gradient changes back"""

    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype
        return x.astype(dtype)

    def backward(ctx, grad):
        return Cast.call(grad, dtype=ctx.input_dtype)


class Index(Function):
    """x[index]: each selected element's gradient goes back to where it was read from;
    an element read twice (advanced indexing with repeats) gets the sum"""

    is_view = True  # for basic indexing; advanced indexing copies, and the engine sees that

    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        try:
            out = x[index]
        except IndexError as error:
            raise IndexError(f"index: {error} (tensor shape {x.shape})") from None
        if type(out) is not np.ndarray:  # one element: NumPy gives a scalar, torch a 0-d view
            out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        return out

    def backward(ctx, grad):
        return IndexScatter.call(grad, index=ctx.attrs["index"], shape=ctx.input_shape)


class IndexScatter(Function):
    """The adjoint of indexing: values added into zeros at the indexed places (a place
    indexed twice gets both); its own derivative reads those places again"""

    def forward(ctx, values, index, shape):
        full = np.zeros(shape, dtype=values.dtype)
        if is_advanced(index):
            np.add.at(full, index, values)
        else:  # basic slicing never reads an element twice
            full[index] = values
        return full

    def backward(ctx, grad):
        return Index.call(grad, index=ctx.attrs["index"])


class Copy(Function):
    """dst.copy_(src): the result is src broadcast to dst's shape; dst's old value is gone,
    so only src gets a gradient"""

    def forward(ctx, dst, src):
        ctx.src_shape = src.shape
        return np.broadcast_to(src, dst.shape).astype(dst.dtype)

    def backward(ctx, grad):
        return Fill.call(grad, value=0), unbroadcast(grad, ctx.src_shape)


class Fill(Function):
    """x.fill_(value): a constant, so x's old value gets a zero gradient"""

    def forward(ctx, x, value):
        return np.full(x.shape, value, dtype=x.dtype)

    def backward(ctx, grad):
        return Fill.call(grad, value=0)


class IndexPut(Function):
    """x[index] = value with an advanced index (PyTorch's index_put_): the overwritten places
    of x get no gradient; value gets the gradient of the places it was written to"""

    def forward(ctx, x, value, index):
        ctx.value_shape = value.shape
        out = x.copy()
        out[index] = value
        return out

    def backward(ctx, grad):
        index = ctx.attrs["index"]
        grad_x = IndexPut.call(grad, np.zeros((), grad.dtype), index=index) \
            if ctx.needs_input_grad[0] else None
        grad_value = unbroadcast(Index.call(grad, index=index), ctx.value_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_x, grad_value


def apply_view_path(base, path: tuple):
    """Replay the view ops that led from a base to one of its views (arrays or Tensors)."""
    for fn, attrs in path:
        base = fn.call(base, **attrs)
    return base


class WriteView(Function):
    """A base whose view (reached by ``path``) was overwritten with ``value`` — what an in-place
    op on a view does to the base (PyTorch's CopySlices): the view's region of the base takes
    ``value``'s gradient, the rest passes through"""

    def forward(ctx, base, value, path):
        ctx.value_shape = value.shape
        out = base.copy()
        np.copyto(apply_view_path(out, path), value)
        return out

    def backward(ctx, grad):
        path = ctx.attrs["path"]
        grad_base = WriteView.call(grad, np.zeros((), grad.dtype), path=path) \
            if ctx.needs_input_grad[0] else None
        grad_value = unbroadcast(apply_view_path(grad, path), ctx.value_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_base, grad_value
