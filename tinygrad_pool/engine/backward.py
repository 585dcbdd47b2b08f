"""backward(): the chain rule over the recorded graph.

The nodes that lead to the output, in topological order (each after every node it was computed
from); then, in reverse, each node's complete gradient goes through its op's backward to the
node's inputs, summed where an input was used twice, and into ``.grad`` at the leaves.
Every check (freed buffers, saved tensors written in place) runs before any gradient changes.
"""
from __future__ import annotations

import numpy as np

from ..fast.quiet import quiet
from ..grad_mode import _mode
from .node import BroadcastError, Cast, Node, OnceDifferentiable, _last_write, hooks, unbroadcast
from .tensor import Tensor, _as_array, attach

def _node_of(t: Tensor):
    """The node a tensor's gradient flows into: its Node, or the leaf itself."""
    if t._view is not None:
        return t._view_edge()
    if t.grad_fn is not None:
        return t.grad_fn
    if t._requires_grad:
        return t
    return None


def _topological_order(roots: list) -> list:
    """Every node that leads to the roots, each after all the nodes it was computed from.

    Iterative depth-first search: a chain of 100,000 ops would overflow Python's recursion
    limit. A node seen for the first time is expanded: pushed back, with its inputs above it;
    when it comes off the stack again all of them have been emitted, so it is emitted. (The
    stack holds nodes only, no (node, flag) tuples: allocating one per visit was a noticeable
    share of backward on long chains.)
    """
    order, expanded, emitted = [], set(), set()
    stack = list(roots)
    push, pop = stack.append, stack.pop
    while stack:
        node = pop()
        key = id(node)
        if key in expanded:
            if key not in emitted:  # else a duplicate pushed before it was emitted
                emitted.add(key)
                order.append(node)
            continue
        expanded.add(key)
        push(node)
        if not isinstance(node, Tensor):  # a leaf has no edges
            for edge in node.edges:
                if edge is not None and id(edge) not in expanded:
                    push(edge)
    return order


def _check_node(fn: Node) -> None:
    """Refuse to run a node whose buffers were freed, or whose saved tensors were modified."""
    if fn.released:
        raise RuntimeError(
            f"backward: trying to backward through the graph a second time: the buffers "
            f"{fn.name} saved were freed by the first backward(). Pass retain_graph=True to "
            f"the first backward() to keep them")
    fn._check_saved_versions()


def _seed(root: Tensor, gradient, create_graph: bool):
    if not root._requires_grad:
        raise RuntimeError(
            "backward: this tensor does not require grad and has no grad_fn; create the "
            "inputs with requires_grad=True (and do not compute it under no_grad())")
    if gradient is None:
        if root._data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {root.shape}; gradients can be created "
                f"implicitly only for scalar outputs, so pass gradient= with that shape")
        # (every axis is 1: ndmin gives the shape with less Python work than np.ones; measured:
        # see benchmarks/README.md)
        seed = np.array(1, root._data.dtype, ndmin=root._data.ndim)
    elif create_graph and isinstance(gradient, Tensor):
        # kept a Tensor (its own graph is differentiated too), in the output's dtype as torch's
        seed = gradient if gradient._data.dtype == root._data.dtype else gradient.to(root._data.dtype)
    elif isinstance(gradient, (Tensor, np.ndarray)):  # (an array: this package's tests use them)
        seed = _as_array(gradient, root.dtype)
    else:
        raise TypeError(f"backward: gradient must be a Tensor or None, got "
                        f"{type(gradient).__name__}")
    if seed.shape != root.shape:
        raise BroadcastError(  # (torch's RuntimeError; a ValueError as this package's was)
            f"backward: gradient has shape {seed.shape} but the output has shape {root.shape} "
            f"(Mismatch in shape)")
    if create_graph and not isinstance(seed, Tensor):
        seed = Tensor._make(seed, None)
    return seed


