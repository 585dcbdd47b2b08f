"""tinygrad_pool.gradcheck itself: it must pass right gradients and catch wrong ones, loudly."""
import re

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import Node, gradcheck, GradcheckError, Tensor, tensor

from helpers import leaf


class WrongSquare(Node):
    """forward x², but backward forgets the factor 2 (gives x instead of 2x)"""

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return x * x

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


class WrongAtOneElement(Node):
    """a·b with a correct gradient for a, and for b one wrong element (flat index 4, +0.5)"""

    def forward(ctx, a, b):
        ctx.save_for_backward(a=a, b=b)
        return a * b

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_b = grad * a
        grad_b.reshape(-1)[4] += 0.5
        return grad * b, grad_b


class SlightlyWrong(Node):
    """2x whose backward is off by 1e-4 everywhere"""

    def forward(ctx, x):
        return 2 * x

    def backward(ctx, grad):
        return grad * 2 + 1e-4


def test_returns_true_for_correct_gradients(rng):
    inputs = [leaf(rng.standard_normal((2, 3))), leaf(np.abs(rng.standard_normal(3)) + 0.5)]
    assert gradcheck(lambda a, b: (a / b).tanh() * a.exp(), inputs) is True
    assert tinygrad_pool.gradcheck is gradcheck


def test_custom_correct_function_passes():
    class Square(Node):
        def forward(ctx, x):
            ctx.save_for_backward(x=x)
            return x * x

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x

    assert gradcheck(Square.apply, [leaf([1.0, -2.0, 0.5])])


def test_wrong_backward_raises_gradcheck_error():
    with pytest.raises(GradcheckError, match=r"input 0 \(shape \(3,\)\)") as info:
        gradcheck(WrongSquare.apply, [leaf([1.0, -2.0, 0.5])])
    assert isinstance(info.value, AssertionError)
    message = str(info.value)
    assert "element" in message and "difference" in message and "finite differences" in message


def test_error_names_the_input_the_element_and_the_amounts():
    a, b = leaf(np.arange(1.0, 7.0).reshape(2, 3)), leaf(np.full((2, 3), 2.0))
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongAtOneElement.apply, [a, b])
    message = str(info.value)
    assert "input 1" in message and "input 0" not in message
    assert "element (1, 1)" in message  # flat index 4 of a 2×3 array
    assert "1 of 6 elements differ" in message
    # the reported difference is 0.5 times the random weight of that output: check the numbers
    # given are consistent with each other, "backward gives B but finite differences give N"
    backward, numeric, difference = (float(v) for v in re.search(
        r"backward gives (\S+) but finite differences give (\S+) \(difference (\S+) ", message).groups())
    assert difference == pytest.approx(abs(backward - numeric), rel=1e-2)
    assert difference > 0


def test_raise_exception_false_returns_false():
    assert gradcheck(WrongSquare.apply, [leaf([1.0, 2.0])], raise_exception=False) is False


def test_tolerances_are_respected():
    x = [leaf([1.0, 2.0, 3.0])]
    with pytest.raises(GradcheckError):
        gradcheck(SlightlyWrong.apply, x, atol=1e-6, rtol=0)
    assert gradcheck(SlightlyWrong.apply, x, atol=1e-3, rtol=0)
    assert gradcheck(SlightlyWrong.apply, x, atol=0, rtol=1e-3)  # 1e-4 < 1e-3 · |2|


def test_rejects_float32_inputs():
    x = tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    with pytest.raises(TypeError, match="gradcheck: input 0 has dtype float32"):
        gradcheck(lambda t: t * 2, [x])


def test_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="gradcheck: no input has requires_grad"):
        gradcheck(lambda t: t * 2, [tensor([1.0, 2.0])])


def test_fn_must_return_a_tensor():
    with pytest.raises(TypeError, match="gradcheck: fn must return a Tensor"):
        gradcheck(lambda t: 3.0, [leaf([1.0])])


def test_leaves_inputs_as_it_found_them(rng):
    data = rng.standard_normal((2, 2))
    x = leaf(data)
    x.grad = tensor(np.full((2, 2), 7.0))
    constant = tensor(rng.standard_normal((2, 2)))
    assert gradcheck(lambda a, c: a * c, [x, constant])
    np.testing.assert_array_equal(x.numpy(), data)  # perturbations undone exactly
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 7.0))  # grad restored
    assert constant.grad is None


def test_accepts_a_single_tensor():
    assert gradcheck(lambda t: t.exp(), leaf([0.5, 1.0]))
