"""Max and average pooling over kd×kh×kw windows of (N, C, D, H, W) volumes, as pool.py's 2-D
ones, one axis more.

Max pooling stores each window's argmax, a flat index into its D×H×W volume (PyTorch's
``return_indices``), and backward routes each output's gradient there — pool.py's
RouteToArgmax on the volumes laid flat, so its double backward (a gather by the same indices)
is the 2-D one. The first maximum wins a tie and a NaN wins, as in PyTorch (``first_max``).

Average pooling is a window sum over the zero-padded volume (conv3d.py's im2col_nd, summed
over the taps) divided by PyTorch's divisor; the sum's adjoint spreads each value back over its
window (col2im_nd), and the derivative of that spreading is the window sum again.

Adaptive pooling fixes the output size instead (windows from ``windows.adaptive_bounds`` along
each axis): adaptive max gathers every window's voxels through one index table and routes its
gradient as max pooling does; adaptive average is linear, one averaging matrix per axis, with
the transposed matrices for its derivative. Max unpooling scatters values to the voxels the
indices name; its derivative is the gather by the same indices (pool.py's GatherArgmax).
"""
import math

import numpy as np

from ..engine import Node, Tensor
from ..windows import (GeometryError, adaptive_bounds, adaptive_mean, adaptive_mean_matrix,
                       check_windows_reach_input, pool_output_size)
from ..args import check_dimension, check_flag, tensor_arg
from .conv import ntuple
from .conv3d import col2im_nd, im2col_nd
from .pool import (GatherArgmax, RouteToArgmax, check_unpool_args, check_unpool_indices,
                   first_max, plane_index_dtype, unpool_size, window_mean)

AXES = ("depth", "height", "width")


def window_table_3d(size, kernel_size, stride, padding, dilation, out_size) -> tuple:
    """(voxel, inside), each (K, *out) for K = kd·kh·kw: where tap t of window o lies, as a flat
    index into the D×H×W volume (o·s - p + t·d along each axis), and whether that is inside the
    input (not padding, nor ceil_mode's overhang; there ``voxel`` is 0, which ``inside``
    masks)."""
    voxel, inside = 0, True
    for axis, (n, k, s, p, d, o) in enumerate(zip(size, kernel_size, stride, padding, dilation,
                                                   out_size)):
        shape = [1] * 6  # (tap along each axis, window along each axis)
        shape[axis], shape[3 + axis] = k, o
        at = ((np.arange(k) * d)[:, None] + np.arange(o) * s - p).reshape(shape)
        inside = inside & (at >= 0) & (at < n)
        voxel = voxel * n + at
    taps = (math.prod(kernel_size),) + tuple(out_size)
    return np.where(inside, voxel, 0).reshape(taps), inside.reshape(taps)


def _ceil_padding(size, kernel_size, stride, padding, out_size) -> tuple:
    """((low, high) per axis): the padding, made wide enough at the high end for ceil_mode's
    last window, which may hang past it (it reads zeros there)."""
    return tuple((p, max(p, (o - 1) * s + k - n - p))
                 for n, k, s, p, o in zip(size, kernel_size, stride, padding, out_size))


def window_sum_3d(x, kernel_size, stride, padding, out_size) -> np.ndarray:
    """Σ over each window's voxels, the padding (and ceil_mode's overhang) read as zeros."""
    pads = _ceil_padding(x.shape[2:], kernel_size, stride, padding, out_size)
    cols = im2col_nd(x, kernel_size, stride, pads, (1, 1, 1), out_size)  # (N, C, *k, *out)
    return cols.sum(axis=(2, 3, 4), dtype=x.dtype)


