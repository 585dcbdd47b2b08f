"""The second wave of torch's elementwise math (ops/math_functions.py): erfinv, sgn, logit,
xlogy, hypot, sinc, deg2rad/rad2deg, float_power, fmax/fmin, heaviside, logical_xor, clip_ —
and the reductions nansum, nanmean, trace and aminmax (ops/reduce.py).

Each against torch in float32 and float64 — forward, gradient and (where torch has one) the
second derivative through a create_graph backward — over hypothesis-drawn shapes; float64
finite differences; torch's values and gradients at the edges (0, ±1, NaN, ties); integer and
bool inputs' dtypes; torch's errors; the in-place forms."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad
from test_math_functions import DTYPES, TOLERANCES, assert_parity, compare

# name -> (function on a tensor, (low, high) of the values drawn, torch has a second derivative)
UNARY = {
    "erfinv": (lambda x: x.erfinv(), (-0.95, 0.95), True),
    "sinc": (lambda x: x.sinc(), (-3, 3), True),
    "deg2rad": (lambda x: x.deg2rad(), (-500, 500), True),
    "rad2deg": (lambda x: x.rad2deg(), (-5, 5), True),
    "logit": (lambda x: x.logit(), (0.02, 0.98), True),
    "logit_eps": (lambda x: x.logit(eps=0.2), (0.0, 1.0), True),
}
# name -> (function of two tensors, (low, high) of each operand)
BINARY = {
    "xlogy": (lambda a, b: a.xlogy(b), (-2, 2), (0.6, 4)),
    "hypot": (lambda a, b: a.hypot(b), (-3, 3), (-3, 3)),
    "fmax": (lambda a, b: a.fmax(b), (-3, 3), (-3, 3)),
    "fmin": (lambda a, b: a.fmin(b), (-3, 3), (-3, 3)),
    "float_power": (lambda a, b: a.float_power(b), (0.2, 3), (-2, 2)),
}


def draw(low, high, shape, seed) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(low, high, shape)
    if x.size:  # some exact zeros and ties, where the kinks and masks are
        x.reshape(-1)[::4] = np.round(x.reshape(-1)[::4])
    return x


@DTYPES
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch_to_second_order(torch, name, dtype):
    fn, (low, high), second = UNARY[name]
    x = draw(low, high, (3, 4), 0)
    if name.startswith("logit"):
        x = np.clip(x, 0.01, 0.99) if name == "logit" else x
    if name == "logit_eps":  # away from the clamp's bounds, where the slope jumps
        x = np.where(np.abs(x - 0.2) < 1e-3, 0.25, np.where(np.abs(x - 0.8) < 1e-3, 0.75, x))
    if name == "erfinv":
        x = np.clip(x, -0.95, 0.95)
    assert_parity(torch, fn, fn, [x], dtype, second_order=second)


@DTYPES
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_torch_to_second_order_broadcast(torch, name, dtype):
    fn, first, second = BINARY[name]
    a, b = draw(*first, (3, 1), 1), draw(*second, (4,), 2)
    if name == "float_power":  # (its result is float64: parity in float64 terms)
        ours_a, ours_b = tensor(a.astype(dtype), requires_grad=True), tensor(b.astype(dtype),
                                                                               requires_grad=True)
        theirs_a = torch.tensor(a.astype(dtype), requires_grad=True)
        theirs_b = torch.tensor(b.astype(dtype), requires_grad=True)
        yo, yt = fn(ours_a, ours_b), fn(theirs_a, theirs_b)
        assert yo.dtype == np.float64 and yt.dtype == torch.float64
        compare(yo.numpy(), yt.detach().numpy(), TOLERANCES[np.float64], "forward")
        go = autograd.grad(yo.sum(), [ours_a, ours_b])
        gt = torch.autograd.grad(yt.sum(), [theirs_a, theirs_b])
        for o, t in zip(go, gt):
            assert o.dtype == dtype
            compare(o.numpy(), t.numpy(), TOLERANCES[dtype], "gradient")
        return
    assert_parity(torch, fn, fn, [a, b], dtype)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(BINARY.keys() - {"float_power"}) + ["erfinv", "sinc", "logit"]),
       shape=st.lists(st.integers(0, 4), min_size=0, max_size=3), seed=st.integers(0, 2 ** 16),
       double=st.booleans())
def test_matches_torch_over_shapes(name, shape, seed, double):
    torch = pytest.importorskip("torch")
    dtype = np.float64 if double else np.float32
    if name in BINARY:
        fn, first, second = BINARY[name]
        arrays = [draw(*first, shape, seed), draw(*second, shape[1:], seed + 1)]
    else:
        fn, (low, high), _ = UNARY[name]
        arrays = [np.clip(draw(low, high, shape, seed), 0.01, 0.99) if name == "logit" else
                  np.clip(draw(low, high, shape, seed), -0.95, 0.95)]
    assert_parity(torch, fn, fn, arrays, dtype, seed)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradient_matches_finite_differences(name):
    fn, (low, high), _ = UNARY[name]
    x = np.random.default_rng(5).uniform(max(low, -0.9), min(high, 0.9), (3, 4))
    if name.startswith("logit"):
        x = np.random.default_rng(5).uniform(0.25, 0.75, (3, 4))
    check_grad(fn, x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradient_matches_finite_differences(name):
    fn, first, second = BINARY[name]
    rng = np.random.default_rng(6)
    a, b = rng.uniform(*first, (3, 1)), rng.uniform(*second, (4,))
    if name in ("fmax", "fmin"):
        b = b + 0.01  # (no ties: the slope jumps there)
    check_grad(fn, a, b)


def test_sgn_is_the_sign_with_gradient_0(torch):
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf])
    ours = tensor(x, requires_grad=True)
    out = ours.sgn()
    np.testing.assert_array_equal(out.numpy(), torch.sgn(torch.tensor(x)).numpy())
    out.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), np.zeros(6))
    ours = tensor(x) * 1
    assert ours.sgn_() is ours and ours._version == 1
    np.testing.assert_array_equal(ours.numpy(), torch.sgn(torch.tensor(x)).numpy())
    flags = tinygrad_pool.sgn(tensor([True, False]))
    assert flags.dtype == np.bool_ and flags.tolist() == [True, False]


def test_erfinv_is_accurate_to_its_edges(torch):
    y = np.array([-1.0, -1 + 1e-15, -0.999999, -0.7, -0.5, -1e-300, 0.0, 1e-30, 0.1, 0.4999,
                  0.5, 0.5001, 0.9, 0.99999, 1 - 2 ** -52, 1.0, 1.5, -2.0, np.nan])
    ours = tinygrad_pool.erfinv(tensor(y)).numpy()
    theirs = torch.erfinv(torch.tensor(y)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(tinygrad_pool.erf(tensor(ours[1:-4])).numpy(), y[1:-4],
                               rtol=1e-15, atol=1e-300)
    y32 = y.astype(np.float32)
    np.testing.assert_allclose(tinygrad_pool.erfinv(tensor(y32)).numpy(),
                               torch.erfinv(torch.tensor(y32)).numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("fn, points", [
    (lambda t: t.logit(), [0.0, 0.5, 1.0, 1.5, -1.0]),
    (lambda t: t.logit(eps=0.1), [0.0, 0.05, 0.1, 0.5, 0.9, 1.0, 1.5]),
    (lambda t: t.sinc(), [0.0, 0.5, 1.0, -2.0]),
    (lambda t: t.erfinv(), [0.0, 0.5, -0.9, 1.0, 2.0]),
], ids=["logit", "logit_eps", "sinc", "erfinv"])
def test_edges_give_torchs_first_and_second_derivatives(torch, fn, points):
    """logit's inf at 0 and 1 and nan outside [0, 1] (0 outside [eps, 1 - eps]); sinc's 0 at
    0 and its nan second derivative there; erfinv's inf at 1 and nan beyond."""
    x = np.array(points)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = fn(ours), fn(theirs)
    compare(yo.numpy(), yt.detach().numpy(), dict(rtol=1e-12, atol=0), "forward")
    (go,) = autograd.grad(yo.sum(), [ours], create_graph=True)
    (gt,) = torch.autograd.grad(yt.sum(), [theirs], create_graph=True)
    compare(go.numpy(), gt.detach().numpy(), dict(rtol=1e-12, atol=0), "gradient")
    (ggo,) = autograd.grad(go.sum(), [ours])
    (ggt,) = torch.autograd.grad(gt.sum(), [theirs])
    compare(ggo.numpy(), ggt.numpy(), dict(rtol=1e-12, atol=0), "second derivative")


