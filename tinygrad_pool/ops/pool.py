"""Max and average pooling over k×k windows of NCHW arrays.

Max pooling's derivative is a routing table: each output is a copy of one input pixel (the
window's argmax), so backward sends each output gradient to that pixel. Forward stores the
argmax; backward only reads it. Where windows overlap (stride < kernel) one pixel can be the
argmax of several windows and collects the sum of their gradients. Routing is linear, and its
own derivative reads the gradient back at the same pixels (a gather by the stored argmax).
Which cells a window pays when it holds several equal maxima (``ties``) is one rule,
``MaxPool2d.paid_cells``, that backward, the pictures and gradcheck's kink reports all ask.

Average pooling is linear too: backward spreads each output gradient evenly over its window,
and the derivative of that spreading is average pooling again.

Adaptive pooling fixes the output size instead of the kernel (windows from
``windows.adaptive_bounds``): where the output size divides the input's, its windows tile the
input and it is the plain pool above; otherwise adaptive max gathers every window's pixels
through one index table and routes its gradient like max pooling, and adaptive average is
linear, M_h · plane · M_wᵀ, with the transposed matrices for its derivative.

Max unpooling is the scatter that sends values back to the pixels max pooling's indices name;
its derivative is the gather by the same indices (PyTorch's, also where indices repeat).

Every op takes a batch (N, C, H, W) or one unbatched image (C, H, W), as PyTorch does.
``MaxPool1d``, ``AvgPool1d``, ``AdaptiveMaxPool1d``, ``AdaptiveAvgPool1d`` and ``MaxUnpool1d``
are the 2-D nodes over a height of one (their forward and backward reshape around the 2-D
ones'); pool3d.py has the 3-D pools. Power-average pooling (lp_pool1d, lp_pool2d) is composed
of avg_pool and elementwise ops, as torch composes it.

The arithmetic is a handful of named kernels (``max_pool_argmax``, ``route_to_argmax``,
``gather_argmax``, ``route_ties``, ``window_sum``, ``spread_over_windows``, ``avg_divisor``,
``adaptive_max_argmax``), written below as the math; fast/pool.py registers faster ones under
the same names, and ``set_kernels("reference")`` runs these (kernels.py).
"""
from typing import NamedTuple

import numpy as np

from ..engine import Node, Tensor
from ..kernels import kernel
from ..windows import (GeometryError, adaptive_mean, adaptive_mean_matrix, adaptive_window_index,
                       check_batched, check_windows_reach_input, pair, pool_output_size, tap)
from ..args import DimensionError, check_dimension, check_flag, check_floating, tensor_arg
from .conv import (backward_in_plane, ntuple, one_sample_as_batch, with_height,
                   without_height)

TIE_RULES = ("first", "split", "all")


# ---- the windows ----------------------------------------------------------------------------
# Every window of a pool has the same K = kh·kw cells; cell k = (i, j) of all the windows at
# once is one (ho, wo) plane, so the arrays below put the cells on axis 2, (N, C, K, ho, wo),
# and the windows' own axes after it (a loop over k, never over windows or pixels).
def window_table(input_hw, kernel, stride, padding, dilation, out_hw) -> tuple:
    """(pixel, inside), each (K, ho, wo): where cell k = (i, j) of window (a, b) lies, as a flat
    index into the H×W plane — row a·sh - ph + i·dh, column b·sw - pw + j·dw — and whether that
    is inside the input (not padding, nor ceil_mode's overhang past it; there ``pixel`` is 0, a
    placeholder that ``inside`` masks)."""
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo) = (input_hw, kernel, stride,
                                                                padding, dilation, out_hw)
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(ho) * sh - ph)[:, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + np.arange(wo) * sw - pw
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)  # (kh, kw, ho, wo)
    pixel = np.where(inside, rows * w + cols, 0)
    return pixel.reshape(kh * kw, ho, wo), inside.reshape(kh * kw, ho, wo)


def first_max(values, real=True) -> tuple:
    """(max, k) over the cells (axis 2) of windows (N, C, K, ...): each window's largest real
    cell and which it is, by PyTorch's scan "val > max || isnan(val)": the first maximum wins a
    tie, and a NaN wins over any number — the last NaN, since each one replaces the one before."""
    floating = values.dtype.kind == "f"
    lowest = -np.inf if floating else np.iinfo(values.dtype).min
    top = np.max(values, axis=2, where=real, initial=lowest)  # (a NaN propagates)
    k = (real & (values == top[:, :, None])).argmax(axis=2)  # the first maximum
    if floating:
        is_nan = np.isnan(top)
        last_nan = values.shape[2] - 1 - (real & np.isnan(values))[:, :, ::-1].argmax(axis=2)
        k = np.where(is_nan, last_nan, k)
    return np.take_along_axis(values, k[:, :, None], axis=2)[:, :, 0], k


def plane_index_dtype(h: int, w: int):
    """int32 where every flat index of an H×W plane fits it (half the bytes of int64 for
    backward to read), else int64."""
    return np.int32 if h * w <= np.iinfo(np.int32).max else np.int64


# ---- the kernels: reference implementations (fast/pool.py replaces some) ----------------------
@kernel
def max_pool_argmax(x, kernel, stride, padding, dilation, out_hw):
    """(out, argmax): each window's max over its real pixels (padding never wins), and where it
    is, as a flat index into its H×W plane (PyTorch's ``return_indices``; ``plane_index_dtype``).
    The first maximum wins a tie and a NaN wins (``first_max``), as in PyTorch."""
    n, c, h, w = x.shape
    pixel, inside = window_table((h, w), kernel, stride, padding, dilation, out_hw)
    out, k = first_max(x.reshape(n, c, h * w)[:, :, pixel], inside)  # (N, C, K, ho, wo) windows
    argmax = np.take_along_axis(pixel[None, None], k[:, :, None], axis=2)[:, :, 0]
    return out, argmax.astype(plane_index_dtype(h, w))


@kernel
def route_to_argmax(grad, argmax, input_shape):
    """grad_x[n, c, argmax[n, c, i, j]] += grad[n, c, i, j]: each output's gradient added onto
    the pixel its window chose (a pixel chosen by several windows collects their sum)."""
    n, c, h, w = input_shape
    grad_x = np.zeros((n, c, h * w), grad.dtype)
    batch, channel = np.arange(n)[:, None, None, None], np.arange(c)[None, :, None, None]
    np.add.at(grad_x, (batch, channel, argmax), grad)
    return grad_x.reshape(n, c, h, w)


@kernel
def gather_argmax(values, argmax):
    """out[n, c, i, j] = values[n, c, argmax[n, c, i, j]]: each window's chosen pixel, read (the
    adjoint of route_to_argmax)."""
    n, c, h, w = values.shape
    windows = argmax.shape[2] * argmax.shape[3]  # (not -1: an empty batch has no size to infer)
    chosen = argmax.reshape(n, c, windows).astype(np.intp)
    return np.take_along_axis(values.reshape(n, c, h * w), chosen, axis=2).reshape(argmax.shape)


