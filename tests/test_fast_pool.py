"""fast/pool.py: its kernels against the definitions they shortcut (ops/pool.py's references,
one window at a time loops), PyTorch and finite differences; and the tie rule, written once as
``MaxPool2d.paid_cells``, against worked examples. A fast path may change how fast, never what.

(Each replacement is also checked against its reference on fixed cases by tests/test_kernels.py,
with tests/kernel_cases_pool.py.)
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import gradcheck, kernels, tensor
from tinygrad_pool.fast import memory, pool
from tinygrad_pool.ops import pool as ops_pool
from tinygrad_pool.windows import pool_output_size, tap

HYPOTHESIS = settings(max_examples=60, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


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
    out, argmax = pool.max_pool_argmax(x, kernel, kernel, (0, 0), (1, 1), out_hw)
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
        for grad, idx, other in ((a.grad.numpy(), expected_a, out_b.numpy()),
                                 (b.grad.numpy(), expected_b, out_a.numpy())):
            routed = np.zeros(2 * 3 * 144)
            np.add.at(routed, (idx + np.arange(6).reshape(2, 3, 1, 1) * 144).ravel(), other.ravel())
            np.testing.assert_array_equal(grad, routed.reshape(2, 3, 12, 12))


# ---- the kernels against PyTorch's scan, one window at a time -----------------------------------
def _torch_scan(x, kernel, stride, padding, dilation, out_hw):
    """PyTorch's CPU max pool, literally: each window's real pixels in row-major order, a running
    max from -inf kept by "val > max || isnan(val)", its index starting at the first real pixel."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    out, idx = np.empty((n, c) + out_hw, x.dtype), np.empty((n, c) + out_hw, np.int64)
    for b, ch, i, j in np.ndindex(n, c, *out_hw):
        rows = [r for r in range(i * sh - ph, i * sh - ph + kh * dh, dh) if 0 <= r < h]
        cols = [q for q in range(j * sw - pw, j * sw - pw + kw * dw, dw) if 0 <= q < w]
        best, where = lowest, rows[0] * w + cols[0]
        for r in rows:
            for q in cols:
                value = x[b, ch, r, q]
                if value > best or np.isnan(value):
                    best, where = value, r * w + q
        out[b, ch, i, j], idx[b, ch, i, j] = x[b, ch].reshape(-1)[where], where
    return out, idx


@st.composite
def _geometries(draw):
    """A valid max-pool geometry and an input for it: few distinct values (ties), maybe NaNs
    and -inf (floats), maybe the integer type's least value, maybe a transposed view."""
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    ceil_mode = draw(st.booleans())
    hw = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 10))
               for k, d, p in zip(kernel, dilation, padding))
    try:
        out_hw = tuple(pool_output_size("max_pool2d", *args, ceil_mode, "axis") for args in
                       zip(hw, kernel, stride, padding, dilation))
        for args in zip(hw, kernel, stride, padding, dilation, out_hw):
            ops_pool.check_windows_reach_input("max_pool2d", *args, "axis")
    except ValueError:
        out_hw = None
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    shape = (draw(st.integers(0, 2)), draw(st.integers(1, 3)))
    transposed = draw(st.booleans())
    x = rng.integers(-2, 3, shape + (hw[::-1] if transposed else hw)).astype(dtype)
    special = rng.random(x.shape) < 0.1
    if dtype in (np.float32, np.float64):
        x[special] = rng.choice([np.nan, -np.inf], size=int(special.sum()))
    else:
        x[special] = np.iinfo(dtype).min
    if transposed:
        x = x.transpose(0, 1, 3, 2)  # a view, not contiguous
    return x, kernel, stride, padding, dilation, out_hw


