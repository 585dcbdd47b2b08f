"""F.max_pool2d (stored argmax, tie rules, NaN, padding), F.avg_pool2d, unbatched input, and
F.max_unpool2d with its Module.

Gradients are finite-difference checked on random floats (no ties, so max is differentiable);
ties are tested on integer-valued images whose answers are worked out by hand below, and
against PyTorch, whose rule is "first".
"""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.pooling import MaxUnpool2d
from tinygrad_pool.ops.pool import max_unpool2d

from helpers import assert_same_as_a_batch_of_one, check_grad, leaf, torch_parity
from test_adaptive_pool import double_backward_parity

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
    np.testing.assert_array_equal(out.numpy()[0, 0], [[3, 2], [5, 4]])
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[1, 2], [8, 10]])
    np.testing.assert_array_equal(out.grad_fn.argmax, indices.numpy())
    out.backward(TIE_GRAD.reshape(1, 1, 2, 2))
    np.testing.assert_allclose(x.grad.numpy()[0, 0], TIE_EXPECTED[ties], rtol=1e-15)


def test_overlapping_windows_add_their_gradients():
    # 3×3 image whose centre (flat 4) is the max of all four 2×2 windows at stride 1
    x = leaf(np.array([[0.0, 1, 0], [2, 9, 3], [0, 4, 0]]).reshape(1, 1, 3, 3))
    out, indices = F.max_pool2d(x, 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(out.numpy()[0, 0], [[9, 9], [9, 9]])
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[4, 4], [4, 4]])
    out.backward(TIE_GRAD.reshape(1, 1, 2, 2))
    expected = np.zeros((3, 3))
    expected[1, 1] = 1 + 2 + 3 + 4  # the sum of all four windows' gradients
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


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
    np.testing.assert_allclose(x.grad.numpy()[0, 0], expected)


def test_padding_behaves_like_minus_infinity():
    # x = -[[1,2],[3,4]], 2×2 windows, stride 1, padding 1: nine windows over the padded 4×4.
    # Each window's real pixels (by hand): (-1,-1):{x00} (-1,0):{x00,x01} (-1,1):{x01}
    # (0,-1):{x00,x10} (0,0):all (0,1):{x01,x11} (1,-1):{x10} (1,0):{x10,x11} (1,1):{x11}
    # the max of each is a real (negative) pixel, never the zero a zero-padding would give
    x = leaf(-np.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    np.testing.assert_array_equal(out.numpy()[0, 0], [[-1, -1, -2], [-1, -1, -2], [-3, -3, -4]])
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[0, 0, 1], [0, 0, 1], [2, 2, 3]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[4, 2], [2, 1]])  # count of each index


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_all_minus_inf_window_next_to_padding_points_at_a_real_pixel(ties):
    # every pixel is -inf, so each window's real pixels tie with its padding. PyTorch never looks
    # at padding: the index is the window's first real pixel (same table as the test above).
    x = leaf(np.full((1, 1, 2, 2), -np.inf))
    out, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True, ties=ties)
    assert np.isneginf(out.numpy()).all()
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[0, 0, 1], [0, 0, 1], [2, 2, 3]])
    out.sum().backward()
    # the gradient goes to real pixels only, none is lost in the padding:
    #   first: each output to its index -> counts [[4, 2], [2, 1]]
    #   split: each window splits 1 among its real pixels (1, 2 or 4 of them); every pixel is in
    #          one 1-pixel, two 2-pixel and one 4-pixel window: 1 + 1/2 + 1/2 + 1/4 = 2.25
    #   all:   each pixel gets 1 from each of the 4 windows that hold it
    expected = {"first": [[4, 2], [2, 1]], "split": np.full((2, 2), 2.25),
                "all": np.full((2, 2), 4.0)}[ties]
    np.testing.assert_allclose(x.grad.numpy()[0, 0], expected)
    assert x.grad.numpy().sum() == pytest.approx({"first": 9, "split": 9, "all": 16}[ties])