def test_xlogy_is_0_where_x_is_0_unless_y_is_nan_with_torchs_gradients(torch):
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 0.0, -1.0])
    y = np.array([0.0, np.nan, -1.0, 0.0, 2.0, np.inf, 0.5])
    ours = [tensor(v, requires_grad=True) for v in (x, y)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, y)]
    yo, yt = ours[0].xlogy(ours[1]), theirs[0].xlogy(theirs[1])
    compare(yo.numpy(), yt.detach().numpy(), dict(rtol=1e-15, atol=0), "forward")
    go = autograd.grad(yo.sum(), ours, create_graph=True)
    gt = torch.autograd.grad(yt.sum(), theirs, create_graph=True)
    for o, t in zip(go, gt):
        compare(o.numpy(), t.detach().numpy(), dict(rtol=1e-15, atol=0), "gradient")
    ggo = autograd.grad(go[0].sum() + go[1].sum(), ours)
    ggt = torch.autograd.grad(gt[0].sum() + gt[1].sum(), theirs)
    for o, t in zip(ggo, ggt):
        compare(o.numpy(), t.numpy(), dict(rtol=1e-15, atol=0), "second derivative")


def test_xlogy_takes_a_number_on_either_side_and_integers_as_float(torch):
    y = np.array([1.0, 2.0, 0.0])
    for ours, theirs in [(tinygrad_pool.xlogy(2, tensor(y)), torch.xlogy(2, torch.tensor(y))),
                         (tinygrad_pool.xlogy(tensor(y), 3), torch.xlogy(torch.tensor(y), 3)),
                         (tinygrad_pool.xlogy(tensor([1, 2, 0]), tensor([True, False, True])),
                          torch.xlogy(torch.tensor([1, 2, 0]), torch.tensor([True, False, True])))]:
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        compare(ours.numpy(), theirs.numpy(), dict(rtol=1e-6, atol=0), "xlogy")
    with pytest.raises(TypeError):
        tinygrad_pool.xlogy(2, 3)
    with pytest.raises(TypeError):
        tinygrad_pool.xlogy(tensor(y), "3")


