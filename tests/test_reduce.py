"""Reductions: sum, mean, amax over axes (int, tuple, None), keepdims, and PyTorch's dim/keepdim
(``max`` with a dim returns (values, indices), as torch: its own tests are further down)."""
import numpy as np
import pytest

from tinygrad_pool import Tensor, tensor

from helpers import check_grad, leaf, torch_parity

AXES = [None, 0, 1, -1, (0, 2), (2, 0), (0, 1, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_gradcheck(rng, op, axis, keepdims):
    # random floats: no ties, so amax is differentiable everywhere
    check_grad(lambda x: getattr(x, op)(dim=axis, keepdim=keepdims), rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "amax"])
def test_reduce_of_1d_and_0d(rng, op):
    check_grad(lambda x: getattr(x, op)(), rng.standard_normal(5))
    check_grad(lambda x: getattr(x, op)(), rng.standard_normal(()))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_forward_matches_numpy(rng, op, axis, keepdims):
    x = rng.standard_normal((2, 3, 4))
    out = getattr(tensor(x), op)(dim=axis, keepdim=keepdims)
    expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected)


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_pytorch_dim_keepdim_spelling(rng, op):
    x = rng.standard_normal((2, 3, 4))
    a, b = leaf(x), leaf(x)
    ya = getattr(a, op)(dim=1, keepdim=True)
    yb = getattr(b, op)(axis=1, keepdims=True)
    assert ya.shape == yb.shape == (2, 1, 4)
    np.testing.assert_array_equal(ya.numpy(), yb.numpy())
    w = rng.standard_normal(ya.shape)
    ya.backward(w)
    yb.backward(w)
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert getattr(tensor(x), op)(dim=(0, 2)).shape == (3,)


def test_full_reduction_is_0d():
    y = leaf(np.ones((2, 3))).sum()
    assert y.shape == () and y.item() == 6.0


def test_sum_and_mean_gradients_by_hand():
    x = leaf(np.ones((2, 3)))
    x.mean(axis=1).sum().backward()  # each row's mean: ∂/∂x = 1/3
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 3))
    y = leaf(np.ones((2, 3)))
    y.sum(axis=0).backward(np.array([1.0, 2.0, 3.0]))  # column j receives g_j
    np.testing.assert_allclose(y.grad.numpy(), [[1, 2, 3], [1, 2, 3]])


def test_max_ties_split_the_gradient_equally():
    # hand-derived: the max 3 appears twice, so each copy gets 1/2 (torch.amax's rule)
    x = leaf([1.0, 3.0, 3.0, 2.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])
    # per row: row 0 = [1, 1] (a tie: 1/2 each), row 1 = [2, 0] (one max)
    y = leaf([[1.0, 1.0], [2.0, 0.0]])
    y.amax(dim=1).backward(np.array([1.0, 4.0]))
    np.testing.assert_allclose(y.grad.numpy(), [[0.5, 0.5], [4.0, 0.0]])
    # three-way tie over a tuple of axes: 1/3 each
    z = leaf(np.array([[[5.0, 1.0], [5.0, 0.0]], [[5.0, 2.0], [1.0, 1.0]]]))
    z.amax(dim=(0, 1)).backward(np.array([3.0, 6.0]))
    np.testing.assert_allclose(z.grad.numpy(), [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 6.0], [0.0, 0.0]]])


def test_argmax_is_an_integer_index():
    x = tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 1.0]])
    np.testing.assert_array_equal(x.argmax(1).numpy(), [1, 0])
    np.testing.assert_array_equal(x.argmax(dim=0).numpy(), [1, 0, 0])
    assert x.argmax().item() == 3


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
@pytest.mark.parametrize("axis", [3, -4, (0, 5)], ids=str)
def test_axis_out_of_range(op, axis):
    with pytest.raises(IndexError, match=rf"{op}: .*out of range"):
        getattr(leaf(np.ones((2, 3, 4))), op)(dim=axis)


@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_axis_named_twice(op):
    with pytest.raises(RuntimeError, match=rf"{op}: .*twice.*\(2, 3\)"):
        getattr(leaf(np.ones((2, 3))), op)(dim=(1, -1))


