"""tril/triu, masked_select, repeat_interleave, meshgrid, scatter with reduce=, scatter_reduce and
view(dtype) against torch: values, dtypes, gradients and second derivatives (float32 and
float64), finite differences, and torch's error types."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool as tg

from helpers import check_grad

TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
DTYPES = [np.float32, np.float64]


def as_array(t) -> np.ndarray:
    return t.detach().numpy()


def compare(ours, theirs, dtype, what: str, shape) -> None:
    expected = np.zeros(shape) if theirs is None else as_array(theirs)
    got = np.zeros(shape) if ours is None else as_array(ours)
    tol = dict(TOL[dtype])
    tol["atol"] *= max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, **tol, err_msg=what)


def parity(torch, ours_fn, torch_fn, arrays, dtype=np.float64, second=True, seed=0):
    """Forward, gradient and (``second``) the derivatives of Σ direction · gradient with
    respect to the inputs and the output weights, ours against torch's."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = ours_fn(*ours), torch_fn(*theirs)
    assert yo.dtype == dtype and tuple(yo.shape) == tuple(yt.shape), (yo.dtype, yo.shape, yt.shape)
    compare(yo, yt, dtype, "forward", yo.shape)
    weights = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    wo, wt = tg.tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = tg.autograd.grad(yo, ours, wo, create_graph=True, allow_unused=True)
    gt = torch.autograd.grad(yt, theirs, wt, create_graph=True, allow_unused=True)
    for k, (a, b) in enumerate(zip(go, gt)):
        assert a is None or a.dtype == dtype
        compare(a, b, dtype, f"gradient of input {k}", arrays[k].shape)
    if not second:
        return
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    so = sum((g * tg.tensor(d)).sum() for g, d in zip(go, directions) if g is not None)
    st_ = sum((g * torch.tensor(d)).sum() for g, d in zip(gt, directions) if g is not None)
    ho = tg.autograd.grad(so, ours + [wo], allow_unused=True)
    ht = torch.autograd.grad(st_, theirs + [wt], allow_unused=True)
    for k, (a, b) in enumerate(zip(ho, ht)):
        compare(a, b, dtype, f"second derivative {k}", (arrays + [weights])[k].shape)


def same_error(torch, ours, theirs, error):
    """Both raise ``error`` (ours first, then torch's, so the test says which one differs)."""
    with pytest.raises(error):
        ours()
    with pytest.raises(error):
        theirs()


# ---- tril / triu ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("shape, diagonal", [((3, 4), 0), ((4, 3), -1), ((2, 3, 4), 2),
                                             ((2, 1, 3, 3), -5), ((3, 3), 7), ((0, 3), 0)])
def test_triangles_match_torch_to_second_order(torch, name, shape, diagonal, dtype):
    x = np.random.default_rng(1).standard_normal(shape)
    parity(torch, lambda t: getattr(t, name)(diagonal),
           lambda t: getattr(torch, name)(t, diagonal), [x], dtype)


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangles_keep_integer_and_bool_dtypes_and_default_diagonal(torch, name):
    for values in (np.arange(12).reshape(3, 4), np.ones((2, 3), dtype=bool)):
        ours = getattr(tg, name)(tg.tensor(values))
        theirs = getattr(torch, name)(torch.tensor(values))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangles_in_place_are_differentiated(torch, name):
    x = np.random.default_rng(2).standard_normal((3, 3))

    def ours_fn(t):
        y = t * 2
        getattr(y, name + "_")(1)
        return y

    def torch_fn(t):
        y = t * 2
        getattr(y, name + "_")(1)
        return y
    parity(torch, ours_fn, torch_fn, [x])


def test_triangle_gradient_by_finite_differences():
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    check_grad(lambda t: (t.tril(1) ** 2).sum() + t.triu(-1).sum(), x)


