"""torch's other elementwise math (ops/math_functions.py): tan, the inverse and hyperbolic
trigonometric functions, erf/erfc, exp2/log2/log10/expm1, reciprocal, trunc/frac, atan2,
copysign, lerp, nan_to_num and the tests isnan/isinf/isfinite/isposinf/isneginf/signbit.

Each against torch in float32 and float64 — forward, gradient, and the second derivative through
a create_graph backward (with respect to the input and to the output gradient) — over
hypothesis-drawn shapes and values within each function's domain; float64 finite differences;
integer and bool inputs' dtypes; broadcasting; torch's errors; the in-place forms and their
version counter; and torch's values and gradients at ±inf, nan, the domain's edges and huge
values."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor
from tinygrad_pool.gradient_check import gradcheck_report

from helpers import check_grad

# name -> (low, high) of the values drawn: each function's domain, away from its edges (tan's
# poles, asin's ±1, log's 0, reciprocal's 0 are tested with the extremes below)
DOMAINS = {
    "tan": (-1.3, 1.3), "asin": (-0.95, 0.95), "acos": (-0.95, 0.95), "atan": (-4, 4),
    "sinh": (-5, 5), "cosh": (-5, 5), "asinh": (-6, 6), "acosh": (1.05, 6),
    "atanh": (-0.95, 0.95), "erf": (-4, 4), "erfc": (-3, 9), "exp2": (-6, 6),
    "log2": (0.05, 20), "log10": (0.05, 20), "expm1": (-5, 5), "reciprocal": (0.2, 5),
    "trunc": (-5, 5), "frac": (-5, 5),
    "arcsin": (-0.95, 0.95), "arccos": (-0.95, 0.95), "arctan": (-4, 4), "arcsinh": (-6, 6),
    "arccosh": (1.05, 6), "arctanh": (-0.95, 0.95), "fix": (-5, 5),
}
UNARY = sorted(DOMAINS)
STEP_LIKE = ("trunc", "fix", "frac")  # torch has no second derivative of these
# The torch names whose in-place form exists (all of the above)
TOLERANCES = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}
SECOND_ORDER = {np.float32: dict(rtol=1e-4, atol=5e-5), np.float64: TOLERANCES[np.float64]}


def sample(name, shape, seed=0) -> np.ndarray:
    """Values inside the function's domain; for reciprocal both signs; for trunc/frac some
    integers (their jumps: the gradient there is still torch's)."""
    low, high = DOMAINS[name]
    x = np.random.default_rng(seed).uniform(low, high, shape)
    if name == "reciprocal":
        x = x * np.where(np.arange(x.size).reshape(shape) % 2, -1, 1)
    if name in STEP_LIKE and x.size:
        x.reshape(-1)[::5] = np.round(x.reshape(-1)[::5])
    return x


def compare(got, expected, tol, what):
    """Values (torch's None gradient: zeros) equal within tol, NaNs and infinities in the same
    places."""
    expected = np.zeros(got.shape) if expected is None else expected
    np.testing.assert_allclose(got, expected, **tol, err_msg=what)


def assert_parity(torch, ours_fn, torch_fn, arrays, dtype, seed=0, second_order=True):
    """Forward, every input's gradient and (second_order) the second derivatives — d/d input
    and d/d output-gradient of Σ v · (∂y/∂x)ᵀw — of ours against torch's."""
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    arrays = [a.astype(dtype) for a in arrays]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = ours_fn(*ours), torch_fn(*theirs)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape)
    compare(yo.numpy(), yt.detach().numpy(), tol, "forward")
    weights = rng.standard_normal(yo.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = autograd.grad(yo, ours, grad_outputs=[wo], create_graph=second_order, allow_unused=True)
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[wt], create_graph=second_order,
                             allow_unused=True)
    for k, (a, b) in enumerate(zip(go, gt)):
        compare(np.zeros(arrays[k].shape) if a is None else a.numpy(),
                None if b is None else b.detach().numpy(), tol, f"gradient {k}")
    if not second_order:
        return
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    total_o = sum([(g * tensor(v)).sum() for g, v in zip(go, directions)
                   if g is not None and g.requires_grad], tensor(np.zeros((), dtype)))
    total_t = sum([(g * torch.tensor(v)).sum() for g, v in zip(gt, directions)
                   if g is not None and g.requires_grad], torch.zeros((), dtype=gt[0].dtype))
    if total_t.requires_grad:
        wanted_t = torch.autograd.grad(total_t, theirs + [wt], allow_unused=True)
    else:
        wanted_t = [None] * (len(theirs) + 1)
    if total_o.requires_grad:
        wanted_o = autograd.grad(total_o, ours + [wo], allow_unused=True)
    else:
        wanted_o = [None] * (len(ours) + 1)
    for k, (a, b) in enumerate(zip(wanted_o, wanted_t)):
        expected = None if b is None else b.numpy()
        tolerance = dict(SECOND_ORDER[dtype])
        if dtype == np.float32 and expected is not None:  # rounding relative to the largest
            tolerance["atol"] *= max(1.0, float(np.abs(expected).max(initial=0.0)))
        shape = (arrays + [weights])[k].shape
        compare(np.zeros(shape) if a is None else a.numpy(), expected, tolerance,
                f"second derivative {k}")


