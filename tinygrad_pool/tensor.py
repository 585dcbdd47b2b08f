"""The engine: a Tensor records the Function that made it, and backward() walks that graph.

Everything else in the package is either an op (a small Function in ``ops/``) or a layer built
on top of this file (``nn``, ``optim``, ``gradcheck``, ``graph``). Read this file and one op file
and you have seen the whole engine.
"""
from __future__ import annotations

import contextlib
import sys

import numpy as np

from .scratch import SCRATCH_MIN_BYTES, give_buffer

_grad_enabled = True


class no_grad(contextlib.ContextDecorator):
    """Turn graph recording off inside a ``with`` block or a decorated function.

    Ops still compute their outputs, but record no Function, so nothing is saved for backward.
    """

    def __enter__(self):
        global _grad_enabled
        self._previous, _grad_enabled = _grad_enabled, False

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._previous
        return False


def is_grad_enabled() -> bool:
    return _grad_enabled


class Function:
    """One node of the graph: an op's forward and its derivative, side by side.

    Subclasses define ``forward(ctx, *arrays, **attrs) -> array`` and
    ``backward(ctx, grad_output) -> one gradient (or None) per input``. ``ctx`` is the Function
    instance itself: forward stores on it, under a meaningful name (``ctx.argmax``, ``ctx.cols``),
    exactly what backward will need. Everything forward stores is released after backward unless
    ``retain_graph=True``, so the graph keeps its shape (for pictures) but not its buffers.
    """

    # Attributes every node has; anything else on a node was saved by forward for backward.
    _STRUCTURE = frozenset(("parents", "attrs", "needs_input_grad", "released"))

    released = False  # set on the node by release(); a class default saves a store per op
    # Saved arrays an op took from the scratch buffers: release() hands them back (scratch.py).
    scratch_saved = ()

    @classmethod
    def apply(cls, *inputs: "Tensor", **attrs) -> "Tensor":
        """Run forward on the inputs' arrays; record this node if any input needs a gradient."""
        # The body of apply_with_ctx, inlined: this runs once per op, and on tiny tensors the
        # Python around the NumPy call is most of an op's cost.
        ctx = cls.__new__(cls)
        ctx.parents = inputs
        ctx.attrs = attrs
        ctx.needs_input_grad = needs = tuple([t.requires_grad for t in inputs])
        out = ctx.forward(*[t.data for t in inputs], **attrs)
        if type(out) is not np.ndarray:  # NumPy turns 0-d results into scalars
            out = np.asarray(out)
        return Tensor._make(out, ctx if _grad_enabled and True in needs else None)

    @classmethod
    def apply_with_ctx(cls, *inputs: "Tensor", **attrs) -> tuple:
        """``apply``, also handing back the node (for ops that return what forward saved)."""
        ctx = cls.__new__(cls)
        ctx.parents = inputs
        ctx.attrs = attrs
        ctx.needs_input_grad = needs = tuple([t.requires_grad for t in inputs])
        out = ctx.forward(*[t.data for t in inputs], **attrs)
        if type(out) is not np.ndarray:  # NumPy turns 0-d results into scalars
            out = np.asarray(out)
        return Tensor._make(out, ctx if _grad_enabled and True in needs else None), ctx

    @property
    def name(self) -> str:
        return type(self).__name__

    def saved_for_backward(self) -> dict:
        """What forward stored for backward, by name (empty once released)."""
        return {k: v for k, v in vars(self).items() if k not in self._STRUCTURE}

    def release(self) -> None:
        saved = self.__dict__
        if len(saved) > 3:  # anything beyond parents, attrs and needs_input_grad
            for key in [k for k in saved if k not in self._STRUCTURE]:
                array = saved.pop(key)
                if key in self.scratch_saved:
                    give_buffer(array if array.base is None else array.base)
        self.released = True

    def forward(ctx, *arrays, **attrs):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def backward(ctx, grad_output):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.name}>"


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a gradient back down to the shape of an input that NumPy broadcast.

    Broadcasting copies an input along new leading axes and along axes of length 1; each copy
    received its own share of the gradient, so the input's gradient is the sum over those axes.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


