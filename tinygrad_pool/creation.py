"""Making tensors, with torch's names and rules: ``tensor``, ``zeros``, ``randn``, ``arange``...

The dtype rules are torch's: Python floats (and ``zeros``/``rand``/``linspace`` without a
dtype) give the default float dtype, float32; Python ints give int64; bools give bool; a NumPy
array or a Tensor keeps its dtype. Random tensors come from ``generator`` or the package's
default generator (``manual_seed``): the same seed gives the same tensors run after run, but not
the same numbers as torch's generator.
"""
import builtins

import numpy as np

from . import dtypes
from .random import default_generator
from .tensor import Size, Tensor


def _make(op: str, array: np.ndarray, dtype, requires_grad: bool, device=None) -> Tensor:
    _check_device(op, device)
    if dtype is not None:
        array = array.astype(dtypes.as_dtype(op, dtype), copy=False)
    t = Tensor._make(array, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_device(op: str, device) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"{op}: device {device!r} is not available: tinygrad_pool runs on "
                           f"the CPU only (device='cpu'); see docs/porting.md")


def _size(op: str, size: tuple) -> tuple:
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])`` all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
            raise TypeError(f"{op}: size must be a tuple of ints, got {size!r} "
                            f"({type(n).__name__} {n!r} in it)")
        if n < 0:
            raise RuntimeError(f"{op}: sizes must be non-negative, got {size!r}")
    return tuple(builtins.int(n) for n in size)


def _data_dtype(data) -> np.dtype:
    """torch.tensor's dtype for ``data`` given no dtype: arrays keep theirs, Python floats take
    the default float dtype, Python ints int64, bools bool."""
    if isinstance(data, (np.ndarray, np.generic)):
        return data.dtype
    if isinstance(data, Tensor):
        return data.dtype
    kind = np.asarray(data).dtype.kind
    if kind == "f":
        return dtypes.get_default_dtype()
    if kind in "iu":
        return dtypes.int64
    if kind == "b":
        return dtypes.bool
    raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__} data "
                    f"(expected numbers, nested lists of numbers, a NumPy array or a Tensor)")


def _as_numbers(data):
    """Nested lists that hold 0-d or small Tensors, as plain arrays (torch.tensor accepts them)."""
    if isinstance(data, Tensor):
        return data.data
    if isinstance(data, (list, tuple)):
        return [_as_numbers(item) for item in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (torch.tensor)."""
    data = _as_numbers(data)
    target = dtypes.as_dtype("tensor", dtype) if dtype is not None else _data_dtype(data)
    try:
        array = np.array(data, dtype=target)
    except (ValueError, TypeError) as error:
        raise TypeError(f"tensor: cannot make a tensor from this data ({error})") from None
    return _make("tensor", array, None, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory with a NumPy array or Tensor of the right dtype."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtypes.as_dtype(
            "as_tensor", dtype)):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtypes.as_dtype(
            "as_tensor", dtype)):
        return _make("as_tensor", data, None, False, device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares ``array``'s memory: writes to either show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"from_numpy: can't convert np.ndarray of type {array.dtype}; the only "
                        f"supported types are floats, ints, uints and bool")
    return Tensor._make(array, None)


def _filled(op, size, value, dtype, requires_grad, device) -> Tensor:
    shape = _size(op, size)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(op, dtype)
    return _make(op, np.full(shape, value, dtype=dtype), None, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled("zeros", size, 0, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled("ones", size, 1, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Like torch.empty, but zero-filled: uninitialised memory would make runs differ."""
    return _filled("empty", size, 0, dtype, requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:  # torch infers it from the fill value
        dtype = _data_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    return _filled("full", (size,) if not isinstance(size, (tuple, list)) else tuple(size),
                   fill_value, dtype, requires_grad, device)


def _like(op, input, value, dtype, requires_grad, device) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return _filled(op, input.shape, value, input.dtype if dtype is None else dtype,
                   requires_grad, device)


def zeros_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("zeros_like", input, 0, dtype, requires_grad, device)


def ones_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("ones_like", input, 1, dtype, requires_grad, device)


def empty_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like("empty_like", input, 0, dtype, requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    return _like("full_like", input, fill_value, dtype, requires_grad, device)


def _random(op, size, draw, dtype, generator, requires_grad, device) -> Tensor:
    shape = _size(op, size)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(op, dtype)
    if dtype.kind != "f":
        raise RuntimeError(f"{op}: random floats need a floating dtype, got {dtype}")
    rng = default_generator() if generator is None else generator
    return _make(op, draw(rng, shape).astype(dtype), None, requires_grad, device)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    return _random("rand", size, lambda rng, shape: rng.random(shape), dtype, generator,
                   requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal."""
    return _random("randn", size, lambda rng, shape: rng.standard_normal(shape), dtype,
                   generator, requires_grad, device)


def rand_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return rand(input.shape, dtype=input.dtype if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randn(input.shape, dtype=input.dtype if dtype is None else dtype, device=device,
                 requires_grad=requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: missing the size argument (randint(low=0, high, size))")
    if high <= low:
        raise RuntimeError(f"randint: expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    shape = _size("randint", tuple(size) if isinstance(size, (tuple, list)) else (size,))
    rng = default_generator() if generator is None else generator
    array = rng.integers(low, high, size=shape, dtype=np.int64)
    return _make("randint", array, dtypes.int64 if dtype is None else dtype, requires_grad,
                 device)


def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)) or n < 0:
        raise RuntimeError(f"randperm: n must be a non-negative int, got {n!r}")
    rng = default_generator() if generator is None else generator
    return _make("randperm", rng.permutation(builtins.int(n)).astype(np.int64),
                 dtypes.int64 if dtype is None else dtype, requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step)``: int64 if every bound is an int, else
    the default float dtype (torch's rule)."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    integral = all(isinstance(v, (builtins.int, np.integer)) for v in (start, end, step))
    if dtype is None:
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    count = builtins.int(np.ceil((end - start) / step))
    array = start + np.arange(max(count, 0), dtype=np.float64) * step
    return _make("arange", array if not integral else array.astype(np.int64), dtype,
                 requires_grad, device)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    if isinstance(steps, builtins.bool) or not isinstance(steps, (builtins.int, np.integer)) \
            or steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps!r}")
    return _make("linspace", np.linspace(start, end, builtins.int(steps)),
                 dtypes.get_default_dtype() if dtype is None else dtype, requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    rows, cols = _size("eye", (n, n if m is None else m))
    return _make("eye", np.eye(rows, cols), dtypes.get_default_dtype() if dtype is None else dtype,
                 requires_grad, device)


__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "rand", "randn", "rand_like", "randn_like",
           "randint", "randperm", "arange", "linspace", "eye", "Size"]
