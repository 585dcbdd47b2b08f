"""Faster pooling kernels: the max with its argmax, the scatter by that argmax, and the window
sums of average pooling.

ops/pool.py states what pooling and its derivatives are, as reference kernels; each function
here registers under a reference's name (``@replaces``), takes exactly its arguments and returns
the same numbers (tests/test_kernels.py), only sooner. The tricks (each measured on its own:
see benchmarks/README.md):
  - max and argmax by a branch-free compare-and-select over the k·k taps (``max_and_first_tap``);
  - strided windows read from a phase-split copy as contiguous 1-D runs (``phase_split``:
    NumPy's passes over strided views run in short inner loops);
  - the argmax as int32 flat indices: compare-and-select tracks the winning tap's offset in
    the plane (``tap_offsets``), so one addition of the window origins finishes it, read
    straight off the phase grid; scattered back with NumPy's 1-D ``add.at`` fast path (a 4-D
    index array takes NumPy's generic path);
  - large temporaries from the pool of reused memory (memory.py);
  - and for small inputs whose windows tile them, one reshape and NumPy's max/argmax
    (``max_pool_tiles``: on a few dozen pixels the per-tap passes cost more than the
    arithmetic).
"""
import functools

import numpy as np

from ..kernels import replaces
from ..windows import adaptive_window_index, tap
from .conv import pad
from .memory import take, zeros