@pytest.mark.parametrize("name", ["tril", "triu", "tril_", "triu_"])
def test_triangle_errors_match_torch(torch, name):
    same_error(torch, lambda: getattr(tg.ones(3), name)(), lambda: getattr(torch.ones(3), name)(),
               RuntimeError)
    same_error(torch, lambda: getattr(tg.ones(3, 3), name)(1.5),
               lambda: getattr(torch.ones(3, 3), name)(1.5), TypeError)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4),
       diagonal=st.integers(-5, 5), upper=st.booleans())
def test_triangles_over_shapes_and_diagonals_match_torch(shape, diagonal, upper):
    torch = pytest.importorskip("torch")
    name = "triu" if upper else "tril"
    x = np.random.default_rng(0).standard_normal(shape)
    parity(torch, lambda t: getattr(t, name)(diagonal),
           lambda t: getattr(t, name)(diagonal), [x], second=False)


# ---- masked_select ----------------------------------------------------------------------------
MASKED = [((3, 4), (3, 4)), ((3,), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,)),
          ((2,), ()), ((0, 2), (2,))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x_shape, mask_shape", MASKED)
def test_masked_select_matches_torch_to_second_order(torch, x_shape, mask_shape, dtype):
    rng = np.random.default_rng(4)
    x, mask = rng.standard_normal(x_shape), rng.random(mask_shape) > 0.4
    parity(torch, lambda t: t.masked_select(tg.tensor(mask)),
           lambda t: torch.masked_select(t, torch.tensor(mask)), [x], dtype)


def test_masked_select_function_and_gradient_by_finite_differences():
    rng = np.random.default_rng(5)
    mask = tg.tensor(rng.random((2, 3)) > 0.5)
    check_grad(lambda t: (tg.masked_select(t, mask) ** 2).sum(), rng.standard_normal((3,)))
    out = tg.masked_select(tg.tensor(np.arange(6).reshape(2, 3)), tg.tensor([True, False, True]))
    assert out.dtype == np.int64 and out.tolist() == [0, 2, 3, 5]


def test_masked_select_errors_match_torch(torch):
    same_error(torch, lambda: tg.ones(3).masked_select(tg.tensor([1, 0, 1])),
               lambda: torch.ones(3).masked_select(torch.tensor([1, 0, 1])), RuntimeError)
    same_error(torch, lambda: tg.ones(3).masked_select(tg.tensor([1, 0, 1], dtype=tg.uint8)),
               lambda: torch.ones(3).masked_select(torch.tensor([1, 0, 1], dtype=torch.uint8)),
               RuntimeError)
    same_error(torch, lambda: tg.masked_select(tg.ones(3), [True, False, True]),
               lambda: torch.masked_select(torch.ones(3), [True, False, True]), TypeError)
    same_error(torch, lambda: tg.ones(3).masked_select(tg.ones(2, 2).bool()),
               lambda: torch.ones(3).masked_select(torch.ones(2, 2).bool()), RuntimeError)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3), seed=st.integers(0, 99),
       ones=st.lists(st.booleans(), min_size=3, max_size=3))
def test_masked_select_over_broadcast_shapes_matches_torch(shape, seed, ones):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    mask_shape = [1 if one else n for n, one in zip(shape, ones)]
    x, mask = rng.standard_normal(shape), rng.random(mask_shape) > 0.5
    parity(torch, lambda t: t.masked_select(tg.tensor(mask)),
           lambda t: t.masked_select(torch.tensor(mask)), [x], second=False)


# ---- repeat_interleave ------------------------------------------------------------------------
def repeats_of(module, repeats):
    return module.tensor(repeats, dtype=module.int64) if isinstance(repeats, list) else repeats


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, repeats, dim", [((3,), 2, None), ((2, 3), 2, None),
                                                 ((2, 3), [1, 0, 3], 1), ((2, 3), [2], -1),
                                                 ((2, 3), [3, 1], 0), ((), 3, None), ((), [2], None),
                                                 ((2, 0), 2, 1)])
def test_repeat_interleave_matches_torch_to_second_order(torch, shape, repeats, dim, dtype):
    x = np.random.default_rng(6).standard_normal(shape)
    parity(torch, lambda t: t.repeat_interleave(repeats_of(tg, repeats), dim),
           lambda t: t.repeat_interleave(repeats_of(torch, repeats), dim), [x], dtype)


