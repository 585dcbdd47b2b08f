"""``torch.autograd``'s functions: gradients as values, and higher derivatives.

    from tinygrad_pool import autograd
    (dx,) = autograd.grad(loss, [x], create_graph=True)   # dx is itself in the graph
    (dx.norm_squared := (dx * dx).sum()).backward()        # so it differentiates again

The backward pass itself is the engine's (``tensor.run_backward``); this module chooses what it
returns.
"""
from __future__ import annotations

from ..tensor import Tensor, _node_of, run_backward
from . import functional  # noqa: F401


def _as_tuple(values) -> tuple:
    if values is None:
        return (None,)
    if isinstance(values, Tensor):
        return (values,)
    return tuple(values)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` (weighted by ``grad_outputs``) with respect to ``inputs``,
    returned as a tuple instead of accumulated into ``.grad``. With ``create_graph=True`` they
    are recorded, so they can be differentiated again."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for k, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {k} does not require grad (One of the differentiated "
                               f"Tensors does not require grad)")
    nodes = [_node_of(t) for t in inputs]
    capture = {id(node): None for node in nodes}
    run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=capture)
    results = []
    for k, (t, node) in enumerate(zip(inputs, nodes)):
        g = capture[id(node)]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: input {k} (shape {t.shape}) was not used in the "
                                   f"graph of the outputs (One of the differentiated Tensors "
                                   f"appears to not have been used in the graph. Set "
                                   f"allow_unused=True if this is the desired behavior.)")
            results.append(None)
        elif isinstance(g, Tensor):
            results.append(g)
        else:
            results.append(Tensor._make(g.astype(t.dtype, copy=True), None))
    return tuple(results)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``t.backward()`` for several outputs at once, their gradients summed into ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = (None,) * len(tensors) if grad_tensors is None else _as_tuple(grad_tensors)
    run_backward(tensors, grad_tensors, retain_graph, create_graph,
                 inputs=None if inputs is None else _as_tuple(inputs))