class MaxPool3d(Node):
    """out = max over each window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, kernel_size, stride, padding, dilation, ceil_mode, out_size):
        n, c = x.shape[:2]
        voxel, inside = window_table_3d(x.shape[2:], kernel_size, stride, padding, dilation,
                                        out_size)
        # (N, C, K, *out) windows (the volume size spelt out: a batch may be empty)
        out, k = first_max(x.reshape(n, c, math.prod(x.shape[2:]))[:, :, voxel], inside)
        argmax = np.take_along_axis(voxel[None, None], k[:, :, None], axis=2)[:, :, 0]
        argmax = argmax.astype(plane_index_dtype(math.prod(x.shape[2:]), 1))
        ctx.save_for_backward(x=x, argmax=argmax)  # what PyTorch saves: the input, the indices
        return out

    def backward(ctx, grad):
        x, argmax = ctx.saved_tensors
        # the volumes laid flat, (N, C, 1, D·H·W), so the 2-D routing (and its own derivative,
        # the gather) applies as it is
        n, c = x.shape[:2]
        windows = (n, c, 1, math.prod(argmax.shape[2:]))
        routed = RouteToArgmax.call(grad.reshape(windows), argmax=argmax.reshape(windows),
                                    input_shape=(n, c, 1, math.prod(x.shape[2:])))
        return routed.reshape(x.shape)

    @property
    def argmax(self):
        """Each window's chosen voxel, flat in its D×H×W volume, as forward saved it."""
        return self.saved.get("argmax")

    def kink_candidates(self, x) -> tuple:
        """The voxels each window takes its max among, for gradcheck's kink report (kinks.py):
        (values (windows, K), padding -inf: it never wins; cell(g, k) and group(g), their
        names)."""
        a, (n, c), size = self.attrs, x.shape[:2], x.shape[2:]
        voxel, inside = window_table_3d(size, a["kernel_size"], a["stride"], a["padding"],
                                        a["dilation"], a["out_size"])
        values = np.where(inside, x.reshape(n, c, math.prod(size))[:, :, voxel], -np.inf)
        shape = (n, c) + tuple(a["out_size"])

        return voxel_candidates(self.name, values, voxel, size, shape)

    def kink_choice(self, group, tied, cell) -> str:
        """Where window ``group``'s gradient went: its first maximum (gradcheck asks)."""
        x, argmax = self.saved_tensors
        chosen = np.unravel_index(int(argmax.reshape(-1)[group]), x.shape[2:])
        return (f"backward sent the whole gradient to the first, voxel "
                f"{tuple(int(i) for i in chosen)} (PyTorch's rule)")


class AvgPool3d(Node):
    """out = Σ window / divisor;  ∂L/∂x = each output's gradient / divisor, spread over its
    window"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, out_size):
        ctx.save_for_backward(x=x)  # what PyTorch saves (backward reads only its shape)
        divisor = avg_divisor_3d(x.shape[2:], kernel_size, stride, padding, out_size,
                                 count_include_pad, divisor_override).astype(x.dtype)
        return window_mean(window_sum_3d(x, kernel_size, stride, padding, out_size), divisor)

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        a = ctx.attrs
        divisor = avg_divisor_3d(x.shape[2:], a["kernel_size"], a["stride"], a["padding"],
                                 a["out_size"], a["count_include_pad"], a["divisor_override"])
        return SpreadOverWindows3d.call(grad / divisor.astype(grad.dtype), input_size=x.shape[2:],
                                        kernel_size=a["kernel_size"], stride=a["stride"],
                                        padding=a["padding"], out_size=a["out_size"])


class WindowSum3d(Node):
    """Σ over each window (zero padding);  ∂L/∂x = each output's gradient spread over its window"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, kernel_size, stride, padding, out_size):
        ctx.input_size = x.shape[2:]
        return window_sum_3d(x, kernel_size, stride, padding, out_size)

    def backward(ctx, grad):
        return SpreadOverWindows3d.call(grad, input_size=ctx.input_size, **ctx.attrs)


class SpreadOverWindows3d(Node):
    """Each value added onto every voxel of its window (the adjoint of a window sum);  its
    derivative sums the windows again: ∂L/∂values = Σ window of G"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, values, *, input_size, kernel_size, stride, padding, out_size):
        n, c = values.shape[:2]
        cols = np.broadcast_to(values[:, :, None, None, None], (n, c) + tuple(kernel_size)
                               + tuple(out_size))  # (every tap of a window: the same value)
        pads = _ceil_padding(input_size, kernel_size, stride, padding, out_size)
        return col2im_nd(cols, input_size, stride, pads, (1, 1, 1))

    def backward(ctx, grad):
        a = ctx.attrs
        return WindowSum3d.call(grad, kernel_size=a["kernel_size"], stride=a["stride"],
                                padding=a["padding"], out_size=a["out_size"])


def avg_divisor_3d(size, kernel_size, stride, padding, out_size, count_include_pad,
                   divisor_override) -> np.ndarray:
    """PyTorch's divisor per output window (float64, of shape ``out_size``): divisor_override
    if given, else the count of the window's voxels inside the padded input
    (``count_include_pad``) or inside the input itself; ceil_mode's overhang never counts."""
    if divisor_override:
        return np.full(out_size, divisor_override, dtype=np.float64)
    count = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel_size, stride, padding, out_size):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        count = np.multiply.outer(count, (end - start).astype(np.float64))
    return count


