"""The layers of a small CNN — Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, Flatten, Unflatten,
PixelShuffle, PixelUnshuffle, ChannelShuffle, Linear, and the 1-D and 3-D convolutions and pools
(Conv1d, Conv3d, ConvTranspose1d, ConvTranspose3d, MaxPool1d, AvgPool1d, MaxPool3d, AvgPool3d) — as
Modules (ReLU and the other activations are in ``activation.py``).

Each layer holds its settings and Parameters and calls one function of ``nn.functional`` in
``forward``; the math lives there and in ``ops/``. Weights start as PyTorch's do:
``kaiming_uniform_(a=sqrt(5))``, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the
same range, drawn from ``generator`` or the package's default generator (``manual_seed``).
"""
import math

import numpy as np

from . import functional
from . import init
from .. import dtypes
from ..engine import check_device
from ..args import check_dim, check_dimension, check_flag, check_int, check_size, tensor_arg
from ..ops.conv import _transposed_size, ntuple
from ..windows import check_batched, pair
from .module import Module, Parameter

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")  # torch's; only zeros here


def _add_weight_and_bias(layer, weight_shape, bias: bool, dtype, generator,
                         outputs=None) -> None:
    """A ``weight`` Parameter of this shape and, if asked, a ``bias`` per output (``outputs``
    of them, by default the weight's first axis), both initialised by the layer's
    ``reset_parameters``; ``dtype=None`` is the default dtype (``set_default_dtype``)."""
    dtype = dtypes.or_default(type(layer).__name__, dtype)
    layer.weight = Parameter(np.empty(weight_shape, dtype=dtype))
    if bias:
        layer.bias = Parameter(np.empty(weight_shape[:1] if outputs is None else (outputs,),
                                        dtype=dtype))
    else:
        layer.register_parameter("bias", None)
    layer.reset_parameters(generator)


def _reset_weight_and_bias(weight: Parameter, bias, generator) -> None:
    """PyTorch's ``reset_parameters`` for Linear and Conv2d."""
    init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound, generator=generator)


def _conv_repr(layer) -> str:
    """A conv layer's settings that differ from the defaults, exactly as PyTorch prints them
    (``output_padding`` is the transposed convolution's)."""
    text = (f"{layer.in_channels}, {layer.out_channels}, kernel_size={layer.kernel_size}, "
            f"stride={layer.stride}")
    axes = len(layer.kernel_size)  # (1, 2 or 3: the defaults are tuples of as many)
    for name, default in (("padding", (0,) * axes), ("dilation", (1,) * axes),
                          ("output_padding", (0,) * axes), ("groups", 1)):
        value = getattr(layer, name, default)
        if value != default:
            text += f", {name}={value}"
    return text + (", bias=False" if layer.bias is None else "")