def test_all_minus_inf_window_without_padding():
    x = leaf(np.array([[-np.inf, -np.inf], [-np.inf, 1.0]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, (1, 2), return_indices=True)  # rows [-inf,-inf] and [-inf, 1]
    np.testing.assert_array_equal(out.numpy()[0, 0], [[-np.inf], [1.0]])
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[0], [3]])


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_nan_propagates_and_takes_the_gradient(ties):
    # window 0 = [[1, nan], [3, 2]]: the output is NaN and its index points at the NaN (flat 1),
    # as PyTorch's "val > max || isnan(val)"; window 1 = [[0, 5], [4, 5]] is ordinary.
    x = leaf(np.array([[1.0, np.nan, 0.0, 5.0], [3.0, 2.0, 4.0, -1.0]]).reshape(1, 1, 2, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True, ties=ties)
    assert np.isnan(out.numpy()[0, 0, 0, 0]) and out.numpy()[0, 0, 0, 1] == 5.0
    np.testing.assert_array_equal(indices.numpy()[0, 0], [[1, 3]])
    out.backward(np.array([[[[2.0, 7.0]]]]))
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0, 2, 0, 7], [0, 0, 0, 0]])


def test_nan_after_the_max_in_window_order_still_wins():
    x = leaf(np.array([[9.0, 1.0], [2.0, np.nan]]).reshape(1, 1, 2, 2))
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    assert np.isnan(out.item()) and indices.item() == 3


def test_argmax_is_stored_on_the_node_and_returned_with_indices(rng):
    x = leaf(rng.standard_normal((2, 3, 5, 5)))
    out, indices = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    assert np.issubdtype(indices.dtype, np.integer) and not indices.requires_grad
    np.testing.assert_array_equal(out.grad_fn.argmax, indices.numpy())
    # every index points at a pixel of its own plane that holds the output value
    planes = x.numpy().reshape(2, 3, 25)
    np.testing.assert_array_equal(np.take_along_axis(planes, indices.numpy().reshape(2, 3, -1), 2),
                                  out.numpy().reshape(2, 3, -1))
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
    np.testing.assert_array_equal(F.max_pool2d(tensor(x), k, s, p, d).numpy(), expected)


def test_integer_input_is_pooled_like_floats(rng):
    x = rng.integers(-5, 5, size=(1, 2, 5, 5))
    out = F.max_pool2d(tensor(x), 3, stride=2, padding=1)
    np.testing.assert_array_equal(out.numpy(), F.max_pool2d(tensor(x.astype(float)), 3, 2, 1).numpy())


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
        np.testing.assert_allclose(out.numpy()[0, 0], sums / divisor)
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy()[0, 0], grad)


def test_avg_pool2d_overlapping_gradient():
    # 3×3 input, 2×2 windows at stride 1: each pixel gets 1/4 from each window that holds it
    x = leaf(np.arange(9.0).reshape(1, 1, 3, 3))
    out = F.avg_pool2d(x, 2, stride=1)
    np.testing.assert_allclose(out.numpy()[0, 0], [[2, 3], [5, 6]])  # e.g. (0+1+3+4)/4 = 2
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0, 0], np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 4)


# ---- errors ---------------------------------------------------------------------------------
POOLS = {"max_pool2d": F.max_pool2d, "avg_pool2d": F.avg_pool2d}


@pytest.mark.parametrize("op", sorted(POOLS))
@pytest.mark.parametrize("shape", [(4, 4), (1, 1, 1, 4, 4)], ids=str)
def test_pool_input_must_be_3d_or_4d(op, shape):
    # torch's type (RuntimeError, but IndexError for a 2-D input to avg_pool2d, where torch looks
    # up dim -3; either is also a ValueError, which this package raised before)
    message = rf"Expected 3D \(unbatched\) or 4D \(batched\) input to {op}, but got input of " \
              rf"size: {re.escape(str(list(shape)))}"
    error = IndexError if (op, shape) == ("avg_pool2d", (4, 4)) else RuntimeError
    with pytest.raises(error, match=message):
        POOLS[op](leaf(np.ones(shape)), 2)
    with pytest.raises(ValueError):
        POOLS[op](leaf(np.ones(shape)), 2)