def _pool3d_args(op, input, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    """(the input as a batch, whether it was one, the op's geometry), checked as torch's."""
    input = tensor_arg(op, "input", input)
    shape = input._data.shape
    if input._data.ndim not in (4, 5) or 0 in shape[-4:]:
        raise GeometryError(f"{op}: non-empty 4D or 5D (batch mode) tensor expected for input, "
                            f"(C, D, H, W) or (N, C, D, H, W), got input of size {list(shape)}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\' (convert the input '
                                  f"first: input.float())")
    ceil_mode = check_flag(op, "ceil_mode", ceil_mode)
    kernel_size = ntuple(op, "kernel_size", kernel_size, 3)
    omitted = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    stride = kernel_size if omitted else ntuple(op, "stride", stride, 3)
    padding = ntuple(op, "padding", padding, 3, minimum=0)
    dilation = ntuple(op, "dilation", dilation, 3)
    if any(p > k // 2 for p, k in zip(padding, kernel_size)):
        raise GeometryError(f"{op}: pad should be at most half of effective kernel size, but "
                            f"got padding={padding} and kernel_size={kernel_size}")
    out_size = tuple(pool_output_size(op, *axis, ceil_mode, name) for *axis, name in zip(
        shape[-3:], kernel_size, stride, padding, dilation, AXES))
    for axis in zip(shape[-3:], kernel_size, stride, padding, dilation, out_size, AXES):
        check_windows_reach_input(op, *axis)
    batched = input._data.ndim == 5
    if not batched:  # one volume: a batch of one, by a reshape the gradient flows back through
        input = input.reshape(1, *shape)
    return input, batched, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                ceil_mode=ceil_mode, out_size=out_size), dilation


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kd×kh×kw windows of ``input`` (N, C, D, H, W) or (C, D, H, W), like torch; with
    ``return_indices=True`` also each argmax as a flat index into its D×H×W volume (int64)."""
    op = "max_pool3d"
    return_indices = check_flag(op, "return_indices", return_indices)
    input, batched, attrs, dilation = _pool3d_args(op, input, kernel_size, stride, padding,
                                                   dilation, ceil_mode)
    out, ctx = MaxPool3d.apply(input, dilation=dilation, return_ctx=True, **attrs)
    if return_indices:
        indices = Tensor._make(ctx.argmax.astype(np.int64), None)  # a copy: backward's is its own
        return (out, indices) if batched else (_one(out), _one(indices))
    return out if batched else _one(out)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over kd×kh×kw windows of ``input`` (N, C, D, H, W) or (C, D, H, W), with torch's
    padding and divisor rules."""
    op = "avg_pool3d"
    input, batched, attrs, _ = _pool3d_args(op, input, kernel_size, stride, padding, 1,
                                            ceil_mode)
    size, kernel_size = input._data.shape[2:], attrs["kernel_size"]
    if any(n < k for n, k in zip(size, kernel_size)):  # (torch's rule, padding or not)
        raise GeometryError(f"{op}: input image (D, H, W) = {size} smaller than kernel size "
                            f"{kernel_size}")
    if divisor_override is not None:  # an int, as torch (0 is refused there too)
        divisor_override = check_dimension(op, "divisor_override", divisor_override, minimum=1)
    count_include_pad = check_flag(op, "count_include_pad", count_include_pad)
    out = AvgPool3d.apply(input, count_include_pad=count_include_pad,
                          divisor_override=divisor_override, **attrs)
    return out if batched else _one(out)


def _one(out: Tensor) -> Tensor:
    """A batch of one without its batch axis (a reshape the gradient flows back through)."""
    return out.reshape(out.shape[1:])


# ---- adaptive pooling: windows [⌊i·D/out⌋, ⌈(i+1)·D/out⌉) along each axis ------------------------
def adaptive_volume_index(size, out_size) -> np.ndarray:
    """(K, *out_size): the flat index, into a D×H×W volume, of every voxel of every adaptive
    window (windows.adaptive_bounds along each axis), K the longest window's voxel count. A
    shorter window repeats its last voxel along an axis, after the one it copies (row-major), so
    that neither the max nor which voxel is the first maximum (or the last NaN) changes."""
    index, cells = 0, 1
    for axis, (n, o) in enumerate(zip(size, out_size)):
        starts, ends = adaptive_bounds(n, o)
        longest = int((ends - starts).max(initial=1))  # (initial: out may be 0)
        taps = np.minimum(starts[:, None] + np.arange(longest), ends[:, None] - 1)  # (o, k)
        shape = [1] * 6  # (window along each axis, tap along each axis)
        shape[axis], shape[3 + axis] = o, longest
        index, cells = index * n + taps.reshape(shape), cells * longest
    index = index.reshape(tuple(out_size) + (cells,))  # (spelt out: an output may be empty)
    return np.moveaxis(index, -1, 0).astype(np.intp)


class AdaptiveMaxPool3d(MaxPool3d):
    """out = max over each adaptive window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere (routed
    as MaxPool3d's)"""

    argument_names = {"out_size": "output_size"}  # as PyTorch names it (pictures ask)

    def forward(ctx, x, *, out_size):
        n, c = x.shape[:2]
        voxel = adaptive_volume_index(x.shape[2:], out_size)  # (K, *out)
        out, k = first_max(x.reshape(n, c, math.prod(x.shape[2:]))[:, :, voxel])
        argmax = np.take_along_axis(voxel[None, None], k[:, :, None], axis=2)[:, :, 0]
        ctx.save_for_backward(x=x, argmax=argmax.astype(np.int64))  # what PyTorch saves
        return out

    def kink_candidates(self, x) -> tuple:
        """The voxels each adaptive window takes its max among, for gradcheck's kink report."""
        (n, c), size = x.shape[:2], x.shape[2:]
        voxel = adaptive_volume_index(size, self.attrs["out_size"])
        values = x.reshape(n, c, math.prod(size))[:, :, voxel]  # (N, C, K, *out)
        shape = (n, c) + tuple(self.attrs["out_size"])

        return voxel_candidates(self.name, values, voxel, size, shape)


def along_axes(x: np.ndarray, matrices) -> np.ndarray:
    """x with each spatial axis a (2, 3, 4) multiplied by its matrix M_a: x ×₂ M_d ×₃ M_h ×₄ M_w."""
    for axis, matrix in zip((2, 3, 4), matrices):
        x = (x.swapaxes(axis, -1) @ matrix.T).swapaxes(axis, -1)
    return x


class AdaptiveAvgPool3d(Node):
    """out = mean over each adaptive window (its own voxels: a NaN stays in its own); linear,
    out = x ×₂ M_d ×₃ M_h ×₄ M_w, so  ∂L/∂x = G ×₂ M_dᵀ ×₃ M_hᵀ ×₄ M_wᵀ  (M_a: the matrix that
    averages the windows along axis a)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    argument_names = {"out_size": "output_size"}  # as PyTorch names it (pictures ask)

    def forward(ctx, x, *, out_size):
        ctx.save_for_backward(x=x)  # what PyTorch saves (backward reads only its shape)
        for axis, o in zip((2, 3, 4), out_size):
            x = adaptive_mean(x, axis, o)
        return x

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return VolumeProduct.call(grad, matrices=tuple(
            adaptive_mean_matrix(n, o, grad.dtype).T for n, o in zip(x.shape[2:],
                                                                      ctx.attrs["out_size"])))


class VolumeProduct(Node):
    """out = x ×₂ M_d ×₃ M_h ×₄ M_w on every D×H×W volume, for constant matrices (adaptive
    average pooling's transposed);  ∂L/∂x = G ×₂ M_dᵀ ×₃ M_hᵀ ×₄ M_wᵀ"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, matrices):
        return np.ascontiguousarray(along_axes(x, matrices))

    def backward(ctx, grad):
        return VolumeProduct.call(grad, matrices=tuple(m.T for m in ctx.attrs["matrices"]))


def _adaptive3d_args(op: str, input, output_size) -> tuple:
    """(the input as a batch, whether it was one, the output's (D, H, W)), checked as torch's."""
    input = tensor_arg(op, "input", input)
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        sizes = (output_size,) * 3
    else:
        try:
            sizes = None if isinstance(output_size, str) else tuple(output_size)
        except TypeError:  # not a sequence: 2.5, None
            sizes = None
        if sizes is None or not all(s is None or isinstance(s, (int, np.integer)) and
                                    not isinstance(s, (bool, np.bool_)) for s in sizes):
            raise TypeError(f"{op}: output_size must be an int or a tuple of 3 ints (or None), "
                            f"got {output_size!r}")
        if len(sizes) != 3:
            raise GeometryError(f"{op}: output_size must have 3 elements, got {output_size!r}")
    shape = input._data.shape
    if input._data.ndim not in (4, 5):
        raise GeometryError(f"{op}: expected a 4D (C, D, H, W) or 5D (N, C, D, H, W) tensor, "
                            f"but got input of size {list(shape)}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {input.dtype}; pool a "
                                  f"floating tensor, e.g. input.float()")
    if 0 in shape[-4:]:
        raise GeometryError(f"{op}: expected input to have non-zero size for non-batch "
                            f"dimensions, but input has sizes {list(shape)}")
    sizes = tuple(n if s is None else int(s) for s, n in zip(sizes, shape[-3:]))
    if min(sizes) < 0:
        raise GeometryError(f"{op}: elements of output_size must be greater than or equal to 0, "
                            f"got {output_size!r}")
    batched = input._data.ndim == 5
    return (input if batched else input.reshape(1, *shape)), batched, sizes


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Mean over PyTorch's adaptive windows of ``input`` (N, C, D, H, W) or (C, D, H, W), so that
    the output's volume is ``output_size`` (an int, or 3 whose None entries keep the input's)."""
    input, batched, out_size = _adaptive3d_args("adaptive_avg_pool3d", input, output_size)
    out = AdaptiveAvgPool3d.apply(input, out_size=out_size)
    return out if batched else _one(out)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive windows of ``input`` (N, C, D, H, W) or (C, D, H, W); with
    ``return_indices=True`` also each argmax as a flat index into its D×H×W volume (int64)."""
    op = "adaptive_max_pool3d"
    return_indices = check_flag(op, "return_indices", return_indices)
    input, batched, out_size = _adaptive3d_args(op, input, output_size)
    out, ctx = AdaptiveMaxPool3d.apply(input, out_size=out_size, return_ctx=True)
    if return_indices:
        indices = Tensor._make(ctx.argmax.copy(), None)  # a copy: backward's is its own
        return (out, indices) if batched else (_one(out), _one(indices))
    return out if batched else _one(out)


# ---- max unpooling ------------------------------------------------------------------------------
class MaxUnpool3d(Node):
    """out[n, c, indices] = x, zero elsewhere (a scatter into each D×H×W volume);  ∂L/∂x = G read
    at the indices (a gather: pool.py's GatherArgmax on the volumes laid flat)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, indices, *, out_size):
        ctx.save_for_backward(indices=indices)  # an input: its version is checked before
        # backward reads it
        n, c = x.shape[:2]
        out = np.zeros((n, c) + tuple(out_size), x.dtype)
        values = (n, c, math.prod(x.shape[2:]))  # (sizes spelt out: a batch may be empty)
        np.put_along_axis(out.reshape(n, c, math.prod(out_size)), indices.reshape(values),
                          x.reshape(values), axis=2)
        return out

    def backward(ctx, grad):
        indices, = ctx.saved_tensors
        indices = np.asarray(indices)  # (under create_graph the engine hands it over as a Tensor)
        n, c = indices.shape[:2]
        flat = (n, c, 1, math.prod(indices.shape[2:]))
        read = GatherArgmax.call(grad.reshape(n, c, 1, math.prod(grad.shape[2:])),
                                 argmax=indices.reshape(flat))
        return read.reshape(indices.shape), None


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of ``input`` (N, C, D, H, W) or (C, D, H, W) put at the voxel ``indices``
    names (max_pool3d's ``return_indices``), zeros elsewhere."""
    op = "max_unpool3d"
    input, indices, batched = check_unpool_args(op, input, indices, 3)
    kernel = ntuple(op, "kernel_size", kernel_size, 3)
    stride = kernel if stride is None else ntuple(op, "stride", stride, 3)
    padding = ntuple(op, "padding", padding, 3, minimum=0)
    out_size = unpool_size(op, input.shape[-3:], kernel, stride, padding, output_size)
    check_unpool_indices(op, indices, out_size, output_size)
    if not batched:
        input, indices = input.reshape(1, *input.shape), indices.reshape(1, *indices.shape)
    out = MaxUnpool3d.apply(input, indices, out_size=out_size)
    return out if batched else _one(out)


def voxel_candidates(name: str, values: np.ndarray, voxel: np.ndarray, size: tuple,
                     shape: tuple) -> tuple:
    """gradcheck's kink candidates of a 3-D max pool (kinks.py): ``values`` (N, C, K, *out) of
    the K voxels each window of ``shape`` (N, C, *out) takes its max among (``voxel``: their flat
    positions in a volume of ``size``), as (values (windows, K), cell(g, k), group(g)) — names
    of window g's k-th voxel and of the window."""
    def cell(g, k):
        window = np.unravel_index(g, shape)[2:]
        return f"voxel {tuple(int(i) for i in np.unravel_index(voxel[(k,) + window], size))}"

    def group(g):
        return f"{name} window {tuple(int(i) for i in np.unravel_index(g, shape))}"
    return np.moveaxis(values, 2, -1).reshape(-1, len(voxel)), cell, group
