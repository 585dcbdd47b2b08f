"""``torch.autograd.Function``: a custom op written with Tensor operations, as in PyTorch.

    class Exp(autograd.Function):
        @staticmethod
        def forward(ctx, x):                  # runs under no_grad
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):              # Tensors in, one gradient (or None) per input out
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)                          # y.grad_fn is an ExpBackward node: the ctx above

The engine knows only its own array-level nodes (``engine.Node``). So each custom Function
gets one adapter node class, ``<Name>Backward`` (a ``BackwardNode``): ``apply`` runs the user's
forward, then records an instance of it in the graph like any op; in the backward pass the
instance calls the user's static backward on Tensors and passes on what it returns. The node is
also the ``ctx`` (as in PyTorch), and saved tensors are stored on it as arrays, so the engine's
own checks (a saved tensor modified in place, freed buffers, the shapes of the gradients)
and its ``create_graph`` machinery apply unchanged.

The engine keys gradients by node, so one node cannot tell apart the gradients of two outputs.
A Function with several differentiable outputs therefore gives each of them a small
``OutputNode`` of its own, which hands its gradient on to the Function's node (see there).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..engine import Node, Tensor, _last_write, _node_of, hooks
from ..grad_mode import _mode, no_grad


def once_differentiable(backward):
    """Decorate a custom Function's ``backward`` that cannot itself be differentiated (e.g. it
    leaves the Tensor world): it runs under no_grad, and differentiating its result again (a
    ``create_graph=True`` backward followed by another) is an error, as in PyTorch."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            return backward(ctx, *grads)
    wrapper.once_differentiable = True
    return wrapper


