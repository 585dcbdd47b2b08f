"""2-D convolution (cross-correlation, as in every deep-learning framework).

    out[n, f, ho, wo] = Σ_{c,i,j} w[f, c, i, j] · x[n, c, ho·s + i·d, wo·s + j·d]  (+ b[f])

im2col copies tap (i, j) of every window into the columns, so that the sum is one matrix
product per group, out = W · im2col(x); col2im is its adjoint, ⟨im2col(x), y⟩ = ⟨x, col2im(y)⟩,
adding each column entry back onto the pixel it was read from. Convolution is linear in x and
in w, so its derivatives are two more products of the same geometry:

    ∂L/∂x = col2im(Wᵀ · G)  = conv_transpose(G, w)   (each output gradient spread back by w)
    ∂L/∂w = G · im2col(x)ᵀ  = correlate(x, G)        (each weight meets every pixel it multiplied)
    ∂L/∂b = Σ G

Those two are Nodes here too, and each one's derivative is again one of the three — so
convolutions differentiate any number of times. The arithmetic is five named kernels, written
below as the math: ``im2col``, ``col2im``, ``conv2d_forward``, ``conv2d_input_grad``,
``conv2d_weight_grad`` (and ``conv2d_backward``, both gradients at once); fast/conv.py
registers faster ones under the same names, and ``set_kernels("reference")`` runs these.

``unfold`` is im2col itself, PyTorch's F.unfold, and ``fold`` its adjoint col2im: each one's
derivative is the other. ``conv_transpose2d`` is conv2d's input gradient made an op of its
own (PyTorch's "deconvolution"): ⟨conv_transpose(x, w), z⟩ = ⟨x, conv(z, w)⟩.

``Conv1d`` and ``ConvTranspose1d`` are the 2-D nodes over a height of one (their forward and
backward reshape around the 2-D ones'); conv3d.py has the 3-D convolution.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..engine import Node, Tensor
from ..fast.quiet import quiet
from ..kernels import kernel
from ..windows import (GeometryError, check_4d, check_batched, conv_output_size, pair, tap,
                       windows_view)
from ..args import (_TORCH_NAMES, DimensionError, check_dimension, check_same_dtype,
                   plural, product_operands, tensor_arg)


# ---- the kernels (references; fast/conv.py has faster ones) ------------------------------------
# x is (N, C, H, W), weight (F, C/groups, kh, kw), G the output's gradient (N, F, Ho, Wo);
# padding is (top, bottom, left, right); the columns are (N, C, kh, kw, Ho, Wo). The products
# run quiet(): inf - inf and 0·inf are NaN, silently, as in torch.
@kernel
def im2col(x, kernel_size, stride, padding, dilation, out_hw):
    """cols[n, c, i, j, ho, wo] = x[n, c, ho·s + i·d - top, wo·s + j·d - left], 0 in the padding"""
    top, bottom, left, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    return windows_view(padded, kernel_size, stride, dilation, out_hw).copy()


@kernel
def col2im(cols, input_hw, stride, padding, dilation):
    """im2col's adjoint: each entry of the columns added onto the pixel it was read from"""
    n, c, kh, kw, ho, wo = cols.shape
    (h, w), (top, bottom, left, right) = input_hw, padding
    padded = np.zeros((n, c, h + top + bottom, w + left + right), cols.dtype)
    for i in range(kh):  # a loop over the taps: each adds onto one strided slice of pixels
        for j in range(kw):
            tap(padded, i, j, stride, dilation, (ho, wo))[...] += cols[:, :, i, j]
    return padded[:, :, top: top + h, left: left + w].copy()


