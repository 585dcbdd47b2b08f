"""Adaptive pooling (1-D, 2-D, 3-D), power-average pooling, max unpooling and the
sliding-window rearrangements (Unfold, Fold) as Modules, with PyTorch's constructors and reprs.

Each holds its settings and calls one op in ``forward``; the math and the argument checks live in
``ops/pool.py``, ``ops/pool3d.py`` and ``ops/conv.py``.
"""
from ..ops.conv import fold, unfold
from ..ops.pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                        adaptive_max_pool2d, lp_pool1d, lp_pool2d, max_unpool1d, max_unpool2d)
from ..ops.pool3d import adaptive_avg_pool3d, adaptive_max_pool3d, max_unpool3d
from collections.abc import Iterable

from ..args import check_flag
from .module import Module


def _as_pair(value) -> tuple:
    """torch's ``_pair``, which only shapes a setting for printing: 2 -> (2, 2), a sequence as a
    tuple; the op checks it."""
    return tuple(value) if isinstance(value, Iterable) else (value, value)


def _as_tuple(value, n: int) -> tuple:
    """torch's ``_single`` / ``_triple``: an int as n of it, a sequence as a tuple (unchecked:
    the op checks it)."""
    return tuple(value) if isinstance(value, Iterable) else (value,) * n


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
        self.return_indices = check_flag(type(self).__name__, "return_indices", return_indices)

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


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Mean over PyTorch's adaptive windows along L, to ``output_size`` (an int)."""

    def forward(self, input):
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Mean over PyTorch's adaptive windows of (N, C, D, H, W), to ``output_size`` (an int, or
    3 whose None entries keep the input's size)."""

    def forward(self, input):
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max over PyTorch's adaptive windows along L; with ``return_indices`` the forward returns
    (output, indices), the positions along L."""

    def forward(self, input):
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Max over PyTorch's adaptive windows of (N, C, D, H, W); with ``return_indices`` the
    forward returns (output, indices), the indices flat into each D×H×W volume."""

    def forward(self, input):
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)


class LPPool1d(Module):
    """(Σ xᵖ over each window along L)^(1/p); stride defaults to kernel_size."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        # (kept as given, as torch's; lp_pool1d checks them at each call)
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    """(Σ xᵖ over each kh×kw window)^(1/p); stride defaults to kernel_size."""

    def forward(self, input):
        return lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)


class MaxUnpool1d(Module):
    """Puts each value back at the position along L that MaxPool1d's indices name, zeros
    elsewhere; stride defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _as_tuple(kernel_size, 1)
        self.stride = _as_tuple(kernel_size if stride is None else stride, 1)
        self.padding = _as_tuple(padding, 1)

    def forward(self, input, indices, output_size=None):
        return max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                            output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool3d(MaxUnpool1d):
    """Puts each value back at the voxel MaxPool3d's indices name, zeros elsewhere; stride
    defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0):
        Module.__init__(self)
        self.kernel_size = _as_tuple(kernel_size, 3)
        self.stride = _as_tuple(kernel_size if stride is None else stride, 3)
        self.padding = _as_tuple(padding, 3)

    def forward(self, input, indices, output_size=None):
        return max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                            output_size)


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
