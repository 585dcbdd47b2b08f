"""Faster convolution kernels, each a replacement for a reference kernel of ops/conv.py.

ops/conv.py computes a convolution as one product per group of the weights and the input's
columns (``im2col``), and its gradients by two more products, the input's added back onto the
pixels by ``col2im``. The replacements here compute the same numbers:

    conv2d_forward       the columns made and multiplied a chunk of images at a time
    conv2d_input_grad    col2im(Wᵀ G) without the k·k-times-larger matrix, or, at stride 1,
                         as a convolution of G (``by_correlation``)
    conv2d_weight_grad   G · colsᵀ summed a chunk of images at a time
    conv2d_backward      both of them sharing one copy of G, or one set of G's columns

A route is chosen by shapes (thresholds and ratios below, each measured: see
benchmarks/README.md) — and, for the correlation, by whether w and ∂L/∂W came out finite
(``by_correlation``) — so that every route gives the reference's sums, inf and NaN included,
up to the order of the additions.

THE INVARIANT that keeps the reused memory safe: a kernel only reads its arguments; every
temporary (columns, padded copies, G's copy, the buffers of the two-pass sums) is a pool array
(memory.py) that no one else can reach and that dies when the kernel returns; what a kernel
returns is fresh memory of its own (a pool array, where large), which the pool hands out again
only once no array made from it is left anywhere.
"""
import functools

import numpy as np

from ..kernels import replaces
from ..windows import tap, windows_view
from .memory import take, zeros
from .quiet import quiet


def pad(x, top, bottom, left, right, value=0) -> np.ndarray:
    """``x`` with a border of ``value``; from the pool (or ``x`` itself when no padding)."""
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    padded = take((n, c, h + top + bottom, w + left + right), x.dtype)
    padded.fill(value)
    padded[:, :, top: top + h, left: left + w] = x
    return padded


# ---- the columns ------------------------------------------------------------------------------
# channel_major_columns copies in two passes from this many output rows (C·kh·kw·N·Ho) up;
# below, in one.
TWO_PASS_ROWS = 4096


def channel_major_columns(x, kernel, stride, dilation, out_hw, out=None,
                          padding=(0, 0, 0, 0)) -> np.ndarray:
    """im2col of ``x`` with ``padding`` (top, bottom, left, right) of zeros around it, laid
    out channel-major, (C, kh, kw, N, Ho, Wo) (into ``out``, else a pool array).
    (Channel-major because a convolution's output, and so the next one's input, is a (C, N,
    H, W) array seen as (N, C, H, W): the copy then reads it in memory order.)

    Trick: one copy straight out of the windows of a padded copy moves each output row, Wo
    numbers, on its own, and NumPy's per-row cost dominates where there are many short rows:
    from TWO_PASS_ROWS of them up the copy takes two passes, first each row shifted by each
    column tap j, ``rows[c, j, n, hp, :]`` (kh times fewer rows; ``shifted_rows``), then for
    each row tap i the block of rows it starts at, Ho·Wo numbers in a row on both sides. The
    second pass's extra calls are a fixed cost, so below TWO_PASS_ROWS rows one pass is
    cheaper (measured: see benchmarks/README.md).
    """
    n, c = x.shape[:2]
    (kh, kw), (ho, wo), (sh, _), (dh, _) = kernel, out_hw, stride, dilation
    cols = take((c, kh, kw, n, ho, wo), x.dtype) if out is None else out
    if c * kh * kw * n * ho < TWO_PASS_ROWS:
        padded = pad(x, *padding)
        np.copyto(cols, windows_view(padded, kernel, stride, dilation, out_hw).transpose(1, 2, 3, 0, 4, 5))
        return cols
    rows = shifted_rows(x, kw, stride[1], dilation[1], padding, wo)
    for i in range(kh):
        np.copyto(cols[:, i], rows[:, :, :, i * dh: i * dh + (ho - 1) * sh + 1: sh])
    return cols


# shifted_rows writes the padding into its rows itself from this many bytes of x per column
# tap up; below, a padded copy is made first (see shifted_rows).
FOLD_PADDING_MIN_BYTES = 64 << 10


