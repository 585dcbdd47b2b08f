"""F.conv2d: cross-correlation with stride, padding (int, pair, 'valid', 'same'), dilation, groups,
batched or unbatched; F.unfold (im2col) and F.fold (col2im) and their Modules."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.pooling import Fold, Unfold
from tinygrad_pool.ops.conv import fold, unfold

from helpers import assert_same_as_a_batch_of_one, check_grad, leaf, torch_parity
from test_adaptive_pool import double_backward_parity

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
    check_grad(lambda x: F.conv2d(x, tensor(w), padding=1), x)
    check_grad(lambda w: F.conv2d(tensor(x), w, stride=2), w)
    check_grad(lambda x: x.conv2d(tensor(w), stride=1, padding=1).relu().sum(), x)


# ---- semantics ------------------------------------------------------------------------------
def test_conv2d_by_hand():
    # x = 0..8 as a 3×3 image, a 2×2 kernel of ones: each output is the sum of its window
    # [[0+1+3+4, 1+2+4+5], [3+4+6+7, 4+5+7+8]] = [[8, 12], [20, 24]]
    x = leaf(np.arange(9.0).reshape(1, 1, 3, 3))
    w = leaf(np.ones((1, 1, 2, 2)))
    b = leaf([0.5])
    y = F.conv2d(x, w, b)
    np.testing.assert_array_equal(y.numpy(), [[[[8.5, 12.5], [20.5, 24.5]]]])
    y.sum().backward()
    # each input pixel's gradient = how many windows cover it (corners 1, edges 2, centre 4)
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    # each weight tap's gradient = the sum of the pixels it touched: the four window sums above
    np.testing.assert_array_equal(w.grad.numpy()[0, 0], [[0 + 1 + 3 + 4, 1 + 2 + 4 + 5],
                                                      [3 + 4 + 6 + 7, 4 + 5 + 7 + 8]])
    np.testing.assert_array_equal(b.grad.numpy(), [4.0])  # 4 outputs


def test_conv2d_is_cross_correlation_not_convolution():
    # a kernel with a single 1 at its top-left tap copies each window's top-left pixel (no flip)
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = np.zeros((1, 1, 2, 2))
    w[0, 0, 0, 0] = 1.0
    np.testing.assert_array_equal(F.conv2d(tensor(x), tensor(w)).numpy(), x[:, :, :3, :3])


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
    out = F.conv2d(tensor(x), tensor(w), tensor(bias), stride=s, padding=p, dilation=d, groups=g)
    np.testing.assert_allclose(out.numpy(), expected)


@pytest.mark.parametrize("kernel", [(2, 2), (3, 3), (2, 3), (4, 1)], ids=str)
def test_same_padding_keeps_the_spatial_size(rng, kernel):
    x = tensor(rng.standard_normal((1, 1, 5, 6)))
    out = F.conv2d(x, tensor(rng.standard_normal((2, 1) + kernel)), padding="same")
    assert out.shape == (1, 2, 5, 6)


def test_conv2d_graphs_alive_at_once_keep_their_own_saved_buffers(rng):
    # several forward graphs of the same shapes, some freed in between: each backward must use
    # the columns its own forward saved (checked against one conv computed alone, per input)
    w_data = rng.standard_normal((2, 2, 3, 3))
    inputs = [rng.standard_normal((1, 2, 5, 5)) for _ in range(4)]
    weights_grad = rng.standard_normal((1, 2, 3, 3))

    def alone(x):
        w = leaf(w_data)
        F.conv2d(tensor(x), w).backward(weights_grad)
        return w.grad.numpy()

    expected = [alone(x) for x in inputs]
    ws = [leaf(w_data) for _ in inputs]
    ys = [F.conv2d(tensor(x), w) for x, w in zip(inputs[:2], ws[:2])]
    ys[1].backward(weights_grad)  # frees graph 1 while graph 0 is still alive
    ys += [F.conv2d(tensor(x), w) for x, w in zip(inputs[2:], ws[2:])]
    F.conv2d(tensor(inputs[0]), tensor(w_data))  # a forward that saves nothing
    for k in (3, 0, 2):
        ys[k].backward(weights_grad)
    for k in range(4):
        np.testing.assert_allclose(ws[k].grad.numpy(), expected[k], rtol=1e-12, err_msg=f"graph {k}")


def test_conv2d_retain_graph_twice_doubles_the_gradient(rng):
    x, w = leaf(rng.standard_normal((1, 1, 4, 4))), leaf(rng.standard_normal((1, 1, 2, 2)))
    y = F.conv2d(x, w).sum()
    y.backward(retain_graph=True)
    first = w.grad.numpy().copy(), x.grad.numpy().copy()
    other = leaf(rng.standard_normal((1, 1, 2, 2)))  # a graph in between, freed by its backward
    F.conv2d(tensor(rng.standard_normal((1, 1, 4, 4))), other).sum().backward()
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * first[0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * first[1])


def test_float32_conv_stays_float32(rng):
    x = tensor(rng.standard_normal((1, 1, 4, 4)).astype(np.float32), requires_grad=True)
    w = tensor(rng.standard_normal((1, 1, 3, 3)).astype(np.float32), requires_grad=True)
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


@pytest.mark.parametrize("shape", [(5, 5), (1, 1, 1, 5, 5)], ids=str)
def test_input_must_be_3d_or_4d(shape):
    # torch's message and type (RuntimeError; also a ValueError, which this package raised before)
    message = (r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
               rf"size: {re.escape(str(list(shape)))}")
    with pytest.raises(RuntimeError, match=message):
        F.conv2d(leaf(np.ones(shape)), leaf(np.ones((1, 1, 3, 3))))
    with pytest.raises(ValueError, match=message):
        F.conv2d(leaf(np.ones(shape)), leaf(np.ones((1, 1, 3, 3))))


def test_shape_errors_are_runtime_errors_as_in_torch():
    x, w = leaf(np.ones((1, 3, 5, 5))), leaf(np.ones((2, 1, 3, 3)))
    for call in [lambda: F.conv2d(x, w), lambda: F.conv2d(x[0], w),
                 lambda: F.conv2d(x, leaf(np.ones((2, 3, 6, 6)))),
                 lambda: F.conv2d(x, leaf(np.ones((2, 3, 3, 3))), stride=0),
                 lambda: F.conv2d(x, leaf(np.ones((2, 3, 3, 3))), groups=0),
                 lambda: F.conv2d(x, leaf(np.ones((2, 3, 3, 3))), leaf(np.ones(3)))]:
        with pytest.raises(RuntimeError, match="conv2d"):
            call()


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
    with pytest.raises(RuntimeError, match="conv2d: dilation must be an int or a pair"):
        F.conv2d(x, w, dilation=(1, 2, 3))  # a wrong length: torch's RuntimeError
    with pytest.raises(TypeError, match="conv2d: dilation must be an int or a pair"):
        F.conv2d(x, w, dilation=(1, 2.5))  # a wrong element type: torch's TypeError
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
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], 2 * covered)
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


# ---- unbatched input (C, H, W), as torch -----------------------------------------------------
def test_unbatched_conv2d_is_a_batch_of_one(torch, rng):
    x, w, b = rng.standard_normal((4, 6, 5)), rng.standard_normal((6, 2, 3, 3)), rng.standard_normal(6)
    single, batch = leaf(x), leaf(x[None])
    out = F.conv2d(single, tensor(w), tensor(b), stride=2, padding=1, groups=2)
    batch_out = F.conv2d(batch, tensor(w), tensor(b), stride=2, padding=1, groups=2)
    assert out.shape == batch_out.shape[1:] == (6, 3, 3)
    assert_same_as_a_batch_of_one(out, batch_out, single, batch, rng)

    def ours(x, w, b):
        return F.conv2d(x, w, b, stride=2, padding=1, groups=2)

    def theirs(x, w, b):
        return torch.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2)

    torch_parity(torch, ours, x, w, b, torch_fn=theirs, rtol=1e-12, atol=1e-12)
    check_grad(ours, x, w, b)


# ---- unfold (im2col) and fold (col2im) --------------------------------------------------------
# (input shape, kernel_size, dilation, padding, stride)
UNFOLD_CONFIGS = [
    ((2, 3, 5, 6), 2, 1, 0, 1),
    ((1, 2, 6, 7), (2, 3), 1, 1, 2),
    ((1, 2, 7, 7), 3, 2, (1, 0), (2, 1)),
    ((2, 3, 4, 4), 4, 1, 0, 1),  # one window: the whole image
    ((3, 5, 6), (3, 2), (1, 2), 1, (1, 2)),  # unbatched
]
UNFOLD_IDS = [f"{c[0]}-k{c[1]}-d{c[2]}-p{c[3]}-s{c[4]}" for c in UNFOLD_CONFIGS]


def _fold_case(torch, shape, kernel, dilation, padding, stride):
    """(output_size, an input for fold): the shape unfold makes from ``shape``."""
    cols = torch.nn.functional.unfold(torch.ones(shape, dtype=torch.float64), kernel, dilation,
                                      padding, stride)
    return shape[-2:], tuple(cols.shape)


@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", UNFOLD_CONFIGS, ids=UNFOLD_IDS)
def test_unfold_and_fold_match_torch(torch, rng, shape, kernel, dilation, padding, stride):
    args = (kernel, dilation, padding, stride)
    torch_parity(torch, lambda t: unfold(t, *args), rng.standard_normal(shape),
                 torch_fn=lambda t: torch.nn.functional.unfold(t, *args), rtol=1e-12, atol=1e-12)
    size, cols_shape = _fold_case(torch, shape, *args)
    torch_parity(torch, lambda t: fold(t, size, *args), rng.standard_normal(cols_shape),
                 torch_fn=lambda t: torch.nn.functional.fold(t, size, *args), rtol=1e-12,
                 atol=1e-12)


@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", UNFOLD_CONFIGS[1:3],
                         ids=UNFOLD_IDS[1:3])
def test_unfold_and_fold_float32_match_torch(torch, rng, shape, kernel, dilation, padding, stride):
    args = (kernel, dilation, padding, stride)
    size, cols_shape = _fold_case(torch, shape, *args)
    for ours_fn, theirs_fn, in_shape in [
        (lambda t: unfold(t, *args), lambda t: torch.nn.functional.unfold(t, *args), shape),
        (lambda t: fold(t, size, *args), lambda t: torch.nn.functional.fold(t, size, *args),
         cols_shape),
    ]:
        x = rng.standard_normal(in_shape).astype(np.float32)
        ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = ours_fn(ours), theirs_fn(theirs)
        weights = rng.standard_normal(out.shape)
        out.backward(weights.astype(np.float32))
        tout.backward(torch.tensor(weights, dtype=torch.float32))
        assert out.dtype == ours.grad.dtype == np.float32
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, kernel, dilation, padding, stride",
                         [UNFOLD_CONFIGS[1], UNFOLD_CONFIGS[4]], ids=[UNFOLD_IDS[1], UNFOLD_IDS[4]])
def test_unfold_and_fold_gradcheck_and_double_backward(torch, rng, shape, kernel, dilation,
                                                       padding, stride):
    args = (kernel, dilation, padding, stride)
    size, cols_shape = _fold_case(torch, shape, *args)
    x, cols = rng.standard_normal(shape), rng.standard_normal(cols_shape)
    check_grad(lambda t: unfold(t, *args), x)
    check_grad(lambda t: fold(t, size, *args), cols)
    double_backward_parity(torch, lambda t: unfold(t * t, *args),
                           lambda t: torch.nn.functional.unfold(t * t, *args), x)
    double_backward_parity(torch, lambda t: fold(t * t, size, *args),
                           lambda t: torch.nn.functional.fold(t * t, size, *args), cols)


def test_unfold_by_hand():
    # 3×3 image 0..8, 2×2 windows: columns are the windows' pixels, row-major within a window,
    # windows in row-major order
    cols = unfold(tensor(np.arange(9.0).reshape(1, 1, 3, 3)), 2)
    np.testing.assert_array_equal(cols.numpy()[0], [[0, 1, 3, 4],
                                                 [1, 2, 4, 5],
                                                 [3, 4, 6, 7],
                                                 [4, 5, 7, 8]])
    # fold adds each column back: fold(unfold(ones)) counts the windows holding each pixel
    covered = fold(unfold(tensor(np.ones((1, 1, 3, 3))), 2), (3, 3), 2)
    np.testing.assert_array_equal(covered.numpy()[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


def test_convolution_is_a_product_with_the_unfolded_input(rng):
    # conv2d(x, w) = w.reshape(F, -1) @ unfold(x), reshaped to the output grid
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    cols = unfold(tensor(x), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    out = F.conv2d(tensor(x), tensor(w), dilation=(1, 2), padding=1, stride=(2, 1))
    np.testing.assert_allclose((w.reshape(4, -1) @ cols.numpy()).reshape(out.shape), out.numpy(),
                               rtol=1e-12, atol=1e-12)


def test_unfold_unbatched_is_a_batch_of_one(rng):
    x = rng.standard_normal((2, 5, 4))
    single, batch = leaf(x), leaf(x[None])
    out, batch_out = unfold(single, 2, padding=1), unfold(batch, 2, padding=1)
    np.testing.assert_array_equal(out.numpy(), batch_out.numpy()[0])
    weights = rng.standard_normal(out.shape)
    out.backward(weights)
    batch_out.backward(weights[None])
    np.testing.assert_array_equal(single.grad.numpy(), batch.grad.numpy()[0])
    back = fold(out, (5, 4), 2, padding=1)
    assert back.shape == x.shape
    np.testing.assert_array_equal(back.numpy(), fold(batch_out, (5, 4), 2, padding=1).numpy()[0])


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 3), kw=st.integers(1, 3),
       dh=st.integers(1, 2), dw=st.integers(1, 2), ph=st.integers(0, 2), pw=st.integers(0, 2),
       sh=st.integers(1, 3), sw=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_unfold_and_fold_random_geometry_match_torch(torch, h, w, kh, kw, dh, dw, ph, pw, sh, sw,
                                                     seed):
    args = ((kh, kw), (dh, dw), (ph, pw), (sh, sw))
    x = np.random.default_rng(seed).standard_normal((1, 2, h, w))
    try:
        cols_shape = tuple(torch.nn.functional.unfold(torch.tensor(x), *args).shape)
    except RuntimeError:  # no window fits: we refuse it too
        with pytest.raises(RuntimeError, match="unfold: Given input with spatial size"):
            unfold(tensor(x), *args)
        return
    torch_parity(torch, lambda t: unfold(t, *args), x, seed=seed, rtol=1e-12, atol=1e-12,
                 torch_fn=lambda t: torch.nn.functional.unfold(t, *args))
    cols = np.random.default_rng(seed + 1).standard_normal(cols_shape)
    torch_parity(torch, lambda t: fold(t, (h, w), *args), cols, seed=seed, rtol=1e-12, atol=1e-12,
                 torch_fn=lambda t: torch.nn.functional.fold(t, (h, w), *args))


def test_unfold_and_fold_errors_as_torch(torch):
    x = leaf(np.ones((1, 1, 4, 4)))
    cases = [  # (function of the library, input, args, error type, message)
        ("unfold", leaf(np.ones((4, 4))), (2,), IndexError,
         r"Expected 3D \(unbatched\) or 4D \(batched\) input to unfold, but got input of size: "
         r"\[4, 4\]"),
        ("unfold", x, (5,), RuntimeError,
         r"unfold: Given input with spatial size \(4, 4\), kernel_size=\(5, 5\), dilation=\(1, 1\)"
         r", padding=\(0, 0\), calculated shape of the array of sliding blocks as \(0, 0\), but "
         r"its components must be at least one\."),
        ("unfold", x, (2, 1, -1), RuntimeError, "unfold: padding must be at least 0"),
        ("unfold", x, (0,), RuntimeError, "unfold: kernel_size must be at least 1"),
        ("unfold", x, (2, 1, 0, 0), RuntimeError, "unfold: stride must be at least 1"),
        ("unfold", tensor(np.ones((1, 1, 4, 4), dtype=np.int64)), (2,), NotImplementedError,
         "unfold: not implemented for dtype int64"),
        ("unfold", leaf(np.ones((1, 0, 4, 4))), (2,), RuntimeError,
         r"unfold: expected non-zero sizes .*\[1, 0, 4, 4\]"),
        ("fold", leaf(np.ones(9)), ((4, 4), 2), RuntimeError,
         r"Expected 2D \(unbatched\) or 3D \(batched\) input to fold, .*\[9\]"),
        ("fold", leaf(np.ones((1, 4, 0))), ((1, 1), 2), RuntimeError, r"fold, .*\[1, 4, 0\]"),
        ("fold", leaf(np.ones((1, 5, 9))), ((4, 4), 2), RuntimeError,
         r"fold: expected size of input's dimension 1 to be divisible by the product of "
         r"kernel_size, but got input.size\(1\)=5 and kernel_size=\(2, 2\)"),
        ("fold", leaf(np.ones((1, 4, 10))), ((4, 4), 2), RuntimeError,
         r"fold: Given output_size=\(4, 4\), kernel_size=\(2, 2\), dilation=\(1, 1\), padding="
         r"\(0, 0\), stride=\(1, 1\), expected size of input's dimension 2 to match the "
         r"calculated number of sliding blocks 3 \* 3 = 9, but got input.size\(2\)=10\."),
        ("fold", leaf(np.ones((1, 4, 1))), ((1, 1), 2), RuntimeError,
         r"sliding blocks 0 \* 0 = 0, but got input.size\(2\)=1"),
        ("fold", tensor(np.ones((1, 4, 9), dtype=np.int64)), ((4, 4), 2), NotImplementedError,
         "fold: not implemented for dtype int64"),
    ]
    ours = {"unfold": unfold, "fold": fold}
    for name, input, args, error, message in cases:
        with pytest.raises(error, match=message):
            ours[name](input, *args)
        with pytest.raises((error, IndexError)):  # PyTorch refuses them too (2-D unfold: IndexError)
            getattr(torch.nn.functional, name)(torch.tensor(input.numpy()), *args)
    with pytest.raises(ValueError):  # shape errors are ValueErrors too, as this package's were
        unfold(x, 5)
    assert x.grad is None


def test_unfold_and_fold_modules(torch, rng):
    for ours, theirs in [(Unfold(2), torch.nn.Unfold(2)),
                         (Unfold((2, 3), 1, (0, 1), 2), torch.nn.Unfold((2, 3), 1, (0, 1), 2)),
                         (Fold((4, 5), 2), torch.nn.Fold((4, 5), 2)),
                         (Fold(4, (2, 2), dilation=2), torch.nn.Fold(4, (2, 2), dilation=2))]:
        assert repr(ours) == repr(theirs)
        assert list(ours.parameters()) == []
    x = rng.standard_normal((2, 3, 6, 5))
    layer, reference = Unfold((2, 3), 1, (0, 1), 2), torch.nn.Unfold((2, 3), 1, (0, 1), 2)
    cols = layer(tensor(x))
    np.testing.assert_array_equal(cols.numpy(), reference(torch.tensor(x)).numpy())
    back, tback = Fold((6, 5), (2, 3), 1, (0, 1), 2), torch.nn.Fold((6, 5), (2, 3), 1, (0, 1), 2)
    np.testing.assert_allclose(back(cols).numpy(), tback(torch.tensor(cols.numpy())).numpy(), rtol=1e-15)