def test_max_of_empty_tensor():
    # torch's error type (this was a ValueError before the package followed torch)
    with pytest.raises(RuntimeError, match=r"max\(\): .*empty.*\(0, 3\)"):
        leaf(np.ones((0, 3))).max()


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_matches_torch(torch, rng, op, dim, keepdim):
    x = rng.standard_normal((2, 3, 4))
    def ours(t):
        if op == "amax" and dim is None:  # (torch's amax has no dim=None; ours does)
            out = t.amax()
            return out.reshape((1, 1, 1)) if keepdim else out
        return getattr(t, op)(dim=dim, keepdim=keepdim)

    def theirs(t):
        if dim is None:
            out = getattr(t, op)()
            return out.reshape((1, 1, 1)) if keepdim else out
        return getattr(t, op)(dim=dim, keepdim=keepdim)

    torch_parity(torch, ours, x, torch_fn=theirs)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)], ids=str)
def test_max_with_ties_matches_torch_amax(torch, rng, dim):
    x = rng.integers(0, 3, size=(4, 5)).astype(np.float64)  # many ties

    def theirs(t):
        return t.amax() if dim is None else t.amax(dim=dim)

    torch_parity(torch, lambda t: t.max() if dim is None else t.amax(dim=dim), x,
                 torch_fn=theirs)


# =============================================================================================
# The torch porting surface: prod, var/std, norm, logsumexp, cumsum, amax/amin, max/min with a
# dim (values and indices), argmax/argmin.
# =============================================================================================
import math  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from tinygrad_pool.ops import reduce as R  # noqa: E402
from test_elementwise import _first_and_second_order, full_parity  # noqa: E402

FAST = settings(max_examples=25, deadline=None)
DIMS = [None, 0, -1, (0, 2)]

def _theirs(name, **fixed):
    """torch's method ``name`` with some arguments fixed (dim left out when None)."""
    def fn(t, dim=None, keepdim=False):
        kwargs = dict(fixed, keepdim=keepdim)
        if dim is not None:
            kwargs["dim"] = dim
        return getattr(t, name)(**kwargs)
    return fn


REDUCTIONS = {  # name: (ours, torch's)
    "var": (R.var, _theirs("var")),
    "var_c0": (lambda t, **k: R.var(t, correction=0, **k), _theirs("var", correction=0)),
    "std": (R.std, _theirs("std")),
    "std_c1.5": (lambda t, **k: R.std(t, correction=1.5, **k), _theirs("std", correction=1.5)),
    "norm2": (R.norm, _theirs("norm")),
    "norm1": (lambda t, **k: R.norm(t, 1, **k), _theirs("norm", p=1)),
    "norm3": (lambda t, **k: R.norm(t, 3, **k), _theirs("norm", p=3)),
    "norm1.5": (lambda t, **k: R.norm(t, 1.5, **k), _theirs("norm", p=1.5)),
    "norm0.5": (lambda t, **k: R.norm(t, 0.5, **k), _theirs("norm", p=0.5)),
    "norm_inf": (lambda t, **k: R.norm(t, math.inf, **k), _theirs("norm", p=math.inf)),
    "norm_-inf": (lambda t, **k: R.norm(t, -math.inf, **k), _theirs("norm", p=-math.inf)),
    "logsumexp": (lambda t, dim=None, **k: R.logsumexp(t, () if dim is None else dim, **k),
                  lambda t, dim=None, **k: t.logsumexp(tuple(range(t.ndim)) if dim is None
                                                       else dim, **k)),
    "amax": (R.amax, _theirs("amax")),
    "amin": (R.amin, _theirs("amin")),
}


def _call(fn, dim, keepdim):
    return lambda t: fn(t, dim=dim, keepdim=keepdim) if dim is not None else \
        fn(t, keepdim=keepdim)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_new_reductions_gradcheck_and_torch(torch, rng, name, dim, keepdim):
    ours, theirs = REDUCTIONS[name]
    x = rng.standard_normal((2, 3, 4))  # no ties, no zeros: every one differentiable here
    check_grad(_call(ours, dim, keepdim), x)
    full_parity(torch, _call(ours, dim, keepdim), x, torch_fn=_call(theirs, dim, keepdim))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
