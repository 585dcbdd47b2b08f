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


def check_reduction(op: str, reduction) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
