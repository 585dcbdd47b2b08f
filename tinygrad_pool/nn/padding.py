"""Padding layers, as torch.nn's: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and
CircularPad in 1, 2 and 3 dims, with PyTorch's constructors and reprs.

Each holds its ``padding`` — (left, right), then (top, bottom), then (front, back), as F.pad
takes it — and calls F.pad in ``forward``; the math and the argument checks live in
``ops/padding.py``.
"""
from collections.abc import Iterable

from ..ops.padding import pad
from .module import Module


def _widths(padding, dims: int) -> tuple:
    """torch's ``_ntuple(2·dims)``, which only shapes a setting for printing: 2 -> (2, 2, …), a
    sequence as a tuple; F.pad checks it."""
    return tuple(padding) if isinstance(padding, Iterable) else (padding,) * (2 * dims)


class _PadNd(Module):
    """What the padding layers share: the widths, the mode, and F.pad in forward."""

    mode = "constant"
    dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _widths(padding, self.dims)

    def forward(self, input):
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: (left, right)."""
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``: (left, right, top, bottom)."""
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``: (left, right, top, bottom, front, back)."""
    dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last 2 dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last 3 dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its mirror image about the edge cell (each width < the size)."""
    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dims with their mirror image about the edge cells."""
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dims with their mirror image about the edge cells."""
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim with copies of its edge cells."""
    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dims with copies of their edge cells."""
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dims with copies of their edge cells."""
    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        # torch's layer checks the rank itself (F.pad would also take the other one it allows)
        ranks = (self.dims + 1, self.dims + 2)
        if input.ndim not in ranks:
            raise ValueError(f"{type(self).__name__}: expected {ranks[0]}D or {ranks[1]}D input "
                             f"(got {input.ndim}D input)")
        return pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around: the cells of its other end."""
    dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims by wrapping around."""
    dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims by wrapping around."""
    dims = 3
