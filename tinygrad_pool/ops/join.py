"""Joining tensors and splitting them again: cat and stack, chunk and split.

cat is one Function whose backward hands each input its own slice of the gradient. stack is
cat of the inputs each given a new dim of size 1. chunk and split return views — narrow slices
of the input (movement's Index with basic slices) — so each piece shares the input's memory
and version, and its gradient lands in its own part of the input's.
"""
import numpy as np

from ..engine import Node, Tensor
from .movement import Index, Reshape, is_int, unsqueeze, wrap_dim

# torch's promotion between tensors of different kinds: the result takes the kind that ranks
# higher (bool < integer < floating), with the largest type of that kind among the inputs —
# int64 with float32 is float32 (NumPy would say float64).
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def promote_types(dtypes) -> np.dtype:
    """The dtype torch gives the result of combining tensors of these dtypes."""
    top = max(_KIND_RANK[d.kind] for d in dtypes)
    return np.result_type(*[d for d in dtypes if _KIND_RANK[d.kind] == top])


def _tensor_list(op: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: tensors must be a list or tuple of Tensors, got "
                        f"{type(tensors).__name__}")
    for position, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a Tensor as element {position} of tensors, got "
                            f"{type(t).__name__}")
    return list(tensors)


def _skipped(shape: tuple) -> bool:
    """torch's cat ignores a 1-d tensor with no elements, whatever the other shapes are."""
    return tuple(shape) == (0,)


class Cat(Node):
    """Concatenation along dim: each input's gradient is its own slice of the output gradient,
    dxₖ = grad[..., offsetₖ : offsetₖ + lengthₖ, ...]"""

    def forward(ctx, *arrays, dim, dtype):
        kept = [a for a in arrays if not _skipped(a.shape)]
        # Where each input lies along dim in the output (None: skipped, it gets no slice).
        ctx.spans, start = [], 0
        for a in arrays:
            if _skipped(a.shape):
                ctx.spans.append(None)
            else:
                ctx.spans.append((start, start + a.shape[dim]))
                start += a.shape[dim]
        if not kept:  # only empty 1-d tensors
            return np.zeros((0,), dtype)
        return np.concatenate([a.astype(dtype, copy=False) for a in kept], axis=dim)

    def backward(ctx, grad):
        before = (slice(None),) * ctx.attrs["dim"]
        return tuple(np.zeros((0,), grad.dtype) if span is None else grad[before + (slice(*span),)]
                     for span in ctx.spans)


def cat(tensors, dim: int = 0) -> Tensor:
    """torch.cat: join tensors of equal shape (but along ``dim``) end to end along ``dim``."""
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("cat: expected a non-empty list of Tensors")
    for position, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"cat: zero-dimensional tensor (at position {position}) cannot "
                               f"be concatenated; unsqueeze it or use stack")
    shaped = [(k, t) for k, t in enumerate(tensors) if not _skipped(t.shape)]
    reference = shaped[0][1] if shaped else tensors[0]
    dim = wrap_dim("cat", dim, reference.ndim)
    for position, t in shaped[1:]:
        if t.ndim != reference.ndim:
            raise RuntimeError(f"cat: tensors must have same number of dimensions: got "
                               f"{reference.ndim} and {t.ndim} (tensor number {position}, "
                               f"shape {tuple(t.shape)})")
        for d, (expected, got) in enumerate(zip(reference.shape, t.shape)):
            if d != dim and expected != got:
                raise RuntimeError(
                    f"cat: sizes of tensors must match except in dimension {dim}. Expected "
                    f"size {expected} but got size {got} for tensor number {position} in the "
                    f"list (shapes {tuple(reference.shape)} and {tuple(t.shape)})")
    dtype = promote_types([t.dtype for t in tensors])
    return Cat.apply(*tensors, dim=dim, dtype=dtype)