def method(name):
    return lambda x: getattr(x, name)()


DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])


# ---- the unary functions --------------------------------------------------------------------
@DTYPES
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch_to_second_order(torch, name, dtype):
    assert_parity(torch, method(name), method(name), [sample(name, (3, 4, 2))], dtype,
                  second_order=name not in STEP_LIKE)


@DTYPES
@pytest.mark.parametrize("name", UNARY)
def test_module_functions_match_the_methods(torch, name, dtype):
    x = sample(name, (5,), seed=3).astype(dtype)
    ours = getattr(tinygrad_pool, name)(tensor(x))
    np.testing.assert_allclose(ours.numpy(), getattr(torch, name)(torch.tensor(x)).numpy(),
                               **TOLERANCES[dtype])


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(UNARY), shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_unary_matches_torch_over_shapes(name, shape, seed, double):
    torch = pytest.importorskip("torch")
    dtype = np.float64 if double else np.float32
    assert_parity(torch, method(name), method(name), [sample(name, tuple(shape), seed)], dtype,
                  seed, second_order=name not in STEP_LIKE)


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("trunc", "fix")])
def test_unary_gradient_matches_finite_differences(name):
    x = sample(name, (3, 4), seed=1)
    if name == "frac":
        x = x + 0.25 * (np.abs(x - np.round(x)) < 1e-3)  # away from the jumps
    check_grad(method(name), x)


def test_trunc_and_frac_gradients_are_0_and_1_and_frac_is_x_minus_trunc(torch):
    x = tensor(np.array([-2.5, -1.0, -0.3, 0.0, 0.7, 3.0, 1e30]), requires_grad=True)
    x.trunc().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(7))
    x.grad = None
    x.frac().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(7))
    np.testing.assert_array_equal(x.frac().numpy(), torch.tensor(x.numpy()).frac().numpy())


def test_erfc_is_accurate_far_out_where_1_minus_erf_is_0(torch):
    x = np.array([-30.0, -3.0, 0.0, 0.5, 1.4, 1.5, 1.6, 2.5, 5.0, 10.0, 20.0, 26.0, 27.5])
    ours = tinygrad_pool.erfc(tensor(x)).numpy()
    theirs = torch.erfc(torch.tensor(x)).numpy()
    assert ours[-4] > 0 and ours[-3] > 0  # erfc(10) = 2e-45: 1 - erf(10) would be 0
    np.testing.assert_allclose(ours, theirs, rtol=3e-14, atol=0)
    ours32 = tinygrad_pool.erfc(tensor(x.astype(np.float32))).numpy()
    np.testing.assert_allclose(ours32, torch.erfc(torch.tensor(x, dtype=torch.float32)).numpy(),
                               rtol=2e-6, atol=1e-44)


# ---- the extremes: torch's values and gradients (NaNs, infinities and zeros in the same places)
EXTREMES = np.array([-np.inf, -1e30, -100.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 100.0, 1e30,
                     np.inf, np.nan, 1e-45, -1e-45, 1e-40, 88.7, -88.7, 89.0, 3e38, -3e38, 710.0,
                     -745.0, 1e300, 5e-324, -1e-310, 1.0 - 2 ** -24, -1.0 + 2 ** -24])


