"""``torch.nn.utils``: gradient clipping, and a model's parameters as one flat vector.

clip_grad_norm_        scale every gradient by min(1, max_norm / (‖g‖ + 1e-6)), ‖g‖ the norm of
                       all gradients together; returns ‖g‖ (a 0-d tensor)
clip_grad_value_       clamp every gradient element to [-clip_value, clip_value]
parameters_to_vector   the parameters flattened and joined, differentiably (torch.cat of views)
vector_to_parameters   the parameters made views of consecutive pieces of a vector
"""
import math

import numpy as np

from ..grad_mode import no_grad
from .. import unsupported
from ..args import DimensionError, plural
from ..engine import Node, Tensor


def _parameter_list(op: str, parameters) -> list:
    """A single Tensor or an iterable of them, as a list."""
    if isinstance(parameters, Tensor):
        return [parameters]
    try:
        parameters = list(parameters)
    except TypeError:
        raise TypeError(f"{op}: parameters must be a Tensor or an iterable of Tensors, got "
                        f"{type(parameters).__name__}") from None
    for p in parameters:
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: parameters must be Tensors, got a {type(p).__name__}")
    return parameters


def _as_float(op: str, name: str, value) -> float:
    """``float(value)`` as torch takes it (so "2.5" passes), its error naming op and name."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: {name} must be a number, got {type(value).__name__} "
                        f"{value!r}") from None


def _vector_norm(values: np.ndarray, p: float) -> np.ndarray:
    """‖values‖_p over all elements, in their dtype (torch.linalg.vector_norm's cases)."""
    magnitudes = np.abs(values)
    if p == math.inf:
        return magnitudes.max(initial=0)
    if p == -math.inf:
        return magnitudes.min()
    if p == 0:  # the number of non-zero elements
        return np.asarray(np.count_nonzero(magnitudes), dtype=values.dtype)
    if p == 1:
        return magnitudes.sum()
    if p == 2:
        return np.sqrt(np.vdot(magnitudes, magnitudes))
    return (magnitudes ** p).sum() ** (1 / p)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm from before the scaling, a 0-d tensor.

    As torch: the total is the norm of the per-tensor norms (in their promoted dtype), the
    scale is ``max_norm / (total + 1e-6)`` clamped to 1 and applied even when it is 1, and a
    non-finite total is an error only with ``error_if_nonfinite`` (else every gradient becomes
    NaN). ``foreach`` (torch's kernel choice) is accepted and changes nothing here.
    """
    op = "clip_grad_norm_"
    params = _parameter_list(op, parameters)
    max_norm, norm_type = _as_float(op, "max_norm", max_norm), _as_float(op, "norm_type", norm_type)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return Tensor._make(np.asarray(0.0, dtype=np.float32), None)
    norms = [np.asarray(_vector_norm(g._data, norm_type)) for g in grads]
    dtype = np.result_type(*norms)
    total = np.asarray(_vector_norm(np.array(norms, dtype=dtype), norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite, so it cannot be clipped. To disable this error and "
                           f"scale the gradients by the non-finite norm anyway, set "
                           f"`error_if_nonfinite=False`")
    scale = np.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    with no_grad():
        for g in grads:
            g.mul_(scale.astype(g.dtype))
    return Tensor._make(np.asarray(total), None)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place."""
    op = "clip_grad_value_"
    params = _parameter_list(op, parameters)
    clip_value = _as_float(op, "clip_value", clip_value)
    with no_grad():
        for p in params:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


class Concatenate(Node):
    """v = [x₁.flatten(), x₂.flatten(), …];  ∂L/∂xᵢ = the piece of ∂L/∂v where xᵢ lies, in xᵢ's
    shape"""

    def forward(ctx, *arrays):
        ctx.shapes = [a.shape for a in arrays]
        return np.concatenate([a.reshape(-1) for a in arrays])

    def backward(ctx, grad):
        pieces, start = [], 0
        for shape in ctx.shapes:
            stop = start + math.prod(shape)
            pieces.append(grad[start:stop].reshape(shape))
            start = stop
        return tuple(pieces)


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and joined into one vector (gradients flow back to each)."""
    params = _parameter_list("parameters_to_vector", parameters)
    if not params:
        raise ValueError("parameters_to_vector: expected a non-empty list of Tensors")
    return Concatenate.apply(*params)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Make each parameter's data the next piece of ``vec`` (a view: they share memory, as in
    torch; the parameters take ``vec``'s dtype)."""
    op = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"{op}: vec: expected a Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:  # (a 0-d one cannot be sliced: IndexError, as torch's)
        error = DimensionError if vec.ndim == 0 else RuntimeError
        raise error(f"{op}: vec must be a 1-D tensor, got shape {vec.shape}")
    if vec.dtype.kind != "f":
        raise RuntimeError(f"{op}: vec must be floating point (parameters require gradients), "
                           f"got dtype {vec.dtype}; convert it with vec.float()")
    params = _parameter_list(op, parameters)
    flat, pieces, start = vec._data, [], 0
    for param in params:  # every piece checked before any parameter changes
        piece = flat[start:start + param.numel()]
        if piece.size != param.numel():
            raise RuntimeError(f"vector_to_parameters: shape '{list(param.shape)}' is invalid "
                               f"for input of size {piece.size} (vec has "
                               f"{plural(flat.size, 'element')}, the parameters more)")
        pieces.append(piece.reshape(param.shape))
        start += param.numel()
    for param, piece in zip(params, pieces):
        param._data = piece


__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.utils", "torch.nn.utils")
