"""index_add, index_copy, index_fill, masked_scatter (and their in-place forms), addcmul and
addcdiv against torch: values and dtypes, gradients and second derivatives in float32 and
float64, finite differences, torch's error types, and version bumps of the in-place forms."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
IDX = np.array([2, 0, 2])  # a repeated index: index_add adds both slices there

# name -> (fn(lib, *float tensors), float input arrays (seeded), constants made per library)
CASES = {
    "index_add": (lambda lib, x, s: x.index_add(1, lib.tensor(IDX), s, alpha=1.5),
                  [(3, 4, 2), (3, 3, 2)]),
    "index_add_dim0": (lambda lib, x, s: lib.index_add(x, 0, lib.tensor(IDX), s),
                       [(4, 3), (3, 3)]),
    "index_copy": (lambda lib, x, s: x.index_copy(-1, lib.tensor(np.array([3, 0])), s),
                   [(2, 4), (2, 2)]),
    "index_fill": (lambda lib, x, v: x.index_fill(0, lib.tensor(np.array([0, 2])), v.sum()),
                   [(3, 2), (2,)]),
    "masked_scatter": (lambda lib, x, s: x.masked_scatter(
        lib.tensor(np.array([[True, False, True], [False, False, True]])), s),
        [(2, 3), (5,)]),
    "masked_scatter_broadcast": (lambda lib, x, s: x.masked_scatter(
        lib.tensor(np.array([[True], [False], [True]])), s), [(4,), (3, 5)]),
    "addcmul": (lambda lib, x, a, b: lib.addcmul(x, a, b, value=-0.5), [(2, 3), (3,), (2, 1)]),
    "addcdiv": (lambda lib, x, a, b: x.addcdiv(a, b + 3.0, value=2), [(2, 3), (2, 3), (3,)]),
    "addcmul_": (lambda lib, x, a, b: (x * 1).addcmul_(a, b), [(2, 3), (2, 3), (2, 3)]),
    "addcdiv_": (lambda lib, x, a, b: (x * 1).addcdiv_(a, b * b + 1, value=0.5),
                 [(2, 3), (2, 3), (3,)]),
    "index_add_": (lambda lib, x, s: (x * 1).index_add_(0, lib.tensor(np.array([1])), s,
                                                         alpha=2), [(2, 2), (1, 2)]),
    "index_copy_": (lambda lib, x, s: (x * 1).index_copy_(1, lib.tensor(np.array([1, 0])), s),
                    [(2, 2), (2, 2)]),
    "index_fill_": (lambda lib, x, v: (x * 1).index_fill_(1, lib.tensor(np.array([1])),
                                                          v.sum()), [(2, 3), (1,)]),
    "masked_scatter_": (lambda lib, x, s: (x * 1).masked_scatter_(
        lib.tensor(np.array([True, False, True])), s), [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_of_two_orders_match_torch(torch, name, dtype):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = fn(tinygrad_pool, *ours), fn(torch, *theirs)
    assert yo.dtype == dtype and tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), **TOL[dtype])
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    wo, wt = tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    go = autograd.grad(yo, ours, grad_outputs=[wo], create_graph=True)
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[wt], create_graph=True)
    for a, b in zip(go, gt):
        assert a.dtype == dtype
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL[dtype])
    # second order: Σ direction · gradient, differentiated through the recorded backward
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    sum(((g * tensor(d)).sum() for g, d in zip(go, directions) if g.requires_grad),
        tensor(np.zeros((), dtype))).backward()
    torch_terms = [(g * torch.tensor(d)).sum() for g, d in zip(gt, directions) if g.requires_grad]
    if torch_terms:
        sum(torch_terms).backward()
    for a, b in zip(ours + [wo], theirs + [wt]):
        expected = np.zeros(a.shape) if b.grad is None else b.grad.numpy()
        got = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        np.testing.assert_allclose(got, expected, **TOL[dtype])


@pytest.mark.parametrize("name", sorted(CASES))
def test_finite_differences(name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(1)
    check_grad(lambda *t: fn(tinygrad_pool, *t), *[rng.standard_normal(s) for s in shapes])


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_index_add_and_copy_random_shapes(torch, shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(0, 5))
    index = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), min_size=n,
                                        max_size=n)), dtype=np.int64)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(shape)
    source_shape = list(shape)
    source_shape[dim] = n
    s = rng.standard_normal(source_shape)
    for op in ("index_add", "index_copy"):
        if op == "index_copy":
            index = np.unique(index)  # (torch leaves repeated index_copy places unspecified)
            source_shape[dim] = len(index)
            s = s.take(range(len(index)), axis=dim)
        ours = getattr(tensor(x), op)(dim, tensor(index), tensor(s))
        theirs = getattr(torch.tensor(x), op)(dim, torch.tensor(index), torch.tensor(s))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), data=st.data())
def test_masked_scatter_and_index_fill_random(torch, shape, data):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)),
                    dtype=bool).reshape(shape)
    s = rng.standard_normal(x.size + 1)
    ours = tensor(x).masked_scatter(tensor(mask), tensor(s))
    theirs = torch.tensor(x).masked_scatter(torch.tensor(mask), torch.tensor(s))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if shape:
        dim = data.draw(st.integers(0, len(shape) - 1))
        index = np.array([0, shape[dim] - 1, -1])
        ours = tensor(x).index_fill(dim, tensor(index), 7.5)
        theirs = torch.tensor(x).index_fill(dim, torch.tensor(index), 7.5)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_integer_and_scalar_inputs_match_torch(torch):
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(np.arange(6).reshape(2, 3))
        results = [x.index_add(0, lib.tensor(np.array([1])), lib.tensor(np.full((1, 3), 3)),
                               alpha=2.5),
                   x.index_fill(1, lib.tensor(np.array([0])), 1.7),
                   x.index_copy(0, lib.tensor(np.array([0])), lib.tensor(np.zeros((1, 3), np.int64))),
                   lib.addcmul(x, x, x, value=2),
                   lib.addcmul(x, x, x, value=0.5),  # (truncated to 0 for integers)
                   lib.addcdiv(x, x, lib.tensor(np.full(3, 2.0, np.float32))),
                   lib.zeros(()).index_add(0, lib.tensor(np.array([0])), lib.ones(())),
                   lib.zeros(()).index_copy(0, lib.tensor(np.array(0)), lib.ones(()))]
        if lib is tinygrad_pool:
            ours = results
        else:
            theirs = results
    for a, b in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy())


ERRORS = [
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0, 5])), lib.ones(2, 4)),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0, -1])), lib.ones(2, 4)),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0.0, 1.0])), lib.ones(2, 4)),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0, 1])), lib.ones(2, 4).double()),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0, 1])), lib.ones(3, 4)),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([[0, 1]])), lib.ones(2, 4)),
    lambda lib, x: x.index_add(0, lib.tensor(np.array([0, 1])), lib.ones(2, 3)),
    lambda lib, x: x.index_add(2, lib.tensor(np.array([0, 1])), lib.ones(2, 4)),
    lambda lib, x: x.index_copy(0, lib.tensor(np.array([0, 5])), lib.ones(2, 4)),
    lambda lib, x: x.index_copy(0, lib.tensor(np.array([0, 1], np.int32)), lib.ones(2, 4)),
    lambda lib, x: x.index_copy(0, lib.tensor(np.array([0, 1])), lib.ones(3, 4)),
    lambda lib, x: x.index_copy(0, lib.tensor(np.array([0, 1])), lib.ones(2, 4).double()),
    lambda lib, x: x.index_fill(0, lib.tensor(np.array([0, 5])), 1.0),
    lambda lib, x: x.index_fill(0, lib.tensor(np.array([0, 1], np.int32)), 1.0),
    lambda lib, x: x.index_fill(0, lib.tensor(np.array([0, 1])), lib.ones(2)),
    lambda lib, x: x.masked_scatter(lib.ones(3, 4), lib.ones(12)),
    lambda lib, x: x.masked_scatter(lib.ones(3, 4) > 0, lib.ones(12).double()),
    lambda lib, x: x.masked_scatter(lib.ones(3, 4) > 0, lib.ones(11)),
    lambda lib, x: x.masked_scatter(lib.ones(2, 4) > 0, lib.ones(12)),
    lambda lib, x: x.masked_scatter_(lib.ones(2, 3, 4) > 0, lib.ones(24)),
    lambda lib, x: lib.addcdiv(x, lib.ones(3, 4).long(), lib.ones(3, 4).long()),
    lambda lib, x: lib.addcmul(x, lib.ones(3, 4), lib.ones(2, 4)),
    lambda lib, x: lib.addcmul(x, lib.ones(3, 4), 2.0),
    lambda lib, x: lib.addcmul(x, x, x, value="a"),
    lambda lib, x: lib.addcmul(x > 0, x > 0, x > 0),
    lambda lib, x: lib.addcdiv(x, x.long(), x > 0),
    lambda lib, x: x.long().addcmul_(x, x.long()),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_have_torch_types(torch, case):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch, torch.zeros(3, 4))
    with pytest.raises(theirs.type):
        ERRORS[case](tinygrad_pool, tinygrad_pool.zeros(3, 4))


@pytest.mark.parametrize("op, args", [
    ("index_add_", lambda lib: (0, lib.tensor(np.array([1])), lib.ones(1, 3))),
    ("index_copy_", lambda lib: (0, lib.tensor(np.array([1])), lib.ones(1, 3))),
    ("index_fill_", lambda lib: (1, lib.tensor(np.array([2])), -1.0)),
    ("masked_scatter_", lambda lib: (lib.tensor(np.array([True, False, True])), lib.ones(6))),
    ("addcmul_", lambda lib: (lib.ones(3), lib.ones(3))),
    ("addcdiv_", lambda lib: (lib.ones(3), lib.ones(3))),
])
def test_inplace_forms_write_bump_and_backprop(torch, op, args):
    results = []
    for lib in (tinygrad_pool, torch):
        leaf = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
        x = leaf * 1
        before = x._version
        out = getattr(x, op)(*args(lib))
        assert out is x and x._version > before
        x.pow(2).sum().backward()
        results.append((x.detach().numpy(), leaf.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b)


def test_no_grad_results_and_saved_index_is_guarded(torch):
    with tinygrad_pool.no_grad():
        y = tinygrad_pool.ones(2, 2, requires_grad=True).index_add(
            0, tensor(np.array([0])), tinygrad_pool.ones(1, 2))
    assert y.grad_fn is None
    x = tinygrad_pool.ones(3, requires_grad=True)
    index = tensor(np.array([0, 1]))
    y = x.index_copy(0, index, tinygrad_pool.zeros(2))
    index.add_(1)  # saved for backward: writing into it is caught, as torch
    with pytest.raises(RuntimeError):
        y.sum().backward()


# ---- mode, quantile, nanquantile ------------------------------------------------------------
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 5), min_size=0, max_size=3), data=st.data())
def test_mode_matches_torch_values_and_indices(torch, shape, data):
    x = np.random.default_rng(len(shape)).integers(0, 3, shape).astype(np.float32)
    dim = data.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    keepdim = data.draw(st.booleans())
    ours, theirs = tensor(x).mode(dim, keepdim), torch.tensor(x).mode(dim, keepdim)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    assert ours.indices.dtype == np.int64 and ours.indices.grad_fn is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mode_gradient_goes_to_the_picked_element(torch, dtype):
    x = np.array([[1, 2, 2], [3, 3, 1], [1, 2, 1]], dtype)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w = np.array([0.5, -2.0, 3.0], dtype)
    tinygrad_pool.mode(ours, 0).values.backward(tensor(w))
    torch.mode(theirs, 0).values.backward(torch.tensor(w))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    for lib, t in ((tinygrad_pool, tinygrad_pool.zeros(0, 3)), (torch, torch.zeros(0, 3))):
        with pytest.raises(IndexError):
            lib.mode(t, 0)
    assert tinygrad_pool.mode(tinygrad_pool.zeros(0, 3), 1).values.shape == (0,)


QUANTILE_CASES = [(0.3, None, False, "linear"), (0.75, 1, True, "linear"),
                  ("vector", -1, False, "linear"), ("vector", 0, True, "midpoint"),
                  (0.4, 1, False, "lower"), (0.4, 1, False, "higher"),
                  (0.5, None, True, "nearest")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(QUANTILE_CASES)))
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_and_its_gradients_match_torch(torch, op, case, dtype):
    q, dim, keepdim, how = QUANTILE_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((3, 5)).astype(dtype)
    qs = np.array([0.0, 0.3, 1.0], dtype)

    def fn(lib, t, dtype=dtype):
        qq = lib.tensor(qs.astype(dtype)) if q == "vector" else q
        return getattr(t, op)(qq, dim, keepdim, interpolation=how) * t.sum()  # (non-linear)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = fn(tinygrad_pool, ours), fn(torch, theirs)
    assert yo.dtype == dtype and tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), **TOL[dtype])
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (go,) = autograd.grad(yo, [ours], grad_outputs=[tensor(w)], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [theirs], grad_outputs=[torch.tensor(w)],
                                create_graph=True)
    np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), **TOL[dtype])
    d = rng.standard_normal(x.shape).astype(dtype)
    (go * tensor(d)).sum().backward()
    (gt * torch.tensor(d)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **TOL[dtype])
    check_grad(lambda t: fn(tinygrad_pool, t, np.float64), x.astype(np.float64))


def test_quantile_nans_and_errors(torch):
    x = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan] * 4, [2.0, 1.0, 0.0, 4.0]])
    for op in ("quantile", "nanquantile"):
        for dim in (None, 1):
            np.testing.assert_allclose(getattr(tensor(x), op)(0.4, dim).numpy(),
                                       getattr(torch.tensor(x), op)(0.4, dim).numpy())
    bad = [lambda lib: lib.quantile(lib.tensor(np.arange(3)), 0.5),
           lambda lib: lib.quantile(lib.ones(3), 1.5),
           lambda lib: lib.quantile(lib.ones(3), lib.tensor(np.array([0.5]))),
           lambda lib: lib.quantile(lib.ones(3), lib.ones(2, 2) / 2),
           lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="cubic"),
           lambda lib: lib.quantile(lib.ones(0), 0.5),
           lambda lib: lib.quantile(lib.ones(3), 0.5, dim=1)]
    for case in bad:
        with pytest.raises(Exception) as theirs:
            case(torch)
        with pytest.raises(theirs.type):
            case(tinygrad_pool)


# ---- unique, unique_consecutive, bincount, histc ------------------------------------------
def _same(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype.name == str(b.dtype).split(".")[-1] and tuple(a.shape) == tuple(b.shape)
        assert a.grad_fn is None
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3), data=st.data())
def test_unique_and_unique_consecutive_match_torch(torch, shape, data):
    x = np.random.default_rng(len(shape)).integers(0, 3, shape)
    if data.draw(st.booleans()):
        x = x.astype(np.float32)
    dim = None
    if shape and data.draw(st.booleans()):
        dim = data.draw(st.integers(-len(shape), len(shape) - 1))
        if x.shape[dim] == 0 or x.size == 0:
            dim = None
    flags = dict(return_inverse=data.draw(st.booleans()), return_counts=data.draw(st.booleans()),
                 dim=dim)
    _same(tensor(x).unique(**flags), torch.tensor(x).unique(**flags))
    _same(tinygrad_pool.unique_consecutive(tensor(x), **flags),
          torch.unique_consecutive(torch.tensor(x), **flags))


def test_unique_of_a_graph_tensor_and_nans(torch):
    x = np.array([1.0, np.nan, np.nan, 1.0, -2.0])
    _same(tinygrad_pool.unique(tensor(x, requires_grad=True), return_counts=True),
          tuple(t.detach() for t in torch.unique(torch.tensor(x), return_counts=True)))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.integers(0, 6), max_size=8), minlength=st.integers(0, 9),
       weights=st.sampled_from([None, np.float32, np.float64, np.int64]))
def test_bincount_matches_torch(torch, values, minlength, weights):
    x = np.array(values, dtype=np.int64)
    w = None if weights is None else (np.arange(len(x)) * 1.5).astype(weights)
    ours = tensor(x).bincount(None if w is None else tensor(w), minlength)
    theirs = torch.tensor(x).bincount(None if w is None else torch.tensor(w), minlength)
    _same(ours, theirs)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.integers(-8, 8), max_size=10), bins=st.integers(1, 7),
       bounds=st.sampled_from([(0, 0), (-3, 5), (0, 1), (2, 2), (-1.5, 7.25)]),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_histc_matches_torch(torch, values, bins, bounds, dtype):
    x = (np.array(values) / 2).astype(dtype)
    _same(tinygrad_pool.histc(tensor(x), bins, *bounds), torch.histc(torch.tensor(x), bins, *bounds))


COUNT_ERRORS = [
    lambda lib: lib.bincount(lib.tensor(np.array([-1, 2]))),
    lambda lib: lib.bincount(lib.tensor(np.array([1.0, 2.0]))),
    lambda lib: lib.bincount(lib.tensor(np.array([[1, 2]]))),
    lambda lib: lib.bincount(lib.tensor(np.array([1, 2])), lib.ones(3)),
    lambda lib: lib.bincount(lib.tensor(np.array([1, 2])), minlength=-1),
    lambda lib: lib.bincount(lib.tensor(np.array([True, False]))),
    lambda lib: lib.histc(lib.tensor(np.array([1, 2])), bins=4),
    lambda lib: lib.histc(lib.ones(3), bins=0),
    lambda lib: lib.histc(lib.ones(3), bins=3, min=3, max=1),
    lambda lib: lib.histc(lib.tensor(np.array([1.0, np.nan])), bins=4),
    lambda lib: lib.histc(lib.tensor(np.array([1.0, np.inf])), bins=4),
    lambda lib: lib.unique(lib.ones(2, 2), dim=2),
]


@pytest.mark.parametrize("case", range(len(COUNT_ERRORS)))
def test_counting_errors_have_torch_types(torch, case):
    with pytest.raises(Exception) as theirs:
        COUNT_ERRORS[case](torch)
    with pytest.raises(theirs.type):
        COUNT_ERRORS[case](tinygrad_pool)


# ---- bernoulli ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bernoulli_frequencies_follow_the_probabilities(dtype):
    tinygrad_pool.manual_seed(0)
    p = np.array([0.0, 0.1, 0.5, 0.9, 1.0], dtype)
    draws = tinygrad_pool.bernoulli(tensor(np.tile(p, (20000, 1))))
    assert draws.dtype == dtype and draws.grad_fn is None
    assert set(np.unique(draws.numpy())) <= {0.0, 1.0}
    # 20000 draws: the standard error of a frequency is at most 0.0036; 5 of them is 0.018
    np.testing.assert_allclose(draws.numpy().mean(axis=0), p, atol=0.018)
    assert draws.numpy()[:, 0].sum() == 0 and draws.numpy()[:, -1].all()
    constant = tinygrad_pool.ones(20000, dtype=tinygrad_pool.float64).bernoulli(0.25)
    assert abs(constant.numpy().mean() - 0.25) < 0.02


def test_bernoulli_is_repeatable_and_takes_a_generator():
    tinygrad_pool.manual_seed(3)
    first = tinygrad_pool.full((100,), 0.5).bernoulli()
    tinygrad_pool.manual_seed(3)
    np.testing.assert_array_equal(first.numpy(), tinygrad_pool.full((100,), 0.5).bernoulli().numpy())
    draws = [tinygrad_pool.full((100,), 0.5).bernoulli(generator=tinygrad_pool.Generator().manual_seed(7))
             for _ in range(2)]
    np.testing.assert_array_equal(draws[0].numpy(), draws[1].numpy())
    assert tinygrad_pool.ones(3, requires_grad=True).bernoulli().grad_fn is None


def test_bernoulli_in_place(torch):
    tinygrad_pool.manual_seed(1)
    x = tinygrad_pool.zeros(4000, dtype=tinygrad_pool.int64)
    version = x._version
    assert x.bernoulli_(0.3) is x and x._version > version and x.dtype == np.int64
    assert abs(x.numpy().mean() - 0.3) < 0.03
    p = tensor(np.array([0.0, 1.0, 0.0, 1.0]))
    y = tinygrad_pool.full((2, 4), 5.0).bernoulli_(p)
    np.testing.assert_array_equal(y.numpy(), np.tile([0.0, 1.0, 0.0, 1.0], (2, 1)))


BERNOULLI_ERRORS = [
    lambda lib: lib.bernoulli(lib.tensor(np.array([0, 1]))),
    lambda lib: lib.bernoulli(lib.tensor(np.array([0.0, 1.5]))),
    lambda lib: lib.bernoulli(lib.tensor(np.array([0.0, np.nan]))),
    lambda lib: lib.bernoulli(lib.ones(2), 1.5),
    lambda lib: lib.bernoulli(lib.ones(2), "a"),
    lambda lib: lib.ones(3).bernoulli_(lib.ones(2)),
    lambda lib: lib.ones(3).bernoulli_(lib.ones(1, 3)),
    lambda lib: lib.ones(3).bernoulli_(lib.tensor(np.array([1, 0, 1]))),
    lambda lib: lib.ones(3).bernoulli_(lib.tensor(np.array([0.0, 2.0, 1.0]))),
    lambda lib: lib.ones(3).bernoulli_(-0.5),
]


@pytest.mark.parametrize("case", range(len(BERNOULLI_ERRORS)))
def test_bernoulli_errors_have_torch_types(torch, case):
    with pytest.raises(Exception) as theirs:
        BERNOULLI_ERRORS[case](torch)
    with pytest.raises(theirs.type):
        BERNOULLI_ERRORS[case](tinygrad_pool)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), data=st.data())
def test_quantile_values_for_random_shapes(torch, shape, data):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    dim = data.draw(st.one_of(st.none(), st.integers(-max(len(shape), 1),
                                                       max(len(shape), 1) - 1)))
    q = data.draw(st.floats(0, 1))
    how = data.draw(st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]))
    keepdim = data.draw(st.booleans())
    ours = tinygrad_pool.quantile(tensor(x), q, dim, keepdim, interpolation=how)
    theirs = torch.quantile(torch.tensor(x), q, dim, keepdim, interpolation=how)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


SCALAR_CASES = [
    lambda lib: lib.zeros(3).index_add(0, lib.tensor(np.array([1])), lib.tensor(np.float32(2))),
    lambda lib: lib.zeros(3, 4).index_add(0, lib.tensor(np.array([1])), lib.tensor(np.float32(2))),
    lambda lib: lib.zeros(()).index_add(0, lib.tensor(np.array([0])), lib.ones(1)),
    lambda lib: lib.zeros(()).index_add(0, lib.tensor(np.array([0])), lib.ones(())),
    lambda lib: lib.zeros(3).index_copy(0, lib.tensor(np.array([1])), lib.tensor(np.float32(2))),
    lambda lib: lib.zeros(3, 4).index_copy(0, lib.tensor(np.array([1])), lib.tensor(np.float32(2))),
    lambda lib: lib.zeros(()).index_copy(0, lib.tensor(np.array([0])), lib.ones(1)),
]


@pytest.mark.parametrize("case", range(len(SCALAR_CASES)))
def test_zero_dimensional_operands_as_torch(torch, case):
    try:
        expected = SCALAR_CASES[case](torch)
    except Exception as error:
        with pytest.raises(type(error)):
            SCALAR_CASES[case](tinygrad_pool)
        return
    got = SCALAR_CASES[case](tinygrad_pool)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
