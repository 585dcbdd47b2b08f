"""Window geometry for conv and pooling: the shapes, sizes and index arithmetic of sliding windows
over the two spatial axes of NCHW arrays, below both the ops and the fast kernels.

A k×k window at stride s touches, for its tap (i, j), the input pixels
``(ho·s + i·d, wo·s + j·d)`` over all outputs (ho, wo). For a fixed tap those pixels form one
strided slice of the (padded) input, so a loop over the k·k taps — never over pixels — visits
every window at once: forward reads the slices, backward adds gradients into them.
"""
import functools

import numpy as np


class GeometryError(RuntimeError, ValueError):
    """A shape or window geometry the op refuses: torch raises RuntimeError; this package raised
    ValueError before it followed torch, so the error is both."""


def pair(op: str, name: str, value, minimum: int = 1, *, single: bool = False) -> tuple:
    """An int or a pair of ints, checked, as (height, width); with ``single``, a sequence of one
    int too (torch's conv2d and pools take ``stride=[2]``, its unfold and fold do not).

    As torch: an element that is not an int (2.5, True, "a") is a TypeError, a sequence of the
    wrong length or a size below ``minimum`` a RuntimeError (here GeometryError)."""
    if type(value) is int and value >= minimum:  # the common case, on every call of an op
        return value, value
    try:
        values = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    except TypeError:  # not a sequence at all, e.g. 2.5
        values = (value,)
    # (a bool is an int to Python, not to torch: stride=True is refused there)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
               for v in values):
        raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    if isinstance(value, (int, np.integer)) or (single and len(values) == 1):
        values = values * 2
    if len(values) != 2:
        raise GeometryError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    if any(v < minimum for v in values):
        raise GeometryError(f"{op}: {name} must be at least {minimum}, got {value!r}")
    return int(values[0]), int(values[1])


def check_4d(op: str, name: str, x: np.ndarray) -> None:
    if x.ndim != 4:
        raise GeometryError(f"{op}: {name} must be 4-D, got shape {x.shape}")


def check_batched(op: str, x: np.ndarray, low_rank_error=GeometryError) -> bool:
    """True for a batch (N, C, H, W), False for one unbatched image (C, H, W); torch's error
    for any other rank (``low_rank_error`` below 3 dims, where torch's avg_pool2d and unfold
    raise IndexError from looking up dim -3)."""
    if x.ndim not in (3, 4):
        error = low_rank_error if x.ndim < 3 else GeometryError
        raise error(f"Expected 3D (unbatched) or 4D (batched) input to {op}, but got input of "
                    f"size: {list(x.shape)}")
    return x.ndim == 4


def tap(padded: np.ndarray, i: int, j: int, stride: tuple, dilation: tuple, out_hw: tuple):
    """The strided view of ``padded`` that tap (i, j) of every window reads."""
    (sh, sw), (dh, dw), (ho, wo) = stride, dilation, out_hw
    return padded[:, :, i * dh: i * dh + sh * (ho - 1) + 1: sh, j * dw: j * dw + sw * (wo - 1) + 1: sw]


def read_only_view(array: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """``as_strided(array, shape, strides, writeable=False)``. Over C-contiguous memory the
    ndarray constructor makes it without as_strided's Python detour (a wrapper object and
    np.asarray), a noticeable share of a convolution on tiny inputs (measured: see
    benchmarks/README.md); other memory has no buffer to lay the view over, and takes NumPy's
    way."""
    if not array.flags.c_contiguous:
        return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=False)
    view = np.ndarray(shape, array.dtype, array, 0, strides)
    view.flags.writeable = False
    return view