def test_hypot_at_the_origin_is_nan_sloped_as_torch(torch):
    a, b = np.array([0.0, 3.0, 1e300]), np.array([0.0, 4.0, 1e300])
    ours = [tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    yo, yt = ours[0].hypot(ours[1]), theirs[0].hypot(theirs[1])
    compare(yo.numpy(), yt.detach().numpy(), dict(rtol=1e-15, atol=0), "forward")
    assert np.isfinite(yo.numpy()[2])  # no overflow of a² + b²
    for o, t in zip(autograd.grad(yo.sum(), ours), torch.autograd.grad(yt.sum(), theirs)):
        compare(o.numpy(), t.numpy(), dict(rtol=1e-15, atol=0), "gradient")


def test_fmax_fmin_ignore_nan_and_give_ties_to_input(torch):
    a = np.array([1.0, 2.0, np.nan, np.nan, -0.0, 3.0])
    b = np.array([1.0, 1.0, 1.0, np.nan, 0.0, np.nan])
    for name in ("fmax", "fmin"):
        ours = [tensor(v, requires_grad=True) for v in (a, b)]
        theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
        yo, yt = getattr(tinygrad_pool, name)(*ours), getattr(torch, name)(*theirs)
        compare(yo.numpy(), yt.detach().numpy(), dict(rtol=0, atol=0), name)
        np.testing.assert_array_equal(np.signbit(yo.numpy()), np.signbit(yt.detach().numpy()))
        for o, t in zip(autograd.grad(yo.sum(), ours), torch.autograd.grad(yt.sum(), theirs)):
            compare(o.numpy(), t.numpy(), dict(rtol=0, atol=0), f"{name} gradient")
    ints = tinygrad_pool.fmax(tensor([1, 5], dtype=tinygrad_pool.int8), tensor([3, 2]))
    assert ints.dtype == np.int64 and ints.tolist() == [3, 5]
    with pytest.raises(TypeError):
        tinygrad_pool.fmax(tensor([1.0]), 2)


def test_integer_inputs_give_torchs_dtypes(torch):
    values = [1, 2, 0, -3]
    for name in ("erfinv", "sinc", "deg2rad", "rad2deg", "logit", "sgn", "float_power"):
        args = (2,) if name == "float_power" else ()
        for dtype in ("int32", "bool", "float64"):
            data = [abs(v) % 2 for v in values] if dtype == "bool" else values
            ours = getattr(tinygrad_pool, name)(tensor(data, dtype=getattr(tinygrad_pool, dtype)),
                                                *args)
            theirs = getattr(torch, name)(torch.tensor(data, dtype=getattr(torch, dtype)), *args)
            assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), (name, dtype)
            compare(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64),
                    dict(rtol=1e-6, atol=0), name)


