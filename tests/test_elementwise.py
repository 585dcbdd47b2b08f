"""Elementwise ops: + - * / ** neg exp log sqrt relu sigmoid tanh arctan abs, with broadcasting."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor

from helpers import UNARY, check_grad, leaf, torch_parity

POSITIVE_ONLY = {"log", "sqrt", "pow_half", "pow_neg"}

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1,), (5,)),
    ((2, 3, 1), (1, 1, 4)),
]

SCALAR_FORMS = {
    "x+2": lambda x: x + 2,
    "2+x": lambda x: 2 + x,
    "x-2": lambda x: x - 2.0,
    "2-x": lambda x: 2.0 - x,
    "x*3": lambda x: x * 3,
    "3*x": lambda x: 3 * x,
    "x/3": lambda x: x / 3.0,
    "3/x": lambda x: 3.0 / x,
}


def _input(rng, name, shape):
    x = rng.standard_normal(shape)
    if name in POSITIVE_ONLY:
        x = np.abs(x) + 0.5
    return x


# ---- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (2, 3), ()])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck(rng, name, shape):
    check_grad(UNARY[name], _input(rng, name, shape))


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradcheck_with_broadcasting(rng, name, shapes):
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1])
    if name == "div":
        b = np.sign(b) * (np.abs(b) + 0.5)  # keep away from 0
    check_grad(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(SCALAR_FORMS))
def test_python_number_operand_gradcheck(rng, name):
    check_grad(SCALAR_FORMS[name], np.abs(rng.standard_normal((2, 3))) + 0.5)


def test_composite_expression_gradcheck(rng):
    check_grad(lambda a, b: ((a * b).tanh() + (a / (b * b + 1)).sigmoid() - a.arctan()).exp(),
               rng.standard_normal((3, 2)), rng.standard_normal((2,)))


# ---- semantics ------------------------------------------------------------------------------
def test_forward_values_match_numpy(rng):
    x = rng.standard_normal((3, 4))
    t = tensor(x)
    np.testing.assert_allclose((t.exp()).numpy(), np.exp(x))
    np.testing.assert_allclose(t.tanh().numpy(), np.tanh(x))
    np.testing.assert_allclose(t.sigmoid().numpy(), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(t.arctan().numpy(), np.arctan(x))
    np.testing.assert_allclose(t.abs().numpy(), np.abs(x))
    np.testing.assert_allclose(t.relu().numpy(), np.maximum(x, 0))
    np.testing.assert_allclose((t ** 3).numpy(), x ** 3)
    np.testing.assert_allclose(F.relu(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(F.tanh(t).numpy(), np.tanh(x))
    np.testing.assert_allclose(F.sigmoid(t).numpy(), 1 / (1 + np.exp(-x)))


def test_relu_and_abs_gradient_is_zero_at_zero():
    # PyTorch: relu'(0) = 0 and sign(0) = 0
    x = leaf([-1.0, 0.0, 2.0])
    x.relu().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0])
    y = leaf([-1.0, 0.0, 2.0])
    y.abs().sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [-1.0, 0.0, 1.0])


def test_sigmoid_is_stable_for_large_inputs():
    x = leaf([-1000.0, 0.0, 1000.0])
    y = x.sigmoid()
    np.testing.assert_allclose(y.numpy(), [0.0, 0.5, 1.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.25, 0.0])


def test_broadcast_gradients_are_summed_back_to_each_input_shape():
    a = leaf(np.ones((2, 3)))
    b = leaf([1.0, 2.0, 3.0])
    c = leaf(4.0)
    (a * b + c).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == ()
    np.testing.assert_allclose(a.grad.numpy(), [[1, 2, 3], [1, 2, 3]])  # ∂/∂a = b
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 2.0, 2.0])  # Σ over the 2 rows of a (= 1)
    np.testing.assert_allclose(c.grad.numpy(), 6.0)  # 6 elements


def test_broadcast_keeps_size_one_axes():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.ones((1, 4)))
    (a + b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full((1, 4), 3.0))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_ndarray_on_the_left_gives_a_recorded_tensor(name):
    x = leaf([1.0, 2.0, 4.0])
    array = np.array([3.0, 5.0, 7.0])
    y = BINARY[name](array, x)
    assert isinstance(y, Tensor) and y.grad_fn is not None
    np.testing.assert_allclose(y.numpy(), BINARY[name](array, x.numpy()))
    y.sum().backward()
    # d(a∘x)/dx by hand: + → 1, - → -1, * → a, / → -a/x²
    expected = {"add": np.ones(3), "sub": -np.ones(3), "mul": array, "div": -array / x.numpy() ** 2}
    np.testing.assert_allclose(x.grad.numpy(), expected[name])


def test_subtracting_a_constant_gives_no_grad_to_the_constant():
    x = leaf([1.0, 2.0])
    c = tensor([5.0, 5.0])
    (c - x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -1.0])
    assert c.grad is None


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(BINARY))
def test_broadcast_mismatch_names_op_and_shapes(name):
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4,)))
    with pytest.raises(ValueError, match=rf"{name}( \(\S+\))?: cannot broadcast shapes \(2, 3\) and \(4,\)"):
        BINARY[name](a, b)
    assert a.grad is None and b.grad is None


def test_pow_operators_take_tensor_exponents_and_number_bases(torch, rng):
    # x ** tensor and number ** x go through the same op as torch.pow (gradients to both)
    base, exponent = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(-1.0, 2.0, (2, 3))
    torch_parity(torch, lambda a, b: a ** b, base, exponent)
    torch_parity(torch, lambda a: 2.0 ** a, exponent)


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch(torch, rng, name):
    x = _input(rng, name, (3, 4))
    if name in ("relu", "abs"):
        x[0, :2] = 0.0  # the kinks, where PyTorch's subgradient is 0
    torch_parity(torch, UNARY[name], x)


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_torch(torch, rng, name, shapes):
    a = rng.standard_normal(shapes[0])
    b = np.abs(rng.standard_normal(shapes[1])) + 0.5
    torch_parity(torch, BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(SCALAR_FORMS))
def test_python_number_operand_matches_torch(torch, rng, name):
    torch_parity(torch, SCALAR_FORMS[name], np.abs(rng.standard_normal((2, 3))) + 0.5)


# =============================================================================================
# The torch porting surface: log1p rsqrt sin cos sign floor ceil round maximum minimum where
# pow (tensor exponent, number base) clamp (tensor bounds), and torch's type promotion.
# =============================================================================================
from hypothesis import given, settings, strategies as st  # noqa: E402
from tinygrad_pool import autograd  # noqa: E402
from tinygrad_pool.ops import elementwise as E  # noqa: E402

FAST = settings(max_examples=25, deadline=None)


def _first_and_second_order(torch, fn, torch_fn, arrays, dtype, rtol, atol, second_order=True):
    """Outputs, gradients (for one random output weighting) and, where the gradient is itself
    differentiable, the gradient of Σ v·gradient (double backward), in both libraries."""
    arrays = [np.asarray(a) for a in arrays]
    ours = [tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    out, tout = fn(*ours), torch_fn(*theirs)
    assert out.dtype == np.dtype(str(tout.dtype).replace("torch.", "")), (out.dtype, tout.dtype)
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg="forward differs from torch")
    rng = np.random.default_rng(7)
    weights = rng.standard_normal(out.shape).astype(dtype)
    grads = autograd.grad(out, ours, tensor(weights), create_graph=True, allow_unused=True)
    tgrads = torch.autograd.grad(tout, theirs, torch.tensor(weights), create_graph=True,
                                 allow_unused=True)
    for k, (g, tg) in enumerate(zip(grads, tgrads)):
        expected = np.zeros(arrays[k].shape) if tg is None else tg.detach().numpy(force=True)
        got = np.zeros(arrays[k].shape) if g is None else g.numpy()
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k} differs from torch")
    if not second_order:
        return
    directions = [rng.standard_normal(np.shape(a)).astype(dtype) for a in arrays]
    ours_sum = [(g * tensor(v)).sum() for g, v in zip(grads, directions)
                if g is not None and g.requires_grad]
    theirs_sum = [(g * torch.tensor(v)).sum() for g, v in zip(tgrads, directions)
                  if g is not None and g.requires_grad]
    second = [None] * len(arrays) if not ours_sum else autograd.grad(
        sum(ours_sum[1:], ours_sum[0]), ours, allow_unused=True)
    tsecond = [None] * len(arrays) if not theirs_sum else torch.autograd.grad(
        sum(theirs_sum), theirs, allow_unused=True)
    for k, (g, tg) in enumerate(zip(second, tsecond)):
        expected = np.zeros(arrays[k].shape) if tg is None else tg.detach().numpy(force=True)
        got = np.zeros(arrays[k].shape) if g is None else g.numpy()
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                   err_msg=f"second derivative of input {k} differs from torch")


def full_parity(torch, fn, *arrays, torch_fn=None):
    """Forward, backward and double backward against torch, in float64 (1e-10) and float32
    (1e-5)."""
    for dtype, rtol, atol in ((np.float64, 1e-10, 1e-12), (np.float32, 1e-5, 1e-6)):
        _first_and_second_order(torch, fn, torch_fn or fn, arrays, dtype, rtol, atol)


TORCH_UNARY = {  # name: (ours, positive inputs only)
    "log1p": (E.log1p, True), "rsqrt": (E.rsqrt, True), "sin": (E.sin, False),
    "cos": (E.cos, False),
}


@pytest.mark.parametrize("shape", [(5,), (2, 3), ()])
@pytest.mark.parametrize("name", sorted(TORCH_UNARY))
def test_new_unary_gradcheck(rng, name, shape):
    fn, positive = TORCH_UNARY[name]
    x = rng.standard_normal(shape)
    check_grad(fn, np.abs(x) + 0.5 if positive else x)


@pytest.mark.parametrize("name", sorted(TORCH_UNARY))
def test_new_unary_matches_torch(torch, rng, name):
    fn, positive = TORCH_UNARY[name]
    x = rng.standard_normal((3, 4))
    full_parity(torch, fn, np.abs(x) + 0.5 if positive else x,
                torch_fn=getattr(torch, name))


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round"])
def test_step_functions_match_torch_with_zero_gradient(torch, name):
    x = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 0.3, -0.7, 3.0])
    _first_and_second_order(torch, getattr(E, name), getattr(torch, name), [x], np.float64, 0, 0)
    t = tensor(x, requires_grad=True)
    getattr(E, name)(t).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.zeros(10))  # zeros, not None, as torch


@pytest.mark.parametrize("decimals", [1, 2, -1, -2])
def test_round_decimals_matches_torch(torch, rng, decimals):
    x = rng.standard_normal(50) * 300
    x[:4] = [1.25, 1.35, 12.5, 125.0]
    for dtype in (np.float64, np.float32):
        ours = E.round(tensor(x.astype(dtype)), decimals=decimals)
        theirs = torch.round(torch.tensor(x.astype(dtype)), decimals=decimals)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_round_half_to_even_and_integer_inputs():
    np.testing.assert_array_equal(E.round(tensor([0.5, 1.5, 2.5, -0.5, -1.5])).numpy(),
                                  [0.0, 2.0, 2.0, -0.0, -2.0])
    ints = tensor(np.array([1, -2, 3]))
    for name in ("sign", "floor", "ceil", "round"):
        out = getattr(E, name)(ints)
        assert out.dtype == np.int64
    np.testing.assert_array_equal(E.sign(ints).numpy(), [1, -1, 1])
    with pytest.raises(NotImplementedError, match="round.*decimals=1.*int64"):
        E.round(ints, decimals=1)


# ---- maximum / minimum ------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_gradcheck(rng, op, shapes):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])  # no ties
    check_grad(getattr(E, op), a, b)


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_with_ties_match_torch(torch, rng, op, shapes):
    a = rng.integers(0, 3, size=shapes[0]).astype(float)  # many ties
    b = rng.integers(0, 3, size=shapes[1]).astype(float)
    full_parity(torch, getattr(E, op), a, b, torch_fn=getattr(torch, op))


def test_maximum_ties_split_half_and_half():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([1.0, 1.0, 4.0])
    E.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0, 1.0])
    a, b = leaf([1.0, 2.0]), leaf([1.0, 1.0])
    E.minimum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 1.0])


def test_maximum_propagates_nan_as_torch(torch):
    a, b = [1.0, np.nan, 2.0], [np.nan, 1.0, 1.0]
    full_parity(torch, E.maximum, a, b, torch_fn=torch.maximum)


# ---- where ------------------------------------------------------------------------------------
WHERE_SHAPES = [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((4,), (2, 1, 4), ()),
                ((), (2, 3), (3,))]


@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_gradcheck_and_torch(torch, rng, shapes):
    condition = tensor(rng.random(shapes[0]) > 0.5)
    tcondition = torch.tensor(condition.numpy())
    a, b = rng.standard_normal(shapes[1]), rng.standard_normal(shapes[2])
    check_grad(lambda x, y: E.where(condition, x, y), a, b)
    full_parity(torch, lambda x, y: E.where(condition, x, y), a, b,
                torch_fn=lambda x, y: torch.where(tcondition, x, y))


def test_where_with_number_operands(torch, rng):
    condition = rng.random((2, 3)) > 0.5
    x = rng.standard_normal((2, 3))
    full_parity(torch, lambda t: E.where(tensor(condition), t, 0.5), x,
                torch_fn=lambda t: torch.where(torch.tensor(condition), t, 0.5))
    full_parity(torch, lambda t: E.where(tensor(condition), -1, t), x,
                torch_fn=lambda t: torch.where(torch.tensor(condition), -1, t))
    both = E.where(tensor(condition), 1.0, 0.0)
    assert both.dtype == np.float32  # two Python floats: torch's default dtype
    np.testing.assert_array_equal(both.numpy(), condition.astype(np.float32))


def test_where_gradient_goes_to_the_chosen_side_only():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([10.0, 20.0, 30.0])
    out = E.where(tensor([True, False, True]), a, b)
    np.testing.assert_array_equal(out.numpy(), [1.0, 20.0, 3.0])
    out.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 2.0, 0.0])


# ---- pow with a tensor exponent, and a number base ----------------------------------------------
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_pow_tensor_exponent_gradcheck_and_torch(torch, rng, shapes):
    base = np.abs(rng.standard_normal(shapes[0])) + 0.5
    exponent = rng.standard_normal(shapes[1])
    check_grad(E.pow, base, exponent)
    full_parity(torch, E.pow, base, exponent, torch_fn=torch.pow)


def test_pow_edge_cases_match_torch(torch):
    # 0⁰, 0², a negative base to an integer power, and to a fraction (nan), as torch
    base = [0.0, 0.0, 2.0, -1.0, -2.0, 3.0]
    exponent = [0.0, 2.0, 0.5, 2.0, 3.0, 0.0]
    # (first order only: at these singular points the second derivatives are nan or not by
    # accident of how each library orders its products)
    _first_and_second_order(torch, E.pow, torch.pow, [base, exponent], np.float64, 1e-12, 1e-12,
                            second_order=False)
    x = leaf([0.0, 1.0])  # p = 0: gradient 0 even at x = 0 (not 0 · 0⁻¹ = nan)
    E.pow(x, 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("base", [2, 0.5, 2.5])
def test_number_to_a_tensor_power(torch, rng, base):
    x = rng.standard_normal((2, 3))
    check_grad(lambda t: E.pow(base, t), x)
    full_parity(torch, lambda t: E.pow(base, t), x, torch_fn=lambda t: base ** t)


def test_zero_to_a_tensor_power_matches_torch(torch):
    _first_and_second_order(torch, lambda t: E.pow(0.0, t), lambda t: 0.0 ** t,
                            [[0.0, 1.0, 2.0, -1.0]], np.float64, 0, 0, second_order=False)


def test_integer_powers_as_torch(torch):
    ints = np.array([-2, -1, 0, 1, 2, 3])
    for exponent in ([2, 2, 3, 1, 0, 2], [-1, -1, 2, -2, -3, 1]):
        np.testing.assert_array_equal(
            E.pow(tensor(ints), tensor(np.array(exponent))).numpy(),
            torch.pow(torch.tensor(ints), torch.tensor(exponent)).numpy())
    assert E.pow(tensor(ints), 2).dtype == np.int64
    assert E.pow(tensor(ints), 0.5).dtype == np.float32
    with pytest.raises(RuntimeError, match="pow: integers to negative integer powers.*-1"):
        E.pow(tensor(ints), -1)


# ---- clamp with tensor bounds -------------------------------------------------------------------
CLAMP_CASES = {
    "both": lambda clamp, x, lo, hi: clamp(x, lo, hi),
    "min only": lambda clamp, x, lo, hi: clamp(x, min=lo),
    "max only": lambda clamp, x, lo, hi: clamp(x, max=hi),
}


@pytest.mark.parametrize("case", sorted(CLAMP_CASES))
def test_clamp_tensor_bounds_match_torch(torch, rng, case):
    # integers: ties between x and a bound, and lo > hi and lo = hi columns — torch's masks
    x = rng.integers(0, 5, size=(6, 4)).astype(float)
    lo = np.array([1.0, 2.0, 3.0, 2.0])
    hi = np.array([0.0, 4.0, 3.0, 3.0])
    fn = CLAMP_CASES[case]
    full_parity(torch, lambda *t: fn(E.clamp, *t), x, lo, hi,
                torch_fn=lambda *t: fn(torch.clamp, *t))


def test_clamp_tensor_bounds_gradcheck(rng):
    x = rng.standard_normal((3, 4)) * 2
    lo, hi = rng.standard_normal(4) - 1, rng.standard_normal((3, 1)) + 1.2
    check_grad(lambda a, b, c: E.clamp(a, b, c), x, lo, hi)


def test_clamp_number_bounds_promote_as_torch(torch):
    ints = np.array([1, 5, 9])
    ours = E.clamp(tensor(ints), 2.5, 6)
    theirs = torch.clamp(torch.tensor(ints), 2.5, 6)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- hypothesis: broadcasting shapes ------------------------------------------------------------
def _broadcast_pair():
    shape = st.lists(st.integers(1, 3), min_size=0, max_size=3)
    return st.tuples(shape, st.lists(st.booleans(), min_size=3, max_size=3)).map(
        lambda s: (tuple(s[0]), tuple(1 if drop else n for n, drop in zip(s[0], s[1]))))


@FAST
@given(shapes=_broadcast_pair(), seed=st.integers(0, 2 ** 16))
def test_binary_ops_on_random_broadcasts_match_torch(shapes, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=shapes[0]).astype(float)  # ties for maximum
    b = rng.integers(-2, 3, size=shapes[1]).astype(float)
    condition = rng.random(shapes[1]) > 0.5
    for ours, theirs, x, y in (
            (E.maximum, torch.maximum, a, b), (E.minimum, torch.minimum, b, a),
            (E.pow, torch.pow, np.abs(a) + 0.5, b),
            (lambda p, q: E.where(tensor(condition), p, q),
             lambda p, q: torch.where(torch.tensor(condition), p, q), a, b)):
        _first_and_second_order(torch, ours, theirs, [x, y], np.float64, 1e-10, 1e-12)


# ---- type promotion -----------------------------------------------------------------------------
PROMOTION_CASES = [  # operands, as (kind, dtype or number)
    (("t", "int64"), 1.5), (("t", "int64"), 2), (("t", "bool"), 1), (("t", "bool"), True),
    (("t", "int8"), 1000), (("t", "int32"), ("0", "float64")), (("t", "float32"), ("0", "float64")),
    (("t", "float16"), 1.5), (("t", "int64"), ("t", "float16")), (("t", "uint8"), ("t", "int8")),
    (("0", "int64"), ("t", "bool")), (("0", "float64"), 2.5), (("t", "bool"), ("0", "int32")),
    (("t", "int32"), ("t", "int64")),
]


@pytest.mark.parametrize("operands", PROMOTION_CASES, ids=str)
def test_result_dtype_matches_torch(torch, operands):
    def make(library, spec):
        if not isinstance(spec, tuple):
            return spec
        shape = (2,) if spec[0] == "t" else ()
        array = np.ones(shape, dtype=spec[1])
        return tensor(array) if library == "ours" else torch.tensor(array)

    ours = E.result_dtype(*[make("ours", s) for s in operands])
    theirs = torch.result_type(*[make("torch", s) for s in operands])
    assert str(ours) == str(theirs).replace("torch.", "")


def test_ops_promote_their_operands(torch):
    ints, floats = np.array([1, 2, 3]), np.array([0.5, 2.5, 1.0], dtype=np.float32)
    assert E.maximum(tensor(ints), tensor(floats)).dtype == np.float32
    assert E.where(tensor(np.array([True, False, True])), tensor(ints), 1.5).dtype == np.float32
    assert E.sin(tensor(ints)).dtype == np.float32  # integers go to the default float dtype
    assert E.log1p(tensor(np.array([True]))).dtype == np.float32
    np.testing.assert_allclose(E.rsqrt(tensor(ints)).numpy(), torch.rsqrt(torch.tensor(ints)).numpy())
    # a float32 tensor and a float64 one with dims: float64, and the cast stays in the graph
    x = tensor(floats, requires_grad=True)
    y = tensor(np.ones(3), requires_grad=True)
    out = E.maximum(x, y)
    assert out.dtype == np.float64
    out.sum().backward()
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64


# ---- errors ------------------------------------------------------------------------------------
def test_new_elementwise_errors_are_torchs():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"maximum\(\): argument 'other' must be Tensor, not float"):
        E.maximum(x, 2.0)
    with pytest.raises(TypeError, match=r"sin\(\): argument 'input' must be Tensor, not list"):
        E.sin([1.0])
    with pytest.raises(RuntimeError, match="where: expected condition to be a boolean tensor.*int64"):
        E.where(tensor(np.array([1, 0, 1])), x, 0.0)
    with pytest.raises(RuntimeError, match=r"where: cannot broadcast .*\(2,\).*\(3,\)"):
        E.where(tensor(np.array([True, False])), x, 0.0)
    with pytest.raises(TypeError, match=r"where\(\): argument 'other' must be Tensor or Number, not str"):
        E.where(tensor(np.array([True, False, True])), x, "0")
    with pytest.raises(RuntimeError, match="clamp: at least one of 'min' or 'max'"):
        E.clamp(x)
    with pytest.raises(TypeError, match="clamp.*both be Tensors or both be numbers.*max=float"):
        E.clamp(x, min=tensor([0.0]), max=2.0)
    with pytest.raises(RuntimeError, match=r"maximum: cannot broadcast shapes \(3,\) and \(2,\)"):
        E.maximum(x, leaf([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"round\(\): argument 'decimals' must be int, not float"):
        E.round(x, decimals=1.0)
    assert x.grad is None


def test_relu_passes_the_gradient_of_a_nan_as_torch(torch):
    x = np.array([np.nan, -1.0, 0.0, 2.0])
    ours, theirs = leaf(x), torch.tensor(x, requires_grad=True)
    ours.relu().sum().backward()
    theirs.relu().sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())  # [1, 0, 0, 1]
