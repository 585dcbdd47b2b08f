"""F.adaptive_avg_pool2d and F.adaptive_max_pool2d (and their Modules): PyTorch's window rule
start = floor(i·H/out), end = ceil((i+1)·H/out), forward, indices, gradients and double backward
against PyTorch (float64 at 1e-12, float32 at 1e-5), finite differences, random sizes by
hypothesis (non-divisible sizes, ties), unbatched input, and PyTorch's errors.

``double_backward_parity`` is shared with test_pool.py and test_conv.py.
"""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool.autograd as autograd
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d
from tinygrad_pool.ops.pool import adaptive_avg_pool2d, adaptive_max_pool2d
from tinygrad_pool.windows import adaptive_bounds

from helpers import check_grad, leaf, torch_parity

TIGHT = dict(rtol=1e-12, atol=1e-12)  # float64 against PyTorch
FLOAT32 = dict(rtol=1e-5, atol=1e-6)
HYPOTHESIS = settings(max_examples=25, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


def double_backward_parity(torch, fn, torch_fn, *arrays, seed=0, rtol=1e-12, atol=1e-12):
    """The derivative of an op's backward, against PyTorch: g = ∂⟨fn(x), W⟩/∂x recorded
    (create_graph=True, W a leaf too), then ∂⟨g, V⟩/∂x and ∂⟨g, V⟩/∂W for fixed random V.
    Compose a nonlinearity into ``fn`` (e.g. op(x * x)) so that ∂/∂x is not identically zero."""
    rng = np.random.default_rng(seed)
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = torch_fn(*theirs)
    w = rng.standard_normal(tuple(tout.shape))
    vs = [rng.standard_normal(a.shape) for a in arrays]
    tw = torch.tensor(w, requires_grad=True)
    tg = torch.autograd.grad(tout, theirs, grad_outputs=tw, create_graph=True)
    ts = sum((g * torch.tensor(v)).sum() for g, v in zip(tg, vs))
    tsecond = torch.autograd.grad(ts, theirs + [tw], allow_unused=True)

    ours = [leaf(a) for a in arrays]
    out = fn(*ours)
    ow = tensor(w, requires_grad=True)
    g = autograd.grad(out, ours, grad_outputs=ow, create_graph=True)
    for k, (gk, tgk) in enumerate(zip(g, tg)):
        np.testing.assert_allclose(gk.numpy(), tgk.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"first derivative of input {k}")
    s = sum(((gk * tensor(v)).sum() for gk, v in zip(g[1:], vs[1:])), (g[0] * tensor(vs[0])).sum())
    second = autograd.grad(s, ours + [ow], allow_unused=True)
    for k, (sk, tsk) in enumerate(zip(second, tsecond)):
        expected = np.zeros(sk.shape if sk is not None else tsk.shape) if tsk is None else tsk.numpy()
        got = np.zeros(expected.shape) if sk is None else sk.numpy()
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                   err_msg=f"second derivative w.r.t. {'W' if k == len(ours) else k}")
        assert sk is not None or not np.any(expected)


# (input shape, output_size): tiling sizes (a plain pool), non-divisible ones with windows of
# different lengths that overlap, more outputs than pixels, None entries, unbatched input.
CONFIGS = [
    ((2, 3, 6, 8), (3, 4)),  # divides: kernel (2, 2)
    ((2, 3, 6, 8), 1),  # global pooling
    ((2, 2, 7, 9), (3, 4)),
    ((1, 2, 5, 5), 3),  # windows [0,2) [1,4) [3,5)
    ((1, 2, 5, 7), (None, 3)),  # keep the height
    ((1, 1, 3, 4), (5, 7)),  # more outputs than pixels: windows of one pixel, repeated
    ((2, 10, 11), (4, 3)),  # unbatched
    ((3, 6, 6), (2, None)),  # unbatched, divides
]
IDS = [f"{shape}-{size}" for shape, size in CONFIGS]
OPS = {"avg": adaptive_avg_pool2d, "max": adaptive_max_pool2d}


