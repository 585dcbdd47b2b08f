"""Selection by order: sort, argsort, msort, topk, kthvalue, median, nanmedian — against torch.

Which index torch returns among equal values is specified only for ``sort(stable=True)``: its
unstable sort is stable up to 16 elements per slice and not beyond, and topk, kthvalue and
median pick among ties by their selection algorithm (median([1, 1, 1]) need not be index 0).
So the tests that compare indices use ``stable=True`` or data without ties; where there are
ties, the values must be torch's and the gradient must go to the index returned.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad

TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])


def distinct(shape, seed=0) -> np.ndarray:
    """Values without ties (a shuffled range, scaled), so that every order is unique."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) - n / 2).reshape(shape) / 3.0


def distinct_ints(shape, seed=0, dtype=np.int64) -> np.ndarray:
    """Integers without ties (a shuffled range around 0)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) - n // 2).reshape(shape).astype(dtype)


def with_ties(shape, seed=0, nan=False) -> np.ndarray:
    """Few distinct values (many ties), and some NaNs if asked."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
    return x


def assert_same(ours, theirs, what=""):
    """Same shape, dtype and values (NaN where torch has NaN); indices exactly."""
    theirs = theirs.detach().numpy()
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (what, ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs, err_msg=what)


def assert_result(ours, theirs, what=""):
    """A (values, indices) named tuple: both fields as torch's, and its type's name."""
    assert type(ours).__name__.lower().startswith(type(theirs).__name__.lower()), what
    assert repr(ours).startswith(f"torch.return_types.{type(theirs).__name__}(")
    assert_same(ours.values, theirs.values, f"{what} values")
    assert_same(ours.indices, theirs.indices, f"{what} indices")
    values, indices = ours  # a tuple, as torch's
    assert values is ours.values and indices is ours.indices


def assert_second_order(torch, ours_fn, torch_fn, x, dtype, seed=0):
    """Forward, gradient (create_graph) and the second derivatives d/dx, d/dw of Σ v·(∂y/∂x)ᵀw,
    ours against torch's. ``*_fn`` return the differentiable output (values)."""
    tolerance = TOLERANCE[dtype]
    x = np.asarray(x, dtype=dtype)
    rng = np.random.default_rng(seed)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours_fn(xo), torch_fn(xt)
    assert yo.shape == tuple(yt.shape) and yo.dtype == dtype
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tolerance)
    weights = rng.standard_normal(yo.shape).astype(dtype)
    direction = rng.standard_normal(x.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    assert go.dtype == dtype
    np.testing.assert_allclose(go.numpy(), gt.detach().numpy(), **tolerance, err_msg="backward")
    (go * tensor(direction)).sum().backward()
    if gt.requires_grad:
        (gt * torch.tensor(direction)).sum().backward()
    for ours, theirs, what in ((xo, xt, "d²/dx²"), (wo, wt, "d²/dx dw")):
        expected = np.zeros(ours.shape) if theirs.grad is None else theirs.grad.numpy()
        got = np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy()
        np.testing.assert_allclose(got, expected, **tolerance, err_msg=what)


def assert_gradient_goes_to_indices(result, x_leaf, dim, keepdim=True):
    """The gradient of values reaches x exactly at the returned indices (ties or not)."""
    weights = np.random.default_rng(1).standard_normal(result.values.shape)
    result.values.backward(tensor(weights.astype(x_leaf.dtype)))
    expected = np.zeros(x_leaf.shape)
    indices, weights = result.indices.numpy(), weights
    if x_leaf.ndim == 0:
        expected = weights
    else:
        if not keepdim:
            indices, weights = np.expand_dims(indices, dim), np.expand_dims(weights, dim)
        np.put_along_axis(expected, indices, weights, axis=dim)
    np.testing.assert_allclose(x_leaf.grad.numpy(), expected, rtol=1e-6)


# ---- sort, argsort, msort -----------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_stable_sort_matches_torch_with_ties_and_nans(torch, dtype, descending):
    x = with_ties((3, 40), nan=np.dtype(dtype).kind == "f").astype(dtype)
    for dim in (-1, 0, 1, -2):
        ours = tinygrad_pool.sort(tensor(x), dim=dim, descending=descending, stable=True)
        theirs = torch.sort(torch.tensor(x), dim=dim, descending=descending, stable=True)
        assert_result(ours, theirs, f"sort dim={dim}")
        assert_result(tensor(x).sort(stable=True, dim=dim, descending=descending), theirs)
        assert_same(tensor(x).argsort(dim=dim, descending=descending, stable=True),
                    torch.argsort(torch.tensor(x), dim=dim, descending=descending, stable=True), "argsort")
    assert_same(tinygrad_pool.msort(tensor(x)), torch.msort(torch.tensor(x)), "msort")
    assert_same(tensor(x).msort(), torch.tensor(x).msort(), "msort")


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3), data=st.data(),
       descending=st.booleans(), stable=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_sort_over_shapes(shape, data, descending, stable, seed):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    # ties only where the order is specified: stable=True
    x = with_ties(shape, seed, nan=True) if stable else distinct(shape, seed)
    ours = tensor(x).sort(dim=dim, descending=descending, stable=stable)
    theirs = torch.tensor(x).sort(dim=dim, descending=descending, stable=stable)
    assert_result(ours, theirs)
    assert_same(tinygrad_pool.argsort(tensor(x), dim=dim, descending=descending, stable=stable),
                torch.argsort(torch.tensor(x), dim=dim, descending=descending, stable=stable))


