"""The graph's node: an op's forward and its derivative side by side, and what it saved.

Each op is a ``Node`` subclass (ops/); applying it once records one node, the ``grad_fn`` of
its output. A node's ``edges`` point at the nodes that produced its inputs, captured when the
op ran — so when a tensor is later modified in place and takes over a new node, the ops that
read its old value still reach the old one, as in PyTorch. A leaf that requires grad is a node
too (the Tensor itself; torch shows it as ``AccumulateGrad``).
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np

from ..grad_mode import _mode
from .tensor import LARGE_BYTES, ReleasedValue, Tensor, _new_object

# Every in-place write in the process takes the next number here. A node that saw the latest
# number when it was made has had nothing written since, so backward skips its saved-tensor
# check (the common case: the optimizer writes before the forward, not between forward and
# backward). Numbers are unique, so a write from any thread always changes ``_last_write``.
_write_numbers = itertools.count(1)
_last_write = [0]


def _note_write(counter: list) -> None:
    counter[0] += 1
    _last_write[0] = next(_write_numbers)



class Hooks:
    """What a layer above plugs into the engine: ``anomaly`` (autograd/anomaly.py switches it
    on) is None, or the checker that sees every op's output and every gradient backward sends.
    A layer above sets it, so the engine imports nothing of it, and an op pays one comparison
    while it is off."""
    anomaly = None


hooks = Hooks()


# needs_input_grad of one and two inputs, indexed by the inputs' requires_grad (always a bool).
_FLAGS_OF_ONE = ((False,), (True,))
_FLAGS_OF_TWO = (((False, False), (False, True)), ((True, False), (True, True)))


def _edge(t: "Tensor"):
    """Where the gradient for input ``t`` of a new node goes: its Node, the leaf itself, or
    nowhere (a constant)."""
    if t._view is not None:
        return t._view_edge()
    return t.grad_fn if t.grad_fn is not None else t if t._requires_grad else None


def _memory_of(array: np.ndarray):
    """What owns an array's memory: the array itself, or the one object NumPy points every view
    of it at (``base``). Two arrays with the same owner may see each other's writes."""
    base = array.base
    return array if base is None else base