@DTYPES
@pytest.mark.parametrize("name", UNARY)
def test_extreme_inputs_give_torchs_values_and_gradients(torch, name, dtype):
    with np.errstate(over="ignore"):  # (1e300 is inf in float32)
        x = EXTREMES.astype(dtype)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = getattr(ours, name)(), getattr(theirs, name)()
    loose = dict(rtol=1e-5, atol=0) if dtype == np.float32 else dict(rtol=1e-12, atol=0)
    compare(yo.numpy(), yt.detach().numpy(), loose, f"{name} forward")
    zeros = yt.detach().numpy() == 0  # -0 where torch gives -0
    np.testing.assert_array_equal(np.signbit(yo.numpy()[zeros]),
                                  np.signbit(yt.detach().numpy()[zeros]))
    yo.sum().backward()
    yt.sum().backward()
    compare(ours.grad.numpy(), theirs.grad.numpy(), loose, f"{name} gradient")


@pytest.mark.parametrize("name, points", [("asin", [-1.0, 1.0]), ("acos", [-1.0, 1.0]),
                                          ("atanh", [-1.0, 1.0]), ("acosh", [1.0, 0.5]),
                                          ("log2", [0.0, -1.0]), ("reciprocal", [0.0, -0.0])])
def test_domain_edges_give_torchs_infinite_and_nan_slopes(torch, name, points):
    """asin/acos/atanh at ±1 and acosh at 1: slopes of inf, as torch (not 'fixed'); beyond
    the edge nan; second derivatives likewise."""
    x = np.array(points)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (go,) = autograd.grad(getattr(ours, name)().sum(), [ours], create_graph=True)
    (gt,) = torch.autograd.grad(getattr(theirs, name)().sum(), [theirs], create_graph=True)
    compare(go.numpy(), gt.detach().numpy(), dict(rtol=0, atol=0), "gradient")
    assert not np.isfinite(go.numpy()).all()
    (ggo,) = autograd.grad(go.sum(), [ours])
    (ggt,) = torch.autograd.grad(gt.sum(), [theirs])
    compare(ggo.numpy(), ggt.numpy(), dict(rtol=0, atol=0), "second derivative")


# ---- dtypes ---------------------------------------------------------------------------------
INTEGER_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("trunc", "fix", "frac")])
def test_integer_and_bool_inputs_compute_in_the_default_float_dtype(torch, name, dtype):
    x = np.array([0, 1, 2, 3]).astype(dtype)
    yo, yt = getattr(tensor(x), name)(), getattr(torch.tensor(x), name)()
    assert yo.dtype == np.float32 and yt.dtype == torch.float32
    compare(yo.numpy(), yt.numpy(), TOLERANCES[np.float32], name)


def test_integer_inputs_follow_the_default_dtype():
    tinygrad_pool.set_default_dtype(tinygrad_pool.float64)
    try:
        assert tensor([1, 2]).tan().dtype == np.float64
        assert tinygrad_pool.atan2(tensor([1]), tensor([2])).dtype == np.float64
        assert tensor([1]).copysign(-1).dtype == np.float64
    finally:
        tinygrad_pool.set_default_dtype(tinygrad_pool.float32)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_trunc_keeps_integers_and_refuses_bools_frac_refuses_both(torch, dtype):
    x = np.array([0, 1, 2]).astype(dtype)
    for name in ("trunc", "fix", "frac"):
        try:
            expected = getattr(torch.tensor(x), name)()
        except NotImplementedError:
            with pytest.raises(NotImplementedError, match=name if name != "fix" else "trunc"):
                getattr(tensor(x), name)()
            continue
        got = getattr(tensor(x), name)()
        assert got.dtype == x.dtype and str(expected.dtype) == f"torch.{x.dtype}"
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


TESTS = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"] + INTEGER_DTYPES)
@pytest.mark.parametrize("name", TESTS)
def test_tests_give_bool_tensors_for_every_dtype(torch, name, dtype):
    if np.dtype(dtype).kind == "f":
        x = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan, -np.nan]).astype(dtype)
    else:
        x = np.array([0, 1, 2, 1]).astype(dtype)
        if np.dtype(dtype).kind == "i":
            x[3] = -3
    yo = getattr(tinygrad_pool, name)(tensor(x))
    yt = getattr(torch, name)(torch.tensor(x))
    assert yo.dtype == np.bool_ and not yo.requires_grad
    np.testing.assert_array_equal(yo.numpy(), yt.numpy())
    np.testing.assert_array_equal(getattr(tensor(x), name)().numpy(), yt.numpy())


