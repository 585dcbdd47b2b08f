"""Shape ops: they move elements without changing them, so backward moves the gradient back."""
import math

import numpy as np

from ..tensor import Function, Tensor


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


class Reshape(Function):
    """Reshaping only relabels elements: the gradient is reshaped back"""

    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape)


class Permute(Function):
    """Permuting axes: the gradient is permuted by the inverse permutation"""

    def forward(ctx, x, dims):
        return x.transpose(dims)

    def backward(ctx, grad):
        return grad.transpose(np.argsort(ctx.attrs["dims"]))


class Flip(Function):
    """Reversing axes is its own inverse"""

    def forward(ctx, x, dims):
        return np.flip(x, dims)

    def backward(ctx, grad):
        return np.flip(grad, ctx.attrs["dims"])


def _is_advanced(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and i.ndim > 0 or isinstance(i, np.ndarray) and
               i.dtype == bool for i in parts)


class Index(Function):
    """x[index]: each selected element's gradient goes back to where it was read from;
    an element read twice (advanced indexing with repeats) gets the sum"""

    def forward(ctx, x, index):
        ctx.input_shape, ctx.dtype = x.shape, x.dtype
        try:
            return x[index]
        except IndexError as error:
            raise IndexError(f"index: {error} (tensor shape {x.shape})") from None

    def backward(ctx, grad):
        index = ctx.attrs["index"]
        full = np.zeros(ctx.input_shape, dtype=ctx.dtype)
        if _is_advanced(index):
            np.add.at(full, index, grad)
        else:  # basic slicing never reads an element twice
            full[index] = grad
        return full
