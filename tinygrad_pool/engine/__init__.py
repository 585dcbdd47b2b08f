"""The engine: a Tensor records the Function that made it, and backward() walks that graph.

The graph is made of nodes: each Function (an op applied once) is a node, and so is each leaf
tensor that requires grad (where gradients are accumulated). A node's ``edges`` point at the
nodes that produced its inputs, captured when the op ran — so when a tensor is later modified
in place and takes over a new node, the ops that read its old value still reach the old one,
as in PyTorch. backward() orders the nodes topologically and applies the chain rule in reverse.

Everything else in the package is either an op (a small Function in ``ops/``) or a layer built
on top of this file (``nn``, ``optim``, ``autograd``, ``gradcheck``, ``viz``). Read this file and
one op file and you have seen the whole engine.
"""
from __future__ import annotations

import builtins
import itertools
import threading
import weakref

import numpy as np

from .. import dtypes, unsupported
from ..devices import CPU, check_device, missing  # noqa: F401  (check_device: re-exported)
from ..devices import device as device_of
from ..fast.quiet import quiet
from ..grad_mode import _mode, enable_grad, no_grad  # noqa: F401  (no_grad: re-exported)


# Every in-place write in the process takes the next number here. A node that saw the latest
# number when it was made has had nothing written since, so backward skips its saved-tensor
# check (the common case: the optimizer writes before the forward, not between forward and
# backward). Numbers are unique, so a write from any thread always changes ``_last_write``.
_write_numbers = itertools.count(1)
_last_write = [0]


def _note_write(counter: list) -> None:
    counter[0] += 1
    _last_write[0] = next(_write_numbers)


# An intermediate this large is what the graph must not keep alive longer than backward needs
# it (see ReleasedValue); smaller ones cost no memory worth a stand-in.
LARGE_BYTES = 1 << 16

# Anomaly mode (autograd/anomaly.py switches it on): None, or the checker that sees every op's
# output and every gradient backward sends. A layer above sets it, so the engine imports nothing
# of it, and an op pays one comparison while it is off.
_anomaly = None


# needs_input_grad of one and two inputs, indexed by the inputs' requires_grad (always a bool).
_FLAGS_OF_ONE = ((False,), (True,))
_FLAGS_OF_TWO = (((False, False), (False, True)), ((True, False), (True, True)))


def _edge(t: "Tensor"):
    """Where the gradient for input ``t`` of a new node goes: its Function, the leaf itself, or
    nowhere (a constant)."""
    if t._view is not None:
        return t._view_edge()
    return t.grad_fn if t.grad_fn is not None else t if t._requires_grad else None


# (Transitional, while ops move to save_for_backward: what is not saved state on a node.)
_LEGACY_STRUCTURE = frozenset((
    "parents", "edges", "attrs", "needs_input_grad", "released", "retained", "output_id",
    "output_counter", "output_version", "input_versions", "writes_seen", "origin", "ran",
    "stand_in", "saved", "input_positions", "output_specs", "output_index", "materialize_grads",
    "dirty_tensors", "non_differentiable", "saved_outputs"))


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
            # Each input's node now: its Function, the leaf itself, or nothing to send to; and
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
        if _anomaly is not None:
            _anomaly.forward(ctx, inputs, result)
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
        if self.released:
            raise RuntimeError(
                f"{self.name}: Trying to backward through the graph a second time (or directly "
                f"access saved tensors after they have already been freed). Saved intermediate "
                f"values of the graph are freed when you call .backward() or autograd.grad(). "
                f"Specify retain_graph=True if you need to backward through the graph a second "
                f"time or if you need to access saved tensors after calling backward.")
        return tuple(self.saved.values())

    def _saved_items(self):
        """(name, array) of each saved array. (Transitional: also the arrays an op not yet
        converted stores as attributes.)"""
        for name, value in self.saved.items():
            if type(value) is np.ndarray:
                yield name, value
        for name, value in list(self.__dict__.items()):
            if type(value) is np.ndarray:
                yield name, value

    def _resave(self, name: str, value) -> None:
        """Put ``value`` in the place of the saved array ``name`` (an in-place commit, or
        create_graph handing backward Tensors)."""
        if name in self.saved:
            self.saved = {**self.saved, name: value}
        else:  # (transitional: an op that stores its saved arrays as attributes)
            setattr(self, name, value)

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
        for name, value in list(self.saved.items()) + list(self.__dict__.items()):
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
                array = dict(self._saved_items())[name]
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
        """torch's view of the edges: ``(node, 0)`` per input — the Function that made it, an
        ``AccumulateGrad`` for a leaf that requires grad, or None for a constant."""
        return tuple([(AccumulateGrad.of(edge) if isinstance(edge, Tensor) else edge, 0)
                      for edge in self.edges])

    def saved_for_backward(self) -> dict:
        """What forward saved for backward, by name (empty once released)."""
        legacy = {k: v for k, v in vars(self).items() if k not in _LEGACY_STRUCTURE}
        return {**{k: v for k, v in self.saved.items() if v is not None}, **legacy}

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