def test_float_power_takes_numbers_and_is_float64(torch):
    x = np.array([2.0, 0.5, -8.0], dtype=np.float32)
    pairs = [(tinygrad_pool.float_power(tensor(x), 2), torch.float_power(torch.tensor(x), 2)),
             (tinygrad_pool.float_power(2, tensor(x)), torch.float_power(2, torch.tensor(x))),
             (tinygrad_pool.float_power(tensor(x), 1 / 3),
              torch.float_power(torch.tensor(x), 1 / 3))]
    for ours, theirs in pairs:
        assert ours.dtype == np.float64
        compare(ours.numpy(), theirs.numpy(), TOLERANCES[np.float64], "float_power")
    with pytest.raises(RuntimeError):
        tensor(x).float_power_(2)  # (torch: the result is float64, not float32)
    with pytest.raises(TypeError):
        tinygrad_pool.float_power(2, 3)


def test_heaviside_and_logical_xor(torch):
    x, v = np.array([-1.0, 0.0, 2.0, np.nan, -0.0]), np.array([0.5])
    ours = tinygrad_pool.heaviside(tensor(x), tensor(v))
    compare(ours.numpy(), torch.heaviside(torch.tensor(x), torch.tensor(v)).numpy(),
            dict(rtol=0, atol=0), "heaviside")
    ints = tinygrad_pool.heaviside(tensor([1, 0, -1]), tensor([5]))
    assert ints.dtype == np.int64 and ints.tolist() == [1, 5, 0]
    with pytest.raises(RuntimeError, match="different dtypes"):
        tinygrad_pool.heaviside(tensor([1, 0]), tensor([1.0]))
    leaf = tensor(x, requires_grad=True)
    out = leaf.heaviside(tensor(v))
    assert out.requires_grad  # as torch: the refusal comes in backward
    with pytest.raises(RuntimeError, match="heaviside"):
        out.sum().backward()
    a, b = np.array([1.0, 0.0, 2.0]), np.array([[0], [3]])
    got = tinygrad_pool.logical_xor(tensor(a), tensor(b))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.numpy(),
                                  torch.logical_xor(torch.tensor(a), torch.tensor(b)).numpy())


