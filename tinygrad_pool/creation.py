"""Making tensors, with torch's names and rules: ``tensor``, ``zeros``, ``randn``, ``arange``...

The dtype rules are torch's: Python floats (and ``zeros``/``rand``/``linspace`` without a
dtype) give the default float dtype, float32; Python ints give int64; bools give bool; a NumPy
array or a Tensor keeps its dtype. Random tensors come from ``generator`` (a Generator or a
``numpy.random.Generator``) or the package's default generator (``manual_seed``): the same seed
gives the same tensors run after run, but not the same numbers as torch's generator. torch's
legacy types (``FloatTensor``, ``LongTensor``...) are here too: each is a legacy constructor
for its dtype.
"""
import builtins
import math
import operator

import numpy as np

from . import dtypes
from .random import check_generator, default_generator
from .args import check_flag, check_floating, check_scalar, tensor_arg
from .engine import OMITTED, Size, Tensor, check_device, ragged_detail


def _make(op: str, array: np.ndarray, dtype, requires_grad: bool, device=None) -> Tensor:
    check_device(op, device)
    if type(requires_grad) is not builtins.bool and requires_grad is not None:  # (None: False)
        requires_grad = check_flag(op, "requires_grad", requires_grad)
    if dtype is not None:
        array = array.astype(dtypes.as_dtype(op, dtype), copy=False)
    t = Tensor._make(array, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _int(op: str, name: str, value) -> int:
    """An int argument: a Python or NumPy int, or a one-element int tensor (never a bool or a
    float, which torch refuses too)."""
    if not isinstance(value, (builtins.bool, np.bool_)):
        try:
            return operator.index(value)
        except (TypeError, RuntimeError):  # (a tensor of several elements: RuntimeError)
            pass
    raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__} {value!r}")


def _size(op: str, size: tuple) -> tuple:
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])`` all mean shape (2, 3)."""
    if not size:
        raise TypeError(f"{op}() missing 1 required positional argument: 'size' (a 0-d tensor "
                        f"is {op}(()))")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(_int(op, f"size {size!r}: each size", n) for n in size)
    if builtins.min(shape, default=0) < 0:
        raise RuntimeError(f"{op}: size must be non-negative, got {shape} (Trying to create "
                           f"tensor with negative dimension {builtins.min(shape)})")
    return shape


def _number(op: str, name: str, value):
    """A scalar argument as a Python number: a NumPy scalar or a one-element tensor reads as
    the number it holds (torch treats both as Python scalars)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise TypeError(f"{op}: {name} must be a number or a 0-d tensor, got a tensor of "
                            f"shape {tuple(value.shape)}")
        return value.item()
    if isinstance(value, (np.generic, builtins.bool, builtins.int, builtins.float)) and \
            np.asarray(value).dtype.kind in "fiub":
        return value.item() if isinstance(value, np.generic) else value
    check_scalar(op, name, value)  # (a complex number: torch's RuntimeError)
    raise TypeError(f"{op}: {name} must be a number, got {type(value).__name__}")


# ---- tensor(data): which dtype nested data has ------------------------------------------------
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}  # torch promotes bool < integers < floats


def _leaf_dtype(leaf, op: str = "tensor", typed: bool = False) -> np.dtype:
    """The dtype torch gives one number of the data: arrays and tensors keep theirs, Python
    floats take the default float dtype, Python ints int64. (``typed``: a dtype was given, and
    what is no number is torch's TypeError, as when it is read as one.)"""
    if isinstance(leaf, (Tensor, np.ndarray, np.generic)):
        dtype = leaf.dtype
        if dtype.kind in _CATEGORY:
            return dtype
    elif isinstance(leaf, builtins.bool):
        return dtypes.bool
    elif isinstance(leaf, builtins.int):
        return dtypes.int64
    elif isinstance(leaf, builtins.float):
        return dtypes.get_default_dtype()
    elif isinstance(leaf, (str, bytes)):
        raise TypeError(f"{op}: invalid data type {type(leaf).__name__!r} in data (expected "
                        f"numbers, nested lists of numbers, a NumPy array or a Tensor)")
    raise (TypeError if typed else RuntimeError)(
        f"{op}: could not infer dtype of {type(leaf).__name__} in data (expected numbers, "
        f"nested lists of numbers, a NumPy array or a Tensor)")


_PLAIN_NUMBERS = frozenset((builtins.bool, builtins.int, builtins.float))