class Linear(Module):
    """y = x Wᵀ + b, with W of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, generator=None):
        super().__init__()
        check_device("Linear", device)
        self.in_features = check_dimension("Linear", "in_features", in_features)
        self.out_features = check_dimension("Linear", "out_features", out_features)
        bias = check_flag("Linear", "bias", bias)
        _add_weight_and_bias(self, (self.out_features, self.in_features), bias, dtype, generator)

    def reset_parameters(self, generator=None) -> None:
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, input):
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D cross-correlation over NCHW input; weight (out_channels, in_channels/groups, kh, kw).

    ``padding`` is an int, a pair, "valid" or "same" (zero padding only).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, generator=None):
        super().__init__()
        check_device("Conv2d", device)
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"Conv2d: padding_mode must be one of {PADDING_MODES}, got "
                             f"{padding_mode!r}")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode {padding_mode!r} is not supported "
                                      f"here, only 'zeros' (see docs/porting.md)")
        in_channels = check_dimension("Conv2d", "in_channels", in_channels)
        # (torch makes a layer of no filters, then its conv refuses every input)
        out_channels = check_dimension("Conv2d", "out_channels", out_channels, minimum=1)
        groups = check_size("Conv2d", "groups", groups, minimum=1)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must both be divisible by groups ({groups})")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Conv2d: padding must be an int, a pair, 'valid' or 'same', "
                                 f"got {padding!r}")
            self.padding = padding
        else:
            self.padding = pair("Conv2d", "padding", padding, minimum=0)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair("Conv2d", "kernel_size", kernel_size)
        self.stride = pair("Conv2d", "stride", stride)
        self.dilation = pair("Conv2d", "dilation", dilation)
        if self.padding == "same" and self.stride != (1, 1):
            raise ValueError(f"Conv2d: padding='same' is not supported for strided "
                             f"convolutions, got stride={stride!r}")
        bias = check_flag("Conv2d", "bias", bias)
        shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        _add_weight_and_bias(self, shape, bias, dtype, generator)

    def reset_parameters(self, generator=None) -> None:
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, input):
        return functional.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        return _conv_repr(self)


class ConvTranspose2d(Module):
    """2-D transposed convolution (functional.conv_transpose2d) over NCHW input; weight (in_channels,
    out_channels/groups, kh, kw), Conv2d's layout transposed, so its fan-in is
    out_channels/groups·kh·kw (PyTorch's initialisation, as Conv2d's, reads the weight's dim 1).

    ``forward(input, output_size=None)``: a strided layer maps several input sizes onto one, so
    the transposed one can make any of ``stride`` output sizes; ``output_size`` (H, W), or the
    full (N, C, H, W), picks one, overriding ``output_padding``, as torch's.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None, generator=None):
        super().__init__()
        check_device("ConvTranspose2d", device)
        if not isinstance(padding_mode, str) or padding_mode != "zeros":  # (torch's ValueError)
            raise ValueError(f"ConvTranspose2d: padding_mode must be 'zeros', the only mode "
                             f"torch has for ConvTranspose2d, got {padding_mode!r}")
        in_channels = check_dimension("ConvTranspose2d", "in_channels", in_channels)
        out_channels = check_dimension("ConvTranspose2d", "out_channels", out_channels, minimum=1)
        groups = check_size("ConvTranspose2d", "groups", groups, minimum=1)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"ConvTranspose2d: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must both be divisible by groups ({groups})")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair("ConvTranspose2d", "kernel_size", kernel_size)
        self.stride = pair("ConvTranspose2d", "stride", stride)
        self.padding = pair("ConvTranspose2d", "padding", padding, minimum=0)
        # (checked against stride and dilation by conv_transpose2d, when no output_size says
        # otherwise: torch's layer may hold one it never uses)
        self.output_padding = pair("ConvTranspose2d", "output_padding", output_padding, minimum=0)
        self.dilation = pair("ConvTranspose2d", "dilation", dilation)
        self.padding_mode = padding_mode
        bias = check_flag("ConvTranspose2d", "bias", bias)
        shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        _add_weight_and_bias(self, shape, bias, dtype, generator, outputs=self.out_channels)

    def reset_parameters(self, generator=None) -> None:
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding if output_size is None else \
            self._output_padding(input, output_size)
        return functional.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)

    def _output_padding(self, input, output_size) -> tuple:
        return _output_padding_for(self, input, output_size, 2)

    def extra_repr(self) -> str:
        return _conv_repr(self)


_SPATIAL_NAMES = {1: "(L,)", 2: "(H, W)", 3: "(D, H, W)"}


def _output_padding_for(layer: Module, input, output_size, dims: int) -> tuple:
    """The output_padding that makes a transposed convolution's output ``output_size`` (its
    ``dims`` spatial sizes, or the full shape), as torch's layers take it: each size from the
    smallest this geometry gives to ``stride - 1`` more. A strided layer maps several input sizes
    onto one, so the transposed one can make any of those."""
    name = type(layer).__name__
    input = tensor_arg(name, "input", input)
    if dims == 2:
        check_batched("conv_transpose2d", input._data)
    if not isinstance(output_size, (tuple, list)) or not output_size or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))
            for n in output_size):
        raise TypeError(f"{name}: output_size must be a sequence of ints {_SPATIAL_NAMES[dims]}, "
                        f"got {output_size!r}")
    outer = input.ndim - dims  # the dims before the spatial ones: (N, C), or C unbatched
    if len(output_size) == outer + dims:
        output_size = output_size[outer:]
    if len(output_size) != dims:
        raise ValueError(f"{name}: for {input.ndim}D input, output_size must have {dims} "
                         f"or {outer + dims} elements, got {len(output_size)}: {output_size!r}")
    smallest = tuple(_transposed_size(n, k, s, p, 0, d) for n, s, p, d, k in zip(
        input.shape[-dims:], layer.stride, layer.padding, layer.dilation, layer.kernel_size))
    largest = tuple(low + s - 1 for low, s in zip(smallest, layer.stride))
    if not all(low <= n <= high for low, n, high in zip(smallest, output_size, largest)):
        raise ValueError(f"{name}: requested an output_size of {tuple(output_size)}, but valid "
                         f"sizes range from {smallest} to {largest} (for an input of size "
                         f"{tuple(input.shape[-dims:])})")
    return tuple(int(n) - low for n, low in zip(output_size, smallest))


