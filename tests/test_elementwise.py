"""Elementwise ops: + - * / ** neg exp log sqrt relu sigmoid tanh arctan abs, with broadcasting."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

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
    t = Tensor(x)
    np.testing.assert_allclose((t.exp()).data, np.exp(x))
    np.testing.assert_allclose(t.tanh().data, np.tanh(x))
    np.testing.assert_allclose(t.sigmoid().data, 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(t.arctan().data, np.arctan(x))
    np.testing.assert_allclose(t.abs().data, np.abs(x))
    np.testing.assert_allclose(t.relu().data, np.maximum(x, 0))
    np.testing.assert_allclose((t ** 3).data, x ** 3)
    np.testing.assert_allclose(F.relu(t).data, np.maximum(x, 0))
    np.testing.assert_allclose(F.tanh(t).data, np.tanh(x))
    np.testing.assert_allclose(F.sigmoid(t).data, 1 / (1 + np.exp(-x)))


def test_relu_and_abs_gradient_is_zero_at_zero():
    # PyTorch: relu'(0) = 0 and sign(0) = 0
    x = leaf([-1.0, 0.0, 2.0])
    x.relu().sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0, 1.0])
    y = leaf([-1.0, 0.0, 2.0])
    y.abs().sum().backward()
    np.testing.assert_array_equal(y.grad.data, [-1.0, 0.0, 1.0])


def test_sigmoid_is_stable_for_large_inputs():
    x = leaf([-1000.0, 0.0, 1000.0])
    y = x.sigmoid()
    np.testing.assert_allclose(y.data, [0.0, 0.5, 1.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 0.25, 0.0])


def test_broadcast_gradients_are_summed_back_to_each_input_shape():
    a = leaf(np.ones((2, 3)))
    b = leaf([1.0, 2.0, 3.0])
    c = leaf(4.0)
    (a * b + c).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == ()
    np.testing.assert_allclose(a.grad.data, [[1, 2, 3], [1, 2, 3]])  # ∂/∂a = b
    np.testing.assert_allclose(b.grad.data, [2.0, 2.0, 2.0])  # Σ over the 2 rows of a (= 1)
    np.testing.assert_allclose(c.grad.data, 6.0)  # 6 elements


def test_broadcast_keeps_size_one_axes():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.ones((1, 4)))
    (a + b).sum().backward()
    np.testing.assert_allclose(a.grad.data, np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.data, np.full((1, 4), 3.0))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_ndarray_on_the_left_gives_a_recorded_tensor(name):
    x = leaf([1.0, 2.0, 4.0])
    array = np.array([3.0, 5.0, 7.0])
    y = BINARY[name](array, x)
    assert isinstance(y, Tensor) and y.grad_fn is not None
    np.testing.assert_allclose(y.data, BINARY[name](array, x.data))
    y.sum().backward()
    # d(a∘x)/dx by hand: + → 1, - → -1, * → a, / → -a/x²
    expected = {"add": np.ones(3), "sub": -np.ones(3), "mul": array, "div": -array / x.data ** 2}
    np.testing.assert_allclose(x.grad.data, expected[name])


def test_subtracting_a_constant_gives_no_grad_to_the_constant():
    x = leaf([1.0, 2.0])
    c = Tensor([5.0, 5.0])
    (c - x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [-1.0, -1.0])
    assert c.grad is None


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(BINARY))
def test_broadcast_mismatch_names_op_and_shapes(name):
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4,)))
    with pytest.raises(ValueError, match=rf"{name}: cannot broadcast shapes \(2, 3\) and \(4,\)"):
        BINARY[name](a, b)
    assert a.grad is None and b.grad is None


@pytest.mark.parametrize("exponent", [Tensor(2.0), Tensor([1.0, 2.0]), np.array([1.0, 2.0])])
def test_pow_rejects_tensor_exponent(exponent):
    with pytest.raises(TypeError, match="pow"):
        leaf([1.0, 2.0]) ** exponent


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