def run_backward(roots, gradients, retain_graph=None, create_graph=False, inputs=None,
                 capture=None, observe=None) -> None:
    """The backward pass from ``roots`` (with the given output gradients).

    Gradients reaching a leaf are accumulated into its ``.grad`` — only for the tensors in
    ``inputs`` when given — unless ``capture`` (a dict: id(node) -> None, for autograd.grad)
    asks for them: then the gradient arriving at each of those nodes is stored there instead
    (an empty dict: no ``.grad`` is touched at all).

    ``observe(node, grad_output, input_grads)``, when given, sees each node as the pass reaches
    it, in the engine's order: a Node with the gradient arriving at its output and what it
    sends to each input (one per input, None where nothing), before it releases its buffers;
    a leaf with the summed gradient it receives and ``input_grads`` None. viz.replay draws from
    this; anomaly mode checks the gradients with it.
    """
    if retain_graph is None:
        retain_graph = create_graph
    if hooks.anomaly is not None:
        observe = hooks.anomaly.backward if observe is None else hooks.anomaly.chain(observe)
    seeds = [_seed(root, g, create_graph) for root, g in zip(roots, gradients)]
    nodes = list(map(_node_of, roots))
    order = _topological_order(nodes)
    # backward(inputs=...): only these tensors' .grad is filled (a non-leaf's too, as torch does)
    accumulate_into = None if inputs is None else {id(_node_of(t)): t for t in inputs}
    last_write = _last_write[0]
    for node in order:  # every check before any gradient changes
        # (release() also resets writes_seen, so one comparison finds both kinds of trouble)
        if not isinstance(node, Tensor) and node.writes_seen != last_write:
            _check_node(node)

    grads = {}  # keyed by identity: equal values are still different nodes
    fresh = set()  # the leaves whose gradient nothing else holds: a sum, or an op's fresh one
    for node, seed in zip(nodes, seeds):
        key = id(node)
        grads[key] = grads[key] + seed if key in grads else seed
    pop = grads.pop
    plain = capture is None and accumulate_into is None  # .backward(): the common case
    # Recorded only under create_graph (no_grad/enable_grad, switched by hand: this is per call)
    mode_before, _mode.grad_enabled = _mode.grad_enabled, create_graph
    try:
        # inf·0 and inf - inf in a gradient are nan, silently, as torch's: NumPy's warnings
        # are switched off once per backward here rather than once per op
        with quiet():
            for node in reversed(order):  # outputs before the inputs they were computed from
                key = id(node)
                grad = pop(key, None)
                if grad is None:
                    continue
                if isinstance(node, Tensor):  # a leaf
                    if observe is not None:
                        observe(node, grad, None)
                    if plain or (capture is None and key in accumulate_into):
                        node._accumulate(grad, adopt=key in fresh)
                    elif capture is not None and key in capture:
                        capture[key] = grad
                    continue
                fn = node
                if plain:
                    if fn.retained is not None:
                        fn.retained._accumulate(grad, adopt=False)
                elif capture is not None:
                    if key in capture:
                        capture[key] = grad
                elif key in accumulate_into:
                    accumulate_into[key]._accumulate(grad, adopt=False)
                input_grads = _backward_on_graph(fn, grad) if create_graph else fn.backward(grad)
                edges = fn.edges
                if type(input_grads) is np.ndarray and len(edges) == 1:  # one gradient, bare
                    input_grads = (input_grads,)
                elif type(input_grads) is not tuple or len(input_grads) != len(edges):
                    input_grads = _as_gradient_tuple(fn, input_grads)
                if observe is not None:  # shown as sent: checked, summed to each input's shape
                    input_grads = tuple([
                        g if g is None else _checked_gradient(fn, k, p._data, g, create_graph)
                        for k, (p, g) in enumerate(zip(fn.parents, input_grads))])
                    observe(fn, grad, input_grads)
                for index, parent_grad in enumerate(input_grads):
                    edge = edges[index]
                    # (an input that needs no gradient is skipped unchecked, as torch does)
                    if parent_grad is None or edge is None:
                        continue
                    data = fn.parents[index]._data
                    # (dtypes by identity: NumPy's built-in ones are singletons, and comparing
                    # them with != costs more than the rest of this check together)
                    if type(parent_grad) is not np.ndarray or parent_grad.dtype is not data.dtype \
                            or parent_grad.shape != data.shape or create_graph:
                        parent_grad = _checked_gradient(fn, index, data, parent_grad, create_graph)
                    key = id(edge)
                    if key in grads:
                        grads[key] = grads[key] + parent_grad
                        if type(edge) is Tensor:  # (only a leaf's .grad may take it over)
                            fresh.add(key)
                    else:
                        grads[key] = parent_grad
                        if type(edge) is Tensor and fn.fresh_gradients:
                            fresh.add(key)
                if not retain_graph:
                    fn.release()
                elif not fn.ran:
                    fn.ran = True
                # Used up: no stale references, so that a gradient's memory is free for the
                # next node's backward
                input_grads = parent_grad = grad = None
    finally:
        _mode.grad_enabled = mode_before


