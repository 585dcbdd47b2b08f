"""Max and average pooling over k×k windows of NCHW arrays.

Max pooling's derivative is a routing table: each output is a copy of one input pixel (the
window's argmax), so backward sends each output gradient to that pixel. Forward stores the
argmax; backward only reads it. Where windows overlap (stride < kernel) one pixel can be the
argmax of several windows and collects the sum of their gradients. Routing is linear, and its
own derivative reads the gradient back at the same pixels (a gather by the stored argmax).

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

The kernels (max with argmax, the scatter and gather, window sums) live in ``fast/pool.py``.
"""
import numpy as np

from ..fast import pool as fast
from ..engine import Node, Tensor
from ..windows import (GeometryError, adaptive_mean, adaptive_mean_matrix, adaptive_window_index,
                       check_batched, check_windows_reach_input, pair, pool_output_size)
from .args import DimensionError, check_dimension, check_flag, check_floating, tensor_arg

TIE_RULES = ("first", "split", "all")


class MaxPool2d(Node):
    """out = max over each window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere

    ``ties`` decides who receives the gradient when a window holds several equal maxima:
    "first" (PyTorch), "split" (an equal share each) or "all" (the full gradient each, as the
    seed article's mask does — not a subgradient, see docs/).
    """

    def forward(ctx, x, *, kernel_size, stride, padding, dilation, ceil_mode, ties, out_hw):
        out, ctx.argmax = fast.max_pool2d(x, kernel_size, stride, padding, dilation, out_hw)
        ctx.x = x  # what PyTorch saves, with the indices
        if ties != "first":
            ctx.out = out
        return out

    def backward(ctx, grad):
        a = ctx.attrs
        if a["ties"] != "first":
            if type(grad) is not np.ndarray:
                raise RuntimeError(f"max_pool2d: double backward is defined for ties='first' "
                                   f"(PyTorch's rule), not ties={a['ties']!r}")
            return fast.route_tied(ctx.x, ctx.out, grad, ctx.argmax, a["kernel_size"],
                                   a["stride"], a["padding"], a["dilation"], a["ties"])
        return RouteToArgmax.call(grad, argmax=ctx.argmax, input_shape=ctx.x.shape)


class RouteToArgmax(Node):
    """Each output's gradient added onto the pixel its window chose;  its derivative reads
    the pixels back: ∂L/∂grad = gather(G, argmax)"""

    def forward(ctx, grad, argmax, input_shape):
        return fast.route_to_argmax(argmax, grad, input_shape)

    def backward(ctx, grad_routed):
        return GatherArgmax.call(grad_routed, argmax=ctx.attrs["argmax"])


class GatherArgmax(Node):
    """Each window's chosen pixel, read;  its derivative routes back: ∂L/∂x = route(G, argmax)"""

    def forward(ctx, x, argmax):
        ctx.input_shape = x.shape
        return fast.gather_argmax(x, argmax)

    def backward(ctx, grad):
        return RouteToArgmax.call(grad, argmax=ctx.attrs["argmax"], input_shape=ctx.input_shape)