def test_tests_have_no_gradient():
    x = tensor(np.array([1.0, np.nan]), requires_grad=True)
    for name in TESTS:
        y = getattr(x, name)()
        assert y.grad_fn is None and not y.requires_grad


# ---- atan2 and copysign: broadcasting, numbers, gradients at 0, double backward -------------
shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3)


def broadcastable(shape, rng):
    """A shape that broadcasts with ``shape``: some dims 1, maybe fewer dims."""
    cut = rng.integers(0, len(shape) + 1)
    return tuple(1 if rng.random() < 0.4 else n for n in shape[cut:])


@settings(max_examples=30, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2 ** 16), double=st.booleans(), swap=st.booleans())
def test_atan2_matches_torch_with_broadcasting(shape, seed, double, swap):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(tuple(shape)), rng.standard_normal(broadcastable(shape, rng))
    if swap:
        a, b = b, a
    assert_parity(torch, lambda x, y: x.atan2(y), lambda x, y: x.atan2(y), [a, b],
                  np.float64 if double else np.float32, seed)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2 ** 16), double=st.booleans(), swap=st.booleans())
def test_copysign_matches_torch_with_broadcasting(shape, seed, double, swap):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(tuple(shape)), rng.standard_normal(broadcastable(shape, rng))
    if swap:
        a, b = b, a
    # |x| ≥ 0.25: the second derivative (0) is computed through out / x, whose float32 rounding
    # grows as 1/x² near the kink (x = 0 itself is tested with numbers, below)
    a = np.copysign(np.abs(a) + 0.25, a)
    assert_parity(torch, lambda x, y: x.copysign(y), lambda x, y: x.copysign(y), [a, b],
                  np.float64 if double else np.float32, seed)


@DTYPES
@pytest.mark.parametrize("other", [-2.0, 3, 0.0, -0.0, True])
def test_copysign_takes_a_number(torch, dtype, other):
    x = np.array([[-1.5, 0.0, 2.0], [-0.0, 4.0, -3.0]])
    assert_parity(torch, lambda t: tinygrad_pool.copysign(t, other),
                  lambda t: torch.copysign(t, other), [x], dtype)


SPECIAL_A = np.array([0.0, -0.0, 1.0, -1.0, np.inf, np.nan, 0.0, 2.0, -3.0, 0.0, -np.inf])
SPECIAL_B = np.array([0.0, 0.0, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -2.0, -np.inf])


@DTYPES
@pytest.mark.parametrize("name", ["atan2", "copysign"])
def test_atan2_and_copysign_at_zero_and_infinities_are_torchs(torch, name, dtype):
    """atan2's gradient at (0, 0) is 0 (torch masks 1/(a² + b²)) and its second derivative
    nan; copysign's gradient at 0 is 0, at ±inf and nan nan; other's gradient zeros."""
    fn = lambda x, y: getattr(x, name)(y)
    assert_parity(torch, fn, fn, [SPECIAL_A, SPECIAL_B], dtype)


def test_copysign_other_gets_a_zero_gradient(torch):
    a = tensor(np.array([1.0, -2.0]), requires_grad=True)
    b = tensor(np.array([[-1.0, 1.0], [1.0, 1.0]]), requires_grad=True)
    tinygrad_pool.copysign(a, b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, -2.0])


@pytest.mark.parametrize("name", ["atan2", "copysign"])
def test_binary_gradients_match_finite_differences(name):
    rng = np.random.default_rng(4)
    a, b = rng.uniform(0.5, 2, (3, 4)) * np.sign(rng.standard_normal((3, 4))), \
        rng.uniform(0.5, 2, (4,))
    check_grad(lambda x, y: getattr(x, name)(y), a, b)


@pytest.mark.parametrize("ours, theirs", [
    (lambda t, x: t.atan2(x, x), lambda t, x: t.atan2(x, x)),
    (lambda t, x: t.copysign(x, x), lambda t, x: t.copysign(x, x))], ids=["atan2", "copysign"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_binary_integer_inputs_give_the_default_float_dtype(torch, ours, theirs, dtype):
    x = np.array([0, 1, 1]).astype(dtype)
    yo, yt = ours(tinygrad_pool, tensor(x)), theirs(torch, torch.tensor(x))
    assert yo.dtype == np.float32 and yt.dtype == torch.float32
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-6)


def test_binary_dtype_promotion_is_torchs(torch):
    f32, f64 = np.array([1.0, -2.0], np.float32), np.array([1.0, 3.0])
    for name in ("atan2", "copysign"):
        for a, b in ((f32, f64), (f32, np.array(-1.0)), (np.array([1, 2]), f32)):
            yo = getattr(tinygrad_pool, name)(tensor(a), tensor(b))
            yt = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
            assert str(yt.dtype) == f"torch.{yo.dtype}"
    assert tensor([1, -2]).copysign(-2.5).dtype == np.float32


# ---- lerp -----------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2 ** 16), double=st.booleans(),
       tensor_weight=st.booleans())