def test_repeat_interleave_of_counts_gives_indices_in_their_dtype(torch):
    for counts, dtype in (([2, 0, 1], "int64"), ([1, 3], "int32"), ([], "int64")):
        ours = tg.repeat_interleave(tg.tensor(np.array(counts, dtype=dtype)))
        theirs = torch.repeat_interleave(torch.tensor(np.array(counts, dtype=dtype)))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        assert ours.tolist() == theirs.tolist()
    x = tg.tensor([[1, 2], [3, 4]])
    assert tg.repeat_interleave(x, 2, dim=1, output_size=4).tolist() == [[1, 1, 2, 2],
                                                                         [3, 3, 4, 4]]


def test_repeat_interleave_gradient_by_finite_differences():
    x = np.random.default_rng(7).standard_normal((2, 3))
    check_grad(lambda t: (t.repeat_interleave(tg.tensor([2, 0, 1]), dim=1) ** 2).sum(), x)


@pytest.mark.parametrize("call, error", [
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(m.tensor([1, 2, 3]), dim=1), RuntimeError),
    (lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor([1, 2])), RuntimeError),
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(m.tensor([1, -2]), dim=1), RuntimeError),
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(-1, dim=1), RuntimeError),
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(m.tensor([1., 2.]), dim=1),
     NotImplementedError),
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(m.tensor([[1, 2]]), dim=1), RuntimeError),
    (lambda m: m.tensor([[1, 2]]).repeat_interleave(2, dim=1, output_size=5), RuntimeError),
    (lambda m: m.tensor([1, 2]).repeat_interleave(2, dim=2), IndexError),
    (lambda m: m.tensor(1.).repeat_interleave(2, dim=0), IndexError),
    (lambda m: m.tensor([1, 2]).repeat_interleave(2.5), TypeError),
    (lambda m: m.repeat_interleave(m.tensor([[2, 1]])), RuntimeError),
    (lambda m: m.repeat_interleave(m.tensor([2., 1.])), NotImplementedError),
])
def test_repeat_interleave_errors_match_torch(torch, call, error):
    same_error(torch, lambda: call(tg), lambda: call(torch), error)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_repeat_interleave_over_shapes_and_repeats_matches_torch(shape, data):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    repeats = data.draw(st.one_of(st.integers(0, 3),
                                  st.lists(st.integers(0, 3), min_size=shape[dim],
                                           max_size=shape[dim])))
    x = np.random.default_rng(0).standard_normal(shape)
    parity(torch, lambda t: t.repeat_interleave(repeats_of(tg, repeats), dim),
           lambda t: t.repeat_interleave(repeats_of(torch, repeats), dim), [x], second=False)


# ---- meshgrid ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (3, 2), (2, 0, 4), (3, None)])
def test_meshgrid_matches_torch_to_second_order(torch, sizes, indexing, dtype):
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(() if n is None else (n,)) for n in sizes]

    def combine(module):
        def fn(*tensors):
            grids = module.meshgrid(*tensors, indexing=indexing)
            return sum(g * (k + 1) for k, g in enumerate(grids))
        return fn
    parity(torch, combine(tg), combine(torch), arrays, dtype)


def test_meshgrid_takes_a_list_or_tuple_and_warns_without_indexing(torch):
    a, b = tg.arange(3), tg.arange(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grids = tg.meshgrid([a, b], indexing="xy")
        assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]
        assert tg.meshgrid((a, b), indexing="ij")[0].tolist() == [[0, 0], [1, 1], [2, 2]]
    with pytest.warns(UserWarning, match="indexing"):
        ours = tg.meshgrid(a, b)
    with pytest.warns(UserWarning, match="indexing"):
        theirs = torch.meshgrid(torch.arange(3), torch.arange(2))
    for o, t in zip(ours, theirs):
        assert o.tolist() == t.tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.meshgrid(m.arange(3.), m.arange(2.), indexing="foo"),
    lambda m: m.meshgrid(m.arange(3.), m.ones(2, 2), indexing="ij"),
    lambda m: m.meshgrid(m.arange(3.), m.arange(2), indexing="ij"),
    lambda m: m.meshgrid(indexing="ij"),
    lambda m: m.meshgrid([], indexing="ij"),
])
def test_meshgrid_errors_match_torch(torch, call):
    same_error(torch, lambda: call(tg), lambda: call(torch), RuntimeError)


