"""fast/conv.py's routes against the reference kernels of ops/conv.py, the convolution through
each route against finite differences and PyTorch, and what a convolution says it read.

tests/test_kernels.py checks each replacement against its reference on the cases of
tests/kernel_cases_conv.py; here, that those cases take every route, and each route's parts on
layouts and buffer sizes the cases cannot set (the thresholds lowered, buffers reused)."""
import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from kernel_cases_conv import CASES
from tinygrad_pool import tensor
from tinygrad_pool.fast import conv
from tinygrad_pool.ops.conv import (col2im, conv2d_backward, conv2d_forward, conv2d_input_grad,
                                    conv2d_weight_grad, im2col)
from tinygrad_pool.windows import tap, windows_view

TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


@pytest.fixture(autouse=True)
def fast_kernels():
    """These tests follow the fast kernels' routes: on them, even where the suite runs on the
    references (TINYGRAD_POOL_KERNELS=reference)."""
    before = tinygrad_pool.get_kernels()
    tinygrad_pool.set_kernels("fast")
    yield
    tinygrad_pool.set_kernels(before)


def _out_hw(hw, kernel, stride, padding, dilation) -> tuple:
    return tuple((size + lo + hi - d * (k - 1) - 1) // s + 1 for size, k, s, lo, hi, d in
                 zip(hw, kernel, stride, padding[::2], padding[1::2], dilation))


def _channel_major(cols):
    """The reference's columns (N, C, kh, kw, Ho, Wo) in fast/conv.py's order, (C, kh, kw, N,
    Ho, Wo)."""
    return cols.transpose(1, 2, 3, 0, 4, 5)


# ---- the reference kernels --------------------------------------------------------------------
@pytest.mark.parametrize("stride,padding,dilation", [((1, 1), (0, 0, 0, 0), (1, 1)),
                                                     ((2, 1), (1, 0, 2, 1), (1, 2))])
def test_im2col_reads_each_window_and_col2im_is_its_adjoint(rng, stride, padding, dilation):
    """cols[n, c, i, j, ho, wo] = x[n, c, ho·s + i·d - top, wo·s + j·d - left] (0 off the
    image), pixel by pixel; and <im2col(x), y> = <x, col2im(y)>, the identity conv2d's
    backward rests on."""
    x, kernel = rng.standard_normal((2, 3, 9, 8)), (3, 2)
    out_hw = _out_hw(x.shape[2:], kernel, stride, padding, dilation)
    cols = im2col.reference(x, kernel, stride, padding, dilation, out_hw)
    assert cols.shape == (2, 3) + kernel + out_hw
    for index in np.ndindex(cols.shape):
        n, c, i, j, ho, wo = index
        r, q = ho * stride[0] + i * dilation[0] - padding[0], wo * stride[1] + j * dilation[1] - padding[2]
        inside = 0 <= r < x.shape[2] and 0 <= q < x.shape[3]
        assert cols[index] == (x[n, c, r, q] if inside else 0)
    y = rng.standard_normal(cols.shape)
    back = col2im.reference(y, x.shape[2:], stride, padding, dilation)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(cols, y), np.vdot(x, back), rtol=1e-12)


