"""The bad-input harness: every public function is called with wrong types, wrong ranks, negative
and zero sizes, NaN/inf, empty tensors, non-contiguous and negative-stride arrays, once in torch and
once here, one argument spoiled at a time. The rule it checks is the hardening issue's:

- where torch refuses, we refuse with torch's error type (where torch's own Python code trips over
  a non-Tensor with an AttributeError, the right error is a TypeError), and the message names the
  function and the argument; no raw NumPy/Python error, which would name neither;
- where torch accepts, we accept and compute what torch computes (shapes and values);
- a non-contiguous or negative-stride array computes what its contiguous copy does.

Deliberate differences are listed per table, each with the reason (docs/porting.md says why).

A table maps a name to a ``Case``: how to call the function on either framework, and its arguments
as (parameter name, valid value, passed by keyword?). NumPy arrays among the values become tensors
of each framework; ``Raw(array)`` passes the array itself.
"""
import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

import tinygrad_pool


@dataclass(frozen=True)
class Raw:
    """An argument passed as the NumPy array itself, not made a tensor."""
    array: np.ndarray


@dataclass
class Case:
    call: object  # (fw, F, *args, **kwargs) -> result; fw is torch or tinygrad_pool
    params: list  # [(name, valid value, by keyword?)]
    deterministic: bool = True  # compare values with torch's when both accept
    rtol: float = 1e-5
    atol: float = 1e-6
    skip: dict = field(default_factory=dict)  # parameter name -> reason it is not spoiled
    # An operator: an operand of a type it does not take gets Python's own TypeError, which
    # names the operand's type instead of a parameter (torch's is the same).
    operator: bool = False


def _scalar_values():
    return {"str": "a", "None": None, "bool": True, "negative": -1, "zero": 0, "float": 2.5,
            "nan": math.nan, "inf": math.inf, "list3": [1, 2, 3], "tuple3": (1, 2, 3),
            "complex": 1j}


def _tensor_values(array: np.ndarray) -> dict:
    """Spoilt versions of a valid tensor argument: wrong dtype, rank, emptiness, NaN/inf, and the
    same values in non-contiguous and negative-stride layouts (which must just work)."""
    values = {"int_tensor": np.ones(array.shape, np.int64), "bool_tensor": np.ones(array.shape, bool),
              "float64_tensor": array.astype(np.float64) if array.dtype.kind == "f" else None,
              "rank0": np.array(1.0, np.float32), "rank1": np.ones(3, np.float32),
              "rank5": np.ones((1, 1, 1, 2, 2), np.float32),
              "ndarray": Raw(array), "list_of_numbers": array.tolist() if array.size < 50 else None}
    if array.ndim >= 1:
        values["empty"] = np.zeros((0,) + array.shape[1:], array.dtype)
        values["fewer_dims"] = array[0]
        values["more_dims"] = array[None]
        values["negative_stride"] = np.flip(array, axis=0)
        values["non_contiguous"] = np.asfortranarray(array) if array.ndim >= 2 else array[::1]
    if array.dtype.kind == "f":
        values["nan"] = np.where(np.arange(array.size).reshape(array.shape) % 3 == 0, np.nan, array)
        values["inf"] = np.where(np.arange(array.size).reshape(array.shape) % 3 == 1, np.inf, array)
        values["-inf"] = -values["inf"]
    return {name: value for name, value in values.items() if value is not None}


LAYOUTS = ("negative_stride", "non_contiguous")


def spoilt_values(value) -> dict:
    if isinstance(value, np.ndarray):
        return _tensor_values(value)
    return _scalar_values()


def _as_framework(fw, value):
    if isinstance(value, Raw):
        return value.array
    if isinstance(value, np.ndarray):
        if fw is tinygrad_pool:
            return tinygrad_pool.tensor(value)  # keeps the array's own layout
        import torch
        # (a C-ordered copy: torch refuses negative strides; np.ascontiguousarray would turn
        # a 0-d array into shape (1,))
        return torch.tensor(np.array(value, order="C"))
    if isinstance(value, (list, tuple)):
        return type(value)(_as_framework(fw, item) if isinstance(item, (np.ndarray, Raw)) else item
                           for item in value)
    return value


def call(case: Case, fw, values: dict):
    """Call ``case`` on ``fw`` with ``values`` (parameter name -> value); returns (result, error)."""
    import torch  # noqa: F401 — torch's F is imported with it
    F = tinygrad_pool.nn.functional if fw is tinygrad_pool else __import__("torch").nn.functional
    args = [_as_framework(fw, values[name]) for name, _, keyword in case.params if not keyword]
    kwargs = {name: _as_framework(fw, values[name]) for name, _, keyword in case.params if keyword}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fw is not tinygrad_pool:
            fw.manual_seed(0)
        else:
            tinygrad_pool.manual_seed(0)
        try:
            return case.call(fw, F, *args, **kwargs), None
        except Exception as error:  # noqa: BLE001 — classifying every error is the point
            return None, error