def test_unstable_sort_is_stable_here(torch):
    """stable=False: our order of ties is the stable one, a valid unstable order; torch's own is
    stable up to 16 elements per slice."""
    x = with_ties((4, 16))
    assert_result(tensor(x).sort(), torch.tensor(x).sort())
    big = with_ties((100,))
    ours = tensor(big).sort()
    assert_result(ours, torch.tensor(big).sort(stable=True))
    np.testing.assert_array_equal(ours.values.numpy(), torch.tensor(big).sort().values.numpy())


@DTYPES
@pytest.mark.parametrize("descending", [False, True])
def test_sort_gradients_to_second_order(torch, dtype, descending):
    x = distinct((3, 4, 5))
    for dim in (0, -1):
        assert_second_order(torch, lambda t: t.sort(dim, descending).values,
                            lambda t: t.sort(dim, descending).values, x, dtype)
    assert_second_order(torch, lambda t: t.msort(), lambda t: t.msort(), x, dtype)


def test_sort_gradient_with_ties_goes_to_the_indices(torch):
    x = with_ties((3, 30), nan=True)
    leaf = tensor(x, requires_grad=True)
    assert_gradient_goes_to_indices(leaf.sort(dim=1, descending=True, stable=True), leaf, 1)
    xt = torch.tensor(x, requires_grad=True)
    weights = np.random.default_rng(1).standard_normal(x.shape)
    xt.sort(dim=1, descending=True, stable=True).values.backward(torch.tensor(weights))
    np.testing.assert_array_equal(leaf.grad.numpy(), xt.grad.numpy())


def test_sort_finite_differences():
    check_grad(lambda t: t.sort(1).values * tinygrad_pool.arange(4.0, dtype=tinygrad_pool.float64),
               distinct((3, 4)))
    check_grad(lambda t: t.sort(0, descending=True).values[:2], distinct((3, 4), 1))


def test_sort_of_0d_and_empty(torch):
    for x in (np.array(5.0), np.zeros(0), np.zeros((2, 0)), np.zeros((0, 3))):
        for dim in (0, -1):
            assert_result(tensor(x).sort(dim), torch.tensor(x).sort(dim), f"{x.shape} {dim}")
            assert_same(tensor(x).argsort(dim), torch.tensor(x).argsort(dim))
    leaf = tensor(np.array(2.0), requires_grad=True)
    leaf.sort().values.backward()
    assert leaf.grad.item() == 1.0


# ---- topk ------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data(),
       largest=st.booleans(), seed=st.integers(0, 2 ** 16), int64=st.booleans())