# PyTorch's AccumulateGrad "steals" a leaf's first gradient instead of copying it when nothing
# else holds it. Copying a large gradient into fresh memory costs as much as the op that made it
# (page faults), so we do the same where CPython's reference count can say so exactly (3.14
# may leave borrowed references uncounted, so there and elsewhere we always copy). The same
# count lets backward() hand an intermediate gradient that nobody holds any more back to the
# scratch buffers, for the next step's ops to write into.
_CAN_COUNT_REFERENCES = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
# The references to a gradient when only backward() holds it: backward's local name,
# _sole_owner's argument and getrefcount's own argument (+ _accumulate's argument for a leaf).
_SOLE_OWNER_REFERENCES = 3


def _sole_owner(grad, dtype, references=_SOLE_OWNER_REFERENCES) -> bool:
    """True if ``grad`` is a writeable array owning its memory that nobody else refers to."""
    return (_CAN_COUNT_REFERENCES and type(grad) is np.ndarray and grad.base is None
            and grad.dtype == dtype and grad.flags.writeable
            and sys.getrefcount(grad) <= references)


def _as_array(data, dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data.data
    array = np.asarray(data, dtype=dtype)
    if array.dtype == object:
        raise TypeError(f"Tensor: cannot make a tensor from {type(data).__name__} data")
    return array


class Tensor:
    """An n-dimensional array that remembers how it was computed.

    ``data`` is a NumPy array; ``grad_fn`` the Function that produced it (None for a leaf);
    ``grad`` the gradient backward() accumulated into it (a Tensor, or None).
    """

    __slots__ = ("data", "grad", "requires_grad", "grad_fn", "name", "retains_grad", "__weakref__")
    __array_ufunc__ = None  # ndarray + Tensor must call Tensor.__radd__, not bypass the graph

    def __init__(self, data, requires_grad: bool = False, dtype=None, name: str | None = None):
        array = _as_array(data, dtype)
        if requires_grad and not np.issubdtype(array.dtype, np.floating):
            raise TypeError(
                f"Tensor: only floating-point tensors can require gradients, but the data has "
                f"dtype {array.dtype}; pass dtype=np.float64 (or float32)"
            )
        self.data = array
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.grad_fn = None
        self.name = name
        self.retains_grad = False

    @classmethod
    def _make(cls, data: np.ndarray, grad_fn: Function | None) -> "Tensor":
        """Wrap an op's output without re-checking it (the hot path of every op)."""
        t = object.__new__(cls)
        t.data, t.grad, t.grad_fn, t.name, t.retains_grad = data, None, grad_fn, None, False
        t.requires_grad = grad_fn is not None
        return t

    # ---- what it is -------------------------------------------------------------------------
    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    is_leaf = property(lambda self: self.grad_fn is None)

    def size(self, dim: int | None = None):
        """PyTorch's ``size()``: the shape, or the length of one dimension."""
        return self.data.shape if dim is None else self.data.shape[dim]

    def numel(self) -> int:
        return self.data.size

    def __len__(self) -> int:
        return len(self.data)

    def numpy(self) -> np.ndarray:
        return self.data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def item(self):
        if self.data.size != 1:
            raise ValueError(
                f"item: only one-element tensors can be converted to a Python number, "
                f"but this one has shape {self.shape}"
            )
        return self.data.item()

    def detach(self) -> "Tensor":
        """The same data, cut off from the graph."""
        return Tensor._make(self.data, None)

    def retain_grad(self) -> "Tensor":
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep theirs)."""
        self.retains_grad = True
        return self

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="Tensor(", precision=4)
        extras = [f"dtype={self.dtype}"]
        if self.name:
            extras.insert(0, f"name={self.name!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"Tensor({body}, {', '.join(extras)})"

    # ---- backpropagation --------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad.

        The chain rule in reverse topological order: each node's gradient is complete (summed
        over all its uses) before its Function passes it on to the node's inputs.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "backward: this tensor does not require grad and has no grad_fn; create the "
                "inputs with requires_grad=True (and do not compute it under no_grad())"
            )
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward: the output has shape {self.shape}; gradients can be created "
                    f"implicitly only for scalar outputs, so pass gradient= with that shape"
                )
            seed = np.ones_like(self.data)
        else:
            seed = _as_array(gradient, self.dtype)
            if seed.shape != self.shape:
                raise ValueError(
                    f"backward: gradient has shape {seed.shape} but the output has shape {self.shape}"
                )
        order = self._topological_order()
        for tensor in order:
            if tensor.grad_fn is not None and tensor.grad_fn.released:
                raise RuntimeError(
                    f"backward: trying to backward through the graph a second time: the buffers "
                    f"{tensor.grad_fn.name} saved were freed by the first backward(). Pass "
                    f"retain_graph=True to the first backward() to keep them"
                )

        grads = {id(self): seed}  # keyed by identity: equal values are still different nodes
        pop = grads.pop
        for tensor in reversed(order):  # outputs before the inputs they were computed from
            grad = pop(id(tensor), None)
            if grad is None:
                continue
            fn = tensor.grad_fn
            if fn is None:  # a leaf: grad is referenced only here and, maybe, by other nodes
                tensor._accumulate(grad, may_adopt=True)
                continue
            if tensor.retains_grad:
                tensor._accumulate(grad)
            input_grads = fn.backward(grad)
            if type(input_grads) is not tuple:
                input_grads = (input_grads,)
            for parent, parent_grad in zip(fn.parents, input_grads):
                if parent_grad is None or not parent.requires_grad:
                    continue
                dtype = parent.data.dtype
                if parent_grad.dtype != dtype:
                    parent_grad = parent_grad.astype(dtype)
                key = id(parent)
                if key in grads:
                    grads[key] = grads[key] + parent_grad
                else:
                    grads[key] = parent_grad
            if not retain_graph:
                fn.release()
            input_grads = parent_grad = None  # no stale references (see _accumulate)
            if grad.nbytes >= SCRATCH_MIN_BYTES and _sole_owner(grad, grad.dtype):
                give_buffer(grad)  # used up: the next step's ops can write into it (scratch.py)

    def _accumulate(self, grad: np.ndarray, may_adopt: bool = False) -> None:
        if self.grad is None:
            if may_adopt and _sole_owner(grad, self.data.dtype, _SOLE_OWNER_REFERENCES + 1):
                self.grad = Tensor._make(grad, None)
                return
            # A copy: the array may be shared with other nodes (Add hands one gradient to both
            # inputs) or be a read-only broadcast view, and the user may edit .grad in place.
            self.grad = Tensor._make(np.array(grad, dtype=self.data.dtype), None)
        else:
            self.grad.data = self.grad.data + grad

    def _topological_order(self) -> list:
        """Every tensor that requires grad and leads to self, each after all its inputs.

        Iterative depth-first search: a chain of 100,000 ops would overflow Python's recursion
        limit. A tensor seen for the first time is expanded: pushed back, with its inputs above
        it; when it comes off the stack again all of them have been emitted, so it is emitted.
        (The stack holds tensors only, no (tensor, flag) tuples: allocating one per visit was a
        noticeable share of backward on long chains.)
        """
        order, expanded, emitted = [], set(), set()
        stack = [self]
        push, pop = stack.append, stack.pop
        while stack:
            tensor = pop()
            key = id(tensor)
            if key in expanded:
                if key not in emitted:  # else a duplicate pushed before it was emitted
                    emitted.add(key)
                    order.append(tensor)
                continue
            expanded.add(key)
            push(tensor)
            fn = tensor.grad_fn
            if fn is not None:
                for parent in fn.parents:
                    if parent.requires_grad and id(parent) not in expanded:
                        push(parent)
        return order

    # ---- ops, as methods and operators (each one a Function in ops/) -------------------------
    def _const(self, other) -> "Tensor":
        """A Python number or array as a tensor that adopts our floating dtype (float32 stays so)."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (int, float, np.number)) and self.data.dtype.kind == "f":
            return Tensor._make(np.asarray(other, dtype=self.data.dtype), None)
        return Tensor._make(_as_array(other, None), None)

    def __add__(self, other): return E.Add.apply(self, self._const(other))
    def __radd__(self, other): return E.Add.apply(self._const(other), self)
    def __sub__(self, other): return E.Sub.apply(self, self._const(other))
    def __rsub__(self, other): return E.Sub.apply(self._const(other), self)
    def __mul__(self, other): return E.Mul.apply(self, self._const(other))
    def __rmul__(self, other): return E.Mul.apply(self._const(other), self)
    def __truediv__(self, other): return E.Div.apply(self, self._const(other))
    def __rtruediv__(self, other): return E.Div.apply(self._const(other), self)
    def __neg__(self): return E.Neg.apply(self)
    def __matmul__(self, other): return M.MatMul.apply(self, self._const(other))
    def __rmatmul__(self, other): return M.MatMul.apply(self._const(other), self)
    def __getitem__(self, index): return V.Index.apply(self, index=V.normalize_index(index))

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor) or not np.isscalar(exponent):
            raise TypeError(
                f"pow: the exponent must be a Python number, got {type(exponent).__name__}; "
                f"for a tensor exponent write (exponent * x.log()).exp()"
            )
        return E.Pow.apply(self, exponent=float(exponent))

    def exp(self): return E.Exp.apply(self)
    def log(self): return E.Log.apply(self)
    def sqrt(self): return E.Sqrt.apply(self)
    def relu(self): return E.ReLU.apply(self)
    def sigmoid(self): return E.Sigmoid.apply(self)
    def tanh(self): return E.Tanh.apply(self)
    def arctan(self): return E.Arctan.apply(self)
    def abs(self): return E.Abs.apply(self)

    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        return R.Sum.apply(self, **R.reduce_args("sum", self.shape, axis, keepdims, dim, keepdim))

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        return R.Mean.apply(self, **R.reduce_args("mean", self.shape, axis, keepdims, dim, keepdim))

    def max(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        return R.Max.apply(self, **R.reduce_args("max", self.shape, axis, keepdims, dim, keepdim))

    def argmax(self, axis=None, *, dim=None) -> "Tensor":
        """Index of the maximum (not differentiable: an integer tensor)."""
        axis = dim if dim is not None else axis
        return Tensor._make(np.asarray(self.data.argmax(axis=axis)), None)

    def reshape(self, *shape):
        return V.Reshape.apply(self, shape=V.resolve_shape("reshape", self.shape, shape))

    view = reshape

    def transpose(self, dim0: int | None = None, dim1: int | None = None):
        """Swap two dimensions (PyTorch); with no arguments reverse them all (NumPy's ``.T``)."""
        return V.Permute.apply(self, dims=V.swap_dims(self.ndim, dim0, dim1))

    T = property(lambda self: self.transpose())

    def permute(self, *dims):
        return V.Permute.apply(self, dims=V.check_permutation(self.ndim, dims))

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        return V.Reshape.apply(self, shape=V.flattened_shape(self.shape, start_dim, end_dim))

    def flip(self, dims):
        return V.Flip.apply(self, dims=V.normalize_dims("flip", self.ndim, dims))

    def matmul(self, other): return self @ other

    def conv2d(self, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        from .nn import functional as F
        return F.conv2d(self, weight, bias, stride, padding, dilation, groups)

    def max_pool2d(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False, ties="first"):
        from .nn import functional as F
        return F.max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode,
                            return_indices, ties=ties)

    def avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
        from .nn import functional as F
        return F.avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)

    def log_softmax(self, dim: int = -1):
        return L.LogSoftmax.apply(self, dim=R.normalize_axis("log_softmax", self.ndim, dim))

    def softmax(self, dim: int = -1):
        return self.log_softmax(dim).exp()


# The op modules import Function and Tensor from this file, so they come in after both exist.
from .ops import elementwise as E  # noqa: E402
from .ops import loss as L  # noqa: E402
from .ops import matmul as M  # noqa: E402
from .ops import movement as V  # noqa: E402
from .ops import reduce as R  # noqa: E402