def stack(tensors, dim: int = 0) -> Tensor:
    """torch.stack: tensors of one shape joined along a new dimension ``dim``."""
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack: expects a non-empty list of Tensors")
    first = tensors[0]
    for position, t in enumerate(tensors[1:], start=1):
        if t.shape != first.shape:
            raise RuntimeError(f"stack: expects each tensor to be equal size, but got "
                               f"{list(first.shape)} at entry 0 and {list(t.shape)} at entry "
                               f"{position}")
    dim = wrap_dim("stack", dim, first.ndim + 1)
    return Cat.apply(*[unsqueeze(t, dim) for t in tensors], dim=dim,
                     dtype=promote_types([t.dtype for t in tensors]))


def _pieces(input, dim: int, lengths) -> tuple:
    """Consecutive slices of ``input`` along dim with these lengths, as views."""
    before, pieces, start = (slice(None),) * dim, [], 0
    for length in lengths:
        pieces.append(Index.apply(input, index=before + (slice(start, start + length),)))
        start += length
    return tuple(pieces)


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """torch.split: pieces of ``split_size`` along dim (the last one shorter if need be), or
    pieces of the given lengths (which must add up to the dim's size). Views of ``tensor``."""
    if tensor.ndim == 0:
        raise RuntimeError("split: expects at least a 1-dimensional tensor as input")
    dim = wrap_dim("split", dim, tensor.ndim)
    size = tensor.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = tuple(split_size_or_sections)
        if not all(is_int(n) for n in sections):
            raise TypeError(f"split: split_size_or_sections must be an int or a tuple of ints, got "
                            f"{sections}")
        if any(n < 0 for n in sections):
            raise RuntimeError(f"split: split_size_or_sections must have only non-negative "
                               f"entries, but got {list(sections)}")
        if sum(sections) != size:
            raise RuntimeError(f"split: split_size_or_sections {list(sections)} must sum exactly "
                               f"to {size} (the input's size at dimension {dim})")
        return _pieces(tensor, dim, [int(n) for n in sections])
    split_size = split_size_or_sections
    if not is_int(split_size):
        raise TypeError(f"split: split_size_or_sections must be an int or a list of ints, got "
                        f"{type(split_size).__name__}")
    if split_size < 0:
        raise RuntimeError(f"split: split_size_or_sections must be non-negative, but got "
                           f"{split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split: split_size_or_sections can only be 0 if the input's size at "
                           f"dimension {dim} is 0, but it is {size}")
    # torch's count: ceil(size / split_size) pieces, and always at least one.
    count = max(-(-size // split_size), 1) if split_size else 1
    lengths = [split_size] * (count - 1) + [size - split_size * (count - 1)]
    return _pieces(tensor, dim, lengths)


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """torch.chunk: split into pieces of ceil(size / chunks) — which may give fewer than
    ``chunks`` pieces (6 into 4 chunks: 2, 2, 2). Views of ``input``."""
    if not is_int(chunks):
        raise TypeError(f"chunk: chunks must be an int, got {type(chunks).__name__}")
    if input.ndim == 0:
        raise RuntimeError("chunk: expects at least a 1-dimensional tensor as input")
    if chunks <= 0:
        raise RuntimeError(f"chunk: expects `chunks` to be greater than 0, got: {chunks}")
    dim = wrap_dim("chunk", dim, input.ndim)
    size = input.shape[dim]
    if size == 0:  # torch: as many empty pieces as asked for
        return _pieces(input, dim, [0] * chunks)
    return split(input, -(-size // chunks), dim)


def unbind(input, dim: int = 0) -> tuple:
    """torch.unbind: the slices along ``dim``, each without that dim — views of ``input``
    (``input[:, k]`` for dim 1), so each slice's gradient lands in its own part of input's."""
    if input.ndim == 0:
        raise IndexError("unbind: Dimension specified as 0 but tensor has no dimensions (a 0-d "
                         "tensor has nothing to unbind)")
    dim = wrap_dim("unbind", dim, input.ndim)
    before = (slice(None),) * dim
    return tuple(Index.apply(input, index=before + (k,)) for k in range(input.shape[dim]))


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """torch.tensor_split: ``sections`` pieces along ``dim`` as equal as can be (the first
    ``size % sections`` one longer, as np.array_split), or the pieces between the given
    ``indices`` read as Python slice bounds (``[2, 5]``: ``[:2]``, ``[2:5]``, ``[5:]``; a
    negative index counts from the end, and an index past the end gives empty pieces). An int
    or a 0-d int64 tensor are sections; a list, tuple or 1-d int64 tensor are indices. Views."""
    if isinstance(indices_or_sections, Tensor):
        split_by = indices_or_sections
        if split_by.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {split_by.ndim} dims")
        if split_by.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {split_by.dtype}")
        indices_or_sections = split_by._data.tolist()
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = wrap_dim("tensor_split", dim, input.ndim)
    before = (slice(None),) * dim
    if isinstance(indices_or_sections, (list, tuple)):
        indices = tuple(indices_or_sections)
        if not all(is_int(i) for i in indices):
            raise TypeError(f"tensor_split(): argument 'indices' must be tuple of ints, got "
                            f"{indices}")
        bounds = (None,) + tuple(int(i) for i in indices) + (None,)
        return tuple(Index.apply(input, index=before + (slice(start, stop),))
                     for start, stop in zip(bounds[:-1], bounds[1:]))
    sections = indices_or_sections
    if not is_int(sections):
        raise TypeError(f"tensor_split(): argument 'sections' must be an int, a sequence of "
                        f"ints or an integer tensor, not {type(sections).__name__}")
    if sections <= 0:
        raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got "
                           f"{sections}")
    size = input.shape[dim]
    length, longer = divmod(size, int(sections))
    return _pieces(input, dim, [length + 1] * longer + [length] * (int(sections) - longer))


# ---- NumPy's directional joins and splits: cat and tensor_split along a fixed dim ------------
def _at_least(input, ndim: int) -> Tensor:
    """input with dims of size 1 added, as NumPy's atleast_{1,2,3}d: (n,) → (1, n) → (1, n, 1);
    a 2-d (a, b) becomes (a, b, 1). A view."""
    shape = tuple(input.shape)
    if len(shape) >= ndim:
        return input
    if ndim == 3 and len(shape) == 2:
        return Reshape.apply(input, shape=shape + (1,))
    full = {0: (1,) * ndim, 1: (1,) + shape + (1,) * (ndim - 2)}[len(shape)]
    return Reshape.apply(input, shape=full)


def atleast(op: str, ndim: int, tensors):
    """torch.atleast_Nd(*tensors): one tensor, or a tuple for several (or one list of them)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_at_least(t, ndim) for t in _tensor_list(op, tensors[0]))
    made = [_at_least(t, ndim) for t in _tensor_list(op, list(tensors))]
    return made[0] if len(made) == 1 else tuple(made)


def directional_stack(op: str, tensors) -> Tensor:
    """hstack, vstack (row_stack), dstack and column_stack: cat of the tensors, each first made
    of enough dims for the join's dim."""
    tensors = _tensor_list(op, tensors)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    if op == "hstack":
        tensors = [_at_least(t, 1) for t in tensors]
        return cat(tensors, 0 if tensors[0].ndim == 1 else 1)
    if op == "column_stack":
        return cat([Reshape.apply(t, shape=(t.numel(), 1)) if t.ndim <= 1 else t
                    for t in tensors], 1)
    ndim, dim = {"vstack": (2, 0), "row_stack": (2, 0), "dstack": (3, 2)}[op]
    return cat([_at_least(t, ndim) for t in tensors], dim)


def directional_split(op: str, input, indices_or_sections) -> tuple:
    """hsplit (dim 1, or 0 of a 1-d tensor), vsplit (dim 0) and dsplit (dim 2): tensor_split,
    except that a number of sections must divide the dim's size. Views."""
    least, dim = {"hsplit": (1, 1 if input.ndim > 1 else 0), "vsplit": (2, 0),
                  "dsplit": (3, 2)}[op]
    if input.ndim < least:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {least} dimension, but "
                           f"got a tensor with {input.ndim} dimensions!")
    if is_int(indices_or_sections):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)
