"""The small types and checks around a Tensor: ``Size`` (a shape), ``OMITTED`` (an argument
left out), ``numpy_spellings`` (``axis=``/``keepdims=`` for ``dim=``/``keepdim=``), the message
for ragged nested lists, and which dtypes can require a gradient."""
from __future__ import annotations

import builtins

import numpy as np


def _is_size(value) -> bool:
    return isinstance(value, (builtins.int, np.integer)) and not isinstance(value, (builtins.bool,
                                                                                      np.bool_))


def ragged_detail(data) -> str:
    """What is wrong with nested lists that are not rectangular, in torch's words: the first
    depth where two entries differ in length."""
    level, dim = [data], 0
    while level:
        sequences = [isinstance(item, (list, tuple)) for item in level]
        if not any(sequences):
            break
        lengths = [len(item) if is_sequence else None for item, is_sequence in zip(level, sequences)]
        for length in lengths[1:]:
            if length != lengths[0]:
                got = "a number" if length is None else length
                return (f"expected sequence of length {lengths[0]} at dim {dim} (got {got}): "
                        f"nested lists must be rectangular")
        level, dim = [item for sub in level for item in sub], dim + 1
    return "nested lists must be rectangular (every list at one depth of the same length)"


def _check_can_require_grad(dtype, op: str = "Tensor") -> None:
    if not np.issubdtype(dtype, np.floating):
        raise RuntimeError(f"{op}: only Tensors of floating point dtype can require gradients "
                           f"(input has dtype {dtype}; convert it first with x.float() or "
                           f"x.double(), e.g. x = x.float().requires_grad_())")


def numpy_spellings(method):
    """torch takes NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (a method or
    function so decorated does too; both spellings at once is Python's TypeError, as torch's)."""
    def with_numpy_spellings(*args, **kwargs):
        if kwargs:
            for numpy_name, torch_name in (("axis", "dim"), ("keepdims", "keepdim")):
                if numpy_name in kwargs:
                    if torch_name in kwargs:
                        raise TypeError(f"{method.__name__}() got multiple values for argument "
                                        f"'{torch_name}' ({numpy_name}= is its NumPy spelling)")
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        return method(*args, **kwargs)
    with_numpy_spellings.__name__ = method.__name__
    with_numpy_spellings.__qualname__ = method.__qualname__
    with_numpy_spellings.__doc__ = method.__doc__
    with_numpy_spellings.__wrapped__ = method
    return with_numpy_spellings


class _Omitted:
    """The default of an argument that torch takes only as a value of its own type: left out,
    it has its default meaning; given as None, it is refused, as torch refuses
    ``x.max(dim=None)`` or ``x.sum(1, keepdim=None)``. (NumPy's ``keepdims=<no value>`` is
    the same device.)"""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


OMITTED = _Omitted()


_NOT_COMPARABLE = (type(None), str, bytes, list, tuple, dict, set)
_BOOLS = (builtins.bool, np.bool_)


class Size(tuple):
    """A tensor's shape: a tuple of ints (torch.Size), printed as ``Size([2, 3])``."""

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))

    def __repr__(self) -> str:
        return f"Size({list(self)})"

    def __str__(self) -> str:  # as a plain tuple: messages such as "got shape (2, 3)" stay short
        return tuple.__repr__(self)

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item


class NotAnOperand(TypeError):
    """Raised inside an operator whose other operand it cannot take (a string, a list, None):
    the operator returns NotImplemented, so Python tries the other operand's reflected method
    and then raises its own TypeError ("unsupported operand type(s) for +"), as torch's do."""