@kernel
def route_ties(grad, share, input_shape, kernel, stride, padding, dilation):
    """grad_x[pixel of cell k of window (i, j)] += grad[n, c, i, j] · share[n, c, k, i, j]: each
    window's gradient shared among the cells it pays (``MaxPool2d.paid_cells``; ties "split",
    "all")."""
    n, c, h, w = input_shape
    out_hw = grad.shape[2:]
    padded_hw = tuple(max(size + 2 * p, (o - 1) * s + d * (k - 1) + 1) for size, p, o, s, d, k
                      in zip((h, w), padding, out_hw, stride, dilation, kernel))
    grad_padded = np.zeros((n, c) + padded_hw, grad.dtype)
    for k, (i, j) in enumerate(np.ndindex(*kernel)):  # cell (i, j) of every window at once
        # (a cell paid nothing, padding among them, receives nothing: not even inf · 0)
        paid = np.where(share[:, :, k] > 0, grad * share[:, :, k], 0)
        tap(grad_padded, i, j, stride, dilation, out_hw)[...] += paid
    return grad_padded[:, :, padding[0]: padding[0] + h, padding[1]: padding[1] + w]


@kernel
def window_sum(x, kernel, stride, padding, out_hw):
    """Σ over each window's real pixels (zero padding; ceil_mode's overhang reads zeros)."""
    n, c, h, w = x.shape
    pixel, inside = window_table((h, w), kernel, stride, padding, (1, 1), out_hw)
    windows = x.reshape(n, c, h * w)[:, :, pixel]  # (N, C, K, ho, wo)
    return np.where(inside, windows, 0).sum(axis=2, dtype=x.dtype)


@kernel
def spread_over_windows(values, input_shape, kernel, stride, padding, out_hw):
    """grad_x[pixel of cell k of window (i, j)] += values[n, c, i, j] for every real cell: the
    adjoint of window_sum."""
    n, c, h, w = input_shape
    pixel, inside = window_table((h, w), kernel, stride, padding, (1, 1), out_hw)
    grad_x = np.zeros((n, c, h * w), values.dtype)
    for k in range(len(pixel)):  # cell k of every window at once: distinct pixels, no clash
        grad_x[:, :, pixel[k][inside[k]]] += values[:, :, inside[k]]
    return grad_x.reshape(n, c, h, w)


@kernel
def avg_divisor(input_hw, kernel, stride, padding, out_hw, count_include_pad, divisor_override):
    """PyTorch's divisor per output (ho, wo), float64: ``divisor_override`` if given, else the
    number of the window's cells inside the padded input (``count_include_pad``) or inside the
    input itself; ceil_mode's overhang past the padding never counts."""
    if divisor_override:
        return np.full(out_hw, divisor_override, dtype=np.float64)
    extents = []  # along each axis, the window clipped; the count is their product
    for size, k, s, p, n in zip(input_hw, kernel, stride, padding, out_hw):
        start = np.arange(n) * s - p
        end = np.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        extents.append((end - start).astype(np.float64))
    return extents[0][:, None] * extents[1][None, :]


@kernel
def adaptive_max_argmax(x, out_hw):
    """(out, argmax int64): each adaptive window's max and where it is (flat in its H×W plane),
    by max pooling's rule (``first_max``). A short window repeats its last cells after them
    (``adaptive_window_index``), which changes neither."""
    n, c, h, w = x.shape
    window = np.moveaxis(adaptive_window_index((h, w), out_hw), -1, 0)  # (K, out_h, out_w)
    out, k = first_max(x.reshape(n, c, h * w)[:, :, window])
    argmax = np.take_along_axis(window[None, None], k[:, :, None], axis=2)[:, :, 0]
    return out, argmax.astype(np.int64)


# ---- max and average pooling ------------------------------------------------------------------
class Paid(NamedTuple):
    """The cells a max pool's backward pays (``MaxPool2d.paid_cells``): for each of the
    K = kh·kw cells of every window (N, C, ho, wo), its pixel and its share of the window's
    gradient."""
    argmax: np.ndarray  # (N, C, ho, wo): each window's chosen cell, flat in its H×W plane
    pixel: np.ndarray   # (K, ho, wo): cell k of window (i, j), flat in the plane (window_table)
    share: np.ndarray   # (N, C, K, ho, wo) float64: 1, 1/k or 0 (a cell in the padding: 0)

    def mask(self, input_shape) -> np.ndarray:
        """(N, C, H, W) bool: the input cells some window pays."""
        n, c, h, w = input_shape
        paid = np.zeros((n, c, h * w), dtype=bool)
        where = np.nonzero(self.share > 0)  # (n, c, k, i, j) of each paid cell
        paid[where[0], where[1], self.pixel[where[2:]]] = True
        return paid.reshape(n, c, h, w)


def argmax_mask(input_shape, argmax) -> np.ndarray:
    """(N, C, H, W) bool: the cells some window's argmax (flat in its H×W plane) names — what a
    pool that routes to its argmax alone pays."""
    n, c, h, w = input_shape
    chosen = np.zeros((n, c, h * w), dtype=bool)
    windows = int(np.prod(argmax.shape[2:]))
    np.put_along_axis(chosen, argmax.reshape(n, c, windows).astype(np.intp), True, axis=2)
    return chosen.reshape(n, c, h, w)


class _Pool2d(Node):
    """What max and average pooling share: k×k windows over the input plane, which the op
    describes itself (``windows``, ``window_cells``) for pictures and kink reports."""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def windows(self) -> tuple:
        """(pixel, inside), each (kh·kw, ho, wo): every window's cells in the input plane
        (``window_table``)."""
        a = self.attrs
        return window_table(tuple(self.parents[0].shape[2:]), a["kernel_size"], a["stride"],
                            a["padding"], a.get("dilation", (1, 1)), a["out_hw"])

    def window_cells(self, out_cell) -> tuple:
        """(cells, padding) of output cell (n, c, i, j): the input cells (n, c, h, w) its window
        reads, in window order, and the taps (ti, tj) of it that lie outside the input (in the
        padding, or ceil_mode's overhang)."""
        n, c, i, j = out_cell
        pixel, inside = self.windows()
        w, kw = self.parents[0].shape[3], self.attrs["kernel_size"][1]
        cells = [(n, c) + divmod(int(p), w) for p in pixel[:, i, j][inside[:, i, j]]]
        return cells, [divmod(int(k), kw) for k in np.flatnonzero(~inside[:, i, j])]

    def cells_reading(self, in_cell) -> list:
        """(output cell, None) of every window that holds input cell (n, c, h, w): window_cells
        turned round (None: no weight multiplies it)."""
        n, c, h, w = in_cell
        pixel, inside = self.windows()
        _, rows, columns = np.nonzero(inside & (pixel == h * self.parents[0].shape[3] + w))
        return [((n, c, int(i), int(j)), None) for i, j in zip(rows, columns)]

    def channel_groups(self) -> tuple:
        """(input channels, output channels) of each group: each channel is pooled alone."""
        return 1, 1

    def padding_read(self) -> tuple:
        """(rows, columns) of padding the windows read above and left of the input."""
        return tuple(self.attrs["padding"])