def test_lerp_matches_torch_with_broadcasting(shape, seed, double, tensor_weight):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    start, end = rng.standard_normal(tuple(shape)), rng.standard_normal(broadcastable(shape, rng))
    dtype = np.float64 if double else np.float32
    if tensor_weight:  # both forms: |w| < ½ and the other
        weight = rng.uniform(-0.5, 1.5, broadcastable(shape, rng))
        assert_parity(torch, lambda a, b, w: a.lerp(b, w), lambda a, b, w: a.lerp(b, w),
                      [start, end, weight], dtype, seed)
    else:
        weight = float(rng.uniform(-0.5, 1.5))
        assert_parity(torch, lambda a, b: tinygrad_pool.lerp(a, b, weight),
                      lambda a, b: torch.lerp(a, b, weight), [start, end], dtype, seed)


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.5, 1.0, 2.0, -1, True])
def test_lerp_is_exact_at_its_ends_and_matches_torch_with_infinities(torch, weight):
    a = np.array([1.0, -2.0, np.inf, 1.0, 0.0, 3.0], np.float32)
    b = np.array([3.0, 4.0, np.inf, np.inf, 1e38, -np.inf], np.float32)
    yo = tinygrad_pool.lerp(tensor(a), tensor(b), weight)
    yt = torch.lerp(torch.tensor(a), torch.tensor(b), weight)
    compare(yo.numpy(), yt.numpy(), dict(rtol=1e-6, atol=0), "lerp")


def test_lerp_gradients_match_finite_differences():
    rng = np.random.default_rng(5)
    check_grad(lambda a, b, w: a.lerp(b, w), rng.standard_normal((2, 3)),
               rng.standard_normal((3,)), rng.uniform(-0.5, 1.5, (2, 1)))
    check_grad(lambda a, b: a.lerp(b, 0.7), rng.standard_normal((2, 3)), rng.standard_normal(3))


def test_lerp_takes_a_0d_weight_of_another_dtype(torch):
    a, b = np.array([1.0, -2.0], np.float32), np.array([3.0, 4.0], np.float32)
    for w in (np.array(0.25), np.array(1), np.array(True)):
        yo = tinygrad_pool.lerp(tensor(a), tensor(b), tensor(w))
        yt = torch.lerp(torch.tensor(a), torch.tensor(b), torch.tensor(w))
        assert yo.dtype == np.float32
        np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-6)


# ---- nan_to_num -----------------------------------------------------------------------------
@DTYPES
@pytest.mark.parametrize("args", [{}, dict(nan=1.5), dict(nan=1.0, posinf=2.0, neginf=-3.0),
                                  dict(posinf=1e300), dict(nan=None, neginf=7), dict(nan=True)])
def test_nan_to_num_matches_torch_with_its_gradient(torch, dtype, args):
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 3e38])
    assert_parity(torch, lambda t: t.nan_to_num(**args), lambda t: t.nan_to_num(**args), [x],
                  dtype)
    assert_parity(torch, lambda t: tinygrad_pool.nan_to_num(t, **args),
                  lambda t: torch.nan_to_num(t, **args), [x], dtype)


def test_nan_to_num_gradient_is_0_where_replaced_and_nan_for_a_nan_arriving(torch):
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    weights = np.array([1.0, 2.0, np.inf, np.nan], np.float32)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours.nan_to_num().backward(tensor(weights))
    theirs.nan_to_num().backward(torch.tensor(weights))
    compare(ours.grad.numpy(), theirs.grad.numpy(), dict(rtol=0, atol=0), "gradient")