def _unpack(data, found: set, op: str, typed: bool):
    """Nested lists as plain values (a Tensor inside them as its array), noting the dtype of
    every number in ``found``."""
    if isinstance(data, (list, tuple)):
        kinds = set(map(type, data))
        if kinds <= _PLAIN_NUMBERS:  # a row of Python numbers (the common case): taken as is,
            found.update(_leaf_dtype(kind()) for kind in kinds)  # by one number of each type
            return data
        return [_unpack(item, found, op, typed) for item in data]
    found.add(_leaf_dtype(data, op, typed))
    return data._data if isinstance(data, Tensor) else data


def _promote(found: set) -> np.dtype:
    """torch's result dtype for numbers of the dtypes in ``found``: the highest category wins
    (a float anywhere makes a float tensor) and only dtypes of that category are promoted
    together, so ``[np.float32(1), 2]`` stays float32 where NumPy would say float64."""
    if not found:  # tensor([]): an empty float tensor
        return dtypes.get_default_dtype()
    top = builtins.max(_CATEGORY[d.kind] for d in found)
    result = None
    for dtype in found:
        if _CATEGORY[dtype.kind] == top:
            result = dtype if result is None else np.promote_types(result, dtype)
    return result


def _check_pin_memory(op: str, pin_memory) -> None:
    """``pin_memory=`` where torch takes it: False, or True refused as on a machine without an
    accelerator (pinned memory is page-locked host memory for fast copies to a GPU)."""
    if check_flag(op, "pin_memory", pin_memory):
        raise RuntimeError(f"{op}: pin_memory=True requires a CUDA or other accelerator backend; "
                           f"no pinned memory allocator is available on this system "
                           f"(tinygrad_pool runs on the CPU only)")


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (torch.tensor)."""
    _check_pin_memory("tensor", pin_memory)
    return _tensor("tensor", data, dtype, device, check_flag("tensor", "requires_grad",
                                                             requires_grad))


def _tensor(op: str, data, dtype, device, requires_grad: bool) -> Tensor:
    found = set()
    values = _unpack(data, found, op, typed=dtype is not None)
    target = dtypes.as_dtype(op, dtype) if dtype is not None else _promote(found)
    try:
        array = np.array(values, dtype=target)
    except OverflowError:
        raise ValueError(f"{op}: a number in the data does not fit in {target}") from None
    except ValueError:
        raise ValueError(f"{op}: {ragged_detail(data)}") from None
    return _make(op, array, None, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory with a NumPy array or Tensor of the right dtype
    (a Tensor of another dtype is converted with ``to``, staying in the graph)."""
    check_device("as_tensor", device)
    dtype = None if dtype is None else dtypes.as_dtype("as_tensor", dtype)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype):
        return from_numpy(data)
    return _tensor("as_tensor", data, dtype, None, False)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares ``array``'s memory: writes to either show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"from_numpy: can't convert np.ndarray of type {array.dtype}; the only "
                        f"supported types are floats, ints, uints and bool")
    return Tensor._make(array, None)


