"""Argument checks the op functions share. Each op calls them on its own arguments, so the error
names that op, the argument, the value received and what was expected — and is raised before
anything is computed or changed. The error types are torch's: a wrong type is a TypeError, a
value out of range a ValueError or RuntimeError as torch has it, a dim out of range an IndexError.
What is allowed but deprecated or suspicious gets torch's warning through ``warn``.
"""
import os
import sys
import warnings

import numpy as np

from .dtypes import cast_spelling  # noqa: F401  (re-exported: the ops' messages use it)
from .engine import Tensor

REDUCTIONS = ("mean", "sum", "none")
_INTEGERS = (int, np.integer)
_BOOLS = (bool, np.bool_)
_NUMBERS = (int, float, np.integer, np.floating)


class DimensionError(IndexError, ValueError):
    """A dim out of range: torch raises IndexError ("Dimension out of range"); this package
    raised ValueError before it followed torch, so the error is both."""


def _shown(value) -> str:
    """The value as an error message shows it: its type, and its repr when that is short."""
    text = repr(value)
    kind = type(value).__name__
    return kind if len(text) > 40 or isinstance(value, (Tensor, np.ndarray)) else f"{kind} ({text})"


def tensor_arg(op: str, name: str, value) -> Tensor:
    """A Tensor, as torch's functions take: a NumPy array, a list or a number is refused (torch
    refuses them too, so code that passes them would not move to torch)."""
    if isinstance(value, Tensor):
        return value
    raise TypeError(f"{op}: {name} must be a Tensor, got {_shown(value)}")


def check_flag(op: str, name: str, value) -> bool:
    """A True/False option (torch refuses ``ceil_mode="no"``, which Python would find true)."""
    if not isinstance(value, _BOOLS):
        raise TypeError(f"{op}: {name} must be bool, got {_shown(value)}")
    return bool(value)


def check_size(op: str, name: str, value, minimum: int = 0) -> int:
    """A count such as in_features: an int (not a bool, not 2.7) of at least ``minimum``."""
    if not isinstance(value, _INTEGERS) or isinstance(value, _BOOLS):
        raise TypeError(f"{op}: {name} must be an int, got {_shown(value)}")
    if value < minimum:
        raise ValueError(f"{op}: {name} must be at least {minimum}, got {value}")
    return int(value)


def check_number(op: str, name: str, value, low=None, high=None, error=ValueError) -> float:
    """A real number (torch's ``Number``: a bool counts, a string, None or a Tensor does not),
    optionally within [low, high]; NaN is outside every range."""
    if not isinstance(value, _NUMBERS + _BOOLS):
        raise TypeError(f"{op}: {name} must be a number, got {_shown(value)}")
    value = float(value)
    if (low is not None or high is not None) and not (
            (low is None or value >= low) and (high is None or value <= high)):
        span = (f"between {low} and {high}" if low is not None and high is not None
                else f"at least {low}" if low is not None else f"at most {high}")
        raise error(f"{op}: {name} must be {span}, got {value}")
    return value


def check_choice(op: str, name: str, value, choices: tuple, error=ValueError):
    """One of a few strings, such as a reduction or a padding mode."""
    if not isinstance(value, str):
        raise TypeError(f"{op}: {name} must be a str, one of {choices}, got {_shown(value)}")
    if value not in choices:
        raise error(f"{op}: {name} must be one of {choices}, got {value!r}")
    return value


def check_reduction(op: str, reduction) -> None:
    """torch's reduction strings; anything else, a str or not, is torch's ValueError."""
    if type(reduction) is not str or reduction not in REDUCTIONS:  # (`in` on an array: elementwise)
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {_shown(reduction)}")


def check_dim(op: str, name: str, dim, ndim: int) -> int:
    """A dim of a tensor with ``ndim`` dims (negative counts from the end), as a non-negative int.
    Out of range is torch's IndexError with torch's wording."""
    if not isinstance(dim, _INTEGERS) or isinstance(dim, _BOOLS):
        raise TypeError(f"{op}: {name} must be an int, got {_shown(dim)}")
    size = max(ndim, 1)  # a 0-d tensor takes dim 0 or -1, as torch's
    if not -size <= dim < size:
        raise DimensionError(f"{op}: {name}={dim} is out of range for a {ndim}-D tensor (Dimension "
                         f"out of range (expected to be in range of [{-size}, {size - 1}], but "
                         f"got {dim}))")
    return int(dim) % size


def check_floating(op: str, name: str, tensor: Tensor) -> Tensor:
    """A floating-point tensor, for ops only defined on real numbers (torch's wording: "not
    implemented for 'Long'")."""
    if tensor._data.dtype.kind != "f":
        raise NotImplementedError(f"{op}: {name} must be a floating-point tensor, got dtype "
                                  f"{tensor._data.dtype} (\"{op}\" not implemented for "
                                  f"'{_TORCH_NAMES.get(tensor._data.dtype.name, tensor._data.dtype)}'); "
                                  f"convert it with {name}.float()")
    return tensor