class Node:
    """One node of the graph: an op's forward and its derivative, side by side.

    Subclasses define ``forward(ctx, *arrays, **attrs) -> array`` and
    ``backward(ctx, grad_output) -> one gradient (or None) per input``. ``ctx`` is the node
    itself. Forward saves the arrays backward needs with ``ctx.save_for_backward(x=x, ...)``,
    each under a name that says what it is; backward reads them back with
    ``x, ... = ctx.saved_tensors``. That one collection is everything the engine treats as
    saved: an array there that is an input's or the output's (or a view of one) is checked
    for in-place writes before backward uses it, as in PyTorch, and all of it is released
    after backward unless ``retain_graph=True`` (the graph keeps its shape, for pictures, not
    its buffers). Numbers and shapes backward needs are plain attributes on ``ctx``.
    Backward runs with NumPy's floating-point warnings off (switched once per pass, not per
    op): a slope of inf at 0, inf · 0 = nan arrive silently, as in torch.

    A backward written with operators, methods and ``Node.call`` works on arrays (the fast
    path) and on Tensors alike: with ``create_graph=True`` the engine hands it Tensors — the
    saved arrays too, attached to the graph — so that its own operations are recorded and can
    be differentiated again. A backward that only works on arrays sets
    ``once_differentiable = True``.
    """

    saved = {}  # what forward saved, by name (never changed in place: save_for_backward replaces it)
    released = False  # set on the node by release(); a class default saves a store per op
    is_view = False  # the output shares the first input's memory (reshape, permute, index...)
    once_differentiable = False
    # True in an op whose backward returns, for each input, an array it made for that input
    # alone (not grad_output, a view of it, or anything saved): a leaf may keep it as .grad.
    fresh_gradients = False
    # What an op says about itself to the layers that explain it, which ask by attribute and
    # never by class name: ``elementwise``, each output element made from the inputs' elements
    # at the same (broadcast) place, so that anomaly mode can show the arithmetic that broke
    # (log(0.0) = -inf); kinks.py's ``kink_*`` and fan_in's ``window_cells`` are read where
    # they are used (a user's own op opts in by declaring them too).
    elementwise = False
    retained = None  # the tensor whose retain_grad() asked for this node's output gradient
    # For the saved-tensor check (see _saved_tensors): the output array's id, the output's
    # version counter once it has one, and the versions the output and inputs had when saved
    # (None: every input was at version 0).
    output_id = output_counter = input_versions = None
    output_version = 0
    writes_seen = -1  # _last_write when the node was made (-1: check it)
    # Where the node came from, for pictures and error messages, kept through release(): a dict
    # with "line" (anomaly mode: the user's file, line and source text), "modules" (the
    # nn.Module calls whose output this node made: (module, their input nodes)), "anomaly"
    # (anomaly mode: what backward found non-finite here). None for nearly every node.
    origin = None
    ran = False  # a backward with retain_graph=True went through this node (viz.replay asks)

    @classmethod
    def apply(cls, *inputs: "Tensor", return_ctx: bool = False, **attrs):
        """Run forward on the inputs' arrays; record this node if any input needs a gradient.
        (``return_ctx=True``: also hand back the node, for ops that return what it saved.)"""
        ctx = cls.__new__(cls)
        ctx.parents = inputs
        ctx.attrs = attrs
        # One and two inputs (nearly every op) spelled out: in Python 3.11 a comprehension is a
        # function call of its own, and this runs per op, three of them otherwise.
        # The flags come from constant tuples: a new tuple per node is one more object for the
        # garbage collector to walk, and it walks a long graph again and again while it grows
        # (measured: see benchmarks/README.md).
        if len(inputs) == 2:
            a, b = inputs
            ctx.needs_input_grad = needs = _FLAGS_OF_TWO[a._requires_grad][b._requires_grad]
            out = ctx.forward(a._data, b._data, **attrs)
        elif len(inputs) == 1:
            a = inputs[0]
            ctx.needs_input_grad = needs = _FLAGS_OF_ONE[a._requires_grad]
            out = ctx.forward(a._data, **attrs)
        else:
            ctx.needs_input_grad = needs = tuple([t._requires_grad for t in inputs])
            out = ctx.forward(*[t._data for t in inputs], **attrs)
        if type(out) is not np.ndarray:  # NumPy turns 0-d results into scalars
            out = ctx._as_array_output(out)
        if True in needs and _mode.grad_enabled:
            result = Tensor._make(out, ctx)
            # Each input's node now: its Node, the leaf itself, or nothing to send to; and
            # for the saved-tensor check (see _saved_tensors) the inputs' versions if any was
            # ever written (else all 0). (Spelled out for one and two inputs, made by an op and
            # no view: a call or a loop per input is a few % of a small op.)
            if len(inputs) == 2:
                ctx.edges = (a.grad_fn if a._view is None and a.grad_fn is not None else _edge(a),
                             b.grad_fn if b._view is None and b.grad_fn is not None else _edge(b))
                written = (a._version_counter is not None and a._version_counter[0]) \
                    or (b._version_counter is not None and b._version_counter[0])
                large = (a.grad_fn is not None and a._data.nbytes >= LARGE_BYTES) \
                    or (b.grad_fn is not None and b._data.nbytes >= LARGE_BYTES)
            elif len(inputs) == 1:
                ctx.edges = (a.grad_fn if a._view is None and a.grad_fn is not None else _edge(a),)
                written = a._version_counter is not None and a._version_counter[0]
                large = a.grad_fn is not None and a._data.nbytes >= LARGE_BYTES
            else:
                ctx.edges = tuple([_edge(t) for t in inputs])
                written = any([t._version for t in inputs])
                large = any([t.grad_fn is not None and t._data.nbytes >= LARGE_BYTES
                             for t in inputs])
            if written:
                ctx.input_versions = tuple([t._version for t in inputs])
            # ... and which saved array is the output, and the last write it has seen.
            ctx.output_id, ctx.writes_seen = id(out), _last_write[0]
            if large:  # an intermediate of 64 KiB or more among the inputs
                ctx._hold_unsaved_weakly()
        else:
            result = Tensor._make(out, None)
        if cls.is_view:
            result._become_view_of(inputs[0], cls, attrs)
        if hooks.anomaly is not None:
            hooks.anomaly.forward(ctx, inputs, result)
        return (result, ctx) if return_ctx else result

    @classmethod
    def call(cls, *values, **attrs):
        """The op on Tensors (a recorded node) or straight on arrays (just its forward).

        This is what makes a backward written once run on both paths: ``Exp.call(x)`` is
        ``np.exp(x)`` on the fast path and a node in the graph under ``create_graph=True``.
        """
        for v in values:
            if isinstance(v, Tensor):
                return cls.apply(*[v if isinstance(v, Tensor) else Tensor._make(np.asarray(v), None)
                                   for v in values], **attrs)
        ctx = cls.__new__(cls)
        ctx.needs_input_grad = (False,) * len(values)
        return ctx.forward(*values, **attrs)

    # ---- saving: what backward needs, in one collection ---------------------------------
    def save_for_backward(self, **arrays) -> None:
        """Keep these arrays for backward, each under a name that says what it is
        (``ctx.save_for_backward(x=x, argmax=argmax)``; None for one not needed this time).
        A second call replaces the first."""
        self.saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """What forward saved, in the order it was saved (arrays; Tensors under create_graph)."""
        self._check_not_released()
        return tuple(self.saved.values())

    def _check_not_released(self) -> None:
        if self.released:
            raise RuntimeError(
                f"{self.name}: Trying to backward through the graph a second time (or directly "
                f"access saved tensors after they have already been freed). Saved intermediate "
                f"values of the graph are freed when you call .backward() or autograd.grad(). "
                f"Specify retain_graph=True if you need to backward through the graph a second "
                f"time or if you need to access saved tensors after calling backward.")

    def _saved_items(self):
        """(name, array) of each saved array (None and, under create_graph, Tensors skipped)."""
        for name, value in self.saved.items():
            if type(value) is np.ndarray:
                yield name, value

    def _resave(self, name: str, value) -> None:
        """Put ``value`` in the place of the saved array ``name`` (the in-place commit)."""
        self.saved = {**self.saved, name: value}

    def _hold_unsaved_weakly(self) -> None:
        """The graph keeps a large intermediate only while backward needs it, as PyTorch does:
        an input this op did not save is held by a stand-in (``ReleasedValue``), so it is freed
        as soon as nothing else holds it (a conv's output, once the ReLU after it has run);
        one it saved, until backward releases the node (``release``)."""
        saved = [value for _, value in self._saved_items()]
        self.parents = tuple([p if any([value is p._data for value in saved]) else ReleasedValue.of(p)
                              for p in self.parents])

    def _as_array_output(self, out) -> np.ndarray:
        array = np.asarray(out)
        for name, value in list(self.saved.items()):
            if value is out:
                self._resave(name, array)  # a saved output stays the output
        return array

    def _saved_sources(self):
        """(name, source) of each saved array: which input's value it is, or a view of
        (source = that input's index), or the output's (source = -1); an intermediate (made in
        forward, no input's memory) is not listed: nothing can write it in place.

        Nothing is written down per saved array when an op runs (that would be an allocation
        per op on the hot path): an input's version then is in ``input_versions`` (or 0), the
        output's is 0, and its counter reaches ``output_counter`` when it is first made."""
        inputs = [t._data for t in self.parents]
        for name, value in self._saved_items():
            if id(value) == self.output_id:
                yield name, -1
                continue
            for index, array in enumerate(inputs):
                if value is array:
                    yield name, index
                    break
            else:  # a view of an input's memory: that input's writes reach it
                root = _memory_of(value)
                for index, array in enumerate(inputs):
                    if root is _memory_of(array):
                        yield name, index
                        break

    def _check_saved_versions(self) -> None:
        """Backward refuses to use a saved array that was written in place after it was saved."""
        if self.output_id is None:  # not recorded (a stand-in node): nothing was saved
            return
        # (Backward calls this only for nodes made before the last in-place write, so the scan
        # needs no shortcut of its own.)
        for name, source in self._saved_sources():
            if source < 0:
                counter = self.output_counter
                now, then = (0 if counter is None else counter[0]), self.output_version
            else:
                now = self.parents[source]._version
                then = 0 if self.input_versions is None else self.input_versions[source]
            if now != then:
                array = self.saved[name]
                what = "its output" if source < 0 else f"its input {source}"
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{array.dtype} {list(array.shape)}] is at version "
                    f"{now}; expected version {then} instead. It is {what}, saved by "
                    f"{self.name} as {name!r}. Hint: compute what you modify in place after "
                    f"backward(), or use an out-of-place op (x = x + 1 instead of x += 1)")

    @property
    def name(self) -> "NodeName":
        return NodeName.of(type(self).__name__)

    @property
    def next_functions(self) -> tuple:
        """torch's view of the edges: ``(node, 0)`` per input — the Node that made it, an
        ``AccumulateGrad`` for a leaf that requires grad, or None for a constant."""
        return tuple([(AccumulateGrad.of(edge) if isinstance(edge, Tensor) else edge, 0)
                      for edge in self.edges])

    def saved_for_backward(self) -> dict:
        """What forward saved for backward, by name (empty once released)."""
        return {name: value for name, value in self.saved.items() if value is not None}

    def release(self) -> None:
        """Drop what forward saved."""
        saved = self.__dict__
        # Everything goes but the graph's shape, in one step: a new dict of just that (sorting
        # the saved names out one by one, or clearing the dict then refilling it, are several
        # Python steps per node, and this runs once per node of every backward; measured: see
        # benchmarks/README.md). writes_seen = -1: backward checks the node, and finds it
        # released (see run_backward).
        kept = {"parents": saved["parents"], "edges": saved["edges"], "attrs": saved["attrs"],
                "needs_input_grad": saved["needs_input_grad"], "released": True,
                "writes_seen": -1}
        if "origin" in saved:
            kept["origin"] = saved["origin"]
        if "stand_in" in saved:
            kept["stand_in"] = saved["stand_in"]
        # The inputs' values go too where they are large and made by an op (the ones it saved;
        # those it did not are held weakly from the start, see _hold_unsaved_weakly): an
        # intermediate that only the graph held is freed now, as PyTorch frees it. The graph
        # keeps a stand-in of the same shape, dtype, name and node for the pictures, which
        # still shows the value while anyone else holds the tensor. Small inputs stay: they
        # cost no memory worth a stand-in.
        for p in kept["parents"]:
            if p.grad_fn is not None and p._data.nbytes >= LARGE_BYTES:
                kept["parents"] = tuple([ReleasedValue.of(p) for p in kept["parents"]])
                break
        self.__dict__ = kept

    def forward(ctx, *arrays, **attrs):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def backward(ctx, grad_output):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.name}>"