# ---- filled tensors -------------------------------------------------------------------------
def _filled(op, size, value, dtype, requires_grad, device) -> Tensor:
    shape = _size(op, size)
    dtype = dtypes.or_default(op, dtype)
    return _make(op, np.full(shape, value, dtype=dtype), None, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled("zeros", size, 0, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled("ones", size, 1, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """Like torch.empty, but zero-filled: uninitialised memory would make runs differ."""
    _check_pin_memory("empty", pin_memory)
    return _filled("empty", size, 0, dtype, requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``size`` filled with ``fill_value``; without a dtype, the one torch infers from the value
    (an int gives int64, a float the default float dtype, a bool bool)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full: size must be a tuple of ints, got {type(size).__name__} "
                        f"{size!r}")
    fill_value = _number("full", "fill_value", fill_value)
    if dtype is None:
        dtype = _leaf_dtype(fill_value)
    return _filled("full", (size,), fill_value, dtype, requires_grad, device)


def _like(op, input, value, dtype, requires_grad, device) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return _filled(op, (input.shape,), value, input.dtype if dtype is None else dtype,
                   requires_grad, device)


def zeros_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("zeros_like", input, 0, dtype, requires_grad, device)


def ones_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("ones_like", input, 1, dtype, requires_grad, device)


def empty_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("empty_like", input, 0, dtype, requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    return _like("full_like", input, _number("full_like", "fill_value", fill_value), dtype,
                 requires_grad, device)


# ---- random tensors -------------------------------------------------------------------------
def _random(op, size, draw, dtype, generator, requires_grad, device) -> Tensor:
    shape = _size(op, size)
    dtype = dtypes.or_default(op, dtype)
    if dtype.kind != "f":  # (torch: NotImplementedError, "... not implemented for 'Long'")
        raise NotImplementedError(f"{op}: random floats need a floating dtype, got {dtype}")
    rng = check_generator(op, generator) or default_generator()
    return _make(op, draw(rng, shape).astype(dtype), None, requires_grad, device)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    _check_pin_memory("rand", pin_memory)
    return _random("rand", size, lambda rng, shape: rng.random(shape), dtype, generator,
                   requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """Standard normal."""
    _check_pin_memory("randn", pin_memory)
    return _random("randn", size, lambda rng, shape: rng.standard_normal(shape), dtype,
                   generator, requires_grad, device)


def rand_like(input, *, generator=None, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    input = tensor_arg("rand_like", "input", input)
    if dtype is None:
        check_floating("rand_like", "input", input)
    return _random("rand_like", (input.shape,), lambda rng, shape: rng.random(shape),
                   input.dtype if dtype is None else dtype, generator, requires_grad, device)


def randn_like(input, *, generator=None, dtype=None, device=None,
               requires_grad: bool = False) -> Tensor:
    input = tensor_arg("randn_like", "input", input)
    if dtype is None:
        check_floating("randn_like", "input", input)
    return _random("randn_like", (input.shape,), lambda rng, shape: rng.standard_normal(shape),
                   input.dtype if dtype is None else dtype, generator, requires_grad, device)


def randint(low=0, high=OMITTED, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (keywords as torch: ``randint(high=10, size=(3,))``)."""
    if high is OMITTED:  # randint(high, size=...)
        low, high = 0, low
    elif size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints (randint(high, size) or "
                        f"randint(low, high, size)), got low={low!r}, high={high!r}, "
                        f"size={size!r}")
    low, high = _int("randint", "low", low), _int("randint", "high", high)
    shape = _size("randint", (size,))
    if high <= low:
        raise RuntimeError(f"randint: expects low to be less than high ('from' and 'to'), "
                           f"but got low={low} >= high={high}")
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype("randint", dtype)
    if dtype.kind in "iub":  # every value must fit the dtype (torch checks both ends)
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        lowest, highest = (0, 1) if info is None else (info.min, info.max)
        if low < lowest or high - 1 > highest:
            raise RuntimeError(f"randint: the range [{low}, {high}) is out of bounds for "
                               f"{dtype}")
    rng = check_generator("randint", generator) or default_generator()
    array = rng.integers(low, high, size=shape, dtype=np.int64)
    return _make("randint", array, dtype, requires_grad, device)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    _check_pin_memory("randperm", pin_memory)
    n = _int("randperm", "n", n)
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    rng = check_generator("randperm", generator) or default_generator()
    return _make("randperm", rng.permutation(n).astype(np.int64),
                 dtypes.int64 if dtype is None else dtype, requires_grad, device)


# ---- torch's legacy tensor types: torch.FloatTensor, torch.LongTensor... -----------------------
class LegacyTensorType(type):
    """The class of torch's legacy tensor types (torch's ``tensortype``). Each one stands for a
    dtype on the CPU: ``LongTensor([1, 2])`` makes int64 data, ``FloatTensor(2, 3)`` a tensor of
    that shape (zeros here, uninitialised in torch), ``isinstance(x, FloatTensor)`` asks for a
    float32 tensor, ``x.type(LongTensor)`` converts. As in torch, a tensor's class is still
    ``Tensor``: these are names for a dtype, not subclasses."""

    dtype = None  # (each type's own: dtypes.LEGACY_NAMES)
    is_cuda = False

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        """torch's legacy constructor for this dtype: no arguments (an empty tensor), sizes
        (ints, or one Size), one piece of data (converted), or a tensor of this dtype (an alias
        of it, as torch's)."""
        name = cls.__name__
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0]._data.dtype != cls.dtype:  # (torch's TypeError: no silent conversion)
                raise TypeError(f"{name}: expected a tensor of dtype {cls.dtype}, got one of "
                                f"dtype {args[0].dtype} (convert it: x.type(torch.{name}))")
            check_device(name, device)
            return Tensor(args[0])
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and \
                cls.dtype.kind in "iu":
            _check_fits(name, args[0], cls.dtype)
        return Tensor(*args, dtype=cls.dtype, device=device)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _check_fits(op: str, data, dtype: np.dtype) -> None:
    """torch's RuntimeError for integer data a legacy type cannot hold (ByteTensor([300]))."""
    try:
        values = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        return  # (not plain numbers: the constructor says what is wrong)
    limits = np.iinfo(dtype)
    if values.size and not (np.isfinite(values).all() and limits.min <= values.min()
                            and values.max() <= limits.max):
        raise RuntimeError(f"{op}: value cannot be converted to type {dtype} without overflow")


LEGACY_TYPES = {name: LegacyTensorType(name, (), {
    "dtype": dtype, "__module__": "tinygrad_pool",
    "__doc__": f"torch.{name}: the legacy type of {dtype} tensors"})
    for name, dtype in dtypes.LEGACY_NAMES.items()}
FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, \
    ByteTensor, BoolTensor = (LEGACY_TYPES[name] for name in dtypes.LEGACY_NAMES)


# ---- ranges ---------------------------------------------------------------------------------
def _range_dtype(op: str, dtype, integral: bool) -> np.dtype:
    if dtype is None:
        return dtypes.int64 if integral else dtypes.get_default_dtype()
    dtype = dtypes.as_dtype(op, dtype)
    if dtype.kind == "b":  # (torch: "arange_cpu" not implemented for 'Bool')
        raise NotImplementedError(f"{op}: not implemented for dtype bool")
    return dtype


def arange(start, end=OMITTED, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step)``: int64 if every bound is an int, else
    the default float dtype (torch's rule). With an integer dtype torch first truncates the
    bounds and the step to integers: ``arange(0.5, 5, 1.5, dtype=long)`` is 0, 1, 2, 3, 4."""
    if end is OMITTED:
        start, end = 0, start
    start, end, step = (_number("arange", name, v) for name, v in
                        (("start", start), ("end", end), ("step", step)))
    integral = not builtins.any(isinstance(v, builtins.float) for v in (start, end, step))
    dtype = _range_dtype("arange", dtype, integral)
    if not builtins.all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"arange: unsupported range: start={start} -> end={end}")
    if not math.isfinite(step):
        raise RuntimeError(f"arange: step must be a finite nonzero number, got {step}")
    if dtype.kind in "iu":
        start, end, step = builtins.int(start), builtins.int(end), builtins.int(step)
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    count = builtins.max(math.ceil((end - start) / step), 0)
    if dtype.kind in "iu":  # exact integer arithmetic (float64 would round past 2**53)
        array = start + np.arange(count, dtype=np.int64) * step
    else:  # in double precision, then rounded once to the dtype (as torch's CPU kernel)
        array = start + np.arange(count, dtype=np.float64) * step
    return _make("arange", array, dtype, requires_grad, device)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included), computed as
    torch does: the first half counted up from ``start``, the second half down from ``end``, so
    both ends are exact and the values are symmetric."""
    steps = _int("linspace", "steps", steps)
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    start, end = _number("linspace", "start", start), _number("linspace", "end", end)
    dtype = _range_dtype("linspace", dtype, integral=False)
    # Floats are computed in their own dtype; integers in double, from integer ends (torch).
    work = dtype if dtype.kind == "f" else np.dtype(np.float64)
    if dtype.kind != "f":
        start, end = builtins.int(start), builtins.int(end)
    first, last = np.asarray(start, dtype=work), np.asarray(end, dtype=work)
    index = np.arange(steps, dtype=work)
    if steps == 1:
        array = first.reshape(1)
    else:
        step = (last - first) / work.type(steps - 1)
        array = np.where(index < steps // 2, first + step * index,
                         last - step * (work.type(steps - 1) - index))
    return _make("linspace", array.astype(dtype), None, requires_grad, device)


def eye(n: int, m: int = OMITTED, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """An n × m matrix (n × n without m) with ones on the diagonal."""
    rows = _int("eye", "n", n)
    cols = rows if m is OMITTED else _int("eye", "m", m)
    for name, value in (("n", rows), ("m", cols)):
        if value < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {value}")
    return _make("eye", np.eye(rows, cols), dtypes.get_default_dtype() if dtype is None else dtype,
                 requires_grad, device)


__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "rand", "randn", "rand_like", "randn_like",
           "randint", "randperm", "arange", "linspace", "eye", "Size",
           "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]