@pytest.mark.parametrize("op", sorted(POOLS))
def test_pool_geometry_errors_are_runtime_errors_as_in_torch(op):
    x = leaf(np.ones((1, 1, 4, 4)))
    for kwargs in [dict(kernel_size=5), dict(kernel_size=3, padding=2), dict(kernel_size=0),
                   dict(kernel_size=2, stride=0)]:
        with pytest.raises(RuntimeError, match=op):
            POOLS[op](x, **kwargs)


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
    with pytest.raises(RuntimeError, match=rf"{op}: kernel_size must be an int or a pair"):
        POOLS[op](x, (2, 2, 2))
    with pytest.raises(TypeError, match=rf"{op}: kernel_size must be an int or a pair.*2\.5"):
        POOLS[op](x, 2.5)  # not a sequence: named in the message, not a bare 'not iterable'
    assert x.grad is None


def test_avg_pool2d_bad_divisor():
    with pytest.raises(ValueError, match="avg_pool2d: divisor_override must be at least 1, got -1"):
        F.avg_pool2d(leaf(np.ones((1, 1, 4, 4))), 2, divisor_override=-1)


# ---- PyTorch parity -------------------------------------------------------------------------
def _torch_maxpool(torch, kernel, stride, padding, dilation, ceil_mode):
    stride = kernel if stride is None else stride
    return lambda x: torch.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)


@pytest.mark.parametrize("config", MAX_CONFIGS, ids=MAX_IDS)
def test_max_pool2d_matches_torch(torch, rng, config):
    x = rng.standard_normal((2, 2, 6, 7))
    torch_parity(torch, maxpool(*config), x, torch_fn=_torch_maxpool(torch, *config))
    _, ours = F.max_pool2d(tensor(x), *config, return_indices=True)
    _, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), *config[:1],
                                               config[1] if config[1] is not None else config[0],
                                               *config[2:], return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("config", MAX_CONFIGS, ids=MAX_IDS)
def test_max_pool2d_first_matches_torch_with_many_ties(torch, rng, config):
    x = rng.integers(0, 3, size=(2, 2, 8, 7)).astype(np.float64)  # three values: ties everywhere
    torch_parity(torch, maxpool(*config, ties="first"), x, torch_fn=_torch_maxpool(torch, *config),
                 rtol=0, atol=0)
    kernel, stride = config[0], config[1] if config[1] is not None else config[0]
    _, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, stride, *config[2:],
                                               return_indices=True)
    _, ours = F.max_pool2d(tensor(x), *config, return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_max_pool2d_nan_matches_torch(torch):
    x = np.arange(36.0).reshape(1, 1, 6, 6)
    x[0, 0, 1, 1] = x[0, 0, 4, 2] = x[0, 0, 0, 5] = np.nan
    out, idx = F.max_pool2d(tensor(x), 3, stride=2, padding=1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), tout.numpy())  # NaNs compare equal here
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


