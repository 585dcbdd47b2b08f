"""Tensor introspection, small conversions (byte, select, take, diff, cross...) and in-place
forms of existing ops (sin_, eq_, cumsum_, fill_diagonal_...), against torch."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}
DTYPES = [np.float32, np.float64]


def lib_parity(torch, fn, *arrays, seed=0):
    """fn(lib, *tensors) on our leaves and torch's from the same arrays: forward, gradient
    (weighted by random w) and second order (d/dx and d/dw of Σ v·∂y/∂x ᵀw) agree."""
    rng = np.random.default_rng(seed)
    dtype = arrays[0].dtype.type
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = fn(tinygrad_pool, *ours), fn(torch, *theirs)
    assert yo.dtype == yt.detach().numpy().dtype and yo.shape == tuple(yt.shape)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **TOL[dtype])
    weights = rng.standard_normal(yo.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = autograd.grad(yo, ours, grad_outputs=[wo], create_graph=True)
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[wt], create_graph=True)
    for a, b in zip(go, gt):
        assert a.dtype == dtype
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **TOL[dtype])
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    sum(((g * tensor(v)).sum() for g, v in zip(go, directions)), tensor(0.0)).backward()
    sum(((g * torch.tensor(v)).sum() for g, v in zip(gt, directions)),
        torch.tensor(0.0, dtype=torch.float64)).backward()
    for a, b in zip(ours + [wo], theirs + [wt]):
        got = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        expected = np.zeros(tuple(b.shape)) if b.grad is None else b.grad.numpy()
        np.testing.assert_allclose(got, expected, **TOL[dtype])


def raises_like(torch, ours, theirs):
    """Both raise, and ours raises torch's error type."""
    with pytest.raises(Exception) as expected:
        theirs(torch)
    with pytest.raises(type(expected.value)):
        ours(tinygrad_pool)


# ---- introspection -----------------------------------------------------------------------------
VIEWS = [lambda x: x, lambda x: x.t(), lambda x: x[1:, ::2], lambda x: x[:, :1].expand(3, 5),
         lambda x: x[None], lambda x: x.transpose(0, 1)[2], lambda x: x.reshape(15)[3:9]]


@pytest.mark.parametrize("view", VIEWS)
def test_strides_and_contiguity_match_torch(torch, view):
    array = np.arange(15.0).reshape(3, 5)
    ours, theirs = view(tensor(array)), view(torch.tensor(array))
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    for dim in range(-ours.ndim, ours.ndim):
        assert ours.stride(dim) == theirs.stride(dim)
    assert ours.nbytes == theirs.nbytes and ours.nelement() == theirs.nelement()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int16",
                                   "int32", "int64", "bool"])
def test_dtype_questions_match_torch(torch, dtype):
    ours, theirs = tensor(np.zeros((2, 3), dtype)), torch.tensor(np.zeros((2, 3), dtype))
    for name in ("is_floating_point", "is_signed", "element_size", "ndimension", "nelement"):
        assert getattr(ours, name)() == getattr(theirs, name)(), name
    assert ours.itemsize == theirs.itemsize and ours.nbytes == theirs.nbytes
    assert tinygrad_pool.is_floating_point(ours) == torch.is_floating_point(theirs)


def test_stride_errors(torch):
    raises_like(torch, lambda lib: lib.zeros(2, 3).stride(2), lambda lib: lib.zeros(2, 3).stride(2))
    raises_like(torch, lambda lib: lib.is_floating_point([1.0]),
                lambda lib: lib.is_floating_point([1.0]))
    assert tensor(1.0).stride() == ()


# ---- conversions -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["byte", "char", "short"])
def test_integer_conversions(torch, name):
    array = np.array([-3.7, 0.0, 2.5, 100.0])
    ours, theirs = getattr(tensor(array), name)(), getattr(torch.tensor(array), name)()
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_positive_and_equal(torch):
    x = tensor([1.0, -2.0])
    assert x.positive() is x and tinygrad_pool.positive(x) is x
    raises_like(torch, lambda lib: lib.tensor([True]).positive(),
                lambda lib: lib.tensor([True]).positive())
    assert x.equal(tensor([1.0, -2.0])) and not x.equal(tensor([1.0, 2.0]))
    assert not x.equal(tensor([[1.0, -2.0]]))


# ---- views and compositions: values and derivatives --------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (-1, 2), (2, 0)])
def test_select(torch, dtype, dim, index):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
    lib_parity(torch, lambda lib, t: t.select(dim, index) * t.select(dim, index), x)
    lib_parity(torch, lambda lib, t: lib.select(t, dim, index), x)


