"""F.conv2d: cross-correlation with stride, padding (int, pair, 'valid', 'same'), dilation, groups."""
import re

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

from helpers import check_grad, leaf, torch_parity

# (input shape, weight shape, keyword arguments, with bias)
CONFIGS = [
    ((1, 1, 4, 4), (1, 1, 2, 2), {}, False),
    ((2, 3, 5, 5), (2, 3, 3, 3), {}, True),
    ((1, 2, 5, 6), (3, 2, 3, 3), {"stride": 2}, True),
    ((1, 2, 5, 6), (3, 2, 3, 2), {"stride": (2, 1)}, False),
    ((1, 2, 4, 4), (2, 2, 3, 3), {"padding": 1}, True),
    ((1, 2, 4, 5), (2, 2, 3, 3), {"padding": (2, 0)}, False),
    ((1, 1, 6, 6), (2, 1, 3, 3), {"dilation": 2}, True),
    ((1, 1, 6, 7), (1, 1, 2, 3), {"dilation": (2, 1), "padding": 1, "stride": (1, 2)}, True),
    ((1, 4, 4, 4), (4, 2, 3, 3), {"groups": 2}, True),
    ((1, 4, 4, 4), (4, 1, 2, 2), {"groups": 4, "stride": 2}, False),  # depthwise
    ((1, 2, 4, 5), (3, 2, 2, 3), {"padding": "same"}, True),  # even kernel: odd pad goes bottom/right
    ((1, 2, 5, 5), (3, 2, 3, 3), {"padding": "same", "dilation": 2}, False),
    ((1, 2, 4, 5), (3, 2, 2, 3), {"padding": "valid"}, True),
    ((2, 1, 3, 3), (1, 1, 3, 3), {}, True),  # kernel as large as the input: one output pixel
]
IDS = [f"{c[0]}-{c[1]}-{c[2]}-{'bias' if c[3] else 'nobias'}" for c in CONFIGS]


def _arrays(rng, x_shape, w_shape, bias):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if bias:
        arrays.append(rng.standard_normal(w_shape[0]))
    return arrays


# ---- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, w_shape, kwargs, bias", CONFIGS, ids=IDS)
def test_conv2d_gradcheck(rng, x_shape, w_shape, kwargs, bias):
    def conv(x, w, b=None):
        return F.conv2d(x, w, b, **kwargs)
    check_grad(conv, *_arrays(rng, x_shape, w_shape, bias))


def test_conv2d_gradcheck_input_only_and_weight_only(rng):
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 2, 3, 3))
    check_grad(lambda x: F.conv2d(x, Tensor(w), padding=1), x)
    check_grad(lambda w: F.conv2d(Tensor(x), w, stride=2), w)
    check_grad(lambda x: x.conv2d(Tensor(w), stride=1, padding=1).relu().sum(), x)


# ---- semantics ------------------------------------------------------------------------------
def test_conv2d_by_hand():
    # x = 0..8 as a 3×3 image, a 2×2 kernel of ones: each output is the sum of its window
    # [[0+1+3+4, 1+2+4+5], [3+4+6+7, 4+5+7+8]] = [[8, 12], [20, 24]]
    x = leaf(np.arange(9.0).reshape(1, 1, 3, 3))
    w = leaf(np.ones((1, 1, 2, 2)))
    b = leaf([0.5])
    y = F.conv2d(x, w, b)
    np.testing.assert_array_equal(y.data, [[[[8.5, 12.5], [20.5, 24.5]]]])
    y.sum().backward()
    # each input pixel's gradient = how many windows cover it (corners 1, edges 2, centre 4)
    np.testing.assert_array_equal(x.grad.data[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    # each weight tap's gradient = the sum of the pixels it touched: the four window sums above
    np.testing.assert_array_equal(w.grad.data[0, 0], [[0 + 1 + 3 + 4, 1 + 2 + 4 + 5],
                                                      [3 + 4 + 6 + 7, 4 + 5 + 7 + 8]])
    np.testing.assert_array_equal(b.grad.data, [4.0])  # 4 outputs


def test_conv2d_is_cross_correlation_not_convolution():
    # a kernel with a single 1 at its top-left tap copies each window's top-left pixel (no flip)
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = np.zeros((1, 1, 2, 2))
    w[0, 0, 0, 0] = 1.0
    np.testing.assert_array_equal(F.conv2d(Tensor(x), Tensor(w)).data, x[:, :, :3, :3])


def test_conv2d_matches_a_direct_loop(rng):
    # the definition, pixel by pixel: out[n,f,i,j] = Σ w[f,c,a,b]·xpad[n,c,i·s+a·d, j·s+b·d] + bias[f]
    x, w, bias = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 2, 2, 3)), rng.standard_normal(6)
    s, p, d, g = 2, 1, (1, 2), 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    ho = (5 + 2 * p - (d[0] * 1 + 1)) // s + 1
    wo = (6 + 2 * p - (d[1] * 2 + 1)) // s + 1
    expected = np.zeros((2, 6, ho, wo))
    for n in range(2):
        for f in range(6):
            group = f // 3
            for i in range(ho):
                for j in range(wo):
                    for c in range(2):
                        for a in range(2):
                            for bb in range(3):
                                pixel = xp[n, group * 2 + c, i * s + a * d[0], j * s + bb * d[1]]
                                expected[n, f, i, j] += w[f, c, a, bb] * pixel
            expected[n, f] += bias[f]
    out = F.conv2d(Tensor(x), Tensor(w), Tensor(bias), stride=s, padding=p, dilation=d, groups=g)
    np.testing.assert_allclose(out.data, expected)