def test_the_reference_mode_gives_the_same_gradients_to_any_order(rng):
    """The switch: a convolution's value, gradients and second derivatives on the references
    equal those on the fast kernels."""
    x, w, b = (rng.standard_normal(s) for s in ((3, 4, 7, 6), (6, 2, 3, 2), (6,)))

    def run():
        xs, ws, bs = (tensor(a, requires_grad=True) for a in (x, w, b))
        out = F.conv2d(xs, ws, bs, stride=(1, 2), padding=1, groups=2)
        gx, gw = tinygrad_pool.autograd.grad((out * out).sum(), (xs, ws), create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        return out.numpy(), gx.numpy(), gw.numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()

    before = tinygrad_pool.get_kernels()
    try:
        tinygrad_pool.set_kernels("fast")
        fast = run()
        tinygrad_pool.set_kernels("reference")
        reference = run()
    finally:
        tinygrad_pool.set_kernels(before)
    for got, expected in zip(fast, reference):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


# ---- every route is taken -----------------------------------------------------------------------
def _spy(monkeypatch):
    """Record, per kernel call, which of fast/conv.py's parts ran (name, args, result)."""
    calls = []
    for name in ("shifted_rows", "pad", "channel_major_columns", "image_chunks", "col2im_small",
                 "col2im_in_two_passes", "col2im_product", "by_correlation",
                 "weight_grad_from_matrix", "correlation_pays"):
        original = getattr(conv, name)

        def spy(*args, _name=name, _original=original, **kwargs):
            calls.append([_name, args, kwargs, None])
            entry = calls[-1]
            entry[3] = _original(*args, **kwargs)
            return entry[3]
        monkeypatch.setattr(conv, name, spy)
    return calls


def _routes(calls) -> set:
    """The routes one kernel call took, by what it called."""
    names = [name for name, *_ in calls]
    routes = set()
    if "channel_major_columns" in names:
        routes.add("im2col in two passes" if "shifted_rows" in names else "im2col in one pass")
    for k, (name, args, kwargs, _) in enumerate(calls):
        if name == "shifted_rows" and any(args[4]):  # (x, kw, sw, dw, padding, wo)
            first = calls[k + 1] if k + 1 < len(calls) else None  # its own first call, if any
            copied = first is not None and first[0] == "pad" and any(first[1][1:5])
            routes.add("rows from a padded copy" if copied else "padding written into the rows")
    if any(name == "image_chunks" and len(result) > 1 for name, _, _, result in calls):
        routes.add("several chunks")
    if "col2im_product" in names:
        routes.add("col2im in one bincount" if "col2im_small" in names else
                   "col2im in two passes" if "col2im_in_two_passes" in names else
                   "col2im a tap at a time")
    correlations = [kwargs.get("x") is not None for name, _, kwargs, _ in calls
                    if name == "by_correlation"]
    if correlations:
        routes.add("both from G's columns" if correlations[0] else "∂L/∂x from G's columns")
        if correlations[0] and "weight_grad_from_matrix" in names:
            routes.add("∂L/∂W made again: non-finite")
    elif any(name == "correlation_pays" and result for name, _, _, result in calls):
        routes.add("correlation refused: non-finite w")
    return routes


def test_the_kernel_cases_take_every_route(monkeypatch):
    """Each route of fast/conv.py is met by some case of tests/kernel_cases_conv.py, so that
    test_kernels.py compares every one of them with the reference."""
    calls = _spy(monkeypatch)
    taken = set()
    for name, cases in CASES.items():
        fast = tinygrad_pool.kernels.implementations(name)[1]
        for _, args, kwargs in cases:
            calls.clear()
            fast(*args, **kwargs)
            taken |= _routes(calls)
    assert taken == {
        "im2col in one pass", "im2col in two passes", "rows from a padded copy",
        "padding written into the rows", "several chunks", "col2im in one bincount",
        "col2im in two passes", "col2im a tap at a time", "∂L/∂x from G's columns",
        "both from G's columns", "∂L/∂W made again: non-finite",
        "correlation refused: non-finite w"}


# ---- the routes' parts, on what the cases cannot set ----------------------------------------------
@pytest.mark.parametrize("route", ["taps or two passes", "one bincount"])
@pytest.mark.parametrize("groups,stride,dilation",
                         [(1, (1, 1), (1, 1)), (2, (1, 1), (2, 1)), (3, (1, 1), (1, 2)),
                          (2, (2, 1), (1, 2)), (3, (1, 2), (2, 1))])
def test_col2im_product_equals_col2im_of_the_full_product(rng, monkeypatch, route, groups,
                                                          stride, dilation):
    """Every route of col2im_product equals the reference col2im(Wᵀ G): col2im_small below
    SMALL_PRODUCT entries, else two passes at stride 1 (in chunks of one image and in one
    chunk), else a loop over the taps; twice, the second time in buffers holding the first's
    sums."""
    monkeypatch.setattr(conv, "SMALL_PRODUCT", 0 if route == "taps or two passes" else 1 << 20)
    taken = []
    for name in ("col2im_small", "col2im_in_two_passes"):
        original = getattr(conv, name)
        monkeypatch.setattr(conv, name, lambda *args, _name=name, _original=original:
                            taken.append(_name) or _original(*args))
    n, c, f, kh, kw = 3, 6, 6, 3, 2
    padded_shape = (n, c, 11, 10)
    out_hw = _out_hw(padded_shape[2:], (kh, kw), stride, (0, 0, 0, 0), dilation)
    for dtype, chunk_bytes in ((np.float32, 1), (np.float64, 1), (np.float64, 1 << 20)):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", chunk_bytes)
        weight = rng.standard_normal((f, c // groups, kh, kw)).astype(dtype)
        grad_mat = rng.standard_normal((groups, f // groups, n * out_hw[0] * out_hw[1])).astype(dtype)
        kernels = weight.reshape(groups, f // groups, -1)
        full = (kernels.swapaxes(1, 2) @ grad_mat).reshape(c, kh, kw, n, *out_hw)
        expected = col2im.reference(full.transpose(3, 0, 1, 2, 4, 5), padded_shape[2:], stride,
                                    (0, 0, 0, 0), dilation)
        for _ in range(2):
            fused = conv.col2im_product(kernels.reshape(groups, f // groups, -1, kh, kw),
                                        grad_mat, padded_shape, stride, dilation, out_hw)
            np.testing.assert_allclose(fused, expected, **TOLERANCE[dtype])
            assert fused.dtype == dtype and fused.shape == padded_shape
            del fused  # its block is free again: the second call writes into it
    expected_route = ("col2im_small" if route == "one bincount" else
                      "col2im_in_two_passes" if stride == (1, 1) else None)
    assert set(taken) == ({expected_route} if expected_route else set())


@pytest.mark.parametrize("layout", ["NCHW", "channel-major"])
@pytest.mark.parametrize("groups,padding,dilation,kernel", [
    (1, (1, 1, 1, 1), (1, 1), (3, 3)), (2, (0, 2, 1, 0), (1, 1), (3, 3)),
    (3, (2, 4, 0, 1), (2, 1), (3, 2)), (1, (0, 0, 0, 0), (1, 2), (2, 3))])
def test_both_gradients_by_correlation_equal_the_references(rng, monkeypatch, groups, padding,
                                                            dilation, kernel, layout):
    """At stride 1, ∂L/∂x as a convolution of G, and ∂L/∂W from the same columns of G, equal
    conv2d_input_grad's and conv2d_weight_grad's references. Three images in chunks of two
    (the last one smaller), x laid out as a user's array or as a convolution's output."""
    n, c, f, (h, w), (kh, kw) = 3, 6, 6, (7, 8), kernel
    out_hw = _out_hw((h, w), kernel, (1, 1), padding, dilation)
    geometry = ((1, 1), padding, dilation, groups, out_hw)
    assert conv.correlates((1, 1), padding, dilation, kernel)
    for dtype in (np.float32, np.float64):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", 2 * f * kh * kw * h * w * np.dtype(dtype).itemsize)
        weight = rng.standard_normal((f, c // groups, kh, kw)).astype(dtype)
        grad = rng.standard_normal((n, f) + out_hw).astype(dtype)
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        if layout == "channel-major":
            x = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
        assert conv.image_chunks(grad.shape, grad.dtype, kernel, (h, w)) == [(0, 2), (2, 3)]
        alone, none = conv.by_correlation(grad, weight, (n, c, h, w), padding, dilation, groups)
        got_x, got_w = conv.by_correlation(grad, weight, x.shape, padding, dilation, groups, x=x)
        assert none is None
        expected_x = conv2d_input_grad.reference(grad, weight, (h, w), *geometry)
        for got in (alone, got_x):
            np.testing.assert_allclose(got, expected_x, **TOLERANCE[dtype])
            assert got.dtype == dtype and got.shape == (n, c, h, w)
        np.testing.assert_allclose(got_w, conv2d_weight_grad.reference(x, grad, kernel, *geometry),
                                   **TOLERANCE[dtype])
        assert got_w.dtype == dtype and got_w.shape == weight.shape
    # padding beyond the kernel's reach, or a stride, keeps the col2im route
    assert not conv.correlates((1, 1), (3, 0, 0, 0), (1, 1), (3, 3))
    assert not conv.correlates((2, 1), (1, 1, 1, 1), (1, 1), (3, 3))


def _offset_slice(a):
    """``a``'s values in C-contiguous memory that starts one plane past its buffer's start."""
    buffer = np.zeros((a.shape[0] + 1,) + a.shape[1:])
    buffer[1:] = a
    assert buffer[1:].flags.c_contiguous
    return buffer[1:]


LAYOUTS = {  # windows_view lays its view over the memory (C-contiguous) or uses as_strided
    "transposed": lambda a: a.transpose(1, 0, 2, 3),  # a convolution's output is such a view
    "contiguous": lambda a: np.ascontiguousarray(a.transpose(1, 0, 2, 3)),
    "slice with an offset": lambda a: _offset_slice(a.transpose(1, 0, 2, 3)),
}


@pytest.mark.parametrize("passes", ["one", "two, from a padded copy", "two, padding in the rows"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kernel,stride,dilation,padding", [
    ((3, 3), (1, 1), (1, 1), (0, 0, 0, 0)), ((5, 2), (2, 3), (1, 2), (0, 0, 0, 0)),
    ((2, 3), (3, 1), (2, 1), (0, 0, 0, 0)), ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    ((5, 2), (2, 3), (1, 2), (2, 0, 1, 3)), ((2, 3), (3, 2), (2, 3), (0, 1, 5, 2))])
def test_channel_major_columns_equal_im2col(rng, monkeypatch, kernel, stride, dilation,
                                            padding, layout, passes):
    """windows_view's [:, :, i, j] is tap (i, j), read-only, from contiguous memory (and a
    contiguous slice starting past its buffer's start) as from a non-contiguous view; the
    channel-major columns equal the reference im2col's, made in one pass (from a padded copy)
    or in two (shifted rows first, from a padded copy or with the padding written in them,
    then blocks of them), into buffers holding an earlier call's numbers. (The last padding:
    column taps that land only in the padding.)"""
    monkeypatch.setattr(conv, "TWO_PASS_ROWS", 1 << 40 if passes == "one" else 0)
    monkeypatch.setattr(conv, "FOLD_PADDING_MIN_BYTES",
                        0 if passes == "two, padding in the rows" else 1 << 40)
    # every buffer comes back full of an old call's numbers (7s), as a reused one would
    monkeypatch.setattr(conv, "take", lambda shape, dtype: np.full(shape, 7, dtype))
    two_passes, copies = [], []  # shifted_rows ran; padded copies made
    original_rows, original_pad = conv.shifted_rows, conv.pad
    monkeypatch.setattr(conv, "shifted_rows", lambda *a: two_passes.append(1) or original_rows(*a))
    monkeypatch.setattr(conv, "pad", lambda x, *sides: (copies.append(1) if any(sides[:4]) else None)
                        or original_pad(x, *sides))
    x = LAYOUTS[layout](rng.standard_normal((4, 3, 13, 14)))  # (3, 4, 13, 14)
    assert x.shape == (3, 4, 13, 14) and x.flags.c_contiguous == (layout != "transposed")
    top, bottom, left, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_hw = _out_hw(x.shape[2:], kernel, stride, padding, dilation)
    view = windows_view(padded, kernel, stride, dilation, out_hw)
    assert view.shape == x.shape[:2] + kernel + out_hw and not view.flags.writeable
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            np.testing.assert_array_equal(view[:, :, i, j], tap(padded, i, j, stride, dilation, out_hw))
    cols = conv.channel_major_columns(x, kernel, stride, dilation, out_hw, padding=padding)
    np.testing.assert_array_equal(
        cols, _channel_major(im2col.reference(x, kernel, stride, padding, dilation, out_hw)))
    assert bool(two_passes) == (passes != "one")
    assert bool(copies) == (any(padding) and passes != "two, padding in the rows")


@pytest.mark.parametrize("groups,stride,padding", [(1, (1, 1), (1, 1, 1, 1)), (2, (2, 1), (0, 2, 1, 0))])
def test_columns_made_a_chunk_of_images_at_a_time_give_the_references(rng, monkeypatch,
                                                                     groups, stride, padding):
    """The forward and the weight gradient make the columns a few images at a time (here 2 per
    chunk, 7 images: an uneven last chunk), each chunk padded on its own and its columns
    written over the last chunk's; both equal the references (and one chunk of 7 does too)."""
    x = rng.standard_normal((7, 4, 9, 8)).astype(np.float32)
    weight = rng.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32)
    out_hw = _out_hw((9, 8), (3, 2), stride, padding, (1, 1))
    grad = rng.standard_normal((7, 6) + out_hw).astype(np.float32)
    geometry = dict(stride=stride, padding=padding, dilation=(1, 1), groups=groups, out_hw=out_hw)
    expected_out = conv2d_forward.reference(x, weight, None, **geometry)
    expected_w = conv2d_weight_grad.reference(x, grad, (3, 2), **geometry)
    per_image = 4 * 3 * 2 * out_hw[0] * out_hw[1] * 4
    for chunk_bytes, chunks in ((2 * per_image, [(0, 2), (2, 4), (4, 6), (6, 7)]), (1 << 40, [(0, 7)])):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", chunk_bytes)
        assert conv.image_chunks(x.shape, x.dtype, (3, 2), out_hw) == chunks
        np.testing.assert_allclose(conv.conv2d_forward(x, weight, None, **geometry), expected_out,
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(conv.conv2d_weight_grad(x, grad, (3, 2), **geometry),
                                   expected_w, rtol=1e-5, atol=1e-4)
    assert conv.image_chunks(x[:0].shape, x.dtype, (3, 2), out_hw) == []


@pytest.mark.parametrize("weight_shape, input_shape, out_hw, pads, pays, pays_with_weight", [
    ((32, 32, 3, 3), (32, 32, 32, 32), (32, 32), (1, 1, 1, 1), True, True),  # (g)'s middle conv
    ((64, 32, 3, 3), (32, 32, 16, 16), (16, 16), (1, 1, 1, 1), False, True),  # (g)'s last: F = 2C
    ((40, 16, 3, 3), (8, 16, 16, 16), (16, 16), (1, 1, 1, 1), False, False),  # F = 2.5 C
    ((16, 6, 5, 5), (64, 6, 14, 14), (10, 10), (0, 0, 0, 0), False, False),  # LeNet-5's second
    ((8, 16, 3, 3), (4, 16, 12, 12), (10, 10), (0, 0, 0, 0), True, True),  # fewer filters: pays
])
def test_the_gradients_take_the_correlation_only_where_it_pays(
        rng, monkeypatch, weight_shape, input_shape, out_hw, pads, pays, pays_with_weight):
    """correlation_pays: the correlation's columns (F·k·k per input pixel) at most 1.5× the
    products col2im_product forms (C·k·k per output pixel), 2× when the weight gradient comes
    from them too; conv2d_backward then takes that route for both gradients (or for the
    input's alone), and either route gives the references' numbers."""
    geometry = ((1, 1), pads, (1, 1))
    assert conv.correlation_pays(weight_shape, input_shape, out_hw, *geometry) is pays
    assert conv.correlation_pays(weight_shape, input_shape, out_hw, *geometry,
                                 weight_too=True) is pays_with_weight
    weight = rng.standard_normal(weight_shape).astype(np.float32)
    grad = rng.standard_normal((input_shape[0], weight_shape[0]) + out_hw).astype(np.float32)
    x = rng.standard_normal(input_shape).astype(np.float32)
    taken = []
    original = conv.by_correlation
    monkeypatch.setattr(conv, "by_correlation",
                        lambda *args, x=None: taken.append(x is not None) or original(*args, x=x))
    kwargs = dict(stride=(1, 1), padding=pads, dilation=(1, 1), groups=1, out_hw=out_hw)
    got_x, got_w = conv.conv2d_backward(grad, x, weight, (True, True), **kwargs)
    alone = conv.conv2d_backward(grad, x, weight, (True, False), **kwargs)
    assert taken == [True] * pays_with_weight + [False] * pays and alone[1] is None
    expected_x, expected_w = conv2d_backward.reference(grad, x, weight, (True, True), **kwargs)
    for got in (got_x, alone[0]):
        np.testing.assert_allclose(got, expected_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_w, expected_w, rtol=1e-4, atol=2e-3)


# ---- the convolution through each route: finite differences and PyTorch -------------------------
@pytest.mark.parametrize("stride,padding", [((1, 1), 1), ((2, 1), (0, 2))])
def test_convolution_over_several_chunks_and_a_small_col2im_has_finite_difference_and_torch_gradients(
        rng, monkeypatch, torch, stride, padding):
    """float64: the columns made a few images at a time (7 images in 4 or 2 chunks, the last
    one smaller), forward and again for the weight gradient; at stride 1 both gradients from
    the columns of G (``by_correlation``), at stride 2 the input's by col2im in one bincount
    (col2im_small) and the weight's from x's columns."""
    from helpers import check_grad, torch_parity
    x, w, b = (rng.standard_normal((7, 2, 6, 5)), rng.standard_normal((3, 2, 3, 2)),
               rng.standard_normal(3))
    monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", 2 * 2 * 3 * 2 * 8 * 6 * 6)  # 2 or 4 images
    remade = []
    weight_grad_from_matrix = conv.weight_grad_from_matrix
    monkeypatch.setattr(conv, "weight_grad_from_matrix",
                        lambda *a: remade.append(1) or weight_grad_from_matrix(*a))
    chunks, image_chunks = [], conv.image_chunks
    monkeypatch.setattr(conv, "image_chunks", lambda *a: chunks.append(image_chunks(*a)) or chunks[-1])
    taken = []
    original = conv.col2im_small
    monkeypatch.setattr(conv, "col2im_small", lambda *a: taken.append(1) or original(*a))

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=stride, padding=padding)

    check_grad(fn, x, w, b)
    torch_parity(torch, fn, x, w, b, torch_fn=lambda x, w, b: torch.nn.functional.conv2d(
        x, w, b, stride=stride, padding=padding))
    assert bool(taken) is (stride != (1, 1)) and bool(remade) is (stride != (1, 1))
    assert all(len(c) > 1 for c in chunks if c and c[-1][1] == 7)  # every full batch: chunked


@pytest.mark.parametrize("padding,dilation", [(1, 1), ((2, 0), (2, 1))])
def test_convolution_by_the_two_pass_routes_has_finite_difference_and_torch_gradients(
        rng, monkeypatch, torch, padding, dilation):
    """float64, small, the thresholds lowered: im2col in two passes with the padding written
    into its rows (``shifted_rows``), ∂L/∂x by col2im in two passes (F = 3C: the correlation
    does not pay), the columns made again for ∂L/∂W, two or three images a chunk."""
    from helpers import check_grad, torch_parity
    x, w, b = (rng.standard_normal((5, 2, 6, 5)), rng.standard_normal((6, 2, 3, 2)),
               rng.standard_normal(6))
    for name, value in (("TWO_PASS_ROWS", 0), ("FOLD_PADDING_MIN_BYTES", 0),
                        ("SMALL_PRODUCT", 0), ("COLUMN_CHUNK_BYTES", 2 * 2 * 3 * 2 * 6 * 6 * 8)):
        monkeypatch.setattr(conv, name, value)  # 2 or 3 images a chunk
    taken = []
    for name in ("shifted_rows", "col2im_in_two_passes", "by_correlation", "pad"):
        original = getattr(conv, name)
        monkeypatch.setattr(conv, name, lambda *a, _n=name, _o=original, **k:
                            taken.append(_n) or _o(*a, **k))

    def fn(x, w, b):
        return F.conv2d(x, w, b, padding=padding, dilation=dilation)

    check_grad(fn, x, w, b)
    torch_parity(torch, fn, x, w, b, torch_fn=lambda x, w, b: torch.nn.functional.conv2d(
        x, w, b, padding=padding, dilation=dilation))
    assert {"shifted_rows", "col2im_in_two_passes"} <= set(taken) and "by_correlation" not in taken
    assert "pad" not in taken  # the padding written into the rows: no padded copy of x


def test_convolution_where_the_two_pass_routes_are_taken_unpatched_matches_torch(
        rng, monkeypatch, torch):
    """float32 at a size that takes the two-pass routes with the thresholds as they are: both
    gradients against PyTorch's."""
    taken = []
    for name in ("shifted_rows", "col2im_in_two_passes", "pad"):
        original = getattr(conv, name)
        monkeypatch.setattr(conv, name, lambda *a, _n=name, _o=original: taken.append(_n) or _o(*a))
    x = rng.standard_normal((16, 8, 30, 30)).astype(np.float32)
    w = (rng.standard_normal((24, 8, 3, 3)) * 0.1).astype(np.float32)
    g = rng.standard_normal((16, 24, 30, 30)).astype(np.float32)
    xs, ws = tensor(x, requires_grad=True), tensor(w, requires_grad=True)
    out = F.conv2d(xs, ws, padding=2, dilation=2)
    out.backward(tensor(g))
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    expected = torch.nn.functional.conv2d(xt, wt, padding=2, dilation=2)
    expected.backward(torch.tensor(g))
    for ours, theirs in ((out.numpy(), expected), (xs.grad.numpy(), xt.grad), (ws.grad.numpy(), wt.grad)):
        theirs = theirs.detach().numpy()
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-5 * np.abs(theirs).max())
    assert {"shifted_rows", "col2im_in_two_passes"} <= set(taken) and "pad" not in taken


def test_a_forward_on_inf_and_nan_is_silent_as_torchs(rng):
    """inf - inf and 0·inf in a convolution are NaN without a warning (pytest turns this
    package's RuntimeWarnings into errors), on either set of kernels, forward and backward."""
    x = rng.standard_normal((4, 8, 20, 20))
    x[0, 0, 0, :3] = np.inf, -np.inf, np.nan
    w = rng.standard_normal((8, 8, 3, 3))
    w[0, 0, 0, 0] = np.inf
    before = tinygrad_pool.get_kernels()
    try:
        for mode in ("fast", "reference"):
            tinygrad_pool.set_kernels(mode)
            xs, ws = tensor(x, requires_grad=True), tensor(w, requires_grad=True)
            out = F.conv2d(xs, ws, padding=1)
            out.sum().backward()
            assert np.isnan(out.numpy()).any() and np.isnan(ws.grad.numpy()).any()
    finally:
        tinygrad_pool.set_kernels(before)


# ---- what an output cell read ----------------------------------------------------------------------
def _read(fn, out_cell, x, w):
    """Σ x[input] · w[weight] over the cells ``window_cells`` names outside the padding."""
    return sum(x[c.input] * w[c.weight] for c in fn.window_cells(out_cell) if not c.padding)


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((1, 2), (2, 1), (2, 1), 2), (2, 2, 2, 3)])
def test_window_cells_are_the_terms_of_each_output(rng, stride, padding, dilation, groups):
    """Every output cell of conv2d (no bias) is the sum of x · w over the cells it names, a
    padding tap lying outside the image and every other inside; the same for
    conv_transpose2d, whose padding taps name no input cell."""
    x = rng.standard_normal((2, 6, 7, 6))
    w = rng.standard_normal((6, 6 // groups, 3, 2))
    out = F.conv2d(tensor(x, requires_grad=True), tensor(w), stride=stride, padding=padding,
                   dilation=dilation, groups=groups)
    for cell in np.ndindex(out.shape):
        cells = out.grad_fn.window_cells(cell)
        assert len(cells) == 6 // groups * 3 * 2
        for c in cells:
            inside = 0 <= c.input[2] < 7 and 0 <= c.input[3] < 6
            assert c.padding is not inside and c.weight[0] == cell[1]
        np.testing.assert_allclose(_read(out.grad_fn, cell, x, w), out.numpy()[cell], rtol=1e-12,
                                   atol=1e-12)
    up = F.conv_transpose2d(tensor(x, requires_grad=True), tensor(w), stride=stride,
                            padding=padding, dilation=dilation, groups=groups,
                            output_padding=1 if stride == 2 else 0)
    for cell in np.ndindex(up.shape):
        cells = up.grad_fn.window_cells(cell)
        assert len(cells) == 6 // groups * 3 * 2
        assert all((c.input is None) is c.padding for c in cells)
        np.testing.assert_allclose(_read(up.grad_fn, cell, x, w), up.numpy()[cell], rtol=1e-12,
                                   atol=1e-12)


def test_window_cells_are_what_fan_in_draws(rng):
    """fan_in's links and padding taps for an output cell are the cells window_cells names."""
    pytest.importorskip("graphviz")
    from tinygrad_pool.viz import fan_in
    x, w = rng.standard_normal((1, 4, 6, 6)), rng.standard_normal((4, 2, 3, 3))
    for op in (lambda a, b: F.conv2d(a, b, stride=2, padding=1, groups=2),
               lambda a, b: F.conv_transpose2d(a, b, stride=2, padding=1, groups=2)):
        out = op(tensor(x, requires_grad=True), tensor(w))
        for cell in ((0, 0, 0, 0), (0, 3, 1, 2)):
            picture = fan_in(out, output_cell=cell)
            cells = out.grad_fn.window_cells(cell)
            assert sorted((link.input, link.weight) for link in picture.links) == \
                sorted((c.input, c.weight) for c in cells if not c.padding)
            assert sorted(picture.padding) == sorted(c.weight for c in cells if c.padding)
