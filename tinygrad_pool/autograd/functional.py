"""Jacobians, Hessians and their products for small functions, as
``torch.autograd.functional``: each is a few calls of ``autograd.grad``.

A single Tensor input gives single results; a tuple of inputs gives tuples (of tuples for the
Jacobian of several outputs and the Hessian).
"""
from __future__ import annotations

import numpy as np

from ..grad_mode import enable_grad
from ..engine import Tensor
from .differentiate import grad


def _prepare(op: str, func, inputs, create_graph=False) -> tuple:
    if not callable(func):
        raise TypeError(f"{op}: func must be a callable (the function to differentiate), got "
                        f"{type(func).__name__}")
    single = isinstance(inputs, Tensor)
    if not single and not (isinstance(inputs, (tuple, list))
                           and all(isinstance(t, Tensor) for t in inputs)):
        raise TypeError(f"{op}: inputs must be a Tensor or a tuple of Tensors, got "
                        f"{type(inputs).__name__}")
    inputs = (inputs,) if single else tuple(inputs)
    # Fresh leaves, so that the caller's tensors (and their .grad) stay untouched; with
    # create_graph, a view of a caller's tensor that requires grad keeps the results attached
    # to it (as torch does).
    leaves = tuple(t.reshape(t.shape) if create_graph and t.requires_grad
                   else Tensor(t._data, dtype=t.dtype, requires_grad=True) for t in inputs)
    return single, leaves


def _grad(outputs, inputs, grad_outputs, create_graph):
    grads = grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=create_graph,
                 allow_unused=True)
    return tuple(Tensor._make(np.zeros(t.shape, t.dtype), None) if g is None else g
                 for g, t in zip(grads, inputs))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), vᵀ · ∂func/∂inputs)."""
    single, leaves = _prepare("vjp", func, inputs, create_graph)
    with enable_grad():
        out = func(*leaves)
        grads = _grad(out, leaves, v, create_graph)
    return _detached(out, create_graph), grads[0] if single else grads


def jacobian(func, inputs, create_graph=False, strict=False):
    """∂func/∂inputs: for output shape O and input shape I, a tensor of shape O + I."""
    single_in, leaves = _prepare("jacobian", func, inputs, create_graph)
    with enable_grad():
        outputs = func(*leaves)
        single_out = isinstance(outputs, Tensor)
        outputs = (outputs,) if single_out else tuple(outputs)
        rows = []
        for out in outputs:
            per_input = [[] for _ in leaves]
            for index in np.ndindex(out.shape):
                pick = np.zeros(out.shape, out.dtype)
                pick[index] = 1
                grads = _grad(out, leaves, Tensor._make(pick, None), create_graph)
                for k, g in enumerate(grads):
                    per_input[k].append(g)
            rows.append(tuple(_stack(gs, out.shape, t.shape) for gs, t in zip(per_input, leaves)))
    result = tuple(r[0] if single_in else r for r in rows)
    return result[0] if single_out else result


def _stack(grads, out_shape, in_shape) -> Tensor:
    if all(g.grad_fn is None for g in grads):
        return Tensor._make(np.stack([g._data for g in grads]).reshape(out_shape + in_shape), None)
    flat = [g.reshape(1, *in_shape) for g in grads]
    # Stacking with recorded ops: each row placed by a one-hot product keeps it differentiable.
    rows = len(flat)
    eye = np.eye(rows, dtype=grads[0].dtype)
    total = sum((Tensor._make(eye[k].reshape((rows,) + (1,) * len(in_shape)), None) * f
                 for k, f in enumerate(flat)), start=Tensor._make(np.zeros((rows,) + in_shape, eye.dtype), None))
    return total.reshape(out_shape + in_shape)


def hessian(func, inputs, create_graph=False, strict=False):
    """∂²func/∂inputs² of a scalar function."""
    single, leaves = _prepare("hessian", func, inputs, create_graph)

    def gradient(*args):
        with enable_grad():
            grads = _grad(func(*args), args, None, create_graph=True)
        return grads[0] if single else grads

    return jacobian(gradient, leaves[0] if single else leaves, create_graph=create_graph)


def hvp(func, inputs, v, create_graph=False, strict=False):
    """(func(inputs), H · v) for a scalar function, H its Hessian (two backward passes)."""
    single, leaves = _prepare("hvp", func, inputs, create_graph)
    vs = (v,) if isinstance(v, Tensor) else tuple(v)
    with enable_grad():
        out = func(*leaves)
        grads = _grad(out, leaves, None, create_graph=True)
        dot = sum(((g * vk).sum() for g, vk in zip(grads, vs)), start=0.0)
        products = _grad(dot, leaves, None, create_graph)
    return _detached(out, create_graph), products[0] if single else products


def _detached(out, create_graph):
    if create_graph or not isinstance(out, Tensor):
        return out
    return out.detach()