def test_max_pool2d_minus_inf_matches_torch(torch):
    x = np.full((1, 1, 3, 4), -np.inf)
    x[0, 0, 2, 3] = 1.0
    for kwargs in [dict(padding=1, stride=1), dict(padding=1, stride=2, dilation=2)]:
        out, idx = F.max_pool2d(tensor(x), 3, return_indices=True, **kwargs)
        tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, return_indices=True, **kwargs)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


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
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    # backward: same routing as PyTorch (which sends each gradient to its index)
    t = torch.tensor(x, requires_grad=True)
    tout = torch.nn.functional.max_pool2d(t, *args)
    weights = np.random.default_rng(g["seed"] + 1).standard_normal(out.shape)
    tout.backward(torch.tensor(weights))
    x_leaf = out.grad_fn.parents[0]
    out.backward(weights)
    np.testing.assert_allclose(x_leaf.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


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
        avgpool(*args)(tensor(x))
    except ValueError:
        assert not torch_ok, "avg_pool2d refused a geometry PyTorch accepts"
        assume(False)
    assert torch_ok, "PyTorch refused this geometry but avg_pool2d accepted it"
    torch_parity(torch, avgpool(*args), x,
                 torch_fn=lambda t: torch.nn.functional.avg_pool2d(t, *args), seed=g["seed"])


def test_several_nans_in_a_window_the_last_wins_on_every_path(torch):
    # PyTorch's "val > max || isnan(val)": each NaN replaces the one before. Small inputs whose
    # windows tile them take max_pool_tiles, large ones the compare-and-select kernel.
    row = [1.0, np.nan, np.nan, np.nan, 3.0, 2.0]
    for width in (6, 96):  # 6 pixels: the tiles path; 64×96: the general one
        x = np.zeros((1, 1, 64 if width > 6 else 1, width))
        x[0, 0, 0, :6] = row
        out, ours = F.max_pool2d(leaf(x), (1, 3), return_indices=True)
        tout, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), (1, 3), return_indices=True)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(out.numpy(), tout.numpy())
        assert ours.numpy()[0, 0, 0, 0] == 2 and ours.numpy()[0, 0, 0, 1] == 3


# ---- unbatched input (C, H, W), as torch -----------------------------------------------------
@pytest.mark.parametrize("op", sorted(POOLS))
def test_unbatched_input_is_a_batch_of_one(rng, op):
    x = rng.standard_normal((3, 7, 6))
    single, batch = leaf(x), leaf(x[None])
    out, batch_out = POOLS[op](single, 3, 2, 1), POOLS[op](batch, 3, 2, 1)
    assert out.shape == batch_out.shape[1:] == (3, 4, 3)
    assert_same_as_a_batch_of_one(out, batch_out, single, batch, rng)


def test_unbatched_max_pool2d_indices_and_torch_parity(torch, rng):
    x = rng.standard_normal((2, 5, 7))
    out, ours = F.max_pool2d(tensor(x), 2, return_indices=True)
    _, theirs = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    assert ours.shape == (2, 2, 3)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    torch_parity(torch, maxpool(3, 2, 1, 1, True), x, rtol=1e-12, atol=1e-12,
                 torch_fn=_torch_maxpool(torch, 3, 2, 1, 1, True))
    torch_parity(torch, avgpool(3, 2, 1, False, False, None), x, rtol=1e-12, atol=1e-12,
                 torch_fn=lambda t: torch.nn.functional.avg_pool2d(t, 3, 2, 1, False, False))
    check_grad(maxpool(3, 2, 1, 1, False), x)


# ---- max_unpool2d -----------------------------------------------------------------------------
# (input shape, kernel_size, stride, padding, output_size): max_pool2d's indices unpooled back,
# with overlapping windows (an index may repeat), padding, and an output_size that max pooling
# maps to the same size.
UNPOOL_CONFIGS = [
    ((2, 3, 6, 8), 2, None, 0, None),
    ((1, 2, 7, 9), 2, None, 0, (7, 9)),  # the odd row and column back
    ((1, 2, 7, 7), 3, 2, 1, None),
    ((1, 2, 6, 7), (2, 3), (1, 2), (1, 1), None),  # overlapping windows
    ((2, 6, 6), 2, None, 0, (1, 2, 6, 6)),  # unbatched; output_size with leading sizes
]
UNPOOL_IDS = [f"{c[0]}-k{c[1]}-s{c[2]}-p{c[3]}-out{c[4]}" for c in UNPOOL_CONFIGS]


def _pooled(torch, x, kernel, stride, padding):
    """max_pool2d's output and indices (PyTorch's, which test_max_pool2d_matches_torch shows
    are ours), as the arrays max_unpool2d is meant for."""
    out, indices = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, stride, padding,
                                                  return_indices=True)
    return out.numpy(), indices.numpy()