def test_select_is_a_view_and_errors(torch):
    x = tinygrad_pool.zeros(2, 3)
    x.select(1, 2).fill_(7.0)
    assert x.numpy()[:, 2].tolist() == [7.0, 7.0]
    for bad in (lambda lib: lib.zeros(2, 3).select(0, 2), lambda lib: lib.zeros(2, 3).select(2, 0),
                lambda lib: lib.tensor(1.0).select(0, 0), lambda lib: lib.zeros(2).select(0, 0.5)):
        raises_like(torch, bad, bad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take(torch, dtype):
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(dtype)
    index = np.array([[0, 11, -1], [5, 5, 2]])  # (repeats add up their gradients)
    lib_parity(torch, lambda lib, t: t.take(lib.tensor(index)) ** 2, x)
    lib_parity(torch, lambda lib, t: lib.take(t, lib.tensor(index[0])), x)
    check_grad(lambda t: t.take(tensor(index)).sin().sum(), x.astype(np.float64))


def test_take_errors(torch):
    for bad in (lambda lib: lib.zeros(2, 3).take(lib.tensor([6])),
                lambda lib: lib.zeros(2, 3).take(lib.tensor([-7])),
                lambda lib: lib.zeros(2, 3).take(lib.tensor([1.0]))):
        raises_like(torch, bad, bad)
    assert tinygrad_pool.zeros(2, 3).take(tinygrad_pool.tensor([], dtype=tinygrad_pool.int64)).shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(1, 4), (4,), (3, 1), (1, 1), (2, 3, 4)])
def test_sum_to_size(torch, dtype, size):
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(dtype)
    lib_parity(torch, lambda lib, t: t.sum_to_size(*size) ** 2, x)
    lib_parity(torch, lambda lib, t: t.sum_to_size(size), x)


def test_sum_to_size_errors(torch):
    for bad in (lambda lib: lib.zeros(2, 3).sum_to_size(3, 3),
                lambda lib: lib.zeros(2, 3).sum_to_size(1, 2, 3)):
        raises_like(torch, bad, bad)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3,), (1, 3), (3, 1, 4)])
def test_broadcast_to(torch, dtype, shape):
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    target = (2, 3, 3, 4)[-len(shape) - 1:] if shape != (3,) else (2, 3)
    target = tuple(s if s != 1 else 5 for s in (2,) + shape)
    lib_parity(torch, lambda lib, t: t.broadcast_to(target) ** 2, x)
    lib_parity(torch, lambda lib, t: lib.broadcast_to(t, target), x)
    raises_like(torch, lambda lib: lib.zeros(2, 3).broadcast_to((3,)),
                lambda lib: lib.zeros(2, 3).broadcast_to((3,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (3, 1), (7, 1), (0, 0)])
def test_diff(torch, dtype, n, dim):
    rng = np.random.default_rng(4)
    x, before, after = (rng.standard_normal(shape).astype(dtype)
                        for shape in ((3, 5), (3, 5), (3, 5)))
    lib_parity(torch, lambda lib, t: t.diff(n, dim) ** 2, x)
    head = before[:1] if dim == 0 else before[:, :2]
    if n == 0:  # torch: a copy of input; prepend and append are left out
        out = tinygrad_pool.diff(tensor(x), 0, dim, prepend=tensor(head), append=tensor(after))
        np.testing.assert_array_equal(out.numpy(), x)
        return
    lib_parity(torch, lambda lib, t, p, a: lib.diff(t, n, dim, prepend=p, append=a),
               x, head, after)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.int32, np.bool_])
def test_diff_keeps_integer_and_bool_dtypes(torch, dtype):
    x = np.array([[1, 0, 5, 2], [7, 7, 0, 1]]).astype(dtype)
    ours, theirs = tensor(x).diff(2), torch.tensor(x).diff(2)
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_diff_errors(torch):
    for bad in (lambda lib: lib.zeros(3).diff(-1), lambda lib: lib.tensor(1.0).diff(),
                lambda lib: lib.zeros(3).diff(dim=1)):
        raises_like(torch, bad, bad)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 4), st.data())
def test_diff_property(shape, n, data):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(n).standard_normal(shape)
    np.testing.assert_allclose(tensor(x).diff(n, dim).numpy(),
                               torch.tensor(x).diff(n, dim).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,dim", [(((4, 3), (4, 3)), 1), (((3, 2), (3, 2)), 0),
                                        (((1, 3), (5, 3)), -1), (((2, 3, 3), (2, 3, 3)), None)])