def test_topk_over_shapes(shape, data, largest, seed, int64):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[dim]))
    x = distinct_ints(shape, seed) if int64 else distinct(shape, seed)
    assert_result(tensor(x).topk(k, dim, largest), torch.tensor(x).topk(k, dim, largest))
    assert_result(tinygrad_pool.topk(tensor(x), k, dim=dim, largest=largest),
                  torch.topk(torch.tensor(x), k, dim=dim, largest=largest))


def test_topk_unsorted_and_ties(torch):
    x = distinct((4, 9))
    ours, theirs = tensor(x).topk(4, sorted=False), torch.tensor(x).topk(4, sorted=False)
    # sorted=False: torch's order is unspecified; the same elements, in some order
    np.testing.assert_array_equal(np.sort(ours.values.numpy(), 1),
                                  np.sort(theirs.values.numpy(), 1))
    np.testing.assert_array_equal(np.sort(ours.indices.numpy(), 1),
                                  np.sort(theirs.indices.numpy(), 1))
    ties = with_ties((5, 30), nan=True)
    for largest in (True, False):
        leaf = tensor(ties, requires_grad=True)
        ours = leaf.topk(7, largest=largest)
        np.testing.assert_array_equal(ours.values.numpy(),
                                      torch.tensor(ties).topk(7, largest=largest).values.numpy())
        # the returned indices point at the returned values
        np.testing.assert_array_equal(np.take_along_axis(ties, ours.indices.numpy(), 1),
                                      ours.values.numpy())
        assert_gradient_goes_to_indices(ours, leaf, 1)


@DTYPES
def test_topk_gradients_to_second_order(torch, dtype):
    x = distinct((3, 4, 5))
    for k, dim, largest in ((2, -1, True), (3, 0, False), (0, 1, True)):
        assert_second_order(torch, lambda t: t.topk(k, dim, largest).values,
                            lambda t: t.topk(k, dim, largest).values, x, dtype)
    check_grad(lambda t: t.topk(2, 0).values, distinct((4, 3)))


def test_topk_of_0d_and_empty(torch):
    scalar = np.array(5.0)
    for k in (0, 1):  # a 0-d tensor gives itself for k = 0 too, as torch
        assert_result(tensor(scalar).topk(k), torch.tensor(scalar).topk(k))
    assert_result(tensor(np.zeros(0)).topk(0), torch.zeros(0, dtype=torch.float64).topk(0))
    assert_result(tensor(np.zeros((2, 0))).topk(1, 0), torch.zeros(2, 0).double().topk(1, 0))


# ---- kthvalue --------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data(),
       keepdim=st.booleans(), seed=st.integers(0, 2 ** 16), int64=st.booleans())
def test_kthvalue_over_shapes(shape, data, keepdim, seed, int64):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(1, shape[dim]))
    x = distinct_ints(shape, seed) if int64 else distinct(shape, seed)
    assert_result(tensor(x).kthvalue(k, dim, keepdim), torch.tensor(x).kthvalue(k, dim, keepdim))
    assert_result(tinygrad_pool.kthvalue(tensor(x), k, dim=dim, keepdim=keepdim),
                  torch.kthvalue(torch.tensor(x), k, dim=dim, keepdim=keepdim))


def test_kthvalue_with_ties_and_nans(torch):
    x = with_ties((6, 11), nan=True)
    for k in (1, 4, 11):
        leaf = tensor(x, requires_grad=True)
        ours, theirs = leaf.kthvalue(k, 1), torch.tensor(x).kthvalue(k, 1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())  # NaN largest
        assert_gradient_goes_to_indices(ours, leaf, 1, keepdim=False)


@DTYPES
def test_kthvalue_gradients_to_second_order(torch, dtype):
    x = distinct((3, 4, 5))
    for k, dim, keepdim in ((2, -1, False), (3, 0, True)):
        assert_second_order(torch, lambda t: t.kthvalue(k, dim, keepdim).values,
                            lambda t: t.kthvalue(k, dim, keepdim).values, x, dtype)
    check_grad(lambda t: t.kthvalue(2, 0).values, distinct((4, 3)))