def _torch_op(torch, kind):
    return getattr(torch.nn.functional, f"adaptive_{kind}_pool2d")


# ---- the window rule, by hand -------------------------------------------------------------------
def test_adaptive_bounds_by_hand():
    # H = 5, out = 3: i·5/3 = 0, 1.67, 3.33 (floor 0, 1, 3); (i+1)·5/3 = 1.67, 3.33, 5 (ceil 2, 4, 5)
    starts, ends = adaptive_bounds(5, 3)
    np.testing.assert_array_equal(starts, [0, 1, 3])
    np.testing.assert_array_equal(ends, [2, 4, 5])
    # out > H: H = 2, out = 3 -> [0,1) [0,2) [1,2)
    starts, ends = adaptive_bounds(2, 3)
    np.testing.assert_array_equal(starts, [0, 0, 1])
    np.testing.assert_array_equal(ends, [1, 2, 2])


def test_adaptive_pools_by_hand():
    # one row of 5 pixels pooled to 3: windows [0,2) [1,4) [3,5) (above)
    x = leaf(np.array([1.0, 4.0, 2.0, 8.0, 3.0]).reshape(1, 1, 1, 5))
    avg = adaptive_avg_pool2d(x, (1, 3))
    np.testing.assert_allclose(avg.numpy().ravel(), [(1 + 4) / 2, (4 + 2 + 8) / 3, (8 + 3) / 2])
    avg.backward(np.array([6.0, 3.0, 2.0]).reshape(1, 1, 1, 3))
    # pixel 1 is in windows 0 and 1 (6/2 + 3/3), pixel 3 in windows 1 and 2 (3/3 + 2/2)
    np.testing.assert_allclose(x.grad.numpy().ravel(), [3, 3 + 1, 1, 1 + 1, 1])

    x = leaf(np.array([1.0, 4.0, 2.0, 8.0, 3.0]).reshape(1, 1, 1, 5))
    out, indices = adaptive_max_pool2d(x, (1, 3), return_indices=True)
    np.testing.assert_array_equal(out.numpy().ravel(), [4, 8, 8])
    np.testing.assert_array_equal(indices.numpy().ravel(), [1, 3, 3])
    out.backward(np.array([6.0, 3.0, 2.0]).reshape(1, 1, 1, 3))
    np.testing.assert_array_equal(x.grad.numpy().ravel(), [0, 6, 0, 3 + 2, 0])  # shared max: summed


def test_matches_the_definition_window_by_window(rng):
    x = rng.standard_normal((2, 3, 7, 10))
    out_h, out_w = 4, 6
    avg = adaptive_avg_pool2d(tensor(x), (out_h, out_w)).numpy()
    top, bottom = adaptive_bounds(7, out_h)
    left, right = adaptive_bounds(10, out_w)
    for i in range(out_h):
        for j in range(out_w):
            window = x[:, :, top[i]:bottom[i], left[j]:right[j]]
            np.testing.assert_allclose(avg[:, :, i, j], window.mean(axis=(2, 3)), rtol=1e-13)
    out, indices = adaptive_max_pool2d(tensor(x), (out_h, out_w), return_indices=True)
    for i in range(out_h):
        for j in range(out_w):
            window = x[:, :, top[i]:bottom[i], left[j]:right[j]]
            np.testing.assert_array_equal(out.numpy()[:, :, i, j], window.max(axis=(2, 3)))
            row, col = np.divmod(window.reshape(2, 3, -1).argmax(axis=2), window.shape[3])
            np.testing.assert_array_equal(indices.numpy()[:, :, i, j],
                                          (top[i] + row) * 10 + left[j] + col)


# ---- PyTorch parity -----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(OPS))
@pytest.mark.parametrize("shape, size", CONFIGS, ids=IDS)
def test_matches_torch_float64(torch, rng, kind, shape, size):
    x = rng.standard_normal(shape)
    torch_parity(torch, lambda t: OPS[kind](t, size), x,
                 torch_fn=lambda t: _torch_op(torch, kind)(t, size), **TIGHT)
    if kind == "max":
        _, ours = adaptive_max_pool2d(tensor(x), size, return_indices=True)
        _, theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, True)
        assert ours.dtype == np.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("kind", sorted(OPS))
