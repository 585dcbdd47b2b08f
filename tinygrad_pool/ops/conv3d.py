"""3-D convolution over (N, C, D, H, W) volumes, as conv.py's 2-D one, one axis more.

    out[n, f, o] = Σ_{c, t} w[f, c, t] · x[n, c, o·s + t·d]  (+ b[f])   (o, t: index triples)

im2col_nd copies tap t of every window into the columns, so that the sum is one matrix
product per group, out = W · im2col(x); col2im_nd is its adjoint. Both are written for any
number of spatial axes (a loop over the kernel's taps, never over voxels). As in 2-D:

    ∂L/∂x = col2im(Wᵀ · G)   ∂L/∂w = G · im2col(x)ᵀ   ∂L/∂b = Σ G

each an op of its own (Conv3dInputGrad, Conv3dWeightGrad) whose derivatives are again one of
the three, so conv3d differentiates any number of times. conv_transpose3d is conv3d's input
gradient made an op of its own, as conv_transpose2d in conv.py. There is no fast/ replacement: these
reference kernels are what runs.
"""
import math

import numpy as np

from ..engine import Node, Tensor
from ..fast.quiet import quiet
from ..kernels import kernel
from ..windows import GeometryError, conv_output_size
from ..args import check_dimension, plural, product_operands
from .conv import _transposable_operands, _transposed_size, check_rank, ntuple


# ---- the kernels --------------------------------------------------------------------------------
# x is (N, C, *size), weight (F, C/groups, *kernel), G the output's gradient (N, F, *out);
# padding is ((low, high), ...) per spatial axis; the columns are (N, C, *kernel, *out).
def windows_nd(padded, kernel_size, stride, dilation, out_size) -> np.ndarray:
    """Every window at once, without a copy: a read-only (N, C, *kernel, *out) view whose
    [:, :, t] is tap t of every window (t·d along each axis, windows s apart)."""
    spatial = padded.strides[2:]
    strides = (padded.strides[:2] + tuple(a * d for a, d in zip(spatial, dilation))
               + tuple(a * s for a, s in zip(spatial, stride)))
    return np.lib.stride_tricks.as_strided(padded, padded.shape[:2] + tuple(kernel_size)
                                           + tuple(out_size), strides, writeable=False)


@kernel
def im2col_nd(x, kernel_size, stride, padding, dilation, out_size):
    """cols[n, c, t, o] = x[n, c, o·s + t·d - low], 0 in the padding"""
    padded = np.pad(x, ((0, 0), (0, 0)) + tuple(padding))
    return windows_nd(padded, kernel_size, stride, dilation, out_size).copy()


@kernel
def col2im_nd(cols, input_size, stride, padding, dilation):
    """im2col_nd's adjoint: each entry of the columns added onto the voxel it was read from"""
    spatial = len(input_size)
    kernel_size, out_size = cols.shape[2:2 + spatial], cols.shape[2 + spatial:]
    padded = np.zeros(cols.shape[:2] + tuple(n + low + high for n, (low, high)
                                             in zip(input_size, padding)), cols.dtype)
    for taps in np.ndindex(*kernel_size):  # each tap adds onto one strided slice of voxels
        where = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                      for t, d, s, o in zip(taps, dilation, stride, out_size))
        padded[(Ellipsis,) + where] += cols[(slice(None), slice(None)) + taps]
    inside = tuple(slice(low, low + n) for n, (low, _) in zip(input_size, padding))
    return padded[(Ellipsis,) + inside].copy()