def _as_array(data, dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data._data
    array = np.asarray(data, dtype=dtype)
    if array.dtype.kind not in "fiub":  # strings, objects, complex numbers, dates
        raise TypeError(f"Tensor: cannot make a tensor from {type(data).__name__} data of "
                        f"dtype {array.dtype} (expected numbers or bools)")
    return array


def _is_size(value) -> bool:
    return isinstance(value, (builtins.int, np.integer)) and not isinstance(value, (builtins.bool,
                                                                                      np.bool_))


def _constructor_array(args: tuple, dtype: np.dtype) -> np.ndarray:
    """The array of ``Tensor(*args)``: sizes (ints, or one Size) or one piece of data."""
    if not args:
        return np.empty((0,), dtype)
    if all(map(_is_size, args)) or (len(args) == 1 and isinstance(args[0], Size)):
        shape = tuple(builtins.int(n) for n in (args[0] if isinstance(args[0], Size) else args))
        if builtins.min(shape, default=0) < 0:
            raise RuntimeError(f"Tensor: Trying to create tensor with negative dimension "
                               f"{builtins.min(shape)}: {list(shape)}")
        return np.zeros(shape, dtype)
    if len(args) > 1:
        raise TypeError(f"Tensor: takes one piece of data or sizes that are ints, got "
                        f"{', '.join(type(a).__name__ for a in args)}")
    data = args[0]
    if isinstance(data, (str, bytes)):
        raise TypeError(f"Tensor: cannot make a tensor from {type(data).__name__} data (expected "
                        f"numbers, nested lists of numbers or a NumPy array)")
    if not isinstance(data, (Tensor, list, tuple, np.ndarray)):
        raise TypeError(f"Tensor: data must be a sequence, got {type(data).__name__} (a 0-d "
                        f"tensor is tensor(value))")
    try:
        values = _as_array(data, None)  # (its own dtype first: strings are told from numbers)
    except ValueError:
        raise ValueError(f"Tensor: {ragged_detail(data)}") from None
    return np.array(values, dtype=dtype)


def ragged_detail(data) -> str:
    """What is wrong with nested lists that are not rectangular, in torch's words: the first
    depth where two entries differ in length."""
    level, dim = [data], 0
    while level:
        sequences = [isinstance(item, (list, tuple)) for item in level]
        if not any(sequences):
            break
        lengths = [len(item) if is_sequence else None for item, is_sequence in zip(level, sequences)]
        for length in lengths[1:]:
            if length != lengths[0]:
                got = "a number" if length is None else length
                return (f"expected sequence of length {lengths[0]} at dim {dim} (got {got}): "
                        f"nested lists must be rectangular")
        level, dim = [item for sub in level for item in sub], dim + 1
    return "nested lists must be rectangular (every list at one depth of the same length)"


def _check_can_require_grad(dtype, op: str = "Tensor") -> None:
    if not np.issubdtype(dtype, np.floating):
        raise RuntimeError(f"{op}: only Tensors of floating point dtype can require gradients "
                           f"(input has dtype {dtype}; convert it first with x.float() or "
                           f"x.double(), e.g. x = x.float().requires_grad_())")


def numpy_spellings(method):
    """torch takes NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (a method or
    function so decorated does too; both spellings at once is Python's TypeError, as torch's)."""
    def with_numpy_spellings(*args, **kwargs):
        if kwargs:
            for numpy_name, torch_name in (("axis", "dim"), ("keepdims", "keepdim")):
                if numpy_name in kwargs:
                    if torch_name in kwargs:
                        raise TypeError(f"{method.__name__}() got multiple values for argument "
                                        f"'{torch_name}' ({numpy_name}= is its NumPy spelling)")
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        return method(*args, **kwargs)
    with_numpy_spellings.__name__ = method.__name__
    with_numpy_spellings.__qualname__ = method.__qualname__
    with_numpy_spellings.__doc__ = method.__doc__
    with_numpy_spellings.__wrapped__ = method
    return with_numpy_spellings


class _Omitted:
    """The default of an argument that torch takes only as a value of its own type: left out,
    it has its default meaning; given as None, it is refused, as torch refuses
    ``x.max(dim=None)`` or ``x.sum(1, keepdim=None)``. (NumPy's ``keepdims=<no value>`` is
    the same device.)"""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


OMITTED = _Omitted()


_NOT_COMPARABLE = (type(None), str, bytes, list, tuple, dict, set)
_BOOLS = (builtins.bool, np.bool_)


class Size(tuple):
    """A tensor's shape: a tuple of ints (torch.Size), printed as ``Size([2, 3])``."""

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))

    def __repr__(self) -> str:
        return f"Size({list(self)})"

    def __str__(self) -> str:  # as a plain tuple: messages such as "got shape (2, 3)" stay short
        return tuple.__repr__(self)

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item


# Leaf gradients are summed under one lock: two threads running backward on one shared model
# must both land in .grad (a read-add-write without it loses updates).
_ACCUMULATE_LOCK = threading.Lock()


class NotAnOperand(TypeError):
    """Raised inside an operator whose other operand it cannot take (a string, a list, None):
    the operator returns NotImplemented, so Python tries the other operand's reflected method
    and then raises its own TypeError ("unsupported operand type(s) for +"), as torch's do."""


_new_object = object.__new__