def test_errors_are_torchs_types():
    x = tensor([0.5])
    with pytest.raises(NotImplementedError):
        tinygrad_pool.hypot(tensor([1, 2]), tensor([3, 4]))
    with pytest.raises(TypeError):
        tinygrad_pool.hypot(x, 3)
    with pytest.raises(TypeError):
        x.logit(eps="small")
    with pytest.raises(TypeError):
        tinygrad_pool.erfinv([0.5])
    with pytest.raises(RuntimeError):  # an integer tensor cannot hold the float result
        tensor([1, 2]).sinc_()


@DTYPES
@pytest.mark.parametrize("name, args", [
    ("erfinv_", ()), ("logit_", ()), ("logit_", (0.3,)), ("sinc_", ()),
    ("deg2rad_", ()), ("rad2deg_", ()), ("clip_", (0.3, 0.6)), ("xlogy_", ("other",)),
    ("hypot_", ("other",))])
def test_in_place_forms_match_torch_and_bump_the_version(torch, name, args, dtype):
    x = np.random.default_rng(7).uniform(0.05, 0.95, (3, 4)).astype(dtype)
    other = np.random.default_rng(8).uniform(0.5, 2, (4,)).astype(dtype)
    ours_args = [tensor(other) if a == "other" else a for a in args]
    theirs_args = [torch.tensor(other) if a == "other" else a for a in args]
    # a leaf's clone (a non-leaf that requires grad): the gradient goes through the write
    leaf, theirs_leaf = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours, theirs = leaf * 1, theirs_leaf * 1
    version = ours._version
    assert getattr(ours, name)(*ours_args) is ours and ours._version == version + 1
    getattr(theirs, name)(*theirs_args)
    compare(ours.detach().numpy(), theirs.detach().numpy(), TOLERANCES[dtype], name)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    compare(leaf.grad.numpy(), theirs_leaf.grad.numpy(), TOLERANCES[dtype], f"{name} gradient")


def test_float_power_in_place_on_float64(torch):
    x = np.array([1.5, 2.0, 0.5])
    ours, theirs = tensor(x), torch.tensor(x)
    ours.float_power_(tensor([2.0, 3.0, -1.0], dtype=tinygrad_pool.float32))
    theirs.float_power_(torch.tensor([2.0, 3.0, -1.0]))
    compare(ours.numpy(), theirs.numpy(), TOLERANCES[np.float64], "float_power_")


# ---- nansum, nanmean, trace, aminmax --------------------------------------------------------
def with_nans(shape, seed) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape)
    if x.size:
        x.reshape(-1)[::3] = np.nan
    return x


REDUCTIONS = {
    "nansum": lambda x: x.nansum(),
    "nansum_dim": lambda x: x.nansum(1, keepdim=True),
    "nansum_dims": lambda x: x.nansum((0, -1)),
    "nanmean": lambda x: x.nanmean(),
    "nanmean_dim": lambda x: x.nanmean(dim=-1),
    "trace": lambda x: x[0].trace(),
    "amin_of_aminmax": lambda x: x.aminmax().min,
    "amax_of_aminmax_dim": lambda x: x.aminmax(dim=1, keepdim=True).max,
    "aminmax_dim": lambda x: x.aminmax(dim=0).min * x.aminmax(dim=0).max,
}


@DTYPES
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_torch_to_second_order(torch, name, dtype):
    x = with_nans((2, 3, 4), 0) if name.startswith("nan") else \
        np.round(np.random.default_rng(1).standard_normal((2, 3, 4)), 1)  # (ties)
    assert_parity(torch, REDUCTIONS[name], REDUCTIONS[name], [x], dtype)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2 ** 16),
       keepdim=st.booleans(), double=st.booleans(), data=st.data())
