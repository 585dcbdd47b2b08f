"""conv_transpose3d (F., torch. and nn.ConvTranspose3d) against PyTorch: forward, every gradient
and the second derivatives in float32 and float64 over drawn geometries, float64 finite
differences, output_size, repr, initialisation and torch's error types."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tinygrad_pool
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import tensor

from helpers import check_grad
from test_conv_nd import DTYPES, TOL, parity  # (the same checks as conv1d's and conv3d's)


def same_error(torch_call, our_call):
    """torch raises; ours raises an error of that type (our GeometryError is both RuntimeError
    and ValueError)."""
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(type(theirs.value)):
        our_call()


@st.composite
def cases(draw):
    """(input shape, weight shape, geometry, with a bias?): any stride, padding, dilation,
    groups and an output_padding below stride or dilation, batched or one volume."""
    groups = draw(st.integers(1, 2))
    c, per_group = groups * draw(st.integers(1, 2)), draw(st.integers(1, 2))
    axes = [draw(st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2),
                           st.integers(1, 3))) for _ in range(3)]  # (k, stride, dilation, size)
    kernel, stride, dilation, size = zip(*axes)
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    # padding up to what leaves an output of at least one voxel along each axis
    padding = tuple(draw(st.integers(0, max(0, ((n - 1) * s + d * (k - 1) + e) // 2)))
                    for n, s, d, k, e in zip(size, stride, dilation, kernel, output_padding))
    batch = draw(st.sampled_from([None, 1, 2]))
    shape = (c, *size) if batch is None else (batch, c, *size)
    return shape, (c, per_group, *kernel), dict(stride=stride, padding=padding,
                                                output_padding=output_padding, groups=groups,
                                                dilation=dilation), draw(st.booleans())


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases(), seed=st.integers(0, 2**16))
def test_conv_transpose3d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, weight_shape, geometry, with_bias = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape), rng.standard_normal(weight_shape)]
    if with_bias:
        arrays.append(rng.standard_normal(weight_shape[1] * geometry["groups"]))
    parity(torch, lambda *t: F.conv_transpose3d(*t, **geometry),
           lambda *t: torch.nn.functional.conv_transpose3d(*t, **geometry), arrays, dtype, seed)


def test_conv_transpose3d_finite_differences():
    rng = np.random.default_rng(1)
    geometry = dict(stride=(2, 1, 2), padding=(1, 0, 0), output_padding=(1, 0, 0), groups=2,
                    dilation=(1, 2, 1))
    check_grad(lambda x, w, b: F.conv_transpose3d(x, w, b, **geometry).tanh().sum(),
               rng.standard_normal((1, 4, 2, 3, 2)), rng.standard_normal((4, 1, 2, 2, 2)),
               rng.standard_normal(2))
    # output_padding beyond padding: planes past every window, whose gradient is still right
    check_grad(lambda x, w: F.conv_transpose3d(x, w, stride=3, output_padding=2).sin().sum(),
               rng.standard_normal((2, 1, 2, 2, 1)), rng.standard_normal((1, 2, 1, 2, 2)))


def test_module_function_and_int64(torch):
    x, w = np.arange(24).reshape(1, 2, 2, 3, 2), np.arange(16).reshape(2, 1, 2, 2, 2) - 5
    got = tinygrad_pool.conv_transpose3d(tensor(x), tensor(w), stride=2)
    want = torch.conv_transpose3d(torch.tensor(x), torch.tensor(w), stride=2)
    assert got.dtype == tinygrad_pool.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    empty = F.conv_transpose3d(tinygrad_pool.zeros(0, 2, 2, 2, 2), tinygrad_pool.ones(2, 3, 1, 1, 1))
    assert empty.shape == (0, 3, 2, 2, 2)


def test_conv_transpose3d_errors(torch):
    def both(x_shape=(1, 2, 3, 3, 3), w_shape=(2, 1, 2, 2, 2), dtype=np.float32, w_dtype=None,
             bias=None, **kw):
        x, w = np.ones(x_shape, dtype), np.ones(w_shape, w_dtype or dtype)
        b = None if bias is None else np.ones(*bias)
        return (lambda: torch.nn.functional.conv_transpose3d(
                    torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b), **kw),
                lambda: F.conv_transpose3d(tensor(x), tensor(w),
                                           None if b is None else tensor(b), **kw))
    for kw in [dict(output_padding=1), dict(stride=2, output_padding=2), dict(padding=3),
               dict(padding=-1), dict(stride=0), dict(stride=(1, 2)), dict(stride=1.5),
               dict(padding="same"), dict(dilation=0), dict(output_padding=-1), dict(groups=0),
               dict(groups=3), dict(x_shape=(3, 3, 3)), dict(w_shape=(1, 2, 2, 2)),
               dict(w_shape=(3, 1, 2, 2, 2)), dict(w_shape=(2, 1, 0, 2, 2)),
               dict(x_shape=(1, 2, 0, 3, 3)), dict(w_dtype=np.float64),
               dict(bias=((1,), np.float64)), dict(bias=((3,), np.float32)),
               dict(dtype=np.int32), dict(dtype=np.bool_), dict(stride=(1, 2, 3, 4))]:
        same_error(*both(**kw))
    same_error(lambda: torch.nn.functional.conv_transpose3d(np.ones((1, 2, 2, 2, 2)),
                                                            torch.ones(2, 1, 1, 1, 1)),
               lambda: F.conv_transpose3d(np.ones((1, 2, 2, 2, 2)), tinygrad_pool.ones(2, 1, 1, 1, 1)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_matches_torch(torch, dtype):
    settings_ = dict(stride=(2, 1, 2), padding=(1, 0, 0), output_padding=(1, 0, 0), groups=2,
                     dilation=(1, 2, 1))
    ours = nn.ConvTranspose3d(4, 6, (2, 3, 2), **settings_, dtype=getattr(tinygrad_pool,
                                                                            np.dtype(dtype).name))
    theirs = torch.nn.ConvTranspose3d(4, 6, (2, 3, 2), **settings_,
                                      dtype=getattr(torch, np.dtype(dtype).name))
    assert repr(ours) == repr(theirs)
    assert ours.weight.shape == tuple(theirs.weight.shape) and ours.bias.shape == (6,)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 4, 2, 3, 3)).astype(dtype)
    got, want = ours(tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOL[dtype])
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=TOL[dtype]["rtol"], atol=TOL[dtype]["atol"] * 10)
    for size in [(2, 7, 6), (2, 6, 3, 7, 7), (3, 7, 6)]:
        got, want = ours(tensor(x), output_size=size), theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOL[dtype])
    unbatched = ours(tensor(x[0]), output_size=[6, 3, 7, 7])
    assert unbatched.shape == tuple(theirs(torch.tensor(x[0]), output_size=[6, 3, 7, 7]).shape)


def test_layer_repr_init_and_errors(torch):
    for args, kw in [((2, 4, 3), {}), ((2, 4, (1, 2, 3)), dict(stride=2, padding=(1, 0, 0),
                                                                 output_padding=1, groups=2,
                                                                 bias=False, dilation=2))]:
        ours, theirs = nn.ConvTranspose3d(*args, **kw), torch.nn.ConvTranspose3d(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert (ours.bias is None) == (theirs.bias is None)
    # torch's initialisation: U(±1/sqrt(fan_in)) with fan_in = out/groups·kd·kh·kw (weight dim 1)
    layer = nn.ConvTranspose3d(8, 2, 3)
    bound = 1 / np.sqrt(2 * 27)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert np.abs(layer.weight.detach().numpy()).max() > 0.8 * bound
    tinygrad_pool.manual_seed(3)
    first = nn.ConvTranspose3d(2, 2, 2).weight.detach().numpy()
    tinygrad_pool.manual_seed(3)
    assert np.array_equal(first, nn.ConvTranspose3d(2, 2, 2).weight.detach().numpy())
    for kw in [dict(padding_mode="reflect"), dict(groups=3)]:
        same_error(lambda: torch.nn.ConvTranspose3d(2, 4, 3, **kw),
                   lambda: nn.ConvTranspose3d(2, 4, 3, **kw))
    ours, theirs = nn.ConvTranspose3d(2, 4, 3, stride=2), torch.nn.ConvTranspose3d(2, 4, 3, stride=2)
    x = np.ones((1, 2, 3, 3, 3), np.float32)
    for size in [(9, 8, 8), (8, 8), [7.0, 8, 8], 7]:
        same_error(lambda: theirs(torch.tensor(x), output_size=size),
                   lambda: ours(tensor(x), output_size=size))