class Tensor:
    """An n-dimensional array that remembers how it was computed.

    ``_data`` is its NumPy array (``numpy()`` hands it to the user; ``data`` is torch's detached
    Tensor over the same memory); ``grad_fn`` the Function that produced it (None for a leaf);
    ``grad`` the gradient backward() accumulated into it (a Tensor, or None).
    """

    __slots__ = ("_data", "_grad", "_requires_grad", "grad_fn", "name", "retains_grad",
                 "_version_counter", "_view", "__weakref__")
    __array_ufunc__ = None  # ndarray + Tensor must call Tensor.__radd__, not bypass the graph

    def __new__(cls, *args, requires_grad: bool = False, dtype=None, name: str | None = None,
                device=None):
        if cls is Tensor and len(args) == 1 and isinstance(args[0], Tensor) and \
                requires_grad is False and dtype is None and name is None and device is None:
            # torch.Tensor(t): an alias of t (same memory, dtype and graph), as torch's
            return V.Reshape.apply(args[0], shape=args[0]._data.shape)
        return _new_object(cls)

    def __init__(self, *args, requires_grad: bool = False, dtype=None, name: str | None = None,
                 device=None):
        """``torch.Tensor``: ``Tensor(data)`` a copy of the data in the default dtype (float32,
        whatever the data's: torch's legacy constructor), ``Tensor(2, 3)`` or
        ``Tensor(Size([2, 3]))`` a tensor of that shape (zeros here; torch's is uninitialised),
        ``Tensor()`` an empty one. Beyond torch: ``dtype=`` keeps another dtype, and
        ``requires_grad=`` and ``name=`` (shown in pictures) are set at once."""
        if type(self) is Tensor and len(args) == 1 and isinstance(args[0], Tensor) and \
                requires_grad is False and dtype is None and name is None and device is None:
            return  # Tensor(t): __new__ made the alias
        check_device("Tensor", device)
        target = dtypes.or_default("Tensor", dtype)
        array = _constructor_array(args, target)
        if requires_grad:
            _check_can_require_grad(array.dtype)
        self._data = array
        self._grad = None
        self._requires_grad = bool(requires_grad)
        self.grad_fn = None
        self.name = name
        self.retains_grad = False
        self._version_counter = None
        self._view = None

    @staticmethod
    def _make(data: np.ndarray, grad_fn: Node | None) -> "Tensor":
        """Wrap an op's output without re-checking it (the hot path of every op: one store per
        field, no tuple, no class binding; measured: see benchmarks/README.md)."""
        t = _new_object(Tensor)
        t._data = data
        t.grad_fn = grad_fn
        t._requires_grad = grad_fn is not None
        t._grad = t.name = t._version_counter = t._view = None
        t.retains_grad = False
        return t

    # ---- what it is -------------------------------------------------------------------------
    shape = property(lambda self: Size(self._data.shape))  # (own code reads data.shape directly)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    is_leaf = property(lambda self: self.grad_fn is None)
    device = CPU  # (torch's device: the only one here)
    is_cuda = is_mps = is_xpu = is_meta = False
    is_cpu = True

    def get_device(self) -> int:
        return -1  # (torch's answer for a CPU tensor)

    def cuda(self, device=None, non_blocking: bool = False):
        raise missing("cuda", device_of("cuda"))

    def is_pinned(self) -> bool:
        return False

    def pin_memory(self):
        raise RuntimeError("pin_memory: Cannot access accelerator device when none is available "
                           "(pinned memory needs an accelerator; tinygrad_pool runs on the CPU)")

    def dim(self) -> int:
        return self._data.ndim

    @property
    def grad(self):
        """The gradient backward() accumulated here: a Tensor of this tensor's shape and dtype,
        or None."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        """Checked at assignment, as torch checks it: a Tensor of our shape and dtype, or None."""
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad: assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"grad: attempting to assign a gradient of size "
                                   f"'{list(value._data.shape)}' to a tensor of size "
                                   f"'{list(self._data.shape)}'. Please ensure that the gradient "
                                   f"and the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(f"grad: attempting to assign a gradient with dtype "
                                   f"{value._data.dtype} to a tensor of dtype "
                                   f"{self._data.dtype}; they must match (convert it first: "
                                   f"x.grad = g{A.cast_spelling(self._data.dtype)}, or "
                                   f"g.to(x.dtype))")
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self.grad_fn is not None and not flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        if flag:
            _check_can_require_grad(self._data.dtype, "requires_grad")
        self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if type(requires_grad) is not bool:
            requires_grad = A.check_flag("requires_grad_", "requires_grad", requires_grad)
        if requires_grad:
            _check_can_require_grad(self._data.dtype, "requires_grad_")
        self.requires_grad = requires_grad
        return self

    @property
    def _version(self) -> int:
        """How many times this tensor's memory was written in place (PyTorch's ``_version``)."""
        return 0 if self._version_counter is None else self._version_counter[0]

    def _counter(self) -> list:
        """The version counter, shared by every view of the same memory (made on first use,
        and then handed to the node that made this tensor, which may have saved it)."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = [0]
            if self.grad_fn is not None:
                self.grad_fn.output_counter = counter
        return counter

    def size(self, dim: int | None = None):
        """PyTorch's ``size()``: the shape, or the length of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[R.normalize_axis("size", self._data.ndim, dim)]

    def numel(self) -> int:
        return self._data.size

    def __len__(self) -> int:
        return len(self._data)

    def numpy(self) -> np.ndarray:
        return self._data

    @property
    def data(self) -> "Tensor":
        """torch's ``.data``: a Tensor over the same memory, outside autograd (no grad_fn, no
        requires_grad, and a version counter of its own: writes through it are not seen by
        the checks that guard saved tensors — which is why torch recommends ``detach()``)."""
        return Tensor._make(self._data, None)

    @data.setter
    def data(self, value: "Tensor") -> None:
        """``p.data = t``: p takes t's memory (shape and dtype too), keeping its own node,
        grad and flags, as torch's."""
        if not isinstance(value, Tensor):
            raise TypeError(f"data: value must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"item: a Tensor with {self._data.size} elements cannot be "
                               f"converted to Scalar (input has shape {list(self._data.shape)})")
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"(this one has shape {list(self._data.shape)})")
        return self._data.item()

    def __float__(self): return float(self._scalar())
    def __int__(self): return int(self._scalar())

    def __index__(self):
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {list(self._data.shape)}; use .any() or .all())")
        return bool(self._data.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` and ``f"{loss}"`` give the number for a 0-d tensor, as in torch."""
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string passed to Tensor.__format__ (a format "
                            f"spec needs a 0-d tensor; this one has shape {list(self._data.shape)})")
        return str(self)

    # ---- dtype conversions (torch's names; a float-to-float cast stays in the graph) ---------
    def to(self, *args, dtype=None, device=None, copy: bool = False, non_blocking: bool = False):
        """``to(dtype)``, ``to("cpu")``, ``to(other_tensor)``, ``to(device, dtype)``."""
        note = ""
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, device_of) or isinstance(arg, (str, builtins.int, np.integer)) \
                    and arg not in dtypes.DTYPES and not isinstance(arg, builtins.bool):
                # (a string that is no dtype's name, or an int, names a device, as in torch)
                device, note = arg, " (an argument that names no dtype is read as a device)"
            else:
                dtype = arg
        check_device("to", device, note)
        if dtype is None:
            return self.clone() if copy else self
        dtype = dtypes.as_dtype("to", dtype)
        if dtype == self._data.dtype:
            return self.clone() if copy else self
        if dtype.kind == "f" and self._data.dtype.kind == "f":
            return V.Cast.apply(self, dtype=dtype)
        return Tensor._make(self._data.astype(dtype), None)  # not differentiable: no graph

    def type(self, dtype=None):
        """The dtype's name, or a copy converted to ``dtype`` (a dtype, or its name)."""
        if dtype is None:
            return str(self._data.dtype)
        if isinstance(dtype, str) and dtype not in dtypes.DTYPES:
            raise ValueError(f"type: invalid type {dtype!r}: dtype must be one of "
                             f"tinygrad_pool's dtypes or its name")
        if not isinstance(dtype, (str, np.dtype)):
            raise TypeError(f"type: dtype must be a dtype or its name, got "
                            f"{type(dtype).__name__} ({dtype!r})")
        return self.to(dtypes.as_dtype("type", dtype))

    def float(self): return self.to(dtypes.float32)
    def double(self): return self.to(dtypes.float64)
    def half(self): return self.to(dtypes.float16)
    def long(self): return self.to(dtypes.int64)
    def int(self): return self.to(dtypes.int32)
    def bool(self): return self.to(dtypes.bool)
    def type_as(self, other): return self.to(E.check_tensor("type_as", "other", other).dtype)
    def cpu(self): return self

    def clone(self) -> "Tensor":
        """A copy in new memory, still in the graph (its gradient passes straight through)."""
        return V.Clone.apply(self)

    def detach(self) -> "Tensor":
        """The same data, cut off from the graph (its in-place writes still count as the
        original's: the two share one version counter, as in PyTorch)."""
        t = Tensor._make(self._data, None)
        t._version_counter = self._counter()
        return t

    def retain_grad(self) -> "Tensor":
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep theirs)."""
        if self.grad_fn is not None:
            self.grad_fn.retained = self
        self.retains_grad = True
        return self

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="Tensor(", precision=4)
        extras = [f"dtype={self.dtype}"]
        if self.name:
            extras.insert(0, f"name={self.name!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"Tensor({body}, {', '.join(extras)})"

    # ---- backpropagation --------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad.

        The chain rule in reverse topological order: each node's gradient is complete (summed
        over all its uses) before its Function passes it on to the node's inputs. With
        ``create_graph=True`` the backward pass is itself recorded (higher derivatives);
        ``inputs`` limits accumulation to those tensors.
        """
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        run_backward((self,), (gradient,), retain_graph, create_graph, inputs=inputs)

    def _accumulate(self, grad, adopt: bool) -> None:
        """Add ``grad`` into ``.grad``, as PyTorch's AccumulateGrad does. ``adopt``: nothing
        else holds ``grad`` (its op made it for this input alone), so it may become ``.grad``."""
        with _ACCUMULATE_LOCK:
            if isinstance(grad, Tensor):  # create_graph: .grad itself is part of a graph
                self._grad = grad if self._grad is None else self._grad + grad
            elif self._grad is None:
                # Taken over without a copy when the op that made it declared it fresh (PyTorch
                # "steals" such a gradient too): copying a large gradient costs as much as the
                # op that made it. Else a copy: it may be shared with other nodes (Add hands one
                # gradient to both inputs), the caller's own array, or a read-only broadcast
                # view, and the user may edit .grad.
                if not (adopt and grad.dtype == self._data.dtype and grad.flags.writeable):
                    grad = np.array(grad, dtype=self._data.dtype, order="C")
                self._grad = Tensor._make(grad, None)
            elif self.grad_fn is None and self._grad.grad_fn is None \
                    and self._grad._data.flags.writeable:
                self._grad._data += grad  # a leaf's: in place, as PyTorch accumulates
            else:
                self._grad = Tensor._make(self._grad._data + grad, None)

    # ---- in-place writes --------------------------------------------------------------------
    def _become_view_of(self, source: "Tensor", fn: type, attrs: dict) -> None:
        """Share ``source``'s memory and version, remembering how to get from its base here
        (the view ops applied in turn: an in-place write into the view replays them)."""
        ours, theirs = self._data.base, source._data
        if ours is not theirs and (ours is None or ours is not theirs.base):
            return  # NumPy had to copy (e.g. reshape of a transposed array): not a view
        self._version_counter = source._version_counter or source._counter()
        if source._view is None:
            self._view = (source, ((fn, attrs),), source.grad_fn)
        else:
            base, chain, _ = source._view
            self._view = (base, chain + ((fn, attrs),), base.grad_fn)

    def _view_edge(self):
        """This view's node — made anew from its base's if the base was written in place
        (through another view, or itself) since: then this view reads the new value."""
        base, path, base_node = self._view
        if base.grad_fn is not base_node:
            with enable_grad():
                fresh = V.apply_view_path(base, path)
            self.grad_fn, self._requires_grad = fresh.grad_fn, fresh._requires_grad
            self._view = (base, path, base.grad_fn)
        return self.grad_fn if self.grad_fn is not None else self if self._requires_grad else None

    def _check_inplace(self) -> None:
        if not _mode.grad_enabled:
            return
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if self._view is not None:
            base = self._view[0]
            if base.grad_fn is None and base._requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                                   "in an in-place operation.")

    def _write(self, values: np.ndarray) -> None:
        """Copy ``values`` into this tensor's memory and bump the version it shares."""
        if not self._data.flags.writeable:
            raise RuntimeError(f"in-place write: this tensor's memory is read-only (an expand()ed "
                               f"tensor or a broadcast view, shape {self.shape}); clone() it first")
        shape = values.shape if type(values) is np.ndarray else np.shape(values)
        if shape != self._data.shape and np.broadcast_shapes(shape, self._data.shape) != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        try:
            np.copyto(self._data, values, casting="same_kind")
        except TypeError:
            raise RuntimeError(f"result type {np.result_type(values)} can't be cast to the "
                               f"desired output type {self.dtype}") from None
        _note_write(self._counter())

    def _bump_version(self) -> None:
        """Note a write made directly into ``_data`` (optimizers, nn.init, load_state_dict)."""
        _note_write(self._counter())

    def _inplace(self, fn: type, *others, **attrs) -> "Tensor":
        """``x.op_(...)``: the out-of-place op, written back into x's memory; x takes over the
        op's node, so later uses see the new value and backward goes through the op."""
        others = [self._const(o) for o in others]
        recording = _mode.grad_enabled and (self._requires_grad or
                                            any([o._requires_grad for o in others]))
        self._check_inplace()
        if not recording:
            self._write(fn.call(self._data, *[o._data for o in others], **attrs))
            return self
        return self._take_over(fn.apply(self, *others, **attrs))

    def _take_over(self, result: "Tensor") -> "Tensor":
        """Write ``result`` into this tensor and make its node ours (the in-place commit)."""
        ctx = result.grad_fn
        old_value, output_names = self._data, []
        for name, value in list(ctx._saved_items()):
            if value is self._data:
                # The op saved our value from before the write: it keeps that value, as a
                # private copy (PyTorch's original_self), no longer tied to this tensor.
                if old_value is self._data:
                    old_value = np.array(value)
                ctx._resave(name, old_value)
            elif value is result._data:  # the saved output is our memory from now on
                output_names.append(name)
        # The node's inputs, as pictures and saved_for_backward show them: where the input was
        # this tensor, a stand-in for its old self (its old node), so that walking the graph
        # through .parents never loops back to the node that now made this tensor. It holds
        # the private copy if the op saved one (so that under create_graph that copy is the
        # input, differentiable through the old node; a copy keeps the version it had), else
        # this tensor's memory and version counter.
        before = Tensor._make(old_value, self.grad_fn)
        before.name = self.name
        before._version_counter = [self._version] if old_value is not self._data else self._counter()
        ctx.parents = tuple(before if p is self or type(p) is ReleasedValue and p._source() is self
                            else p for p in ctx.parents)
        counter = self._counter()  # (made before the write: the old node may need it too)
        self._write(result._data)
        for name in output_names:
            ctx._resave(name, self._data)
        ctx.output_id, ctx.output_counter, ctx.output_version = id(self._data), counter, counter[0]
        if self._view is None:
            if self.grad_fn is not None and self.grad_fn.retained is self:
                self.grad_fn.retained, ctx.retained = None, self
            self.grad_fn, self._requires_grad = ctx, True
            return self
        # A view: the base's value changed where the view lies. The base takes a node that
        # writes ``result`` into that region (PyTorch's CopySlices), and this view becomes the
        # same view of the new base.
        base, path, _ = self._view
        before = Tensor._make(base._data, base.grad_fn)
        before._version_counter = base._counter()
        node = V.WriteView.apply(base, result, path=path).grad_fn
        node.parents = (before,) + node.parents[1:]  # as above: no loop back through .parents
        base.grad_fn, base._requires_grad = node, True
        self.grad_fn, self._requires_grad = V.apply_view_path(base, path).grad_fn, True
        self._view = (base, path, base.grad_fn)
        return self

    # ---- ops, as methods and operators (each one a Function in ops/) -------------------------
    def _const(self, other) -> "Tensor":
        """A Python number or array as a tensor that adopts our floating dtype (float32 stays so)."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (int, float, np.number)) and self._data.dtype.kind == "f":
            return Tensor._make(np.asarray(other, dtype=self._data.dtype), None)
        return Tensor._make(_as_array(other, None), None)

    def _pair(self, other) -> tuple:
        """(self, other) as tensors of one dtype, by torch's promotion rules: a Python number
        does not change a float tensor's dtype; ``int_tensor * 1.5`` is float32 (ops/elementwise).
        An operand that is no tensor, array or real number raises ``NotAnOperand``: the operator
        then returns NotImplemented, and Python raises its TypeError (as with torch)."""
        if isinstance(other, Tensor):
            if other._data.dtype is self._data.dtype:  # the common case, decided at once
                return self, other
        elif isinstance(other, (int, float)) and self._data.dtype.kind == "f":
            return self, Tensor._make(np.asarray(other, dtype=self._data.dtype), None)
        elif isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not E.is_number(other):
            raise NotAnOperand
        return tuple(E.promote(self, other))

    # (The try costs nothing until something is raised: the chain of +, * stays as fast. The
    # commonest case, another Tensor of our dtype, is decided before any call, since the
    # promotion call is a noticeable share of a small op; see benchmarks/README.md.)
    def __add__(self, other):
        if type(other) is Tensor and other._data.dtype is self._data.dtype:
            return E.Add.apply(self, other)
        try:
            return E.Add.apply(*self._pair(other))
        except NotAnOperand:
            return NotImplemented

    def __sub__(self, other):
        try:
            a, b = self._pair(other)
        except NotAnOperand:
            return NotImplemented
        # torch refuses a bool operand (inline tests: this is a hot path)
        if self._data.dtype is dtypes.bool or (b is not other and (
                type(other) in _BOOLS or (isinstance(other, Tensor) and other._data.dtype is dtypes.bool))):
            E.check_sub("-", self, other)
        return E.Sub.apply(a, b)

    def __mul__(self, other):
        if type(other) is Tensor and other._data.dtype is self._data.dtype:
            return E.Mul.apply(self, other)
        try:
            return E.Mul.apply(*self._pair(other))
        except NotAnOperand:
            return NotImplemented

    def __truediv__(self, other):
        try:
            return E.Div.apply(*E.floating_pair(*self._pair(other)))
        except NotAnOperand:
            return NotImplemented

    def __radd__(self, other):
        try:
            return E.Add.apply(*self._pair(other)[::-1])
        except NotAnOperand:
            return NotImplemented

    def __rsub__(self, other):
        try:
            b, a = self._pair(other)
        except NotAnOperand:
            return NotImplemented
        E.check_sub("-", other, self)
        return E.Sub.apply(a, b)

    def __rmul__(self, other):
        try:
            return E.Mul.apply(*self._pair(other)[::-1])
        except NotAnOperand:
            return NotImplemented

    def __rtruediv__(self, other):
        try:
            return E.Div.apply(*E.floating_pair(*self._pair(other)[::-1]))
        except NotAnOperand:
            return NotImplemented

    def __matmul__(self, other):
        if isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not isinstance(other, Tensor):
            return NotImplemented
        return M.matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, np.ndarray):
            return NotImplemented
        return M.matmul(Tensor._make(_as_array(other, None), None), self)

    def __neg__(self):
        if self._data.dtype is dtypes.bool:
            E.refuse_bool("-", self)
        return E.Neg.apply(self)

    def __getitem__(self, index): return V.Index.apply(self, index=V.normalize_index(index))

    # torch's method spellings of the operators: a Tensor or a number, nothing else
    def add(self, other, *, alpha=1):
        return self + E.scaled_operand("add", other, alpha)

    def sub(self, other, *, alpha=1):
        E.check_sub("sub", self, other)
        return self - E.scaled_operand("sub", other, alpha)

    def mul(self, other): return self * E.check_operand("mul", "other", other)
    def div(self, other): return self / E.check_operand("div", "other", other)
    def neg(self):
        if self._data.dtype is dtypes.bool:
            E.refuse_bool("neg", self)
        return -self

    def square(self): return self * self
    multiply, divide, true_divide, subtract, negative = mul, div, div, sub, neg

    def __pow__(self, exponent):
        if isinstance(exponent, np.ndarray):  # (torch takes an array operand too)
            exponent = Tensor._make(_as_array(exponent, None), None)
        try:
            return E.pow(self, exponent)
        except NotAnOperand:
            return NotImplemented

    def __rpow__(self, base):
        try:
            return E.pow(base, self)
        except NotAnOperand:
            return NotImplemented

    def pow(self, exponent): return E.pow(self, E.check_operand("pow", "exponent", exponent))

    # Comparisons and logic give bool tensors, element by element: they have no gradient.
    # (A tensor stays hashable by identity, as in torch, so it can key a dict or sit in a set.)
    def _compare(self, other, op, name: str) -> "Tensor":
        other = self._pair(other)[1]._data
        if self._data.shape != other.shape and self._data.ndim and other.ndim:
            E.check_broadcast(name, self._data, other)
        return Tensor._make(np.asarray(op(self._data, other)), None)

    # The methods take a Tensor or a number; the operators an array too (NotImplemented else)
    def eq(self, other): return self._compare(E.check_operand("eq", "other", other), np.equal, "eq")
    def ne(self, other): return self._compare(E.check_operand("ne", "other", other), np.not_equal, "ne")
    def gt(self, other): return self._compare(E.check_operand("gt", "other", other), np.greater, "gt")
    def lt(self, other): return self._compare(E.check_operand("lt", "other", other), np.less, "lt")
    def ge(self, other):
        return self._compare(E.check_operand("ge", "other", other), np.greater_equal, "ge")

    def le(self, other):
        return self._compare(E.check_operand("le", "other", other), np.less_equal, "le")

    def _compare_operator(self, other, op, name: str):
        try:
            return self._compare(other, op, name)
        except NotAnOperand:
            return NotImplemented

    def _order_operator(self, other, op, name: str):
        # (torch orders a tensor against tensors and numbers, not arrays: Python's TypeError)
        if isinstance(other, np.ndarray):
            return NotImplemented
        return self._compare_operator(other, op, name)

    def __gt__(self, other): return self._order_operator(other, np.greater, "gt")
    def __lt__(self, other): return self._order_operator(other, np.less, "lt")
    def __ge__(self, other): return self._order_operator(other, np.greater_equal, "ge")
    def __le__(self, other): return self._order_operator(other, np.less_equal, "le")
    __hash__ = object.__hash__

    # ``t == None`` is False and ``t != None`` True, as in torch: Python compares what a tensor
    # cannot hold (None, strings, containers) by identity.
    def __eq__(self, other):
        return NotImplemented if isinstance(other, _NOT_COMPARABLE) else \
            self._compare_operator(other, np.equal, "eq")

    def __ne__(self, other):
        return NotImplemented if isinstance(other, _NOT_COMPARABLE) else \
            self._compare_operator(other, np.not_equal, "ne")

    greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne

    def _logical(self, other, op, name: str) -> "Tensor":
        if not isinstance(other, (Tensor, np.ndarray)) and not E.is_number(other):
            return NotImplemented  # (Python's TypeError: unsupported operand type(s) for &)
        other = self._const(other)._data
        if self._data.dtype.kind == "f" or other.dtype.kind == "f":
            raise NotImplementedError(f"{name}: not implemented for floating-point tensors (input "
                                      f"of dtype {self._data.dtype} and other of dtype "
                                      f"{other.dtype}); use bool or integer tensors, e.g. masks "
                                      f"from comparisons such as x > 0, or x.bool()")
        if self._data.shape != other.shape and self._data.ndim and other.ndim:
            E.check_broadcast(name, self._data, other)
        return Tensor._make(np.asarray(op(self._data, other)), None)

    def __and__(self, other): return self._logical(other, np.bitwise_and, "and (&)")
    def __or__(self, other): return self._logical(other, np.bitwise_or, "or (|)")
    def __xor__(self, other): return self._logical(other, np.bitwise_xor, "xor (^)")
    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self):
        if self._data.dtype.kind == "f":
            raise TypeError(f"~: input must be an integer or bool tensor (bitwise not), got "
                            f"dtype {self._data.dtype}")
        return Tensor._make(np.asarray(~self._data), None)

    def logical_not(self): return Tensor._make(np.asarray(self._data == 0), None)
    def logical_and(self, other):
        return self._compare(E.check_tensor("logical_and", "other", other), np.logical_and,
                             "logical_and")

    def logical_or(self, other):
        return self._compare(E.check_tensor("logical_or", "other", other), np.logical_or,
                             "logical_or")

    @numpy_spellings
    def all(self, dim=None, keepdim: bool = False): return self._test(np.all, "all", dim, keepdim)
    @numpy_spellings
    def any(self, dim=None, keepdim: bool = False): return self._test(np.any, "any", dim, keepdim)

    def _test(self, reduce, name: str, dim, keepdim: bool) -> "Tensor":
        """all/any along dims: a bool tensor, no gradient."""
        args = R.reduce_args(name, self._data.shape, None, keepdim, dim, OMITTED)
        return Tensor._make(np.asarray(reduce(self._data, args["axis"], keepdims=args["keepdims"])),
                            None)

    def _float(self) -> "Tensor":
        """Input of a float function: integer and bool tensors become float32, as torch makes
        their exp, log, ... (NumPy's results would be float64)."""
        return self if self._data.dtype.kind == "f" else E.floating(self)

    def exp(self): return E.Exp.apply(self._float())
    def log(self): return E.Log.apply(self._float())
    def sqrt(self): return E.Sqrt.apply(self._float())
    def relu(self):
        if self._data.dtype is dtypes.bool:
            E.refuse_bool("relu", self)
        return E.ReLU.apply(self)

    def sigmoid(self): return E.Sigmoid.apply(self._float())
    def tanh(self): return E.Tanh.apply(self._float())
    def arctan(self): return E.Arctan.apply(self._float())
    def abs(self):
        if self._data.dtype is dtypes.bool:
            E.refuse_bool("abs", self)
        return E.Abs.apply(self)

    def log1p(self): return E.log1p(self)
    def rsqrt(self): return E.rsqrt(self)
    def sin(self): return E.sin(self)
    def cos(self): return E.cos(self)
    def sign(self): return E.sign(self)
    def floor(self): return E.floor(self)
    def ceil(self): return E.ceil(self)
    def round(self, *, decimals: int = 0): return E.round(self, decimals=decimals)
    def maximum(self, other): return E.maximum(self, other)
    def minimum(self, other): return E.minimum(self, other)
    def where(self, condition, other): return E.where(condition, self, other)

    def clamp(self, min=None, max=None): return E.clamp(self, min, max)
    clip = clamp
    def clamp_min(self, min): return E.clamp(self, min=E.check_bound("clamp_min", "min", min))
    def clamp_max(self, max): return E.clamp(self, max=E.check_bound("clamp_max", "max", max))

    # In place (PyTorch's trailing underscore; augmented operators too). ``a @= b`` is not
    # here on purpose: PyTorch has no in-place matmul, so Python rebinds ``a`` to ``a @ b``.
    # Each checks all of its arguments first: a refused call changes nothing (data, version,
    # grad_fn), as in torch.
    def _check_fits(self, op: str, name: str, other, dtype=None) -> None:
        """Refuse a result that cannot be written into this tensor: ``other`` (a Tensor, or
        None) must broadcast to our shape, and the result's ``dtype`` cast to ours (torch: a
        float result does not go into an integer tensor; float64 into float32 does)."""
        if dtype is not None and dtype is not self._data.dtype \
                and not np.can_cast(dtype, self._data.dtype, "same_kind"):
            raise RuntimeError(f"{op}: result type {dtype} can't be cast to the desired output "
                               f"type {self._data.dtype} of input")
        shape = self._data.shape if other is None else other._data.shape
        if shape != self._data.shape:
            try:
                fits = np.broadcast_shapes(shape, self._data.shape) == self._data.shape
            except ValueError:
                fits = False
            if not fits:
                raise E.BroadcastError(f"{op}: {name} of shape {shape} does not broadcast to "
                                       f"the shape {self._data.shape} of input, which the result "
                                       f"is written into")

    def _inplace_binary(self, op: str, fn: type, other, alpha=1) -> "Tensor":
        """``x.add_(y)``, ``x += y``... (``op`` is the name errors give): y a Tensor or a number
        (anything else raises ``NotAnOperand``, which ``+=`` turns into NotImplemented)."""
        E.check_operand(op, "other", other)
        if fn is E.Sub:
            E.check_sub(op, self, other)
        if type(alpha) is not builtins.int or alpha != 1:
            other = E.scaled_operand(op, other, alpha)
        dtype = E.result_dtype(self, other)
        if fn is E.Div and dtype.kind != "f":  # true division: integers divide as floats
            dtype = dtypes.get_default_dtype()
        other = self._const(other)
        self._check_fits(op, "other", other, dtype)
        return self._inplace(fn, other)

    def _inplace_unary(self, op: str, fn: type, floating: bool = False) -> "Tensor":
        if floating and self._data.dtype.kind != "f":
            raise RuntimeError(f"{op}: result type {dtypes.get_default_dtype()} can't be cast "
                               f"to the desired output type {self._data.dtype} of input")
        if self._data.dtype is dtypes.bool and fn in (E.Neg, E.ReLU, E.Abs):
            E.refuse_bool(op, self)
        return self._inplace(fn)

    def add_(self, other, *, alpha=1): return self._inplace_binary("add_", E.Add, other, alpha)
    def sub_(self, other, *, alpha=1): return self._inplace_binary("sub_", E.Sub, other, alpha)
    def mul_(self, other): return self._inplace_binary("mul_", E.Mul, other)
    def div_(self, other): return self._inplace_binary("div_", E.Div, other)

    def pow_(self, exponent):
        if isinstance(exponent, complex):
            raise RuntimeError(f"pow_: exponent {exponent!r} is complex: result type complex "
                               f"can't be cast to the desired output type {self._data.dtype} of "
                               f"input")
        E.check_operand("pow_", "exponent", exponent)
        dtype = E.result_dtype(self, exponent)
        if isinstance(exponent, Tensor):
            self._check_fits("pow_", "exponent", exponent, dtype)
            return self._inplace(E.PowTensor, exponent)
        self._check_fits("pow_", "exponent", None, dtype)
        if self._data.dtype.kind != "f" and exponent < 0:
            raise RuntimeError(f"pow_: integers to negative integer powers are not allowed "
                               f"(input of dtype {self._data.dtype}, exponent {exponent})")
        return self._inplace(E.Pow, exponent=exponent)

    def neg_(self): return self._inplace_unary("neg_", E.Neg)
    def exp_(self): return self._inplace_unary("exp_", E.Exp, floating=True)
    def log_(self): return self._inplace_unary("log_", E.Log, floating=True)
    def sqrt_(self): return self._inplace_unary("sqrt_", E.Sqrt, floating=True)
    def relu_(self): return self._inplace_unary("relu_", E.ReLU)
    def sigmoid_(self): return self._inplace_unary("sigmoid_", E.Sigmoid, floating=True)
    def tanh_(self): return self._inplace_unary("tanh_", E.Tanh, floating=True)
    def abs_(self): return self._inplace_unary("abs_", E.Abs)

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp_: at least one of min and max must not be None")
        bounds = {side: value for side, value in (("min", min), ("max", max)) if value is not None}
        tensors = [isinstance(value, Tensor) for value in bounds.values()]
        for side, value in bounds.items():
            if not isinstance(value, Tensor):
                A.check_scalar("clamp_", side, value)
        dtype = E.result_dtype(self, *bounds.values())
        if any(tensors):
            if not all(tensors):
                raise TypeError(f"clamp_: min and max must both be Tensors or both be numbers "
                                f"(or None), got min={type(min).__name__}, "
                                f"max={type(max).__name__}")
            for side, value in bounds.items():
                self._check_fits("clamp_", side, value, dtype)
            return self._inplace(E.ClampTensor, *bounds.values(), sides=tuple(bounds))
        self._check_fits("clamp_", "min" if min is not None else "max", None, dtype)
        return self._inplace(E.Clamp, low=min, high=max)

    def clamp_min_(self, min): return self.clamp_(min=min)
    def clamp_max_(self, max): return self.clamp_(max=max)

    def copy_(self, src):
        self._check_fits("copy_", "src", E.check_tensor("copy_", "src", src))
        return self._inplace(V.Copy, src)

    def fill_(self, value):
        if isinstance(value, Tensor):  # a 0-d tensor: its gradient is the sum over self
            if value._data.ndim:
                raise RuntimeError(f"fill_: value must be a number or a 0-d Tensor, got a "
                                   f"tensor of shape {value._data.shape}")
            return self.copy_(value)
        return self._inplace(V.Fill, value=A.check_scalar("fill_", "value", value))

    def zero_(self): return self.fill_(0)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
        """Fill with numbers drawn uniformly from [a, b) (torch's ``from`` and ``to``)."""
        for name, value in (("a", a), ("b", b)):
            if not np.isfinite(A.check_number("uniform_", name, value)):
                raise RuntimeError(f"uniform_: {name}={value} is out of bounds for float")
        if a > b:
            raise RuntimeError(f"uniform_: expects a [a, b) range, but found a={a} > b={b}")
        A.check_floating("uniform_", "input", self)
        from ..random import default_generator
        rng = default_generator() if generator is None else generator
        return self.copy_(Tensor._make(rng.uniform(a, b, self._data.shape).astype(self.dtype), None))

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
        """Fill with numbers drawn from the normal distribution N(mean, std²)."""
        A.check_number("normal_", "mean", mean)
        if not A.check_number("normal_", "std", std) >= 0:  # (NaN is refused too)
            raise RuntimeError(f"normal_: expects std >= 0.0, but found std={std}")
        A.check_floating("normal_", "input", self)
        from ..random import default_generator
        rng = default_generator() if generator is None else generator
        return self.copy_(Tensor._make(rng.normal(mean, std, self._data.shape).astype(self.dtype),
                                       None))

    # ``x += y`` with a y that no in-place op takes (an array, a list): NotImplemented, and
    # Python falls back to ``x = x + y``, as with torch
    def __iadd__(self, other): return self._augmented("+=", E.Add, other)
    def __isub__(self, other): return self._augmented("-=", E.Sub, other)
    def __imul__(self, other): return self._augmented("*=", E.Mul, other)
    def __itruediv__(self, other): return self._augmented("/=", E.Div, other)

    def _augmented(self, op: str, fn: type, other):
        try:
            return self._inplace_binary(op, fn, other)
        except NotAnOperand:
            return NotImplemented

    def __setitem__(self, index, value):
        """``t[index] = value``: a view of t overwritten, or (advanced index) torch's index_put_
        into the view that the index's ints and slices pick. value is a Tensor or a Python
        number (torch refuses arrays and lists here); with an advanced index, a Tensor of
        t's dtype, as in torch (or one element, where the index is one bool mask)."""
        given = isinstance(value, Tensor)
        if not given:
            if not isinstance(value, (builtins.int, builtins.float)):  # (bool is an int)
                A.check_scalar("index", "value", value)  # (a complex value: RuntimeError)
                raise TypeError(f"index: can't assign a {type(value).__name__} to input[index]: "
                                f"value must be a Tensor or a number")
            value = self._const(value)
        if index is True or index is False:  # torch's shortcuts: t[True] = v is t[None] = v,
            if index is False:               # and t[False] = v writes nothing
                return
            index = None
        index = V.normalize_index(index)
        if V.is_advanced(index):
            if given and value._data.dtype != self._data.dtype \
                    and not (value._data.size == 1 and V.is_mask_fill(index)):
                raise RuntimeError(f"index: Index put requires the source and destination "
                                   f"dtypes match, got {self._data.dtype} for the destination "
                                   f"and {value._data.dtype} for the source (input[index] = "
                                   f"value; value.to(input.dtype) converts it)")
            shape = value._data.shape
            if shape and shape[0] == 1:  # torch drops the value's leading 1s
                value = value.reshape(shape[next((k for k, n in enumerate(shape) if n != 1),
                                                 len(shape)):])
            recording = _mode.grad_enabled and (self._requires_grad or value._requires_grad)
            self._check_inplace()
            if not recording:
                result = V.IndexPut.call(self._data, value._data, index=index)
                self._write(result)
                return
            self._take_over(V.IndexPut.apply(self, value, index=index))
            return
        target = V.Index.apply(self, index=index)  # (index is normalized already)
        extra = value._data.ndim - target._data.ndim
        if extra > 0 and value._data.shape[:extra] == (1,) * extra:  # torch drops leading 1s
            value = value.reshape(value._data.shape[extra:])
        target._check_fits("index", "value", value)
        target._inplace(V.Copy, value)

    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=OMITTED):
        return R.Sum.apply(self, **R.reduce_args("sum", self._data.shape, axis, keepdims, dim, keepdim))

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=OMITTED):
        return R.Mean.apply(self, **R.reduce_args("mean", self._data.shape, axis, keepdims, dim, keepdim))

    @numpy_spellings
    def max(self, dim=OMITTED, keepdim: bool = False):
        """The largest value (0-d); with ``dim``, ``(values, indices)`` along it; given a
        tensor, the elementwise maximum — as torch's ``max``."""
        return R.max(self, dim, keepdim)

    @numpy_spellings
    def min(self, dim=OMITTED, keepdim: bool = False): return R.min(self, dim, keepdim)
    @numpy_spellings
    def amax(self, dim=(), keepdim: bool = False): return R.amax(self, dim, keepdim)
    @numpy_spellings
    def amin(self, dim=(), keepdim: bool = False): return R.amin(self, dim, keepdim)
    @numpy_spellings
    def argmax(self, dim=None, keepdim: bool = False): return R.argmax(self, dim, keepdim)
    @numpy_spellings
    def argmin(self, dim=None, keepdim: bool = False): return R.argmin(self, dim, keepdim)
    @numpy_spellings
    def prod(self, dim=OMITTED, keepdim: bool = False): return R.prod(self, dim, keepdim)

    @numpy_spellings
    def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
        return R.var(self, dim, unbiased, keepdim, correction=correction)

    @numpy_spellings
    def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
        return R.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p="fro", dim=None, keepdim: bool = False): return R.norm(self, p, dim, keepdim)
    @numpy_spellings
    def logsumexp(self, dim, keepdim: bool = False): return R.logsumexp(self, dim, keepdim)
    @numpy_spellings
    def cumsum(self, dim): return R.cumsum(self, dim)

    def reshape(self, *shape):
        return V.Reshape.apply(self, shape=V.resolve_shape("reshape", self._data.shape, shape))

    def view(self, *shape): return V.view(self, *shape)

    def expand(self, *shape):
        return V.Expand.apply(self, shape=V.expanded_shape(self._data.shape, shape))

    def transpose(self, dim0: int | None = None, dim1: int | None = None):
        """Swap two dimensions (PyTorch); with no arguments reverse them all (NumPy's ``.T``)."""
        return V.Permute.apply(self, dims=V.swap_dims(self.ndim, dim0, dim1))

    def swapaxes(self, axis0: int, axis1: int): return self.transpose(axis0, axis1)

    T = property(lambda self: self.transpose())

    def permute(self, *dims):
        return V.Permute.apply(self, dims=V.check_permutation(self.ndim, dims))

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        return V.Reshape.apply(self, shape=V.flattened_shape(self._data.shape, start_dim, end_dim))

    def flip(self, dims): return V.flip(self, dims)
    def squeeze(self, dim=OMITTED): return V.squeeze(self, dim)
    def unsqueeze(self, dim): return V.unsqueeze(self, dim)
    def unflatten(self, dim, sizes): return V.unflatten(self, dim, sizes)
    def view_as(self, other): return V.view_as(self, other)
    def reshape_as(self, other): return V.reshape_as(self, other)
    def expand_as(self, other): return V.expand_as(self, other)
    def t(self): return V.t(self)
    mT = property(lambda self: V.matrix_transpose(self))
    def repeat(self, *sizes): return V.repeat(self, *sizes)
    def narrow(self, dim, start, length): return V.narrow(self, dim, start, length)
    def roll(self, shifts, dims=None): return V.roll(self, shifts, dims)
    def contiguous(self): return V.contiguous(self)
    def chunk(self, chunks, dim=0): return J.chunk(self, chunks, dim)
    def split(self, split_size, dim=0): return J.split(self, split_size, dim)

    def gather(self, dim, index, *, sparse_grad: bool = False):
        return S.gather(self, dim, index, sparse_grad=sparse_grad)

    def scatter(self, dim, index, src=None, *, value=None):
        return S.scatter(self, dim, index, src, value=value)

    def scatter_(self, dim, index, src=None, *, value=None):
        return S.scatter_(self, dim, index, src, value=value)

    def scatter_add(self, dim, index, src): return S.scatter_add(self, dim, index, src)
    def scatter_add_(self, dim, index, src): return S.scatter_add_(self, dim, index, src)
    def index_select(self, dim, index): return S.index_select(self, dim, index)
    def masked_fill(self, mask, value): return S.masked_fill(self, mask, value)
    def masked_fill_(self, mask, value): return S.masked_fill_(self, mask, value)
    def take_along_dim(self, indices, dim=None): return S.take_along_dim(self, indices, dim)

    def matmul(self, other): return M.matmul(self, E.check_tensor("matmul", "other", other))
    def mm(self, mat2): return M.mm(self, mat2)
    def bmm(self, mat2): return M.bmm(self, mat2)

    def conv2d(self, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        return C.conv2d(self, weight, bias, stride, padding, dilation, groups)

    def max_pool2d(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False, ties="first"):
        return P.max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode,
                            return_indices, ties=ties)

    def avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
        return P.avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)

    # (the methods take no dim=None, as torch's: torch.nn.functional's guesses one, deprecated)
    @numpy_spellings
    def log_softmax(self, dim: int = -1):
        return L.log_softmax(self, A.check_int("log_softmax", "dim", dim))

    @numpy_spellings
    def softmax(self, dim: int = -1):
        return L.softmax(self, A.check_int("softmax", "dim", dim))


class _Unsupported:
    """A torch Tensor attribute we do not have: reading it raises AttributeError pointing to
    docs/porting.md (``hasattr`` is False). A descriptor per name, not ``Tensor.__getattr__``:
    defining that slows every attribute read of every tensor (CPython stops specialising them)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(unsupported.message("'Tensor' object", self.name))


for _name in unsupported.TENSOR:
    setattr(Tensor, _name, _Unsupported(_name))
del _name


class ReleasedValue(Tensor):
    """In a node's ``parents``, a large input that an op made (an intermediate), standing in
    for the tensor itself so that the graph does not keep its value alive longer than backward
    needs it, as PyTorch does: from the start where the op did not save it
    (``Node._hold_unsaved_weakly``), else once backward has released the node.

    It keeps what the pictures draw — shape, dtype, name, the node that made it — and a weak
    reference to the tensor: while anyone else (the user, a node not yet released) holds that
    tensor, ``_data`` and ``grad`` are its own; once nobody does, its memory is gone and
    ``_data`` reads as zeros of its shape (a zero-stride view of one number) with
    ``value_freed`` True, which the pictures say instead of showing numbers. One stand-in per
    tensor, kept on the node that made it, so that every op it fed points at the same one.
    """

    __slots__ = ("_source", "_freed")

    @staticmethod
    def of(t: Tensor) -> Tensor:
        """``t``'s stand-in if it is a large intermediate, else ``t`` itself."""
        node = t.grad_fn
        if node is None or type(t) is not Tensor or t._data.nbytes < LARGE_BYTES:
            return t
        made = node.__dict__.get("stand_in")
        if made is not None and made._source() is t:
            return made
        stand_in = _new_object(ReleasedValue)
        stand_in._source = weakref.ref(t)
        stand_in._freed = np.broadcast_to(np.zeros((), t._data.dtype), t._data.shape)
        stand_in.grad_fn, stand_in._requires_grad, stand_in.name = node, t._requires_grad, t.name
        stand_in.retains_grad, stand_in._version_counter, stand_in._view = False, None, None
        node.__dict__["stand_in"] = stand_in
        return stand_in

    @property
    def value_freed(self) -> bool:
        return self._source() is None

    @property
    def _data(self) -> np.ndarray:
        source = self._source()
        return self._freed if source is None else source._data

    @property
    def grad(self):
        source = self._source()
        return None if source is None else source.grad


# ---- backward: the chain rule over the recorded graph --------------------------------------
def _node_of(t: Tensor):
    """The node a tensor's gradient flows into: its Function, or the leaf itself."""
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
        raise E.BroadcastError(  # (torch's RuntimeError; a ValueError as this package's was)
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
    it, in the engine's order: a Function with the gradient arriving at its output and what it
    sends to each input (one per input, None where nothing), before it releases its buffers;
    a leaf with the summed gradient it receives and ``input_grads`` None. viz.replay draws from
    this; anomaly mode checks the gradients with it.
    """
    if retain_graph is None:
        retain_graph = create_graph
    if _anomaly is not None:
        observe = _anomaly.backward if observe is None else _anomaly.chain(observe)
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
    fresh = set()  # the keys whose gradient nothing else holds: a sum, or an op's fresh one
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
                        fresh.add(key)
                    else:
                        grads[key] = parent_grad
                        if fn.fresh_gradients:
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
            grad = V.Cast.apply(grad, dtype=data.dtype)
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
    arrays = dict(fn._saved_items())
    sources = dict(fn._saved_sources())
    for name, array in arrays.items():
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
        fn._resave(name, value)
    try:
        return fn.backward(grad)
    finally:
        for name, array in arrays.items():
            fn._resave(name, array)


class OnceDifferentiable(Node):
    """Stands in for the backward of a Function marked ``once_differentiable``: differentiating
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


# The op modules import Function and Tensor from this file, so they come in after both exist.
from ..ops import conv as C  # noqa: E402
from ..ops import elementwise as E  # noqa: E402
from ..ops import loss as L  # noqa: E402
from ..ops import matmul as M  # noqa: E402
from ..ops import movement as V  # noqa: E402
from ..ops import pool as P  # noqa: E402
from ..ops import reduce as R  # noqa: E402
from ..ops import join as J  # noqa: E402
from ..ops import select as S  # noqa: E402
from ..ops import args as A  # noqa: E402