class MaxPool2d(_Pool2d):
    """out = max over each window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere

    ``ties`` decides who receives the gradient when a window holds several equal maxima:
    "first" (PyTorch), "split" (an equal share each) or "all" (the full gradient each, as the
    seed article's mask does — not a subgradient, see docs/); ``paid_cells`` is that rule.
    ``window_cells((n, c, i, j))`` names the input cells output (n, c, i, j) read and its taps
    in the padding; ``argmax`` the saved argmax (None once backward freed it).
    """

    def forward(ctx, x, *, kernel_size, stride, padding, dilation, ceil_mode, ties, out_hw):
        out, argmax = max_pool_argmax(x, kernel_size, stride, padding, dilation, out_hw)
        ctx.save_for_backward(x=x, argmax=argmax)  # what PyTorch saves: the input, the indices
        return out

    def backward(ctx, grad):
        x, argmax = ctx.saved_tensors
        a = ctx.attrs
        if a["ties"] == "first":
            return RouteToArgmax.call(grad, argmax=argmax, input_shape=x.shape)
        if type(grad) is not np.ndarray:
            raise RuntimeError(f"max_pool2d: double backward is defined for ties='first' "
                               f"(PyTorch's rule), not ties={a['ties']!r}")
        return route_ties(grad, ctx.paid_cells(x, argmax).share, x.shape, a["kernel_size"],
                          a["stride"], a["padding"], a["dilation"])

    @property
    def argmax(self):
        """Each window's chosen cell, flat in its H×W plane, as forward saved it (None once
        backward released it)."""
        return self.saved.get("argmax")

    def paid_cells(self, x, argmax=None, ties=None) -> Paid:
        """Which input cells each window's gradient goes to, and what share of it — the tie
        rule, written once (backward, the pictures and the kink reports ask here):
          "first"  the argmax takes the whole (PyTorch's rule);
          "split"  each of the k real cells equal to the window's max takes 1/k;
          "all"    each of them takes the whole.
        Padding never ties. A NaN max equals nothing (NaN ≠ NaN): such a window pays its argmax,
        under every rule. ``x``: the pooled input; ``argmax``: as forward saved it (default: the
        saved one, or forward's kernel run again once backward freed it); ``ties``: default this
        node's rule."""
        a = self.attrs
        ties = a["ties"] if ties is None else ties
        if argmax is None:
            argmax = self.argmax
        if argmax is None:
            argmax = max_pool_argmax(x, a["kernel_size"], a["stride"], a["padding"],
                                     a["dilation"], a["out_hw"])[1]
        n, c, h, w = x.shape
        pixel, inside = window_table((h, w), a["kernel_size"], a["stride"], a["padding"],
                                     a["dilation"], a["out_hw"])
        chosen = inside & (pixel == argmax[:, :, None])  # (N, C, K, ho, wo)
        if ties == "first":
            return Paid(argmax, pixel, chosen.astype(np.float64))
        top = gather_argmax(x, argmax)  # each window's max: the value at its argmax
        tied = inside & (x.reshape(n, c, h * w)[:, :, pixel] == top[:, :, None])
        count = np.count_nonzero(tied, axis=2)[:, :, None]
        tied = np.where(count > 0, tied, chosen)  # (a NaN window: its argmax alone)
        share = tied / np.maximum(count, 1) if ties == "split" else tied.astype(np.float64)
        return Paid(argmax, pixel, share)

    def kink_candidates(self, x) -> tuple:
        """The cells each window takes its max among, for gradcheck's kink report (kinks.py):
        (values (windows, K), padding -inf: it never wins; cell(g, k) and group(g), their names)."""
        n, c, h, w = x.shape
        pixel, inside = self.windows()  # (kh·kw, out_h, out_w)
        values = np.where(inside, x.reshape(n, c, h * w)[:, :, pixel], -np.inf)
        shape = (n, c) + pixel.shape[1:]

        def cell(g, k):
            i, j = np.unravel_index(g, shape)[2:]
            return (f"window cell {divmod(int(k), self.attrs['kernel_size'][1])} "
                    f"(pixel {divmod(int(pixel[k, i, j]), w)})")

        def group(g):
            return f"{self.name} window {tuple(int(i) for i in np.unravel_index(g, shape))}"
        return np.moveaxis(values, 2, -1).reshape(-1, len(pixel)), cell, group

    def kink_choice(self, group, tied, cell) -> str:
        """Where window ``group``'s gradient went: this op's tie rule, ``paid_cells`` (gradcheck
        asks)."""
        x, argmax = self.saved_tensors
        share = self.paid_cells(x, argmax).share  # (N, C, K, out_h, out_w)
        share = np.moveaxis(share, 2, -1).reshape(-1, share.shape[2])[group]  # the window's cells
        ties, count = self.attrs["ties"], np.count_nonzero(share)
        if ties == "split":
            return f"ties='split' gives each of the {count} cells 1/{count} of the gradient"
        if ties == "all":
            return (f"ties='all' gives each of the {count} cells the whole gradient: for each cell "
                    f"alone that is one of its one-sided derivatives, but together not a subgradient "
                    f"(raising all {count} by t raises the max by t; backward predicts {count}·t)")
        return (f"ties='first' chose {cell(group, np.flatnonzero(share)[0])}, PyTorch's rule: it gets "
                f"the whole gradient")


class RouteToArgmax(Node):
    """Each output's gradient added onto the pixel its window chose;  its derivative reads
    the pixels back: ∂L/∂grad = gather(G, argmax)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, grad, argmax, input_shape):
        ctx.save_for_backward(argmax=argmax)
        return route_to_argmax(grad, argmax, input_shape)

    def backward(ctx, grad_routed):
        argmax, = ctx.saved_tensors
        return GatherArgmax.call(grad_routed, argmax=argmax)


class GatherArgmax(Node):
    """Each window's chosen pixel, read;  its derivative routes back: ∂L/∂x = route(G, argmax)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, argmax):
        ctx.input_shape = x.shape
        ctx.save_for_backward(argmax=argmax)
        return gather_argmax(x, argmax)

    def backward(ctx, grad):
        argmax, = ctx.saved_tensors
        return RouteToArgmax.call(grad, argmax=argmax, input_shape=ctx.input_shape)


class AvgPool2d(_Pool2d):
    """out = Σ window / divisor;  ∂L/∂x = each output's gradient / divisor, spread over its window

    ``window_cells((n, c, i, j))`` names the input cells output (n, c, i, j) averages and its
    taps in the padding (which count_include_pad counts in the divisor).
    """

    def forward(ctx, x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, out_hw):
        ctx.save_for_backward(x=x)  # what PyTorch saves
        divisor = avg_divisor(x.shape[2:], kernel_size, stride, padding, out_hw,
                              count_include_pad, divisor_override).astype(x.dtype)
        return window_mean(window_sum(x, kernel_size, stride, padding, out_hw), divisor)

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        a = ctx.attrs
        divisor = avg_divisor(x.shape[2:], a["kernel_size"], a["stride"], a["padding"],
                              a["out_hw"], a["count_include_pad"], a["divisor_override"])
        return SpreadOverWindows.call(grad / divisor.astype(grad.dtype), input_shape=x.shape, **a)