class BackwardNode(Node):
    """One call of a custom Function: the ``ctx`` its forward and backward receive, and the
    node the engine records for it (named ``<Name>Backward``, as torch names it).

    Besides the engine's structure it keeps, for backward, which forward arguments were
    Tensors (``input_positions``: the engine's ``parents`` are those Tensors only), the shape
    and dtype of every output (to pass zeros for an output no gradient reached), and the names
    under which ``save_for_backward`` stored its arrays.
    """

    function = None  # the user's Function class (set on each <Name>Backward class)

    # ---- what forward may call -----------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep these Tensors (inputs, outputs, intermediates, or None) for backward. Their
        arrays are stored on the node, where the engine finds an input's or an output's by
        identity and refuses backward if it was modified in place since."""
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                f"is of type {type(t).__name__}")
        # (the engine's collection, by position; a second call replaces the first, as in torch)
        Node.save_for_backward(self, **{f"saved_tensors[{k}]": None if t is None else t._data
                                        for k, t in enumerate(tensors)})

    def mark_non_differentiable(self, *outputs) -> None:
        """These outputs get no gradient (requires_grad False); backward receives zeros (or
        None, see ``set_materialize_grads``) for them."""
        self.non_differentiable = self.non_differentiable + self._tensors(
            "mark_non_differentiable", outputs)

    def mark_dirty(self, *inputs) -> None:
        """Forward modified these inputs in place (and returns them): they become outputs of
        this node, as an in-place op's tensor becomes the output of the op."""
        self.dirty_tensors = self.dirty_tensors + self._tensors("mark_dirty", inputs)

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None, not zeros, for an output that got no gradient."""
        self.materialize_grads = bool(value)

    @staticmethod
    def _tensors(function: str, values) -> tuple:
        for k, v in enumerate(values):
            if not isinstance(v, Tensor):
                raise TypeError(f"{function}: argument {k} must be a Tensor, got "
                                f"{type(v).__name__}")
        return tuple(values)

    # ---- what backward may read ----------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        """The Tensors forward saved. An input comes back as the input itself and an output as
        a tensor made by this node, so that under ``create_graph`` the operations of backward
        on them are recorded; an intermediate comes back as a constant."""
        self._check_not_released()
        sources = dict(self._saved_sources())  # the engine's finding: input index, or -1
        saved_outputs = self.__dict__.get("saved_outputs", {})
        saved = []
        for name, value in self.saved.items():
            if value is None or isinstance(value, Tensor):
                saved.append(value)  # (a Tensor: create_graph, the engine attached it already)
            elif name in saved_outputs:  # one of several outputs: made by its own node
                node = saved_outputs[name]
                t = Tensor._make(value, node)
                t._version_counter = node.output_counter or [node.output_version]
                saved.append(t)
            elif sources.get(name) == -1:
                saved.append(Tensor._make(value, self))
            elif name in sources and value is self.parents[sources[name]]._data:
                saved.append(self.parents[sources[name]])
            else:
                saved.append(Tensor._make(value, None))
        return tuple(saved)

    # ---- the engine's side ---------------------------------------------------------------
    def backward(self, grad):
        """The user's backward, on Tensors: one gradient per output in, one per forward
        argument out (None for a non-Tensor argument)."""
        input_grads = self.function.backward(self, *self._output_gradients(grad))
        return self._input_gradients(input_grads)

    def _output_gradients(self, grad) -> list:
        if self.output_index is not None:  # one differentiable output: its gradient came here
            received = {self.output_index: grad}
        else:  # several: each slot of the per-output array holds one, or NO_GRADIENT (an int)
            per_output = grad._data if isinstance(grad, Tensor) else grad
            received = {k: g for k, g in enumerate(per_output) if not isinstance(g, int)}
        grads = []
        for k, spec in enumerate(self.output_specs):
            g = received.get(k)
            if g is None and spec is not None and self.materialize_grads:
                g = np.zeros(*spec)  # torch passes zeros for an output no gradient reached
            # (np.asarray: a 0-d array plus NO_GRADIENT comes back a NumPy scalar)
            grads.append(g if g is None or isinstance(g, Tensor)
                         else Tensor._make(np.asarray(g), None))
        return grads

    def _input_gradients(self, grads) -> tuple:
        """The user's gradients checked as torch checks them, then one per engine parent."""
        n = len(self.needs_input_grad)
        if not isinstance(grads, tuple):  # (a list is one value, as in torch)
            grads = (grads,)
        if len(grads) > n and all(g is None for g in grads[n:]):
            grads = grads[:n]  # torch accepts (and drops) trailing Nones
        if len(grads) != n:
            raise RuntimeError(f"function {self.name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(grads)})")
        positions = self.input_positions
        for k, g in enumerate(grads):
            if g is None:
                continue
            if k not in positions:
                raise RuntimeError(f"function {self.name} returned a gradient different than "
                                   f"None at position {k + 1}, but the corresponding forward "
                                   f"input was not a Variable")
            if not isinstance(g, Tensor):
                raise RuntimeError(f"function {self.name} returned a {type(g).__name__} as the "
                                   f"gradient of input {k}: expected Variable or None (got "
                                   f"{type(g).__name__})")
            if not self.needs_input_grad[k]:
                continue  # torch's engine checks only the gradients it passes on
            shape = self.parents[positions.index(k)]._data.shape
            if g._data.shape != shape and not _sums_down_to(g._data.shape, shape):
                raise RuntimeError(f"Function {self.name} returned an invalid gradient at "
                                   f"index {k} - got {list(g._data.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
        return tuple(grads[k] for k in positions)  # the engine sums down and casts the rest


def _sums_down_to(grad_shape: tuple, shape: tuple) -> bool:
    """A gradient of a broadcast shape, which the engine sums back down (torch does too)."""
    try:
        return np.broadcast_shapes(grad_shape, shape) == tuple(grad_shape)
    except ValueError:
        return False


# An output of several that no gradient reached. Its slot in the per-output array holds 0,
# not None: the engine sums the arrays coming from the output nodes with +, and g + 0 is g
# for arrays and Tensors alike (0 + 0 stays 0: still no gradient).
NO_GRADIENT = 0


class OutputNode(Node):
    """The node of one output of a custom Function that has several differentiable outputs.

    Its one parent is a hidden tensor made by the Function's node, holding one slot per output
    (a NumPy object array); its backward puts its gradient in its own slot. The engine adds the
    arrays from all the output nodes (slot by slot) and hands the sum to the Function's node,
    which thus receives every output's gradient in one backward call, as torch's does.
    """

    @classmethod
    def make(cls, function_node: BackwardNode, slots: Tensor, index: int) -> "OutputNode":
        node = cls.__new__(cls)
        node.parents, node.edges = (slots,), (function_node,)
        node.attrs, node.needs_input_grad = {"output": index}, (True,)
        node.writes_seen = function_node.writes_seen
        return node

    @property
    def name(self) -> str:
        return self.edges[0].name  # torch shows every output's grad_fn under the class's name

    def backward(self, grad):
        per_output = np.zeros(self.parents[0]._data.shape, dtype=object)  # all NO_GRADIENT
        per_output[self.attrs["output"]] = grad
        return per_output

    def __repr__(self) -> str:
        return f"<{self.name} output {self.attrs['output']}>"


class Function:
    """Base class of a custom op written the PyTorch way: static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)`` on Tensors, called through ``apply``. (Or torch 2's
    form: ``forward(*args)`` without ctx, plus ``setup_context(ctx, inputs, output)``.)

    forward runs under no_grad and returns a Tensor, or a tuple of them (non-Tensors pass
    through); backward receives one gradient per output and returns one per forward argument.
    Written with Tensor operations, backward differentiates again under ``create_graph=True``.
    """

    _backward_cls = BackwardNode

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Each Function gets its node class, named as torch names it (ExpBackward).
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardNode,), {
            "function": cls, "__module__": cls.__module__,
            "once_differentiable": getattr(cls.backward, "once_differentiable", False)})

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the arguments and, if grad is enabled and a Tensor argument requires
        it, record the call as a node of the graph. Keyword arguments are bound by name to
        forward's positional parameters, as torch does."""
        separate_context = cls.setup_context is not Function.setup_context
        args = _bind_keywords(cls.forward, args, kwargs, skip_ctx=not separate_context)
        node = cls._backward_cls.__new__(cls._backward_cls)
        node.input_positions = tuple(k for k, a in enumerate(args) if isinstance(a, Tensor))
        node.parents = tuple(args[k] for k in node.input_positions)
        node.attrs = {}
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        node.materialize_grads = True
        node.dirty_tensors = node.non_differentiable = ()
        node.output_index = None
        with no_grad():
            if separate_context:
                outputs = cls.forward(*args)
                cls.setup_context(node, args, outputs)
            else:
                outputs = cls.forward(node, *args)
        return _wrap_outputs(node, outputs, _mode.grad_enabled and True in node.needs_input_grad)