def test_kthvalue_of_0d_and_empty(torch):
    assert_result(tensor(np.array(5.0)).kthvalue(1), torch.tensor(5.0).double().kthvalue(1))
    assert_result(tensor(np.zeros((2, 0))).kthvalue(1, 0),
                  torch.zeros(2, 0).double().kthvalue(1, 0))


# ---- median, nanmedian -----------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data(),
       keepdim=st.booleans(), seed=st.integers(0, 2 ** 16), nan=st.booleans())
def test_median_over_shapes(shape, data, keepdim, seed, nan):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = distinct(shape, seed)
    if nan:  # NaNs tie with each other: median's index is the first NaN, as torch's
        x[np.random.default_rng(seed).random(shape) < 0.3] = np.nan
    for name in ("median", "nanmedian"):
        ours = getattr(tensor(x), name)(dim, keepdim)
        theirs = getattr(torch.tensor(x), name)(dim, keepdim)
        if name == "nanmedian" and np.isnan(x).all(axis=dim).any():
            # A slice of NaNs only: NaN, at an index torch leaves to its selection algorithm
            # (std::nth_element among equals: index 0 of three NaNs, index 2 of four); the
            # index must still point at a NaN, and elsewhere be torch's
            assert_same(ours.values, theirs.values)
            only_nans = np.isnan(x).all(axis=dim, keepdims=True)
            indices = ours.indices.numpy().reshape(only_nans.shape)
            assert np.isnan(np.take_along_axis(x, indices, axis=dim)[only_nans]).all()
            only_nans = only_nans.reshape(ours.indices.shape)
            np.testing.assert_array_equal(ours.indices.numpy()[~only_nans],
                                          theirs.indices.numpy()[~only_nans])
            continue
        assert_result(ours, theirs, name)
        assert_same(getattr(tinygrad_pool, name)(tensor(x)), getattr(torch, name)(torch.tensor(x)))


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_with_ties(torch, name):
    x = with_ties((5, 8), nan=True)
    leaf = tensor(x, requires_grad=True)
    ours, theirs = getattr(leaf, name)(1), getattr(torch.tensor(x), name)(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    assert_gradient_goes_to_indices(ours, leaf, 1, keepdim=False)
    # and for the whole tensor: the lower median; the gradient split among the elements equal
    # to it (or among the NaNs where it is NaN), as torch
    for data in (x, with_ties((5, 8)), np.array([1.0, np.nan, 2.0, 2.0]), np.full(3, np.nan)):
        leaf, xt = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        ours, theirs = getattr(leaf, name)(), getattr(xt, name)()
        assert_same(ours, theirs)
        ours.backward()
        theirs.backward()
        np.testing.assert_allclose(leaf.grad.numpy(), xt.grad.numpy())


@DTYPES
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_gradients_to_second_order(torch, dtype, name):
    x = distinct((3, 4, 5))
    x[0, 0, :2] = np.nan
    for dim, keepdim in ((-1, False), (0, True), (1, False)):
        assert_second_order(torch, lambda t: getattr(t, name)(dim, keepdim).values,
                            lambda t: getattr(t, name)(dim, keepdim).values, x, dtype)
    ties = with_ties((4, 5))
    assert_second_order(torch, lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), ties,
                        dtype)
    check_grad(lambda t: getattr(t, name)(1).values, distinct((3, 5)))
    check_grad(lambda t: getattr(t, name)(), distinct((3, 4)))