@HYPOTHESIS
@given(g=_geometries(), tiles=st.booleans())
def test_fast_and_reference_max_pool_are_pytorchs_scan(monkeypatch, g, tiles):
    x, kernel, stride, padding, dilation, out_hw = g
    if out_hw is None:  # a geometry max_pool2d refuses
        return
    monkeypatch.setattr(pool, "SMALL_INPUT", 2048 if tiles else 0)
    want_out, want_idx = _torch_scan(x, kernel, stride, padding, dilation, out_hw)
    reference, fast = kernels.implementations("max_pool_argmax")
    for out, argmax in (reference(x, kernel, stride, padding, dilation, out_hw),
                        fast(x, kernel, stride, padding, dilation, out_hw)):
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(argmax, want_idx)
        assert out.dtype == x.dtype and argmax.dtype == np.int32
    if x.dtype.kind == "f":  # the gradient's routes, by both kernels
        grad = np.random.default_rng(0).standard_normal(want_out.shape).astype(x.dtype)
        routed = [route(grad, want_idx.astype(np.int32), x.shape)
                  for route in kernels.implementations("route_to_argmax")]
        np.testing.assert_array_equal(routed[0], routed[1])
        assert routed[0].dtype == routed[1].dtype == x.dtype


@HYPOTHESIS
@given(g=_geometries())
def test_fast_window_sums_and_their_adjoint_equal_the_references(g):
    x, kernel, stride, padding, _, _ = g
    try:
        out_hw = tuple(pool_output_size("avg_pool2d", size, k, s, p, 1, True, "axis")
                       for size, k, s, p in zip(x.shape[2:], kernel, stride, padding))
    except ValueError:
        return
    x = np.nan_to_num(x, nan=0.5, neginf=-3.0) if x.dtype.kind == "f" else x
    sums = [f(x, kernel, stride, padding, out_hw) for f in kernels.implementations("window_sum")]
    np.testing.assert_allclose(sums[1], sums[0], rtol=1e-6)
    assert sums[0].dtype == sums[1].dtype == x.dtype
    values = np.random.default_rng(1).standard_normal(sums[0].shape)
    spread = [f(values, x.shape, kernel, stride, padding, out_hw)
              for f in kernels.implementations("spread_over_windows")]
    np.testing.assert_allclose(spread[1], spread[0], rtol=1e-12)
    # adjoint: <window_sum(a), v> = <a, spread(v)>
    a = np.random.default_rng(2).standard_normal(x.shape)
    np.testing.assert_allclose((kernels.implementations("window_sum")[0](
        a, kernel, stride, padding, out_hw) * values).sum(), (a * spread[0]).sum(), rtol=1e-9,
        atol=1e-12)


# ---- the tie rule, written once: MaxPool2d.paid_cells --------------------------------------
# 2×2 windows: (0, 0) ties 3 at (0, 1) and (1, 0); (0, 1) ties 3 at (0, 2) and (1, 3); (1, 0)
# holds a NaN, which equals nothing: it pays its argmax alone; (1, 1) ties 2 three times.
TIES = np.array([[1, 3, 3, 0],
                 [3, 2, 0, 3],
                 [np.nan, 1, 2, 2],
                 [0, 0, 2, 1]]).reshape(1, 1, 4, 4)
TIES_GRAD = np.array([[1.0, 2.0], [4.0, 8.0]]).reshape(1, 1, 2, 2)
TIES_EXPECTED = {
    "first": [[0, 1, 2, 0], [0, 0, 0, 0], [4, 0, 8, 0], [0, 0, 0, 0]],
    "split": [[0, 0.5, 1, 0], [0.5, 0, 0, 1], [4, 0, 8 / 3, 8 / 3], [0, 0, 8 / 3, 0]],
    "all": [[0, 1, 2, 0], [1, 0, 0, 2], [4, 0, 8, 8], [0, 0, 8, 0]],
}


@pytest.fixture(params=["fast", "reference"])
def mode(request):
    before = tinygrad_pool.get_kernels()
    tinygrad_pool.set_kernels(request.param)
    yield request.param
    tinygrad_pool.set_kernels(before)