def windows_view(padded: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
                 out_hw: tuple) -> np.ndarray:
    """Every window at once, without a copy: a read-only (N, C, kh, kw, ho, wo) view of
    ``padded`` whose [:, :, i, j] is ``tap(padded, i, j, ...)``. (Copying out of it in one call
    beats the loop over taps, most on small images, where the loop's per-call cost dominates;
    measured: see benchmarks/README.md.)"""
    (sn, sc, sy, sx), (sh, sw), (dh, dw) = padded.strides, stride, dilation
    return read_only_view(padded, padded.shape[:2] + tuple(kernel) + tuple(out_hw),
                          (sn, sc, sy * dh, sx * dw, sy * sh, sx * sw))


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
        raise GeometryError(f"{op}: the {axis} window ({window_extent(kernel, dilation)} with "
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
        raise GeometryError(f"{op}: along the {axis}, output {int(np.argmin(inside))}'s window "
                         f"(kernel_size={kernel}, dilation={dilation}, padding={pad}) covers only "
                         f"padding and no pixel of the input of size {size}; reduce padding or dilation")


def conv_output_size(op, size, kernel, stride, pad_low, pad_high, dilation, axis) -> int:
    """How many windows fit along one axis of the padded input (floor, as every framework)."""
    if size + pad_low + pad_high < window_extent(kernel, dilation):
        raise GeometryError(f"{op}: kernel {window_extent(kernel, dilation)} (kernel {kernel}, "
                         f"dilation {dilation}) is larger than the padded input {axis} "
                         f"{size + pad_low + pad_high}")
    return (size + pad_low + pad_high - window_extent(kernel, dilation)) // stride + 1


# ---- adaptive windows --------------------------------------------------------------------------
# Adaptive pooling fixes the output size instead of the kernel: along an axis of ``size`` pixels,
# output i pools [floor(i·size/out), ceil((i+1)·size/out)) (PyTorch's rule). Windows may differ in
# length by a pixel or two and may overlap; where out divides size they tile it, a plain pool.

def adaptive_bounds(size: int, out: int) -> tuple:
    """(starts, ends) of the ``out`` adaptive windows along an axis of ``size`` pixels."""
    i = np.arange(out)
    return i * size // out, -(-(i + 1) * size // out)  # floor, and ceil as -floor(-x)


def adaptive_mean_matrix(size: int, out: int, dtype) -> np.ndarray:
    """(out, size): row i averages window i (1/length on its pixels, 0 elsewhere), so that the
    adaptive mean of a plane P is M_h · P · M_wᵀ (a window is a rectangle: rows × columns)."""
    starts, ends = adaptive_bounds(size, out)
    pixel = np.arange(size)
    inside = (pixel >= starts[:, None]) & (pixel < ends[:, None])
    return (inside / (ends - starts)[:, None]).astype(dtype)


def adaptive_mean(x: np.ndarray, axis: int, out: int) -> np.ndarray:
    """The mean of each of the ``out`` adaptive windows along ``axis`` of ``x``.

    Each window sums its own pixels only. (The product with adaptive_mean_matrix also
    multiplies every other pixel by 0, and 0·inf = NaN would spread one non-finite pixel into
    windows that do not hold it; torch's keeps it in its own.) The windows are gathered as
    (out, longest) taps, a shorter one's extra taps masked out."""
    size = x.shape[axis]
    starts, ends = adaptive_bounds(size, out)
    taps = starts[:, None] + np.arange(int((ends - starts).max(initial=1)))  # (out, longest)
    trailing = (1,) * (x.ndim - axis - 1)  # the axes after ``axis``, for broadcasting
    inside = (taps < ends[:, None]).reshape(taps.shape + trailing)
    windows = np.take(x, np.minimum(taps, size - 1), axis=axis)  # axis → (out, longest)
    total = np.where(inside, windows, 0).sum(axis=axis + 1)
    return total / (ends - starts).reshape((out,) + trailing).astype(x.dtype)


@functools.lru_cache(maxsize=64)
def adaptive_window_index(input_hw: tuple, out_hw: tuple) -> np.ndarray:
    """(out_h, out_w, kh·kw): the flat index, into an H×W plane, of every pixel of every adaptive
    window, in row-major order, for kh, kw the longest window along each axis.

    A shorter window repeats its last row / column to fill the table. The repeats come after
    the pixel they copy and the order stays row-major, so they change neither the max, nor
    which pixel is the first maximum, nor the last NaN. Cached per geometry (read-only).
    """
    (h, w), (out_h, out_w) = input_hw, out_hw
    taps = []
    for size, out in ((h, out_h), (w, out_w)):
        starts, ends = adaptive_bounds(size, out)
        longest = int((ends - starts).max(initial=1))  # (initial: out may be 0)
        taps.append(np.minimum(starts[:, None] + np.arange(longest), ends[:, None] - 1))
    rows, columns = taps  # (out_h, kh), (out_w, kw)
    index = rows[:, None, :, None] * w + columns[None, :, None, :]  # (out_h, out_w, kh, kw)
    index = index.reshape(out_h, out_w, rows.shape[1] * columns.shape[1]).astype(np.intp)
    index.setflags(write=False)
    return index


# ---- patches (im2col) ---------------------------------------------------------------------------
def gather_windows(padded: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
                   out_hw: tuple) -> np.ndarray:
    """(N, C, kh, kw, ho, wo): tap (i, j) of every window, copied out."""
    return windows_view(padded, kernel, stride, dilation, out_hw).copy()


def scatter_windows(patches: np.ndarray, padded_hw: tuple, stride: tuple,
                    dilation: tuple) -> np.ndarray:
    """The adjoint of gather_windows: (N, C, kh, kw, ho, wo) added back onto the (padded)
    pixels each tap read; a pixel inside several windows collects the sum."""
    n, c, kh, kw, ho, wo = patches.shape
    padded = np.zeros((n, c) + tuple(padded_hw), patches.dtype)
    for i in range(kh):
        for j in range(kw):
            tap(padded, i, j, stride, dilation, (ho, wo))[...] += patches[:, :, i, j]
    return padded
