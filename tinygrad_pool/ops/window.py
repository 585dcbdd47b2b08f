"""Sliding windows over the two spatial axes of NCHW arrays, shared by conv and pooling.

A k×k window at stride s touches, for its tap (i, j), the input pixels
``(ho·s + i·d, wo·s + j·d)`` over all outputs (ho, wo). For a fixed tap those pixels form one
strided slice of the (padded) input, so a loop over the k·k taps — never over pixels — visits
every window at once: forward reads the slices, backward adds gradients into them.
"""
import math
import threading

import numpy as np


def pair(op: str, name: str, value, minimum: int = 1) -> tuple:
    """An int or a pair of ints, checked, as (height, width)."""
    values = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
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


def pad_hw(x: np.ndarray, top: int, bottom: int, left: int, right: int, value=0) -> np.ndarray:
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    padded = take_buffer((n, c, h + top + bottom, w + left + right), x.dtype)  # a scratch buffer, see below
    padded.fill(value)
    padded[:, :, top: top + h, left: left + w] = x
    return padded


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


# Scratch buffers for the large temporaries of conv and pooling (the im2col columns and their
# gradient, the phase-split copy), kept per (shape, dtype) between steps. Writing into fresh
# memory costs a page fault per 4 KiB, which here was as slow as the arithmetic itself; a
# training loop allocates the same shapes every step, so handing buffers back and taking them
# again avoids that. A buffer is only ever in one node's hands: taken by forward or backward,
# given back once nothing reads it. Per thread, so two threads never share one; at most four
# kept per shape. Nothing here changes malloc or any process-wide setting.
_scratch = threading.local()


SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free


def take_buffer(shape, dtype) -> np.ndarray:
    if math.prod(shape) * dtype.itemsize < SCRATCH_MIN_BYTES:  # tiny: bookkeeping would dominate
        return np.empty(shape, dtype=dtype)
    free = getattr(_scratch, "free", None)
    stack = free.get((shape, dtype)) if free else None
    return stack.pop() if stack else np.empty(shape, dtype=dtype)


def give_buffer(array: np.ndarray) -> None:
    if array.nbytes < SCRATCH_MIN_BYTES:
        return
    free = _scratch.__dict__.setdefault("free", {})
    stack = free.setdefault((array.shape, array.dtype), [])
    if len(stack) < 4:
        stack.append(array)


def zeros(shape, dtype) -> np.ndarray:
    """np.zeros for arrays that are then scatter-added into (col2im, max-pool backward).

    np.zeros gets its memory from calloc, already-zero pages the kernel maps in lazily, so the
    first "+=" into each 4 KiB page faults twice (read, then write), at random places for a
    scatter: measured at ~9 µs a fault here, that made zeros-then-scatter ten times slower
    than the scatter itself. Filling an empty array touches each page once, in order.
    """
    array = np.empty(shape, dtype=dtype)
    array.fill(0)
    return array