@pytest.mark.parametrize("dtype", ["float16"] + INTEGER_DTYPES)
def test_nan_to_num_of_other_dtypes(torch, dtype):
    x = np.array([np.nan, np.inf, -np.inf, 1.0]) if dtype == "float16" else np.array([0, 1, 1])
    x = x.astype(dtype)
    yo, yt = tensor(x).nan_to_num(), torch.tensor(x).nan_to_num()
    assert str(yt.dtype) == f"torch.{yo.dtype}"
    np.testing.assert_array_equal(yo.numpy(), yt.numpy())


# ---- torch's errors -------------------------------------------------------------------------
ALL_FUNCTIONS = UNARY + list(TESTS) + ["nan_to_num"]


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
@pytest.mark.parametrize("value", [1.0, [1.0, 2.0], np.array([1.0])], ids=["float", "list", "array"])
def test_module_functions_refuse_what_is_no_tensor(torch, name, value):
    with pytest.raises(TypeError):
        getattr(torch, name)(value)
    with pytest.raises(TypeError, match=name):
        getattr(tinygrad_pool, name)(value)


@pytest.mark.parametrize("call", [
    lambda t, x: t.atan2(x, 2.0), lambda t, x: x.atan2(1), lambda t, x: t.atan2(x, None),
    lambda t, x: t.copysign(x, "a"), lambda t, x: t.copysign(x, [1.0, 2.0]),
    lambda t, x: t.copysign(x, None), lambda t, x: x.copysign_("a"),
    lambda t, x: t.lerp(x, 2.0, 0.5), lambda t, x: t.lerp(x, x, "a"),
    lambda t, x: t.lerp(x, x, None), lambda t, x: t.lerp(x, x, [0.5, 0.5]),
    lambda t, x: x.nan_to_num("a"), lambda t, x: x.nan_to_num(posinf="a"),
    lambda t, x: x.nan_to_num(neginf=1j), lambda t, x: x.atan2_(1.0),
], ids=["atan2-number", "atan2-int", "atan2-None", "copysign-str", "copysign-list",
        "copysign-None", "copysign_-str", "lerp-number-end", "lerp-str-weight",
        "lerp-None-weight", "lerp-list-weight", "nan_to_num-str", "posinf-str", "neginf-complex",
        "atan2_-number"])
def test_wrong_types_are_torchs_type_errors(torch, call):
    x = np.array([1.0, -2.0], np.float32)
    with pytest.raises(TypeError):
        call(torch, torch.tensor(x))
    with pytest.raises(TypeError):
        call(tinygrad_pool, tensor(x))


@pytest.mark.parametrize("call, error", [
    (lambda t, f, i: t.atan2(f, t.ones(3)), RuntimeError),
    (lambda t, f, i: t.copysign(f, t.ones(3)), RuntimeError),
    (lambda t, f, i: t.lerp(f, t.ones(3), 0.5), RuntimeError),
    (lambda t, f, i: t.lerp(f, f, t.ones(3)), RuntimeError),
    (lambda t, f, i: t.lerp(f, f.double(), 0.5), RuntimeError),
    (lambda t, f, i: t.lerp(f, i, 0.5), RuntimeError),
    (lambda t, f, i: t.lerp(f, f, f.double()), RuntimeError),
    (lambda t, f, i: t.lerp(f, f, i), RuntimeError),
    (lambda t, f, i: t.lerp(i, i, 0.5), NotImplementedError),
    (lambda t, f, i: t.lerp(i, i, i), NotImplementedError),
    (lambda t, f, i: t.lerp(f, f, 1j), RuntimeError),
    (lambda t, f, i: i.frac(), NotImplementedError),
    (lambda t, f, i: (i > 0).trunc(), NotImplementedError),
], ids=["atan2-shapes", "copysign-shapes", "lerp-end-shape", "lerp-weight-shape",
        "lerp-end-double", "lerp-end-int", "lerp-weight-double", "lerp-weight-int", "lerp-int",
        "lerp-int-tensors", "lerp-complex-weight", "frac-int", "trunc-bool"])
def test_bad_arguments_raise_torchs_errors(torch, call, error):
    f, i = np.array([1.0, -2.0], np.float32), np.array([1, 2])
    with pytest.raises(error):
        call(torch, torch.tensor(f), torch.tensor(i))
    with pytest.raises(error):
        call(tinygrad_pool, tensor(f), tensor(i))


# ---- in place -------------------------------------------------------------------------------
INPLACE_UNARY = [n for n in UNARY] + ["nan_to_num"]
# torch's backward of these in-place forms raises "the derivative for 'inplace version of
# atanh' is not implemented"; ours is the out-of-place one's (a known difference)
NO_INPLACE_DERIVATIVE_IN_TORCH = ("asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh")