def _as_gradient_tuple(fn: Node, grads) -> tuple:
    """A backward's result as one entry per input (a bare array for a single input is fine)."""
    if type(grads) is not tuple:
        grads = tuple(grads) if isinstance(grads, list) else (grads,)
    if len(grads) != len(fn.parents):
        raise RuntimeError(f"function {fn.name} returned an incorrect number of gradients "
                           f"(expected {len(fn.parents)}, got {len(grads)})")
    return grads


def _checked_gradient(fn: Node, index: int, data: np.ndarray, grad, create_graph: bool):
    """A gradient that is not simply an array of the input's shape and dtype: converted when
    it can be (a NumPy scalar, a broadcastable shape summed down, another dtype, a Tensor
    under create_graph), else an error naming the op and the input."""
    if not isinstance(grad, (np.ndarray, np.generic, Tensor)):
        raise RuntimeError(f"function {fn.name} returned a gradient of type "
                           f"{type(grad).__name__} for input {index}; expected a NumPy array "
                           f"(or None)")
    if isinstance(grad, np.generic):
        grad = np.asarray(grad)
    if grad.shape != data.shape:
        try:
            fits = np.broadcast_shapes(data.shape, grad.shape) == grad.shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"Function {fn.name} returned an invalid gradient at index "
                               f"{index} - got {list(grad.shape)} but expected shape compatible "
                               f"with {list(data.shape)}")
        grad = unbroadcast(grad, data.shape)
    if create_graph:
        if fn.once_differentiable:
            grad = Tensor._make(np.asarray(grad), OnceDifferentiable.node(fn))
        elif not isinstance(grad, Tensor):
            grad = Tensor._make(grad, None)
        if grad.dtype != data.dtype:
            grad = Cast.apply(grad, dtype=data.dtype)
    elif isinstance(grad, Tensor):
        grad = grad._data
    if grad.dtype != data.dtype:
        grad = grad.astype(data.dtype)
    return grad


def _backward_on_graph(fn: Node, grad: Tensor):
    """Run ``fn.backward`` on Tensors: what forward saved is handed over attached to the graph
    (an input as the node it came from, the output as ``fn``'s own, an intermediate as a
    constant), so every operation in the backward is recorded and can itself be differentiated."""
    if fn.once_differentiable:  # its backward works on arrays; its result cannot go further
        return fn.backward(np.asarray(grad))
    sources = dict(fn._saved_sources())
    on_graph = dict(fn.saved)
    for name, array in fn._saved_items():
        source = sources.get(name)
        if source is None:  # an intermediate: a constant, kept an array
            continue
        if source < 0:
            value = Tensor._make(array, fn)
            value._version_counter = fn.output_counter or [fn.output_version]
        else:
            edge = fn.edges[source]
            if array is not fn.parents[source]._data:  # a view of an input: a constant too
                continue
            if isinstance(edge, Tensor):
                value = edge
            else:
                value = Tensor._make(array, edge)
                value._version_counter = fn.parents[source]._counter()
        on_graph[name] = value
    saved, fn.saved = fn.saved, on_graph
    try:
        return fn.backward(grad)
    finally:
        fn.saved = saved


def zero_grad(tensors, set_to_none: bool = True) -> None:
    """Forget the gradients of ``tensors``: ``grad = None`` (PyTorch's default), or zero them
    in place (Module.zero_grad and Optimizer.zero_grad both call this)."""
    for t in tensors:
        if t.grad is None:
            continue
        if set_to_none:
            t.grad = None
        else:
            if t.grad.grad_fn is not None:
                t.grad = t.grad.detach()
            t.grad._data.fill(0)


class Backward:
    """``Tensor.backward``, attached to Tensor (it needs the walk above, which needs Tensor)."""

    def backward(self, gradient=None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad.

        The chain rule in reverse topological order: each node's gradient is complete (summed
        over all its uses) before its Node passes it on to the node's inputs. With
        ``create_graph=True`` the backward pass is itself recorded (higher derivatives);
        ``inputs`` limits accumulation to those tensors.
        """
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        run_backward((self,), (gradient,), retain_graph, create_graph, inputs=inputs)


attach(Backward)