def _arrays(result) -> list:
    """The arrays in a result (a tensor, a tuple of them, a number)."""
    if isinstance(result, (tuple, list)):
        return [a for item in result for a in _arrays(item)]
    if hasattr(result, "detach"):
        return [np.asarray(result.detach().numpy() if hasattr(result.detach(), "numpy")
                           else result.detach().numpy())]
    if isinstance(result, (int, float, bool, np.ndarray, np.generic)):
        return [np.asarray(result)]
    return []


def expected_error_types(theirs: Exception) -> tuple:
    """The error types that count as torch's. torch's Python code that touches ``.size()`` of a
    non-Tensor raises AttributeError, and a short tuple IndexError; a wrong type is a TypeError."""
    if isinstance(theirs, AttributeError):
        return (TypeError,)
    if isinstance(theirs, IndexError) and "tuple index out of range" in str(theirs):
        return (TypeError, ValueError, RuntimeError)
    return (type(theirs),)


def problems(case_name: str, function, case: Case, parameter: str, allowed: dict) -> list:
    """Every way ``parameter`` of ``case`` spoilt breaks the rule (the message must name
    ``function``, or one of them if it is a tuple); ``allowed`` maps
    "parameter=spoilt" to the reason a difference from torch is deliberate."""
    valid = {name: value for name, value, _ in case.params}
    # (a module's forward may refuse its settings in the functional it calls: either name does)
    names = (function,) if isinstance(function, str) else tuple(function)
    found = []
    for spoilt, value in spoilt_values(valid[parameter]).items():
        label = f"{parameter}={spoilt}"
        if label in allowed or f"*={spoilt}" in allowed or f"{parameter}=*" in allowed:
            continue
        values = dict(valid, **{parameter: value})
        theirs, their_error = call(case, __import__("torch"), values)
        ours, our_error = call(case, tinygrad_pool, values)
        if their_error is not None:
            if our_error is None:
                found.append(f"{label}: accepted; torch raises {type(their_error).__name__}: "
                             f"{_first_line(their_error)}")
                continue
            message = str(our_error)
            wrong = []
            if not isinstance(our_error, expected_error_types(their_error)):
                wrong.append(f"{type(our_error).__name__}, torch {type(their_error).__name__}")
            # (Python's own operand error names neither: "can only concatenate str (not
            # "Tensor") to str" for "a" + tensor; it is checked for its wording instead)
            python_operand = case.operator and re.match(_PYTHON_OPERAND_ERROR, message)
            # (a name as a word: also a symbol such as "+" or "@", which \b cannot bound)
            if not python_operand and not any(
                    re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message) for name in names):
                wrong.append(f"message does not name {' or '.join(map(repr, names))}")
            if not python_operand and not re.search(rf"\b{re.escape(parameter)}\b", message):
                wrong.append(f"message does not name {parameter!r}")
            if wrong:
                found.append(f"{label}: {'; '.join(wrong)}: ours {type(our_error).__name__}: "
                             f"{message[:160]!r}; torch: {_first_line(their_error)}")
            continue
        if our_error is not None:
            found.append(f"{label}: refused ({type(our_error).__name__}: {str(our_error)[:160]}); "
                         f"torch accepts")
            continue
        if case.deterministic:
            mismatch = _compare(ours, theirs, case)
            if mismatch:
                found.append(f"{label}: {mismatch}")
    return found


# Python's TypeError when no operand takes the other: "unsupported operand type(s) for +: 'Tensor'
# and 'str'", "'<' not supported between instances of 'Tensor' and 'str'"
_PYTHON_OPERAND_ERROR = (r"unsupported operand type|'\S+' not supported between instances|"
                         r"can only concatenate")


def _compare(ours, theirs, case: Case) -> str:
    ours, theirs = _arrays(ours), _arrays(theirs)
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, torch {len(theirs)}"
    for mine, their in zip(ours, theirs):
        if mine.shape != their.shape:
            return f"shape {mine.shape}, torch {their.shape}"
        if mine.dtype.kind in "fc" or their.dtype.kind in "fc":
            if not np.allclose(mine.astype(np.complex128), their.astype(np.complex128),
                               rtol=case.rtol, atol=case.atol, equal_nan=True):
                return f"values differ from torch's (max |diff| {np.nanmax(np.abs(mine - their))})"
        elif not np.array_equal(mine, their):
            return "values differ from torch's"
    return ""


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [""])[0][:120]


def parameters(table: dict) -> list:
    """(case name, parameter) pairs to parametrize over."""
    return [(name, parameter) for name, case in table.items() for parameter, _, _ in case.params
            if parameter not in case.skip]
