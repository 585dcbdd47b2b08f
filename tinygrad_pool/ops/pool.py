"""Max and average pooling over k×k windows of NCHW arrays.

Max pooling's derivative is a routing table: each output is a copy of one input pixel (the
window's argmax), so backward sends each output gradient to that pixel. Forward stores the
argmax; backward only reads it. Where windows overlap (stride < kernel) one pixel can be the
argmax of several windows and collects the sum of their gradients. Routing is linear, and its
own derivative reads the gradient back at the same pixels (a gather by the stored argmax).

Average pooling is linear too: backward spreads each output gradient evenly over its window,
and the derivative of that spreading is average pooling again.

The kernels (max with argmax, the scatter and gather, window sums) live in ``fast/pool.py``.
"""
import numpy as np

from ..fast import pool as fast
from ..tensor import Function, Tensor
from ..windows import check_4d, check_windows_reach_input, pair, pool_output_size
from .args import tensor_arg

TIE_RULES = ("first", "split", "all")


class MaxPool2d(Function):
    """out = max over each window;  ∂L/∂x[argmax] += ∂L/∂out, zero elsewhere

    ``ties`` decides who receives the gradient when a window holds several equal maxima:
    "first" (PyTorch), "split" (an equal share each) or "all" (the full gradient each, as the
    seed article's mask does — not a subgradient, see docs/).
    """

    # Handed back after backward, for the next forward (unless someone else holds it).
    scratch_saved = ("argmax",)

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


class RouteToArgmax(Function):
    """Each output's gradient added onto the pixel its window chose;  its derivative reads
    the pixels back: ∂L/∂grad = gather(G, argmax)"""

    def forward(ctx, grad, argmax, input_shape):
        return fast.route_to_argmax(argmax, grad, input_shape)

    def backward(ctx, grad_routed):
        return GatherArgmax.call(grad_routed, argmax=ctx.attrs["argmax"])


class GatherArgmax(Function):
    """Each window's chosen pixel, read;  its derivative routes back: ∂L/∂x = route(G, argmax)"""

    def forward(ctx, x, argmax):
        ctx.input_shape = x.shape
        return fast.gather_argmax(x, argmax)

    def backward(ctx, grad):
        return RouteToArgmax.call(grad, argmax=ctx.attrs["argmax"], input_shape=ctx.input_shape)


class AvgPool2d(Function):
    """out = Σ window / divisor;  ∂L/∂x = each output's gradient / divisor, spread over its window"""

    def forward(ctx, x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, out_hw):
        ctx.x = x  # what PyTorch saves
        ctx.divisor = fast.avg_divisor(x.shape[2:], kernel_size, stride, padding, out_hw,
                                       count_include_pad, divisor_override).astype(x.dtype)
        return fast.window_sum(x, kernel_size, stride, padding, out_hw) / ctx.divisor

    def backward(ctx, grad):
        return SpreadOverWindows.call(grad / ctx.divisor, input_shape=ctx.x.shape, **ctx.attrs)


class SpreadOverWindows(Function):
    """Each value added onto every pixel of its window (the adjoint of a window sum);  its
    derivative sums the windows again: ∂L/∂values = Σ window of G"""

    def forward(ctx, values, *, input_shape, kernel_size, stride, padding, out_hw, **_):
        return fast.spread_over_windows(values, input_shape, kernel_size, stride, padding, out_hw)

    def backward(ctx, grad):
        a = ctx.attrs
        return WindowSum.call(grad, kernel_size=a["kernel_size"], stride=a["stride"],
                              padding=a["padding"], out_hw=a["out_hw"])


class WindowSum(Function):
    """Σ over each window;  ∂L/∂x = each output's gradient spread over its window"""

    def forward(ctx, x, *, kernel_size, stride, padding, out_hw):
        ctx.input_shape = x.shape
        return fast.window_sum(x, kernel_size, stride, padding, out_hw)

    def backward(ctx, grad):
        return SpreadOverWindows.call(grad, input_shape=ctx.input_shape, **ctx.attrs)


def _pool_args(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked pooling arguments: (the Function's attributes, dilation, the input tensor)."""
    input = tensor_arg(op, "input", input)
    check_4d(op, "input", input.data)
    kernel = pair(op, "kernel_size", kernel_size)
    stride = kernel if stride is None or stride == [] else pair(op, "stride", stride)
    padding, dilation = pair(op, "padding", padding, minimum=0), pair(op, "dilation", dilation)
    for p, k in zip(padding, kernel):
        if p > k // 2:  # so that no window lies entirely in the padding
            raise ValueError(f"{op}: padding {padding} must be at most half of "
                             f"kernel_size={kernel}")
    out_hw = tuple(pool_output_size(op, size, k, s, p, d, ceil_mode, axis)
                   for size, k, s, p, d, axis in zip(input.shape[2:], kernel, stride, padding,
                                                     dilation, ("height", "width")))
    for size, k, s, p, d, n, axis in zip(input.shape[2:], kernel, stride, padding, dilation,
                                         out_hw, ("height", "width")):
        check_windows_reach_input(op, size, k, s, p, d, n, axis)
    return dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                out_hw=out_hw), dilation, input


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False, *, ties="first"):
    """Max over k×k windows, storing the argmax for backward (torch's signature, plus ``ties``).

    With ``return_indices=True`` also returns the argmax as a flat index into each H×W plane,
    exactly PyTorch's indices. ``ties`` routes the gradient of a window with equal maxima to the
    first ("first", PyTorch), splits it equally ("split"), or gives each the whole ("all", the
    seed article's rule; not a subgradient).
    """
    if ties not in TIE_RULES:
        raise ValueError(f"max_pool2d: ties must be one of {TIE_RULES}, got {ties!r}")
    attrs, dilation, input = _pool_args("max_pool2d", input, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    out, ctx = MaxPool2d.apply(input, dilation=dilation, ties=ties, return_ctx=True,
                               **attrs)
    if return_indices:
        return out, Tensor(ctx.argmax.astype(np.int64))  # a copy: the op reuses its buffer
    return out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over k×k windows, with torch's padding and divisor rules."""
    attrs, _, input = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    return AvgPool2d.apply(input, count_include_pad=bool(count_include_pad),
                           divisor_override=divisor_override, **attrs)