@pytest.mark.parametrize("kernel", [(2, 2), (3, 3), (2, 3), (4, 1)], ids=str)
def test_same_padding_keeps_the_spatial_size(rng, kernel):
    x = Tensor(rng.standard_normal((1, 1, 5, 6)))
    out = F.conv2d(x, Tensor(rng.standard_normal((2, 1) + kernel)), padding="same")
    assert out.shape == (1, 2, 5, 6)


def test_conv2d_graphs_alive_at_once_keep_their_own_saved_buffers(rng):
    # several forward graphs of the same shapes, some freed in between: each backward must use
    # the columns its own forward saved (checked against one conv computed alone, per input)
    w_data = rng.standard_normal((2, 2, 3, 3))
    inputs = [rng.standard_normal((1, 2, 5, 5)) for _ in range(4)]
    weights_grad = rng.standard_normal((1, 2, 3, 3))

    def alone(x):
        w = leaf(w_data)
        F.conv2d(Tensor(x), w).backward(weights_grad)
        return w.grad.data

    expected = [alone(x) for x in inputs]
    ws = [leaf(w_data) for _ in inputs]
    ys = [F.conv2d(Tensor(x), w) for x, w in zip(inputs[:2], ws[:2])]
    ys[1].backward(weights_grad)  # frees graph 1 while graph 0 is still alive
    ys += [F.conv2d(Tensor(x), w) for x, w in zip(inputs[2:], ws[2:])]
    F.conv2d(Tensor(inputs[0]), Tensor(w_data))  # a forward that saves nothing
    for k in (3, 0, 2):
        ys[k].backward(weights_grad)
    for k in range(4):
        np.testing.assert_allclose(ws[k].grad.data, expected[k], rtol=1e-12, err_msg=f"graph {k}")


def test_conv2d_retain_graph_twice_doubles_the_gradient(rng):
    x, w = leaf(rng.standard_normal((1, 1, 4, 4))), leaf(rng.standard_normal((1, 1, 2, 2)))
    y = F.conv2d(x, w).sum()
    y.backward(retain_graph=True)
    first = w.grad.data.copy(), x.grad.data.copy()
    other = leaf(rng.standard_normal((1, 1, 2, 2)))  # a graph in between, freed by its backward
    F.conv2d(Tensor(rng.standard_normal((1, 1, 4, 4))), other).sum().backward()
    y.backward()
    np.testing.assert_allclose(w.grad.data, 2 * first[0])
    np.testing.assert_allclose(x.grad.data, 2 * first[1])