class MaxPool2d(Module):
    """Max over windows (the argmax is stored for backward); stride defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        # The geometry is max_pool2d's to check (at the first call, as torch's); the flags are
        # checked here, so that return_indices="no" is not taken for True.
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices = check_flag("MaxPool2d", "return_indices", return_indices)
        self.ceil_mode = check_flag("MaxPool2d", "ceil_mode", ceil_mode)

    def forward(self, input):
        return functional.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over windows; stride defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = check_flag("AvgPool2d", "ceil_mode", ceil_mode)
        self.count_include_pad = check_flag("AvgPool2d", "count_include_pad", count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input):
        return functional.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Flatten(Module):
    """Merge dimensions start_dim..end_dim into one (by default all but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = check_int("Flatten", "start_dim", start_dim)
        self.end_dim = check_int("Flatten", "end_dim", end_dim)

    def forward(self, input):
        input = tensor_arg("Flatten", "input", input)
        check_dim("Flatten", "input's start_dim", self.start_dim, input.ndim)
        check_dim("Flatten", "input's end_dim", self.end_dim, input.ndim)
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of Flatten)."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim = check_int("Unflatten", "dim", dim)
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got "
                            f"{type(unflattened_size).__name__} {unflattened_size!r}")
        self.unflattened_size = tuple(check_int("Unflatten", "unflattened_size", size)
                                      for size in unflattened_size)

    def forward(self, input):
        input = tensor_arg("Unflatten", "input", input)
        check_dim("Unflatten", "input's dim", self.dim, input.ndim)
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PixelShuffle(Module):
    """(*, C·r², H, W) → (*, C, H·r, W·r): F.pixel_shuffle with r = ``upscale_factor``
    (checked when called, as torch's)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return functional.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H·r, W·r) → (*, C·r², H, W): F.pixel_unshuffle with r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return functional.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """F.channel_shuffle: the channels of (N, C, *) interleaved across ``groups``."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return functional.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


# ---- 1-D and 3-D convolution and pooling (issue 33) ------------------------------------------------
def _conv_settings(layer, name: str, axes: int, in_channels, out_channels, kernel_size, stride,
                   padding, dilation, groups) -> None:
    """A 1-D or 3-D conv layer's settings, checked, as torch's: ``axes``-tuples, and channels
    that divide by groups (a ValueError at construction)."""
    in_channels = check_dimension(name, "in_channels", in_channels)
    out_channels = check_dimension(name, "out_channels", out_channels, minimum=1)
    groups = check_size(name, "groups", groups, minimum=1)
    if in_channels % groups or out_channels % groups:
        raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                         f"({out_channels}) must both be divisible by groups ({groups})")
    layer.in_channels, layer.out_channels, layer.groups = in_channels, out_channels, groups
    layer.kernel_size = ntuple(name, "kernel_size", kernel_size, axes)
    layer.stride = ntuple(name, "stride", stride, axes)
    layer.dilation = ntuple(name, "dilation", dilation, axes)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{name}: padding must be an int, a tuple, 'valid' or 'same', "
                             f"got {padding!r}")
        if padding == "same" and layer.stride != (1,) * axes:
            raise ValueError(f"{name}: padding='same' is not supported for strided "
                             f"convolutions, got stride={stride!r}")
        layer.padding = padding
    else:
        layer.padding = ntuple(name, "padding", padding, axes, minimum=0)


def _check_padding_mode(name: str, padding_mode) -> None:
    """Zero padding only, as Conv2d here (torch's other modes: NotImplementedError)."""
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"{name}: padding_mode must be one of {PADDING_MODES}, got "
                         f"{padding_mode!r}")
    if padding_mode != "zeros":
        raise NotImplementedError(f"{name}: padding_mode {padding_mode!r} is not supported "
                                  f"here, only 'zeros' (see docs/porting.md)")


class _ConvNd(Module):
    """Conv1d and Conv3d: Conv2d's settings, parameters and initialisation over ``axes`` axes."""

    axes = 0
    function = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, generator=None):
        super().__init__()
        name = type(self).__name__
        check_device(name, device)
        _check_padding_mode(name, padding_mode)
        _conv_settings(self, name, self.axes, in_channels, out_channels, kernel_size, stride,
                       padding, dilation, groups)
        bias = check_flag(name, "bias", bias)
        shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        _add_weight_and_bias(self, shape, bias, dtype, generator)

    def reset_parameters(self, generator=None) -> None:
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, input):
        return type(self).function(input, self.weight, self.bias, self.stride, self.padding,
                                   self.dilation, self.groups)

    def extra_repr(self) -> str:
        return _conv_repr(self)