@pytest.mark.parametrize("ties", ["first", "split", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_tie_rule_by_hand_nan_window_included(mode, ties, dtype):
    x = tensor(TIES.astype(dtype), requires_grad=True)
    out, indices = F.max_pool2d(x, 2, return_indices=True, ties=ties)
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[1, 2], [8, 10]])
    paid = out.grad_fn.paid_cells(x.numpy())
    counts = {"first": [1, 1, 1, 1], "split": [2, 2, 1, 3], "all": [2, 2, 1, 3]}[ties]
    np.testing.assert_array_equal(np.count_nonzero(paid.share, axis=2).ravel(), counts)
    out.backward(TIES_GRAD.astype(dtype))
    np.testing.assert_allclose(x.grad.numpy()[0, 0], TIES_EXPECTED[ties], rtol=1e-7)
    assert x.grad.dtype == dtype


@pytest.mark.parametrize("ties", ["split", "all"])
def test_padding_never_ties(mode, ties):
    """All pixels equal: every window's real cells tie, and only they (3×3 windows, padding 1)."""
    x = tensor(np.zeros((1, 1, 2, 3)), requires_grad=True)
    F.max_pool2d(x, 3, stride=1, padding=1, ties=ties).sum().backward()
    expected = np.zeros((2, 3))
    for i, j in np.ndindex(2, 3):  # each window's real cells, by the definition
        rows, cols = range(max(i - 1, 0), min(i + 2, 2)), range(max(j - 1, 0), min(j + 2, 3))
        for r in rows:
            for q in cols:
                expected[r, q] += 1 / (len(rows) * len(cols)) if ties == "split" else 1
    np.testing.assert_allclose(x.grad.numpy()[0, 0], expected, rtol=1e-14)


def test_paid_cells_is_what_backward_pays_on_random_ties(rng, mode):
    """Backward equals Σ grad · share over the paid cells, for every rule and geometry here."""
    for kernel, stride, padding, dilation in (((3, 3), 2, 1, 1), ((2, 3), (1, 2), (1, 0), 2)):
        x = rng.integers(0, 3, (2, 2, 7, 8)).astype(np.float64)
        for ties in ("first", "split", "all"):
            xt = tensor(x, requires_grad=True)
            out = F.max_pool2d(xt, kernel, stride, padding, dilation, ties=ties)
            paid = out.grad_fn.paid_cells(x)
            grad = rng.standard_normal(out.shape)
            out.backward(grad)
            expected = np.zeros((2, 2, 56))
            for n, c, k, i, j in zip(*np.nonzero(paid.share)):  # the rule, one cell at a time
                expected[n, c, paid.pixel[k, i, j]] += grad[n, c, i, j] * paid.share[n, c, k, i, j]
            np.testing.assert_allclose(xt.grad.numpy().reshape(2, 2, 56), expected, rtol=1e-13)
            if ties == "first":
                np.testing.assert_array_equal(paid.share.sum(axis=2), 1.0)
                np.testing.assert_array_equal(paid.mask(x.shape),
                                              ops_pool.argmax_mask(x.shape, paid.argmax))


def test_paid_cells_runs_the_argmax_again_once_backward_freed_it():
    x = tensor(TIES, requires_grad=True)
    out = F.max_pool2d(x, 2, ties="split")
    saved = out.grad_fn.paid_cells(x.numpy())
    out.sum().backward()
    assert out.grad_fn.argmax is None  # released
    again = out.grad_fn.paid_cells(x.numpy())
    np.testing.assert_array_equal(again.argmax, saved.argmax)
    np.testing.assert_array_equal(again.share, saved.share)
    assert out.grad_fn.paid_cells(x.numpy(), ties="all").share.sum() == 8  # another rule