# ---- scatter(..., reduce=) --------------------------------------------------------------------
INDEX = np.array([[0, 1, 2, 0], [2, 1, 2, 0]])


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("inplace", [False, True])
def test_scatter_with_reduce_matches_torch_and_warns_for_a_tensor_src(torch, reduce, inplace):
    base = np.arange(1., 13.).reshape(3, 4)
    src = np.arange(2., 10.).reshape(2, 4)
    name = "scatter_" if inplace else "scatter"
    with pytest.warns(UserWarning, match="deprecated"):
        ours = getattr(tg.tensor(base), name)(0, tg.tensor(INDEX), tg.tensor(src), reduce=reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns once per process)
        theirs = getattr(torch.tensor(base), name)(0, torch.tensor(INDEX), torch.tensor(src),
                                                   reduce=reduce)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a number as value: no warning, in torch either
        ours = getattr(tg.tensor(base), name)(0, tg.tensor(INDEX), value=3.0, reduce=reduce)
        theirs = getattr(torch.tensor(base), name)(0, torch.tensor(INDEX), value=3.0,
                                                   reduce=reduce)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tg.scatter(tg.tensor(base), 0, tg.tensor(INDEX), 3.0, reduce=reduce).tolist() == \
        torch.scatter(torch.tensor(base), 0, torch.tensor(INDEX), 3.0, reduce=reduce).tolist()


def test_scatter_with_reduce_has_no_derivative_as_in_torch(torch):
    for module in (tg, torch):
        x = module.zeros(3, 4, requires_grad=True)
        out = x.scatter(0, module.tensor(INDEX), 2.0, reduce="add")
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            out.sum().backward()


def test_scatter_with_an_unknown_reduce_is_refused_as_in_torch(torch):
    for reduce in ("sum", "mean"):
        same_error(torch, lambda: tg.zeros(3, 4).scatter(0, tg.tensor(INDEX), 2.0, reduce=reduce),
                   lambda: torch.zeros(3, 4).scatter(0, torch.tensor(INDEX), 2.0, reduce=reduce),
                   RuntimeError)


# ---- scatter_reduce ---------------------------------------------------------------------------
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def scatter_reduce_parity(torch, x, src, index, dim, reduce, include_self, dtype, second=True):
    parity(torch, lambda a, b: a.scatter_reduce(dim, tg.tensor(index), b, reduce,
                                                include_self=include_self),
           lambda a, b: a.scatter_reduce(dim, torch.tensor(index), b, reduce,
                                         include_self=include_self),
           [x, src], dtype, second=second)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_matches_torch_to_second_order(torch, reduce, include_self, dtype):
    rng = np.random.default_rng(9)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    scatter_reduce_parity(torch, x, src, INDEX, 0, reduce, include_self, dtype)
    index = np.array([[0, 0, 3], [1, 1, 1], [2, 3, 2]])
    scatter_reduce_parity(torch, x, rng.standard_normal((3, 3)), index, -1, reduce,
                          include_self, dtype)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_shares_the_gradient_among_ties_as_torch(torch, reduce, include_self):
    x = np.array([1., 5., 2., 2.])
    src = np.array([5., 5., 2., 1., 2., 2.])
    index = np.array([1, 1, 0, 2, 3, 3])
    scatter_reduce_parity(torch, x, src, index, 0, reduce, include_self, np.float64)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_with_zeros_matches_torch(torch, include_self):
    # one zero at place 0 (its gradient: the product of the others), x's own zero at place 2
    x = np.array([2., 3., 0.])
    src = np.array([0., 4., 5., 6., 7.])
    index = np.array([0, 0, 1, 2, 2])
    scatter_reduce_parity(torch, x, src, index, 0, "prod", include_self, np.float64)


