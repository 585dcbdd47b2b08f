"""Argument checks the op functions share (each op calls them on its own arguments, so the
error names that op)."""
import numpy as np

from ..tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def tensor_arg(op: str, name: str, value) -> Tensor:
    """A Tensor as it is; arrays, lists and numbers made into one; anything else refused."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, list, tuple, int, float)):
        return Tensor(value)
    raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")


def check_flag(op: str, name: str, value) -> bool:
    """A True/False option (torch refuses ``ceil_mode="no"``, which Python would find true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be bool, not {type(value).__name__} ({value!r})")
    return bool(value)


def check_size(op: str, name: str, value, minimum: int = 0) -> int:
    """A count such as in_features: an int (not a bool, not 2.7) of at least ``minimum``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{op}: {name} must be at least {minimum}, got {value}")
    return int(value)


def check_reduction(op: str, reduction) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