@pytest.mark.parametrize("shape, kernel, stride, padding, size", UNPOOL_CONFIGS, ids=UNPOOL_IDS)
def test_max_unpool2d_matches_torch(torch, rng, shape, kernel, stride, padding, size):
    pooled, indices = _pooled(torch, rng.standard_normal(shape), kernel, stride, padding)
    index, tindex = tensor(indices), torch.tensor(indices)
    torch_parity(torch, lambda t: max_unpool2d(t, index, kernel, stride, padding, size), pooled,
                 torch_fn=lambda t: torch.nn.functional.max_unpool2d(t, tindex, kernel, stride,
                                                                     padding, size),
                 rtol=1e-12, atol=1e-12)
    # float32: the same values (a copy), and the gradient (a gather)
    x32 = tensor(pooled.astype(np.float32), requires_grad=True)
    out = max_unpool2d(x32, index, kernel, stride, padding, size)
    t32 = torch.tensor(pooled.astype(np.float32), requires_grad=True)
    tout = torch.nn.functional.max_unpool2d(t32, tindex, kernel, stride, padding, size)
    weights = rng.standard_normal(out.shape)
    out.backward(weights.astype(np.float32))
    tout.backward(torch.tensor(weights, dtype=torch.float32))
    assert out.dtype == x32.grad.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x32.grad.numpy(), t32.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_max_unpool2d_by_hand():
    # 2×2 values put back at the flat indices max pooling gave (TIE_IMAGE above: [[1,2],[8,10]])
    x = leaf([[[[3.0, 2.0], [5.0, 4.0]]]])
    out = max_unpool2d(x, tensor(np.array([[[[1, 2], [8, 10]]]])), 2)
    np.testing.assert_array_equal(out.numpy()[0, 0], [[0, 3, 2, 0],
                                                   [0, 0, 0, 0],
                                                   [5, 0, 4, 0],
                                                   [0, 0, 0, 0]])
    out.backward(np.arange(16.0).reshape(1, 1, 4, 4))
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1, 2], [8, 10]])  # G read at the indices


def test_max_unpool2d_repeated_index_gradient_is_torchs_gather(torch):
    # Overlapping windows can name one pixel twice (with the same value, its max). Forward puts
    # that value there once; backward reads G there for each, as PyTorch does.
    x = np.array([[0.0, 1, 0], [2, 9, 3], [0, 4, 0]]).reshape(1, 1, 3, 3)
    pooled, indices = _pooled(torch, x, 2, 1, 0)
    assert (indices == 4).all()
    torch_parity(torch, lambda t: max_unpool2d(t, tensor(indices), 2, 1, output_size=(3, 3)),
                 pooled, torch_fn=lambda t: torch.nn.functional.max_unpool2d(
                     t, torch.tensor(indices), 2, 1, output_size=(3, 3)), rtol=0, atol=0)


def test_max_unpool2d_gradcheck_and_double_backward(torch, rng):
    # non-overlapping windows: every index once, so that the gather is the true derivative
    pooled, indices = _pooled(torch, rng.standard_normal((2, 2, 6, 7)), 2, 2, 0)
    check_grad(lambda t: max_unpool2d(t, tensor(indices), 2, output_size=(6, 7)), pooled)
    # overlapping ones (PyTorch's rule, compared with PyTorch)
    pooled, indices = _pooled(torch, rng.standard_normal((2, 2, 6, 7)), 3, 2, 1)
    size = (6, 7)  # the default would be (5, 7): max pooling maps both to 3×4
    double_backward_parity(torch, lambda t: max_unpool2d(t * t, tensor(indices), 3, 2, 1, size),
                           lambda t: torch.nn.functional.max_unpool2d(
                               t * t, torch.tensor(indices), 3, 2, 1, size), pooled)