def test_scatter_reduce_prod_refuses_double_backward_with_two_zeros_as_torch(torch):
    for module in (tg, torch):
        x = module.tensor([2., 3.], requires_grad=True)
        src = module.tensor([0., 4., 0., 0.], requires_grad=True)
        out = x.scatter_reduce(0, module.tensor([0, 0, 1, 1]), src, "prod")
        grad_x, grad_src = module.autograd.grad(out, (x, src), module.ones(2), create_graph=True)
        assert grad_src.tolist() == [8., 0., 0., 0.] and grad_x.tolist() == [0., 0.]
        with pytest.raises(RuntimeError, match="Double backward is unsupported"):
            module.autograd.grad(grad_src.sum(), (x, src))


def test_scatter_reduce_gradients_by_finite_differences():
    rng = np.random.default_rng(10)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    for reduce in REDUCTIONS:
        for include_self in (True, False):
            check_grad(lambda a, b: (a.scatter_reduce(0, tg.tensor(INDEX), b, reduce,
                                                      include_self=include_self) ** 2).sum(),
                       x, src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_of_integers_matches_torch(torch, reduce, include_self):
    x = np.array([[1, 2, 3], [4, 5, 6]])
    src = np.array([[2, 3, -3], [7, -1, 4]])
    index = np.array([[0, 0, 1], [2, 2, 2]])
    ours = tg.tensor(x).scatter_reduce(1, tg.tensor(index), tg.tensor(src), reduce,
                                       include_self=include_self)
    theirs = torch.tensor(x).scatter_reduce(1, torch.tensor(index), torch.tensor(src), reduce,
                                            include_self=include_self)
    assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_in_place_matches_torch(torch, reduce):
    rng = np.random.default_rng(11)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))

    def run(module):
        def fn(a, b):
            y = a * 1
            out = y.scatter_reduce_(0, module.tensor(INDEX), b, reduce, include_self=False)
            assert out is y
            return y
        return fn
    parity(torch, run(tg), run(torch), [x, src])
    # and on a 0-d input
    ours = tg.tensor(2.).scatter_reduce(0, tg.tensor([0, 0]), tg.tensor([3., 4.]), reduce)
    theirs = torch.tensor(2.).scatter_reduce(0, torch.tensor([0, 0]), torch.tensor([3., 4.]), reduce)
    assert ours.shape == () and ours.item() == pytest.approx(theirs.item())


def test_scatter_reduce_takes_torch_s_older_names_and_the_function(torch):
    x, src = np.arange(6.).reshape(2, 3), np.array([[9., -1., 4.]])
    index = np.array([[1, 0, 1]])
    for reduce in ("max", "min"):
        ours = tg.scatter_reduce(tg.tensor(x), 0, tg.tensor(index), tg.tensor(src), reduce)
        theirs = torch.scatter_reduce(torch.tensor(x), 0, torch.tensor(index),
                                      torch.tensor(src), reduce)
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("call, error", [
    (lambda m: m.ones(2, 3).scatter_reduce(1, m.tensor([[0, 1]]), m.ones(2, 3), "add"),
     RuntimeError),
    (lambda m: m.ones(2, 3).scatter_reduce(1, m.tensor([[0, 1]]), m.ones(2, 3), "sum",
                                           include_self=1), TypeError),
    (lambda m: m.ones(2, 3).scatter_reduce(1, m.tensor([[0, 1]]), 2.0, "sum"), TypeError),
    (lambda m: m.ones(2, 3).scatter_reduce(1, m.tensor([[0, 1]]), m.ones(2, 3).double(), "sum"),
     RuntimeError),
    (lambda m: m.ones(2, 3).scatter_reduce(1, m.tensor([[0, 3]]), m.ones(2, 3), "sum"),
     RuntimeError),
    (lambda m: m.ones(2, 3).scatter_reduce(2, m.tensor([[0, 1]]), m.ones(2, 3), "sum"),
     IndexError),
    (lambda m: m.ones(2, 3).scatter_reduce_(1, m.tensor([[0, 1]]), m.ones(2, 3), "foo"),
     RuntimeError),
])
def test_scatter_reduce_errors_match_torch(torch, call, error):
    same_error(torch, lambda: call(tg), lambda: call(torch), error)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 999),
       reduce=st.sampled_from(REDUCTIONS), include_self=st.booleans(), dim=st.sampled_from([0, 1]))