def window_mean(total: np.ndarray, divisor: np.ndarray) -> np.ndarray:
    """Window sums over their divisors: floats divide; integers stay integers, as torch's (its
    C++ quotient, truncated toward zero, exact)."""
    if total.dtype.kind == "f":
        return total / divisor
    return np.sign(total) * (np.abs(total) // divisor)


class SpreadOverWindows(Node):
    """Each value added onto every pixel of its window (the adjoint of a window sum);  its
    derivative sums the windows again: ∂L/∂values = Σ window of G"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, values, *, input_shape, kernel_size, stride, padding, out_hw, **_):
        return spread_over_windows(values, input_shape, kernel_size, stride, padding, out_hw)

    def backward(ctx, grad):
        a = ctx.attrs
        return WindowSum.call(grad, kernel_size=a["kernel_size"], stride=a["stride"],
                              padding=a["padding"], out_hw=a["out_hw"])


class WindowSum(Node):
    """Σ over each window;  ∂L/∂x = each output's gradient spread over its window"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, kernel_size, stride, padding, out_hw):
        ctx.input_shape = x.shape
        return window_sum(x, kernel_size, stride, padding, out_hw)

    def backward(ctx, grad):
        return SpreadOverWindows.call(grad, input_shape=ctx.input_shape, **ctx.attrs)


def as_batch(op: str, input: Tensor, low_rank_error=GeometryError) -> tuple:
    """(input as a batch, whether it was one): one unbatched (C, H, W) image becomes a batch of
    one, (1, C, H, W), by a reshape — so that gradients flow back to the 3-D input."""
    if check_batched(op, input._data, low_rank_error):
        return input, True
    return input.reshape(1, *input.shape), False


def unbatched(result):
    """An op's 4-D result (or (output, indices)) without its batch axis of one."""
    if isinstance(result, tuple):
        return tuple(unbatched(r) for r in result)
    return result.reshape(result.shape[1:])


def _pool_args(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked pooling arguments: (the Function's attributes, dilation, the 4-D input)."""
    shape = input._data.shape  # (the array's: a Size is a Python object to build and slice)
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\' (convert the input '
                                  f"first: input.float())")
    if 0 in shape[1:]:  # only a batch may be empty, as torch's
        raise GeometryError(f"{op}: input must have non-zero channels, height and width (only "
                            f"the batch may be empty), got (C, H, W) = {shape[1:]}")
    ceil_mode = check_flag(op, "ceil_mode", ceil_mode)
    kernel = pair(op, "kernel_size", kernel_size, single=True)
    # (torch reads an empty stride as the default, the kernel)
    omitted = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    stride = kernel if omitted else pair(op, "stride", stride, single=True)
    padding = pair(op, "padding", padding, minimum=0, single=True)
    dilation = pair(op, "dilation", dilation, single=True)
    for p, k in zip(padding, kernel):
        if p > k // 2:  # so that no window lies entirely in the padding
            raise GeometryError(f"{op}: padding {padding} must be at most half of "
                                f"kernel_size={kernel}")
    out_hw = tuple(pool_output_size(op, size, k, s, p, d, ceil_mode, axis)
                   for size, k, s, p, d, axis in zip(shape[2:], kernel, stride, padding,
                                                     dilation, ("height", "width")))
    for size, k, s, p, d, n, axis in zip(shape[2:], kernel, stride, padding, dilation,
                                         out_hw, ("height", "width")):
        check_windows_reach_input(op, size, k, s, p, d, n, axis)
    return dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                out_hw=out_hw), dilation, input


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False, *, ties="first"):
    """Max over k×k windows, storing the argmax for backward (torch's signature, plus ``ties``).

    With ``return_indices=True`` also returns the argmax as a flat index into each H×W plane,
    exactly PyTorch's indices. ``ties`` routes the gradient of a window with equal maxima to the
    first ("first", PyTorch), splits it equally ("split"), or gives each the whole ("all", the
    seed article's rule; not a subgradient). ``input`` is (N, C, H, W) or (C, H, W).
    """
    if ties not in TIE_RULES:
        raise ValueError(f"max_pool2d: ties must be one of {TIE_RULES}, got {ties!r}")
    return_indices = check_flag("max_pool2d", "return_indices", return_indices)
    input, batched = as_batch("max_pool2d", tensor_arg("max_pool2d", "input", input))
    attrs, dilation, input = _pool_args("max_pool2d", input, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    out, ctx = MaxPool2d.apply(input, dilation=dilation, ties=ties, return_ctx=True,
                               **attrs)
    if return_indices:
        out = out, Tensor._make(ctx.argmax.astype(np.int64), None)  # a copy: the op reuses its buffer
    return out if batched else unbatched(out)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over k×k windows, with torch's padding and divisor rules; ``input`` is (N, C, H, W)
    or (C, H, W)."""
    # (below 3-D torch's avg_pool2d raises IndexError, from looking up dim -3)
    input, batched = as_batch("avg_pool2d", tensor_arg("avg_pool2d", "input", input),
                              low_rank_error=DimensionError)
    attrs, _, input = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:  # an int, as torch (1.5 and nan are refused there too)
        divisor_override = check_dimension("avg_pool2d", "divisor_override", divisor_override,
                                           minimum=1)
    count_include_pad = check_flag("avg_pool2d", "count_include_pad", count_include_pad)
    out = AvgPool2d.apply(input, count_include_pad=count_include_pad,
                          divisor_override=divisor_override, **attrs)
    return out if batched else unbatched(out)


# ---- adaptive pooling ---------------------------------------------------------------------------
class AdaptiveMaxPool2d(Node):
    """out = max over each adaptive window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    argument_names = {"out_hw": "output_size"}  # as PyTorch names it (pictures ask)

    def forward(ctx, x, *, out_hw):
        out, argmax = adaptive_max_argmax(x, out_hw)
        ctx.save_for_backward(x=x, argmax=argmax)  # what PyTorch saves: the input, the indices
        return out

    def backward(ctx, grad):
        x, argmax = ctx.saved_tensors
        return RouteToArgmax.call(grad, argmax=argmax, input_shape=x.shape)

    @property
    def argmax(self):
        """Each window's chosen cell, flat in its H×W plane, as forward saved it (None once
        backward released it)."""
        return self.saved.get("argmax")

    def kink_candidates(self, x) -> tuple:
        """The pixels each adaptive window takes its max among, for gradcheck's kink report
        (kinks.py): (values (windows, K); cell(g, k) and group(g), their names)."""
        n, c, h, w = x.shape
        shape = (n, c) + tuple(self.attrs["out_hw"])
        pixel = adaptive_window_index((h, w), shape[2:])  # a short window repeats a cell: one name

        def cell(g, k):
            i, j = np.unravel_index(g, shape)[2:]
            return f"pixel {divmod(int(pixel[i, j, k]), w)}"

        def group(g):
            return f"{self.name} window {tuple(int(i) for i in np.unravel_index(g, shape))}"
        values = x.reshape(n, c, h * w)[:, :, pixel]
        return values.reshape(-1, values.shape[-1]), cell, group

    def kink_choice(self, group, tied, cell) -> str:
        """Where window ``group``'s gradient went: its first maximum (gradcheck asks)."""
        x, argmax = self.saved_tensors
        return (f"backward sent the whole gradient to the first, pixel "
                f"{divmod(int(argmax.reshape(-1)[group]), x.shape[3])} (PyTorch's rule)")


class AdaptiveAvgPool2d(Node):
    """out = mean over each adaptive window (the windows' own pixels: a NaN stays in its own);
    it is linear, out = R · x · Cᵀ per plane, so  ∂L/∂x = Rᵀ · G · C  (R, C: the matrices that
    average the row and column windows)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    argument_names = {"out_hw": "output_size"}  # as PyTorch names it (pictures ask)

    def forward(ctx, x, *, out_hw):
        ctx.save_for_backward(x=x)  # what PyTorch saves (backward reads only its shape)
        return adaptive_mean(adaptive_mean(x, 2, out_hw[0]), 3, out_hw[1])

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        (h, w), (out_h, out_w) = x.shape[2:], ctx.attrs["out_hw"]
        return PlaneProduct.call(grad, rows=adaptive_mean_matrix(h, out_h, grad.dtype).T,
                                 columns=adaptive_mean_matrix(w, out_w, grad.dtype).T)


class PlaneProduct(Node):
    """out = R · x · Cᵀ on every H×W plane, for constant matrices R and C (adaptive average
    pooling: the rows and columns that average each window);  ∂L/∂x = Rᵀ · G · C"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, rows, columns):
        return rows @ (x @ columns.T)

    def backward(ctx, grad):
        a = ctx.attrs
        return PlaneProduct.call(grad, rows=a["rows"].T, columns=a["columns"].T)


def _adaptive_args(op: str, input, output_size) -> tuple:
    """(4-D input, whether it was batched, (out_h, out_w)), checked as PyTorch does."""
    input = tensor_arg(op, "input", input)
    check_batched(op, input._data)
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {input.dtype}; pool a "
                                  f"floating tensor, e.g. input.float()")
    c, h, w = input.shape[-3:]
    if h == 0 or w == 0 or (c == 0 and op == "adaptive_max_pool2d"):
        raise GeometryError(f"{op}: expected input to have non-zero size for non-batch "
                            f"dimensions, but input has sizes {list(input.shape)}")
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        sizes = (output_size, output_size)
    else:
        try:
            sizes = None if isinstance(output_size, str) else tuple(output_size)
        except TypeError:  # not a sequence: 2.5, True, None
            sizes = None
        # each element's type is checked before the length, as torch's: ("a",) is a TypeError
        if sizes is None or not all(s is None or isinstance(s, (int, np.integer)) and
                                    not isinstance(s, (bool, np.bool_)) for s in sizes):
            raise TypeError(f"{op}: output_size must be an int or a pair of ints (or None), got "
                            f"{output_size!r}")
        if len(sizes) != 2:
            raise GeometryError(f"{op}: output_size must have 2 elements, got {output_size!r}")
    # None keeps the input's size along that axis
    sizes = tuple(size if s is None else s for s, size in zip(sizes, (h, w)))
    if min(sizes) < 0:
        raise GeometryError(f"{op}: elements of output_size must be greater than or equal to 0, "
                            f"got {output_size!r}")
    input, batched = as_batch(op, input)
    return input, batched, (int(sizes[0]), int(sizes[1]))