def shifted_rows(x, kw, sw, dw, padding, wo) -> np.ndarray:
    """The first pass of channel_major_columns: ``rows[c, j, n, y, q]`` = the padded input at
    row y, column q·sw + j·dw (a pool array).

    Trick: from FOLD_PADDING_MIN_BYTES of x per column tap up it is read straight from ``x``:
    each column tap's copy lands inside the padding's rows and columns, which are zeroed, so no
    padded copy of x is made. On a small x per column tap the zeroing's extra calls cost more
    than the padded copy saves (measured: see benchmarks/README.md), so below the threshold,
    and without padding, one copy of a padded copy's shifted views."""
    n, c, h, w = x.shape
    top, bottom, left, right = padding
    if not any(padding) or x.nbytes < kw * FOLD_PADDING_MIN_BYTES:
        padded = pad(x, *padding)
        hp = padded.shape[2]
        rows = take((c, kw, n, hp, wo), x.dtype)
        shifted = windows_view(padded, (1, kw), (1, sw), (1, dw), (hp, wo))
        np.copyto(rows, shifted[:, :, 0].transpose(1, 2, 0, 3, 4))
        return rows
    rows = take((c, kw, n, h + top + bottom, wo), x.dtype)
    rows[..., :top, :] = 0
    rows[..., top + h:, :] = 0
    inside = rows[..., top: top + h, :]
    channel_major = x.transpose(1, 0, 2, 3)
    for j in range(kw):
        shift = j * dw - left  # column q of tap j reads x's column q·sw + shift
        first, stop = max(0, -(shift // sw)), min(wo, (w - 1 - shift) // sw + 1)
        inside[:, j, ..., :first] = 0
        inside[:, j, ..., max(first, stop):] = 0
        if stop > first:
            start = first * sw + shift
            np.copyto(inside[:, j, ..., first:stop],
                      channel_major[..., start: start + (stop - first - 1) * sw + 1: sw])
    return rows


# Columns are made and multiplied a few images at a time, this many bytes of them per chunk:
# a chunk's columns are still in cache when the product reads them, and the whole set never
# exists (measured: see benchmarks/README.md).
COLUMN_CHUNK_BYTES = 4 << 20


def image_chunks(shape, dtype, kernel, out_hw) -> list:
    """(start, stop) of the images whose columns make up each chunk, for images of ``shape``
    (N, C, ...) and ``dtype`` (a NumPy dtype; no chunk for an empty batch)."""
    n, c = shape[:2]
    per_image = c * kernel[0] * kernel[1] * out_hw[0] * out_hw[1] * dtype.itemsize
    if per_image * n <= COLUMN_CHUNK_BYTES:  # (the common case, spelt out: it runs per call)
        return [(0, n)] if n else []
    per_chunk = max(1, COLUMN_CHUNK_BYTES // per_image)
    return [(start, min(n, start + per_chunk)) for start in range(0, n, per_chunk)]


def column_chunks(x, kernel, stride, padding, dilation, groups, out_hw):
    """Yield (lo, hi, cols) for each chunk of images: their columns as (groups,
    C/groups·kh·kw, images·Ho·Wo), which are the columns lo:hi of the whole set.

    Trick: each chunk is padded on its own and its columns written over the previous chunk's,
    in one buffer: the whole set, or a padded copy of the whole input, never exists."""
    n, c = x.shape[:2]
    per_image = out_hw[0] * out_hw[1]
    chunks = image_chunks(x.shape, x.dtype, kernel, out_hw)
    rows = c * kernel[0] * kernel[1]
    if len(chunks) < 2:  # none (no image), or all the images at once: no buffer to share
        for start, stop in chunks:
            cols = channel_major_columns(x, kernel, stride, dilation, out_hw, padding=padding)
            yield start, stop * per_image, cols.reshape(groups, rows // groups, stop * per_image)
        return
    buffer = take((rows * (chunks[0][1] - chunks[0][0]) * per_image,), x.dtype)  # the largest
    for start, stop in chunks:
        cols = channel_major_columns(x[start:stop], kernel, stride, dilation, out_hw,
                                     buffer[:rows * (stop - start) * per_image].reshape(
                                         (c, *kernel, stop - start, *out_hw)), padding)
        # (the sizes spelt out, not -1: there may be no channels to divide by)
        yield start * per_image, stop * per_image, cols.reshape(
            groups, rows // groups, (stop - start) * per_image)


def grad_matrix(grad, groups) -> np.ndarray:
    """G as (groups, F/groups, N·Ho·Wo), in the column order of channel_major_columns (a pool
    array)."""
    f = grad.shape[1]
    grad_mat = take((f,) + grad.shape[:1] + grad.shape[2:], grad.dtype)
    np.copyto(grad_mat, grad.transpose(1, 0, 2, 3))
    return grad_mat.reshape(groups, f // groups, -1)


# ---- col2im(Wᵀ G) -------------------------------------------------------------------------------
def col2im_product(kernels, grad_mat, padded_shape, stride, dilation, out_hw) -> np.ndarray:
    """``col2im(Wᵀ @ G)`` onto the padded input, as (N, C, Hp, Wp).

    Trick: one tap at a time, the same sums without the k·k-times-larger matrix. ``kernels``
    is (groups, F/groups, C/groups, kh, kw) and ``grad_mat`` (groups, F/groups, N·Ho·Wo). Tap
    (i, j)'s block of Wᵀ @ G is ``W[..., i, j]ᵀ @ G``, which is added onto the pixels that tap
    read; only one tap's block (C × N·Ho·Wo) exists at a time, in a reused buffer. The sums
    run in the columns' own channel-major order, (C, N, H, W), so that each tap adds a
    contiguous block (adding into a transposed view is a strided pass, slower); the result is
    an (N, C, H, W) view of that array. At stride 1 the sums go faster in two passes
    (``col2im_in_two_passes``), and small products in one bincount (``col2im_small``).
    """
    groups, _, cg, kh, kw = kernels.shape
    n, c, hp, wp = padded_shape
    if c * kh * kw * grad_mat.shape[2] <= SMALL_PRODUCT and grad_mat.dtype.kind == "f":
        return col2im_small(kernels, grad_mat, padded_shape, stride, dilation, out_hw)
    if stride == (1, 1):
        return col2im_in_two_passes(kernels, grad_mat, padded_shape, dilation, out_hw)
    padded = zeros((c, n, hp, wp), grad_mat.dtype)
    block = take((groups, cg, grad_mat.shape[2]), grad_mat.dtype)
    for i in range(kh):
        for j in range(kw):
            np.matmul(kernels[:, :, :, i, j].swapaxes(1, 2), grad_mat, out=block)
            tap(padded, i, j, stride, dilation, out_hw)[...] += block.reshape(c, n, *out_hw)
    return padded.transpose(1, 0, 2, 3)


def col2im_in_two_passes(kernels, grad_mat, padded_shape, dilation, out_hw) -> np.ndarray:
    """``col2im(Wᵀ @ G)`` at stride 1, a chunk of images at a time.

    Trick: the chunk's Wᵀ @ G in one product, then added on in two passes, the mirror of
    channel_major_columns': first each row tap i onto a buffer of rows, ``rows[c, j, n,
    i·dh:, :] += (Wᵀ G)[c, i, j, n]`` — at stride 1 a block of Ho·Wo numbers in a row on both
    sides — then each column tap j onto the pixels, kh times fewer short rows than a tap at a
    time. The first tap of each pass is copied, not added, so only the rows no first tap
    reaches are zeroed. Faster than the loop over taps, whose many short rows each cost a
    NumPy call; not at stride 2, where the first pass's blocks are strided too and the loop
    over taps wins (measured: see benchmarks/README.md).
    """
    groups, fg, cg, kh, kw = kernels.shape
    n, c, hp, wp = padded_shape
    (ho, wo), (dh, dw) = out_hw, dilation
    chunks = image_chunks(padded_shape, grad_mat.dtype, (kh, kw), out_hw)
    largest = chunks[0][1] - chunks[0][0] if chunks else 0
    padded = take((c, n, hp, wp), grad_mat.dtype)
    product = take((groups, cg * kh * kw, largest * ho * wo), grad_mat.dtype)
    rows = take((c, kw, largest, hp, wo), grad_mat.dtype)
    weights = kernels.reshape(groups, fg, cg * kh * kw).swapaxes(1, 2)  # Wᵀ
    for lo, hi in chunks:
        block = product[:, :, :(hi - lo) * ho * wo]
        np.matmul(weights, grad_mat[:, :, lo * ho * wo: hi * ho * wo], out=block)
        block = block.reshape(c, kh, kw, hi - lo, ho, wo)
        chunk_rows, chunk = rows[:, :, :hi - lo], padded[:, lo:hi]
        chunk_rows[..., ho:, :] = 0
        np.copyto(chunk_rows[..., :ho, :], block[:, 0])
        for i in range(1, kh):
            chunk_rows[..., i * dh: i * dh + ho, :] += block[:, i]
        chunk[..., wo:] = 0
        np.copyto(chunk[..., :wo], chunk_rows[:, 0])
        for j in range(1, kw):
            chunk[..., j * dw: j * dw + wo] += chunk_rows[:, j]
    return padded.transpose(1, 0, 2, 3)


# Up to this many entries in Wᵀ @ G, col2im_product's loop over taps is mostly Python (for a
# 5×5 kernel, 25 small products and adds): col2im_small forms the whole product and adds it
# onto the pixels in one bincount. Above it the single bincount loses: its float64 copy of
# the product comes from fresh memory at every call, and page faults outweigh the Python saved
# (measured: see benchmarks/README.md).
SMALL_PRODUCT = 1 << 14


@functools.lru_cache(maxsize=64)
def column_pixels(padded_shape, kernel, stride, dilation, out_hw) -> np.ndarray:
    """For each entry of the columns (C, kh, kw, N, Ho, Wo), flattened, the flat index of the
    pixel it was read from in the channel-major padded array (C, N, Hp, Wp). Cached per
    geometry (a training loop asks for the same one every step), so read-only."""
    n, c, hp, wp = padded_shape
    pixels = np.arange(c * n * hp * wp).reshape(c, n, hp, wp).transpose(1, 0, 2, 3)
    index = windows_view(pixels, kernel, stride, dilation, out_hw).transpose(1, 2, 3, 0, 4, 5)
    index = index.ravel()  # (a copy: the view's entries in the columns' order)
    index.setflags(write=False)
    return index


def col2im_small(kernels, grad_mat, padded_shape, stride, dilation, out_hw) -> np.ndarray:
    """``col2im(Wᵀ @ G)`` for a small product: all of it at once, each entry added onto its
    pixel by one ``np.bincount`` (which sums in float64; the result is cast back)."""
    groups, fg, cg, kh, kw = kernels.shape
    n, c, hp, wp = padded_shape
    full = kernels.reshape(groups, fg, cg * kh * kw).swapaxes(1, 2) @ grad_mat  # (C·kh·kw, N·Ho·Wo)
    pixels = column_pixels(padded_shape, (kh, kw), stride, dilation, out_hw)
    sums = np.bincount(pixels, weights=full.ravel(), minlength=c * n * hp * wp)
    return sums.astype(grad_mat.dtype).reshape(c, n, hp, wp).transpose(1, 0, 2, 3)


def input_grad_from_matrix(grad_mat, weight, input_shape, stride, padding, dilation, groups,
                           out_hw) -> np.ndarray:
    """∂L/∂x = col2im(Wᵀ G), cropped to the input (copied out, so the sum goes back)."""
    f, _, kh, kw = weight.shape
    n, c, h, w = input_shape
    top, bottom, left, right = padding
    padded_shape = (n, c, h + top + bottom, w + left + right)
    kernels = weight.reshape(groups, f // groups, -1, kh, kw)
    grad_padded = col2im_product(kernels, grad_mat, padded_shape, stride, dilation, out_hw)
    grad_x = take(input_shape, grad_mat.dtype)
    np.copyto(grad_x, grad_padded[:, :, top: top + h, left: left + w])
    return grad_x


# ---- ∂L/∂x as a convolution of G ----------------------------------------------------------------
def correlates(stride, padding, dilation, kernel) -> bool:
    """Whether ∂L/∂x can be computed as a convolution of G (``by_correlation``):
    stride 1, and no side padded beyond the kernel's reach."""
    reach = [d * (k - 1) for d, k in zip(dilation, kernel)]
    top, bottom, left, right = padding
    return stride == (1, 1) and max(top, bottom) <= reach[0] and max(left, right) <= reach[1]


def correlation_pays(weight_shape, input_shape, out_hw, stride, padding, dilation,
                     weight_too=False) -> bool:
    """Whether to take ``by_correlation``: where it can (``correlates``) and where its columns,
    F·k·k per input pixel, are at most 1.5 times the products col2im_product forms, C·k·k per
    output pixel — else writing the columns costs more than the better GEMM shape saves — or
    2 times when ∂L/∂W comes from the same columns too (``weight_too``), which saves making
    x's columns again. The ratios are where the two routes crossed when timed against
    ``col2im_in_two_passes`` (measured: see benchmarks/README.md).
    """
    f, cg, kh, kw = weight_shape
    n, c, h, w = input_shape
    return correlates(stride, padding, dilation, (kh, kw)) \
        and f * h * w <= (2 if weight_too else 1.5) * c * out_hw[0] * out_hw[1]


def by_correlation(grad, weight, input_shape, padding, dilation, groups, x=None):
    """(∂L/∂x, ∂L/∂W) at stride 1 from one set of columns, those of G.

    Trick: ∂L/∂x is a convolution of G, padded by d·(k-1) - p on each side, with w rotated by
    180° and its two channel axes swapped (within each group): one product with K = F·k·k,
    where col2im_product makes k·k products with K = F, a shape BLAS runs at about half speed.
    Given the input ``x`` itself, ∂L/∂W (else None) comes from the same columns, x @ colsᵀ,
    tap (i, j) of filter f being column row (f, k-1-i, k-1-j) — the rotation again — which
    saves making x's columns (measured: see benchmarks/README.md). G's columns are made a
    chunk of images at a time (``column_chunks``).

    Safe for finite numbers only: G's border of zeros meets the weights (in ∂L/∂x) and x (in
    ∂L/∂W) in products the definition does not have, and 0·inf = NaN. So the callers take it
    for ∂L/∂x only when w is finite, and make ∂L/∂W again the plain way when it comes out
    non-finite (as any inf or NaN in x makes it).
    """
    f, cg, kh, kw = weight.shape
    n, c, h, w = input_shape
    (dh, dw), (top, bottom, left, right) = dilation, padding
    pads = (dh * (kh - 1) - top, dh * (kh - 1) - bottom, dw * (kw - 1) - left, dw * (kw - 1) - right)
    rotated = weight.reshape(groups, f // groups, cg, kh, kw)[..., ::-1, ::-1]
    kernels = rotated.swapaxes(1, 2).reshape(groups, cg, f // groups * kh * kw)
    grad_x = take((groups, cg, n * h * w), np.result_type(grad, weight))
    # ∂L/∂W as (groups, C/groups, F/groups·k·k), in the columns' row order
    sums = None if x is None else np.zeros(kernels.shape, np.result_type(grad, x))
    for lo, hi, cols in column_chunks(grad, (kh, kw), (1, 1), pads, dilation, groups, (h, w)):
        np.matmul(kernels, cols, out=grad_x[:, :, lo:hi])
        if sums is not None:  # this chunk's images of x as (groups, C/groups, pixels)
            rows = x[lo // (h * w): hi // (h * w)].transpose(1, 0, 2, 3).reshape(groups, cg, -1)
            sums += rows @ cols.swapaxes(1, 2)
    grad_x = grad_x.reshape(c, n, h, w).transpose(1, 0, 2, 3)
    if sums is None:
        return grad_x, None
    rotated_back = sums.reshape(groups, cg, f // groups, kh, kw)[..., ::-1, ::-1]
    return grad_x, rotated_back.swapaxes(1, 2).reshape(f, cg, kh, kw)


def weight_grad_from_matrix(x, grad_mat, kernel, stride, padding, dilation, groups, out_hw):
    """∂L/∂W = G · colsᵀ, summed a chunk of images at a time, each chunk's columns made from
    ``x`` (``column_chunks``: all of them at once could be most of a step's memory)."""
    fg = grad_mat.shape[1]  # filters per group
    grad_w = None
    for lo, hi, cols in column_chunks(x, kernel, stride, padding, dilation, groups, out_hw):
        product = grad_mat[:, :, lo:hi] @ cols.swapaxes(1, 2)
        grad_w = product if grad_w is None else np.add(grad_w, product, out=grad_w)
    if grad_w is None:  # an empty batch: a sum of nothing
        grad_w = np.zeros((groups, fg, x.shape[1] // groups * kernel[0] * kernel[1]),
                          np.result_type(grad_mat, x))
    return grad_w.reshape(groups * fg, -1, *kernel)


# ---- the replacements -------------------------------------------------------------------------
def silent(kernel):
    """``kernel`` run with NumPy's floating-point warnings off: inf - inf and 0·inf are NaN,
    silently, as in torch and in the references."""
    def run(*args, **kwargs):
        with quiet():
            return kernel(*args, **kwargs)

    run.__name__, run.__doc__ = kernel.__name__, kernel.__doc__
    return run


@replaces("conv2d_forward")
@silent
def conv2d_forward(x, weight, bias, stride, padding, dilation, groups, out_hw):
    """W · im2col(x) + b with the columns made and multiplied a chunk of images at a time
    (``column_chunks``): a chunk's columns are still in cache when the product reads them,
    and the whole set never exists. The output is an (N, F, Ho, Wo) view of the product's
    (F, N, Ho, Wo) pool array, the bias added into it in place (``out + bias`` would first
    touch another output-sized array of fresh memory, a page fault per page written;
    measured: see benchmarks/README.md)."""
    n = x.shape[0]
    f, cg, kh, kw = weight.shape
    kernels = weight.reshape(groups, f // groups, cg * kh * kw)
    product = take((groups, f // groups, n * out_hw[0] * out_hw[1]), np.result_type(x, weight))
    for lo, hi, cols in column_chunks(x, (kh, kw), stride, padding, dilation, groups, out_hw):
        np.matmul(kernels, cols, out=product[:, :, lo:hi])
    out = product.reshape(f, n, *out_hw).transpose(1, 0, 2, 3)
    if bias is not None:
        out += bias.reshape(1, f, 1, 1)
    return out


@replaces("conv2d_input_grad")
@silent
def conv2d_input_grad(grad, weight, input_hw, stride, padding, dilation, groups, out_hw):
    """col2im(Wᵀ G) by ``by_correlation`` where that pays (``correlation_pays``) and w is
    finite, else a tap at a time or in two passes (``col2im_product``), neither forming Wᵀ G
    whole."""
    input_shape = (grad.shape[0], weight.shape[1] * groups) + tuple(input_hw)
    if correlation_pays(weight.shape, input_shape, out_hw, stride, padding, dilation) \
            and np.isfinite(weight).all():
        return by_correlation(grad, weight, input_shape, padding, dilation, groups)[0]
    return input_grad_from_matrix(grad_matrix(grad, groups), weight, input_shape, stride,
                                  padding, dilation, groups, out_hw)


@replaces("conv2d_weight_grad")
@silent
def conv2d_weight_grad(x, grad, kernel_size, stride, padding, dilation, groups, out_hw):
    """G · im2col(x)ᵀ summed a chunk of images at a time (``weight_grad_from_matrix``)."""
    return weight_grad_from_matrix(x, grad_matrix(grad, groups), tuple(kernel_size), stride,
                                   padding, dilation, groups, out_hw)


@replaces("conv2d_backward")
@silent
def conv2d_backward(grad, x, weight, needs, stride, padding, dilation, groups, out_hw):
    """Both gradients sharing the work: where the correlation pays, ∂L/∂x and ∂L/∂W from one
    set of G's columns (``by_correlation``, whose caveat on inf and NaN is kept here), which
    saves making x's columns; else one copy of G (``grad_matrix``) for both products."""
    grad_x = grad_w = None
    if needs[0] and correlation_pays(weight.shape, x.shape, out_hw, stride, padding, dilation,
                                     weight_too=needs[1]) and np.isfinite(weight).all():
        grad_x, grad_w = by_correlation(grad, weight, x.shape, padding, dilation, groups,
                                        x=x if needs[1] else None)
        if not needs[1] or np.isfinite(grad_w).all():
            return grad_x, grad_w
    if not (needs[0] or needs[1]):
        return None, None
    grad_mat = grad_matrix(grad, groups)
    if needs[0] and grad_x is None:
        grad_x = input_grad_from_matrix(grad_mat, weight, x.shape, stride, padding, dilation,
                                        groups, out_hw)
    if needs[1]:
        grad_w = weight_grad_from_matrix(x, grad_mat, weight.shape[2:], stride, padding,
                                         dilation, groups, out_hw)
    return grad_x, grad_w
