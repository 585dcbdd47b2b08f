"""Running results along a dim: cumprod, cummax, cummin, logcumsumexp — against torch.

cummax/cummin's index at ties is specified by torch's kernel (a later equal value, or a later
NaN, takes over), so indices are compared on data with ties and NaNs. cumprod's gradient is
compared where x has zeros (one, two, at the ends), where a formula dividing by x would fail.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor
from tinygrad_pool.ops.cumulative import Recurrence

from helpers import check_grad

TOLERANCE = {np.float32: dict(rtol=2e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])


def assert_same(ours, theirs, what="", **tolerance):
    theirs = theirs.detach().numpy()
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (what, ours.dtype, theirs.dtype)
    if tolerance:
        np.testing.assert_allclose(ours.numpy(), theirs, err_msg=what, **tolerance)
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs, err_msg=what)


def assert_second_order(torch, ours_fn, torch_fn, x, dtype, seed=0, scale=1.0):
    """Forward, gradient (create_graph) and the second derivatives d/dx, d/dw of Σ v·(∂y/∂x)ᵀw,
    ours against torch's (float32 tolerances relative to the largest value compared)."""
    x = np.asarray(x, dtype=dtype)
    rng = np.random.default_rng(seed)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours_fn(xo), torch_fn(xt)
    assert yo.shape == tuple(yt.shape) and yo.dtype == dtype

    def close(got, expected, what):
        tolerance = dict(TOLERANCE[dtype])
        tolerance["atol"] *= max(1.0, float(np.abs(np.nan_to_num(expected)).max(initial=0)))
        np.testing.assert_allclose(got, expected, **tolerance, err_msg=what)
    close(yo.numpy(), yt.detach().numpy(), "forward")
    weights = rng.standard_normal(yo.shape).astype(dtype)
    direction = rng.standard_normal(x.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    assert go.dtype == dtype
    close(go.numpy(), gt.detach().numpy(), "backward")
    (go * tensor(direction)).sum().backward()
    (gt * torch.tensor(direction)).sum().backward()
    for ours, theirs, what in ((xo, xt, "d²/dx²"), (wo, wt, "d²/dx dw")):
        expected = np.zeros(ours.shape) if theirs.grad is None else theirs.grad.numpy()
        got = np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy()
        close(got, expected, what)


def with_zeros(shape, seed=0) -> np.ndarray:
    """Values around ±1 (products stay moderate), some exactly 0 — also two in one slice."""
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape))
    return np.where(rng.random(shape) < 0.2, 0.0, x)


def first_derivative(fn, x, weights):
    """(∂fn/∂x)ᵀ weights as a differentiable function of x (gradcheck evaluates it under
    no_grad: the graph is recorded anyway)."""
    with tinygrad_pool.enable_grad():
        return autograd.grad(fn(), [x], grad_outputs=[weights], create_graph=True)[0]


# ---- cumprod -------------------------------------------------------------------------------
@DTYPES
def test_cumprod_to_second_order_with_zeros(torch, dtype):
    x = with_zeros((3, 4, 6))
    x[0, 0, :] = [0.0, 2.0, 0.0, 3.0, 0.5, 4.0]  # two zeros, one first
    x[0, 1, :] = [2.0, 0.5, 3.0, 1.5, 4.0, 0.0]  # a zero last
    x[0, 2, :] = [2.0, 0.5, 3.0, 1.5, 4.0, 0.7]  # none
    for dim in (0, 1, -1):
        assert_second_order(torch, lambda t: t.cumprod(dim), lambda t: t.cumprod(dim), x, dtype)
    assert_second_order(torch, lambda t: tinygrad_pool.cumprod(t, dim=2),
                        lambda t: torch.cumprod(t, dim=2), np.abs(x) + 0.5, dtype)


def test_cumprod_finite_differences_with_zeros():
    check_grad(lambda t: t.cumprod(1), with_zeros((3, 6), 1))
    check_grad(lambda t: t.cumprod(0), np.array([[0.0, 2.0], [3.0, 0.0], [0.0, 0.0], [2.0, 1.5]]))
    # the gradient of the gradient, by finite differences of the first derivative
    weights = tensor(np.random.default_rng(2).standard_normal((3, 6)))
    check_grad(lambda t: first_derivative(lambda: t.cumprod(1), t, weights), with_zeros((3, 6), 3))


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=3), data=st.data(),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_cumprod_over_shapes(shape, data, seed, double):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    dtype = np.float64 if double else np.float32
    assert_second_order(torch, lambda t: t.cumprod(dim), lambda t: t.cumprod(dim),
                        with_zeros(shape, seed), dtype, seed)