@kernel
def conv2d_forward(x, weight, bias, stride, padding, dilation, groups, out_hw):
    """out = W · im2col(x) + b, per group: (F/g × C/g·kh·kw) @ (C/g·kh·kw × Ho·Wo) per image"""
    n, (f, cg, kh, kw), pixels = x.shape[0], weight.shape, out_hw[0] * out_hw[1]
    cols = im2col(x, (kh, kw), stride, padding, dilation, out_hw)
    cols = cols.reshape(n, groups, cg * kh * kw, pixels)
    with quiet():
        out = (weight.reshape(groups, f // groups, cg * kh * kw) @ cols).reshape(n, f, *out_hw)
        return out if bias is None else out + bias.reshape(1, f, 1, 1)


@kernel
def conv2d_input_grad(grad, weight, input_hw, stride, padding, dilation, groups, out_hw):
    """∂L/∂x = col2im(Wᵀ · G), per group"""
    n, (f, cg, kh, kw), pixels = grad.shape[0], weight.shape, out_hw[0] * out_hw[1]
    grad_mat = grad.reshape(n, groups, f // groups, pixels)
    with quiet():
        cols = weight.reshape(groups, f // groups, cg * kh * kw).swapaxes(1, 2) @ grad_mat
        return col2im(cols.reshape(n, groups * cg, kh, kw, *out_hw), input_hw, stride,
                      padding, dilation)


@kernel
def conv2d_weight_grad(x, grad, kernel_size, stride, padding, dilation, groups, out_hw):
    """∂L/∂W = Σ_n G · im2col(x)ᵀ, per group"""
    (n, f), (kh, kw), pixels = grad.shape[:2], kernel_size, out_hw[0] * out_hw[1]
    cg = x.shape[1] // groups
    cols = im2col(x, (kh, kw), stride, padding, dilation, out_hw)
    cols = cols.reshape(n, groups, cg * kh * kw, pixels)
    grad_mat = grad.reshape(n, groups, f // groups, pixels)
    with quiet():
        return (grad_mat @ cols.swapaxes(2, 3)).sum(axis=0).reshape(f, cg, kh, kw)


@kernel
def conv2d_backward(grad, x, weight, needs, stride, padding, dilation, groups, out_hw):
    """(∂L/∂x, ∂L/∂W), each where ``needs`` asks for it (else None): the two kernels above"""
    geometry = stride, padding, dilation, groups, out_hw
    return (conv2d_input_grad(grad, weight, x.shape[2:], *geometry) if needs[0] else None,
            conv2d_weight_grad(x, grad, weight.shape[2:], *geometry) if needs[1] else None)


# ---- convolution ---------------------------------------------------------------------------------
class WindowCell(NamedTuple):
    """One tap of the window an output cell read (``window_cells``)."""
    input: Optional[tuple]  # (n, c, h, w) of the input (a padding tap: where it lies, or None)
    weight: tuple           # the weight cell that multiplied it
    padding: bool           # the tap lies in the padding (it read a 0)


class Conv2d(Node):
    """out = w ⋆ x + b;  ∂L/∂x = conv_transpose(G, w),  ∂L/∂w = correlate(x, G),  ∂L/∂b = Σ G

    ``window_cells((n, f, ho, wo))``: what that output cell read, a ``WindowCell`` per channel
    of its group and tap (i, j) of its window, in that order: the input cell (n, c, h, w) —
    for a tap in the padding, the cell of the padded image it lies on, outside the input —
    and the weight cell (f, c - first channel of the group, i, j) that multiplied it."""

    weight_input = 1  # parents[1] is the kernel (pictures ask)
    padding_per_side = True  # padding is (top, bottom, left, right) (pictures ask)
    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, weight, bias=None, *, stride, padding, dilation, groups, out_hw):
        ctx.save_for_backward(x=x, weight=weight)  # as PyTorch: both, whichever needs a gradient
        return conv2d_forward(x, weight, bias, stride, padding, dilation, groups, out_hw)

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        geometry, needs = ctx.attrs, ctx.needs_input_grad  # stride, padding, dilation, groups, out_hw
        if type(grad) is np.ndarray:  # arrays: both in one kernel (fast/ shares work between them)
            grad_x, grad_w = conv2d_backward(grad, x, weight, needs, **geometry)
        else:  # Tensors (create_graph): each an op of its own, to be differentiated again
            grad_x = Conv2dInputGrad.call(grad, weight, input_hw=x.shape[2:], **geometry) \
                if needs[0] else None
            grad_w = Conv2dWeightGrad.call(x, grad, kernel_size=weight.shape[2:], **geometry) \
                if needs[1] else None
        grad_b = grad.sum(axis=(0, 2, 3)) if len(needs) > 2 and needs[2] else None
        return (grad_x, grad_w, grad_b)[:len(needs)]

    def window_cells(self, out_cell) -> list:
        n, f, ho, wo = out_cell
        (filters, per_group, kh, kw), (h, w) = self.parents[1].shape, self.parents[0].shape[2:]
        a = self.attrs
        (sh, sw), (top, _, left, _), (dh, dw) = a["stride"], a["padding"], a["dilation"]
        first = f // (filters // a["groups"]) * per_group
        cells = []
        for c in range(per_group):
            for i in range(kh):
                for j in range(kw):
                    r, q = ho * sh - top + i * dh, wo * sw - left + j * dw
                    cells.append(WindowCell((n, first + c, r, q), (f, c, i, j),
                                            not (0 <= r < h and 0 <= q < w)))
        return cells

    def cells_reading(self, in_cell) -> list:
        """(output cell, weight cell) of every output whose window reads input cell (n, c, h, w):
        window_cells turned round, output row ho reading row h through tap i where
        ho·s - top + i·d = h (fan_in asks)."""
        n, c, h, w = in_cell
        (filters, per_group, kh, kw), a = self.parents[1].shape, self.attrs
        (sh, sw), (top, _, left, _), (dh, dw), out_hw = a["stride"], a["padding"], a["dilation"], \
            a["out_hw"]
        per_filter = filters // a["groups"]
        first = c // per_group * per_filter
        cells = []
        for f in range(first, first + per_filter):
            for i in range(kh):
                for j in range(kw):
                    ho = _transposed_source(h, i, sh, top, dh, out_hw[0])
                    wo = _transposed_source(w, j, sw, left, dw, out_hw[1])
                    if ho is not None and wo is not None:
                        cells.append(((n, f, ho, wo), (f, c % per_group, i, j)))
        return cells

    def channel_groups(self) -> tuple:
        """(input channels, output channels) of each of the ``groups``: an output channel reads
        its own group's input channels only (fan_in asks)."""
        filters, per_group = self.parents[1].shape[:2]
        return per_group, filters // self.attrs["groups"]

    def padding_read(self) -> tuple:
        """(rows, columns) of zeros the windows read above and left of the input (fan_in asks)."""
        top, _, left, _ = self.attrs["padding"]
        return top, left


class Conv2dInputGrad(Node):
    """z = conv_transpose(g, w), the input gradient of a convolution; it is linear in g and in
    w:  ∂L/∂g = conv(Z, w),  ∂L/∂w = correlate(Z, g)  (Z = ∂L/∂z)"""

    padding_per_side = True  # padding is (top, bottom, left, right) (pictures ask)
    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, grad, weight, *, input_hw, stride, padding, dilation, groups, out_hw):
        ctx.save_for_backward(grad=grad, weight=weight)
        return conv2d_input_grad(grad, weight, input_hw, stride, padding, dilation, groups, out_hw)

    def backward(ctx, grad_z):
        grad, weight = ctx.saved_tensors
        geometry = {k: v for k, v in ctx.attrs.items() if k != "input_hw"}
        grad_g = Conv2d.call(grad_z, weight, **geometry) if ctx.needs_input_grad[0] else None
        grad_w = Conv2dWeightGrad.call(grad_z, grad, kernel_size=weight.shape[2:], **geometry) \
            if ctx.needs_input_grad[1] else None
        return grad_g, grad_w


class Conv2dWeightGrad(Node):
    """u = correlate(x, g), the weight gradient of a convolution; it is linear in x and in g:
    ∂L/∂x = conv_transpose(g, U),  ∂L/∂g = conv(x, U)  (U = ∂L/∂u)"""

    padding_per_side = True  # padding is (top, bottom, left, right) (pictures ask)
    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, grad, *, kernel_size, stride, padding, dilation, groups, out_hw):
        ctx.save_for_backward(x=x, grad=grad)
        return conv2d_weight_grad(x, grad, kernel_size, stride, padding, dilation, groups, out_hw)

    def backward(ctx, grad_u):
        x, grad = ctx.saved_tensors
        geometry = {k: v for k, v in ctx.attrs.items() if k != "kernel_size"}
        grad_x = Conv2dInputGrad.call(grad, grad_u, input_hw=x.shape[2:], **geometry) \
            if ctx.needs_input_grad[0] else None
        grad_g = Conv2d.call(x, grad_u, **geometry) if ctx.needs_input_grad[1] else None
        return grad_x, grad_g


def _conv_padding(padding, kernel, dilation, stride) -> tuple:
    """(top, bottom, left, right) from an int, a pair, "valid" or "same"."""
    if type(padding) is int and padding >= 0:  # the common case, on every call
        return padding, padding, padding, padding
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0, 0, 0
        if padding != "same":
            raise GeometryError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', "
                                f"got {padding!r}")
        if stride != (1, 1):
            raise GeometryError(f"conv2d: padding='same' needs stride=1, got stride={stride}")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)  # PyTorch puts the odd pixel at the bottom/right
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    ph, pw = pair("conv2d", "padding", padding, minimum=0, single=True)
    return ph, ph, pw, pw


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Cross-correlate ``input`` (N, C, H, W), or one unbatched image (C, H, W), with ``weight``
    (F, C/groups, kh, kw), like torch. Integer tensors convolve too (exactly, as torch's)."""
    input, weight, bias = product_operands("conv2d", input, weight, bias)
    batched = check_batched("conv2d", input._data)
    check_4d("conv2d", "weight", weight._data)
    stride = pair("conv2d", "stride", stride, single=True)
    dilation = pair("conv2d", "dilation", dilation, single=True)
    if type(groups) is not int or groups < 1:  # (the common case skips the call)
        groups = check_dimension("conv2d", "groups", groups, minimum=1)
    c, h, w = input._data.shape[-3:]  # (the arrays' shapes: a Size is a Python object to build)
    f, cg, kh, kw = weight._data.shape
    if kh < 1 or kw < 1 or f < 1:  # (torch's errors: a window of no cells, no filters)
        what = (f"kernel size should be greater than zero, but got kernel_height: {kh} "
                f"kernel_width: {kw}" if f else "weight must have at least 1 filter (dim 0)")
        raise GeometryError(f"conv2d: {what} (weight shape {weight.shape})")
    if f % groups:
        raise GeometryError(f"conv2d: weight has {plural(f, 'filter')}, not divisible by "
                            f"groups={groups} (weight shape {weight.shape})")
    if c != cg * groups:
        raise GeometryError(f"conv2d: input has {plural(c, 'channel')} but weight expects "
                            f"{cg * groups} (weight shape {weight.shape}, groups={groups}; input "
                            f"shape {input.shape})")
    if bias is not None and bias._data.shape != (f,):
        raise GeometryError(f"conv2d: bias must have shape ({f},) for a weight of shape "
                            f"{weight.shape}, got {bias.shape}")
    pads = _conv_padding(padding, (kh, kw), dilation, stride)
    try:
        out_hw = (conv_output_size("conv2d", h, kh, stride[0], pads[0], pads[1], dilation[0], "height"),
                  conv_output_size("conv2d", w, kw, stride[1], pads[2], pads[3], dilation[1], "width"))
    except GeometryError as error:
        raise GeometryError(f"{error} (input shape {input.shape}, weight shape "
                            f"{weight.shape})") from None
    if not batched:  # one image: a batch of one, by a reshape the gradient flows back through
        input = input.reshape(1, *input.shape)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = Conv2d.apply(*parents, stride=stride, padding=pads, dilation=dilation, groups=groups,
                       out_hw=out_hw)
    return out if batched else out.reshape(out.shape[1:])


# ---- transposed convolution -------------------------------------------------------------------
class ConvTranspose2d(Node):
    """out = conv_transpose(x, w) + b, the adjoint of conv2d in its input (conv2d's input
    gradient, Conv2dInputGrad, with a bias); it is linear in x and in w:
    ∂L/∂x = conv(G, w),  ∂L/∂w = correlate(G, x),  ∂L/∂b = Σ G

    ``window_cells((n, f, r, q))``: what that output cell read, a ``WindowCell`` per input
    channel of its group and tap (i, j), in that order: the input cell (n, c, h, w) whose
    window of the adjoint conv2d reads (r, q) through tap (i, j) — r = h·s - p + i·d — and the
    weight cell (c, f's index within its group, i, j); a tap that meets the zeros between or
    around the input cells has no input cell (None) and padding=True."""

    weight_input = 1  # parents[1] is the kernel (pictures ask)
    spreads = True  # its pictures: conv2d's, input and output exchanged (fan_in asks)
    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, weight, bias=None, *, stride, padding, output_padding, dilation, groups):
        ctx.save_for_backward(x=x, weight=weight)
        conv, reached, size = _adjoint_conv(x.shape[2:], weight.shape[2:], stride, padding,
                                            output_padding, dilation)
        out = conv2d_input_grad(x, weight, reached, groups=groups, **conv)
        if reached != size:  # rows / columns past every window's reach (_adjoint_conv): zeros
            beyond = (size[0] - reached[0], size[1] - reached[1])
            out = np.pad(out, ((0, 0), (0, 0), (0, beyond[0]), (0, beyond[1])))
        if bias is not None:
            out += bias.reshape(1, -1, 1, 1)  # (in place: a kernel's result is fresh memory)
        return out

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        a, needs = ctx.attrs, ctx.needs_input_grad
        conv, reached, size = _adjoint_conv(x.shape[2:], weight.shape[2:], a["stride"],
                                            a["padding"], a["output_padding"], a["dilation"])
        groups = a["groups"]
        # (the windows see G where they reach; beyond, output_padding's zeros are constant)
        read = grad if reached == size else grad[:, :, :reached[0], :reached[1]]
        grad_x = Conv2d.call(read, weight, groups=groups, **conv) if needs[0] else None
        grad_w = Conv2dWeightGrad.call(read, x, kernel_size=weight.shape[2:], groups=groups,
                                       **conv) if needs[1] else None
        grad_b = grad.sum(axis=(0, 2, 3)) if len(needs) > 2 and needs[2] else None
        return (grad_x, grad_w, grad_b)[:len(needs)]

    def window_cells(self, out_cell) -> list:
        n, f, r, q = out_cell
        (channels, per_group, kh, kw), (h, w) = self.parents[1].shape, self.parents[0].shape[2:]
        a = self.attrs
        group, within = divmod(f, per_group)
        first = group * (channels // a["groups"])
        cells = []
        for c in range(first, first + channels // a["groups"]):
            for i in range(kh):
                for j in range(kw):
                    at = [_transposed_source(*axis) for axis in zip(
                        (r, q), (i, j), a["stride"], a["padding"], a["dilation"], (h, w))]
                    inside = None not in at
                    cells.append(WindowCell((n, c, *at) if inside else None, (c, within, i, j),
                                            not inside))
        return cells

    def cells_reading(self, in_cell) -> list:
        """(output cell, weight cell) of every output input cell (n, c, h, w) is spread onto: row
        h·s - p + i·d through tap i, where that lies in the output (fan_in asks)."""
        n, c, h, w = in_cell
        (channels, per_group, kh, kw), a = self.parents[1].shape, self.attrs
        size = [_transposed_size(*axis) for axis in zip(self.parents[0].shape[2:], (kh, kw), a["stride"],
                                                        a["padding"], a["output_padding"], a["dilation"])]
        first = c // (channels // a["groups"]) * per_group
        cells = []
        for f in range(first, first + per_group):
            for i in range(kh):
                for j in range(kw):
                    r, q = (at * s - p + k * d for at, k, s, p, d in
                            zip((h, w), (i, j), a["stride"], a["padding"], a["dilation"]))
                    if 0 <= r < size[0] and 0 <= q < size[1]:
                        cells.append(((n, f, r, q), (c, f - first, i, j)))
        return cells

    def channel_groups(self) -> tuple:
        """(input channels, output channels) of each of the ``groups`` (fan_in asks)."""
        channels, per_group = self.parents[1].shape[:2]
        return channels // self.attrs["groups"], per_group

    def padding_read(self) -> tuple:
        """(0, 0): its padding crops its output, and no padding is read around its input."""
        return 0, 0


def _transposed_source(at, k, stride, padding, dilation, size):
    """The input row (or column) that tap ``k`` of a transposed convolution brings onto output
    row ``at`` — the h with h·s - p + k·d = at — or None where none does (between two strided
    input cells, or past the input's border)."""
    h, between = divmod(at + padding - k * dilation, stride)
    return h if not between and 0 <= h < size else None


def _transposed_size(size, kernel, stride, padding, output_padding, dilation) -> int:
    """PyTorch's output length along an axis: (size - 1)·s - 2p + d·(k - 1) + output_padding + 1"""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def _adjoint_conv(in_hw, kernel, stride, padding, output_padding, dilation) -> tuple:
    """(geometry, reached, size): the conv2d whose input gradient this transposed convolution
    is — its stride, padding (top, bottom, left, right), dilation and out_hw, ``in_hw`` —
    and, along each axis, how much of the output its windows cover and the output's length.

    That conv2d reads an image of the output's size padded by p on top and by p minus
    output_padding at the bottom, which gives back exactly ``in_hw`` windows. Where
    output_padding exceeds p, the padding stops at 0 and the output's last output_padding - p
    rows lie past every window: the conv2d reads only the ``reached`` ones, the rest are 0."""
    pads, reached, size = [], [], []
    for n, k, s, p, extra, d in zip(in_hw, kernel, stride, padding, output_padding, dilation):
        length = _transposed_size(n, k, s, p, extra, d)
        pads += [p, max(p - extra, 0)]
        reached.append(length - max(extra - p, 0))
        size.append(length)
    geometry = dict(stride=stride, padding=tuple(pads), dilation=dilation, out_hw=tuple(in_hw))
    return geometry, tuple(reached), tuple(size)


def _transposable_operands(op: str, input, weight, bias) -> tuple:
    """Tensors, as torch's: an input of floats or int64 (its slow_conv_transpose2d has no
    kernel for bool or smaller ints), a weight of the input's dtype, and a bias of any dtype
    torch adds onto that output (a float bias onto int64 output, or a complex one: no)."""
    input, weight = tensor_arg(op, "input", input), tensor_arg(op, "weight", weight)
    bias = None if bias is None else tensor_arg(op, "bias", bias)
    dtype = input._data.dtype
    if dtype.kind != "f" and dtype != np.int64:
        raise NotImplementedError(
            f"{op}: input has dtype {dtype} (\"{op}\" not implemented for "
            f"'{_TORCH_NAMES.get(dtype.name, dtype)}'); convert it with input.float() (or "
            f"input.long())")
    check_same_dtype(op, input, weight)
    if bias is not None and bias._data.dtype != dtype and not (
            bias._data.dtype.kind in "biu" or bias._data.dtype.kind == dtype.kind == "f"):
        raise RuntimeError(f"{op}: bias has dtype {bias._data.dtype}, which cannot be cast to "
                           f"the output's dtype {dtype} (the input's)")
    return input, weight, bias


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transposed convolution of ``input`` (N, C_in, H, W), or one unbatched image
    (C_in, H, W), with ``weight`` (C_in, C_out/groups, kh, kw), like torch: each input pixel
    spreads its value times the kernel onto the output, windows ``stride`` apart — conv2d's
    input gradient, so that conv_transpose2d(conv2d's output shape) has conv2d's input shape.
    ``output_padding`` (< stride or dilation) adds rows/columns at the bottom/right, picking
    one of the input sizes a strided conv2d maps onto the same output size."""
    op = "conv_transpose2d"
    input, weight, bias = _transposable_operands(op, input, weight, bias)
    batched = check_batched(op, input._data)
    check_4d(op, "weight", weight._data)
    stride = pair(op, "stride", stride, single=True)
    padding = pair(op, "padding", padding, minimum=0, single=True)
    output_padding = pair(op, "output_padding", output_padding, minimum=0, single=True)
    dilation = pair(op, "dilation", dilation, single=True)
    groups = check_dimension(op, "groups", groups, minimum=1)
    c, h, w = input._data.shape[-3:]
    c_in, c_out_per_group, kh, kw = weight._data.shape
    if 0 in weight._data.shape:
        raise GeometryError(f"{op}: weight must be non-empty, (in_channels, out_channels/groups, "
                            f"kh, kw) all at least 1, got weight of shape {weight.shape}")
    if c_in % groups:
        raise GeometryError(f"{op}: weight's in_channels, {c_in}, is not divisible by groups="
                            f"{groups} (weight shape {weight.shape}, laid out (in_channels, "
                            f"out_channels/groups, kh, kw))")
    if c != c_in:
        raise GeometryError(f"{op}: input has {plural(c, 'channel')} but weight expects {c_in} "
                            f"(weight shape {weight.shape}, laid out (in_channels, "
                            f"out_channels/groups, kh, kw); input shape {input.shape})")
    if h == 0 or w == 0:
        raise GeometryError(f"{op}: input must have a non-zero height and width (only the batch "
                            f"may be empty), got input of size {list(input.shape)}")
    if bias is not None and bias._data.shape != (c_out_per_group * groups,):
        raise GeometryError(f"{op}: bias must have shape ({c_out_per_group * groups},), one per "
                            f"output channel, for a weight of shape {weight.shape} and groups="
                            f"{groups}, got {bias.shape}")
    if any(extra >= max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise GeometryError(f"{op}: output_padding must be smaller than either stride or "
                            f"dilation along each axis, got output_padding={output_padding}, "
                            f"stride={stride}, dilation={dilation}")
    size = [_transposed_size(*axis) for axis in zip((h, w), (kh, kw), stride, padding,
                                                    output_padding, dilation)]
    if min(size) < 1:
        raise GeometryError(f"{op}: the output size {tuple(size)} is too small: (size - 1)·stride"
                            f" - 2·padding + dilation·(kernel - 1) + output_padding + 1 must be "
                            f"at least 1, for an input of size ({h}, {w}), kernel ({kh}, {kw}), "
                            f"stride={stride}, padding={padding}, dilation={dilation}, "
                            f"output_padding={output_padding}")
    if not batched:  # one image: a batch of one, by a reshape the gradient flows back through
        input = input.reshape(1, *input.shape)
    if bias is not None and bias._data.dtype != input._data.dtype:
        bias = bias.to(input.dtype)  # (as torch: a cast, which takes the gradient back)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = ConvTranspose2d.apply(*parents, stride=stride, padding=padding,
                                output_padding=output_padding, dilation=dilation, groups=groups)
    return out if batched else out.reshape(out.shape[1:])


# ---- unfold (im2col) and fold (col2im) ----------------------------------------------------------
class Unfold(Node):
    """cols = im2col(x): every window's pixels as one column;  ∂L/∂x = fold(G), each entry's
    gradient added back onto the pixel it was read from (linear: it saves nothing)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, *, kernel_size, dilation, padding, stride, blocks):
        (ph, pw), (n, c, h, w) = padding, x.shape
        ctx.input_hw = (h, w)
        cols = im2col(x, kernel_size, stride, (ph, ph, pw, pw), dilation, blocks)
        return cols.reshape(n, c * kernel_size[0] * kernel_size[1], blocks[0] * blocks[1])

    def backward(ctx, grad):
        return Fold.call(grad, output_hw=ctx.input_hw, **ctx.attrs)


class Fold(Node):
    """x = col2im(cols): each column's entries added onto the pixels of its window (a pixel in
    several windows collects the sum);  ∂L/∂cols = unfold(G) (linear: it saves nothing)"""

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, cols, *, output_hw, kernel_size, dilation, padding, stride, blocks):
        (kh, kw), (ph, pw) = kernel_size, padding
        # (the channel count spelt out, not -1: a batch of 0 has no size to divide)
        cols = cols.reshape(cols.shape[0], cols.shape[1] // (kh * kw), kh, kw, *blocks)
        return col2im(cols, output_hw, stride, (ph, ph, pw, pw), dilation)

    def backward(ctx, grad):
        a = ctx.attrs
        return Unfold.call(grad, kernel_size=a["kernel_size"], dilation=a["dilation"],
                           padding=a["padding"], stride=a["stride"], blocks=a["blocks"])


def _block_args(op, kernel_size, dilation, padding, stride) -> dict:
    return dict(kernel_size=pair(op, "kernel_size", kernel_size),
                dilation=pair(op, "dilation", dilation),
                padding=pair(op, "padding", padding, minimum=0),
                stride=pair(op, "stride", stride))


def _blocks(image_hw, kernel_size, dilation, padding, stride) -> tuple:
    """How many windows fit along each axis (may be ≤ 0: the callers say why that is wrong)."""
    return tuple((size + 2 * p - d * (k - 1) - 1) // s + 1
                 for size, k, d, p, s in zip(image_hw, kernel_size, dilation, padding, stride))


def _check_floating(op: str, x: Tensor) -> None:
    """Floats, or bools, as torch's im2col and col2im (which refuse integers: 'Long')."""
    if x.dtype.kind not in "fb":
        raise NotImplementedError(f"{op}: not implemented for dtype {x.dtype}; use a floating "
                                  f"tensor, e.g. input.float()")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """PyTorch's F.unfold (im2col): (N, C, H, W) → (N, C·kh·kw, L), every sliding window's
    pixels as one column, L windows in row-major order; (C, H, W) → (C·kh·kw, L)."""
    input = tensor_arg("unfold", "input", input)
    batched = check_batched("unfold", input._data, low_rank_error=DimensionError)
    _check_floating("unfold", input)
    if 0 in input.shape[-3:]:
        raise GeometryError(f"unfold: expected non-zero sizes for the channel and spatial "
                            f"dimensions of input, got input of size {list(input.shape)}")
    args = _block_args("unfold", kernel_size, dilation, padding, stride)
    blocks = _blocks(input.shape[-2:], **args)
    if min(blocks) < 1:
        raise GeometryError(
            f"unfold: Given input with spatial size {tuple(input.shape[-2:])}, kernel_size="
            f"{args['kernel_size']}, dilation={args['dilation']}, padding={args['padding']}, "
            f"calculated shape of the array of sliding blocks as {tuple(max(b, 0) for b in blocks)}"
            f", but its components must be at least one.")
    if not batched:
        input = input.reshape(1, *input.shape)
    out = Unfold.apply(input, blocks=blocks, **args)
    return out if batched else out.reshape(out.shape[1:])


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """PyTorch's F.fold (col2im), the adjoint of unfold: (N, C·kh·kw, L) → (N, C, *output_size),
    each column added onto the pixels of its window; (C·kh·kw, L) → (C, *output_size)."""
    input = tensor_arg("fold", "input", input)
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise GeometryError(f"Expected 2D (unbatched) or 3D (batched) input to fold, with "
                            f"non-zero sizes but a batch's, but got input of size: "
                            f"{list(input.shape)}")
    _check_floating("fold", input)
    args = _block_args("fold", kernel_size, dilation, padding, stride)
    output_hw = pair("fold", "output_size", output_size)
    (kh, kw), (rows, length) = args["kernel_size"], input.shape[-2:]
    if rows % (kh * kw):
        raise GeometryError(f"fold: expected size of input's dimension {input.ndim - 2} to be "
                            f"divisible by the product of kernel_size, but got input.size("
                            f"{input.ndim - 2})={rows} and kernel_size={(kh, kw)}")
    blocks = _blocks(output_hw, **args)
    if blocks[0] < 1 or blocks[1] < 1 or blocks[0] * blocks[1] != length:
        raise GeometryError(
            f"fold: Given output_size={output_hw}, kernel_size={(kh, kw)}, dilation="
            f"{args['dilation']}, padding={args['padding']}, stride={args['stride']}, expected "
            f"size of input's dimension {input.ndim - 1} to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size({input.ndim - 1})={length}.")
    batched = input.ndim == 3
    if not batched:
        input = input.reshape(1, *input.shape)
    out = Fold.apply(input, output_hw=output_hw, blocks=blocks, **args)
    return out if batched else out.reshape(out.shape[1:])



# ---- 1-D convolutions: the 2-D ones over a height of one -----------------------------------------
# A sequence (N, C, L) is an image (N, C, 1, L), and conv1d is conv2d over it with a kernel one
# row high. Conv1d is one node of the graph, named for what the user called, whose arguments are
# the 1-D ones (what a picture shows); its forward and backward are Conv2d's, on the arrays with
# that unit height added and taken off again (reshapes: views, no copies), so the derivatives —
# to any order — are Conv2d's.
def ntuple(op: str, name: str, value, n: int, minimum: int = 1) -> tuple:
    """An int or a sequence of ``n`` ints (or of one, as torch's convs and pools also take),
    checked, as a tuple of ``n``: an element that is not an int is torch's TypeError, a wrong
    length or a size below ``minimum`` its RuntimeError (here GeometryError)."""
    if type(value) is int and value >= minimum:  # the common case
        return (value,) * n
    try:
        values = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    except TypeError:  # not a sequence at all, e.g. 2.5
        values = (value,)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
               for v in values):
        raise TypeError(f"{op}: {name} must be an int or a tuple of {plural(n, 'int')}, got "
                        f"{value!r}")
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise GeometryError(f"{op}: expected {name} to be a single integer value or a list of "
                            f"{n} values to match the {n}-D windows, but got {name}={value!r}")
    if any(v < minimum for v in values):
        raise GeometryError(f"{op}: {name} must be at least {minimum}, got {value!r}")
    return tuple(int(v) for v in values)


def check_rank(op: str, x: Tensor, spatial: int) -> bool:
    """True for a batch (N, C, *spatial axes), False for one unbatched sample (C, *spatial axes),
    torch's RuntimeError for any other rank."""
    if x._data.ndim not in (spatial + 1, spatial + 2):
        raise GeometryError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                            f"input to {op}, but got input of size: {list(x.shape)}")
    return x._data.ndim == spatial + 2