def test_scatter_reduce_over_random_indices_and_ties_matches_torch(rows, cols, seed, reduce,
                                                                    include_self, dim):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    # small integers as values: ties for amax/amin and zeros for prod come up often
    x = rng.integers(-2, 3, (rows, cols)).astype(np.float64)
    index_shape = (rng.integers(1, rows + 1), cols) if dim == 0 else (rows, rng.integers(1, cols + 1))
    index = rng.integers(0, (rows, cols)[dim], index_shape)
    src = rng.integers(-2, 3, index_shape).astype(np.float64)
    second = not (reduce == "prod" and (src == 0).sum() > 1)  # (torch refuses some of those)
    scatter_reduce_parity(torch, x, src, index, dim, reduce, include_self, np.float64, second)


# ---- view(dtype) ------------------------------------------------------------------------------
@pytest.mark.parametrize("values, dtype", [
    (np.arange(6, dtype=np.float32).reshape(2, 3), "int32"),
    (np.arange(6, dtype=np.float32).reshape(2, 3), "int16"),
    (np.arange(8, dtype=np.float32).reshape(2, 4), "float64"),
    (np.arange(8, dtype=np.float32).reshape(4, 2).T, "int32"),
    (np.arange(4, dtype=np.int64), "float64"),
    (np.array([True, False]), "uint8"),
    (np.array([1, 0], dtype=np.uint8), "bool"),
    (np.float32(1.0).reshape(()), "int32"),
])
def test_view_dtype_reads_the_same_bytes_as_torch(torch, values, dtype):
    ours = tg.tensor(values).view(getattr(tg, dtype))
    theirs = torch.tensor(values).view(getattr(torch, dtype))
    assert str(ours.dtype) == dtype and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tg.tensor(values).view(dtype=getattr(tg, dtype)).dtype == ours.dtype


def test_view_takes_python_types_as_dtypes_as_torch(torch):
    for kind in (float, int, bool):
        ours, theirs = tg.ones(2, 2).view(kind), torch.ones(2, 2).view(kind)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        assert tuple(ours.shape) == tuple(theirs.shape)


def test_view_dtype_of_an_empty_tensor_changes_the_last_dim(torch):
    assert tuple(tg.ones(0, 4).view(tg.float64).shape) == \
        tuple(torch.ones(0, 4).view(torch.float64).shape) == (0, 2)


def test_view_dtype_shares_memory_and_is_outside_the_graph(torch):
    x = tg.arange(6.).reshape(2, 3)
    bits = x.view(tg.int32)
    bits[0, 0] = 5
    assert x[0, 0].item() == np.int32(5).view(np.float32) and x._version == 1
    for module in (tg, torch):
        leaf = module.ones(2, 3, requires_grad=True)
        for dtype in (module.float32, module.int32, module.float16):
            out = leaf.view(dtype)
            assert not out.requires_grad and out.grad_fn is None and out.is_leaf


@pytest.mark.parametrize("call, error", [
    (lambda m: m.arange(6.).reshape(2, 3).view(m.float64), RuntimeError),
    (lambda m: m.arange(8.).reshape(4, 2).t().view(m.float64), RuntimeError),
    (lambda m: m.arange(8.).reshape(4, 2).t().view(m.int16), RuntimeError),
    (lambda m: m.arange(8.)[::2].view(m.int16), RuntimeError),
    (lambda m: m.tensor(1.).view(m.int16), RuntimeError),
])
def test_view_dtype_errors_match_torch(torch, call, error):
    same_error(torch, lambda: call(tg), lambda: call(torch), error)