def test_cumprod_dtypes(torch):
    ints = np.array([[3, -1, 2], [4, 5, 0]])
    for dtype in (np.int64, np.int32, np.uint8, np.bool_):
        x = np.abs(ints).astype(dtype)
        assert_same(tensor(x).cumprod(1), torch.tensor(x).cumprod(1), str(dtype))  # int64
    for dtype, torch_dtype in ((tinygrad_pool.float64, torch.float64),
                               (tinygrad_pool.float32, torch.float32),
                               (tinygrad_pool.int64, torch.int64)):
        assert_same(tinygrad_pool.cumprod(tensor(ints), 1, dtype=dtype),
                    torch.cumprod(torch.tensor(ints), 1, dtype=torch_dtype))
    # dtype=: the input is cast first, and the gradient cast back
    leaf = tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    out = leaf.cumprod(0, dtype=tinygrad_pool.float64)
    assert out.dtype == np.float64
    out.sum().backward()
    assert leaf.grad.dtype == np.float32
    np.testing.assert_allclose(leaf.grad.numpy(), [1 + 2 + 6, 1 + 3, 2])
    # float32 products accumulate in float64, as torch's
    long = np.random.default_rng(0).uniform(0.99, 1.01, 3000).astype(np.float32)
    assert_same(tensor(long).cumprod(0), torch.tensor(long).cumprod(0), rtol=1e-7)