def test_max_unpool2d_unbatched_is_a_batch_of_one(rng):
    x = rng.standard_normal((3, 6, 4))
    pooled, indices = F.max_pool2d(tensor(x), 2, return_indices=True)
    single, batch = leaf(pooled.numpy()), leaf(pooled.numpy()[None])
    out = max_unpool2d(single, indices, 2)
    batch_out = max_unpool2d(batch, tensor(indices.numpy()[None]), 2)
    assert out.shape == x.shape
    np.testing.assert_array_equal(out.numpy(), batch_out.numpy()[0])
    out.backward(x)
    batch_out.backward(x[None])
    np.testing.assert_array_equal(single.grad.numpy(), batch.grad.numpy()[0])


def test_max_unpool2d_errors_as_torch(torch):
    x = leaf(np.ones((1, 1, 2, 2)))
    index = np.zeros((1, 1, 2, 2), dtype=np.int64)
    cases = [  # (input, indices, kwargs, error type, message)
        (leaf(np.ones((2, 2))), index[0, 0], {}, RuntimeError,
         r"Expected 3D \(unbatched\) or 4D \(batched\) input to max_unpool2d, but got input of "
         r"size: \[2, 2\]"),
        (x, index.astype(np.int32), {}, RuntimeError,
         "max_unpool2d: elements in indices should be type int64 but got: int32"),
        (x, index.astype(np.float64), {}, RuntimeError, "should be type int64 but got: float64"),
        (x, index[:, :, :1], {}, RuntimeError,
         r"max_unpool2d: expected shape of indices to be same as that of the input tensor "
         r"\(\[1, 1, 2, 2\]\) but got indices tensor with shape: \[1, 1, 1, 2\]"),
        (x, index + 16, {}, RuntimeError,
         r"max_unpool2d: Found an invalid max index: 16 \(output volumes are of size 4x4\)"),
        (x, index - 1, {}, RuntimeError, "max_unpool2d: Found an invalid max index: -1"),
        (x, index, dict(output_size=(6, 4)), ValueError,
         r'max_unpool2d: invalid output_size "\(6, 4\)" \(dim 0 must be between 2 and 6\)'),
        (x, index, dict(output_size=(5,)), ValueError,
         "max_unpool2d: output_size should be a sequence containing 2 or 4 elements, but it has "
         "a length of '1'"),
        (tensor(np.ones((1, 1, 2, 2), dtype=np.int64)), index, {}, NotImplementedError,
         "max_unpool2d: input must be a floating-point tensor, got dtype int64"),
    ]
    for input, indices, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            max_unpool2d(input, tensor(indices), 2, **kwargs)
        with pytest.raises(error):  # PyTorch refuses the same
            torch.nn.functional.max_unpool2d(torch.tensor(input.numpy()), torch.tensor(indices), 2,
                                             **kwargs)
    with pytest.raises(ValueError, match="max_unpool2d: kernel_size must be at least 1"):
        max_unpool2d(x, tensor(index), 0)
    assert x.grad is None


def test_max_unpool2d_module(torch, rng):
    for args in [(2,), ((2, 3), 1, (1, 0))]:
        assert repr(MaxUnpool2d(*args)) == repr(torch.nn.MaxUnpool2d(*args))
    x = rng.standard_normal((1, 2, 7, 9))
    pooled, indices = F.max_pool2d(tensor(x), 2, return_indices=True)
    out = MaxUnpool2d(2)(pooled, indices, output_size=(7, 9))
    expected = torch.nn.MaxUnpool2d(2)(torch.tensor(pooled.numpy()), torch.tensor(indices.numpy()),
                                       output_size=(7, 9))
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert list(MaxUnpool2d(2).parameters()) == []


def test_max_unpool2d_indices_written_in_place_after_forward_are_refused(torch, rng):
    # the indices are a saved input, as in PyTorch: backward must not read changed ones
    x = leaf(rng.standard_normal((1, 1, 4, 4)))
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    out = max_unpool2d(pooled, indices, 2)
    indices.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*MaxUnpool2d"):
        out.sum().backward()