class NodeName(str):
    """A node's name: a str to messages and pictures (``fn.name == "Conv2d"``), and callable as
    torch's ``grad_fn.name()``."""
    __slots__ = ()
    _made: dict = {}

    @classmethod
    def of(cls, name: str) -> "NodeName":
        made = cls._made.get(name)
        if made is None:
            made = cls._made[name] = cls(name)
        return made

    def __call__(self) -> str:
        return str(self)


class AccumulateGrad:
    """The node torch shows at a leaf that requires grad (``grad_fn.next_functions`` reaches it):
    ``variable`` is the leaf, whose ``.grad`` backward adds into. One per leaf while anyone
    holds it, so ``is`` compares them as in torch."""

    __slots__ = ("variable", "__weakref__")
    _of_leaf = weakref.WeakValueDictionary()  # id(leaf) -> its node (which holds the leaf)
    next_functions = ()

    @classmethod
    def of(cls, leaf: "Tensor") -> "AccumulateGrad":
        node = cls._of_leaf.get(id(leaf))
        if node is None:
            node = cls._of_leaf[id(leaf)] = _new_object(cls)
            node.variable = leaf
        return node

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        leaf = self.variable
        what = repr(leaf.name) if leaf.name else f"shape {list(leaf._data.shape)}"
        return f"<AccumulateGrad of the leaf {what}>"