def test_prod_gradcheck_and_torch(torch, rng, dim, keepdim):
    x = rng.standard_normal((3, 4))
    fn = (lambda t: R.prod(t, dim, keepdim)) if dim is not None else (lambda t: R.prod(t))
    tfn = (lambda t: t.prod(dim, keepdim)) if dim is not None else (lambda t: t.prod())
    if dim is None and keepdim:
        return  # torch.prod(input) takes no keepdim (tested with the errors)
    check_grad(fn, x)
    full_parity(torch, fn, x, torch_fn=tfn)


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (2, 3)], [(1, 0), (1, 2)]], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1], ids=str)
def test_prod_with_zeros_matches_torch_to_second_order(torch, rng, zeros, dim):
    # one zero in a slice: its gradient is the product of the others; two: all gradients 0
    x = rng.standard_normal((3, 4))
    for place in zeros:
        x[place] = 0.0
    fn = (lambda t: R.prod(t, dim)) if dim is not None else R.prod
    tfn = (lambda t: t.prod(dim)) if dim is not None else (lambda t: t.prod())
    full_parity(torch, fn, x, torch_fn=tfn)
    check_grad(fn, x)


def test_prod_gradient_with_zeros_by_hand():
    x = leaf([2.0, 0.0, 3.0, 4.0])
    R.prod(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 24.0, 0.0, 0.0])  # 2·3·4 at the zero
    y = leaf([[0.0, 5.0, 0.0], [1.0, 2.0, 3.0]])
    R.prod(y, 1).backward(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])


def test_prod_with_zeros_refuses_a_third_derivative():
    from tinygrad_pool import autograd
    x = leaf([0.0, 2.0, 3.0])
    (g,) = autograd.grad(R.prod(x), x, create_graph=True)
    (h,) = autograd.grad((g * tensor([1.0, 1.0, 1.0])).sum(), x, create_graph=True)
    np.testing.assert_array_equal(h.numpy(), [5.0, 3.0, 2.0])  # Σⱼ≠ₖ Πᵢ∉{j,k} xᵢ
    with pytest.raises(RuntimeError, match="once_differentiable.*ProdOfOthers"):
        h.sum().backward()


@pytest.mark.parametrize("dim", [0, 1, -1], ids=str)
def test_cumsum_gradcheck_and_torch(torch, rng, dim):
    x = rng.standard_normal((3, 4))
    check_grad(lambda t: R.cumsum(t, dim), x)
    full_parity(torch, lambda t: R.cumsum(t, dim), x, torch_fn=lambda t: t.cumsum(dim))


def test_cumsum_dtypes_and_0d(torch):
    assert R.cumsum(tensor(np.array([1, 2, 3], dtype=np.int32)), 0).dtype == np.int64
    np.testing.assert_array_equal(R.cumsum(tensor(np.array([True, True, False])), 0).numpy(),
                                  [1, 2, 2])
    x = leaf(3.0)
    out = R.cumsum(x, 0)
    assert out.shape == () and out.item() == 3.0
    out.backward()
    assert x.grad.item() == 1.0


# ---- norm, std, logsumexp at their special points ----------------------------------------------
@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, 0, math.inf, -math.inf, "fro"], ids=str)
def test_norm_at_zero_and_with_zeros_matches_torch(torch, p):
    x = np.array([[0.0, 0.0, 0.0], [0.0, -2.0, 1.0], [3.0, -3.0, 1.0]])  # a zero row, ties
    _first_and_second_order(torch, lambda t: R.norm(t, p, 1), lambda t: t.norm(p, 1), [x],
                            np.float64, 1e-10, 1e-12, second_order=False)
    _first_and_second_order(torch, lambda t: R.norm(t, p), lambda t: t.norm(p), [x],
                            np.float64, 1e-10, 1e-12, second_order=False)


def test_norm_2_gradient_at_zero_is_zero():
    x = leaf(np.zeros(3))
    R.norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


def test_std_of_a_constant_slice_has_zero_gradient(torch):
    x = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    full_parity(torch, lambda t: R.std(t, 1), x, torch_fn=lambda t: t.std(1))
    t = leaf(x)
    R.std(t, 1).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy()[0], np.zeros(3))


def test_var_std_legacy_spellings(torch, rng):
    x = rng.standard_normal((3, 4))
    for args, kwargs in [((True,), {}), ((False,), {}), ((1, True, True), {}),
                         ((1, False), {}), ((1,), {"unbiased": False}),
                         ((), {"dim": (0, 1), "correction": 0}), ((0,), {"keepdim": True})]:
        for name in ("var", "std"):
            ours = getattr(R, name)(tensor(x), *args, **kwargs)
            theirs = getattr(torch, name)(torch.tensor(x), *args, **kwargs)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_var_with_too_few_elements_is_inf_or_nan_as_torch(torch):
    with pytest.warns(UserWarning):
        expected = [torch.tensor([1.0, 2.0]).var(correction=3).item(),
                    torch.tensor([1.0]).std().item()]
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):  # torch's warning too
        ours = [R.var(tensor([1.0, 2.0]), correction=3).item(), R.std(tensor([1.0])).item()]
    assert ours[0] == expected[0] == math.inf
    assert math.isnan(ours[1]) and math.isnan(expected[1])