def with_height(value):
    """(N, C, L) as (N, C, 1, L): an array (a view), or under create_graph a Tensor (a recorded
    reshape, which the gradient flows back through); None stays None."""
    return value if value is None else value.reshape((*value.shape[:2], 1, *value.shape[2:]))


def without_height(value):
    """(N, C, 1, L) as (N, C, L); anything else (a bias's gradient, None) as it is."""
    return value if value is None or value.ndim != 4 else \
        value.reshape((*value.shape[:2], value.shape[3]))


def backward_in_plane(ctx, plane_op, grad):
    """The gradients of a 1-D node ``ctx`` that is ``plane_op`` (its 2-D op) over a height of one:
    ``plane_op.backward`` run by a stand-in 2-D node — the 2-D geometry (``ctx.in_plane``), what
    ``ctx`` saved and ``grad``, each with the unit height — and its gradients without it. On
    Tensors (create_graph) every step is recorded: the reshapes and the 2-D backward's own nodes
    (Conv2dInputGrad, RouteToArgmax, ...), so that it differentiates again."""
    saved = dict(zip(ctx.saved, ctx.saved_tensors))  # (saved_tensors refuses once released)
    plane = plane_op.__new__(plane_op)
    plane.attrs, plane.needs_input_grad = ctx.in_plane(ctx.attrs), ctx.needs_input_grad
    plane.saved = {name: with_height(value) for name, value in saved.items()}
    grads = plane_op.backward(plane, with_height(grad))
    return tuple(map(without_height, grads)) if isinstance(grads, tuple) else without_height(grads)


