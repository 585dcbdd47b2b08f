"""F.max_pool2d (stored argmax, tie rules, NaN, padding) and F.avg_pool2d.

Gradients are finite-difference checked on random floats (no ties, so max is differentiable);
ties are tested on integer-valued images whose answers are worked out by hand below, and
against PyTorch, whose rule is "first".
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

from helpers import check_grad, leaf, torch_parity

# (kernel_size, stride, padding, dilation, ceil_mode): overlapping windows (stride < kernel),
# padding, dilation, ceil_mode and non-square arguments.
MAX_CONFIGS = [
    (2, None, 0, 1, False),
    (3, 1, 0, 1, False),
    (3, 2, 0, 1, False),
    ((2, 3), (1, 2), 0, 1, False),
    (3, 2, 1, 1, False),
    ((3, 2), 1, (1, 0), 1, False),
    (2, 1, 0, 2, False),
    ((2, 3), (2, 1), (1, 1), (2, 1), False),
    (3, 2, 0, 1, True),
    (3, 2, 1, 1, True),
    ((2, 3), (2, 1), (1, 1), (1, 2), True),
    (2, 3, 1, 1, True),  # stride > kernel: gaps between windows
]
MAX_IDS = [f"k{c[0]}-s{c[1]}-p{c[2]}-d{c[3]}-{'ceil' if c[4] else 'floor'}" for c in MAX_CONFIGS]

# (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CONFIGS = [
    (2, None, 0, False, True, None),
    (3, 1, 0, False, True, None),
    ((2, 3), (1, 2), 0, False, True, None),
    (3, 2, 1, False, True, None),
    (3, 2, 1, False, False, None),
    ((3, 2), 1, (1, 1), False, False, None),
    (3, 2, 0, True, True, None),
    (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None),
    (2, 1, 1, False, True, 3),
]
AVG_IDS = [f"k{c[0]}-s{c[1]}-p{c[2]}-{'ceil' if c[3] else 'floor'}-pad{c[4]}-div{c[5]}"
           for c in AVG_CONFIGS]


def maxpool(kernel, stride, padding, dilation, ceil_mode, **kw):
    return lambda x: F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, **kw)


def avgpool(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return lambda x: F.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override)


# ---- finite differences (random floats: no ties) ---------------------------------------------
@pytest.mark.parametrize("config", MAX_CONFIGS, ids=MAX_IDS)
def test_max_pool2d_gradcheck(rng, config):
    check_grad(maxpool(*config), rng.standard_normal((2, 2, 6, 7)))


@pytest.mark.parametrize("ties", ["split", "all"])
@pytest.mark.parametrize("config", [MAX_CONFIGS[1], MAX_CONFIGS[9]], ids=[MAX_IDS[1], MAX_IDS[9]])
def test_max_pool2d_gradcheck_other_tie_rules_without_ties(rng, config, ties):
    check_grad(maxpool(*config, ties=ties), rng.standard_normal((1, 2, 6, 7)))


@pytest.mark.parametrize("config", AVG_CONFIGS, ids=AVG_IDS)
def test_avg_pool2d_gradcheck(rng, config):
    check_grad(avgpool(*config), rng.standard_normal((2, 2, 6, 7)))


def test_pool_method_spelling(rng):
    x = rng.standard_normal((1, 1, 5, 5))
    check_grad(lambda t: t.max_pool2d(3, stride=1, padding=1), x)
    check_grad(lambda t: t.avg_pool2d(2, stride=1, padding=1, count_include_pad=False), x)


# ---- max pool: hand-computed cases -----------------------------------------------------------
# A 4×4 integer image, 2×2 windows at stride 2. Window by window (row-major window order):
#   top-left  [[1,3],[3,0]]  max 3 at flat 1 and 4        -> first: 1
#   top-right [[2,2],[2,1]]  max 2 at flat 2, 3 and 6     -> first: 2
#   bot-left  [[5,5],[5,1]]  max 5 at flat 8, 9 and 12    -> first: 8
#   bot-right [[4,0],[0,4]]  max 4 at flat 10 and 15      -> first: 10
TIE_IMAGE = np.array([[1, 3, 2, 2],
                      [3, 0, 2, 1],
                      [5, 5, 4, 0],
                      [5, 1, 0, 4]], dtype=np.float64)
TIE_GRAD = np.array([[1.0, 2.0], [3.0, 4.0]])  # distinct upstream gradients, one per window
TIE_EXPECTED = {
    # the whole gradient to the first maximum
    "first": [[0, 1, 2, 0],
              [0, 0, 0, 0],
              [3, 0, 4, 0],
              [0, 0, 0, 0]],
    # 1/m to each of the m maxima: 1/2, 2/3 (three 2s), 3/3, 4/2
    "split": [[0, 1 / 2, 2 / 3, 2 / 3],
              [1 / 2, 0, 2 / 3, 0],
              [1, 1, 2, 0],
              [1, 0, 0, 2]],
    # the full gradient to every maximum
    "all": [[0, 1, 2, 2],
            [1, 0, 2, 0],
            [3, 3, 4, 0],
            [3, 0, 0, 4]],
}


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_max_pool2d_ties_by_hand(ties):
    x = leaf(TIE_IMAGE.reshape(1, 1, 4, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True, ties=ties)
    np.testing.assert_array_equal(out.data[0, 0], [[3, 2], [5, 4]])
    np.testing.assert_array_equal(indices.data[0, 0], [[1, 2], [8, 10]])
    np.testing.assert_array_equal(out.grad_fn.argmax, indices.data)
    out.backward(TIE_GRAD.reshape(1, 1, 2, 2))
    np.testing.assert_allclose(x.grad.data[0, 0], TIE_EXPECTED[ties], rtol=1e-15)


def test_overlapping_windows_add_their_gradients():
    # 3×3 image whose centre (flat 4) is the max of all four 2×2 windows at stride 1
    x = leaf(np.array([[0.0, 1, 0], [2, 9, 3], [0, 4, 0]]).reshape(1, 1, 3, 3))
    out, indices = F.max_pool2d(x, 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(out.data[0, 0], [[9, 9], [9, 9]])
    np.testing.assert_array_equal(indices.data[0, 0], [[4, 4], [4, 4]])
    out.backward(TIE_GRAD.reshape(1, 1, 2, 2))
    expected = np.zeros((3, 3))
    expected[1, 1] = 1 + 2 + 3 + 4  # the sum of all four windows' gradients
    np.testing.assert_array_equal(x.grad.data[0, 0], expected)


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_overlapping_windows_with_ties(ties):
    # all nine pixels equal, 2×2 windows at stride 1, upstream gradient 1 per window.
    # coverage (how many windows hold each pixel) = [[1,2,1],[2,4,2],[1,2,1]]
    x = leaf(np.ones((1, 1, 3, 3)))
    F.max_pool2d(x, 2, stride=1, ties=ties).sum().backward()
    coverage = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=float)
    expected = {
        "first": [[1, 1, 0], [1, 1, 0], [0, 0, 0]],  # each window's top-left pixel
        "split": coverage / 4,  # 1/4 from each window that holds the pixel
        "all": coverage,  # 1 from each window that holds the pixel
    }[ties]
    np.testing.assert_allclose(x.grad.data[0, 0], expected)


def test_padding_behaves_like_minus_infinity():
    # x = -[[1,2],[3,4]], 2×2 windows, stride 1, padding 1: nine windows over the padded 4×4.
    # Each window's real pixels (by hand): (-1,-1):{x00} (-1,0):{x00,x01} (-1,1):{x01}
    # (0,-1):{x00,x10} (0,0):all (0,1):{x01,x11} (1,-1):{x10} (1,0):{x10,x11} (1,1):{x11}
    # the max of each is a real (negative) pixel, never the zero a zero-padding would give
    x = leaf(-np.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    np.testing.assert_array_equal(out.data[0, 0], [[-1, -1, -2], [-1, -1, -2], [-3, -3, -4]])
    np.testing.assert_array_equal(indices.data[0, 0], [[0, 0, 1], [0, 0, 1], [2, 2, 3]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data[0, 0], [[4, 2], [2, 1]])  # count of each index


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_all_minus_inf_window_next_to_padding_points_at_a_real_pixel(ties):
    # every pixel is -inf, so each window's real pixels tie with its padding. PyTorch never looks
    # at padding: the index is the window's first real pixel (same table as the test above).
    x = leaf(np.full((1, 1, 2, 2), -np.inf))
    out, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True, ties=ties)
    assert np.isneginf(out.data).all()
    np.testing.assert_array_equal(indices.data[0, 0], [[0, 0, 1], [0, 0, 1], [2, 2, 3]])
    out.sum().backward()
    # the gradient goes to real pixels only, none is lost in the padding:
    #   first: each output to its index -> counts [[4, 2], [2, 1]]
    #   split: each window splits 1 among its real pixels (1, 2 or 4 of them); every pixel is in
    #          one 1-pixel, two 2-pixel and one 4-pixel window: 1 + 1/2 + 1/2 + 1/4 = 2.25
    #   all:   each pixel gets 1 from each of the 4 windows that hold it
    expected = {"first": [[4, 2], [2, 1]], "split": np.full((2, 2), 2.25),
                "all": np.full((2, 2), 4.0)}[ties]
    np.testing.assert_allclose(x.grad.data[0, 0], expected)
    assert x.grad.data.sum() == pytest.approx({"first": 9, "split": 9, "all": 16}[ties])


def test_all_minus_inf_window_without_padding():
    x = leaf(np.array([[-np.inf, -np.inf], [-np.inf, 1.0]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, (1, 2), return_indices=True)  # rows [-inf,-inf] and [-inf, 1]
    np.testing.assert_array_equal(out.data[0, 0], [[-np.inf], [1.0]])
    np.testing.assert_array_equal(indices.data[0, 0], [[0], [3]])


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_nan_propagates_and_takes_the_gradient(ties):
    # window 0 = [[1, nan], [3, 2]]: the output is NaN and its index points at the NaN (flat 1),
    # as PyTorch's "val > max || isnan(val)"; window 1 = [[0, 5], [4, 5]] is ordinary.
    x = leaf(np.array([[1.0, np.nan, 0.0, 5.0], [3.0, 2.0, 4.0, -1.0]]).reshape(1, 1, 2, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True, ties=ties)
    assert np.isnan(out.data[0, 0, 0, 0]) and out.data[0, 0, 0, 1] == 5.0
    np.testing.assert_array_equal(indices.data[0, 0], [[1, 3]])
    out.backward(np.array([[[[2.0, 7.0]]]]))
    np.testing.assert_array_equal(x.grad.data[0, 0], [[0, 2, 0, 7], [0, 0, 0, 0]])


def test_nan_after_the_max_in_window_order_still_wins():
    x = leaf(np.array([[9.0, 1.0], [2.0, np.nan]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    assert np.isnan(out.item()) and indices.item() == 3


def test_argmax_is_stored_on_the_node_and_returned_with_indices(rng):
    x = leaf(rng.standard_normal((2, 3, 5, 5)))
    out, indices = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    assert np.issubdtype(indices.dtype, np.integer) and not indices.requires_grad
    np.testing.assert_array_equal(out.grad_fn.argmax, indices.data)
    # every index points at a pixel of its own plane that holds the output value
    planes = x.data.reshape(2, 3, 25)
    np.testing.assert_array_equal(np.take_along_axis(planes, indices.data.reshape(2, 3, -1), 2),
                                  out.data.reshape(2, 3, -1))
    assert "argmax" in out.grad_fn.saved_for_backward()
    out.sum().backward()
    assert out.grad_fn.released and "argmax" not in out.grad_fn.saved_for_backward()


def test_max_pool2d_forward_matches_a_direct_loop(rng):
    x = rng.standard_normal((2, 2, 7, 6))
    k, s, p, d = (3, 2), (2, 1), (1, 1), (1, 2)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    # window extents d·(k-1)+1 = 3 (height) and 3 (width)
    ho, wo = (7 + 2 - 3) // 2 + 1, (6 + 2 - 3) // 1 + 1
    expected = np.empty((2, 2, ho, wo))
    for i in range(ho):
        for j in range(wo):
            window = padded[:, :, i * s[0]: i * s[0] + d[0] * (k[0] - 1) + 1: d[0],
                            j * s[1]: j * s[1] + d[1] * (k[1] - 1) + 1: d[1]]
            expected[:, :, i, j] = window.max(axis=(2, 3))
    np.testing.assert_array_equal(F.max_pool2d(Tensor(x), k, s, p, d).data, expected)


def test_integer_input_is_pooled_like_floats(rng):
    x = rng.integers(-5, 5, size=(1, 2, 5, 5))
    out = F.max_pool2d(Tensor(x), 3, stride=2, padding=1)
    np.testing.assert_array_equal(out.data, F.max_pool2d(Tensor(x.astype(float)), 3, 2, 1).data)


# ---- avg pool: hand-computed cases ---------------------------------------------------------
def test_avg_pool2d_padding_and_divisors_by_hand():
    # x = [[1,2],[3,4]], 2×2 windows, stride 1, padding 1: window sums (same table as the max
    # pool padding test) = [[1,3,2],[4,10,6],[3,7,4]]; real pixels per window [[1,2,1],[2,4,2],[1,2,1]]
    sums = np.array([[1, 3, 2], [4, 10, 6], [3, 7, 4]], dtype=float)
    counts = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=float)
    image = np.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2)
    for count_include_pad, divisor_override, divisor, grad in [
        (True, None, 4.0, [[1, 1], [1, 1]]),  # four windows each give 1/4
        (False, None, counts, [[2.25, 2.25], [2.25, 2.25]]),  # 1 + 1/2 + 1/2 + 1/4
        (True, 2, 2.0, [[2, 2], [2, 2]]),  # four windows each give 1/2
    ]:
        x = leaf(image)
        out = F.avg_pool2d(x, 2, stride=1, padding=1, count_include_pad=count_include_pad,
                           divisor_override=divisor_override)
        np.testing.assert_allclose(out.data[0, 0], sums / divisor)
        out.sum().backward()
        np.testing.assert_allclose(x.grad.data[0, 0], grad)


def test_avg_pool2d_overlapping_gradient():
    # 3×3 input, 2×2 windows at stride 1: each pixel gets 1/4 from each window that holds it
    x = leaf(np.arange(9.0).reshape(1, 1, 3, 3))
    out = F.avg_pool2d(x, 2, stride=1)
    np.testing.assert_allclose(out.data[0, 0], [[2, 3], [5, 6]])  # e.g. (0+1+3+4)/4 = 2
    out.sum().backward()
    np.testing.assert_allclose(x.grad.data[0, 0], np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 4)


# ---- errors ---------------------------------------------------------------------------------
POOLS = {"max_pool2d": F.max_pool2d, "avg_pool2d": F.avg_pool2d}


@pytest.mark.parametrize("op", sorted(POOLS))
@pytest.mark.parametrize("shape", [(3, 4, 4), (4, 4), (1, 1, 1, 4, 4)], ids=str)
def test_pool_input_must_be_4d(op, shape):
    pattern = str(shape).replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(ValueError, match=rf"{op}: input must be 4-D.*{pattern}"):
        POOLS[op](leaf(np.ones(shape)), 2)


@pytest.mark.parametrize("op", sorted(POOLS))
def test_pool_padding_more_than_half_the_kernel(op):
    message = rf"{op}: padding \(2, 2\) must be at most half of kernel_size=\(3, 3\)"
    with pytest.raises(ValueError, match=message):
        POOLS[op](leaf(np.ones((1, 1, 6, 6))), 3, padding=2)
    with pytest.raises(ValueError, match=rf"{op}: padding"):
        POOLS[op](leaf(np.ones((1, 1, 6, 6))), (4, 2), padding=(1, 2))


@pytest.mark.parametrize("op", sorted(POOLS))
def test_pool_kernel_larger_than_padded_input(op):
    message = rf"{op}: the width window .*larger than the padded input \(4 \+ 2×0 = 4\)"
    with pytest.raises(ValueError, match=message):
        POOLS[op](leaf(np.ones((1, 1, 6, 4))), (2, 5))


def test_max_pool2d_dilated_window_larger_than_padded_input():
    message = r"max_pool2d: the height window \(7 .*dilation=3.*\(5 \+ 2×0 = 5\)"
    with pytest.raises(ValueError, match=message):
        F.max_pool2d(leaf(np.ones((1, 1, 5, 9))), 3, dilation=3)


def test_max_pool2d_window_that_sees_only_padding_is_refused():
    # kernel 2 with dilation 3 and padding 1 on a 2-pixel row: taps at -1 and 2, both outside
    with pytest.raises(ValueError, match="max_pool2d: .*covers only padding"):
        F.max_pool2d(leaf(np.ones((1, 1, 2, 2))), 2, padding=1, dilation=3)


def test_max_pool2d_bad_ties():
    with pytest.raises(ValueError, match="max_pool2d: ties must be one of .*'last'"):
        F.max_pool2d(leaf(np.ones((1, 1, 4, 4))), 2, ties="last")
    with pytest.raises(TypeError):  # ties is keyword-only, after torch's own arguments
        F.max_pool2d(leaf(np.ones((1, 1, 4, 4))), 2, None, 0, 1, False, False, "split")


@pytest.mark.parametrize("op", sorted(POOLS))
def test_pool_bad_kernel_and_stride(op):
    x = leaf(np.ones((1, 1, 4, 4)))
    with pytest.raises(ValueError, match=rf"{op}: kernel_size must be at least 1"):
        POOLS[op](x, 0)
    with pytest.raises(ValueError, match=rf"{op}: stride must be at least 1"):
        POOLS[op](x, 2, stride=0)
    with pytest.raises(TypeError, match=rf"{op}: kernel_size must be an int or a pair"):
        POOLS[op](x, (2, 2, 2))
    with pytest.raises(TypeError, match=rf"{op}: kernel_size must be an int or a pair.*2\.5"):
        POOLS[op](x, 2.5)  # not a sequence: named in the message, not a bare 'not iterable'
    assert x.grad is None


def test_avg_pool2d_bad_divisor():
    with pytest.raises(ValueError, match="avg_pool2d: divisor_override must be positive"):
        F.avg_pool2d(leaf(np.ones((1, 1, 4, 4))), 2, divisor_override=-1)


# ---- PyTorch parity -------------------------------------------------------------------------
def _torch_maxpool(torch, kernel, stride, padding, dilation, ceil_mode):
    stride = kernel if stride is None else stride
    return lambda x: torch.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)


@pytest.mark.parametrize("config", MAX_CONFIGS, ids=MAX_IDS)
def test_max_pool2d_matches_torch(torch, rng, config):
    x = rng.standard_normal((2, 2, 6, 7))
    torch_parity(torch, maxpool(*config), x, torch_fn=_torch_maxpool(torch, *config))
    _, ours = F.max_pool2d(Tensor(x), *config, return_indices=True)
    _, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), *config[:1],
                                               config[1] if config[1] is not None else config[0],
                                               *config[2:], return_indices=True)
    np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("config", MAX_CONFIGS, ids=MAX_IDS)
def test_max_pool2d_first_matches_torch_with_many_ties(torch, rng, config):
    x = rng.integers(0, 3, size=(2, 2, 8, 7)).astype(np.float64)  # three values: ties everywhere
    torch_parity(torch, maxpool(*config, ties="first"), x, torch_fn=_torch_maxpool(torch, *config),
                 rtol=0, atol=0)
    kernel, stride = config[0], config[1] if config[1] is not None else config[0]
    _, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, stride, *config[2:],
                                               return_indices=True)
    _, ours = F.max_pool2d(Tensor(x), *config, return_indices=True)
    np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_max_pool2d_nan_matches_torch(torch):
    x = np.arange(36.0).reshape(1, 1, 6, 6)
    x[0, 0, 1, 1] = x[0, 0, 4, 2] = x[0, 0, 0, 5] = np.nan
    out, idx = F.max_pool2d(Tensor(x), 3, stride=2, padding=1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(out.data, tout.numpy())  # NaNs compare equal here
    np.testing.assert_array_equal(idx.data, tidx.numpy())


def test_max_pool2d_minus_inf_matches_torch(torch):
    x = np.full((1, 1, 3, 4), -np.inf)
    x[0, 0, 2, 3] = 1.0
    for kwargs in [dict(padding=1, stride=1), dict(padding=1, stride=2, dilation=2)]:
        out, idx = F.max_pool2d(Tensor(x), 3, return_indices=True, **kwargs)
        tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, return_indices=True, **kwargs)
        np.testing.assert_array_equal(out.data, tout.numpy())
        np.testing.assert_array_equal(idx.data, tidx.numpy())


@pytest.mark.parametrize("config", AVG_CONFIGS, ids=AVG_IDS)
def test_avg_pool2d_matches_torch(torch, rng, config):
    kernel, stride, *rest = config
    stride_t = kernel if stride is None else stride
    torch_parity(torch, avgpool(*config), rng.standard_normal((2, 2, 6, 7)),
                 torch_fn=lambda x: torch.nn.functional.avg_pool2d(x, kernel, stride_t, *rest))


# ---- hypothesis: random geometries against PyTorch ------------------------------------------
@st.composite
def geometries(draw, with_dilation=True):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return dict(
        shape=(draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 8)),
               draw(st.integers(1, 8))),
        kernel=(kh, kw),
        stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        padding=(draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))),
        dilation=(draw(st.integers(1, 2)), draw(st.integers(1, 2))) if with_dilation else (1, 1),
        ceil_mode=draw(st.booleans()),
        seed=draw(st.integers(0, 2 ** 16)),
    )


HYPOTHESIS = settings(max_examples=50, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@HYPOTHESIS
@given(g=geometries())
def test_max_pool2d_random_geometry_matches_torch(torch, g):
    # integer values in 0..3: plenty of ties, so this also checks "first" against PyTorch
    x = np.random.default_rng(g["seed"]).integers(0, 4, size=g["shape"]).astype(np.float64)
    args = (g["kernel"], g["stride"], g["padding"], g["dilation"], g["ceil_mode"])
    try:
        tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True)
    except RuntimeError:
        tout = None
    try:
        out, idx = F.max_pool2d(leaf(x), *args, return_indices=True)
    except ValueError:
        # we refuse exactly what PyTorch refuses, plus windows that see only padding
        # (PyTorch returns -inf there; the data here is finite, so -inf means such a window)
        assert tout is None or np.isneginf(tout.numpy()).any()
        assume(False)
    assert tout is not None, "PyTorch refused this geometry but max_pool2d accepted it"
    assert out.shape == tuple(tout.shape)
    np.testing.assert_array_equal(out.data, tout.numpy())
    np.testing.assert_array_equal(idx.data, tidx.numpy())
    # backward: same routing as PyTorch (which sends each gradient to its index)
    t = torch.tensor(x, requires_grad=True)
    tout = torch.nn.functional.max_pool2d(t, *args)
    weights = np.random.default_rng(g["seed"] + 1).standard_normal(out.shape)
    tout.backward(torch.tensor(weights))
    x_leaf = out.grad_fn.parents[0]
    out.backward(weights)
    np.testing.assert_allclose(x_leaf.grad.data, t.grad.numpy(), rtol=1e-12, atol=1e-12)


@HYPOTHESIS
@given(g=geometries(with_dilation=False), count_include_pad=st.booleans(),
       divisor_override=st.one_of(st.none(), st.integers(1, 5)))
def test_avg_pool2d_random_geometry_matches_torch(torch, g, count_include_pad, divisor_override):
    x = np.random.default_rng(g["seed"]).standard_normal(g["shape"])
    args = (g["kernel"], g["stride"], g["padding"], g["ceil_mode"], count_include_pad, divisor_override)
    try:
        torch.nn.functional.avg_pool2d(torch.tensor(x), *args)
        torch_ok = True
    except RuntimeError:
        torch_ok = False
    try:
        avgpool(*args)(Tensor(x))
    except ValueError:
        assert not torch_ok, "avg_pool2d refused a geometry PyTorch accepts"
        assume(False)
    assert torch_ok, "PyTorch refused this geometry but avg_pool2d accepted it"
    torch_parity(torch, avgpool(*args), x,
                 torch_fn=lambda t: torch.nn.functional.avg_pool2d(t, *args), seed=g["seed"])
