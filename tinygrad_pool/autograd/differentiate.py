"""``torch.autograd.grad`` and ``torch.autograd.backward``: the engine's backward pass, with
what it returns chosen as torch chooses (gradients as values, or accumulated into ``.grad``)."""
from __future__ import annotations

import warnings

import numpy as np

from ..engine import Tensor, _node_of, run_backward
from ..args import check_flag


def _tensors(function: str, argument: str, values) -> tuple:
    """One Tensor or a sequence of them, as a tuple (torch accepts both)."""
    if isinstance(values, Tensor):
        return (values,)
    if isinstance(values, (list, tuple)) or hasattr(values, "__next__"):
        values = tuple(values)
        for k, t in enumerate(values):
            if not isinstance(t, Tensor):
                raise TypeError(f"{function}: {argument}[{k}] must be a Tensor, got "
                                f"{type(t).__name__}")
        return values
    raise TypeError(f"{function}: {argument} must be a Tensor or a sequence of Tensors, got "
                    f"{type(values).__name__}")


def _output_gradients(function: str, argument: str, gradients, outputs: tuple) -> tuple:
    """The gradient for each output (None: ones, for a scalar output), checked against it."""
    if gradients is None:
        return (None,) * len(outputs)
    if isinstance(gradients, Tensor):
        gradients = (gradients,)
    elif not isinstance(gradients, (list, tuple)):
        raise TypeError(f"{function}: {argument} must be a Tensor, a sequence of Tensors (or "
                        f"None) or None, got {type(gradients).__name__}")
    gradients = tuple(gradients)
    for k, g in enumerate(gradients):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"{function}: {argument}[{k}] must be a Tensor or None, got "
                            f"{type(g).__name__} (gradients can be either Tensors or None)")
    if len(gradients) != len(outputs):
        raise RuntimeError(f"{function}: got {len(outputs)} tensors and {len(gradients)} "
                           f"gradients ({argument} needs one per output)")
    for k, (g, out) in enumerate(zip(gradients, outputs)):
        if g is not None and g.shape != out.shape:
            raise RuntimeError(f"{function}: Mismatch in shape: grad_output[{k}] has a shape of "
                               f"{g.shape!r} and output[{k}] has a shape of {out.shape!r}. "
                               f"({argument} needs one gradient per output, of its shape)")
    return gradients


def _check_flags(function: str, create_graph, **optional) -> None:
    """create_graph a bool; retain_graph and the like None (their default) or a bool."""
    check_flag(function, "create_graph", create_graph)
    for name, value in optional.items():
        if value is not None:
            check_flag(function, name, value)


def _check_outputs(function: str, outputs: tuple) -> None:
    for k, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"{function}: element {k} of tensors does not require grad and "
                               f"does not have a grad_fn")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` (weighted by ``grad_outputs``) with respect to ``inputs``,
    returned as a tuple instead of accumulated into ``.grad``. With ``create_graph=True`` they
    are recorded, so they can be differentiated again. An input the outputs do not depend on
    is an error, or None with ``allow_unused=True``, or zeros with ``materialize_grads=True``."""
    _check_flags("grad", create_graph, retain_graph=retain_graph,
                 allow_unused=allow_unused, is_grads_batched=is_grads_batched,
                 materialize_grads=materialize_grads)
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True (vmap over grad_outputs) is not "
                                  "supported; call grad once per grad_outputs")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    names = None
    if isinstance(inputs, dict):
        names, inputs = list(inputs), list(inputs.values())
    outputs = _tensors("grad", "outputs", outputs)
    inputs = _tensors("grad", "inputs", inputs)
    if not inputs:
        raise RuntimeError("grad: `inputs` argument to `grad()` cannot be empty.")
    grad_outputs = _output_gradients("grad", "grad_outputs", grad_outputs, outputs)
    for k, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"grad: input {k} does not require grad (One of the "
                               f"differentiated Tensors does not require grad)")
    _check_outputs("grad", outputs)
    nodes = [_node_of(t) for t in inputs]
    capture = {id(node): None for node in nodes}
    run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=capture)
    results = []
    for k, (t, node) in enumerate(zip(inputs, nodes)):
        g = capture[id(node)]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: The differentiated Tensor at index {k} appears to not "
                                   f"have been used in the graph. Set allow_unused=True if this "
                                   f"is the desired behavior. (Its shape: {tuple(t.shape)}.)")
            results.append(Tensor._make(np.zeros(t.shape, t.dtype), None) if materialize_grads else None)
        elif isinstance(g, Tensor):
            results.append(g)
        else:
            results.append(Tensor._make(g.astype(t.dtype, copy=True), None))
    return dict(zip(names, results)) if names is not None else tuple(results)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """``t.backward()`` for several outputs at once, their gradients summed into ``.grad``
    (only into those of ``inputs``, when given)."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("backward: `grad_tensors` and `grad_variables` (deprecated) "
                               "arguments both passed to `backward()`. Please only use "
                               "`grad_tensors`.")
        grad_tensors = grad_variables
    _check_flags("backward", create_graph, retain_graph=retain_graph)
    tensors = _tensors("backward", "tensors", tensors)
    grad_tensors = _output_gradients("backward", "grad_tensors", grad_tensors, tensors)
    if inputs is not None:
        inputs = _tensors("backward", "inputs", list(inputs.values())
                          if isinstance(inputs, dict) else inputs)
        if not inputs:
            raise RuntimeError("backward: `inputs` argument to `backward()` cannot be empty.")
        for k, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(f"backward: inputs[{k}]: can't retain_grad on Tensor that "
                                   f"has requires_grad=False")
    _check_outputs("backward", tensors)
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs)