def test_logsumexp_is_stable(torch):
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0]])
    ours = R.logsumexp(tensor(x), 1)
    theirs = torch.logsumexp(torch.tensor(x), 1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    assert ours.numpy()[0] == pytest.approx(1000 + math.log(2))
    full_parity(torch, lambda t: R.logsumexp(t, (0, 1)), np.array([[800.0, 799.0], [0.0, 1.0]]),
                torch_fn=lambda t: torch.logsumexp(t, (0, 1)))
    assert R.logsumexp(tensor(np.array([1, 2, 3])), 0).dtype == np.float32


# ---- max / min with a dim: values and indices ----------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1], ids=str)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_with_dim_match_torch_with_ties(torch, rng, op, dim, keepdim):
    x = rng.integers(0, 3, size=(4, 5)).astype(float)  # many ties: torch takes the first
    result = getattr(R, op)(tensor(x), dim, keepdim)
    expected = getattr(torch.tensor(x), op)(dim, keepdim)
    np.testing.assert_array_equal(result.indices.numpy(), expected.indices.numpy())
    assert result.indices.dtype == np.int64
    full_parity(torch, lambda t: getattr(R, op)(t, dim, keepdim).values, x,
                torch_fn=lambda t: getattr(t, op)(dim, keepdim).values)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_with_dim_gradcheck(rng, op):
    check_grad(lambda t: getattr(R, op)(t, 1).values, rng.standard_normal((3, 4)))
    check_grad(lambda t: getattr(R, op)(t, 0, keepdim=True).values, rng.standard_normal((3, 4)))


def test_max_with_dim_gradient_goes_to_the_first_tied_index_only():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    values, indices = R.max(x, 1)  # unpacks as a tuple
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    values.backward(np.array([1.0, 5.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 0.0], [5.0, 0.0, 0.0]])
    y = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    R.max(y).backward()  # without a dim: split among the tied maxima, as torch
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])


def test_max_result_is_torchs_named_tuple(torch):
    x = np.array([[1.0, 5.0], [7.0, 2.0]])
    result = R.max(tensor(x), 0)
    assert isinstance(result, tuple) and result._fields == ("values", "indices")
    assert result[0] is result.values and result[1] is result.indices
    assert repr(result).startswith("torch.return_types.max(\nvalues=Tensor([7., 5.]")
    assert repr(result).endswith("indices=Tensor([1, 0], dtype=int64))")
    assert repr(R.min(tensor(x), 0)).startswith("torch.return_types.min(")
    assert isinstance(R.min(Tensor(x), 0), R.MinResult)
    # max(x, other) is the elementwise maximum
    np.testing.assert_array_equal(R.max(tensor(x), tensor(x.T)).numpy(), np.maximum(x, x.T))


def test_max_of_0d_and_nan_as_torch(torch):
    values, indices = R.max(tensor(np.array(4.0)), 0)
    assert values.item() == 4.0 and indices.item() == 0 and indices.shape == ()
    x = np.array([1.0, np.nan, 3.0, np.nan])
    for op in ("max", "min"):
        ours, theirs = getattr(R, op)(tensor(x), 0), getattr(torch.tensor(x), op)(0)
        assert math.isnan(ours.values.item()) and ours.indices.item() == theirs.indices.item()
    assert R.argmin(tensor(x)).item() == torch.tensor(x).argmin().item()


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_match_torch(torch, rng, op, dim, keepdim):
    x = rng.integers(0, 3, size=(4, 5)).astype(float)  # ties: the first one, as torch
    ours = getattr(R, op)(tensor(x), dim, keepdim)
    theirs = getattr(torch, op)(torch.tensor(x), dim, keepdim)
    assert ours.dtype == np.int64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_ties_match_torch(torch, rng, op):
    x = rng.integers(0, 3, size=(3, 4, 2)).astype(float)
    for dim in [(), 0, (0, 2), [1, 2]]:
        full_parity(torch, lambda t: getattr(R, op)(t, dim), x,
                    torch_fn=lambda t: getattr(t, op)(dim))


# ---- hypothesis: shapes, dims, keepdim ------------------------------------------------------------
@st.composite
def _tensor_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dims = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                         unique_by=lambda d: d % len(shape)))
    return shape, tuple(dims), draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@FAST