def test_median_dtypes_0d_and_empty(torch):
    for dtype in (np.int64, np.int32, np.float32):
        x = distinct_ints((3, 5), dtype=dtype)
        for name in ("median", "nanmedian"):
            assert_result(getattr(tensor(x), name)(0), getattr(torch.tensor(x), name)(0))
            assert_same(getattr(tensor(x), name)(), getattr(torch.tensor(x), name)())
    for name in ("median", "nanmedian"):
        assert_same(getattr(tensor(np.array(2.0)), name)(), getattr(torch.tensor(2.0).double(), name)())
        assert_result(getattr(tensor(np.array(2.0)), name)(-1),
                      getattr(torch.tensor(2.0).double(), name)(-1))
        assert_same(getattr(tensor(np.zeros(0)), name)(), getattr(torch.zeros(0).double(), name)())
        assert_same(getattr(tensor(np.zeros(0, np.int64)), name)(),
                    getattr(torch.zeros(0, dtype=torch.int64), name)())
        assert_result(getattr(tensor(np.zeros((0, 3))), name)(1),
                      getattr(torch.zeros(0, 3).double(), name)(1))


def test_numpy_spellings(torch):
    x = distinct((3, 4))
    assert_result(tensor(x).sort(axis=0), torch.tensor(x).sort(axis=0))
    assert_result(tensor(x).kthvalue(2, axis=0, keepdims=True),
                  torch.tensor(x).kthvalue(2, axis=0, keepdims=True))
    assert_result(tinygrad_pool.median(tensor(x), axis=1), torch.median(torch.tensor(x), axis=1))


# ---- errors, as torch's ----------------------------------------------------------------------
def _raises_like_torch(torch, ours, theirs, error, match=None):
    with pytest.raises(error):
        theirs(torch)
    with pytest.raises(error, match=match):
        ours(tinygrad_pool)


ERRORS = [
    # (ours/theirs on a module m, the error type, what our message says)
    (lambda m: m.ones(3).topk(4), RuntimeError, "selected index k out of range"),
    (lambda m: m.ones(3).topk(-1), RuntimeError, "selected index k out of range"),
    (lambda m: m.tensor(5.0).topk(2), RuntimeError, "selected index k out of range"),
    (lambda m: m.zeros(0).topk(1), RuntimeError, "selected index k out of range"),
    (lambda m: m.ones(3).kthvalue(0), RuntimeError, "selected number k out of range"),
    (lambda m: m.ones(3).kthvalue(4), RuntimeError, "selected number k out of range"),
    (lambda m: m.zeros(0).kthvalue(1), IndexError, "non-zero size"),
    (lambda m: m.zeros(2, 0).median(1), IndexError, "non-zero size"),
    (lambda m: m.zeros(2, 0).nanmedian(-1), IndexError, "non-zero size"),
    (lambda m: m.ones(3).sort(1), IndexError, "out of range"),
    (lambda m: m.ones(3).sort(-2), IndexError, "out of range"),
    (lambda m: m.ones(2, 3).topk(1, 2), IndexError, "out of range"),
    (lambda m: m.ones(3).kthvalue(1, 1), IndexError, "out of range"),
    (lambda m: m.ones(3).median(1), IndexError, "out of range"),
    (lambda m: m.ones(3).argsort(1), IndexError, "out of range"),
    (lambda m: m.ones(3).topk(1.0), TypeError, "k must be an int"),
    (lambda m: m.ones(3).topk(True), TypeError, "k must be an int"),
    (lambda m: m.ones(3).sort(descending=1), TypeError, "descending must be bool"),
    (lambda m: m.ones(3).sort(dim=None), TypeError, "dim must be an int"),
    (lambda m: m.ones(3).topk(1, largest=None), TypeError, "largest must be bool"),
    (lambda m: m.ones(3).median(None), TypeError, "dim must be an int"),
    (lambda m: m.ones(3).median(keepdim=True), TypeError, "needs a dim"),
    (lambda m: m.sort(m.ones(3), 0, False, True), TypeError, None),
    (lambda m: m.ones(3).bool().topk(1), RuntimeError, "bool"),
    (lambda m: m.ones(3).bool().kthvalue(1), NotImplementedError, "Bool"),
    (lambda m: m.ones(3).bool().median(), NotImplementedError, "Bool"),
    (lambda m: m.sort([1.0, 2.0]), TypeError, "must be Tensor"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors_as_torch(torch, call, error, match):
    _raises_like_torch(torch, call, call, error, match)