def _tiling_kernel(input_hw, out_hw):
    """The kernel (= stride) of the plain pool an adaptive one is, or None: where the output
    size divides the input's, window i is exactly [i·k, (i+1)·k)."""
    if 0 in out_hw or any(size % out for size, out in zip(input_hw, out_hw)):
        return None
    return tuple(size // out for size, out in zip(input_hw, out_hw))


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Mean over PyTorch's adaptive windows, so that the output is ``output_size`` (an int, or a
    pair whose None entries keep the input's size); ``input`` is (N, C, H, W) or (C, H, W)."""
    input, batched, out_hw = _adaptive_args("adaptive_avg_pool2d", input, output_size)
    h, w = input.shape[2:]
    kernel = _tiling_kernel((h, w), out_hw)
    if kernel is not None and input.shape[1]:  # (avg_pool2d refuses zero channels, this not)
        out = avg_pool2d(input, kernel, kernel)
    else:
        out = AdaptiveAvgPool2d.apply(input, out_hw=out_hw)
    return out if batched else unbatched(out)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive windows (``output_size`` as in adaptive_avg_pool2d); with
    ``return_indices=True`` also each argmax as a flat index into its H×W plane (int64), as
    PyTorch's. ``input`` is (N, C, H, W) or (C, H, W)."""
    input, batched, out_hw = _adaptive_args("adaptive_max_pool2d", input, output_size)
    kernel = _tiling_kernel(input.shape[2:], out_hw)
    if kernel is not None:
        out = max_pool2d(input, kernel, kernel, return_indices=return_indices)
    else:
        out, ctx = AdaptiveMaxPool2d.apply(input, out_hw=out_hw, return_ctx=True)
        if return_indices:
            out = out, Tensor._make(ctx.argmax.copy(), None)  # a copy: backward routes by the node's own
    return out if batched else unbatched(out)


# ---- max unpooling ------------------------------------------------------------------------------
class MaxUnpool2d(Node):
    """out[n, c, indices] = x, zero elsewhere (a scatter);  ∂L/∂x = G read at the indices
    (a gather — PyTorch's rule, also where an index repeats)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, indices, *, out_hw):
        ctx.save_for_backward(indices=indices)  # an input: its version is checked before
        # backward reads it
        n, c = x.shape[:2]
        out = np.zeros((n, c) + out_hw, x.dtype)
        planes = (n, c, x.shape[2] * x.shape[3])  # (sizes spelt out: a batch may be empty)
        np.put_along_axis(out.reshape(n, c, out_hw[0] * out_hw[1]), indices.reshape(planes),
                          x.reshape(planes), axis=2)
        return out

    def backward(ctx, grad):
        indices, = ctx.saved_tensors
        # (np.asarray: under create_graph the engine hands the saved indices over as a Tensor)
        return GatherArgmax.call(grad, argmax=np.asarray(indices)), None


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max pooling where it can be: each value of ``input`` put at the pixel
    ``indices`` names (max_pool2d's ``return_indices``), zeros elsewhere. ``input`` is
    (N, C, H, W) or (C, H, W), ``indices`` int64 of the same shape."""
    op = "max_unpool2d"
    input, indices = tensor_arg(op, "input", input), tensor_arg(op, "indices", indices)
    batched = check_batched(op, input._data)
    check_floating(op, "input", input)
    if indices.dtype != np.int64:
        raise GeometryError(f"max_unpool2d: elements in indices should be type int64 but got: "
                            f"{indices.dtype}")
    if indices.shape != input.shape:
        raise GeometryError(f"max_unpool2d: expected shape of indices to be same as that of the "
                            f"input tensor ({list(input.shape)}) but got indices tensor with "
                            f"shape: {list(indices.shape)}")
    if 0 in input.shape[-2:] or (batched and input.shape[1] == 0):  # (torch's rule, C=0 of
        # one image passes)
        raise GeometryError(f"max_unpool2d: expected input to have non-zero size for non-batch "
                            f"dimensions, but got input of size {list(input.shape)}")
    kernel = pair(op, "kernel_size", kernel_size)
    stride = kernel if stride is None else pair(op, "stride", stride)
    padding = pair(op, "padding", padding, minimum=0)
    out_hw = unpool_size("max_unpool2d", input.shape[-2:], kernel, stride, padding, output_size)
    bad = (indices._data < 0) | (indices._data >= out_hw[0] * out_hw[1])
    if bad.any():
        raise GeometryError(f"max_unpool2d: Found an invalid max index: "
                            f"{indices._data.reshape(-1)[bad.reshape(-1).argmax()]} (output "
                            f"volumes are of size {out_hw[0]}x{out_hw[1]}) in indices, for "
                            f"output_size={output_size!r}, kernel_size={kernel}, stride="
                            f"{stride}, padding={padding}")
    if not batched:
        input, indices = input.reshape(1, *input.shape), indices.reshape(1, *indices.shape)
    out = MaxUnpool2d.apply(input, indices, out_hw=out_hw)
    return out if batched else unbatched(out)


# ---- 1-D pooling: the 2-D pools over a height of one ---------------------------------------------
# A sequence (N, C, L) is an image (N, C, 1, L): MaxPool1d and AvgPool1d are one node each, with
# the 1-D arguments (what a picture shows), whose forward and backward are MaxPool2d's and
# AvgPool2d's on the arrays with that unit height added and taken off again (conv.py's
# ``backward_in_plane``), so the derivatives, to any order, are theirs. An argmax into a 1×L
# plane is the position along L: max_pool1d's indices, as torch's.
def _pool1d_plane(line: dict, **more) -> dict:
    """The 2-D pool's arguments for 1-D ones: a unit height, read whole by every window."""
    plane = {name: (0 if name == "padding" else 1, *line[name])
             for name in ("kernel_size", "stride", "padding", "dilation") if name in line}
    return dict(line, **plane, **more)


class PaidAlongLine(Paid):
    """``Paid`` of a 1-D max pool: the cells of its 1×L planes, masked over (N, C, L)."""

    def mask(self, input_shape) -> np.ndarray:
        n, c, length = input_shape
        return Paid.mask(self, (n, c, 1, length)).reshape(input_shape)


class MaxPool1d(MaxPool2d):
    """out = max over each window along L;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere (MaxPool2d
    over a height of one; PyTorch's ties: the first maximum, and a NaN, wins)

    Arguments: ``kernel_size``, ``stride``, ``padding``, ``dilation`` (1-tuples), ``ceil_mode``
    and ``out_hw`` (1, output length), the plane it pools."""

    # fan_in draws cells on H×W planes: a 1-D op names none (its pictures are the graph's)
    windows = window_cells = cells_reading = channel_groups = padding_read = None

    @staticmethod
    def in_plane(line: dict) -> dict:
        return _pool1d_plane(line, ties="first")

    def forward(ctx, x, **line):
        out = MaxPool2d.forward(ctx, with_height(x), **ctx.in_plane(line))
        # what PyTorch saves: the input itself and the indices along L
        ctx.save_for_backward(x=x, argmax=without_height(ctx.argmax))
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, MaxPool2d, grad)

    def paid_cells(self, x, argmax=None, ties=None) -> PaidAlongLine:
        """MaxPool2d's rule (``ties``: "first", PyTorch's, unless asked) on the 1×L planes; its
        mask is (N, C, L) (the graph's pictures ask)."""
        plane = MaxPool2d.__new__(MaxPool2d)
        plane.attrs = self.in_plane(self.attrs)
        argmax = self.argmax if argmax is None else argmax
        return PaidAlongLine(*MaxPool2d.paid_cells(plane, with_height(x), with_height(argmax),
                                                    ties))

    def kink_candidates(self, x) -> tuple:
        """The cells each window takes its max among, for gradcheck's kink report (kinks.py):
        (values (windows, K), padding -inf: it never wins; cell(g, k) and group(g), their names)."""
        a = self.in_plane(self.attrs)
        n, c, length = x.shape
        pixel, inside = window_table((1, length), a["kernel_size"], a["stride"], a["padding"],
                                     a["dilation"], a["out_hw"])
        pixel, inside = pixel[:, 0], inside[:, 0]  # (K, out length): positions along L
        values = np.where(inside, x[:, :, pixel], -np.inf)  # (N, C, K, out length)
        shape = (n, c, pixel.shape[1])

        def cell(g, k):
            return f"window cell {int(k)} (position {int(pixel[k, np.unravel_index(g, shape)[2]])})"

        def group(g):
            return f"{self.name} window {tuple(int(i) for i in np.unravel_index(g, shape))}"
        return np.moveaxis(values, 2, -1).reshape(-1, len(pixel)), cell, group

    def kink_choice(self, group, tied, cell) -> str:
        """Where window ``group``'s gradient went: its first maximum (gradcheck asks)."""
        x, argmax = self.saved_tensors
        return (f"backward sent the whole gradient to the first, position "
                f"{int(argmax.reshape(-1)[group])} (PyTorch's rule)")