@pytest.mark.parametrize("shape, size", CONFIGS[:4], ids=IDS[:4])
def test_matches_torch_float32(torch, rng, kind, shape, size):
    x = rng.standard_normal(shape).astype(np.float32)
    weights = rng.standard_normal(tuple(_torch_op(torch, kind)(torch.tensor(x), size).shape))
    ours = tensor(x, requires_grad=True)
    out = OPS[kind](ours, size)
    out.backward(weights.astype(np.float32))
    theirs = torch.tensor(x, requires_grad=True)
    tout = _torch_op(torch, kind)(theirs, size)
    tout.backward(torch.tensor(weights, dtype=torch.float32))
    assert out.dtype == np.float32 and ours.grad.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **FLOAT32)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **FLOAT32)


@pytest.mark.parametrize("kind", sorted(OPS))
@pytest.mark.parametrize("shape, size", [CONFIGS[0], CONFIGS[2], CONFIGS[6]],
                         ids=[IDS[0], IDS[2], IDS[6]])
def test_double_backward_matches_torch(torch, rng, kind, shape, size):
    double_backward_parity(torch, lambda t: OPS[kind](t * t, size),
                           lambda t: _torch_op(torch, kind)(t * t, size), rng.standard_normal(shape))


# ---- finite differences -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(OPS))
@pytest.mark.parametrize("shape, size", [CONFIGS[0], CONFIGS[3], CONFIGS[5], CONFIGS[6]],
                         ids=[IDS[0], IDS[3], IDS[5], IDS[6]])
def test_gradcheck(rng, kind, shape, size):
    check_grad(lambda t: OPS[kind](t, size), rng.standard_normal(shape))


# ---- the two routes: a plain pool where the size divides ----------------------------------------
def test_tiling_sizes_reuse_the_plain_pools_and_others_do_not(rng):
    x = leaf(rng.standard_normal((1, 2, 6, 8)))
    assert adaptive_avg_pool2d(x, (3, 4)).grad_fn.name == "AvgPool2d"
    assert adaptive_max_pool2d(x, (3, 4)).grad_fn.name == "MaxPool2d"
    assert adaptive_avg_pool2d(x, (4, 4)).grad_fn.name == "AdaptiveAvgPool2d"
    out, indices = adaptive_max_pool2d(x, (3, 5), return_indices=True)
    assert out.grad_fn.name == "AdaptiveMaxPool2d"
    np.testing.assert_array_equal(out.grad_fn.argmax, indices.numpy())  # saved for backward
    out.sum().backward()
    assert "argmax" not in out.grad_fn.saved_for_backward()  # released after backward


# ---- ties, NaN, -inf ------------------------------------------------------------------------------
def test_ties_go_to_the_first_maximum_as_in_torch(torch):
    x = np.zeros((1, 1, 3, 5))  # all tied: each window's first pixel
    _, ours = adaptive_max_pool2d(tensor(x), (2, 3), return_indices=True)
    _, theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (2, 3), True)
    np.testing.assert_array_equal(ours.numpy()[0, 0], [[0, 1, 3], [5, 6, 8]])
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_nan_wins_and_the_last_nan_is_chosen_as_in_torch(torch):
    # window [0,3) holds NaNs at 1 and 2 (PyTorch's "val > max || isnan(val)": the last);
    # window [2,5) holds NaN at 2 and 3
    row = np.array([1.0, np.nan, np.nan, np.nan, 3.0])
    for x in [row.reshape(1, 1, 1, 5), np.array([[np.nan, 1.0], [np.nan, 2.0]]).reshape(1, 1, 2, 2)]:
        for size in [(1, 2), (1, 1)]:
            leaf_x = leaf(x)
            out, ours = adaptive_max_pool2d(leaf_x, size, return_indices=True)
            tout, theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, True)
            np.testing.assert_array_equal(out.numpy(), tout.numpy())  # NaNs compare equal here
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
            out.sum().backward()  # each NaN window's gradient goes to its chosen NaN
            expected = np.zeros(x.size)
            np.add.at(expected, ours.numpy().ravel(), 1.0)
            np.testing.assert_array_equal(leaf_x.grad.numpy().ravel(), expected)