@DTYPES
@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_unary_in_place_forms_match_torch_and_bump_the_version(torch, name, dtype):
    x = (sample(name, (2, 3), seed=2) if name in DOMAINS else
         np.array([[np.nan, 1.0, np.inf], [-np.inf, 2.0, -1.0]])).astype(dtype)
    # through a graph: the input is an intermediate (x * 1), as in-place ops need
    leaf, tleaf = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours, theirs = leaf * 1, tleaf * 1
    version = ours._version
    result = getattr(ours, name + "_")()
    assert result is ours and ours._version == version + 1
    if name in NO_INPLACE_DERIVATIVE_IN_TORCH:  # compared with torch's out-of-place gradient
        theirs = getattr(theirs, name)()
    else:
        getattr(theirs, name + "_")()
        assert theirs._version == ours._version
    compare(ours.detach().numpy(), theirs.detach().numpy(), TOLERANCES[dtype], f"{name}_")
    weights = np.random.default_rng(0).standard_normal(x.shape).astype(dtype)
    ours.backward(tensor(weights))
    theirs.backward(torch.tensor(weights))
    compare(leaf.grad.numpy(), tleaf.grad.numpy(), TOLERANCES[dtype], f"{name}_ gradient")


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("trunc", "fix", "frac")])
def test_float_in_place_forms_refuse_integer_tensors(torch, name):
    for dtype in ("int64", "bool"):
        x = np.array([1, 0]).astype(dtype)
        with pytest.raises(RuntimeError):
            getattr(torch.tensor(x), name + "_")()
        ours = tensor(x)
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(ours, name + "_")()
        assert ours._version == 0


def test_in_place_step_functions_on_integers_are_torchs(torch):
    x = tensor(np.array([1, -2]))
    assert x.trunc_() is x and x._version == 1 and x.tolist() == [1, -2]
    assert x.fix_() is x and x._version == 2
    for name in ("frac_",):
        with pytest.raises(NotImplementedError):
            getattr(torch.tensor([1, 2]), name)()
        with pytest.raises(NotImplementedError):
            getattr(x, name)()
    with pytest.raises(NotImplementedError):
        tensor([True]).trunc_()
    b = tensor(np.array([True, False]))
    assert b.nan_to_num_() is b and b.tolist() == [True, False]


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = tensor(np.array([0.5]), requires_grad=True)
    for call in (lambda: x.tan_(), lambda: x.trunc_(), lambda: x.lerp_(x.detach(), 0.5),
                 lambda: x.atan2_(x.detach()), lambda: x.nan_to_num_()):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            call()
    assert x._version == 0


@DTYPES
@pytest.mark.parametrize("name", ["atan2_", "arctan2_", "copysign_", "lerp_", "lerp_weight"])
def test_binary_in_place_forms_match_torch(torch, name, dtype):
    rng = np.random.default_rng(6)
    x, other = rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((3,)).astype(dtype)
    weight = rng.uniform(0, 1, (2, 1)).astype(dtype)
    leaves = [tensor(x, requires_grad=True), tensor(other, requires_grad=True)]
    tleaves = [torch.tensor(x, requires_grad=True), torch.tensor(other, requires_grad=True)]
    if name == "lerp_weight":
        leaves.append(tensor(weight, requires_grad=True))
        tleaves.append(torch.tensor(weight, requires_grad=True))
    results = []
    for framework, (a, b, *w) in ((tinygrad_pool, leaves), (torch, tleaves)):
        target = a * 1
        if name == "lerp_":
            returned = target.lerp_(b, 0.3)
        elif name == "lerp_weight":
            returned = target.lerp_(b, w[0])
        else:
            returned = getattr(target, name)(b)
        assert returned is target and target._version == 1
        target.backward(framework.ones_like(target))
        results.append((target.detach().numpy(), [t.grad.numpy() for t in (a, b, *w)]))
    (yo, go), (yt, gt) = results
    compare(yo, yt, TOLERANCES[dtype], name)
    for k, (a, b) in enumerate(zip(go, gt)):
        compare(a, b, TOLERANCES[dtype], f"{name} gradient {k}")