class Conv1d(Conv2d):
    """out = w ⋆ x + b along L, Conv2d over a height of one:
    ∂L/∂x = conv_transpose(G, w),  ∂L/∂w = correlate(x, G),  ∂L/∂b = Σ G

    Arguments: ``stride``, ``dilation`` (1-tuples), ``padding`` (left, right), ``groups`` and
    ``out_hw`` (1, output length), the plane it computes."""

    # fan_in draws an op's cells on H×W planes: a 1-D op names none (its pictures are the graph's)
    window_cells = cells_reading = channel_groups = padding_read = None

    @staticmethod
    def in_plane(line: dict) -> dict:
        """Conv2d's arguments for these: a unit height, read whole (no padding, stride 1)."""
        (left, right), (s,), (d,) = line["padding"], line["stride"], line["dilation"]
        return dict(stride=(1, s), padding=(0, 0, left, right), dilation=(1, d),
                    groups=line["groups"], out_hw=line["out_hw"])

    def forward(ctx, x, weight, bias=None, **line):
        out = Conv2d.forward(ctx, with_height(x), with_height(weight), bias, **ctx.in_plane(line))
        ctx.save_for_backward(x=x, weight=weight)  # the 1-D arrays themselves, as PyTorch saves
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, Conv2d, grad)