class AvgPool2d(Node):
    """out = Σ window / divisor;  ∂L/∂x = each output's gradient / divisor, spread over its window"""

    def forward(ctx, x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, out_hw):
        ctx.x = x  # what PyTorch saves
        ctx.divisor = fast.avg_divisor(x.shape[2:], kernel_size, stride, padding, out_hw,
                                       count_include_pad, divisor_override).astype(x.dtype)
        total = fast.window_sum(x, kernel_size, stride, padding, out_hw)
        if x.dtype.kind == "f":
            return total / ctx.divisor
        # integers stay integers, as torch's: its C++ quotient, truncated toward zero (exact)
        return np.sign(total) * (np.abs(total) // ctx.divisor)

    def backward(ctx, grad):
        return SpreadOverWindows.call(grad / ctx.divisor, input_shape=ctx.x.shape, **ctx.attrs)


class SpreadOverWindows(Node):
    """Each value added onto every pixel of its window (the adjoint of a window sum);  its
    derivative sums the windows again: ∂L/∂values = Σ window of G"""

    def forward(ctx, values, *, input_shape, kernel_size, stride, padding, out_hw, **_):
        return fast.spread_over_windows(values, input_shape, kernel_size, stride, padding, out_hw)

    def backward(ctx, grad):
        a = ctx.attrs
        return WindowSum.call(grad, kernel_size=a["kernel_size"], stride=a["stride"],
                              padding=a["padding"], out_hw=a["out_hw"])


class WindowSum(Node):
    """Σ over each window;  ∂L/∂x = each output's gradient spread over its window"""

    def forward(ctx, x, *, kernel_size, stride, padding, out_hw):
        ctx.input_shape = x.shape
        return fast.window_sum(x, kernel_size, stride, padding, out_hw)

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

    def forward(ctx, x, *, out_hw):
        n, c, h, w = x.shape
        window = adaptive_window_index((h, w), out_hw)  # (out_h, out_w, K): flat pixels
        values = x.reshape(n, c, h * w)[:, :, window]  # (N, C, out_h, out_w, K), one gather
        out, chosen = fast.max_along_last(values)  # the first maximum, or the last NaN
        ctx.argmax = np.take_along_axis(window[None, None], chosen[..., None], axis=-1)[..., 0] \
            .astype(np.int64)
        ctx.input_shape = x.shape
        return out

    def backward(ctx, grad):
        return RouteToArgmax.call(grad, argmax=ctx.argmax, input_shape=ctx.input_shape)


class AdaptiveAvgPool2d(Node):
    """out = mean over each adaptive window (the windows' own pixels: a NaN stays in its own);
    it is linear, out = R · x · Cᵀ per plane, so  ∂L/∂x = Rᵀ · G · C  (R, C: the matrices that
    average the row and column windows)"""

    def forward(ctx, x, *, out_hw):
        ctx.input_hw = x.shape[2:]
        return adaptive_mean(adaptive_mean(x, 2, out_hw[0]), 3, out_hw[1])

    def backward(ctx, grad):
        (h, w), (out_h, out_w) = ctx.input_hw, ctx.attrs["out_hw"]
        return PlaneProduct.call(grad, rows=adaptive_mean_matrix(h, out_h, grad.dtype).T,
                                 columns=adaptive_mean_matrix(w, out_w, grad.dtype).T)


class PlaneProduct(Node):
    """out = R · x · Cᵀ on every H×W plane, for constant matrices R and C (adaptive average
    pooling: the rows and columns that average each window);  ∂L/∂x = Rᵀ · G · C"""

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

    def forward(ctx, x, indices, *, out_hw):
        ctx.indices = indices  # an input: its version is checked before backward reads it
        n, c = x.shape[:2]
        out = np.zeros((n, c) + out_hw, x.dtype)
        planes = (n, c, x.shape[2] * x.shape[3])  # (sizes spelt out: a batch may be empty)
        np.put_along_axis(out.reshape(n, c, out_hw[0] * out_hw[1]), indices.reshape(planes),
                          x.reshape(planes), axis=2)
        return out

    def backward(ctx, grad):
        # (np.asarray: under create_graph the engine hands the saved indices over as a Tensor)
        return GatherArgmax.call(grad, argmax=np.asarray(ctx.indices)), None


def _unpool_size(input_hw, kernel, stride, padding, output_size) -> tuple:
    """PyTorch's output size: (H - 1)·s - 2p + k, or ``output_size`` (2 sizes, or 4 whose last
    two count) if within a stride of it."""
    default = tuple((size - 1) * s - 2 * p + k
                    for size, k, s, p in zip(input_hw, kernel, stride, padding))
    if output_size is None:
        sizes = default
    else:
        try:
            sizes = tuple(output_size)
        except TypeError:  # not a sequence: 6, 2.5, True
            sizes = None
        # the length first, then the elements, as torch's (so "a" is a ValueError, "ab" not)
        if sizes is not None and len(sizes) not in (2, 4):
            raise ValueError(f"max_unpool2d: output_size should be a sequence containing 2 or 4 "
                             f"elements, but it has a length of '{len(sizes)}'")
        if sizes is None or not all(isinstance(s, (int, np.integer)) and
                                    not isinstance(s, (bool, np.bool_)) for s in sizes):
            raise TypeError(f"max_unpool2d: output_size must be None or a sequence of 2 or 4 "
                            f"ints, got {output_size!r}")
        sizes = sizes[-2:]
        for axis, (size, wanted, s) in enumerate(zip(default, sizes, stride)):
            if not size - s < wanted < size + s:
                raise ValueError(f'max_unpool2d: invalid output_size "{output_size}" (dim '
                                 f'{axis} must be between {size - s} and {size + s})')
    if min(sizes) < 1:
        raise GeometryError(f"max_unpool2d: the output would be empty, of size {sizes}, for an "
                            f"input of size {input_hw}, kernel_size={kernel}, stride={stride}, "
                            f"padding={padding}")
    return tuple(int(size) for size in sizes)


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
    out_hw = _unpool_size(input.shape[-2:], kernel, stride, padding, output_size)
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