class Conv1d(_ConvNd):
    """1-D cross-correlation over (N, C, L) input; weight (out_channels, in_channels/groups, k).
    ``padding`` is an int, a 1-tuple, "valid" or "same" (zero padding only)."""

    axes, function = 1, staticmethod(functional.conv1d)


class Conv3d(_ConvNd):
    """3-D cross-correlation over (N, C, D, H, W) input; weight (out_channels,
    in_channels/groups, kd, kh, kw). ``padding`` is an int, a triple, "valid" or "same"."""

    axes, function = 3, staticmethod(functional.conv3d)


class _ConvTransposeNd(Module):
    """ConvTranspose1d and ConvTranspose3d: ConvTranspose2d's settings, parameters and
    initialisation over ``axes`` axes; weight (in_channels, out_channels/groups, *kernel), so its
    fan-in is out_channels/groups·Πkernel, as torch's. ``forward(input, output_size=None)``:
    ``output_size`` (the spatial sizes, or the full shape) picks one of the sizes a strided
    layer can make, overriding ``output_padding``."""

    axes = 0
    function = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None, generator=None):
        super().__init__()
        name = type(self).__name__
        check_device(name, device)
        if not isinstance(padding_mode, str) or padding_mode != "zeros":  # (torch's ValueError)
            raise ValueError(f"{name}: padding_mode must be 'zeros', the only mode torch has for "
                             f"{name}, got {padding_mode!r}")
        if isinstance(padding, str):  # (torch's layer takes it, and its forward then fails)
            raise ValueError(f"{name}: padding must be an int or a tuple of {self.axes} ints, "
                             f"got {padding!r}")
        _conv_settings(self, name, self.axes, in_channels, out_channels, kernel_size, stride,
                       padding, dilation, groups)
        # (checked against stride and dilation by the function, when no output_size says
        # otherwise: torch's layer may hold one it never uses)
        self.output_padding = ntuple(name, "output_padding", output_padding, self.axes,
                                     minimum=0)
        self.padding_mode = padding_mode
        bias = check_flag(name, "bias", bias)
        shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        _add_weight_and_bias(self, shape, bias, dtype, generator, outputs=self.out_channels)

    def reset_parameters(self, generator=None) -> None:
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding if output_size is None else \
            _output_padding_for(self, input, output_size, self.axes)
        return type(self).function(input, self.weight, self.bias, self.stride, self.padding,
                                   output_padding, self.groups, self.dilation)

    def extra_repr(self) -> str:
        return _conv_repr(self)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (functional.conv_transpose1d) over (N, C, L) input."""

    axes, function = 1, staticmethod(functional.conv_transpose1d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (functional.conv_transpose3d) over (N, C, D, H, W) input."""

    axes, function = 3, staticmethod(functional.conv_transpose3d)


class MaxPool1d(Module):
    """Max over windows along the last axis of (N, C, L); stride defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        # (the geometry is max_pool1d's to check, at the first call, as torch's)
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        name = type(self).__name__  # (MaxPool3d's too)
        self.return_indices = check_flag(name, "return_indices", return_indices)
        self.ceil_mode = check_flag(name, "ceil_mode", ceil_mode)

    def forward(self, input):
        return functional.max_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool3d(MaxPool1d):
    """Max over kd×kh×kw windows of (N, C, D, H, W); stride defaults to kernel_size."""

    def forward(self, input):
        return functional.max_pool3d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class AvgPool1d(Module):
    """Mean over windows along the last axis of (N, C, L); stride defaults to kernel_size
    (torch keeps each setting as a 1-tuple, and prints it so)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = ntuple("AvgPool1d", "kernel_size", kernel_size, 1)
        self.stride = self.kernel_size if stride is None else ntuple("AvgPool1d", "stride",
                                                                     stride, 1)
        self.padding = ntuple("AvgPool1d", "padding", padding, 1, minimum=0)
        self.ceil_mode = check_flag("AvgPool1d", "ceil_mode", ceil_mode)
        self.count_include_pad = check_flag("AvgPool1d", "count_include_pad", count_include_pad)

    def forward(self, input):
        return functional.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(Module):
    """Mean over kd×kh×kw windows of (N, C, D, H, W); stride defaults to kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = check_flag("AvgPool3d", "ceil_mode", ceil_mode)
        self.count_include_pad = check_flag("AvgPool3d", "count_include_pad", count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input):
        return functional.avg_pool3d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad,
                                     self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
