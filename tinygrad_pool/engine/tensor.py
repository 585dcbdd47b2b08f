"""The Tensor: an n-dimensional array that remembers how it was computed.

A Tensor holds its NumPy array (``_data``), the node that made it (``grad_fn``: an op applied
once, engine/node.py; None for a leaf), whether it requires a gradient, and the gradient
backward accumulated into it (``grad``). Views (a reshape, a slice) share their base's memory
and its version counter, and remember how they were made from it (``_view``), so that a view's
node can be made again after the base is written in place.

This file is the data structure. Its methods that reach further are attached by the layers
that define them (``attach``): backward() by engine/backward.py, the in-place machinery by
engine/views.py, and every op method and operator (``x + y``, ``x.sum()``, ``x.conv2d(w)``) by
tinygrad_pool/methods.py, which calls into ops/.
"""
from __future__ import annotations

import builtins
import threading
import weakref

import numpy as np

from .. import dtypes
from ..devices import CPU, check_device
from ..grad_mode import enable_grad
from .data import Size, _check_can_require_grad, _is_size, ragged_detail

# An intermediate this large is what the graph must not keep alive longer than backward needs
# it (see ReleasedValue); smaller ones cost no memory worth a stand-in.
LARGE_BYTES = 1 << 16


def _as_array(data, dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data._data
    array = np.asarray(data, dtype=dtype)
    if array.dtype.kind not in "fiub":  # strings, objects, complex numbers, dates
        raise TypeError(f"Tensor: cannot make a tensor from {type(data).__name__} data of "
                        f"dtype {array.dtype} (expected numbers or bools)")
    return array


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


# Leaf gradients are summed under one lock: two threads running backward on one shared model
# must both land in .grad (a read-add-write without it loses updates).
_ACCUMULATE_LOCK = threading.Lock()


_new_object = object.__new__


class Tensor:
    """An n-dimensional array that remembers how it was computed.

    ``_data`` is its NumPy array (``numpy()`` hands it to the user; ``data`` is torch's detached
    Tensor over the same memory); ``grad_fn`` the Node that produced it (None for a leaf);
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
            return args[0].view_as(args[0])
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
    def _make(data: np.ndarray, grad_fn) -> "Tensor":
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
                                   f"x.grad = g{dtypes.cast_spelling(self._data.dtype)}, or "
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
        theirs, ours = source._data, self._data.base
        # (up the chain of bases: a strided view's first base is NumPy's wrapper of the input)
        while ours is not None and ours is not theirs and ours is not theirs.base:
            ours = getattr(ours, "base", None)
        if ours is None:
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
                fresh = apply_view_path(base, path)
            self.grad_fn, self._requires_grad = fresh.grad_fn, fresh._requires_grad
            self._view = (base, path, base.grad_fn)
        return self.grad_fn if self.grad_fn is not None else self if self._requires_grad else None


def apply_view_path(base, path: tuple):
    """Replay the view ops that led from a base to one of its views (arrays or Tensors)."""
    for fn, attrs in path:
        base = fn.call(base, **attrs)
    return base


def attach(methods: type) -> None:
    """Give Tensor the methods of ``methods``, a class written in a layer above this file (it
    defines them with the imports they need, which this file cannot have)."""
    for name, value in vars(methods).items():
        if name not in _CLASS_ONLY:
            setattr(Tensor, name, value)


_CLASS_ONLY = frozenset(("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                         "__firstlineno__", "__static_attributes__"))


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