def padded_for(x, kernel, stride, padding, dilation, out_hw, value):
    """Pad by ``padding`` on every side, plus whatever ceil_mode's last window reaches past it."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    h, w = x.shape[2:]
    extra_h = max(0, (out_hw[0] - 1) * sh + dh * (kh - 1) + 1 - (h + 2 * ph))
    extra_w = max(0, (out_hw[1] - 1) * sw + dw * (kw - 1) + 1 - (w + 2 * pw))
    return pad(x, ph, ph + extra_h, pw, pw + extra_w, value)


@functools.lru_cache(maxsize=64)
def window_origins(stride, padding, out_hw, input_hw):
    """Flat index, into each H×W plane, of every window's tap (0, 0); and the rows and columns
    the windows start at.

    Cached per geometry (a training loop asks for the same one every step; on tiny inputs
    building them was a fifth of the op), so the arrays are read-only.
    """
    (sh, sw), (ph, pw), (ho, wo), (h, w) = stride, padding, out_hw, input_hw
    rows, columns = np.arange(ho) * sh - ph, np.arange(wo) * sw - pw
    index = np.int32 if h * w <= np.iinfo(np.int32).max else np.int64  # half the bytes to move
    origin = (rows[:, None] * w + columns[None, :]).astype(index)
    for array in (origin, rows, columns):
        array.setflags(write=False)
    return origin, rows, columns


@replaces("max_pool_argmax")
def max_pool_argmax(x, kernel, stride, padding, dilation, out_hw):
    """(out, argmax): each window's max, and where it is as a flat index into its H×W plane
    (PyTorch's ``return_indices``; int32 where a plane's indices fit, from the pool of reused
    memory).

    The first maximum wins a tie, as in PyTorch; a NaN wins over any number.
    """
    n, c, h, w = x.shape
    if x.size <= SMALL_INPUT and stride == kernel and padding == (0, 0) and dilation == (1, 1) \
            and out_hw[0] * kernel[0] <= h and out_hw[1] * kernel[1] <= w:
        return max_pool_tiles(x, kernel, out_hw)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = padded_for(x, kernel, stride, padding, dilation, out_hw, fill)
    phases = phase_split(padded, kernel, stride, dilation, out_hw)
    if phases is not None:
        taps = phase_taps(phases, padded.shape, kernel, stride)
    else:  # the general path: strided views straight into the padded input
        taps = [tap(padded, i, j, stride, dilation, out_hw)
                for i in range(kernel[0]) for j in range(kernel[1])]
    # Where the phase grid is exactly the output (2×2 windows at stride 2 on even sizes) the
    # compare-and-select writes the op's output directly; else a grid it is cut from.
    out = take(taps[0].shape, x.dtype)
    offsets = tap_offsets(kernel, dilation, w)
    out, best = max_and_first_tap(taps, out, codes=offsets)
    # max() propagates a NaN: one pass, no temporary.
    if out.dtype.kind == "f" and out.size and np.isnan(out.max()):  # (an empty batch has no max)
        best = None  # (its block serves the second pass)
        out, best = max_and_first_tap(taps, out, nan_wins=True, codes=offsets)
    del taps  # no view of the phase-split copy or of the padding outlives this function
    grid_best = best
    if phases is not None:
        phases = None
        out = cut_from_phase_grid(out, padded.shape, stride, out_hw)
        best = on_phase_grid(grid_best, padded.shape, stride, out_hw)
    padded = None
    origin, rows, columns = window_origins(stride, padding, out_hw, (h, w))
    argmax = take(out.shape, origin.dtype)  # free again once backward released the node
    np.add(best, origin, out=argmax, dtype=argmax.dtype)  # (best read straight off the grid)
    best = grid_best = None
    if any(padding):
        # A window whose real pixels all equal the fill (-inf, or an integer type's least
        # value) ties with its padding: point at its first real pixel, as PyTorch (which
        # never looks at padding) does.
        tied = out == fill
        if tied.any():
            np.copyto(argmax, _first_real_pixel(rows, columns, dilation, w), where=tied)
    return out, argmax


# Below this many input elements, non-overlapping windows go through max_pool_tiles: on a few
# dozen pixels (the seed article's network) the passes per tap cost more than the arithmetic
# (measured: see benchmarks/README.md); from a few thousand on, the general kernel wins.
SMALL_INPUT = 2048


def max_pool_tiles(x, kernel, out_hw):
    """max_pool_argmax for windows that tile the input (stride = kernel, no padding or dilation):
    each window's pixels side by side in one small copy, then ``max_along_last`` (the same
    winner as the general kernel: the first maximum, or the last NaN)."""
    n, c, h, w = x.shape
    (kh, kw), (ho, wo) = kernel, out_hw
    tiles = x[:, :, :ho * kh, :wo * kw].reshape(n, c, ho, kh, wo, kw)
    tiles = tiles.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, ho, wo, kh * kw)
    out, chosen = max_along_last(tiles)
    origin = window_origins(kernel, (0, 0), out_hw, (h, w))[0]
    # (the offsets in the origins' dtype: adding uint8 to int32 costs a type resolution, dear
    # next to the arithmetic on a few pixels)
    return out, origin + tap_offsets(kernel, (1, 1), w).astype(origin.dtype)[chosen]


def max_along_last(values):
    """(max, position) along the last axis, by PyTorch's rule "val > max || isnan(val)": the
    first maximum wins a tie, and a NaN wins — the *last* NaN, since each one replaces the one
    before. (NumPy's argmax would pick the first NaN: it is corrected where a NaN won.)"""
    chosen = values.argmax(axis=-1)
    out = values.max(axis=-1)  # (the value at ``chosen``: a NaN where one won; no gather needed)
    if out.dtype.kind == "f":
        is_nan = np.isnan(out)
        if np.count_nonzero(is_nan):  # (half of .any()'s time on a few numbers)
            last_nan = values.shape[-1] - 1 - np.isnan(values[..., ::-1]).argmax(axis=-1)
            chosen = np.where(is_nan, last_nan, chosen)
    return out, chosen


@functools.lru_cache(maxsize=64)
def tap_offsets(kernel, dilation, width) -> np.ndarray:
    """Where each tap t = (i, j) of a window lies past its tap (0, 0), as a flat index into an
    H×W plane: i·dh·W + j·dw. max_and_first_tap tracks the winner's offset instead of its tap
    number, and the argmax is the window's origin plus it (four integer passes over the
    output fewer).

    Its rule needs the codes of the taps that can win to grow with t. The offsets of a
    window's real pixels do: for (i, j) before (i', j') on a later row, the difference is
    (i' - i)·dh·W + (j' - j)·dw > W - W, since both columns lie in the plane. Taps in the
    padding may not (a window wider than the plane), but padding never wins: it only ties,
    and a tie keeps the earlier tap. Cached per geometry, so read-only.
    """
    (kh, kw), (dh, dw) = kernel, dilation
    offsets = (np.arange(kh)[:, None] * (dh * width) + np.arange(kw) * dw).ravel()
    offsets = offsets.astype(np.min_scalar_type(offsets.max()))
    offsets.setflags(write=False)
    return offsets


# The largest flat index each argmax dtype holds (np.iinfo builds an object per call, dear
# next to a small max-pool's backward).
_LARGEST_INDEX = {np.dtype(t): np.iinfo(t).max for t in (np.int32, np.int64)}


@replaces("route_to_argmax")
def route_to_argmax(grad, argmax, input_shape):
    """Send each output's gradient to the pixel its window chose."""
    n, c, h, w = input_shape
    # Scatter-add: np.add.at sums the gradients of all windows that chose the same pixel
    # (overlapping windows), in the gradient's own dtype (bincount would go through float64).
    # Summed in argmax's own dtype (int32) when every flat index fits it, widened on output:
    # faster than widening argmax first.
    index = argmax.dtype if n * c * h * w <= _LARGEST_INDEX.get(argmax.dtype, -1) else np.intp
    plane_start = (np.arange(n * c, dtype=index) * (h * w)).reshape(n, c, 1, 1)
    flat = take(argmax.shape, np.dtype(np.intp))  # a temporary: reused, no page faults
    np.add(argmax, plane_start, out=flat)
    grad_x = zeros(input_shape, grad.dtype)
    if grad.size == 0:  # no windows (an empty output): nothing to route
        return grad_x
    # Flat 1-D indices and values: NumPy's fast path for add.at (a 4-D index array takes a
    # generic path, several times slower). A gradient broadcast from one number (the backward
    # of x.sum()) goes in as that number: flattening it would copy it out in full.
    values = grad.reshape(-1) if any(grad.strides) else grad.flat[0]
    np.add.at(grad_x.reshape(-1), flat.reshape(-1), values)
    return grad_x


def max_and_first_tap(taps, out=None, nan_wins=False, codes=None):
    """Compare-and-select over the k·k taps: (each window's max, which tap held its first
    maximum, 0 … k·k-1 in window order); the max written into ``out`` when given.

    A strict ">" keeps the first maximum, as PyTorch does. Branch-free, because masked writes
    (np.copyto with where=) were the slowest part of the loop: the value is taken with
    np.maximum, and since t only grows, the last tap that beat the running max — the winner —
    is simply the largest t·[tap t was better]. With ``nan_wins`` (for inputs whose output
    holds a NaN) a NaN also counts as better, PyTorch's "val > max || isnan(val)"; np.maximum
    returns the NaN as well.

    With ``codes`` (one non-negative number per tap, the first 0), ``best`` is the winning
    tap's code instead of its number: the same argument holds wherever the codes of the taps
    that can win grow with t (``tap_offsets``).

    The small per-window arrays come from the pool of reused memory (see memory.py).
    """
    out = np.empty_like(taps[0]) if out is None else out
    np.copyto(out, taps[0])
    codes = range(len(taps)) if codes is None else codes
    index_dtype = np.min_scalar_type(codes[-1])
    best, chosen = take(out.shape, index_dtype), take(out.shape, index_dtype)
    better = take(out.shape, np.dtype(bool))
    better_01 = better.view(np.uint8)  # the same bytes as 0/1 numbers: no cast to multiply them
    best.fill(0)
    for t in range(1, len(taps)):
        values = taps[t]
        np.greater(values, out, out=better)
        if nan_wins:
            better |= np.isnan(values)
        np.maximum(out, values, out=out)
        np.multiply(better_01, index_dtype.type(codes[t]), out=chosen)
        np.maximum(best, chosen, out=best)
    return out, best


PHASE_SPLIT_MIN_SIZE = 1 << 14  # elements; below it, strided views cost less than the copy


def phase_split(padded, kernel, stride, dilation, out_hw):
    """Fast path for strided windows: a copy of the input grouped by phase, or None.

    With stride s > 1 every tap is a view that steps s elements along its last axis, and NumPy's
    ufuncs run several times slower on such views than on contiguous memory. One copy groups
    the input by phase, (sh, sw, N, C, H/sh, W/sw): pixel (y, x) goes to phase
    (y % sh, x % sw), position (y // sh, x // sw). Within one phase, a tap is then a single
    contiguous run (see ``phase_taps``), so every pass of compare-and-select is one long 1-D
    loop. Non-overlapping pooling (stride = kernel) is the case k = s. Returns None where this
    does not apply (stride 1, dilation, a padded size not divisible by the stride, or an input
    too small to gain): the general path then reads ``tap`` views directly. Tests compare both
    paths.
    """
    (sh, sw) = stride
    n, c, hp, wp = padded.shape
    if padded.size < PHASE_SPLIT_MIN_SIZE:
        return None
    if dilation != (1, 1) or (sh == 1 and sw == 1) or hp % sh or wp % sw:
        return None
    if any((k - 1) // s + o > size // s for k, s, o, size in zip(kernel, stride, out_hw, (hp, wp))):
        return None
    hq, wq = hp // sh, wp // sw
    # The taps that start past a phase's first pixel run that far past its end (see
    # phase_taps): a tail of padding keeps those reads inside the buffer.
    tail = (kernel[0] - 1) // sh * wq + (kernel[1] - 1) // sw
    phases = take((padded.size + tail,), padded.dtype)
    grouped = phases[:padded.size].reshape(sh, sw, n, c, hq, wq)
    for a in range(sh):  # phase (a, b): every sh-th row from a, every sw-th column from b
        for b in range(sw):
            np.copyto(grouped[a, b], padded[:, :, a::sh, b::sw])
    phases[padded.size:] = 0  # any value: only garbage outputs read it
    return phases


def phase_taps(phases, padded_shape, kernel, stride):
    """Tap (i, j) of every window, as one contiguous 1-D run over the phase grid.

    Tap (i, j) reads phase (i % sh, j % sw) from position (i // sh, j // sw) on. Read as one
    flat run of N·C·(H/sh)·(W/sw) elements from there, it holds the tap of the window at every
    grid position (n, c, y, x); the positions past the output (y ≥ ho or x ≥ wo) wrap into the
    next row or plane and hold garbage, which ``on_phase_grid`` cuts off. Computing those few
    extra outputs costs far less than the short inner loops of a strided 4-D view.
    """
    (sh, sw) = stride
    n, c, hp, wp = padded_shape
    size, wq = n * c * hp * wp // (sh * sw), wp // sw
    runs = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            start = ((i % sh) * sw + j % sw) * size + (i // sh) * wq + j // sw
            runs.append(phases[start: start + size])
    return runs


def on_phase_grid(array, padded_shape, stride, out_hw):
    """The (N, C, ho, wo) outputs inside a result computed over the whole phase grid (a view)."""
    n, c, hp, wp = padded_shape
    return array.reshape(n, c, hp // stride[0], wp // stride[1])[:, :, :out_hw[0], :out_hw[1]]


def on_phase_grid_exact(padded_shape, stride, out_hw) -> bool:
    """Whether the phase grid holds nothing but the outputs (no garbage rows or columns)."""
    return (padded_shape[2] // stride[0], padded_shape[3] // stride[1]) == tuple(out_hw)


def cut_from_phase_grid(grid_out, padded_shape, stride, out_hw):
    """The outputs, cut out of the phase grid into the op's compact output. (A grid that is
    exactly the output is already the op's output, and stays it.)"""
    if on_phase_grid_exact(padded_shape, stride, out_hw):
        return grid_out.reshape(padded_shape[:2] + tuple(out_hw))
    out = take(padded_shape[:2] + tuple(out_hw), grid_out.dtype)
    np.copyto(out, on_phase_grid(grid_out, padded_shape, stride, out_hw))
    return out


def _first_real_pixel(rows, columns, dilation, width):
    """For windows starting in the padding, the first tap that lands inside the input."""
    first_row = np.where(rows < 0, rows + (-rows + dilation[0] - 1) // dilation[0] * dilation[0], rows)
    first_col = np.where(columns < 0, columns + (-columns + dilation[1] - 1) // dilation[1] * dilation[1], columns)
    return first_row[:, None] * width + first_col[None, :]


@replaces("window_sum")
def window_sum(x, kernel, stride, padding, out_hw):
    """Σ over each window (zero padding; ceil mode's overhang reads zeros)."""
    padded = padded_for(x, kernel, stride, padding, (1, 1), out_hw, 0)
    total = tap(padded, 0, 0, stride, (1, 1), out_hw).copy()
    for t in range(1, kernel[0] * kernel[1]):
        total += tap(padded, *divmod(t, kernel[1]), stride, (1, 1), out_hw)
    return total


@replaces("spread_over_windows")
def spread_over_windows(values, input_shape, kernel, stride, padding, out_hw):
    """The adjoint of window_sum: each output's value added onto every pixel of its window."""
    (ph, pw), (h, w) = padding, input_shape[2:]
    padded_h = max(h + 2 * ph, (out_hw[0] - 1) * stride[0] + kernel[0])
    padded_w = max(w + 2 * pw, (out_hw[1] - 1) * stride[1] + kernel[1])
    grad_padded = zeros(tuple(input_shape[:2]) + (padded_h, padded_w), values.dtype)
    for t in range(kernel[0] * kernel[1]):
        tap(grad_padded, *divmod(t, kernel[1]), stride, (1, 1), out_hw)[...] += values
    return grad_padded[:, :, ph: ph + h, pw: pw + w]


@replaces("adaptive_max_argmax")
def adaptive_max_argmax(x, out_hw):
    """(out, argmax int64) of adaptive max pooling: every window's pixels in one gather through
    the index table, then NumPy's max and argmax (``max_along_last``)."""
    n, c, h, w = x.shape
    window = adaptive_window_index((h, w), out_hw)  # (out_h, out_w, K): flat pixels
    out, chosen = max_along_last(x.reshape(n, c, h * w)[:, :, window])
    argmax = np.take_along_axis(window[None, None], chosen[..., None], axis=-1)[..., 0]
    return out, argmax.astype(np.int64)