_TORCH_NAMES = {"bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int",
                "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def check_dimension(op: str, name: str, value, minimum: int = 0) -> int:
    """A count that becomes a dimension of a layer's weight (in_features, num_features): an int,
    not a bool. Too small is torch's RuntimeError ("Trying to create tensor with negative
    dimension"), a ValueError too, as the other geometry errors."""
    from .windows import GeometryError  # (windows is below the ops; imported where needed)
    if not isinstance(value, _INTEGERS) or isinstance(value, _BOOLS):
        raise TypeError(f"{op}: {name} must be an int, got {_shown(value)}")
    if value < minimum:
        raise GeometryError(f"{op}: {name} must be at least {minimum}, got {value}")
    return int(value)


def plural(count: int, noun: str, nouns: str = "") -> str:
    """A count and its noun as a message reads them: "1 channel", "2 channels", "0 elements"
    (``nouns``: an irregular plural, such as "indices")."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def dtype_advice(name: str, dtype, input_dtype) -> str:
    """What to change in the user's code when a layer's ``name`` (weight, bias, running_mean) has
    ``dtype`` and the input ``input_dtype``, in torch's spellings. Data is converted to the
    model's dtype, never the model to an integer one; between two float dtypes either side may
    move (model.double() converts every parameter and buffer of a model at once)."""
    dtype, input_dtype = np.dtype(dtype), np.dtype(input_dtype)
    if dtype.kind == "f" and input_dtype.kind != "f":
        return f"convert the input with input{cast_spelling(dtype)} (or input.to({name}.dtype))"
    if dtype.kind == "f":
        return (f"convert the input with input{cast_spelling(dtype)}, or the model with "
                f"model{cast_spelling(input_dtype)} ({name}{cast_spelling(input_dtype)} for "
                f"a {name} you pass yourself)")
    if input_dtype.kind == "f":
        return f"convert the {name} with {name}{cast_spelling(input_dtype)}"
    return f"convert both to floating point: input.float() and {name}.float()"


def operands_advice(first: str, first_dtype, second: str, second_dtype) -> str:
    """What to change when two operands of a product (matmul's input and other) differ in
    dtype, in torch's spellings: the integer one becomes the float one's dtype; between two
    floats, either may move."""
    first_dtype, second_dtype = np.dtype(first_dtype), np.dtype(second_dtype)
    if first_dtype.kind == "f" and second_dtype.kind == "f":
        return (f"convert one: {first}{cast_spelling(second_dtype)} or "
                f"{second}{cast_spelling(first_dtype)}")
    if first_dtype.kind == "f" or second_dtype.kind == "f":
        name, dtype = (second, first_dtype) if first_dtype.kind == "f" else (first, second_dtype)
        return f"convert {name} with {name}{cast_spelling(dtype)}"  # (the integer one)
    return f"convert one: {first}.to({second}.dtype), or both to floating point with .float()"


def check_same_dtype(op: str, input: Tensor, weight: Tensor, bias=None) -> None:
    """The tensors an op multiplies together (conv2d's or linear's input, weight and optional
    bias) share one dtype, as torch requires: it promotes in ``a + b``, never inside these
    products. (Plain comparisons first: this runs on every call of those ops.)"""
    dtype = input._data.dtype
    if weight._data.dtype == dtype and (bias is None or bias._data.dtype == dtype):
        return
    if weight._data.dtype != dtype:
        name, other = "weight", weight._data.dtype
        advice = dtype_advice(name, other, dtype)
    else:  # input and weight agree: the bias is the odd one out
        name, other = "bias", bias._data.dtype
        advice = (f"convert the bias with bias{cast_spelling(dtype)}" if dtype.kind == "f" else
                  f"convert the input and weight with input{cast_spelling(other)} and "
                  f"weight{cast_spelling(other)}" if other.kind == "f" else
                  "convert all three to floating point with .float()")
    raise RuntimeError(f"{op}: {name} has dtype {other} but input has dtype {dtype}; they must "
                       f"be the same: {advice}")


def check_int(op: str, name: str, value) -> int:
    """An int of either sign (not a bool), such as a dim checked against a rank only later."""
    if not isinstance(value, _INTEGERS) or isinstance(value, _BOOLS):
        raise TypeError(f"{op}: {name} must be an int, got {_shown(value)}")
    return int(value)


def check_scalar(op: str, name: str, value):
    """A real number where torch takes a Scalar (a fill value, a bound): a complex one parses
    there but cannot become a real dtype (torch's RuntimeError); a value that is no number at
    all (a string, None, a list) is a TypeError. Returned as given."""
    if isinstance(value, (complex, np.complexfloating)):
        raise RuntimeError(f"{op}: {name} must be a real number, got {_shown(value)}: value "
                           f"cannot be converted to a real dtype without overflow")
    if not isinstance(value, _NUMBERS + _BOOLS):
        raise TypeError(f"{op}: {name} must be a number, got {_shown(value)}")
    return value


def product_operands(op: str, input, weight, bias=None) -> tuple:
    """conv2d's or linear's input, weight and optional bias: Tensors of one dtype, not bool
    (torch computes integer products exactly, but has no bool kernel for them)."""
    if isinstance(input, Tensor) and isinstance(weight, Tensor):  # the common case, call-free
        dtype = input._data.dtype
        if weight._data.dtype is dtype and dtype.kind != "b" and (
                bias is None or (isinstance(bias, Tensor) and bias._data.dtype is dtype)):
            return input, weight, bias
    input, weight = tensor_arg(op, "input", input), tensor_arg(op, "weight", weight)
    if bias is not None:
        bias = tensor_arg(op, "bias", bias)
    check_same_dtype(op, input, weight, bias)
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f"{op}: input and weight are bool tensors (\"{op}\" not "
                                  f"implemented for 'Bool'); convert them with input.float() "
                                  f"and weight.float()")
    return input, weight, bias


# tinygrad_pool's own folder: a frame from a file below it is the package's, not the user's
# (warn here, and anomaly mode's "the line that created this op").
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category=UserWarning) -> None:
    """``warnings.warn`` pointed at the user's line: the first frame outside this package,
    however the op was reached (``x.var()``, ``torch.var(x)``, ``F.dropout2d`` or a layer)."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