def unbroadcast(grad, shape: tuple):
    """Sum a gradient back down to the shape of an input that NumPy broadcast.

    Broadcasting copies an input along new leading axes and along axes of length 1; each copy
    received its own share of the gradient, so the input's gradient is the sum over those axes.
    (Arrays and Tensors alike: both have ``sum`` and ``reshape``.)
    """
    if shape is None or grad.shape == shape:  # None: the input had the output's shape
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True).reshape(shape)



class BroadcastError(RuntimeError, ValueError):
    """Shapes that do not broadcast: torch raises RuntimeError; this package raised ValueError
    before it followed torch, so the error is both."""


class Cast(Node):
    """A change of dtype: the gradient changes back"""

    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype
        return x.astype(dtype)

    def backward(ctx, grad):
        return Cast.call(grad, dtype=ctx.input_dtype)


class OnceDifferentiable(Node):
    """Stands in for the backward of a Node marked ``once_differentiable``: differentiating
    it again is an error, as in PyTorch."""

    @classmethod
    def node(cls, fn: Node) -> "OnceDifferentiable":
        node = cls.__new__(cls)
        node.parents, node.edges, node.attrs = (), (), {"function": fn.name}
        node.needs_input_grad = ()
        return node

    def backward(ctx, grad):
        raise RuntimeError(f"trying to differentiate twice a function that was marked "
                           f"once_differentiable ({ctx.attrs['function']})")
