"""Window geometry for conv and pooling: the shapes, sizes and index arithmetic of sliding windows
over the two spatial axes of NCHW arrays, below both the ops and the fast kernels.

A k×k window at stride s touches, for its tap (i, j), the input pixels
``(ho·s + i·d, wo·s + j·d)`` over all outputs (ho, wo). For a fixed tap those pixels form one
strided slice of the (padded) input, so a loop over the k·k taps — never over pixels — visits
every window at once: forward reads the slices, backward adds gradients into them.
"""
import numpy as np


def pair(op: str, name: str, value, minimum: int = 1) -> tuple:
    """An int or a pair of ints, checked, as (height, width)."""
    if type(value) is int and value >= minimum:  # the common case, on every call of an op
        return value, value
    try:
        values = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    except TypeError:  # not a sequence at all, e.g. 2.5
        values = ()
    if len(values) != 2 or not all(isinstance(v, (int, np.integer)) for v in values):
        raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    if any(v < minimum for v in values):
        raise ValueError(f"{op}: {name} must be at least {minimum}, got {value!r}")
    return int(values[0]), int(values[1])


def check_4d(op: str, name: str, x: np.ndarray) -> None:
    if x.ndim != 4:
        raise ValueError(f"{op}: {name} must be 4-D (N, C, H, W), got shape {x.shape}"
                         + (" — add a batch axis with x.reshape(1, *x.shape)" if x.ndim == 3 else ""))


def tap(padded: np.ndarray, i: int, j: int, stride: tuple, dilation: tuple, out_hw: tuple):
    """The strided view of ``padded`` that tap (i, j) of every window reads."""
    (sh, sw), (dh, dw), (ho, wo) = stride, dilation, out_hw
    return padded[:, :, i * dh: i * dh + sh * (ho - 1) + 1: sh, j * dw: j * dw + sw * (wo - 1) + 1: sw]


def window_extent(kernel: int, dilation: int) -> int:
    return dilation * (kernel - 1) + 1


def pool_output_size(op, size, kernel, stride, pad, dilation, ceil_mode, axis) -> int:
    """PyTorch's rule: floor (or ceil) of the window count, and in ceil mode the last window must
    start inside the input or its left padding, never entirely in the right padding."""
    span = size + 2 * pad - window_extent(kernel, dilation)
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    if out < 1:
        raise ValueError(f"{op}: the {axis} window ({window_extent(kernel, dilation)} with "
                         f"kernel_size={kernel}, dilation={dilation}) is larger than the padded "
                         f"input ({size} + 2×{pad} = {size + 2 * pad})")
    return out


def check_windows_reach_input(op, size, kernel, stride, pad, dilation, out, axis) -> None:
    """With dilation, a window can hop over the whole input and see only padding; PyTorch then
    returns -inf and an index outside the input. We refuse such a geometry instead."""
    if dilation == 1 and pad <= kernel // 2:
        # Consecutive taps: a window starts at ≥ -pad and is kernel long, so it ends inside
        # the input; it starts before the input's end (pool_output_size sees to that in ceil
        # mode). Nothing to check — and this runs on every call, so skip the arrays.
        return
    starts = np.arange(out) * stride - pad
    taps = starts[:, None] + np.arange(kernel)[None, :] * dilation
    inside = ((taps >= 0) & (taps < size)).any(axis=1)
    if not inside.all():
        raise ValueError(f"{op}: along the {axis}, output {int(np.argmin(inside))}'s window "
                         f"(kernel_size={kernel}, dilation={dilation}, padding={pad}) covers only "
                         f"padding and no pixel of the input of size {size}; reduce padding or dilation")


def conv_output_size(op, size, kernel, stride, pad_low, pad_high, dilation, axis) -> int:
    """How many windows fit along one axis of the padded input (floor, as every framework)."""
    if size + pad_low + pad_high < window_extent(kernel, dilation):
        raise ValueError(f"{op}: kernel {window_extent(kernel, dilation)} (kernel {kernel}, "
                         f"dilation {dilation}) is larger than the padded input {axis} "
                         f"{size + pad_low + pad_high}")
    return (size + pad_low + pad_high - window_extent(kernel, dilation)) // stride + 1