# ---- ops describe themselves: window_cells ------------------------------------------------------
def test_max_pool_window_cells_name_the_input_cells_and_the_padding():
    x = tensor(np.arange(50.0).reshape(1, 2, 5, 5), requires_grad=True)
    node = F.max_pool2d(x, 3, stride=2, padding=1).grad_fn
    cells, padding = node.window_cells((0, 1, 0, 0))
    assert cells == [(0, 1, 0, 0), (0, 1, 0, 1), (0, 1, 1, 0), (0, 1, 1, 1)]
    assert padding == [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)]
    cells, padding = node.window_cells((0, 0, 1, 2))  # rows 1-3, columns 3-5: 5 is padding
    assert cells == [(0, 0, r, q) for r in (1, 2, 3) for q in (3, 4)] and padding == [
        (0, 2), (1, 2), (2, 2)]
    dilated = F.max_pool2d(x, 2, stride=1, dilation=2).grad_fn
    assert dilated.window_cells((0, 0, 1, 2)) == ([(0, 0, 1, 2), (0, 0, 1, 4), (0, 0, 3, 2),
                                                   (0, 0, 3, 4)], [])


def test_avg_pool_window_cells_include_ceil_modes_overhang_as_outside():
    x = tensor(np.ones((1, 1, 5, 5)), requires_grad=True)
    node = F.avg_pool2d(x, 2, ceil_mode=True).grad_fn
    assert node.window_cells((0, 0, 2, 2)) == ([(0, 0, 4, 4)], [(0, 1), (1, 0), (1, 1)])
    assert node.window_cells((0, 0, 0, 1)) == ([(0, 0, 0, 2), (0, 0, 0, 3), (0, 0, 1, 2),
                                                (0, 0, 1, 3)], [])


# ---- explicit saving: what each node keeps is what PyTorch keeps ----------------------------------
def test_max_pool_saves_its_input_and_argmax_by_name_and_frees_them():
    x = tensor(TIES, requires_grad=True)
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    node = out.grad_fn
    assert list(node.saved_for_backward()) == ["x", "argmax"]
    np.testing.assert_array_equal(node.argmax, indices.numpy())
    out.sum().backward()
    assert node.saved_for_backward() == {} and node.argmax is None


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d", "adaptive_max_pool2d",
                                "adaptive_avg_pool2d"])
def test_writing_the_saved_input_in_place_is_refused_as_by_torch(torch, op):
    fns = {"max_pool2d": lambda f, y: f.max_pool2d(y, 2), "avg_pool2d": lambda f, y: f.avg_pool2d(y, 2),
           "adaptive_max_pool2d": lambda f, y: f.adaptive_max_pool2d(y, 3),
           "adaptive_avg_pool2d": lambda f, y: f.adaptive_avg_pool2d(y, 3)}
    for lib, f in ((tinygrad_pool, F), (torch, torch.nn.functional)):
        x = lib.tensor(np.ones((1, 1, 5, 5)), requires_grad=True)
        y = x * 1
        out = fns[op](f, y)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_reference_and_fast_modes_give_the_same_pools_and_gradients(rng):
    x = rng.integers(-2, 3, (2, 3, 9, 8)).astype(np.float32)
    x[0, 0, 0, :2] = np.nan
    results = {}
    for mode in ("fast", "reference"):
        before = tinygrad_pool.get_kernels()
        tinygrad_pool.set_kernels(mode)
        try:
            got = []
            for fn in (lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True),
                       lambda t: F.max_pool2d(t, 2, ties="split"),
                       lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                       lambda t: F.adaptive_max_pool2d(t, (4, 5))):
                xt = tensor(x, requires_grad=True)
                out = fn(xt)
                out.backward(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))
                got += [out.numpy(), xt.grad.numpy()]
            results[mode] = got
        finally:
            tinygrad_pool.set_kernels(before)
    for fast, reference in zip(results["fast"], results["reference"]):
        np.testing.assert_allclose(fast, reference, rtol=1e-6, equal_nan=True)