class AvgPool1d(AvgPool2d):
    """out = Σ window / divisor along L;  ∂L/∂x = each output's gradient / divisor, spread over
    its window (AvgPool2d over a height of one)

    Arguments: ``kernel_size``, ``stride``, ``padding`` (1-tuples), ``ceil_mode``,
    ``count_include_pad`` and ``out_hw`` (1, output length), the plane it pools."""

    windows = window_cells = cells_reading = channel_groups = padding_read = None  # (MaxPool1d's)

    @staticmethod
    def in_plane(line: dict) -> dict:
        return _pool1d_plane(line, divisor_override=None)

    def forward(ctx, x, **line):
        out = AvgPool2d.forward(ctx, with_height(x), **ctx.in_plane(line))
        ctx.save_for_backward(x=x)  # what PyTorch saves: the input itself
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, AvgPool2d, grad)


def _pool1d_args(op, input, kernel_size, stride, padding, dilation, ceil_mode,
                 rank_error: str) -> tuple:
    """(the input as a batch (N, C, L), whether it was batched, the node's arguments) — each
    checked as torch's, along L."""
    input = tensor_arg(op, "input", input)
    if input._data.ndim not in (2, 3):
        raise GeometryError(f"{op}: {rank_error}, but got input of size {list(input.shape)}")
    (kernel,) = ntuple(op, "kernel_size", kernel_size, 1)
    omitted = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    (stride,) = (kernel,) if omitted else ntuple(op, "stride", stride, 1)
    (padding,) = ntuple(op, "padding", padding, 1, minimum=0)
    (dilation,) = ntuple(op, "dilation", dilation, 1)
    ceil_mode = check_flag(op, "ceil_mode", ceil_mode)
    if padding > kernel // 2:  # so that no window lies entirely in the padding
        raise GeometryError(f"{op}: padding should be at most half of kernel size, but got "
                            f"padding={padding} and kernel_size={kernel}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\' (convert the input '
                                  f"first: input.float())")
    batched = input._data.ndim == 3
    input = one_sample_as_batch(input, batched)
    if 0 in input._data.shape[1:]:  # only a batch may be empty, as torch's
        raise GeometryError(f"{op}: input must have non-zero channels and length (only the "
                            f"batch may be empty), got (C, L) = {input._data.shape[1:]}")
    length = input._data.shape[2]
    out = pool_output_size(op, length, kernel, stride, padding, dilation, ceil_mode, "length")
    check_windows_reach_input(op, length, kernel, stride, padding, dilation, out, "length")
    return input, batched, dict(kernel_size=(kernel,), stride=(stride,), padding=(padding,),
                                dilation=(dilation,), ceil_mode=ceil_mode, out_hw=(1, out))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of ``kernel_size`` along the last axis of ``input`` (N, C, L) or (C, L),
    like torch: max_pool2d over a height of one, one MaxPool1d node. With
    ``return_indices=True`` also each window's argmax, its position along L (int64)."""
    op = "max_pool1d"
    return_indices = check_flag(op, "return_indices", return_indices)
    input, batched, line = _pool1d_args(op, input, kernel_size, stride, padding, dilation,
                                        ceil_mode, "expected a 2-D (C, L) or 3-D (N, C, L) input")
    check_floating(op, "input", input)  # (torch's max_pool1d has no integer kernel)
    out, ctx = MaxPool1d.apply(input, return_ctx=True, **line)
    if return_indices:
        out = out, Tensor._make(ctx.argmax.astype(np.int64), None)  # a copy: backward's is its own
    return out if batched else unbatched(out)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Mean over windows of ``kernel_size`` along the last axis of ``input`` (N, C, L) or
    (C, L), like torch: avg_pool2d over a height of one, one AvgPool1d node."""
    op = "avg_pool1d"
    input, batched, line = _pool1d_args(op, input, kernel_size, stride, padding, 1, ceil_mode,
                                        "expected 2 to 3 dimensions, (C, L) or (N, C, L)")
    del line["dilation"]  # (torch's avg_pool1d has none)
    count_include_pad = check_flag(op, "count_include_pad", count_include_pad)
    out = AvgPool1d.apply(input, count_include_pad=count_include_pad, **line)
    return out if batched else unbatched(out)


# ---- 1-D adaptive pooling and unpooling: the 2-D nodes over a height of one ----------------------
# As MaxPool1d and AvgPool1d above: each is one node, named for itself, whose forward and backward
# are the 2-D node's on the arrays with a unit height added (conv.py's ``backward_in_plane``), so
# its derivatives, to any order, are the 2-D one's. Its ``out_hw`` is (1, output length).
class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """out = max over each adaptive window along L;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere
    (AdaptiveMaxPool2d over a height of one; the argmax is the position along L)"""

    @staticmethod
    def in_plane(line: dict) -> dict:
        return line  # (out_hw already has the unit height)

    def forward(ctx, x, *, out_hw):
        out = AdaptiveMaxPool2d.forward(ctx, with_height(x), out_hw=out_hw)
        ctx.save_for_backward(x=x, argmax=without_height(ctx.argmax))  # what PyTorch saves
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, AdaptiveMaxPool2d, grad)

    def kink_candidates(self, x) -> tuple:
        """The positions each adaptive window takes its max among, for gradcheck's kink report
        (kinks.py): (values (windows, K); cell(g, k) and group(g), their names)."""
        n, c, length = x.shape
        shape = (n, c, self.attrs["out_hw"][1])
        position = adaptive_window_index((1, length), (1, shape[2]))[0]  # (out length, K)

        def cell(g, k):
            return f"position {int(position[np.unravel_index(g, shape)[2], k])}"

        def group(g):
            return f"{self.name} window {tuple(int(i) for i in np.unravel_index(g, shape))}"
        return x[:, :, position].reshape(-1, position.shape[1]), cell, group

    def kink_choice(self, group, tied, cell) -> str:
        """Where window ``group``'s gradient went: its first maximum (gradcheck asks)."""
        x, argmax = self.saved_tensors
        return (f"backward sent the whole gradient to the first, position "
                f"{int(argmax.reshape(-1)[group])} (PyTorch's rule)")


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """out = mean over each adaptive window along L;  ∂L/∂x = Mᵀ · G (M: the matrix that averages
    the windows; AdaptiveAvgPool2d over a height of one)"""

    @staticmethod
    def in_plane(line: dict) -> dict:
        return line

    def forward(ctx, x, *, out_hw):
        out = AdaptiveAvgPool2d.forward(ctx, with_height(x), out_hw=out_hw)
        ctx.save_for_backward(x=x)  # what PyTorch saves (backward reads only its shape)
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, AdaptiveAvgPool2d, grad)


