"""Adaptive pooling, max unpooling and the sliding-window rearrangements (Unfold, Fold) as
Modules, with PyTorch's constructors and reprs.

Each holds its settings and calls one op in ``forward``; the math and the argument checks live in
``ops/pool.py`` and ``ops/conv.py``.
"""
from ..ops.conv import fold, unfold
from ..ops.pool import adaptive_avg_pool2d, adaptive_max_pool2d, max_unpool2d
from collections.abc import Iterable

from ..args import check_flag
from .module import Module


def _as_pair(value) -> tuple:
    """torch's ``_pair``, which only shapes a setting for printing: 2 -> (2, 2), a sequence as a
    tuple; the op checks it."""
    return tuple(value) if isinstance(value, Iterable) else (value, value)


class AdaptiveAvgPool2d(Module):
    """Mean over PyTorch's adaptive windows, to ``output_size`` (an int, or a pair whose None
    entries keep the input's size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """Max over PyTorch's adaptive windows, to ``output_size``; with ``return_indices`` the
    forward returns (output, indices), the indices flat into each H×W plane."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = check_flag("AdaptiveMaxPool2d", "return_indices", return_indices)

    def forward(self, input):
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxUnpool2d(Module):
    """Puts each value back at the pixel MaxPool2d's indices name, zeros elsewhere; stride
    defaults to kernel_size, ``output_size`` (at call time) picks among the sizes that pool to
    the input's."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        # Checked by max_unpool2d at each call, as torch's (which takes, e.g., stride=0 there).
        self.kernel_size = _as_pair(kernel_size)
        self.stride = self.kernel_size if stride is None else _as_pair(stride)
        self.padding = _as_pair(padding)

    def forward(self, input, indices, output_size=None):
        return max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                            output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Unfold(Module):
    """Every sliding window's pixels as one column (im2col): (N, C, H, W) → (N, C·kh·kw, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns added back onto the pixels of their windows (col2im), Unfold's adjoint:
    (N, C·kh·kw, L) → (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
