"""Lookups by integer index: embedding (rows of a weight matrix) and one_hot.

embedding(input, weight)[..., :] = weight[input[...], :] — a gather of rows, so its gradient is
a scatter-add: every row receives the sum of the output gradients of the places that read it
(a repeated index accumulates). The ``padding_idx`` row receives none, as in PyTorch: its
places are left out, not multiplied by 0 (an inf or nan arriving there gives 0).
"""
import numpy as np

from ..grad_mode import no_grad
from ..engine import Node, Tensor
from ..args import check_flag, check_int, check_number, plural, tensor_arg
from .elementwise import Where
from .movement import IndexScatter

INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))  # torch's Long and Int


class Embedding(Node):
    """y[..., :] = W[i[...], :];  ∂L/∂W[r] = Σ over places p with i[p] = r of g[p]
    (none for the padding row; divided by how often r occurs with ``scale_grad_by_freq``)"""

    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.weight_shape = weight.shape
        ctx.save_for_backward(indices=indices)  # as torch saves them
        return np.take(weight, indices, axis=0)  # always a copy (a 0-d index too), never a view

    def backward(ctx, grad):
        (indices,), padding_idx = ctx.saved_tensors, ctx.attrs["padding_idx"]
        # Constants that shape the gradient (no derivative of their own): how much of each
        # place's gradient goes back, and which places send none.
        if ctx.attrs["scale_grad_by_freq"]:
            counts = np.bincount(indices.ravel(), minlength=ctx.weight_shape[0])
            grad = grad * (1 / counts[indices][..., None]).astype(grad.dtype)
        if padding_idx is not None:  # chosen, as torch skips them: inf · 0 would be nan
            grad = Where.call(np.zeros((), grad.dtype), grad,
                              condition=(indices == padding_idx)[..., None])
        return IndexScatter.call(grad, index=indices, shape=ctx.weight_shape)


def _indices(op: str, input) -> np.ndarray:
    indices = tensor_arg(op, "input", input)._data
    if indices.dtype not in INDEX_DTYPES:
        raise RuntimeError(f"{op}: expected the indices (argument 'input') to have one of the "
                           f"scalar types int64 (Long), int32 (Int); but got dtype "
                           f"{indices.dtype} instead (convert them with input.long())")
    return indices


def _padding_index(op: str, padding_idx, rows: int):
    """padding_idx as a row number in [0, rows) (negative counts from the end), or None."""
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
        raise TypeError(f"{op}: padding_idx must be an int or None, got "
                        f"{type(padding_idx).__name__} {padding_idx!r}")
    if not -rows <= padding_idx < rows:
        # (AssertionError: what torch raises here)
        raise AssertionError(f"Padding_idx must be within num_embeddings: {op} got "
                             f"padding_idx={padding_idx} for a weight of {plural(rows, 'row')}")
    return int(padding_idx) % rows


def _renorm_rows(weight: Tensor, indices: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: each row that ``indices`` reads whose norm exceeds max_norm
    is scaled in place down to max_norm (outside the graph, like an optimizer step)."""
    rows = np.unique(indices)
    values = weight._data[rows]
    norms = np.linalg.norm(values, ord=norm_type, axis=1)
    too_long = norms > max_norm
    if too_long.any():
        # (+ 1e-7 as torch does: a row of norm exactly max_norm is left alone anyway)
        scale = (max_norm / (norms[too_long] + 1e-7)).astype(weight.dtype)
        weight._data[rows[too_long]] = values[too_long] * scale[:, None]
        weight._bump_version()


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer ``input``
    (int64 or int32, any shape); the result has shape input.shape + (embedding_dim,).

    ``padding_idx``: that row gets no gradient. ``max_norm``: rows read here whose
    ``norm_type``-norm exceeds it are first renormalized in place (as in PyTorch).
    ``scale_grad_by_freq``: each row's gradient is divided by how often it occurs in input.
    """
    op = "embedding"
    weight = tensor_arg(op, "weight", weight)
    if weight.ndim != 2:
        raise RuntimeError(f"{op}: 'weight' must be 2-D (num_embeddings, embedding_dim), got "
                           f"shape {weight.shape}")
    rows = weight.shape[0]
    padding_idx = _padding_index(op, padding_idx, rows)
    indices = _indices(op, input)
    scale_grad_by_freq = check_flag(op, "scale_grad_by_freq", scale_grad_by_freq)
    if check_flag(op, "sparse", sparse):
        raise NotImplementedError(f"{op}: sparse=True (sparse gradients) is not supported; "
                                  f"use sparse=False for a dense gradient")
    if max_norm is not None:  # (any number, as torch takes it)
        max_norm = check_number(op, "max_norm", max_norm)
        norm_type = check_number(op, "norm_type", norm_type)
        if weight.dtype.kind != "f":
            raise RuntimeError(f"{op}: weight must be a floating-point tensor to renormalize its "
                               f"rows (max_norm={max_norm}), got dtype {weight.dtype}")
    if indices.size and rows == 0:
        raise RuntimeError(f"{op}: weight has no rows (shape {weight.shape}) to look input's "
                           f"indices up in")
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        bad = indices.min() if indices.min() < 0 else indices.max()
        # (no wrapping of negative indices: torch refuses them, as any index >= rows)
        raise IndexError(f"{op}: index out of range in self: index {bad} of input, for a weight "
                         f"with {plural(rows, 'row')}; expected indices in [0, {rows})")
    if max_norm is not None:
        with no_grad():
            _renorm_rows(weight, indices, max_norm, norm_type)
    return Embedding.apply(weight, indices=indices, padding_idx=padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq)


def one_hot(tensor, num_classes=-1) -> Tensor:
    """An int64 tensor of shape tensor.shape + (num_classes,): 1 at each value's class, else 0.
    ``num_classes=-1`` takes max(tensor) + 1."""
    op = "one_hot"
    labels = tensor_arg(op, "tensor", tensor)._data
    if labels.dtype != np.int64:
        raise RuntimeError(f"{op}: tensor must be an index tensor of dtype int64 (LongTensor), "
                           f"got dtype {labels.dtype} (convert it with tensor.long())")
    num_classes = check_int(op, "num_classes", num_classes)
    if labels.size == 0:
        if num_classes <= 0:
            raise RuntimeError(f"{op}: can not infer total number of classes from empty tensor "
                               f"(shape {labels.shape}); pass num_classes > 0")
    else:
        if labels.min() < 0:
            raise RuntimeError(f"{op}: class values must be non-negative, got {labels.min()}")
        if num_classes == -1:
            num_classes = int(labels.max()) + 1
        elif labels.max() >= num_classes:
            raise RuntimeError(f"{op}: class values must be smaller than num_classes "
                               f"({num_classes}), got {labels.max()}")
    out = np.zeros(labels.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, labels[..., None], 1, axis=-1)
    return Tensor._make(out, None)
