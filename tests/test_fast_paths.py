"""The performance fast paths against the general paths they shortcut, and against PyTorch and
finite differences: a fast path may change how fast, never what."""
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import gradcheck, tensor
from tinygrad_pool.fast import memory
from tinygrad_pool.engine import _FLAGS_OF_TWO, Node, _topological_order
from tinygrad_pool.fast import conv, pool, quiet, views
from tinygrad_pool.windows import tap, windows_view


def col2im(cols, padded_shape, kernel, stride, dilation, out_hw):
    """The plain adjoint of im2col (the reference the fused col2im_product is checked against):
    each tap's column added back onto the pixels it was read from."""
    n, c, hp, wp = padded_shape
    padded = np.zeros((c, n, hp, wp), cols.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            tap(padded, i, j, stride, dilation, out_hw)[...] += cols[:, i, j]
    return padded.transpose(1, 0, 2, 3)


def _general_taps(padded, kernel, stride, dilation, out_hw):
    return [tap(padded, i, j, stride, dilation, out_hw) for i in range(kernel[0]) for j in range(kernel[1])]


def _window_argmax_by_loop(x, kernel, stride, out_hw):
    """The definition, one window at a time: value and flat index of the first maximum."""
    n, c, h, w = x.shape
    out = np.empty((n, c) + out_hw, x.dtype)
    idx = np.empty((n, c) + out_hw, np.int64)
    for a in range(out_hw[0]):
        for b in range(out_hw[1]):
            r, s = a * stride[0], b * stride[1]
            window = x[:, :, r: r + kernel[0], s: s + kernel[1]].reshape(n, c, -1)
            first = window.argmax(axis=2)  # NumPy's argmax also keeps the first maximum
            out[:, :, a, b] = window.max(axis=2)
            idx[:, :, a, b] = (r + first // kernel[1]) * w + s + first % kernel[1]
    return out, idx


@pytest.fixture(autouse=True)
def phase_split_even_for_small_inputs(monkeypatch):
    """The tests use small arrays; make the fast path take them as it takes large ones (and
    keep them off the small-input tiles path, tested on its own below)."""
    monkeypatch.setattr(pool, "PHASE_SPLIT_MIN_SIZE", 0)
    monkeypatch.setattr(pool, "SMALL_INPUT", 0)


@pytest.mark.parametrize("kernel,hw", [((2, 2), (4, 4)), ((2, 2), (7, 9)), ((3, 2), (9, 6)),
                                       ((1, 1), (3, 5)), ((2, 3), (6, 6))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_small_input_tiles_path_equals_the_definition(rng, monkeypatch, kernel, hw, dtype):
    """Windows that tile a small input take max_pool_tiles: values and indices as the
    one-window-at-a-time definition, with ties (first wins), NaN (first NaN wins) and -inf."""
    monkeypatch.setattr(pool, "SMALL_INPUT", 2048)
    x = rng.integers(-2, 3, size=(2, 3) + hw).astype(dtype)  # few values: many ties
    if dtype != np.int32:
        x[0, 0, 0, 1] = np.nan
        x[1, 2] = -np.inf
    out_hw = (hw[0] // kernel[0], hw[1] // kernel[1])
    calls = []
    monkeypatch.setattr(pool, "max_and_first_tap", lambda *a, **k: calls.append(1))
    out, argmax = pool.max_pool2d(x, kernel, kernel, (0, 0), (1, 1), out_hw)
    assert not calls  # the general kernel was not used
    want_out, want_idx = _window_argmax_by_loop(x, kernel, kernel, out_hw)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(argmax, want_idx)
    assert out.dtype == x.dtype and argmax.dtype == np.int32


GEOMETRIES = [  # kernel, stride, input H×W: non-overlapping, overlapping, uneven, rectangular
    ((2, 2), (2, 2), (8, 8)), ((3, 3), (2, 2), (12, 12)), ((3, 2), (3, 2), (9, 6)),
    ((2, 3), (2, 3), (7, 10)), ((4, 4), (2, 2), (10, 10)), ((3, 3), (3, 1), (9, 5)),
]


@pytest.mark.parametrize("kernel,stride,hw", GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_phase_split_taps_equal_the_general_tap_views(rng, kernel, stride, hw, dtype):
    x = rng.integers(-2, 3, (2, 3) + hw).astype(dtype)  # small integers: many ties
    out_hw = tuple((s - k) // st + 1 for s, k, st in zip(hw, kernel, stride))
    phases = pool.phase_split(x, kernel, stride, (1, 1), out_hw)
    if hw[0] % stride[0] or hw[1] % stride[1]:
        assert phases is None
        return
    runs = pool.phase_taps(phases, x.shape, kernel, stride)
    fast = [pool.on_phase_grid(run, x.shape, stride, out_hw) for run in runs]
    general = _general_taps(x, kernel, stride, (1, 1), out_hw)
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)
    origin, _, _ = pool.window_origins(stride, (0, 0), out_hw, hw)
    offsets = (np.arange(kernel[0])[:, None] * hw[1] + np.arange(kernel[1])).ravel()  # tap t's
    out_runs, tap_runs = pool.max_and_first_tap(runs)
    out_fast = pool.on_phase_grid(out_runs, x.shape, stride, out_hw)
    tap_fast = pool.on_phase_grid(tap_runs, x.shape, stride, out_hw)
    out_gen, tap_gen = pool.max_and_first_tap(general)
    np.testing.assert_array_equal(out_fast, out_gen)
    np.testing.assert_array_equal(tap_fast, tap_gen)
    expected_out, expected_idx = _window_argmax_by_loop(x, kernel, stride, out_hw)
    np.testing.assert_array_equal(out_fast, expected_out)
    np.testing.assert_array_equal(offsets[tap_fast] + origin, expected_idx)
    assert out_fast.dtype == dtype


def test_nan_wins_only_changes_windows_that_hold_a_nan(rng):
    x = rng.integers(-2, 3, (2, 2, 6, 6)).astype(np.float64)
    x[0, 0, 1, 1] = x[1, 1, 4, 3] = np.nan
    taps = _general_taps(x, (2, 2), (2, 2), (1, 1), (3, 3))
    out, best = pool.max_and_first_tap(taps)
    out_nan, best_nan = pool.max_and_first_tap(taps, nan_wins=True)
    has_nan = np.isnan(out_nan)
    assert has_nan.sum() == 2 and best_nan[0, 0, 0, 0] == 3 and best_nan[1, 1, 2, 1] == 1
    np.testing.assert_array_equal(out[~has_nan], out_nan[~has_nan])
    np.testing.assert_array_equal(best[~has_nan], best_nan[~has_nan])


def test_phase_split_stays_out_of_geometries_it_does_not_cover(monkeypatch):
    x = np.zeros((1, 1, 8, 8))
    monkeypatch.setattr(pool, "PHASE_SPLIT_MIN_SIZE", 1 << 14)
    assert pool.phase_split(x, (2, 2), (2, 2), (1, 1), (4, 4)) is None  # too small to gain
    monkeypatch.setattr(pool, "PHASE_SPLIT_MIN_SIZE", 0)
    assert pool.phase_split(x, (3, 3), (1, 1), (1, 1), (6, 6)) is None  # stride 1
    assert pool.phase_split(x, (2, 2), (2, 2), (2, 2), (3, 3)) is None  # dilation
    assert pool.phase_split(x, (2, 2), (3, 3), (1, 1), (3, 3)) is None  # 8 % 3


@pytest.mark.parametrize("kernel,stride,hw", GEOMETRIES)
def test_max_pool_fast_path_matches_torch_values_indices_and_grads(torch, rng, kernel, stride, hw):
    for dtype in (np.float32, np.float64):
        x = rng.integers(-2, 3, (2, 3) + hw).astype(dtype)
        x[0, 0, 0, 0] = np.nan
        x[1, 1, :2, :2] = -np.inf
        xt = tensor(x, requires_grad=True)
        out, idx = F.max_pool2d(xt, kernel, stride, return_indices=True)
        grad = rng.standard_normal(out.shape).astype(dtype)
        out.backward(grad)
        tx = torch.tensor(x, requires_grad=True)
        t_out, t_idx = torch.nn.functional.max_pool2d(tx, kernel, stride, return_indices=True)
        t_out.backward(torch.from_numpy(grad))
        np.testing.assert_array_equal(out.numpy(), t_out.detach().numpy())
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
        np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
        assert out.dtype == dtype and xt.grad.dtype == dtype


@pytest.mark.parametrize("kernel,padding,dilation,hw", [
    ((3, 3), (1, 1), (1, 1), (4, 1)), ((3, 3), (1, 1), (1, 1), (3, 2)),
    ((4, 2), (2, 1), (1, 1), (5, 1)), ((3, 3), (1, 1), (1, 2), (6, 3))])
def test_max_pool_windows_wider_than_the_plane_match_torch(torch, rng, kernel, padding, dilation, hw):
    """Padding can make a window wider than the plane: then the taps' offsets do not all grow
    with the tap, but those of its real pixels do, and padding never wins (tap_offsets)."""
    offsets = pool.tap_offsets(kernel, dilation, hw[1]).astype(int)
    assert (np.diff(offsets) <= 0).any()
    x = rng.integers(-2, 3, (2, 3) + hw).astype(np.float32)  # ties
    x[0, 0, 0, 0] = np.nan
    xt = tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(xt, kernel, 1, padding, dilation, return_indices=True)
    grad = rng.standard_normal(out.shape).astype(np.float32)
    out.backward(grad)
    tx = torch.tensor(x, requires_grad=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(tx, kernel, 1, padding, dilation, return_indices=True)
    t_out.backward(torch.from_numpy(grad))
    np.testing.assert_array_equal(out.numpy(), t_out.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_windows_of_only_the_least_value_point_at_a_real_pixel_as_torch(torch, rng, dtype):
    """Padding is the dtype's least value (-inf for floats): a window whose real pixels all
    hold it ties with the padding, and the index is its first real pixel, as torch's."""
    least = -np.inf if dtype == np.float32 else np.iinfo(dtype).min
    x = rng.integers(-3, 3, (2, 2, 5, 4)).astype(dtype)
    x[0, 0] = least
    x[1, 1, :2, :2] = least
    out, idx = F.max_pool2d(tensor(x), 3, 1, 1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


def test_tap_offsets_are_each_taps_place_in_the_plane():
    offsets = pool.tap_offsets((3, 3), (1, 1), 32)
    assert offsets.tolist() == [0, 1, 2, 32, 33, 34, 64, 65, 66]
    assert offsets.dtype == np.uint8 and not offsets.flags.writeable
    offsets = pool.tap_offsets((2, 2), (2, 3), 300)  # dilated: i·dh·W + j·dw
    assert offsets.tolist() == [0, 3, 600, 603] and offsets.dtype == np.uint16


def test_max_pool_random_geometries_match_torch(torch, rng):
    """Padding, dilation, ceil_mode, ties and NaN, through whichever path each geometry takes."""
    checked = 0
    for trial in range(150):
        k = tuple(int(v) for v in rng.integers(1, 5, 2))
        s = tuple(int(v) for v in rng.integers(1, 4, 2))
        d = tuple(int(v) for v in rng.integers(1, 3, 2))
        p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
        ceil = bool(trial % 2)
        h, w = (int(rng.integers(k[i] * d[i], 13)) for i in range(2))
        dtype = (np.float32, np.float64)[trial % 2]
        x = rng.integers(-2, 3, (2, 2, h, w)).astype(dtype)
        if trial % 3 == 0:
            x[rng.random(x.shape) < 0.05] = np.nan
        xt = tensor(x, requires_grad=True)
        try:
            out, idx = F.max_pool2d(xt, k, s, p, d, ceil, return_indices=True)
        except ValueError:  # a geometry we refuse (windows of padding only)
            continue
        grad = rng.standard_normal(out.shape).astype(dtype)
        out.backward(grad)
        tx = torch.tensor(x, requires_grad=True)
        t_out, t_idx = torch.nn.functional.max_pool2d(tx, k, s, p, d, ceil, return_indices=True)
        t_out.backward(torch.from_numpy(grad))
        np.testing.assert_array_equal(out.numpy(), t_out.detach().numpy())
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
        np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
        assert xt.grad.dtype == dtype
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("kernel,stride,hw", GEOMETRIES[:3])
def test_max_pool_fast_path_gradcheck(rng, kernel, stride, hw):
    x = tensor(rng.permutation(2 * 2 * hw[0] * hw[1]).reshape((2, 2) + hw) / 7.0, requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, kernel, stride), [x])


def test_max_pool_fast_path_gradcheck_with_padding_and_ceil_mode(rng):
    """Padding and ceil mode's overhang through the phase split: the -inf border and the tail
    of the phase buffer must not change a gradient."""
    x = tensor(rng.permutation(2 * 2 * 10 * 10).reshape(2, 2, 10, 10) / 7.0, requires_grad=True)
    assert pool.phase_split(np.zeros((2, 2, 12, 12)), (3, 3), (2, 2), (1, 1), (5, 5)) is not None
    assert gradcheck(lambda t: F.max_pool2d(t, 3, 2, padding=1), [x])
    odd = tensor(rng.permutation(2 * 2 * 9 * 9).reshape(2, 2, 9, 9) / 7.0, requires_grad=True)
    assert pool.phase_split(np.zeros((2, 2, 10, 10)), (2, 2), (2, 2), (1, 1), (5, 5)) is not None
    assert gradcheck(lambda t: F.max_pool2d(t, 2, 2, ceil_mode=True), [odd])  # 9 → 5 windows


def test_max_pool_backward_scatter_keeps_float32_and_sums_overlaps():
    x = np.zeros((1, 1, 5, 5), np.float32)
    x[0, 0, 2, 2] = 1  # the max of all four overlapping 3×3 windows
    xt = tensor(x, requires_grad=True)
    F.max_pool2d(xt, 3, stride=2).sum().backward()
    assert xt.grad.dtype == np.float32
    assert xt.grad.numpy()[0, 0, 2, 2] == 4 and xt.grad.numpy().sum() == 4


def test_max_pool_argmax_buffer_is_reused_only_after_backward(monkeypatch, rng):
    """The saved argmax is a scratch buffer handed back by release(): indices returned to the
    caller stay as they were, and two live pools of one shape never share a buffer."""
    monkeypatch.setattr(memory, "SCRATCH_MIN_BYTES", 0)  # recycle even these small arrays
    x1, x2 = (rng.permutation(2 * 3 * 12 * 12).reshape(2, 3, 12, 12) / 10.0 for _ in range(2))
    for _ in range(2):  # the second round runs on recycled buffers
        a, b = tensor(x1, requires_grad=True), tensor(x2, requires_grad=True)
        out_a, idx_a = F.max_pool2d(a, 3, 2, return_indices=True)
        out_b, idx_b = F.max_pool2d(b, 3, 2, return_indices=True)
        (out_a * out_b).sum().backward()
        _, expected_a = _window_argmax_by_loop(x1, (3, 3), (2, 2), (5, 5))
        _, expected_b = _window_argmax_by_loop(x2, (3, 3), (2, 2), (5, 5))
        F.max_pool2d(tensor(-x1, requires_grad=True), 3, 2).sum().backward()  # reuses the buffers
        np.testing.assert_array_equal(idx_a.numpy(), expected_a)
        np.testing.assert_array_equal(idx_b.numpy(), expected_b)
        assert idx_a.dtype == np.int64
        for grad, idx, other in ((a.grad.numpy(), expected_a, out_b.numpy()), (b.grad.numpy(), expected_b, out_a.numpy())):
            routed = np.zeros(2 * 3 * 144)
            np.add.at(routed, (idx + np.arange(6).reshape(2, 3, 1, 1) * 144).ravel(), other.ravel())
            np.testing.assert_array_equal(grad, routed.reshape(2, 3, 12, 12))


def test_col2im_is_the_adjoint_of_im2col(rng):
    """<im2col(x), y> = <x, col2im(y)>: the identity conv's backward rests on."""
    for stride, dilation in (((1, 1), (1, 1)), ((2, 1), (1, 2))):
        x = rng.standard_normal((2, 3, 9, 8))
        kernel = (3, 2)
        out_hw = tuple((s - dd * (k - 1) - 1) // st + 1
                       for s, k, st, dd in zip(x.shape[2:], kernel, stride, dilation))
        cols = conv.im2col(x, kernel, stride, dilation, out_hw).copy()
        y = rng.standard_normal(cols.shape)
        back = col2im(y, x.shape, kernel, stride, dilation, out_hw)
        assert back.shape == x.shape
        np.testing.assert_allclose(np.vdot(cols, y), np.vdot(x, back), rtol=1e-10)
        # and col2im agrees with the plain per-tap sum in (N, C, H, W) order
        plain = np.zeros(x.shape)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                tap(plain, i, j, stride, dilation, out_hw)[...] += y[:, i, j].transpose(1, 0, 2, 3)
        np.testing.assert_allclose(back, plain, rtol=1e-12)


def _conv_grads(x, w, b, **kw):
    xt, wt, bt = (tensor(a, requires_grad=True) for a in (x, w, b))
    out = F.conv2d(xt, wt, bt, **kw)
    (out * out).sum().backward()
    return out.numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()


def test_conv_scratch_buffers_are_never_shared_between_live_nodes(torch, rng):
    """Two convs of the same shape alive in one graph, twice in a row (the second time from
    recycled buffers), give the gradients of the same computation done one conv at a time."""
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w1, w2 = (rng.standard_normal((3, 3, 3, 3)).astype(np.float32) for _ in range(2))
    for _ in range(2):
        xt, a, b = (tensor(v, requires_grad=True) for v in (x, w1, w2))
        (F.conv2d(xt, a, padding=1) * F.conv2d(xt, b, padding=1)).sum().backward()
        grads = (xt.grad.numpy(), a.grad.numpy(), b.grad.numpy())
    tx, ta, tb = (torch.tensor(v, requires_grad=True) for v in (x, w1, w2))
    tconv = torch.nn.functional.conv2d
    (tconv(tx, ta, padding=1) * tconv(tx, tb, padding=1)).sum().backward()
    for ours, theirs in zip(grads, (tx.grad, ta.grad, tb.grad)):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-4)
        assert ours.dtype == np.float32


def test_conv_gradients_repeat_exactly_from_recycled_buffers_and_after_retain_graph(rng):
    x = rng.standard_normal((2, 2, 5, 5))
    w = rng.standard_normal((4, 2, 3, 3))
    b = rng.standard_normal(4)
    first = _conv_grads(x, w, b, padding=1)
    again = _conv_grads(x, w, b, padding=1)  # columns and gradients in recycled buffers
    for u, v in zip(first, again):
        np.testing.assert_array_equal(u, v)
    wt = tensor(w, requires_grad=True)
    out = F.conv2d(tensor(x), wt, padding=1).sum()
    out.backward(retain_graph=True)
    once = wt.grad.numpy().copy()
    _conv_grads(x, w, b, padding=1)  # another conv of the same shape in between
    out.backward()
    np.testing.assert_allclose(wt.grad.numpy(), 2 * once, rtol=1e-12)
    node = out.grad_fn.parents[0].grad_fn
    assert node.released and node.saved_for_backward() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_keeps_its_dtype(rng, dtype):
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((2, 3, 7, 7), (4, 3, 3, 3), (4,)))
    for value in _conv_grads(x, w, b, padding=1, stride=2):
        assert value.dtype == dtype


def test_conv_gradcheck_after_changes(rng):
    x = tensor(rng.standard_normal((2, 2, 5, 6)), requires_grad=True)
    w = tensor(rng.standard_normal((4, 1, 3, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: F.conv2d(a, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2), [x, w])


def test_engine_walk_orders_a_diamond_and_a_long_chain():
    """The tuple-free topological walk: shared inputs are summed once, long chains don't recurse."""
    x = tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = x * x
    z = (y + x) * (y - x)  # y and x each reach z along two paths
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy() ** 3 - 2 * x.numpy())
    order = _topological_order([z.grad_fn])  # nodes: Functions, and the leaf x itself
    assert len(order) == len({id(node) for node in order}) == 5  # x, Mul, Add, Sub, Mul
    position = {id(node): k for k, node in enumerate(order)}
    for node in order:
        if isinstance(node, Node):
            assert all(position[id(e)] < position[id(node)] for e in node.edges if e is not None)
    chain = x
    for _ in range(5000):
        chain = chain * 1.0
    chain.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy() ** 3 - 2 * x.numpy() + 1)


@pytest.mark.parametrize("route", ["taps or two passes", "one bincount"])
@pytest.mark.parametrize("groups,stride,dilation",
                         [(1, (1, 1), (1, 1)), (2, (1, 1), (2, 1)), (3, (1, 1), (1, 2)),
                          (2, (2, 1), (1, 2)), (3, (1, 2), (2, 1))])
def test_col2im_product_equals_col2im_of_the_full_product(rng, monkeypatch, route, groups,
                                                          stride, dilation):
    """Every route of col2im_product equals col2im: col2im_small below SMALL_PRODUCT entries,
    else two passes at stride 1 (in chunks of one image and in one chunk), else a loop over
    the taps."""
    monkeypatch.setattr(conv, "SMALL_PRODUCT", 0 if route == "taps or two passes" else 1 << 20)
    taken = []
    for name in ("col2im_small", "col2im_in_two_passes"):
        original = getattr(conv, name)
        monkeypatch.setattr(conv, name, lambda *args, _name=name, _original=original:
                            taken.append(_name) or _original(*args))
    n, c, f, kh, kw = 3, 6, 6, 3, 2
    padded_shape = (n, c, 11, 10)
    out_hw = tuple((s - d * (k - 1) - 1) // st + 1
                   for s, k, st, d in zip(padded_shape[2:], (kh, kw), stride, dilation))
    for dtype, chunk_bytes in ((np.float32, 1), (np.float64, 1), (np.float64, 1 << 20)):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", chunk_bytes)
        weight = rng.standard_normal((f, c // groups, kh, kw)).astype(dtype)
        grad_mat = rng.standard_normal((groups, f // groups, n * out_hw[0] * out_hw[1])).astype(dtype)
        kernels = weight.reshape(groups, f // groups, -1)
        full = (kernels.swapaxes(1, 2) @ grad_mat).reshape(c, kh, kw, n, *out_hw)
        expected = col2im(full, padded_shape, (kh, kw), stride, dilation, out_hw)
        for _ in range(2):  # the second time in reused buffers, holding the first's sums
            fused = conv.col2im_product(kernels.reshape(groups, f // groups, -1, kh, kw),
                                        grad_mat, padded_shape, stride, dilation, out_hw)
            np.testing.assert_allclose(fused, expected, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                       atol=1e-5 if dtype == np.float32 else 1e-12)
            assert fused.dtype == dtype and fused.shape == padded_shape
            del fused  # its block is free again: the second call writes into it
    expected_route = ("col2im_small" if route == "one bincount" else
                      "col2im_in_two_passes" if stride == (1, 1) else None)
    assert set(taken) == ({expected_route} if expected_route else set())


def _weight_grad_by_definition(x, grad, kernel, padding, dilation, groups):
    """∂L/∂W = G · colsᵀ at stride 1, all of x's columns made at once."""
    top, bottom, left, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_hw = grad.shape[2:]
    cols = conv.im2col(padded, kernel, (1, 1), dilation, out_hw).copy()
    f, c = grad.shape[1], x.shape[1]
    grad_mat = grad.transpose(1, 0, 2, 3).reshape(groups, f // groups, -1)
    return (grad_mat @ cols.reshape(groups, -1, grad_mat.shape[2]).swapaxes(1, 2)).reshape(
        f, c // groups, *kernel)


@pytest.mark.parametrize("layout", ["NCHW", "channel-major"])
@pytest.mark.parametrize("groups,padding,dilation,kernel", [
    (1, (1, 1, 1, 1), (1, 1), (3, 3)), (2, (0, 2, 1, 0), (1, 1), (3, 3)),
    (3, (2, 4, 0, 1), (2, 1), (3, 2)), (1, (0, 0, 0, 0), (1, 2), (2, 3))])
def test_both_gradients_by_correlation_equal_their_definitions(rng, monkeypatch, groups, padding,
                                                               dilation, kernel, layout):
    """At stride 1, ∂L/∂x as a convolution of G equals the definition, col2im(Wᵀ G) cropped;
    and ∂L/∂W from the same columns of G equals G · colsᵀ of x's columns. Three images in
    chunks of two (the last one smaller), x laid out as a user's array or as a convolution's
    output (channels outermost in memory)."""
    n, c, f, (h, w), (kh, kw) = 3, 6, 6, (7, 8), kernel
    top, bottom, left, right = padding
    padded_shape = (n, c, h + top + bottom, w + left + right)
    out_hw = tuple(s - d * (k - 1) for s, k, d in zip(padded_shape[2:], kernel, dilation))
    assert conv.correlates((1, 1), padding, dilation, kernel)
    for dtype in (np.float32, np.float64):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", 2 * f * kh * kw * h * w * np.dtype(dtype).itemsize)
        weight = rng.standard_normal((f, c // groups, kh, kw)).astype(dtype)
        grad = rng.standard_normal((n, f) + out_hw).astype(dtype)
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        if layout == "channel-major":
            x = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
        assert conv.image_chunks(grad.shape, grad.dtype, kernel, (h, w)) == [(0, 2), (2, 3)]
        grad_mat = grad.transpose(1, 0, 2, 3).reshape(groups, f // groups, -1)
        full = (weight.reshape(groups, f // groups, -1).swapaxes(1, 2) @ grad_mat)
        expected = col2im(full.reshape(c, kh, kw, n, *out_hw), padded_shape, kernel, (1, 1),
                          dilation, out_hw)[:, :, top: top + h, left: left + w]
        tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
        alone, none = conv.by_correlation(grad, weight, (n, c, h, w), padding, dilation, groups)
        got_x, got_w = conv.by_correlation(grad, weight, x.shape, padding, dilation, groups, x=x)
        assert none is None
        for got in (alone, got_x):
            np.testing.assert_allclose(got, expected, **tol)
            assert got.dtype == dtype and got.shape == (n, c, h, w)
        np.testing.assert_allclose(
            got_w, _weight_grad_by_definition(x, grad, kernel, padding, dilation, groups), **tol)
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
def test_im2col_equals_the_taps_one_at_a_time(rng, monkeypatch, kernel, stride, dilation,
                                              padding, layout, passes):
    """windows_view's [:, :, i, j] is tap (i, j), read-only, from contiguous memory (and a
    contiguous slice starting past its buffer's start) as from a non-contiguous view; im2col
    copies it out channel-major, of x with zeros around it, in one pass (from a padded copy)
    or in two (shifted rows first, from a padded copy or with the padding written in them,
    then blocks of them), into buffers holding an earlier call's numbers. (The last padding: column taps that land
    only in the padding.)"""
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
    out_hw = tuple((s - d * (k - 1) - 1) // st + 1
                   for s, k, st, d in zip(padded.shape[2:], kernel, stride, dilation))
    view = windows_view(padded, kernel, stride, dilation, out_hw)
    assert view.shape == x.shape[:2] + kernel + out_hw and not view.flags.writeable
    cols = conv.im2col(x, kernel, stride, dilation, out_hw, padding=padding)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            taps = tap(padded, i, j, stride, dilation, out_hw)
            np.testing.assert_array_equal(view[:, :, i, j], taps)
            np.testing.assert_array_equal(cols[:, i, j], taps.transpose(1, 0, 2, 3))
    assert bool(two_passes) == (passes != "one")
    assert bool(copies) == (any(padding) and passes != "two, padding in the rows")


@pytest.mark.parametrize("groups,stride,padding", [(1, (1, 1), (1, 1, 1, 1)), (2, (2, 1), (0, 2, 1, 0))])
def test_columns_made_a_chunk_of_images_at_a_time_give_the_same_convolution(rng, monkeypatch,
                                                                           groups, stride,
                                                                           padding):
    """conv2d and the weight gradient make the columns a few images at a time (here 2 per
    chunk, 7 images: an uneven last chunk), each chunk padded on its own and its columns
    written over the last chunk's; both equal the one-piece products (one chunk of 7)."""
    x = rng.standard_normal((7, 4, 9, 8)).astype(np.float32)
    weight = rng.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32)
    out_hw = tuple((s + p0 + p1 - k) // st + 1 for s, k, st, p0, p1 in
                   zip((9, 8), (3, 2), stride, padding[::2], padding[1::2]))
    grad_mat = rng.standard_normal((groups, 6 // groups, 7 * out_hw[0] * out_hw[1])).astype(np.float32)
    per_image = 4 * 3 * 2 * out_hw[0] * out_hw[1] * 4
    results = []
    for chunk_bytes, chunks in ((2 * per_image, [(0, 2), (2, 4), (4, 6), (6, 7)]), (1 << 40, [(0, 7)])):
        monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", chunk_bytes)
        assert conv.image_chunks(x.shape, x.dtype, (3, 2), out_hw) == chunks
        results.append((conv.conv2d(x, weight, None, stride, padding, (1, 1), groups, out_hw)[0],
                        conv.weight_grad_from_matrix(x, grad_mat, (3, 2), stride, padding, (1, 1),
                                                     groups, out_hw)))
    (chunked, chunked_w), (whole, whole_w) = results
    np.testing.assert_allclose(chunked, whole, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(chunked_w, whole_w, rtol=1e-5, atol=1e-4)
    assert chunked_w.shape == weight.shape
    assert conv.image_chunks(x[:0].shape, x.dtype, (3, 2), out_hw) == []


def test_only_small_columns_are_kept_and_the_gradients_are_the_same_either_way(rng, monkeypatch):
    """Columns up to KEEP_COLUMNS_BYTES are saved on the node (cols) for the weight gradient;
    larger ones are not, and backward makes them again. Same gradients both ways; no columns
    kept when the weight needs no gradient."""
    x = rng.standard_normal((3, 2, 6, 5))
    w = rng.standard_normal((4, 2, 3, 3))
    size = 2 * 3 * 3 * 3 * 6 * 5 * 8  # the columns' bytes, padding 1: (C·k·k) × (N·Ho·Wo) float64
    grads = {}
    for limit in (size, size - 1):
        monkeypatch.setattr(conv, "KEEP_COLUMNS_BYTES", limit)
        xt, wt = tensor(x, requires_grad=True), tensor(w, requires_grad=True)
        out = F.conv2d(xt, wt, padding=1)
        saved = out.grad_fn.saved_for_backward()
        assert ("cols" in saved) is (limit == size)
        if limit == size:
            assert saved["cols"].nbytes == size
        (out * out).sum().backward()
        grads[limit] = (xt.grad.numpy(), wt.grad.numpy())
    for kept, remade in zip(grads[size], grads[size - 1]):
        np.testing.assert_allclose(kept, remade, rtol=1e-12, atol=1e-12)
    out = F.conv2d(tensor(x, requires_grad=True), tensor(w), padding=1)
    assert "cols" not in out.grad_fn.saved_for_backward()


@pytest.mark.parametrize("stride,padding", [((1, 1), 1), ((2, 1), (0, 2))])
def test_convolution_over_several_chunks_and_a_small_col2im_has_finite_difference_and_torch_gradients(
        rng, monkeypatch, torch, stride, padding):
    """float64: the columns made a few images at a time (7 images in 4 or 2 chunks, the last
    one smaller), forward and again for the weight gradient (none kept: KEEP_COLUMNS_BYTES
    0); at stride 1 both gradients from the columns of G (``by_correlation``), at stride 2 the
    input's by col2im in one bincount (col2im_small) and the weight's from x's columns made
    again."""
    from helpers import check_grad, torch_parity
    x, w, b = (rng.standard_normal((7, 2, 6, 5)), rng.standard_normal((3, 2, 3, 2)),
               rng.standard_normal(3))
    monkeypatch.setattr(conv, "COLUMN_CHUNK_BYTES", 2 * 2 * 3 * 2 * 8 * 6 * 6)  # 2 or 4 images
    monkeypatch.setattr(conv, "KEEP_COLUMNS_BYTES", 0)
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
    assert "cols" not in fn(tensor(x), tensor(w, requires_grad=True), tensor(b)).grad_fn.saved_for_backward()
    assert all(len(c) > 1 for c in chunks if c and c[-1][1] == 7)  # every full batch: chunked


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
    input's alone), and either route gives the same."""
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
    got_x, got_w, _ = conv.conv2d_backward(grad, weight, x, None, (True, True), *geometry, 1,
                                           out_hw)
    alone = conv.conv2d_backward(grad, weight, x, None, (True, False), *geometry, 1, out_hw)
    assert taken == [True] * pays_with_weight + [False] * pays and alone[1] is None
    grad_mat = conv.grad_matrix(grad, 1)
    other_x = conv.input_grad_from_matrix(grad_mat, weight, input_shape, *geometry, 1, out_hw)
    other_w = conv.weight_grad_from_matrix(x, grad_mat, weight_shape[2:], *geometry, 1, out_hw)
    reference_x, reference_w = original(grad, weight, input_shape, pads, (1, 1), 1, x=x)
    for got in (got_x, alone[0], other_x):
        np.testing.assert_allclose(got, reference_x, rtol=1e-4, atol=1e-4)
    for got in (got_w, other_w):
        np.testing.assert_allclose(got, reference_w, rtol=1e-4, atol=2e-3)


def test_leaf_gradient_is_adopted_only_when_nothing_else_holds_it():
    """The engine keeps a leaf's first gradient without a copy only when it is the sole owner."""
    from tinygrad_pool import Node
    x = tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel()[[5, 7, 13, 15]], 1)
    assert x.grad.numpy().sum() == 4 and x.grad.numpy().flags.writeable

    a, b = tensor(np.ones(3), requires_grad=True), tensor(np.ones(3), requires_grad=True)
    (a + b).sum().backward()  # Add hands one array to both inputs
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.numpy()[0] = 7
    assert b.grad.numpy()[0] == 1

    seed = np.ones(3)
    c = tensor(np.ones(3), requires_grad=True)
    c.backward(seed)  # the caller's own array
    seed[0] = 5
    assert c.grad.numpy()[0] == 1

    class Saved(Node):
        def forward(ctx, x):
            ctx.grad_to_return = np.full(x.shape, 2.0)
            return x.copy()

        def backward(ctx, grad):
            return ctx.grad_to_return  # also held by the node while the graph is retained

    d = tensor(np.ones(3), requires_grad=True)
    out = Saved.apply(d)
    out.backward(np.ones(3), retain_graph=True)
    assert not np.shares_memory(d.grad.numpy(), out.grad_fn.grad_to_return)
    out.backward(np.ones(3))
    np.testing.assert_array_equal(d.grad.numpy(), 4.0)


# Counted in a fresh interpreter: other threads of this one (pytest-xdist's) allocate too.
_COUNT_OBJECTS_PER_OP = """
import gc
import numpy as np
from tinygrad_pool import tensor
x = tensor(np.ones(16, np.float32), requires_grad=True)
scale, shift = tensor(np.full(16, 0.9, np.float32)), tensor(np.zeros(16, np.float32))
y = x * scale
gc.collect()
gc.disable()
before = len(gc.get_objects())
for i in range(300):
    y = y * scale if i % 3 == 0 else (y + shift if i % 3 == 1 else y.tanh())
print((len(gc.get_objects()) - before) / 300)
"""


def test_a_recorded_elementwise_op_keeps_four_objects_for_the_garbage_collector():
    """A long chain keeps every node until backward, and CPython's collector walks them all
    again and again while the graph grows (measured: see benchmarks/README.md). Each of mul,
    add and tanh keeps its node, its inputs tuple, its edges tuple and its output Tensor: its
    flags are shared constant tuples, and equal shapes keep no shape tuples (only a broadcast
    needs them, to sum its gradient back)."""
    done = subprocess.run([sys.executable, "-c", _COUNT_OBJECTS_PER_OP], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) <= 4
    x = tensor(np.ones(16, np.float32), requires_grad=True)
    scale, shift = tensor(np.full(16, 0.9, np.float32)), tensor(np.zeros(16, np.float32))
    y = x * scale
    for i in range(300):
        y = y * scale if i % 3 == 0 else (y + shift if i % 3 == 1 else y.tanh())
    add = y.grad_fn.parents[0].grad_fn  # (the last op is tanh, the one before it the add)
    assert add.needs_input_grad is _FLAGS_OF_TWO[True][False] and add.a_shape is None
    broadcast = (y + tensor(np.ones((3, 1), np.float32))).grad_fn
    assert (broadcast.a_shape, broadcast.b_shape) == ((16,), (3, 1))


@pytest.mark.parametrize("shape,target", [
    ((), (3, 2)), ((1,), (4,)), ((3, 1), (2, 3, 5)), ((1, 4), (3, 4)), ((2, 3), (2, 3)),
    ((0, 1), (2, 0, 3)), ((1, 1), (1, 1))])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_broadcast_view_equals_numpys_broadcast_to(rng, shape, target, layout):
    """views.broadcast_to is np.broadcast_to: the same values and strides, read-only, over the
    same memory (a non-contiguous input goes to NumPy itself)."""
    x = rng.standard_normal(shape[::-1]).T if layout == "transposed" else rng.standard_normal(shape)
    ours, numpys = views.broadcast_to(x, target), np.broadcast_to(x, target)
    np.testing.assert_array_equal(ours, numpys)
    assert ours.shape == numpys.shape and ours.strides == numpys.strides
    assert not ours.flags.writeable and np.shares_memory(ours, x) == (x.size > 0)


@pytest.mark.parametrize("shape,target", [((3,), (4,)), ((2, 3), (3,)), ((1,), (-1,))])
def test_broadcast_view_refuses_what_numpy_refuses(shape, target):
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(shape), target)
    with pytest.raises(ValueError):
        views.broadcast_to(np.ones(shape), target)


# ---- quiet: np.errstate(all="ignore") by NumPy's context variable ------------------------------
def _divide_by_zero():
    return np.array([1.0]) / np.array([0.0])


def test_quiet_silences_what_np_errstate_would_and_restores_the_settings_after():
    with np.errstate(all="raise"):
        before = np.geterr()
        with quiet.quiet():
            assert np.geterr() == {"divide": "ignore", "over": "ignore", "under": "ignore",
                                   "invalid": "ignore"}
            assert _divide_by_zero()[0] == np.inf  # raised outside
            assert np.isnan(np.array([np.inf]) - np.array([np.inf]))[0]
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            _divide_by_zero()


def test_quiet_nests_and_restores_on_an_exception():
    before = np.geterr()
    with pytest.raises(KeyError):
        with quiet.quiet():
            with np.errstate(divide="raise"):
                with quiet.quiet():
                    _divide_by_zero()
                with pytest.raises(FloatingPointError):
                    _divide_by_zero()
            raise KeyError("out")
    assert np.geterr() == before


def test_quiet_keeps_the_users_buffer_size_and_leaves_other_threads_alone():
    import threading
    size, entered, seen = np.getbufsize(), threading.Event(), {}

    def other_thread():  # already running when the main thread goes quiet
        entered.wait()
        seen["thread"] = np.geterr()["divide"]

    thread = threading.Thread(target=other_thread)
    thread.start()
    try:
        np.setbufsize(16384)
        with quiet.quiet():
            seen["bufsize"] = np.getbufsize()
            entered.set()
            thread.join()
    finally:
        np.setbufsize(size)
    assert seen == {"bufsize": 16384, "thread": "warn"}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("zero_side", ["a", "b"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_masked_where_equals_np_where_bit_for_bit(rng, dtype, zero_side, layout):
    """memory.where's bits path (a large float array and a +0) against np.where itself: the
    same bits everywhere, inf, nan, -0 and negative numbers included."""
    values = rng.standard_normal((8, 16, 32, 32)).astype(dtype)
    if layout == "transposed":
        values = values.transpose(1, 0, 2, 3)  # a conv's memory order
    flat = values.reshape(-1)  # (a copy when transposed: values is set below)
    flat[:6] = [np.inf, -np.inf, np.nan, -0.0, -2.0, 3.0]
    values[...] = flat.reshape(values.shape)
    condition = rng.random(values.shape) < 0.5
    condition.reshape(-1)[:6] = [False, False, False, True, False, True]
    zero = np.zeros((), dtype)
    a, b = (zero, values) if zero_side == "a" else (values, zero)
    assert values.nbytes >= memory.SCRATCH_MIN_BYTES  # the bits path, not np.where
    got = memory.where(condition, a, b)
    want = np.where(condition, a, b)
    bits = np.dtype(f"u{values.dtype.itemsize}")
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(bits), np.ascontiguousarray(want).view(bits))


@pytest.mark.parametrize("case", ["small", "minus zero", "wider zero", "integers", "broadcast"])
def test_masked_where_leaves_other_cases_to_np_where(rng, case):
    values = rng.standard_normal((64, 64)).astype(np.float32)
    condition = rng.random(values.shape) < 0.5
    zero = np.zeros((), np.float32)
    if case == "small":
        values, condition = values[:2], condition[:2]
    elif case == "minus zero":
        zero = np.array(-0.0, np.float32)  # np.where gives -0 where masked: the bits path cannot
    elif case == "wider zero":
        zero = np.zeros((), np.float64)  # the result is float64
    elif case == "integers":
        values = (values * 10).astype(np.int32)
    else:
        condition = condition[:1]  # broadcast over the rows
    got = memory.where(condition, values, zero)
    want = np.where(condition, values, zero)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


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
                        ("SMALL_PRODUCT", 0), ("KEEP_COLUMNS_BYTES", 0),
                        ("COLUMN_CHUNK_BYTES", 2 * 2 * 3 * 2 * 6 * 6 * 8)):  # 2 or 3 images
        monkeypatch.setattr(conv, name, value)
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
    """float32 at a size that takes the new routes with the thresholds as they are: both
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