def _adaptive1d_args(op: str, input, output_size) -> tuple:
    """(the input as a batch (N, C, L), whether it was batched, out_hw (1, output length)),
    checked as torch's."""
    input = tensor_arg(op, "input", input)
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        sizes = (output_size,)
    else:
        try:
            sizes = None if isinstance(output_size, str) else tuple(output_size)
        except TypeError:  # not a sequence: 2.5, None
            sizes = None
        if sizes is None or not all(isinstance(s, (int, np.integer)) and
                                    not isinstance(s, (bool, np.bool_)) for s in sizes):
            raise TypeError(f"{op}(): argument 'output_size' must be an int or a tuple of one "
                            f"int, got {output_size!r}")
        if len(sizes) != 1:
            raise GeometryError(f"{op}() argument 'output_size' should contain one int (got "
                                f"{len(sizes)})")
    if input._data.ndim not in (2, 3):
        raise GeometryError(f"{op}: expected 2 to 3 dimensions, (C, L) or (N, C, L), but got "
                            f"input of size {list(input.shape)}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {input.dtype}; pool a "
                                  f"floating tensor, e.g. input.float()")
    c, length = input.shape[-2:]
    if length == 0 or (c == 0 and op == "adaptive_max_pool1d"):  # (torch's avg takes C = 0)
        raise GeometryError(f"{op}: expected input to have non-zero size for non-batch "
                            f"dimensions, but input has sizes {list(input.shape)}")
    if sizes[0] < 0:
        raise GeometryError(f"{op}: output_size must be at least 0, got {output_size!r}")
    batched = input._data.ndim == 3
    return one_sample_as_batch(input, batched), batched, (1, int(sizes[0]))


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Mean over PyTorch's adaptive windows along the last axis of ``input`` (N, C, L) or (C, L),
    so that its length is ``output_size`` (an int or a 1-tuple): one AdaptiveAvgPool1d node."""
    input, batched, out_hw = _adaptive1d_args("adaptive_avg_pool1d", input, output_size)
    out = AdaptiveAvgPool1d.apply(input, out_hw=out_hw)
    return out if batched else unbatched(out)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive windows along the last axis of ``input`` (N, C, L) or (C, L);
    with ``return_indices=True`` also each argmax, its position along L (int64)."""
    op = "adaptive_max_pool1d"
    return_indices = check_flag(op, "return_indices", return_indices)
    input, batched, out_hw = _adaptive1d_args(op, input, output_size)
    out, ctx = AdaptiveMaxPool1d.apply(input, out_hw=out_hw, return_ctx=True)
    if return_indices:
        out = out, Tensor._make(ctx.argmax.copy(), None)  # a copy: backward routes by its own
    return out if batched else unbatched(out)


