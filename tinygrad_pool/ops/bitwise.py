"""Bitwise ops on integer and bool tensors: ``& | ^ ~ << >>`` and torch's ``bitwise_*``.

Their results are integers or bools, which have no gradient, so they are no graph nodes: the
array is computed and made a Tensor. Operands promote as torch's (``int8 & 1`` stays int8,
``bool & 1`` is int64); a floating result type is refused with torch's NotImplementedError, and
shifting bools too.

Shifts as torch's: a shift by a negative amount or by the width of the dtype or more gives 0 to
the left, and to the right the sign (-1 or 0; 0 for unsigned dtypes); a shift to the left
wraps around (2⁶² << 1 is -2⁶³ in int64).
"""
import numpy as np

from ..args import _TORCH_NAMES
from ..engine import Tensor
from .elementwise import check_broadcast, check_operand, check_tensor, is_number, promote


def _width(dtype: np.dtype) -> int:
    return dtype.itemsize * 8


def left_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a << b; 0 where b is negative or the dtype's width or more."""
    outside = (b < 0) | (b >= _width(a.dtype))
    shifted = np.left_shift(a, np.where(outside, 0, b).astype(b.dtype, copy=False))
    return np.where(outside, 0, shifted).astype(a.dtype, copy=False)


def right_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a >> b; where b is negative or the dtype's width or more, the sign: a >> (width - 1)
    for signed dtypes, 0 for unsigned ones."""
    outside = (b < 0) | (b >= _width(a.dtype))
    shifted = np.right_shift(a, np.where(outside, 0, b).astype(b.dtype, copy=False))
    sign = np.right_shift(a, _width(a.dtype) - 1) if a.dtype.kind == "i" else 0
    return np.where(outside, sign, shifted).astype(a.dtype, copy=False)


# Each op: torch's kernel name (which its dtype errors give) and the computation. The shifts
# have no bool kernel.
OPS = {"bitwise_and": ("bitwise_and_cpu", np.bitwise_and),
       "bitwise_or": ("bitwise_or_cpu", np.bitwise_or),
       "bitwise_xor": ("bitwise_xor_cpu", np.bitwise_xor),
       "bitwise_left_shift": ("lshift_cpu", left_shift),
       "bitwise_right_shift": ("rshift_cpu", right_shift)}


def check_kernel(op: str, kernel: str, dtype: np.dtype, operands: str) -> None:
    """Integers (and bools, but for shifts); torch's NotImplementedError for anything else
    (``operands``: what the message says of the inputs' dtypes)."""
    if dtype.kind in "iu" or (dtype.kind == "b" and kernel not in ("lshift_cpu", "rshift_cpu")):
        return
    name = _TORCH_NAMES.get(dtype.name, str(dtype))
    takes = "integer tensors" if dtype.kind == "b" else "integer and bool tensors"
    raise NotImplementedError(f"{op}: \"{kernel}\" not implemented for '{name}' ({operands}; "
                              f"bitwise ops take {takes})")


def _kind(value) -> str:
    return f"dtype {value.dtype}" if isinstance(value, Tensor) else type(value).__name__


def bitwise(op: str, input, other, symbol: str = "") -> Tensor:
    """``op`` of two operands, Tensors or integers (one a Tensor at least), torch's promotion
    (``symbol``: the operator's, which errors name beside op)."""
    name = f"{op} ({symbol})" if symbol else op
    check_operand(name, "other", other)
    if not isinstance(input, Tensor) and not (is_number(input) and isinstance(other, Tensor)):
        raise TypeError(f"{name}(): argument 'input' must be Tensor (or a number, with a Tensor "
                        f"other), not {type(input).__name__}")
    a, b = promote(input, other)  # (an integer wraps into the common dtype: int8 & 300 is & 44)
    if a.shape != b.shape and a.ndim and b.ndim:
        check_broadcast(name, a._data, b._data)
    kernel, compute = OPS[op]
    check_kernel(name, kernel, a._data.dtype,
                 f"input: {_kind(input)}, other: {_kind(other)}, in common {a._data.dtype}")
    return Tensor._make(np.asarray(compute(a._data, b._data)), None)


def bitwise_not(input, op: str = "bitwise_not") -> Tensor:
    """~input: each bit flipped; for bools, logical not."""
    check_tensor(op, "input", input)
    check_kernel(op, "bitwise_not_cpu", input._data.dtype, f"input has dtype {input._data.dtype}")
    return Tensor._make(np.asarray(np.invert(input._data)), None)