def test_recurrence_to_second_order_against_a_loop():
    """The recurrence behind cumprod's gradient, both directions: forward values against a
    plain loop; first and second derivatives by finite differences."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 9)), rng.standard_normal((2, 9))
    for reverse in (False, True):
        y = Recurrence.call(a, b, axis=1, reverse=reverse)
        expected, previous = np.zeros_like(b), np.zeros(2)
        for k in (range(8, -1, -1) if reverse else range(9)):
            expected[:, k] = previous = b[:, k] + a[:, k] * previous
        np.testing.assert_allclose(y, expected, rtol=1e-12)

        def recurrence(a, b, reverse=reverse):
            return Recurrence.apply(a, b, axis=1, reverse=reverse)
        check_grad(recurrence, a, b)
        weights = tensor(rng.standard_normal((2, 9)))
        check_grad(lambda a, b: first_derivative(lambda: recurrence(a, b), a, weights), a, b)


# ---- cummax, cummin ------------------------------------------------------------------------
def assert_result(ours, theirs, what=""):
    assert repr(ours).startswith(f"torch.return_types.{type(theirs).__name__}(")
    assert_same(ours.values, theirs.values, f"{what} values")
    assert_same(ours.indices, theirs.indices, f"{what} indices")


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_cummax_cummin_with_ties_and_nans(torch, name, dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (4, 5, 12)).astype(np.float64)
    if np.dtype(dtype).kind == "f":
        x[rng.random(x.shape) < 0.1] = np.nan
    x = x.astype(dtype)
    for dim in (0, 1, 2, -1):
        assert_result(getattr(tensor(x), name)(dim), getattr(torch.tensor(x), name)(dim), name)
        assert_result(getattr(tinygrad_pool, name)(tensor(x), dim=dim),
                      getattr(torch, name)(torch.tensor(x), dim=dim), name)


@DTYPES
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_to_second_order(torch, name, dtype):
    rng = np.random.default_rng(1)
    ties = rng.integers(-2, 3, (3, 4, 7)).astype(np.float64)  # gradients summed at shared indices
    ties[0, 0, 3] = np.nan
    for dim in (0, -1):
        assert_second_order(torch, lambda t: getattr(t, name)(dim).values,
                            lambda t: getattr(t, name)(dim).values, ties, dtype)
    check_grad(lambda t: getattr(t, name)(1).values, rng.standard_normal((3, 6)))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=3), data=st.data(),
       seed=st.integers(0, 2 ** 16), maximum=st.booleans())
def test_cummax_cummin_over_shapes(shape, data, seed, maximum):
    torch = pytest.importorskip("torch")
    name = "cummax" if maximum else "cummin"
    dim = data.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float64)
    assert_result(getattr(tensor(x), name)(dim), getattr(torch.tensor(x), name)(dim))


# ---- logcumsumexp --------------------------------------------------------------------------
@DTYPES
def test_logcumsumexp_to_second_order(torch, dtype):
    x = np.random.default_rng(2).standard_normal((3, 4, 6)) * 3
    for dim in (0, -1):
        assert_second_order(torch, lambda t: t.logcumsumexp(dim),
                            lambda t: t.logcumsumexp(dim), x, dtype)
    check_grad(lambda t: t.logcumsumexp(1), x[0])


@DTYPES
def test_logcumsumexp_is_stable_and_handles_infinities_as_torch(torch, dtype):
    big = np.array([[1000.0, 1000.0, -1000.0, 88.0, 89.0, 2000.0],
                    [-1000.0, -1001.0, -999.0, -2000.0, -1000.0, -1000.0]])
    assert_second_order(torch, lambda t: t.logcumsumexp(1), lambda t: t.logcumsumexp(1), big,
                        dtype)
    inf, nan = np.inf, np.nan
    special = np.array([[-inf, -inf, 1.0, inf, 2.0, inf, -inf],
                        [-inf, -inf, -inf, -inf, -inf, -inf, -inf],
                        [1.0, nan, 2.0, 3.0, -inf, 0.0, 1.0]], dtype)
    weights = np.array([1.0, 0.0, -1.0, 2.0, 0.5, -0.5, 1.0], dtype)
    leaf, xt = tensor(special, requires_grad=True), torch.tensor(special, requires_grad=True)
    ours, theirs = leaf.logcumsumexp(1), xt.logcumsumexp(1)
    assert_same(ours, theirs)
    ours.backward(tensor(np.broadcast_to(weights, special.shape).copy()))
    theirs.backward(torch.tensor(np.broadcast_to(weights, special.shape).copy()))
    np.testing.assert_allclose(leaf.grad.numpy(), xt.grad.numpy(), rtol=1e-5)  # NaNs as torch's


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=3), data=st.data(),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_logcumsumexp_over_shapes(shape, data, seed, double):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    x = np.random.default_rng(seed).standard_normal(shape) * 5
    assert_second_order(torch, lambda t: t.logcumsumexp(dim), lambda t: t.logcumsumexp(dim), x,
                        np.float64 if double else np.float32, seed)


# ---- 0-d, empty, errors --------------------------------------------------------------------
def test_0d_and_empty(torch):
    for x in (np.array(5.0), np.zeros(0), np.zeros((2, 0))):
        for dim in (0, -1):
            assert_same(tensor(x).cumprod(dim), torch.tensor(x).cumprod(dim))
            assert_same(tensor(x).logcumsumexp(dim), torch.tensor(x).logcumsumexp(dim))
            assert_result(tensor(x).cummax(dim), torch.tensor(x).cummax(dim))
            assert_result(tensor(x).cummin(dim), torch.tensor(x).cummin(dim))
    for name in ("cumprod", "logcumsumexp"):
        leaf = tensor(np.array(2.0), requires_grad=True)
        getattr(leaf, name)(0).backward()
        assert leaf.grad.item() == 1.0


ERRORS = [
    (lambda m: m.ones(3).cumprod(1), IndexError, "out of range"),
    (lambda m: m.ones(2, 3).cummax(-3), IndexError, "out of range"),
    (lambda m: m.tensor(1.0).cummin(1), IndexError, "out of range"),
    (lambda m: m.ones(3).logcumsumexp(2), IndexError, "out of range"),
    (lambda m: m.ones(3).cumprod((0,)), TypeError, "dim must be an int"),
    (lambda m: m.ones(3).cumprod(None), TypeError, "dim must be an int"),
    (lambda m: m.cumprod(m.ones(3)), TypeError, None),
    (lambda m: m.ones(3).cumprod(0, m.float64), TypeError, None),  # dtype is keyword-only
    (lambda m: m.ones(3).long().logcumsumexp(0), NotImplementedError, "Long"),
    (lambda m: m.ones(3).bool().logcumsumexp(0), NotImplementedError, "Bool"),
    (lambda m: m.cummax([1.0, 2.0], 0), TypeError, "must be Tensor"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors_as_torch(torch, call, error, match):
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error, match=match):
        call(tinygrad_pool)