def test_all_minus_inf_windows_point_at_their_first_pixel(torch):
    x = np.full((1, 1, 3, 3), -np.inf)
    out, ours = adaptive_max_pool2d(tensor(x), 2, return_indices=True)
    _, theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), 2, True)
    assert np.isneginf(out.numpy()).all()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- hypothesis: random sizes against PyTorch -----------------------------------------------------
@st.composite
def adaptive_cases(draw):
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    size = (draw(st.one_of(st.none(), st.integers(0, 10))), draw(st.integers(0, 10)))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w)
    if draw(st.booleans()):
        shape = shape[1:]  # unbatched
    return shape, size, draw(st.integers(0, 2 ** 16))


@HYPOTHESIS
@given(case=adaptive_cases())
def test_adaptive_max_random_sizes_with_ties_match_torch(torch, case):
    shape, size, seed = case
    # values 0..3: ties in most windows, so this checks the first-maximum rule as well
    x = np.random.default_rng(seed).integers(0, 4, size=shape).astype(np.float64)
    _, theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, True)
    _, ours = adaptive_max_pool2d(tensor(x), size, return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if 0 in ours.shape:  # (PyTorch's backward refuses an empty output: see test_empty_output…)
        return
    torch_parity(torch, lambda t: adaptive_max_pool2d(t, size), x, seed=seed, rtol=0, atol=0,
                 torch_fn=lambda t: torch.nn.functional.adaptive_max_pool2d(t, size))


@HYPOTHESIS
@given(case=adaptive_cases())
def test_adaptive_avg_random_sizes_match_torch(torch, case):
    shape, size, seed = case
    x = np.random.default_rng(seed).standard_normal(shape)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), size)
    if 0 in expected.shape:  # (PyTorch's backward refuses an empty output: see test_empty_output…)
        assert adaptive_avg_pool2d(tensor(x), size).shape == tuple(expected.shape)
        return
    torch_parity(torch, lambda t: adaptive_avg_pool2d(t, size), x, seed=seed, **TIGHT,
                 torch_fn=lambda t: torch.nn.functional.adaptive_avg_pool2d(t, size))


# ---- unbatched input ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(OPS))
def test_unbatched_is_a_batch_of_one(rng, kind):
    x = rng.standard_normal((3, 7, 5))
    single, batch = leaf(x), leaf(x[None])
    weights = rng.standard_normal((3, 4, 2))
    out, batch_out = OPS[kind](single, (4, 2)), OPS[kind](batch, (4, 2))
    assert out.shape == (3, 4, 2)
    np.testing.assert_array_equal(out.numpy(), batch_out.numpy()[0])
    out.backward(weights)
    batch_out.backward(weights[None])
    assert single.grad.shape == x.shape
    np.testing.assert_array_equal(single.grad.numpy(), batch.grad.numpy()[0])
    if kind == "max":
        _, indices = adaptive_max_pool2d(single, (4, 2), return_indices=True)
        _, batch_indices = adaptive_max_pool2d(batch, (4, 2), return_indices=True)
        np.testing.assert_array_equal(indices.numpy(), batch_indices.numpy()[0])