def test_cross(torch, dtype, shapes, dim):
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.cross's deprecated dim=None default)
        lib_parity(torch, lambda lib, s, o: s.cross(o, dim=dim), a, b)
        lib_parity(torch, lambda lib, s, o: lib.cross(s, o, dim), a, b)
    check_grad(lambda s, o: s.cross(o, dim=dim if dim is not None else 1).sum(),
               a.astype(np.float64), b.astype(np.float64))


def test_cross_default_dim_warns_and_errors(torch):
    with pytest.warns(UserWarning, match="dim"):
        tinygrad_pool.zeros(2, 3).cross(tinygrad_pool.zeros(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bad in (lambda lib: lib.cross(lib.zeros(2, 4), lib.zeros(2, 4)),
                    lambda lib: lib.cross(lib.zeros(3, 4), lib.zeros(3, 4), dim=1),
                    lambda lib: lib.cross(lib.zeros(3), lib.zeros(2, 3), dim=-1)):
            raises_like(torch, bad, bad)


# ---- in-place forms ----------------------------------------------------------------------------
UNARY_INPLACE = ["floor_", "ceil_", "round_", "sin_", "cos_", "sign_", "rsqrt_", "log1p_",
                 "negative_"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_inplace_matches_torch(torch, dtype, name):
    x = np.array([0.3, 1.7, 2.5, 0.5, 3.2]).astype(dtype)

    def fn(lib, t):
        y = t * 1.5
        getattr(y, name)()
        return y * t
    lib_parity(torch, fn, x)
    ours = tensor(x)
    before = ours._version
    assert getattr(ours, name)() is ours and ours._version == before + 1
    np.testing.assert_allclose(ours.numpy(), getattr(torch.tensor(x), name)().numpy(), **TOL[dtype])


def test_round_decimals_inplace(torch):
    x = np.array([1.2345, -2.5678, 0.05])
    np.testing.assert_allclose(tensor(x).round_(decimals=2).numpy(),
                               torch.tensor(x).round_(decimals=2).numpy())


@pytest.mark.parametrize("name,dtype", [("sin_", np.int64), ("rsqrt_", np.int32),
                                        ("floor_", np.bool_), ("log1p_", np.bool_),
                                        ("negative_", np.bool_)])
def test_unary_inplace_refusals(torch, name, dtype):
    x = np.array([1, 0]).astype(dtype)
    raises_like(torch, lambda lib: getattr(lib.tensor(x), name)(),
                lambda lib: getattr(lib.tensor(x), name)())


def test_inplace_on_a_leaf_that_requires_grad_refused(torch):
    for name in ("sin_", "eq_", "cumsum_", "fill_diagonal_"):
        arguments = {"eq_": (0.5,), "cumsum_": (0,), "fill_diagonal_": (1.0,)}.get(name, ())
        raises_like(torch, lambda lib: getattr(lib.ones(2, 2, requires_grad=True), name)(*arguments),
                    lambda lib: getattr(lib.ones(2, 2, requires_grad=True), name)(*arguments))


@pytest.mark.parametrize("dtype", DTYPES)
def test_multiply_subtract_inplace(torch, dtype):
    a, b = np.array([1.5, -2.0, 0.25]).astype(dtype), np.array([0.5, 3.0, -1.0]).astype(dtype)

    def fn(lib, s, o):
        y = s * 1
        y.multiply_(o).subtract_(o * o, alpha=2)
        return y * s
    lib_parity(torch, fn, a, b)
    raises_like(torch, lambda lib: lib.tensor([True]).subtract_(lib.tensor([True])),
                lambda lib: lib.tensor([True]).subtract_(lib.tensor([True])))
    raises_like(torch, lambda lib: lib.tensor([1, 2]).multiply_(1.5),
                lambda lib: lib.tensor([1, 2]).multiply_(1.5))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace(torch, dtype, name):
    x = np.random.default_rng(6).standard_normal((3, 4)).astype(dtype)

    def fn(lib, t):
        y = t * 1
        getattr(y, name)(1)
        return y * t
    lib_parity(torch, fn, x)
    check_grad(lambda t: getattr(t * 1, name)(0).sum(), x.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_integers_wrap_as_torch(torch, dtype, name):
    x = np.array([100, 100, 3, 7]).astype(dtype)
    ours, theirs = getattr(tensor(x), name)(0), getattr(torch.tensor(x), name)(0)
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    raises_like(torch, lambda lib: getattr(lib.tensor([True]), name)(0),
                lambda lib: getattr(lib.tensor([True]), name)(0))


COMPARE_INPLACE = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_",
                   "less_", "less_equal_", "not_equal_"]
LOGICAL_INPLACE = ["logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("name", COMPARE_INPLACE + LOGICAL_INPLACE)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "bool"])
def test_comparison_inplace_writes_self_dtype(torch, name, dtype):
    x = np.array([[0, 1, 2], [2, 0, 1]]).astype(dtype)
    other = np.array([1, 0, 2]).astype(dtype)
    ours, theirs = tensor(x), torch.tensor(x)
    version = ours._version
    assert getattr(ours, name)(tensor(other)) is ours and ours._version == version + 1
    getattr(theirs, name)(torch.tensor(other))
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if name in COMPARE_INPLACE:  # a number too
        ours, theirs = getattr(tensor(x), name)(1), getattr(torch.tensor(x), name)(1)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_logical_not_inplace(torch):
    for dtype in ("float32", "int64", "bool"):
        x = np.array([0, 1, 2]).astype(dtype)
        ours, theirs = tensor(x).logical_not_(), torch.tensor(x).logical_not_()
        assert ours.dtype == theirs.numpy().dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_comparison_inplace_gradient_is_zero_and_errors(torch):
    for lib in (tinygrad_pool, torch):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 2
        y.gt_(1.5)
        (y * x).sum().backward()
        assert x.grad.numpy().tolist() == [0.0, 1.0, 1.0]  # (y's own path carries zero)
    raises_like(torch, lambda lib: lib.tensor([1, 2]).eq_(lib.ones(2, 2)),
                lambda lib: lib.tensor([1, 2]).eq_(lib.ones(2, 2)))
    raises_like(torch, lambda lib: lib.tensor([1, 2]).eq_("a"), lambda lib: lib.tensor([1, 2]).eq_("a"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 7), False), ((3, 3, 3), False)])
def test_fill_diagonal_inplace(torch, dtype, shape, wrap):
    x = np.random.default_rng(7).standard_normal(shape).astype(dtype)

    def fn(lib, t):
        y = t * 1
        y.fill_diagonal_(2.5, wrap=wrap)
        return y * t
    lib_parity(torch, fn, x)


def test_fill_diagonal_dtypes_and_errors(torch):
    ours = tinygrad_pool.zeros(2, 2, dtype=tinygrad_pool.int64).fill_diagonal_(1.5)
    theirs = torch.zeros(2, 2, dtype=torch.int64).fill_diagonal_(1.5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for bad in (lambda lib: lib.zeros(3).fill_diagonal_(1), lambda lib: lib.zeros(2, 3, 3).fill_diagonal_(1)):
        raises_like(torch, bad, bad)


def test_detach_inplace(torch):
    for lib in (tinygrad_pool, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        assert y.detach_() is y and not y.requires_grad and y.grad_fn is None
        raises_like(torch, lambda lib: (lib.ones(3, requires_grad=True) * 2)[1:].detach_(),
                    lambda lib: (lib.ones(3, requires_grad=True) * 2)[1:].detach_())


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_strides_of_random_views_property(shape, data):
    torch = pytest.importorskip("torch")
    order = data.draw(st.permutations(range(len(shape))))
    steps = tuple(slice(None, None, data.draw(st.integers(1, 2))) for _ in shape)
    array = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ours = tensor(array).permute(*order)[steps]
    theirs = torch.tensor(array).permute(*order)[steps]
    sizes = [s if s != 1 else None for s in theirs.shape]  # (size-1 steps are never used)
    assert [st_ for st_, s in zip(ours.stride(), sizes) if s] == \
        [st_ for st_, s in zip(theirs.stride(), sizes) if s]
    assert ours.is_contiguous() == theirs.is_contiguous()
    index = data.draw(st.integers(0, theirs.shape[0] - 1))
    np.testing.assert_array_equal(ours.select(0, index).numpy(), theirs.select(0, index).numpy())
    flat = np.array(data.draw(st.lists(st.integers(-theirs.numel(), theirs.numel() - 1), max_size=5)),
                    dtype=np.int64)
    np.testing.assert_array_equal(ours.take(tensor(flat)).numpy(),
                                  theirs.take(torch.tensor(flat)).numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_through_views_chain(torch, dtype):
    x = (np.arange(6.0).reshape(2, 3) / 3).astype(dtype)

    def fn(lib, t):
        y = t * 1
        y.select(0, 1).sin_()  # (through a view: the base's gradient follows)
        y.t().fill_diagonal_(0.0)
        y.cumsum_(1)
        return y * y
    lib_parity(torch, fn, x)