FunctionCtx = BackwardNode  # torch's name for the type of ctx (for annotations)


def _bind_keywords(forward, args: tuple, kwargs: dict, skip_ctx: bool) -> tuple:
    """``apply(x, k=3)`` as ``apply(x, 3)``: each keyword goes to the positional parameter of
    forward of that name (torch 2's rule; a keyword-only parameter cannot be reached)."""
    if not kwargs:
        return args
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in inspect.signature(forward).parameters.values() if p.kind in kinds]
    names = names[1:] if skip_ctx else names
    missing = object()
    values = list(args) + [missing] * (len(names) - len(args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        if names.index(name) < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        values[names.index(name)] = value
    values = values[:max(names.index(name) for name in kwargs) + 1]
    for k, value in enumerate(values):
        if value is missing:
            raise TypeError(f"forward() missing required argument: '{names[k]}' (position {k})")
    return tuple(values)


def _wrap_outputs(node: BackwardNode, outputs, record: bool):
    """forward's result as apply returns it: each Tensor output made an output of ``node``
    (when recording), each other value passed through."""
    single = not isinstance(outputs, tuple)
    values = [outputs] if single else list(outputs)
    dirty = {id(t) for t in node.dirty_tensors}
    taken = {id(t) for t in node.parents}
    for k, v in enumerate(values):
        if isinstance(v, Tensor) and id(v) not in dirty:
            # An input handed back as it is (or any tensor already in a graph, or returned
            # twice) must not change: the output is a new tensor on the same memory, as in torch.
            if id(v) in taken or v._requires_grad:
                alias = Tensor._make(v._data, None)
                alias._version_counter = v._counter()
                values[k] = v = alias
            taken.add(id(v))
    if len(dirty - {id(v) for v in values}):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    node.output_specs = tuple((v._data.shape, v._data.dtype) if isinstance(v, Tensor) else None
                              for v in values)
    non_differentiable = {id(t) for t in node.non_differentiable}
    differentiable = [k for k, v in enumerate(values) if isinstance(v, Tensor)
                      and v._data.dtype.kind in "fc" and id(v) not in non_differentiable]
    if record:  # a dirty leaf that requires grad: torch's error, before anything changes
        for t in node.dirty_tensors:
            t._check_inplace()
    node.dirty_tensors = node.non_differentiable = ()  # (no references kept past forward)
    if not record or not differentiable:
        for k in dirty:  # torch counts one more write for the marking
            values[[id(v) for v in values].index(k)]._bump_version()
        return values[0] if single else tuple(values)

    # Recorded as the engine's apply records an op (see engine.Node.apply).
    node.edges = tuple([_node_of(t) for t in node.parents])
    node.writes_seen = _last_write[0]
    if any(t._version for t in node.parents):
        node.input_versions = tuple([t._version for t in node.parents])
    if hooks.anomaly is not None:  # as the engine's apply does for its own ops
        hooks.anomaly.forward(node, node.parents, values[differentiable[0]])
    if len(differentiable) == 1:
        node.output_index = differentiable[0]
        _attach(node, values[node.output_index], node, dirty)
    else:
        slots = Tensor._make(np.zeros(len(values), dtype=object), node)
        node.output_id = id(slots._data)
        output_nodes = {k: OutputNode.make(node, slots, k) for k in differentiable}
        for k, output_node in output_nodes.items():
            _attach(node, values[k], output_node, dirty)
        # A saved output is checked by its own node (the engine tracks one output per node).
        # The Function's node refers to that node too, to attach the saved output to the graph
        # in backward; it is a reference cycle, which backward breaks (saved_outputs is freed
        # with the saved arrays).
        for name, array in node.saved.items():
            for k, output_node in output_nodes.items():
                if array is not None and array is values[k]._data:
                    node.__dict__.setdefault("saved_outputs", {})[name] = output_node
                    output_node.save_for_backward(**output_node.saved, **{name: array})
    for k in dirty - {id(values[k]) for k in differentiable}:  # not taken over: see above
        values[[id(v) for v in values].index(k)]._bump_version()
    return values[0] if single else tuple(values)


def _attach(function_node: BackwardNode, t: Tensor, node, dirty: set) -> None:
    """Make ``node`` the grad_fn of output ``t``."""
    if id(t) in dirty:
        # An input written in place: it takes the node over as an in-place op's tensor does.
        # The Function's parents keep its old self (no loop back through .parents).
        before = Tensor._make(t._data, t.grad_fn)
        before.name, before._version_counter = t.name, t._counter()
        function_node.parents = tuple(before if p is t else p for p in function_node.parents)
        t._take_over(Tensor._make(t._data, node))
        return
    # (A view made inside forward stops being tracked as one: its node is this one.)
    t.grad_fn, t._requires_grad, t._view = node, True, None
    node.output_id = id(t._data)
    if t._version_counter is not None:  # written before: its version now is the saved one
        node.output_counter, node.output_version = t._version_counter, t._version_counter[0]
