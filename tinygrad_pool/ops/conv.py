"""2-D convolution (cross-correlation, as in every deep-learning framework).

    out[n, f, ho, wo] = Σ_{c,i,j} w[f, c, i, j] · x[n, c, ho·s + i·d, wo·s + j·d]  (+ b[f])

It is linear in x and in w, so its derivatives are two more convolutions of the same geometry:

    ∂L/∂x = conv_transpose(G, w)     (each output gradient spread back over its window, by w)
    ∂L/∂w = correlate(x, G)          (each weight meets every input pixel it multiplied)
    ∂L/∂b = Σ G

Those two are Functions here too, and each one's derivative is again one of the three — so
convolutions differentiate any number of times. The arithmetic (im2col and one matrix product
per group, col2im one tap at a time) lives in ``fast/conv.py``.
"""
import numpy as np

from ..fast import conv as fast
from ..fast import memory
from ..tensor import Function, Tensor
from ..windows import check_4d, conv_output_size, pair
from .args import tensor_arg


class Conv2d(Function):
    """out = w ⋆ x + b;  ∂L/∂x = conv_transpose(G, w),  ∂L/∂w = correlate(x, G),  ∂L/∂b = Σ G"""

    # The im2col columns of x, kept so that ∂L/∂w is one product; handed back after backward.
    scratch_saved = ("cols",)

    def forward(ctx, x, weight, bias=None, *, stride, padding, dilation, groups, out_hw):
        out, cols = fast.conv2d(x, weight, bias, stride, padding, dilation, groups, out_hw)
        ctx.x, ctx.weight = x, weight  # what PyTorch saves: both, whichever needs a gradient
        if ctx.needs_input_grad[1]:
            ctx.cols = cols
        else:
            memory.give_buffer(cols.base)
        return out

    def backward(ctx, grad):
        geometry = ctx.attrs  # stride, padding, dilation, groups, out_hw: nothing else
        needs = ctx.needs_input_grad
        if type(grad) is np.ndarray:  # the fast path: the same three, sharing one copy of G
            grads = fast.conv2d_backward(grad, ctx.weight, getattr(ctx, "cols", None),
                                         ctx.x.shape, needs, **geometry)
            return grads[:len(needs)]
        grad_x = Conv2dInputGrad.call(grad, ctx.weight, input_hw=ctx.x.shape[2:], **geometry) \
            if needs[0] else None
        grad_w = Conv2dWeightGrad.call(ctx.x, grad, kernel=ctx.weight.shape[2:], **geometry) \
            if needs[1] else None
        grad_b = grad.sum(axis=(0, 2, 3)) if len(needs) > 2 and needs[2] else None
        return (grad_x, grad_w, grad_b)[:len(needs)]


class Conv2dInputGrad(Function):
    """z = conv_transpose(g, w), the input gradient of a convolution; it is linear in g and in
    w:  ∂L/∂g = conv(Z, w),  ∂L/∂w = correlate(Z, g)  (Z = ∂L/∂z)"""

    def forward(ctx, grad, weight, *, input_hw, stride, padding, dilation, groups, out_hw):
        ctx.grad, ctx.weight = grad, weight
        input_shape = (grad.shape[0], weight.shape[1] * groups) + tuple(input_hw)
        return fast.input_grad(grad, weight, input_shape, stride, padding, dilation, groups, out_hw)

    def backward(ctx, grad_z):
        a = ctx.attrs
        geometry = {k: a[k] for k in ("stride", "padding", "dilation", "groups", "out_hw")}
        grad_g = Conv2d.call(grad_z, ctx.weight, **geometry) if ctx.needs_input_grad[0] else None
        grad_w = Conv2dWeightGrad.call(grad_z, ctx.grad, kernel=ctx.weight.shape[2:], **geometry) \
            if ctx.needs_input_grad[1] else None
        return grad_g, grad_w


class Conv2dWeightGrad(Function):
    """u = correlate(x, g), the weight gradient of a convolution; it is linear in x and in g:
    ∂L/∂x = conv_transpose(g, U),  ∂L/∂g = conv(x, U)  (U = ∂L/∂u)"""

    def forward(ctx, x, grad, *, kernel, stride, padding, dilation, groups, out_hw):
        ctx.x, ctx.grad = x, grad
        return fast.weight_grad(x, grad, tuple(kernel), stride, padding, dilation, groups, out_hw)

    def backward(ctx, grad_u):
        a = ctx.attrs
        geometry = {k: a[k] for k in ("stride", "padding", "dilation", "groups", "out_hw")}
        grad_x = Conv2dInputGrad.call(ctx.grad, grad_u, input_hw=ctx.x.shape[2:], **geometry) \
            if ctx.needs_input_grad[0] else None
        grad_g = Conv2d.call(ctx.x, grad_u, **geometry) if ctx.needs_input_grad[1] else None
        return grad_x, grad_g


def _conv_padding(padding, kernel, dilation, stride) -> tuple:
    """(top, bottom, left, right) from an int, a pair, "valid" or "same"."""
    if padding == "valid":
        return 0, 0, 0, 0
    if padding == "same":
        if stride != (1, 1):
            raise ValueError(f"conv2d: padding='same' needs stride=1, got stride={stride}")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)  # PyTorch puts the odd pixel at the bottom/right
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    if isinstance(padding, str):
        raise ValueError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    ph, pw = pair("conv2d", "padding", padding, minimum=0)
    return ph, ph, pw, pw


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Cross-correlate NCHW ``input`` with ``weight`` (F, C/groups, kh, kw), like torch."""
    input, weight = tensor_arg("conv2d", "input", input), tensor_arg("conv2d", "weight", weight)
    check_4d("conv2d", "input", input.data)
    check_4d("conv2d", "weight", weight.data)
    stride, dilation = pair("conv2d", "stride", stride), pair("conv2d", "dilation", dilation)
    if not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    n, c, h, w = input.shape
    f, cg, kh, kw = weight.shape
    if c != cg * groups:
        raise ValueError(f"conv2d: input has {c} channels but weight expects {cg * groups} "
                         f"(weight shape {weight.shape}, groups={groups}; input shape {input.shape})")
    if f % groups:
        raise ValueError(f"conv2d: weight has {f} filters, not divisible by groups={groups}")
    if bias is not None:
        bias = tensor_arg("conv2d", "bias", bias)
        if bias.shape != (f,):
            raise ValueError(f"conv2d: bias must have shape ({f},) for a weight of shape "
                             f"{weight.shape}, got {bias.shape}")
    pads = _conv_padding(padding, (kh, kw), dilation, stride)
    try:
        out_hw = (conv_output_size("conv2d", h, kh, stride[0], pads[0], pads[1], dilation[0], "height"),
                  conv_output_size("conv2d", w, kw, stride[1], pads[2], pads[3], dilation[1], "width"))
    except ValueError as error:
        raise ValueError(f"{error} (input shape {input.shape}, weight shape {weight.shape})") from None
    parents = (input, weight) if bias is None else (input, weight, bias)
    return Conv2d.apply(*parents, stride=stride, padding=pads, dilation=dilation, groups=groups,
                        out_hw=out_hw)