@kernel
def conv3d_forward(x, weight, bias, stride, padding, dilation, groups, out_size):
    """out = W · im2col(x) + b, per group"""
    n, (f, cg, *kernel_size) = x.shape[0], weight.shape
    rows = cg * math.prod(kernel_size)
    cols = im2col_nd(x, kernel_size, stride, padding, dilation, out_size)
    cols = cols.reshape(n, groups, rows, math.prod(out_size))
    with quiet():  # (inf - inf and 0·inf are NaN, silently, as in torch)
        out = (weight.reshape(groups, f // groups, rows) @ cols).reshape(n, f, *out_size)
        return out if bias is None else out + bias.reshape((1, f) + (1,) * len(out_size))


@kernel
def conv3d_input_grad(grad, weight, input_size, stride, padding, dilation, groups, out_size):
    """∂L/∂x = col2im(Wᵀ · G), per group"""
    n, (f, cg, *kernel_size) = grad.shape[0], weight.shape
    grad_mat = grad.reshape(n, groups, f // groups, math.prod(out_size))
    with quiet():
        cols = weight.reshape(groups, f // groups, -1).swapaxes(1, 2) @ grad_mat
        return col2im_nd(cols.reshape(n, groups * cg, *kernel_size, *out_size), input_size,
                         stride, padding, dilation)


@kernel
def conv3d_weight_grad(x, grad, kernel_size, stride, padding, dilation, groups, out_size):
    """∂L/∂W = Σ_n G · im2col(x)ᵀ, per group"""
    (n, f), cg = grad.shape[:2], x.shape[1] // groups
    cols = im2col_nd(x, kernel_size, stride, padding, dilation, out_size)
    cols = cols.reshape(n, groups, cg * math.prod(kernel_size), math.prod(out_size))
    grad_mat = grad.reshape(n, groups, f // groups, math.prod(out_size))
    with quiet():
        return (grad_mat @ cols.swapaxes(2, 3)).sum(axis=0).reshape(f, cg, *kernel_size)


# ---- the ops --------------------------------------------------------------------------------------
class Conv3d(Node):
    """out = w ⋆ x + b;  ∂L/∂x = conv_transpose(G, w),  ∂L/∂w = correlate(x, G),  ∂L/∂b = Σ G"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, weight, bias=None, *, stride, padding, dilation, groups, out_size):
        ctx.save_for_backward(x=x, weight=weight)  # as PyTorch: both
        return conv3d_forward(x, weight, bias, stride, padding, dilation, groups, out_size)

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        geometry, needs = ctx.attrs, ctx.needs_input_grad
        grad_x = Conv3dInputGrad.call(grad, weight, input_size=x.shape[2:], **geometry) \
            if needs[0] else None
        grad_w = Conv3dWeightGrad.call(x, grad, kernel_size=weight.shape[2:], **geometry) \
            if needs[1] else None
        grad_b = grad.sum(axis=(0, 2, 3, 4)) if len(needs) > 2 and needs[2] else None
        return (grad_x, grad_w, grad_b)[:len(needs)]


class Conv3dInputGrad(Node):
    """z = conv_transpose(g, w), conv3d's input gradient; linear in g and in w:
    ∂L/∂g = conv(Z, w),  ∂L/∂w = correlate(Z, g)  (Z = ∂L/∂z)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, grad, weight, *, input_size, stride, padding, dilation, groups, out_size):
        ctx.save_for_backward(grad=grad, weight=weight)
        return conv3d_input_grad(grad, weight, input_size, stride, padding, dilation, groups,
                                 out_size)

    def backward(ctx, grad_z):
        grad, weight = ctx.saved_tensors
        geometry = {k: v for k, v in ctx.attrs.items() if k != "input_size"}
        grad_g = Conv3d.call(grad_z, weight, **geometry) if ctx.needs_input_grad[0] else None
        grad_w = Conv3dWeightGrad.call(grad_z, grad, kernel_size=weight.shape[2:], **geometry) \
            if ctx.needs_input_grad[1] else None
        return grad_g, grad_w


class Conv3dWeightGrad(Node):
    """u = correlate(x, g), conv3d's weight gradient; linear in x and in g:
    ∂L/∂x = conv_transpose(g, U),  ∂L/∂g = conv(x, U)  (U = ∂L/∂u)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, grad, *, kernel_size, stride, padding, dilation, groups, out_size):
        ctx.save_for_backward(x=x, grad=grad)
        return conv3d_weight_grad(x, grad, kernel_size, stride, padding, dilation, groups,
                                  out_size)

    def backward(ctx, grad_u):
        x, grad = ctx.saved_tensors
        geometry = {k: v for k, v in ctx.attrs.items() if k != "kernel_size"}
        grad_x = Conv3dInputGrad.call(grad, grad_u, input_size=x.shape[2:], **geometry) \
            if ctx.needs_input_grad[0] else None
        grad_g = Conv3d.call(x, grad_u, **geometry) if ctx.needs_input_grad[1] else None
        return grad_x, grad_g


def _padding_3d(op, padding, kernel_size, dilation, stride) -> tuple:
    """((low, high) per axis) from an int, a triple, "valid" or "same" (PyTorch puts the odd
    voxel of "same" at the high end)."""
    if not isinstance(padding, str):
        return tuple((p, p) for p in ntuple(op, "padding", padding, 3, minimum=0))
    if padding == "valid":
        return ((0, 0),) * 3
    if padding != "same":
        raise GeometryError(f"{op}: padding must be an int, a tuple of 3 ints, 'valid' or "
                            f"'same', got {padding!r}")
    if stride != (1, 1, 1):
        raise GeometryError(f"{op}: padding='same' is not supported for strided convolutions, "
                            f"got stride={stride}")
    return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                 for k, d in zip(kernel_size, dilation))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Cross-correlate ``input`` (N, C, D, H, W), or one unbatched volume (C, D, H, W), with
    ``weight`` (F, C/groups, kd, kh, kw), like torch. ``padding`` is an int, a triple, "valid"
    or "same"."""
    op = "conv3d"
    input, weight, bias = product_operands(op, input, weight, bias)
    batched = check_rank(op, input, 3)
    if weight._data.ndim != 5:
        raise GeometryError(f"{op}: weight must be 5-D, (out_channels, in_channels/groups, kd, "
                            f"kh, kw), got shape {weight.shape}")
    stride, dilation = ntuple(op, "stride", stride, 3), ntuple(op, "dilation", dilation, 3)
    groups = check_dimension(op, "groups", groups, minimum=1)
    c, size = input._data.shape[-4], input._data.shape[-3:]
    f, cg, *kernel_size = weight._data.shape
    if min(kernel_size) < 1 or f < 1:
        raise GeometryError(f"{op}: weight must have at least 1 filter and a kernel of at least "
                            f"1 along each axis, got weight shape {weight.shape}")
    if f % groups:
        raise GeometryError(f"{op}: weight has {plural(f, 'filter')}, not divisible by groups="
                            f"{groups} (weight shape {weight.shape})")
    if c != cg * groups:
        raise GeometryError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, "
                            f"expected input {list(input.shape)} to have {cg * groups} channels,"
                            f" but got {c} channels instead")
    if bias is not None and bias._data.shape != (f,):
        raise GeometryError(f"{op}: bias must have shape ({f},) for a weight of shape "
                            f"{weight.shape}, got {bias.shape}")
    padding = _padding_3d(op, padding, kernel_size, dilation, stride)
    try:
        out_size = tuple(conv_output_size(op, *axis) for axis in zip(
            size, kernel_size, stride, *zip(*padding), dilation, ("depth", "height", "width")))
    except GeometryError as error:
        raise GeometryError(f"{error} (input shape {input.shape}, weight shape "
                            f"{weight.shape})") from None
    if not batched:  # one volume: a batch of one, by a reshape the gradient flows back through
        input = input.reshape(1, *input.shape)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = Conv3d.apply(*parents, stride=stride, padding=padding, dilation=dilation,
                       groups=groups, out_size=out_size)
    return out if batched else out.reshape(out.shape[1:])


# ---- transposed convolution ---------------------------------------------------------------------
class ConvTranspose3d(Node):
    """out = conv_transpose(x, w) + b, the adjoint of conv3d in its input (conv3d's input
    gradient with a bias), as conv.py's ConvTranspose2d; linear in x and in w:
    ∂L/∂x = conv(G, w),  ∂L/∂w = correlate(G, x),  ∂L/∂b = Σ G"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, weight, bias=None, *, stride, padding, output_padding, dilation, groups):
        ctx.save_for_backward(x=x, weight=weight)
        conv, reached, size = _adjoint_conv3d(x.shape[2:], weight.shape[2:], stride, padding,
                                              output_padding, dilation)
        out = conv3d_input_grad(x, weight, reached, groups=groups, **conv)
        if reached != size:  # voxels past every window's reach (_adjoint_conv3d): zeros
            out = np.pad(out, ((0, 0), (0, 0)) + tuple((0, n - r) for n, r in zip(size, reached)))
        if bias is not None:
            out += bias.reshape(1, -1, 1, 1, 1)  # (in place: a kernel's result is fresh memory)
        return out

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        a, needs = ctx.attrs, ctx.needs_input_grad
        conv, reached, size = _adjoint_conv3d(x.shape[2:], weight.shape[2:], a["stride"],
                                              a["padding"], a["output_padding"], a["dilation"])
        groups = a["groups"]
        # (the windows see G where they reach; beyond, output_padding's zeros are constant)
        read = grad if reached == size else grad[(Ellipsis,) + tuple(slice(r) for r in reached)]
        grad_x = Conv3d.call(read, weight, groups=groups, **conv) if needs[0] else None
        grad_w = Conv3dWeightGrad.call(read, x, kernel_size=weight.shape[2:], groups=groups,
                                       **conv) if needs[1] else None
        grad_b = grad.sum(axis=(0, 2, 3, 4)) if len(needs) > 2 and needs[2] else None
        return (grad_x, grad_w, grad_b)[:len(needs)]


def _adjoint_conv3d(in_size, kernel, stride, padding, output_padding, dilation) -> tuple:
    """(geometry, reached, size): the conv3d whose input gradient this transposed convolution
    is — stride, padding ((low, high) per axis), dilation and out_size ``in_size`` — and, per
    axis, how much of the output its windows cover and the output's length (conv.py's
    _adjoint_conv, in 3-D: where output_padding exceeds p, the last output_padding - p planes
    lie past every window and are 0)."""
    pads, reached, size = [], [], []
    for n, k, s, p, extra, d in zip(in_size, kernel, stride, padding, output_padding, dilation):
        length = _transposed_size(n, k, s, p, extra, d)
        pads.append((p, max(p - extra, 0)))
        reached.append(length - max(extra - p, 0))
        size.append(length)
    geometry = dict(stride=stride, padding=tuple(pads), dilation=dilation,
                    out_size=tuple(in_size))
    return geometry, tuple(reached), tuple(size)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transposed convolution of ``input`` (N, C_in, D, H, W), or one unbatched volume
    (C_in, D, H, W), with ``weight`` (C_in, C_out/groups, kd, kh, kw), like torch: conv3d's
    input gradient, so that it maps conv3d's output shape back onto its input shape;
    ``output_padding`` (< stride or dilation) adds planes at the high end of each axis."""
    op = "conv_transpose3d"
    input, weight, bias = _transposable_operands(op, input, weight, bias)
    if bias is not None and bias._data.dtype != input._data.dtype:  # (torch's: no cast in 3-D)
        raise RuntimeError(f"{op}: bias has dtype {bias._data.dtype}, expected the input's "
                           f"dtype {input._data.dtype}")
    batched = check_rank(op, input, 3)
    if weight._data.ndim != 5 or 0 in weight._data.shape:
        raise GeometryError(f"{op}: weight must be a non-empty 5-D tensor, (in_channels, "
                            f"out_channels/groups, kd, kh, kw), got shape {weight.shape}")
    stride, dilation = ntuple(op, "stride", stride, 3), ntuple(op, "dilation", dilation, 3)
    padding = ntuple(op, "padding", padding, 3, minimum=0)
    output_padding = ntuple(op, "output_padding", output_padding, 3, minimum=0)
    groups = check_dimension(op, "groups", groups, minimum=1)
    c, size = input._data.shape[-4], input._data.shape[-3:]
    c_in, c_out_per_group, *kernel_size = weight._data.shape
    if c_in % groups:
        raise GeometryError(f"{op}: weight's in_channels, {c_in}, is not divisible by groups="
                            f"{groups} (weight shape {weight.shape}, laid out (in_channels, "
                            f"out_channels/groups, kd, kh, kw))")
    if c != c_in:
        raise GeometryError(f"{op}: input has {plural(c, 'channel')} but weight expects {c_in} "
                            f"(weight shape {weight.shape}, laid out (in_channels, "
                            f"out_channels/groups, kd, kh, kw); input shape {input.shape})")
    if 0 in size:
        raise GeometryError(f"{op}: input must have a non-zero depth, height and width (only "
                            f"the batch may be empty), got input of size {list(input.shape)}")
    if bias is not None and bias._data.shape != (c_out_per_group * groups,):
        raise GeometryError(f"{op}: bias must have shape ({c_out_per_group * groups},), one per "
                            f"output channel, for a weight of shape {weight.shape} and groups="
                            f"{groups}, got {bias.shape}")
    if any(extra >= max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise GeometryError(f"{op}: output_padding must be smaller than either stride or "
                            f"dilation along each axis, got output_padding={output_padding}, "
                            f"stride={stride}, dilation={dilation}")
    out_size = [_transposed_size(*axis) for axis in zip(size, kernel_size, stride, padding,
                                                        output_padding, dilation)]
    if min(out_size) < 1:
        raise GeometryError(f"{op}: the output size {tuple(out_size)} is too small: (size - 1)·"
                            f"stride - 2·padding + dilation·(kernel - 1) + output_padding + 1 "
                            f"must be at least 1, for an input of size {tuple(size)}, kernel "
                            f"{tuple(kernel_size)}, stride={stride}, padding={padding}, "
                            f"dilation={dilation}, output_padding={output_padding}")
    if not batched:  # one volume: a batch of one, by a reshape the gradient flows back through
        input = input.reshape(1, *input.shape)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = ConvTranspose3d.apply(*parents, stride=stride, padding=padding,
                                output_padding=output_padding, dilation=dilation, groups=groups)
    return out if batched else out.reshape(out.shape[1:])
