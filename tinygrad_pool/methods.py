"""The Tensor's op methods and operators: ``x + y``, ``x.exp()``, ``x.sum(1)``, ``x.conv2d(w)``.

Each one checks its arguments as torch does and calls the op's function or Node in ops/. They
are written here, above ops/, and attached to Tensor (engine/tensor.py ``attach``), so that the
engine imports no op. The dtype conversions (``to``, ``float``...) are here too: a float-to-float
cast is a node of the graph.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import dtypes, unsupported
from .devices import check_device, missing
from .grad_mode import _mode
from .devices import device as device_of
from .engine import OMITTED, Cast, NotAnOperand, Size, Tensor, attach, numpy_spellings
from .engine.data import _BOOLS, _NOT_COMPARABLE, _check_can_require_grad
from .engine.tensor import _as_array
from . import random
from .random import default_generator, multinomial
from . import args
from .ops import (bitwise, conv, cumulative, division, elementwise, join, loss, math_functions,
                  matmul, movement, pool, reduce, select)
from .ops import sort as ordering
from . import creation


def args_aliases(method, name: str, aliases: tuple):
    """``method`` that also takes its argument ``name`` under the keywords ``aliases`` (one at a
    time; with the argument given twice, Python's TypeError)."""
    def with_aliases(self, *positional, **kwargs):
        for alias in aliases:
            if alias in kwargs:
                if positional or name in kwargs:
                    raise TypeError(f"{method.__name__}() got multiple values for argument "
                                    f"'{name}' ({alias}= is another name for it)")
                kwargs[name] = kwargs.pop(alias)
        return method(self, *positional, **kwargs)
    with_aliases.__name__, with_aliases.__qualname__ = method.__name__, method.__qualname__
    with_aliases.__doc__, with_aliases.__wrapped__ = method.__doc__, method
    return with_aliases


class TensorMethods:
    """The methods attached to Tensor below."""

    # ---- what it is, as Python values ------------------------------------------------------
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

    def numel(self) -> int:
        return self._data.size

    def __len__(self) -> int:
        return len(self._data)

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

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if type(requires_grad) is not bool:
            requires_grad = args.check_flag("requires_grad_", "requires_grad", requires_grad)
        if requires_grad:
            _check_can_require_grad(self._data.dtype, "requires_grad_")
        self.requires_grad = requires_grad
        return self

    def size(self, dim: int | None = None):
        """PyTorch's ``size()``: the shape, or the length of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[reduce.normalize_axis("size", self._data.ndim, dim)]

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
            return Cast.apply(self, dtype=dtype)
        return Tensor._make(self._data.astype(dtype), None)  # not differentiable: no graph

    def type(self, dtype=None, non_blocking: bool = False):
        """torch's name of the tensor's type ('torch.FloatTensor'), or the tensor converted to
        ``dtype``: a dtype, a legacy type (torch.LongTensor) or its name ('torch.LongTensor');
        the tensor itself where it already has that dtype."""
        if dtype is None:
            return dtypes.legacy_type_name(self._data.dtype)
        if dtype is Tensor:  # (torch's default tensor type)
            dtype = dtypes.get_default_dtype()
        return self.to(dtypes.legacy_type_dtype("type", dtype))

    def float(self): return self.to(dtypes.float32)
    def double(self): return self.to(dtypes.float64)
    def half(self): return self.to(dtypes.float16)
    def long(self): return self.to(dtypes.int64)
    def int(self): return self.to(dtypes.int32)
    def bool(self): return self.to(dtypes.bool)
    def type_as(self, other): return self.to(elementwise.check_tensor("type_as", "other", other).dtype)
    def cpu(self): return self

    def clone(self) -> "Tensor":
        """A copy in new memory, still in the graph (its gradient passes straight through)."""
        return movement.Clone.apply(self)

    # ---- new tensors of this one's dtype (torch's new_*: a leaf, outside any graph)
    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False):
        return creation.zeros(*movement.keyword_sizes("new_zeros", "size", sizes, size),
                              dtype=self._data.dtype if dtype is None else dtype, device=device,
                              requires_grad=requires_grad)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False):
        return creation.ones(*movement.keyword_sizes("new_ones", "size", sizes, size),
                             dtype=self._data.dtype if dtype is None else dtype, device=device,
                             requires_grad=requires_grad)

    def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False):
        return creation.empty(*movement.keyword_sizes("new_empty", "size", sizes, size),
                              dtype=self._data.dtype if dtype is None else dtype, device=device,
                              requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
        """``size`` filled with ``fill_value``, in this tensor's dtype (3.5 in an int64 tensor's
        new_full is 3, as torch's)."""
        return creation.full(size, fill_value, dtype=self._data.dtype if dtype is None else dtype,
                             device=device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
        """A copy of ``data`` in this tensor's dtype (a leaf: a Tensor's graph is not kept)."""
        if isinstance(data, Tensor):
            warnings.warn("To copy construct from a tensor, it is recommended to use "
                          "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                          ".requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                          UserWarning, stacklevel=2)
        return creation.tensor(data, dtype=self._data.dtype if dtype is None else dtype,
                               device=device, requires_grad=requires_grad)

    # ---- ops, as methods and operators ------------------------------------------------------
    def _const(self, other) -> "Tensor":
        """A Python number or array as a tensor that adopts our floating dtype (float32 stays so)."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (int, float, np.number)) and self._data.dtype.kind == "f":
            return Tensor._make(np.asarray(other, dtype=self._data.dtype), None)
        return Tensor._make(_as_array(other, None), None)

    def _pair(self, other, floating: bool = False) -> tuple:
        """(self, other) as tensors of one dtype, by torch's promotion rules: a Python number
        does not change a float tensor's dtype; ``int_tensor * 1.5`` is float32 (ops/elementwise;
        ``floating``: true division's, where a Python integer is taken as a float, not wrapped
        into an integer tensor's dtype). An operand that is no tensor, array or real number
        raises ``NotAnOperand``: the operator then returns NotImplemented, and Python raises its
        TypeError (as with torch)."""
        if isinstance(other, Tensor):
            if other._data.dtype is self._data.dtype:  # the common case, decided at once
                return self, other
        elif isinstance(other, (int, float)) and self._data.dtype.kind == "f":
            return self, Tensor._make(np.asarray(other, dtype=self._data.dtype), None)
        elif isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not elementwise.is_number(other):
            raise NotAnOperand
        return tuple(elementwise.promote(self, other, floating=floating))

    # (The try costs nothing until something is raised: the chain of +, * stays as fast. The
    # commonest case, another Tensor of our dtype, is decided before any call, since the
    # promotion call is a noticeable share of a small op; see benchmarks/README.md.)
    def __add__(self, other):
        if type(other) is Tensor and other._data.dtype is self._data.dtype:
            return elementwise.Add.apply(self, other)
        try:
            return elementwise.Add.apply(*self._pair(other))
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
            elementwise.check_sub("-", self, other)
        return elementwise.Sub.apply(a, b)

    def __mul__(self, other):
        if type(other) is Tensor and other._data.dtype is self._data.dtype:
            return elementwise.Mul.apply(self, other)
        try:
            return elementwise.Mul.apply(*self._pair(other))
        except NotAnOperand:
            return NotImplemented

    def __truediv__(self, other):
        if type(other) is Tensor and other._data.dtype is self._data.dtype \
                and self._data.dtype.kind == "f":
            return elementwise.Div.apply(self, other)
        try:
            return elementwise.Div.apply(*elementwise.floating_pair(*self._pair(other, floating=True)))
        except NotAnOperand:
            return NotImplemented

    def __radd__(self, other):
        try:
            return elementwise.Add.apply(*self._pair(other)[::-1])
        except NotAnOperand:
            return NotImplemented

    def __rsub__(self, other):
        try:
            b, a = self._pair(other)
        except NotAnOperand:
            return NotImplemented
        elementwise.check_sub("-", other, self)
        return elementwise.Sub.apply(a, b)

    def __rmul__(self, other):
        try:
            return elementwise.Mul.apply(*self._pair(other)[::-1])
        except NotAnOperand:
            return NotImplemented

    def __rtruediv__(self, other):
        try:
            return elementwise.Div.apply(*elementwise.floating_pair(*self._pair(other, floating=True)[::-1]))
        except NotAnOperand:
            return NotImplemented

    def __matmul__(self, other):
        if isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not isinstance(other, Tensor):
            return NotImplemented
        return matmul.matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, np.ndarray):
            return NotImplemented
        return matmul.matmul(Tensor._make(_as_array(other, None), None), self)

    def __neg__(self):
        if self._data.dtype is dtypes.bool:
            elementwise.refuse_bool("-", self)
        return elementwise.Neg.apply(self)

    def __getitem__(self, index): return movement.Index.apply(self, index=movement.normalize_index(index))

    # torch's method spellings of the operators: a Tensor or a number, nothing else
    def add(self, other, *, alpha=1):
        return self + elementwise.scaled_operand("add", other, alpha)

    def sub(self, other, *, alpha=1):
        elementwise.check_sub("sub", self, other)
        return self - elementwise.scaled_operand("sub", other, alpha)

    def mul(self, other): return self * elementwise.check_operand("mul", "other", other)
    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None and self._data.dtype.kind == "f":  # the operator's fast path
            return self / elementwise.check_operand("div", "other", other)
        return division.div(self, other, rounding_mode=rounding_mode)

    def divide(self, other, *, rounding_mode=None):
        return division.div(self, other, rounding_mode=rounding_mode, op="divide")

    def true_divide(self, other): return self / elementwise.check_operand("true_divide", "other", other)
    def neg(self):
        if self._data.dtype is dtypes.bool:
            elementwise.refuse_bool("neg", self)
        return -self

    def square(self): return self * self
    def square_(self):
        if self._data.dtype is dtypes.bool:  # (bool squares to int64, as torch's square)
            raise RuntimeError("square_: result type int64 can't be cast to the desired output "
                               "type bool of input")
        return self.mul_(self)
    multiply, subtract, negative = mul, sub, neg

    def __pow__(self, exponent):
        if isinstance(exponent, np.ndarray):  # (torch takes an array operand too)
            exponent = Tensor._make(_as_array(exponent, None), None)
        try:
            return elementwise.pow(self, exponent)
        except NotAnOperand:
            return NotImplemented

    def __rpow__(self, base):
        try:
            return elementwise.pow(base, self)
        except NotAnOperand:
            return NotImplemented

    def pow(self, exponent): return elementwise.pow(self, elementwise.check_operand("pow", "exponent", exponent))

    # Comparisons and logic give bool tensors, element by element: they have no gradient.
    # (A tensor stays hashable by identity, as in torch, so it can key a dict or sit in a set.)
    def _compare(self, other, op, name: str) -> "Tensor":
        other = self._pair(other)[1]._data
        if self._data.shape != other.shape and self._data.ndim and other.ndim:
            elementwise.check_broadcast(name, self._data, other)
        return Tensor._make(np.asarray(op(self._data, other)), None)

    # The methods take a Tensor or a number; the operators an array too (NotImplemented else)
    def eq(self, other): return self._compare(elementwise.check_operand("eq", "other", other), np.equal, "eq")
    def ne(self, other): return self._compare(elementwise.check_operand("ne", "other", other), np.not_equal, "ne")
    def gt(self, other): return self._compare(elementwise.check_operand("gt", "other", other), np.greater, "gt")
    def lt(self, other): return self._compare(elementwise.check_operand("lt", "other", other), np.less, "lt")
    def ge(self, other):
        return self._compare(elementwise.check_operand("ge", "other", other), np.greater_equal, "ge")

    def le(self, other):
        return self._compare(elementwise.check_operand("le", "other", other), np.less_equal, "le")

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

    # Bitwise operators (ops/bitwise.py): integer and bool tensors, no gradient
    def _bitwise(self, op: str, symbol: str, other, reflected: bool = False):
        if isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not isinstance(other, Tensor) and not elementwise.is_number(other):
            return NotImplemented  # (Python's TypeError: unsupported operand type(s) for &)
        return bitwise.bitwise(op, other, self, symbol) if reflected else \
            bitwise.bitwise(op, self, other, symbol)

    def __and__(self, other): return self._bitwise("bitwise_and", "&", other)
    def __or__(self, other): return self._bitwise("bitwise_or", "|", other)
    def __xor__(self, other): return self._bitwise("bitwise_xor", "^", other)
    def __lshift__(self, other): return self._bitwise("bitwise_left_shift", "<<", other)
    def __rshift__(self, other): return self._bitwise("bitwise_right_shift", ">>", other)
    def __rand__(self, other): return self._bitwise("bitwise_and", "&", other, reflected=True)
    def __ror__(self, other): return self._bitwise("bitwise_or", "|", other, reflected=True)
    def __rxor__(self, other): return self._bitwise("bitwise_xor", "^", other, reflected=True)
    def __rlshift__(self, other): return self._bitwise("bitwise_left_shift", "<<", other, reflected=True)
    def __rrshift__(self, other): return self._bitwise("bitwise_right_shift", ">>", other, reflected=True)

    def __invert__(self):
        if self._data.dtype.kind == "f":  # (torch's TypeError here, NotImplementedError in bitwise_not)
            raise TypeError(f"~: input has dtype {self._data.dtype}: ~ (operator.invert) is only "
                            f"implemented on integer and Boolean-type tensors")
        return bitwise.bitwise_not(self, "~")

    def logical_not(self): return Tensor._make(np.asarray(self._data == 0), None)
    def logical_and(self, other):
        return self._compare(elementwise.check_tensor("logical_and", "other", other), np.logical_and,
                             "logical_and")

    def logical_or(self, other):
        return self._compare(elementwise.check_tensor("logical_or", "other", other), np.logical_or,
                             "logical_or")

    @numpy_spellings
    def all(self, dim=None, keepdim: bool = False): return self._test(np.all, "all", dim, keepdim)
    @numpy_spellings
    def any(self, dim=None, keepdim: bool = False): return self._test(np.any, "any", dim, keepdim)

    def _test(self, test, name: str, dim, keepdim: bool) -> "Tensor":
        """all/any along dims: a bool tensor, no gradient."""
        axes = reduce.reduce_args(name, self._data.shape, None, keepdim, dim, OMITTED)
        return Tensor._make(np.asarray(test(self._data, axes["axis"], keepdims=axes["keepdims"])),
                            None)

    def _float(self) -> "Tensor":
        """Input of a float function: integer and bool tensors become float32, as torch makes
        their exp, log, ... (NumPy's results would be float64)."""
        return self if self._data.dtype.kind == "f" else elementwise.floating(self)

    def exp(self): return elementwise.Exp.apply(self._float())
    def log(self): return elementwise.Log.apply(self._float())
    def sqrt(self): return elementwise.Sqrt.apply(self._float())
    def relu(self):
        if self._data.dtype is dtypes.bool:
            elementwise.refuse_bool("relu", self)
        return elementwise.ReLU.apply(self)

    def sigmoid(self): return elementwise.Sigmoid.apply(self._float())
    def tanh(self): return elementwise.Tanh.apply(self._float())
    def arctan(self): return elementwise.Arctan.apply(self._float())
    def abs(self):
        if self._data.dtype is dtypes.bool:
            elementwise.refuse_bool("abs", self)
        return elementwise.Abs.apply(self)

    def log1p(self): return elementwise.log1p(self)
    def rsqrt(self): return elementwise.rsqrt(self)
    def sin(self): return elementwise.sin(self)
    def cos(self): return elementwise.cos(self)
    def sign(self): return elementwise.sign(self)
    def floor(self): return elementwise.floor(self)
    def ceil(self): return elementwise.ceil(self)
    def round(self, *, decimals: int = 0): return elementwise.round(self, decimals=decimals)
    def maximum(self, other): return elementwise.maximum(self, other)
    def minimum(self, other): return elementwise.minimum(self, other)
    def where(self, condition, other): return elementwise.where(condition, self, other)

    def clamp(self, min=None, max=None): return elementwise.clamp(self, min, max)
    clip = clamp
    def clamp_min(self, min): return elementwise.clamp(self, min=elementwise.check_bound("clamp_min", "min", min))
    def clamp_max(self, max): return elementwise.clamp(self, max=elementwise.check_bound("clamp_max", "max", max))

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
                raise elementwise.BroadcastError(f"{op}: {name} of shape {shape} does not broadcast to "
                                       f"the shape {self._data.shape} of input, which the result "
                                       f"is written into")

    def _inplace_binary(self, op: str, fn: type, other, alpha=1) -> "Tensor":
        """``x.add_(y)``, ``x += y``... (``op`` is the name errors give): y a Tensor or a number
        (anything else raises ``NotAnOperand``, which ``+=`` turns into NotImplemented)."""
        elementwise.check_operand(op, "other", other)
        if fn is elementwise.Sub:
            elementwise.check_sub(op, self, other)
        if type(alpha) is not builtins.int or alpha != 1:
            other = elementwise.scaled_operand(op, other, alpha)
        dtype = elementwise.result_dtype(self, other)
        if fn is elementwise.Div and dtype.kind != "f":  # true division: integers divide as floats
            dtype = dtypes.get_default_dtype()
        # (an integer result: a Python integer wraps around into its dtype, as torch's)
        other = elementwise.as_dtype(other, dtype) if dtype.kind in "iu" \
            and elementwise.is_number(other) else self._const(other)
        self._check_fits(op, "other", other, dtype)
        return self._inplace(fn, other)

    def _inplace_unary(self, op: str, fn: type, floating: bool = False) -> "Tensor":
        if floating and self._data.dtype.kind != "f":
            raise RuntimeError(f"{op}: result type {dtypes.get_default_dtype()} can't be cast "
                               f"to the desired output type {self._data.dtype} of input")
        if self._data.dtype is dtypes.bool and fn in (elementwise.Neg, elementwise.ReLU, elementwise.Abs):
            elementwise.refuse_bool(op, self)
        return self._inplace(fn)

    def add_(self, other, *, alpha=1): return self._inplace_binary("add_", elementwise.Add, other, alpha)
    def sub_(self, other, *, alpha=1): return self._inplace_binary("sub_", elementwise.Sub, other, alpha)
    def mul_(self, other): return self._inplace_binary("mul_", elementwise.Mul, other)
    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return self._inplace_binary("div_", elementwise.Div, other)
        division.check_rounding("div_", rounding_mode)
        return self._division_inplace("div_", other, rounding_mode)

    def divide_(self, other, *, rounding_mode=None):
        division.check_rounding("divide_", rounding_mode)
        return self._division_inplace("divide_", other, rounding_mode)

    def true_divide_(self, other): return self._inplace_binary("true_divide_", elementwise.Div, other)

    def pow_(self, exponent):
        if isinstance(exponent, complex):
            raise RuntimeError(f"pow_: exponent {exponent!r} is complex: result type complex "
                               f"can't be cast to the desired output type {self._data.dtype} of "
                               f"input")
        elementwise.check_operand("pow_", "exponent", exponent)
        dtype = elementwise.result_dtype(self, exponent)
        elementwise.check_fits("pow_", dtype, exponent=exponent)  # (int8 ** 300: refused)
        if isinstance(exponent, Tensor):
            self._check_fits("pow_", "exponent", exponent, dtype)
            return self._inplace(elementwise.PowTensor, exponent)
        self._check_fits("pow_", "exponent", None, dtype)
        if self._data.dtype.kind != "f" and exponent < 0:
            raise RuntimeError(f"pow_: integers to negative integer powers are not allowed "
                               f"(input of dtype {self._data.dtype}, exponent {exponent})")
        return self._inplace(elementwise.Pow, exponent=exponent)

    def neg_(self): return self._inplace_unary("neg_", elementwise.Neg)
    def exp_(self): return self._inplace_unary("exp_", elementwise.Exp, floating=True)
    def log_(self): return self._inplace_unary("log_", elementwise.Log, floating=True)
    def sqrt_(self): return self._inplace_unary("sqrt_", elementwise.Sqrt, floating=True)
    def relu_(self): return self._inplace_unary("relu_", elementwise.ReLU)
    def sigmoid_(self): return self._inplace_unary("sigmoid_", elementwise.Sigmoid, floating=True)
    def tanh_(self): return self._inplace_unary("tanh_", elementwise.Tanh, floating=True)
    def abs_(self): return self._inplace_unary("abs_", elementwise.Abs)

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp_: at least one of min and max must not be None")
        bounds = {side: value for side, value in (("min", min), ("max", max)) if value is not None}
        tensors = [isinstance(value, Tensor) for value in bounds.values()]
        for side, value in bounds.items():
            if not isinstance(value, Tensor):
                args.check_scalar("clamp_", side, value)
        dtype = elementwise.result_dtype(self, *bounds.values())
        if any(tensors):
            if not all(tensors):
                raise TypeError(f"clamp_: min and max must both be Tensors or both be numbers "
                                f"(or None), got min={type(min).__name__}, "
                                f"max={type(max).__name__}")
            for side, value in bounds.items():
                self._check_fits("clamp_", side, value, dtype)
            return self._inplace(elementwise.ClampTensor, *bounds.values(), sides=tuple(bounds))
        self._check_fits("clamp_", "min" if min is not None else "max", None, dtype)
        low, high = elementwise.clamp_bounds("clamp_", dtype, min, max)
        return self._inplace(elementwise.Clamp, low=low, high=high)

    clip_ = clamp_

    def clamp_min_(self, min): return self.clamp_(min=min)
    def clamp_max_(self, max): return self.clamp_(max=max)

    def copy_(self, src):
        self._check_fits("copy_", "src", elementwise.check_tensor("copy_", "src", src))
        return self._inplace(movement.Copy, src)

    def fill_(self, value):
        if isinstance(value, Tensor):  # a 0-d tensor: its gradient is the sum over self
            if value._data.ndim:
                raise RuntimeError(f"fill_: value must be a number or a 0-d Tensor, got a "
                                   f"tensor of shape {value._data.shape}")
            return self.copy_(value)
        return self._inplace(movement.Fill, value=args.check_scalar("fill_", "value", value))

    def zero_(self): return self.fill_(0)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
        """Fill with numbers drawn uniformly from [a, b) (torch's ``from`` and ``to``)."""
        for name, value in (("a", a), ("b", b)):
            if not np.isfinite(args.check_number("uniform_", name, value)):
                raise RuntimeError(f"uniform_: {name}={value} is out of bounds for float")
        if a > b:
            raise RuntimeError(f"uniform_: expects a [a, b) range, but found a={a} > b={b}")
        args.check_floating("uniform_", "input", self)
        rng = default_generator() if generator is None else generator
        return self.copy_(Tensor._make(rng.uniform(a, b, self._data.shape).astype(self.dtype), None))

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
        """Fill with numbers drawn from the normal distribution N(mean, std²)."""
        args.check_number("normal_", "mean", mean)
        if not args.check_number("normal_", "std", std) >= 0:  # (NaN is refused too)
            raise RuntimeError(f"normal_: expects std >= 0.0, but found std={std}")
        args.check_floating("normal_", "input", self)
        rng = default_generator() if generator is None else generator
        return self.copy_(Tensor._make(rng.normal(mean, std, self._data.shape).astype(self.dtype),
                                       None))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """``num_samples`` indices per row, drawn in proportion to the weights (torch's)."""
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        """0s and 1s, each 1 with probability self's element (or ``p``)."""
        return random.bernoulli(self, p, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        return random.bernoulli_(self, p, generator=generator)

    # ``x += y`` with a y that no in-place op takes (an array, a list): NotImplemented, and
    # Python falls back to ``x = x + y``, as with torch
    def __iadd__(self, other): return self._augmented("+=", elementwise.Add, other)
    def __isub__(self, other): return self._augmented("-=", elementwise.Sub, other)
    def __imul__(self, other): return self._augmented("*=", elementwise.Mul, other)
    def __itruediv__(self, other): return self._augmented("/=", elementwise.Div, other)

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
                args.check_scalar("index", "value", value)  # (a complex value: RuntimeError)
                raise TypeError(f"index: can't assign a {type(value).__name__} to input[index]: "
                                f"value must be a Tensor or a number")
            value = self._const(value)
        if index is True or index is False:  # torch's shortcuts: t[True] = v is t[None] = v,
            if index is False:               # and t[False] = v writes nothing
                return
            index = None
        index = movement.normalize_index(index)
        if movement.is_advanced(index):
            if given and value._data.dtype != self._data.dtype \
                    and not (value._data.size == 1 and movement.is_mask_fill(index)):
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
                result = movement.IndexPut.call(self._data, value._data, index=index)
                self._write(result)
                return
            self._take_over(movement.IndexPut.apply(self, value, index=index))
            return
        target = movement.Index.apply(self, index=index)  # (index is normalized already)
        extra = value._data.ndim - target._data.ndim
        if extra > 0 and value._data.shape[:extra] == (1,) * extra:  # torch drops leading 1s
            value = value.reshape(value._data.shape[extra:])
        target._check_fits("index", "value", value)
        target._inplace(movement.Copy, value)

    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=OMITTED, dtype=None):
        source = self if dtype is None else self.to(dtype)  # (torch casts first, then sums)
        total = reduce.Sum.apply(source, **reduce.reduce_args("sum", self._data.shape, axis, keepdims, dim, keepdim))
        return total if dtype is None else total.to(dtype)  # (int8 stays int8 when asked for)

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=OMITTED, dtype=None):
        source = self if dtype is None else self.to(dtype)
        return reduce.Mean.apply(source, **reduce.reduce_args("mean", self._data.shape, axis, keepdims, dim, keepdim))

    @numpy_spellings
    def max(self, dim=OMITTED, keepdim: bool = False):
        """The largest value (0-d); with ``dim``, ``(values, indices)`` along it; given a
        tensor, the elementwise maximum — as torch's ``max``."""
        return reduce.max(self, dim, keepdim)

    @numpy_spellings
    def min(self, dim=OMITTED, keepdim: bool = False): return reduce.min(self, dim, keepdim)
    @numpy_spellings
    def amax(self, dim=(), keepdim: bool = False): return reduce.amax(self, dim, keepdim)
    @numpy_spellings
    def amin(self, dim=(), keepdim: bool = False): return reduce.amin(self, dim, keepdim)
    @numpy_spellings
    def argmax(self, dim=None, keepdim: bool = False): return reduce.argmax(self, dim, keepdim)
    @numpy_spellings
    def argmin(self, dim=None, keepdim: bool = False): return reduce.argmin(self, dim, keepdim)
    @numpy_spellings
    def prod(self, dim=OMITTED, keepdim: bool = False, *, dtype=None):
        product = reduce.prod(self if dtype is None else self.to(dtype), dim, keepdim)
        return product if dtype is None else product.to(dtype)

    @numpy_spellings
    def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
        return reduce.var(self, dim, unbiased, keepdim, correction=correction)

    @numpy_spellings
    def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
        return reduce.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p="fro", dim=None, keepdim: bool = False): return reduce.norm(self, p, dim, keepdim)
    @numpy_spellings
    def logsumexp(self, dim, keepdim: bool = False): return reduce.logsumexp(self, dim, keepdim)
    @numpy_spellings
    def cumsum(self, dim, *, dtype=None):
        total = reduce.cumsum(self if dtype is None else self.to(dtype), dim)
        return total if dtype is None else total.to(dtype)

    @numpy_spellings
    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None):
        return reduce.nansum(self, dim, keepdim, dtype=dtype)

    @numpy_spellings
    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None):
        return reduce.nanmean(self, dim, keepdim, dtype=dtype)

    def trace(self): return reduce.trace(self)
    def aminmax(self, *, dim=None, keepdim: bool = False):
        return reduce.aminmax(self, dim=dim, keepdim=keepdim)

    # (the sizes as ints, one sequence, or by keyword as torch: reshape(shape=(6, 4)))
    def reshape(self, *sizes, shape=None):
        if shape is not None:
            sizes = movement.keyword_sizes("reshape", "shape", sizes, shape)
        return movement.Reshape.apply(self, shape=movement.resolve_shape("reshape", self._data.shape, sizes))

    def view(self, *sizes, size=None, dtype=None):
        return movement.view(self, *movement.keyword_sizes("view", "size", sizes, size), dtype=dtype)

    def expand(self, *sizes, size=None, implicit: bool = False):  # (implicit: torch's, for tracing)
        if size is not None:
            sizes = movement.keyword_sizes("expand", "size", sizes, size)
        return movement.Expand.apply(self, shape=movement.expanded_shape(self._data.shape, sizes))

    def transpose(self, dim0: int | None = None, dim1: int | None = None):
        """Swap two dimensions (PyTorch); with no arguments reverse them all (NumPy's ``.T``)."""
        return movement.Permute.apply(self, dims=movement.swap_dims(self.ndim, dim0, dim1))

    def swapaxes(self, axis0: int, axis1: int): return self.transpose(axis0, axis1)
    def swapdims(self, dim0: int, dim1: int): return self.transpose(dim0, dim1)

    T = property(lambda self: self.transpose())

    def permute(self, *order, dims=None):
        if dims is not None:
            order = movement.keyword_sizes("permute", "dims", order, dims)
        return movement.Permute.apply(self, dims=movement.check_permutation(self.ndim, order))

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        return movement.Reshape.apply(self, shape=movement.flattened_shape(self._data.shape, start_dim, end_dim))

    def ravel(self): return self.flatten()

    def flip(self, *order, dims=None):
        order = movement.keyword_sizes("flip", "dims", order, dims)
        if not order:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        return movement.flip(self, order[0] if len(order) == 1 else order)

    def fliplr(self): return movement.fliplr(self)
    def flipud(self): return movement.flipud(self)
    def rot90(self, k: int = 1, dims=(0, 1)): return movement.rot90(self, k, dims)
    @numpy_spellings
    def squeeze(self, dim=OMITTED): return movement.squeeze(self, dim)
    @numpy_spellings
    def unsqueeze(self, dim): return movement.unsqueeze(self, dim)
    def unflatten(self, dim, sizes): return movement.unflatten(self, dim, sizes)
    def view_as(self, other): return movement.view_as(self, other)
    def reshape_as(self, other): return movement.reshape_as(self, other)
    def expand_as(self, other): return movement.expand_as(self, other)
    def t(self): return movement.t(self)
    mT = property(lambda self: movement.matrix_transpose(self))
    def repeat(self, *sizes, repeats=None):
        return movement.repeat(self, *movement.keyword_sizes("repeat", "repeats", sizes, repeats))

    def tile(self, *sizes, dims=None):
        return movement.tile(self, *movement.keyword_sizes("tile", "dims", sizes, dims))
    @numpy_spellings
    def narrow(self, dim, start, length): return movement.narrow(self, dim, start, length)
    def roll(self, shifts, dims=None): return movement.roll(self, shifts, dims)
    def contiguous(self): return movement.contiguous(self)
    @numpy_spellings
    def chunk(self, chunks, dim=0): return join.chunk(self, chunks, dim)
    def split(self, split_size, dim=0): return join.split(self, split_size, dim)
    @numpy_spellings
    def unbind(self, dim=0): return join.unbind(self, dim)
    # (torch.hsplit, vsplit, dsplit: tensor_split along dim 1, 0 and 2)
    def hsplit(self, indices_or_sections):
        return join.directional_split("hsplit", self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return join.directional_split("vsplit", self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return join.directional_split("dsplit", self, indices_or_sections)

    @numpy_spellings
    def tensor_split(self, indices_or_sections, dim=0):
        return join.tensor_split(self, indices_or_sections, dim)

    # (torch names tensor_split's first argument by its kind when it is given by keyword)
    tensor_split = args_aliases(tensor_split, "indices_or_sections",
                                ("sections", "indices", "tensor_indices_or_sections"))

    # ---- where the nonzero elements are (integer results: no gradient)
    def nonzero(self, *, as_tuple: bool = False):
        """The indices of the nonzero elements: an int64 (count, ndim) tensor in row-major
        order, or with ``as_tuple`` one 1-d tensor per dim (a 0-d input counts as 1-d)."""
        if args.check_flag("nonzero", "as_tuple", as_tuple):
            return tuple(Tensor._make(i.astype(np.int64), None)
                         for i in np.nonzero(np.atleast_1d(self._data)))
        return self.argwhere()

    def argwhere(self):
        found = np.argwhere(self._data)
        return Tensor._make(found.astype(np.int64, copy=False), None)

    @numpy_spellings
    def count_nonzero(self, dim=None):
        """The number of nonzero elements (int64), in all or along ``dim`` (an int or a tuple)."""
        axes = None if dim is None else movement.normalize_dims("count_nonzero", self._data.ndim,
                                                                dim, distinct=True, name="dim")
        if not axes or self._data.ndim == 0:
            axes = None  # (dims=() counts all, as torch; dim 0 of a 0-d tensor is the tensor)
        return Tensor._make(np.asarray(np.count_nonzero(self._data, axis=axes), np.int64), None)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        """|self - other| <= atol + rtol * |other|, elementwise (torch's: of one dtype)."""
        return Tensor._make(self._isclose("isclose", other, rtol, atol, equal_nan), None)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        return bool(self._isclose("allclose", other, rtol, atol, equal_nan).all())

    def _isclose(self, op: str, other, rtol, atol, equal_nan) -> np.ndarray:
        if not isinstance(other, Tensor):
            raise TypeError(f"{op}(): argument 'other' must be Tensor, not "
                            f"{type(other).__name__}")
        equal_nan = args.check_flag(op, "equal_nan", equal_nan)
        for name, tolerance in (("rtol", rtol), ("atol", atol)):
            if isinstance(tolerance, complex) or not args.check_number(op, name, tolerance) >= 0:
                raise (TypeError if isinstance(tolerance, complex) else RuntimeError)(
                    f"{op}: {name} must be a real number >= 0, got {tolerance!r}")
        if self._data.dtype != other._data.dtype:
            raise RuntimeError(f"{op}(): expected input and other to have the same dtype, got "
                               f"{self._data.dtype} and {other._data.dtype}")
        if self._data.shape != other._data.shape:
            elementwise.check_broadcast(op, self._data, other._data)
        return np.asarray(np.isclose(self._data, other._data, rtol, atol, equal_nan))

    @numpy_spellings
    def gather(self, dim, index, *, sparse_grad: bool = False):
        return select.gather(self, dim, index, sparse_grad=sparse_grad)

    @numpy_spellings
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return select.scatter(self, dim, index, src, value=value, reduce=reduce)

    @numpy_spellings
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return select.scatter_(self, dim, index, src, value=value, reduce=reduce)

    @numpy_spellings
    def scatter_add(self, dim, index, src): return select.scatter_add(self, dim, index, src)
    @numpy_spellings
    def scatter_add_(self, dim, index, src): return select.scatter_add_(self, dim, index, src)
    @numpy_spellings
    def index_select(self, dim, index): return select.index_select(self, dim, index)
    def masked_fill(self, mask, value): return select.masked_fill(self, mask, value)
    def masked_fill_(self, mask, value): return select.masked_fill_(self, mask, value)
    def index_add(self, dim, index, source, *, alpha=1):
        return select.index_add(self, dim, index, source, alpha=alpha)
    def index_add_(self, dim, index, source, *, alpha=1):
        return select.index_add_(self, dim, index, source, alpha=alpha)
    def index_copy(self, dim, index, source): return select.index_copy(self, dim, index, source)
    def index_copy_(self, dim, index, source):
        return select.index_copy_(self, dim, index, source)
    def index_fill(self, dim, index, value): return select.index_fill(self, dim, index, value)
    def index_fill_(self, dim, index, value): return select.index_fill_(self, dim, index, value)
    def masked_scatter(self, mask, source): return select.masked_scatter(self, mask, source)
    def masked_scatter_(self, mask, source): return select.masked_scatter_(self, mask, source)
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return select.unique(self, sorted, return_inverse, return_counts, dim)
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return select.unique_consecutive(self, return_inverse, return_counts, dim)
    def bincount(self, weights=None, minlength=0):
        return select.bincount(self, weights, minlength)
    def histc(self, bins=100, min=0, max=0): return select.histc(self, bins, min, max)
    def addcmul(self, tensor1, tensor2, *, value=1):
        return select.addcmul(self, tensor1, tensor2, value=value)
    def addcmul_(self, tensor1, tensor2, *, value=1):
        return select.addcmul_(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1):
        return select.addcdiv(self, tensor1, tensor2, value=value)
    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return select.addcdiv_(self, tensor1, tensor2, value=value)
    @numpy_spellings
    def take_along_dim(self, indices, dim=None): return select.take_along_dim(self, indices, dim)

    def matmul(self, other): return matmul.matmul(self, elementwise.check_tensor("matmul", "other", other))
    def mm(self, mat2): return matmul.mm(self, mat2)
    def bmm(self, mat2): return matmul.bmm(self, mat2)

    # vector and matrix products, and sums with them (ops/matmul.py)
    def dot(self, other): return matmul.dot(self, other)
    def vdot(self, other): return matmul.vdot(self, other)
    def inner(self, other): return matmul.inner(self, other)
    def outer(self, vec2): return matmul.outer(self, vec2)
    def ger(self, vec2): return matmul.outer(self, vec2, op="ger")
    def mv(self, vec): return matmul.mv(self, vec)
    def kron(self, other): return matmul.kron(self, other)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return matmul.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return matmul.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return matmul.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return matmul.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    # (in place: the sum written into self, whose old value the sum's graph still reads)
    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return self.copy_(matmul.addmm(self, mat1, mat2, beta=beta, alpha=alpha))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return self.copy_(matmul.addmv(self, mat, vec, beta=beta, alpha=alpha))

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self.copy_(matmul.addbmm(self, batch1, batch2, beta=beta, alpha=alpha))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self.copy_(matmul.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha))

    def conv2d(self, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        return conv.conv2d(self, weight, bias, stride, padding, dilation, groups)

    def max_pool2d(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False, ties="first"):
        return pool.max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode,
                            return_indices, ties=ties)

    def avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
        return pool.avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)

    # (the methods take no dim=None, as torch's: torch.nn.functional's guesses one, deprecated)
    @numpy_spellings
    def log_softmax(self, dim: int = -1):
        return loss.log_softmax(self, args.check_int("log_softmax", "dim", dim))

    @numpy_spellings
    def softmax(self, dim: int = -1):
        return loss.softmax(self, args.check_int("softmax", "dim", dim))

    # ---- diagonals, windows along a dim, moved dims (ops/movement.py)
    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
        return movement.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0): return movement.diag(self, diagonal)

    def unfold(self, dimension: int, size: int, step: int):
        return movement.unfold_windows(self, dimension, size, step)

    def movedim(self, source, destination): return movement.movedim(self, source, destination)

    moveaxis = movedim

    # ---- elementwise math (ops/math_functions.py); integer and bool inputs of the float
    # functions compute in the default float dtype, as torch
    def logaddexp(self, other): return math_functions.logaddexp(self, other)
    def logaddexp2(self, other): return math_functions.logaddexp2(self, other)
    def tan(self): return math_functions.float_function("tan", self)
    def asin(self): return math_functions.float_function("asin", self)
    def acos(self): return math_functions.float_function("acos", self)
    def sinh(self): return math_functions.float_function("sinh", self)
    def cosh(self): return math_functions.float_function("cosh", self)
    def asinh(self): return math_functions.float_function("asinh", self)
    def acosh(self): return math_functions.float_function("acosh", self)
    def atanh(self): return math_functions.float_function("atanh", self)
    def erf(self): return math_functions.float_function("erf", self)
    def erfc(self): return math_functions.float_function("erfc", self)
    def exp2(self): return math_functions.float_function("exp2", self)
    def log2(self): return math_functions.float_function("log2", self)
    def log10(self): return math_functions.float_function("log10", self)
    def expm1(self): return math_functions.float_function("expm1", self)
    def reciprocal(self): return math_functions.float_function("reciprocal", self)
    def trunc(self): return math_functions.trunc(self)
    def frac(self): return math_functions.frac(self)
    def atan2(self, other): return math_functions.atan2(self, other)
    def copysign(self, other): return math_functions.copysign(self, other)
    def lerp(self, end, weight): return math_functions.lerp(self, end, weight)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return math_functions.nan_to_num(self, nan, posinf, neginf)

    def isnan(self): return math_functions.isnan(self)
    def isinf(self): return math_functions.isinf(self)
    def isfinite(self): return math_functions.isfinite(self)
    def isposinf(self): return math_functions.isposinf(self)
    def isneginf(self): return math_functions.isneginf(self)
    def signbit(self): return math_functions.signbit(self)

    # erfinv, sgn, logit, xlogy, hypot, sinc, degrees, float_power, fmax/fmin, heaviside,
    # logical_xor (ops/math_functions.py)
    def erfinv(self): return math_functions.float_function("erfinv", self)
    def erfinv_(self): return self._inplace_unary("erfinv_", math_functions.Erfinv, floating=True)
    def sgn(self): return elementwise.sign(self)  # (real tensors: the sign)
    def sgn_(self): return self._inplace_unary("sgn_", elementwise.Sign)
    def logit(self, eps=None): return math_functions.logit(self, eps)
    def logit_(self, eps=None):
        eps = math_functions.logit_eps("logit_", eps)
        if self._data.dtype.kind != "f":  # (refused: a float result)
            return self._inplace_unary("logit_", math_functions.Logit, floating=True)
        return self._inplace(math_functions.Logit, eps=eps)

    def xlogy(self, other): return math_functions.xlogy(self, other)
    def xlogy_(self, other):
        elementwise.check_operand("xlogy_", "other", other)
        return self._inplace_math("xlogy_", math_functions.Xlogy, other)

    def hypot(self, other): return math_functions.hypot(self, other)
    def hypot_(self, other):
        return self._inplace_math("hypot_", math_functions.Hypot,
                                  elementwise.check_tensor("hypot_", "other", other))

    def sinc(self): return math_functions.sinc(self)
    def sinc_(self): return self._inplace_unary("sinc_", math_functions.Sinc, floating=True)
    def deg2rad(self): return math_functions.deg2rad(self)
    def deg2rad_(self): return self.mul_(math_functions.math.pi / 180)
    def rad2deg(self): return math_functions.rad2deg(self)
    def rad2deg_(self): return self.mul_(180 / math_functions.math.pi)
    def float_power(self, exponent): return math_functions.float_power(self, exponent)
    def float_power_(self, exponent):
        if self._data.dtype != np.float64:
            raise RuntimeError(f"the base given to float_power_ has dtype {self._data.dtype} but "
                               f"the operation's result requires dtype float64")
        return self.pow_(exponent.double() if isinstance(exponent, Tensor) else exponent)

    def fmax(self, other): return math_functions.fmax(self, other)
    def fmin(self, other): return math_functions.fmin(self, other)
    def heaviside(self, values): return math_functions.heaviside(self, values)
    def logical_xor(self, other): return math_functions.logical_xor(self, other)
    atan = arctan
    arcsin, arccos, arcsinh, arccosh, arctanh, arctan2, fix = asin, acos, asinh, acosh, atanh, atan2, trunc

    def tan_(self): return self._inplace_unary("tan_", math_functions.Tan, floating=True)
    def asin_(self): return self._inplace_unary("asin_", math_functions.Arcsin, floating=True)
    def acos_(self): return self._inplace_unary("acos_", math_functions.Arccos, floating=True)
    def atan_(self): return self._inplace_unary("atan_", elementwise.Arctan, floating=True)
    def sinh_(self): return self._inplace_unary("sinh_", math_functions.Sinh, floating=True)
    def cosh_(self): return self._inplace_unary("cosh_", math_functions.Cosh, floating=True)
    def asinh_(self): return self._inplace_unary("asinh_", math_functions.Arcsinh, floating=True)
    def acosh_(self): return self._inplace_unary("acosh_", math_functions.Arccosh, floating=True)
    def atanh_(self): return self._inplace_unary("atanh_", math_functions.Arctanh, floating=True)
    def erf_(self): return self._inplace_unary("erf_", math_functions.Erf, floating=True)
    def erfc_(self): return self._inplace_unary("erfc_", math_functions.Erfc, floating=True)
    def exp2_(self): return self._inplace_unary("exp2_", math_functions.Exp2, floating=True)
    def log2_(self): return self._inplace_unary("log2_", math_functions.Log2, floating=True)
    def log10_(self): return self._inplace_unary("log10_", math_functions.Log10, floating=True)
    def expm1_(self): return self._inplace_unary("expm1_", math_functions.Expm1, floating=True)
    def reciprocal_(self):
        return self._inplace_unary("reciprocal_", math_functions.Reciprocal, floating=True)

    def trunc_(self):
        if self._data.dtype is dtypes.bool:
            elementwise.refuse_bool("trunc_", self)
        return self._inplace(math_functions.Trunc)

    def frac_(self): return math_functions.frac_(self)

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        values = math_functions.replacements("nan_to_num_", nan, posinf, neginf)
        return self._inplace(math_functions.NanToNum, **values)

    def atan2_(self, other):
        other = elementwise.check_tensor("atan2_", "other", other)
        return self._inplace_math("atan2_", math_functions.Atan2, other)

    def copysign_(self, other):
        if not (isinstance(other, Tensor) or elementwise.is_number(other)):
            raise TypeError(f"copysign_(): argument 'other' must be Tensor or Number, not "
                            f"{type(other).__name__}")
        return self._inplace_math("copysign_", math_functions.Copysign, other)

    def _inplace_math(self, op: str, fn: type, other) -> "Tensor":
        """atan2_/copysign_: a float result (integers compute in the default float dtype) of
        self and ``other`` (broadcast to self's shape), written into self."""
        dtype = elementwise.result_dtype(self, other)
        self._check_fits(op, "other", other if isinstance(other, Tensor) else None,
                         dtype if dtype.kind == "f" else dtypes.get_default_dtype())
        return self._inplace(fn, elementwise.as_dtype(other, self._data.dtype))

    def lerp_(self, end, weight):
        _, end, weight = math_functions.check_lerp("lerp_", self, end, weight)
        self._check_fits("lerp_", "end", end)
        self._check_fits("lerp_", "weight", weight)
        return self._inplace(math_functions.Lerp, end, weight)

    arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
    arctan2_, fix_ = atan2_, trunc_

    # Rounded division and remainders (ops/division.py): integers stay integers, and an
    # integer divisor of 0 raises, as torch
    def floor_divide(self, other): return division.floor_divide(self, other)
    def remainder(self, other): return division.remainder(self, other)
    def fmod(self, other): return division.fmod(self, other)

    def _division(self, function, symbol: str, other, reflected: bool = False):
        if isinstance(other, np.ndarray):  # (torch takes an array operand too)
            other = Tensor._make(_as_array(other, None), None)
        elif not isinstance(other, Tensor) and not elementwise.is_number(other):
            return NotImplemented  # (Python's TypeError: unsupported operand type(s) for //)
        op = f"{function.__name__} ({symbol})"
        return function(other, self, op=op) if reflected else function(self, other, op=op)

    def __floordiv__(self, other): return self._division(division.floor_divide, "//", other)
    def __rfloordiv__(self, other): return self._division(division.floor_divide, "//", other, True)
    def __mod__(self, other): return self._division(division.remainder, "%", other)
    def __rmod__(self, other): return self._division(division.remainder, "%", other, True)

    def _division_inplace(self, op: str, other, kernel) -> "Tensor":
        """``x.remainder_(y)``, ``x //= y``...: ``kernel`` the rounding ("trunc", "floor"),
        "remainder", "fmod", or None for true division."""
        node, other, attrs, dtype = division.inplace_args(op, self, other, kernel)
        self._check_fits(op, "other", other, dtype)
        return self._inplace(node, other, **attrs)

    def floor_divide_(self, other): return self._division_inplace("floor_divide_", other, "floor")
    def remainder_(self, other): return self._division_inplace("remainder_", other, "remainder")
    def fmod_(self, other): return self._division_inplace("fmod_", other, "fmod")

    # ``x //= y`` with a y that no in-place op takes: NotImplemented, and Python falls back to
    # ``x = x // y``, as with torch
    def __ifloordiv__(self, other):
        if not isinstance(other, Tensor) and not elementwise.is_number(other):
            return NotImplemented
        return self._division_inplace("//=", other, "floor")

    def __imod__(self, other):
        if not isinstance(other, Tensor) and not elementwise.is_number(other):
            return NotImplemented
        return self._division_inplace("%=", other, "remainder")

    def __abs__(self): return self.abs()
    absolute, absolute_ = abs, abs_

    # Bitwise ops (ops/bitwise.py): integer and bool tensors (the operators are above)
    def bitwise_and(self, other): return bitwise.bitwise("bitwise_and", self, other)
    def bitwise_or(self, other): return bitwise.bitwise("bitwise_or", self, other)
    def bitwise_xor(self, other): return bitwise.bitwise("bitwise_xor", self, other)
    def bitwise_left_shift(self, other): return bitwise.bitwise("bitwise_left_shift", self, other)
    def bitwise_right_shift(self, other): return bitwise.bitwise("bitwise_right_shift", self, other)
    def bitwise_not(self): return bitwise.bitwise_not(self)

    def _bitwise_inplace(self, op: str, name: str, other) -> "Tensor":
        """``x.bitwise_and_(y)``, ``x &= y``...: the result written into x (it has no graph:
        integers and bools have no gradient)."""
        result = bitwise.bitwise(op, self, other) if op != "bitwise_not" else bitwise.bitwise_not(self, name)
        self._check_fits(name, "other", result, result._data.dtype)
        self._check_inplace()
        self._write(result._data)
        return self

    def bitwise_and_(self, other): return self._bitwise_inplace("bitwise_and", "bitwise_and_", other)
    def bitwise_or_(self, other): return self._bitwise_inplace("bitwise_or", "bitwise_or_", other)
    def bitwise_xor_(self, other): return self._bitwise_inplace("bitwise_xor", "bitwise_xor_", other)
    def bitwise_not_(self): return self._bitwise_inplace("bitwise_not", "bitwise_not_", None)

    def bitwise_left_shift_(self, other):
        return self._bitwise_inplace("bitwise_left_shift", "bitwise_left_shift_", other)

    def bitwise_right_shift_(self, other):
        return self._bitwise_inplace("bitwise_right_shift", "bitwise_right_shift_", other)

    def _bitwise_augmented(self, op: str, name: str, other):
        if isinstance(other, np.ndarray):
            other = Tensor._make(_as_array(other, None), None)
        elif not isinstance(other, Tensor) and not elementwise.is_number(other):
            return NotImplemented
        return self._bitwise_inplace(op, name, other)

    def __iand__(self, other): return self._bitwise_augmented("bitwise_and", "&=", other)
    def __ior__(self, other): return self._bitwise_augmented("bitwise_or", "|=", other)
    def __ixor__(self, other): return self._bitwise_augmented("bitwise_xor", "^=", other)
    def __ilshift__(self, other): return self._bitwise_augmented("bitwise_left_shift", "<<=", other)
    def __irshift__(self, other): return self._bitwise_augmented("bitwise_right_shift", ">>=", other)

    # ---- order: sorting, selecting by rank, running extremes (ops/sort.py, ops/cumulative.py)
    @numpy_spellings
    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along ``dim``, as torch's ``sort`` (NaN the largest)."""
        return ordering.sort(self, dim, descending, stable=stable)

    @numpy_spellings
    def argsort(self, dim=-1, descending=False, *, stable=False):
        return ordering.argsort(self, dim, descending, stable=stable)

    def msort(self):
        return ordering.msort(self)

    @numpy_spellings
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return ordering.topk(self, k, dim, largest, sorted)

    @numpy_spellings
    def kthvalue(self, k, dim=-1, keepdim=False):
        return ordering.kthvalue(self, k, dim, keepdim)

    @numpy_spellings
    def median(self, dim=OMITTED, keepdim=False):
        """The lower median of all elements (0-d), or ``(values, indices)`` along ``dim``."""
        return ordering.median(self, dim, keepdim)

    @numpy_spellings
    def nanmedian(self, dim=OMITTED, keepdim=False):
        return ordering.nanmedian(self, dim, keepdim)

    @numpy_spellings
    def mode(self, dim=-1, keepdim=False): return reduce.mode(self, dim, keepdim)

    @numpy_spellings
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return reduce.quantile(self, q, dim, keepdim, interpolation=interpolation)

    @numpy_spellings
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return reduce.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    @numpy_spellings
    def cumprod(self, dim, *, dtype=None):
        return cumulative.cumprod(self, dim, dtype=dtype)

    @numpy_spellings
    def cummax(self, dim):
        return cumulative.cummax(self, dim)

    @numpy_spellings
    def cummin(self, dim):
        return cumulative.cummin(self, dim)

    @numpy_spellings
    def logcumsumexp(self, dim):
        return cumulative.logcumsumexp(self, dim)

    # ---- triangles, masks, repeats, reducing scatters (ops/select.py)
    def tril(self, diagonal: int = 0): return select.tril(self, diagonal)
    def triu(self, diagonal: int = 0): return select.triu(self, diagonal)
    def tril_(self, diagonal: int = 0): return select.tril_(self, diagonal)
    def triu_(self, diagonal: int = 0): return select.triu_(self, diagonal)
    def masked_select(self, mask): return select.masked_select(self, mask)

    @numpy_spellings
    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        return select.repeat_interleave(self, repeats, dim, output_size=output_size)

    @numpy_spellings
    def scatter_reduce(self, dim, index, src, reduce, *, include_self: bool = True):
        return select.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    @numpy_spellings
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self: bool = True):
        return select.scatter_reduce_(self, dim, index, src, reduce, include_self=include_self)

    # ---- introspection, small conversions, and in-place forms of existing ops
    # ---- what it is (from the NumPy array: dtype, strides, layout)
    def is_floating_point(self) -> bool: return self._data.dtype.kind == "f"
    def is_signed(self) -> bool: return self._data.dtype.kind in "if"
    def element_size(self) -> int: return self._data.dtype.itemsize
    itemsize = property(lambda self: self._data.dtype.itemsize)
    nbytes = property(lambda self: self._data.size * self._data.dtype.itemsize)
    def ndimension(self) -> int: return self._data.ndim
    def nelement(self) -> int: return self._data.size

    def is_contiguous(self, memory_format=None) -> bool:
        """C-contiguity of the memory (a transposed or expanded view is not contiguous)."""
        if memory_format is not None:
            raise NotImplementedError(f"is_contiguous: memory_format={memory_format!r} is not "
                                      f"supported (tinygrad_pool has one memory format)")
        return builtins.bool(self._data.flags.c_contiguous)

    def stride(self, dim=None):
        """Steps between neighbouring elements, in elements (0 along an expanded dimension)."""
        strides = [step // self._data.dtype.itemsize for step in self._data.strides]
        shape = self._data.shape
        for d in reversed(range(len(shape))):  # (NumPy's x[None] steps 0 over its new size-1
            if shape[d] == 1 and strides[d] == 0:  # dimension; torch as if it were contiguous)
                strides[d] = shape[d + 1] * strides[d + 1] if d + 1 < len(shape) else 1
        strides = tuple(strides)
        if dim is None:
            return strides
        return strides[movement.wrap_dim("stride", dim, self._data.ndim)]

    # ---- conversions and small ops
    def byte(self): return self.to(dtypes.uint8)
    def char(self): return self.to(dtypes.int8)
    def short(self): return self.to(dtypes.int16)

    def positive(self):
        if self._data.dtype is dtypes.bool:
            raise RuntimeError("positive: The `+` operator, on a bool tensor is not supported.")
        return self

    def broadcast_to(self, shape): return self.expand(shape)
    def equal(self, other) -> bool:
        """True if both have the same shape and the same values (torch.equal)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
        return self.shape == other.shape and bool((self._data == other._data).all())

    def select(self, dim, index): return movement.select(self, dim, index)
    def take(self, index): return movement.take(self, index)
    def sum_to_size(self, *size): return movement.sum_to_size(self, *size)
    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None):
        """The n-th forward difference along ``dim`` (``out[i] = x[i+1] - x[i]``, n times; bools
        differ as xor, as torch), after joining ``prepend`` and ``append`` to the tensor."""
        if not movement.is_int(n):
            raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
        if n < 0:
            raise RuntimeError(f"diff: order must be non-negative but got {n}")
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        dim = movement.wrap_dim("diff", dim, self.ndim)
        if n == 0:  # (torch: a copy, prepend and append left out)
            return self.clone()
        parts = [elementwise.check_tensor("diff", name, part) if part is not self else part
                 for name, part in (("prepend", prepend), ("input", self), ("append", append))
                 if part is not None]
        out = join.cat(parts, dim) if len(parts) > 1 else self
        for _ in range(min(n, out.shape[dim])):  # (each difference is one shorter: then empty)
            after = out[(slice(None),) * dim + (slice(1, None),)]
            before = out[(slice(None),) * dim + (slice(None, -1),)]
            out = after ^ before if out.dtype == dtypes.bool else after - before
        return out

    def cross(self, other, dim=None): return movement.cross(self, other, dim)

    # ---- in-place forms of existing ops
    def floor_(self): return elementwise.not_bool("floor_", self)._inplace(elementwise.Floor)
    def ceil_(self): return elementwise.not_bool("ceil_", self)._inplace(elementwise.Ceil)

    def round_(self, *, decimals: int = 0):
        elementwise.round(self.detach(), decimals=decimals)  # (its argument checks)
        return self._inplace(elementwise.Round, decimals=int(decimals))

    def sin_(self): return self._inplace_unary("sin_", elementwise.Sin, floating=True)
    def cos_(self): return self._inplace_unary("cos_", elementwise.Cos, floating=True)
    def rsqrt_(self): return self._inplace_unary("rsqrt_", elementwise.Rsqrt, floating=True)
    def log1p_(self): return self._inplace_unary("log1p_", elementwise.Log1p, floating=True)
    def sign_(self): return self._inplace_unary("sign_", elementwise.Sign)
    def negative_(self): return self._inplace_unary("negative_", elementwise.Neg)
    def multiply_(self, other): return self._inplace_binary("multiply_", elementwise.Mul, other)
    def subtract_(self, other, *, alpha=1):
        return self._inplace_binary("subtract_", elementwise.Sub, other, alpha)

    def cumsum_(self, dim, *, dtype=None):
        return self.copy_(self.cumsum(dim, dtype=dtype)) if dtype is not None else \
            self._inplace_cumulative("cumsum_", reduce.Cumsum, dim)

    def cumprod_(self, dim, *, dtype=None):
        return self.copy_(self.cumprod(dim, dtype=dtype)) if dtype is not None else \
            self._inplace_cumulative("cumprod_", cumulative.Cumprod, dim)

    def _inplace_cumulative(self, op: str, fn: type, dim):
        if self._data.dtype is dtypes.bool:
            raise NotImplementedError(f"{op}: not implemented for bool tensors (the running "
                                      f"result is an integer, which a bool tensor cannot hold)")
        # (integers sum or multiply as int64, written back into self's dtype, as torch)
        return self._inplace(fn, axis=movement.wrap_dim(op, dim, self._data.ndim))

    def _inplace_compare(self, op: str, other, compare, tensors_only: bool = False) -> "Tensor":
        """``x.eq_(y)``...: the comparison of x and y written into x as x's dtype (0 and 1)."""
        if tensors_only:
            elementwise.check_tensor(op, "other", other)
        else:
            elementwise.check_operand(op, "other", other)
        self._check_fits(op, "other", other if isinstance(other, Tensor) else None,
                         self._data.dtype)
        return self._inplace(movement.ComparedInto, other, compare=compare)

    def eq_(self, other): return self._inplace_compare("eq_", other, np.equal)
    def ne_(self, other): return self._inplace_compare("ne_", other, np.not_equal)
    def lt_(self, other): return self._inplace_compare("lt_", other, np.less)
    def le_(self, other): return self._inplace_compare("le_", other, np.less_equal)
    def gt_(self, other): return self._inplace_compare("gt_", other, np.greater)
    def ge_(self, other): return self._inplace_compare("ge_", other, np.greater_equal)
    def greater_(self, other): return self._inplace_compare("greater_", other, np.greater)
    def greater_equal_(self, other): return self._inplace_compare("greater_equal_", other, np.greater_equal)
    def less_(self, other): return self._inplace_compare("less_", other, np.less)
    def less_equal_(self, other): return self._inplace_compare("less_equal_", other, np.less_equal)
    def not_equal_(self, other): return self._inplace_compare("not_equal_", other, np.not_equal)
    def logical_and_(self, other): return self._inplace_compare("logical_and_", other, np.logical_and, True)
    def logical_or_(self, other): return self._inplace_compare("logical_or_", other, np.logical_or, True)
    def logical_xor_(self, other): return self._inplace_compare("logical_xor_", other, np.logical_xor, True)
    def logical_not_(self): return self._inplace_compare("logical_not_", 0, np.equal)

    def fill_diagonal_(self, fill_value, wrap: bool = False):
        return self._inplace(movement.FillDiagonal,
                             **movement.fill_diagonal_arguments(self, fill_value, wrap))

    def detach_(self):
        """Detach this tensor from the graph in place (it becomes a leaf that needs no grad)."""
        if self._view is not None:
            raise RuntimeError("detach_: Can't detach views in-place. Use detach() instead.")
        self.grad_fn, self._requires_grad = None, False
        return self


attach(TensorMethods)


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