def test_binary_in_place_forms_refuse_what_torch_refuses(torch):
    f, i = np.array([1.0, -2.0], np.float32), np.array([1, 2])
    calls = [
        lambda t: t.tensor(i).atan2_(t.tensor(f)),  # a float result into an int tensor
        lambda t: t.tensor(i).copysign_(t.tensor(i)),
        lambda t: t.tensor(f).atan2_(t.ones(2, 2)),  # a larger result than self
        lambda t: t.tensor(f).copysign_(t.ones(3)),
        lambda t: t.tensor(f).lerp_(t.ones(3, 1), 0.5),
        lambda t: t.tensor(f).lerp_(t.tensor(f), t.ones(3, 2)),
        lambda t: t.tensor(f).lerp_(t.tensor(f).double(), 0.5),
    ]
    for call in calls:
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(RuntimeError):
            call(tinygrad_pool)
    with pytest.raises(NotImplementedError):
        tensor(i).lerp_(tensor(i), 0.5)
    ones = tensor(np.ones((2, 2), np.float32))
    assert ones.copysign_(tensor(f)) is ones and ones.tolist() == [[1.0, -1.0], [1.0, -1.0]]
    assert ones._version == 1


def test_in_place_under_no_grad_writes_without_a_graph(torch):
    x = tensor(np.array([0.25, 4.0]), requires_grad=True)
    with tinygrad_pool.no_grad():
        x.log2_()
        x.lerp_(tensor(np.array([1.0, 1.0])), 0.5)
    np.testing.assert_allclose(x.numpy(), [-0.5, 1.5])
    assert x._version == 2 and x.grad_fn is None


# ---- kinks: gradcheck names them ------------------------------------------------------------
def test_gradcheck_names_the_jumps_of_frac_and_copysign():
    x = tensor(np.array([1.0, 0.5]), requires_grad=True)
    report = gradcheck_report(lambda t: t.frac(), [x])
    assert not report.failures
    assert any("Trunc jumps" in k.reason for k in report.kinks)
    a, b = (tensor(np.array(v), requires_grad=True) for v in ([0.0, 2.0], [0.0, 0.0]))
    report = gradcheck_report(lambda p, q: tinygrad_pool.copysign(p, q), [a, b])
    assert not report.failures
    reasons = " ".join(k.reason for k in report.kinks)
    assert "Copysign's input (0,) is 0" in reasons and "SignOf jumps" in reasons


def test_aliases_are_the_same_functions():
    x = tensor(np.array([0.5, -0.25]))
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
                        ("fix", "trunc")):
        np.testing.assert_array_equal(getattr(x, alias)().numpy(), getattr(x, name)().numpy())
    np.testing.assert_array_equal(tinygrad_pool.arctan2(x, x).numpy(), x.atan2(x).numpy())


def test_non_contiguous_and_0d_inputs(torch):
    x = np.random.default_rng(7).uniform(0.1, 0.9, (3, 4))
    for name in ("tan", "asin", "erfc", "log10", "frac", "isnan", "nan_to_num"):
        ours = getattr(tensor(x).t()[::2], name)()
        theirs = getattr(torch.tensor(x).t()[::2], name)()
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
        assert getattr(tensor(0.5), name)().shape == ()
    a, b = tensor(x).t(), tensor(x[:, :1].T.copy())
    np.testing.assert_allclose(tinygrad_pool.atan2(a, b).numpy(),
                               torch.atan2(torch.tensor(x).t(), torch.tensor(x[:, :1].T)).numpy())


# what backward keeps: the output where torch saves its result, else the input (so the same
# in-place edits are refused)
SAVES_OUTPUT = ("tan", "exp2", "expm1", "reciprocal")


@pytest.mark.parametrize("name", [n for n in UNARY if n not in STEP_LIKE])
def test_each_op_saves_what_torch_saves(torch, name):
    x = sample(name, (3,))
    y = getattr(tensor(x, requires_grad=True), name)()
    yt = getattr(torch.tensor(x, requires_grad=True), name)()
    saved = y.grad_fn.saved_for_backward()
    if name in SAVES_OUTPUT:
        assert hasattr(yt.grad_fn, "_saved_result") and list(saved) == ["out"]
        assert saved["out"] is y._data
    else:
        assert hasattr(yt.grad_fn, "_saved_self") and list(saved) == ["x"]


def test_modifying_a_saved_input_in_place_is_refused_as_in_torch():
    x = tensor(np.array([0.5, 0.25]), requires_grad=True)
    h = x * 1
    y = h.asin()
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