class ConvTranspose1d(ConvTranspose2d):
    """out = conv_transpose(x, w) + b along L, ConvTranspose2d over a height of one (conv1d's
    input gradient):  ∂L/∂x = conv(G, w),  ∂L/∂w = correlate(G, x),  ∂L/∂b = Σ G

    Arguments: ``stride``, ``padding``, ``output_padding``, ``dilation`` (1-tuples), ``groups``."""

    window_cells = cells_reading = channel_groups = padding_read = None  # (as Conv1d's)

    @staticmethod
    def in_plane(line: dict) -> dict:
        """ConvTranspose2d's arguments for these: a unit height, neither padded nor cropped."""
        return dict(stride=(1, *line["stride"]), padding=(0, *line["padding"]),
                    output_padding=(0, *line["output_padding"]), dilation=(1, *line["dilation"]),
                    groups=line["groups"])

    def forward(ctx, x, weight, bias=None, **line):
        out = ConvTranspose2d.forward(ctx, with_height(x), with_height(weight), bias,
                                      **ctx.in_plane(line))
        ctx.save_for_backward(x=x, weight=weight)  # the 1-D arrays themselves, as PyTorch saves
        return without_height(out)

    def backward(ctx, grad):
        return backward_in_plane(ctx, ConvTranspose2d, grad)