class MaxUnpool1d(MaxUnpool2d):
    """out[n, c, indices] = x, zero elsewhere, along L;  ∂L/∂x = G read at the indices
    (MaxUnpool2d over a height of one)"""

    @staticmethod
    def in_plane(line: dict) -> dict:
        return line  # (out_hw already has the unit height)

    def forward(ctx, x, indices, *, out_hw):
        out = MaxUnpool2d.forward(ctx, with_height(x), with_height(indices), out_hw=out_hw)
        ctx.save_for_backward(indices=indices)
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, MaxUnpool2d, grad)


def unpool_size(op: str, input_size, kernel, stride, padding, output_size) -> tuple:
    """PyTorch's output size of an n-D max unpool: (size - 1)·s - 2p + k along each axis, or
    ``output_size`` (n sizes, or n + 2 whose last n count) if within a stride of it."""
    dims = len(input_size)
    default = tuple((size - 1) * s - 2 * p + k
                    for size, k, s, p in zip(input_size, kernel, stride, padding))
    if output_size is None:
        sizes = default
    else:
        try:
            sizes = tuple(output_size)
        except TypeError:  # not a sequence: 6, 2.5, True
            sizes = None
        # the length first, then the elements, as torch's (so "a" is a ValueError, "ab" not)
        if sizes is not None and len(sizes) not in (dims, dims + 2):
            raise ValueError(f"{op}: output_size should be a sequence containing {dims} or "
                             f"{dims + 2} elements, but it has a length of '{len(sizes)}'")
        if sizes is None or not all(isinstance(s, (int, np.integer)) and
                                    not isinstance(s, (bool, np.bool_)) for s in sizes):
            raise TypeError(f"{op}: output_size must be None or a sequence of {dims} or "
                            f"{dims + 2} ints, got {output_size!r}")
        sizes = sizes[-dims:]
        for axis, (size, wanted, s) in enumerate(zip(default, sizes, stride)):
            if not size - s < wanted < size + s:
                raise ValueError(f'{op}: invalid output_size "{output_size}" (dim {axis} must '
                                 f'be between {size - s} and {size + s})')
    if min(sizes) < 1:
        raise GeometryError(f"{op}: the output would be empty, of size {sizes}, for an input of "
                            f"size {tuple(input_size)}, kernel_size={kernel}, stride={stride}, "
                            f"padding={padding}")
    return tuple(int(size) for size in sizes)


def check_unpool_args(op: str, input, indices, dims: int) -> tuple:
    """(input, indices, whether batched): torch's checks of a max unpool's operands, for
    ``dims`` spatial axes."""
    input, indices = tensor_arg(op, "input", input), tensor_arg(op, "indices", indices)
    if input._data.ndim not in (dims + 1, dims + 2):
        raise GeometryError(f"{op}: input should be a {dims + 1}-D or {dims + 2}-D tensor, but "
                            f"got a tensor with {input._data.ndim} dimensions")
    check_floating(op, "input", input)
    if indices.dtype != np.int64:
        raise GeometryError(f"{op}: elements in indices should be type int64 but got: "
                            f"{indices.dtype}")
    if indices.shape != input.shape:
        raise GeometryError(f"{op}: expected shape of indices to be same as that of the input "
                            f"tensor ({list(input.shape)}) but got indices tensor with shape: "
                            f"{list(indices.shape)}")
    if 0 in input.shape[-dims - 1:]:  # (only a batch may be empty)
        raise GeometryError(f"{op}: expected input to have non-zero size for non-batch "
                            f"dimensions, but got input of size {list(input.shape)}")
    return input, indices, input._data.ndim == dims + 2


def check_unpool_indices(op: str, indices, out_size, output_size) -> None:
    """torch's RuntimeError for an index outside the output volume."""
    bad = (indices._data < 0) | (indices._data >= int(np.prod(out_size)))
    if bad.any():
        raise GeometryError(f"{op}: Found an invalid max index: "
                            f"{indices._data.reshape(-1)[bad.reshape(-1).argmax()]} (output "
                            f"volumes are of size {'x'.join(map(str, out_size))}) in indices, "
                            f"for output_size={output_size!r}")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of ``input`` (N, C, L) or (C, L) put at the position along L that ``indices``
    names (max_pool1d's ``return_indices``), zeros elsewhere: one MaxUnpool1d node."""
    op = "max_unpool1d"
    input, indices, batched = check_unpool_args(op, input, indices, 1)
    kernel = ntuple(op, "kernel_size", kernel_size, 1)
    stride = kernel if stride is None else ntuple(op, "stride", stride, 1)
    padding = ntuple(op, "padding", padding, 1, minimum=0)
    out_size = unpool_size(op, input.shape[-1:], kernel, stride, padding, output_size)
    check_unpool_indices(op, indices, out_size, output_size)
    input, indices = one_sample_as_batch(input, batched), one_sample_as_batch(indices, batched)
    out = MaxUnpool1d.apply(input, indices, out_hw=(1,) + out_size)
    return out if batched else unbatched(out)


# ---- power-average (Lp) pooling -----------------------------------------------------------------
def _lp_pool(op: str, pool, input, norm_type, kernel_size, stride, ceil_mode, area) -> Tensor:
    """PyTorch's lp_pool: (area · mean of xᵖ over each window)^(1/p), composed as torch composes
    it — ``area``: avg_pool of x.pow(p), then sign(s)·relu(|s|) (a negative or zero sum's
    gradient is zero, as torch's), times the kernel's area — to the power 1/p, so its values,
    gradients and NaNs are torch's, to any order; p = ±inf is ``pool`` (max_pool) of ±|x|."""
    input = tensor_arg(op, "input", input)
    if not isinstance(norm_type, (int, float, np.integer, np.floating)):  # (True is 1, as torch's)
        raise TypeError(f"{op}: norm_type must be a number, got {norm_type!r}")
    if norm_type == float("inf"):
        return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return area(input.pow(norm_type)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """(Σ xᵖ over each window along L)^(1/p), as torch's: ``input`` (N, C, L) or (C, L),
    ``kernel_size`` an int (torch multiplies by it)."""
    op = "lp_pool1d"
    if isinstance(kernel_size, bool) or not isinstance(kernel_size, (int, np.integer)):
        raise TypeError(f"{op}: kernel_size must be an int, got {kernel_size!r}")

    def area(powers):
        out = avg_pool1d(powers, kernel_size, stride, 0, ceil_mode)
        return (out.sign() * out.abs().relu()) * kernel_size
    return _lp_pool(op, max_pool1d, input, norm_type, kernel_size, stride, ceil_mode, area)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """(Σ xᵖ over each kh×kw window)^(1/p), as torch's: ``input`` (N, C, H, W) or (C, H, W)."""
    op = "lp_pool2d"
    kh, kw = pair(op, "kernel_size", kernel_size, single=True)

    def area(powers):
        out = avg_pool2d(powers, (kh, kw), stride, 0, ceil_mode)
        return (out.sign() * out.abs().relu()) * (kh * kw)
    return _lp_pool(op, max_pool2d, input, norm_type, kernel_size, stride, ceil_mode, area)