# ---- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(OPS))
def test_errors_as_torch(torch, kind):
    op = OPS[kind]
    name = f"adaptive_{kind}_pool2d"
    x = leaf(np.ones((1, 2, 4, 4)))
    cases = [  # (input, output_size, error type, message)
        (leaf(np.ones((4, 4))), 2, RuntimeError, rf"Expected 3D \(unbatched\) or 4D \(batched\) "
                                                  rf"input to {name}, but got input of size: \[4, 4\]"),
        (leaf(np.ones((1, 1, 1, 4, 4))), 2, RuntimeError, r"input of size: \[1, 1, 1, 4, 4\]"),
        (x, (1, 2, 3), RuntimeError, rf"{name}: output_size must have 2 elements, got \(1, 2, 3\)"),
        (x, -1, RuntimeError, rf"{name}: elements of output_size must be greater than or equal "
                              r"to 0, got -1"),
        (x, 2.5, TypeError, rf"{name}: output_size must be an int or a pair.*2\.5"),
        (x, None, TypeError, rf"{name}: output_size must be an int or a pair.*None"),
        (x, (2, 1.5), TypeError, rf"{name}: output_size must be an int or a pair.*1\.5"),
        (leaf(np.ones((1, 1, 0, 4))), 2, RuntimeError, rf"{name}: expected input to have non-zero"
                                                        r" size .*\[1, 1, 0, 4\]"),
        (tensor(np.ones((1, 1, 4, 4), dtype=np.int64)), 2, NotImplementedError,
         rf"{name}: not implemented for dtype int64"),
    ]
    for input, size, error, message in cases:
        with pytest.raises(error, match=message):
            op(input, size)
        with pytest.raises(error):  # PyTorch refuses the same (with its own words)
            _torch_op(torch, kind)(torch.tensor(input.numpy()), size)
    assert x.grad is None


def test_shape_errors_are_also_value_errors():
    # this package raised ValueError for shapes before it followed torch
    with pytest.raises(ValueError):
        adaptive_avg_pool2d(leaf(np.ones((4, 4))), 2)


def test_adaptive_max_refuses_zero_channels_as_torch_and_avg_accepts_them(torch):
    x = np.ones((1, 0, 3, 3))
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d: expected input to have non-zero"):
        adaptive_max_pool2d(tensor(x), 2)
    assert adaptive_avg_pool2d(tensor(x), 2).shape == (1, 0, 2, 2)
    assert tuple(torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), 2).shape) == (1, 0, 2, 2)


def test_empty_output_and_empty_batch_as_torch(torch):
    # PyTorch returns these shapes; its backward then refuses an empty output, ours gives the
    # gradient of a sum over nothing: zeros
    for shape, size in [((1, 2, 4, 4), 0), ((1, 2, 4, 4), (0, 3)), ((0, 2, 5, 4), (2, 3))]:
        for kind in OPS:
            x = leaf(np.ones(shape))
            out = OPS[kind](x, size)
            assert out.shape == tuple(_torch_op(torch, kind)(torch.ones(shape), size).shape)
            out.sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), np.zeros(shape))


# ---- Modules --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ours, theirs", [
    (lambda nn: nn(5), lambda tnn: tnn.AdaptiveAvgPool2d(5)),
    (lambda nn: nn((5, None)), lambda tnn: tnn.AdaptiveAvgPool2d((5, None))),
], ids=["int", "pair-with-None"])
def test_adaptive_avg_module(torch, rng, ours, theirs):
    layer, reference = ours(AdaptiveAvgPool2d), theirs(torch.nn)
    assert repr(layer) == repr(reference)
    x = rng.standard_normal((2, 3, 9, 7))
    np.testing.assert_allclose(layer(tensor(x)).numpy(), reference(torch.tensor(x)).numpy(), **TIGHT)


def test_adaptive_max_module(torch, rng):
    layer = AdaptiveMaxPool2d((2, 3), return_indices=True)
    reference = torch.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
    assert repr(layer) == repr(reference) == "AdaptiveMaxPool2d(output_size=(2, 3))"
    x = rng.standard_normal((3, 5, 7))  # unbatched
    out, indices = layer(tensor(x))
    tout, tindices = reference(torch.tensor(x))
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    assert isinstance(AdaptiveMaxPool2d(2)(Tensor(x)), Tensor)  # no indices by default


def test_adaptive_modules_are_modules_without_parameters():
    from tinygrad_pool.nn.module import Module
    for layer in (AdaptiveAvgPool2d(1), AdaptiveMaxPool2d(1)):
        assert isinstance(layer, Module) and list(layer.parameters()) == []
    assert re.fullmatch(r"AdaptiveAvgPool2d\(output_size=1\)", repr(AdaptiveAvgPool2d(1)))