@given(case=_tensor_and_dims())
def test_reductions_on_random_shapes_match_torch(case):
    torch = pytest.importorskip("torch")
    shape, dims, keepdim, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    ties = rng.integers(0, 2, size=shape).astype(float)
    dim = dims[0]
    cases = [
        (lambda t: R.var(t, dims, keepdim=keepdim, correction=0),
         lambda t: t.var(dims, keepdim=keepdim, correction=0), x),
        (lambda t: R.std(t, dims, keepdim=keepdim, correction=0),
         lambda t: t.std(dims, keepdim=keepdim, correction=0), x + 0.1 * np.arange(x.size).reshape(shape)),
        (lambda t: R.logsumexp(t, dims, keepdim), lambda t: t.logsumexp(dims, keepdim), x),
        (lambda t: R.norm(t, 3, dims, keepdim), lambda t: t.norm(3, dims, keepdim), x),
        (lambda t: R.amax(t, dims, keepdim), lambda t: t.amax(dims, keepdim), ties),
        (lambda t: R.prod(t, dim, keepdim), lambda t: t.prod(dim, keepdim), ties + 0.5 * x),
        (lambda t: R.min(t, dim, keepdim).values, lambda t: t.min(dim, keepdim).values, ties),
        (lambda t: R.cumsum(t, dim), lambda t: t.cumsum(dim), x),
    ]
    for ours, theirs, data in cases:
        _first_and_second_order(torch, ours, theirs, [data], np.float64, 1e-9, 1e-11)


# ---- errors, as torch's ------------------------------------------------------------------------------
def test_new_reduction_errors_are_torchs():
    empty = leaf(np.ones((0, 3)))
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified.*\(0, 3\)"):
        R.max(empty)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        R.max(empty, 0)
    assert R.max(empty, 1).values.shape == (0,)  # other dims of an empty tensor: fine
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        R.amax(empty)
    with pytest.raises(IndexError, match="argmax.*numel\\(\\) == 0"):
        R.argmax(empty)
    with pytest.raises(IndexError, match=r"max: dim=2 is out of range .*\[-2, 1\], but got 2"):
        R.max(leaf(np.ones((2, 3))), 2)
    with pytest.raises(IndexError, match="cumsum: dim=-3 is out of range"):
        R.cumsum(leaf(np.ones((2, 3))), -3)
    with pytest.raises(TypeError, match=r"prod\(\): argument 'dim' must be int, not tuple"):
        R.prod(leaf(np.ones((2, 3))), (0, 1))
    with pytest.raises(TypeError, match="prod.*keepdim=True needs a dim"):
        R.prod(leaf(np.ones((2, 3))), keepdim=True)
    with pytest.raises(RuntimeError, match="var.*floating point.*int64"):
        R.var(tensor(np.array([1, 2, 3])))
    with pytest.raises(TypeError, match="std.*unbiased=.*correction="):
        R.std(leaf(np.ones(3)), 0, True, correction=0)
    with pytest.raises(RuntimeError, match="norm: expected a floating point tensor.*int64"):
        R.norm(tensor(np.array([1, 2, 3])))
    with pytest.raises(ValueError, match="norm: p='nuc' is not supported"):
        R.norm(leaf(np.ones((2, 2))), "nuc")
    with pytest.raises(RuntimeError, match="sum: axis .* twice"):
        leaf(np.ones((2, 3))).sum(axis=(1, -1))
    with pytest.raises(TypeError, match=r"logsumexp\(\): argument 'input' must be Tensor, not list"):
        R.logsumexp([1.0, 2.0], 0)


@pytest.mark.parametrize("op", ["max", "min", "amax", "amin", "max_dim", "min_dim"])
def test_nan_routes_the_gradient_as_torch(torch, op):
    """max()/min() of all elements share a NaN maximum's gradient among the NaNs, amax/amin give
    NaN gradients, max(dim) sends it to the NaN it picked — torch's three rules."""
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, -1.0]])
    call = {"max": lambda t: t.max(), "min": lambda t: t.min(), "amax": lambda t: t.amax(),
            "amin": lambda t: t.amin(), "max_dim": lambda t: t.max(dim=1).values,
            "min_dim": lambda t: t.min(dim=1).values}[op]
    ours, theirs = leaf(x), torch.tensor(x, requires_grad=True)
    np.testing.assert_array_equal(call(ours).numpy(), call(theirs).detach().numpy())
    call(ours).sum().backward()
    call(theirs).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