def _check_conv1d_weight(op: str, weight: Tensor) -> None:
    if weight._data.ndim != 3:
        raise GeometryError(f"{op}: weight must be 3-D, (out_channels, in_channels/groups, "
                            f"kernel_size) for conv1d, (in_channels, out_channels/groups, "
                            f"kernel_size) for conv_transpose1d, got shape {weight.shape}")


def _check_length(op: str, input: Tensor) -> None:
    if input._data.shape[-1] == 0 and all(input._data.shape[:-1]):  # (torch's rule)
        raise GeometryError(f"{op}: only an empty batch or no channels may go with a length of "
                            f"0, got input of size {list(input.shape)}")


def one_sample_as_batch(input: Tensor, batched: bool) -> Tensor:
    """One unbatched (C, L) sequence as a batch of one, by a reshape the gradient flows back
    through."""
    return input if batched else input.reshape(1, *input.shape)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Cross-correlate ``input`` (N, C, L), or one unbatched sequence (C, L), with ``weight``
    (F, C/groups, k), like torch: conv2d over a height of one, one Conv1d node. ``padding`` is
    an int, a 1-tuple, "valid" or "same". Integer tensors convolve too (exactly, as torch's)."""
    op = "conv1d"
    input, weight, bias = product_operands(op, input, weight, bias)
    batched = check_rank(op, input, 1)
    _check_conv1d_weight(op, weight)
    (stride,), (dilation,) = ntuple(op, "stride", stride, 1), ntuple(op, "dilation", dilation, 1)
    groups = check_dimension(op, "groups", groups, minimum=1)
    (f, cg, k), (c, length) = weight._data.shape, input._data.shape[-2:]
    if f < 1 or k < 1:  # (a filter of no input channels is a sum of nothing, as torch's)
        raise GeometryError(f"{op}: weight must have at least 1 filter and a kernel of at least "
                            f"1 cell, got weight of shape {weight.shape}")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise GeometryError(f"{op}: padding must be an int, a 1-tuple, 'valid' or 'same', "
                                f"got {padding!r}")
        if padding == "same" and stride != 1:
            raise GeometryError(f"{op}: padding='same' is not supported for strided "
                                f"convolutions, got stride={stride}")
        total = dilation * (k - 1) if padding == "same" else 0  # (the odd cell on the right)
        pads = (total // 2, total - total // 2)
    else:
        (pad,) = ntuple(op, "padding", padding, 1, minimum=0)
        pads = (pad, pad)
    if f % groups or c != cg * groups:
        raise GeometryError(f"{op}: given groups={groups} and weight of size {list(weight.shape)}"
                            f", expected input {list(input.shape)} to have {cg * groups} "
                            f"channels and the weight's {f} filters to divide by groups")
    _check_length(op, input)
    if bias is not None and bias._data.shape != (f,):
        raise GeometryError(f"{op}: bias must have shape ({f},) for a weight of shape "
                            f"{weight.shape}, got {bias.shape}")
    try:
        out_length = conv_output_size(op, length, k, stride, *pads, dilation, "length")
    except GeometryError as error:
        raise GeometryError(f"{error} (input shape {input.shape}, weight shape "
                            f"{weight.shape})") from None
    input = one_sample_as_batch(input, batched)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = Conv1d.apply(*parents, stride=(stride,), padding=pads, dilation=(dilation,),
                       groups=groups, out_hw=(1, out_length))
    return out if batched else out.reshape(out.shape[1:])


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transposed convolution of ``input`` (N, C_in, L), or (C_in, L), with ``weight``
    (C_in, C_out/groups, k), like torch: conv_transpose2d over a height of one, one
    ConvTranspose1d node — conv1d's input gradient."""
    op = "conv_transpose1d"
    input, weight, bias = _transposable_operands(op, input, weight, bias)
    batched = check_rank(op, input, 1)
    _check_conv1d_weight(op, weight)
    (stride,), (dilation,) = ntuple(op, "stride", stride, 1), ntuple(op, "dilation", dilation, 1)
    (padding,) = ntuple(op, "padding", padding, 1, minimum=0)
    (output_padding,) = ntuple(op, "output_padding", output_padding, 1, minimum=0)
    groups = check_dimension(op, "groups", groups, minimum=1)
    (c_in, c_out_per_group, k), (c, length) = weight._data.shape, input._data.shape[-2:]
    if 0 in weight._data.shape:
        raise GeometryError(f"{op}: weight must be non-empty, (in_channels, out_channels/groups, "
                            f"kernel_size) all at least 1, got weight of shape {weight.shape}")
    if c_in % groups or c != c_in:
        raise GeometryError(f"{op}: given groups={groups} and weight of size {list(weight.shape)}"
                            f" (laid out (in_channels, out_channels/groups, kernel_size)), "
                            f"expected input {list(input.shape)} to have {c_in} "
                            f"channels, divisible by groups")
    _check_length(op, input)
    if bias is not None and bias._data.shape != (c_out_per_group * groups,):
        raise GeometryError(f"{op}: bias must have shape ({c_out_per_group * groups},), one per "
                            f"output channel, for a weight of shape {weight.shape} and groups="
                            f"{groups}, got {bias.shape}")
    if output_padding >= max(stride, dilation):
        raise GeometryError(f"{op}: output padding must be smaller than either stride or "
                            f"dilation, got output_padding={output_padding}, stride={stride}, "
                            f"dilation={dilation}")
    size = _transposed_size(length, k, stride, padding, output_padding, dilation)
    if size < 1:
        raise GeometryError(f"{op}: the output length {size} is too small: (length - 1)·stride "
                            f"- 2·padding + dilation·(kernel - 1) + output_padding + 1 must be "
                            f"at least 1, for an input of length {length}, kernel {k}, stride="
                            f"{stride}, padding={padding}, dilation={dilation}, output_padding="
                            f"{output_padding}")
    input = one_sample_as_batch(input, batched)
    if bias is not None and bias._data.dtype != input._data.dtype:
        bias = bias.to(input.dtype)  # (as torch: a cast, which takes the gradient back)
    parents = (input, weight) if bias is None else (input, weight, bias)
    out = ConvTranspose1d.apply(*parents, stride=(stride,), padding=(padding,),
                                output_padding=(output_padding,), dilation=(dilation,),
                                groups=groups)
    return out if batched else out.reshape(out.shape[1:])