def test_nan_reductions_and_aminmax_over_shapes(shape, seed, keepdim, double, data):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    dtype = np.float64 if double else np.float32
    x = with_nans(shape, seed)
    for fn in (lambda t: t.nansum(dim, keepdim), lambda t: t.nanmean(dim, keepdim),
               lambda t: t.aminmax(dim=dim, keepdim=keepdim).max):
        assert_parity(torch, fn, fn, [x], dtype,
                      seed, second_order=False)


def test_reduction_gradients_match_finite_differences():
    x = np.random.default_rng(3).standard_normal((3, 4))
    check_grad(lambda t: t.nansum(1), x)
    check_grad(lambda t: t.nanmean(0), x)
    check_grad(lambda t: t.trace(), x)
    check_grad(lambda t: t.aminmax(dim=1).min + t.aminmax(dim=1).max * 2, x)


def test_nan_positions_get_gradient_0_and_all_nan_slices_give_nan(torch):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    for name in ("nansum", "nanmean"):
        ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        yo, yt = getattr(ours, name)(1), getattr(theirs, name)(1)
        compare(yo.numpy(), yt.detach().numpy(), dict(rtol=0, atol=0), name)
        yo.sum().backward()
        yt.sum().backward()
        compare(ours.grad.numpy(), theirs.grad.numpy(), dict(rtol=0, atol=0), f"{name} gradient")
        assert ours.grad.numpy()[0, 1] == 0  # (an all-NaN slice's mean: 0 · (1/0) = nan)


def test_reduction_dtypes_and_errors(torch):
    assert tinygrad_pool.nansum(tensor([[1, 2]], dtype=tinygrad_pool.int8)).dtype == np.int64
    assert tinygrad_pool.nansum(tensor([True, True])).item() == 2
    wide = tinygrad_pool.float64
    assert tinygrad_pool.nansum(tensor([1.0, np.nan]), dtype=wide).dtype == np.float64
    assert tinygrad_pool.nanmean(tensor([1.0, np.nan]), dtype=wide).item() == 1.0
    small = tensor([[1, 2], [3, 4]], dtype=tinygrad_pool.uint8)
    assert tinygrad_pool.trace(small).dtype == np.int64 and tinygrad_pool.trace(small).item() == 5
    assert tinygrad_pool.trace(tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).item() == 6.0
    with pytest.raises(RuntimeError):
        tinygrad_pool.nanmean(tensor([1, 2]))
    with pytest.raises(RuntimeError):
        tinygrad_pool.nanmean(tensor([1.0]), dtype=tinygrad_pool.int64)
    with pytest.raises(RuntimeError):
        tinygrad_pool.nansum(tensor([[1.0]]), dim=(0, 0))
    with pytest.raises(RuntimeError):
        tinygrad_pool.trace(tensor([1.0]))
    with pytest.raises(NotImplementedError):
        tinygrad_pool.trace(tensor([[True]]))
    with pytest.raises(RuntimeError):
        tinygrad_pool.aminmax(tensor([]))
    with pytest.raises(IndexError):
        tinygrad_pool.aminmax(tensor(np.zeros((2, 0))), dim=1)
    with pytest.raises(IndexError):
        tinygrad_pool.aminmax(tensor([[1.0]]), dim=3)
    assert tinygrad_pool.aminmax(tensor(np.zeros((2, 0))), dim=0).min.shape == (0,)


def test_aminmax_is_torchs_named_tuple(torch):
    x = np.array([[1.0, 3.0], [2.0, 0.0]])
    ours, theirs = tinygrad_pool.aminmax(tensor(x)), torch.aminmax(torch.tensor(x))
    assert ours.min.item() == theirs.min.item() and ours.max.item() == theirs.max.item()
    low, high = tensor(x).aminmax(dim=0, keepdim=True)
    assert low.shape == (1, 2) and high.tolist() == [[2.0, 3.0]]
    assert tinygrad_pool.aminmax(tensor(x), keepdim=True).max.shape == (1, 1)
    assert repr(ours).startswith("torch.return_types.aminmax(\nmin=")
    assert tinygrad_pool.aminmax(tensor(2.0), dim=0).max.item() == 2.0