def test_float32_conv_stays_float32(rng):
    x = Tensor(rng.standard_normal((1, 1, 4, 4)).astype(np.float32), requires_grad=True)
    w = Tensor(rng.standard_normal((1, 1, 3, 3)).astype(np.float32), requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


# ---- errors ---------------------------------------------------------------------------------
def test_channel_mismatch():
    message = r"conv2d: input has 3 channels but weight expects 1 .*\(2, 1, 3, 3\)"
    with pytest.raises(ValueError, match=message):
        F.conv2d(leaf(np.ones((1, 3, 5, 5))), leaf(np.ones((2, 1, 3, 3))))


@pytest.mark.parametrize("kwargs", [{}, {"dilation": 3}, {"padding": (0, 1)}], ids=str)
def test_kernel_larger_than_padded_input(kwargs):
    with pytest.raises(ValueError, match=r"conv2d: kernel .*larger than the padded input.*\(1, 1, 4, 4\)"):
        F.conv2d(leaf(np.ones((1, 1, 4, 4))), leaf(np.ones((1, 1, 5, 5))), **kwargs)


@pytest.mark.parametrize("shape", [(3, 5, 5), (5, 5), (1, 1, 1, 5, 5)], ids=str)
def test_input_must_be_4d(shape):
    pattern = re.escape(str(shape))
    with pytest.raises(ValueError, match=rf"conv2d: input must be 4-D.*{pattern}"):
        F.conv2d(leaf(np.ones(shape)), leaf(np.ones((1, 1, 3, 3))))


def test_weight_must_be_4d():
    with pytest.raises(ValueError, match=r"conv2d: weight must be 4-D.*\(3, 3\)"):
        F.conv2d(leaf(np.ones((1, 1, 5, 5))), leaf(np.ones((3, 3))))


def test_bias_with_wrong_shape():
    with pytest.raises(ValueError, match=r"conv2d: bias must have shape \(2,\).*\(3,\)"):
        F.conv2d(leaf(np.ones((1, 1, 5, 5))), leaf(np.ones((2, 1, 3, 3))), leaf(np.ones(3)))


def test_groups_must_divide_channels_and_filters():
    # 3 input channels cannot be split into 2 groups
    with pytest.raises(ValueError, match=r"conv2d: input has 3 channels.*groups=2"):
        F.conv2d(leaf(np.ones((1, 3, 4, 4))), leaf(np.ones((2, 1, 3, 3))), groups=2)
    # 3 filters cannot be split into 2 groups
    with pytest.raises(ValueError, match=r"conv2d: weight has 3 filters, not divisible by groups=2"):
        F.conv2d(leaf(np.ones((1, 4, 4, 4))), leaf(np.ones((3, 2, 3, 3))), groups=2)
    with pytest.raises(ValueError, match="conv2d: groups"):
        F.conv2d(leaf(np.ones((1, 1, 4, 4))), leaf(np.ones((1, 1, 3, 3))), groups=0)


def test_bad_stride_padding_dilation():
    x, w = leaf(np.ones((1, 1, 5, 5))), leaf(np.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="conv2d: stride must be at least 1"):
        F.conv2d(x, w, stride=0)
    with pytest.raises(ValueError, match="conv2d: padding must be at least 0"):
        F.conv2d(x, w, padding=-1)
    with pytest.raises(TypeError, match="conv2d: dilation must be an int or a pair"):
        F.conv2d(x, w, dilation=(1, 2, 3))
    with pytest.raises(ValueError, match="conv2d: padding='same' needs stride=1"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(ValueError, match="conv2d: padding must be an int, a pair, 'valid' or 'same'"):
        F.conv2d(x, w, padding="full")


def test_errors_are_raised_before_anything_is_recorded():
    x, w = leaf(np.ones((1, 3, 5, 5))), leaf(np.ones((2, 1, 3, 3)))
    with pytest.raises(ValueError):
        F.conv2d(x, w)
    # the inputs are untouched and still usable
    y = F.conv2d(x, leaf(np.ones((2, 3, 3, 3))))
    y.sum().backward()
    # windows covering each pixel, per axis [1, 2, 3, 2, 1]; two filters of ones
    covered = np.outer([1, 2, 3, 2, 1], [1, 2, 3, 2, 1])
    np.testing.assert_array_equal(x.grad.data[0, 0], 2 * covered)
    assert x.grad.shape == x.shape and w.grad is None


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's own performance note
@pytest.mark.parametrize("x_shape, w_shape, kwargs, bias", CONFIGS, ids=IDS)
def test_conv2d_matches_torch(torch, rng, x_shape, w_shape, kwargs, bias):
    def ours(x, w, b=None):
        return F.conv2d(x, w, b, **kwargs)

    def theirs(x, w, b=None):
        return torch.nn.functional.conv2d(x, w, b, **kwargs)

    torch_parity(torch, ours, *_arrays(rng, x_shape, w_shape, bias), torch_fn=theirs)
