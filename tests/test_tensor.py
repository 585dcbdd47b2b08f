"""The Tensor itself: construction, dtypes, attributes, repr, backward(), no_grad()."""
import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from helpers import UNARY
from tinygrad_pool import no_grad, Tensor, tensor


# ---- construction and dtypes ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floating_arrays_keep_their_dtype(dtype):
    t = tensor(np.arange(6, dtype=dtype).reshape(2, 3))
    assert t.dtype == dtype
    assert t.shape == (2, 3) and t.ndim == 2
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3))


def test_python_data_follows_torchs_inference():
    assert tensor([1.0, 2.0]).dtype == np.float32 and Tensor([1.0, 2.0]).dtype == np.float32
    assert tensor(3.5).dtype == np.float32 and tensor(3.5).shape == ()
    assert tensor([[1, 2], [3, 4]]).dtype == np.int64 and Tensor([[1, 2]]).dtype == np.float32
    assert tensor(7).shape == () and tensor(7).item() == 7
    assert tensor(np.arange(2.0)).dtype == np.float64 and Tensor(np.arange(2.0)).dtype == np.float32


def test_dtype_argument_converts():
    t = tensor([1, 2, 3], dtype=np.float32, requires_grad=True)
    assert t.dtype == np.float32 and t.requires_grad


def test_tensor_from_tensor_copies_its_data_not_its_graph():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = tensor(x * 2)
    assert y.grad_fn is None and y.is_leaf and not y.requires_grad
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("data", [[1, 2, 3], np.arange(3), 5, [True, False]])
def test_requires_grad_on_non_float_data_raises_torchs_runtime_error(data):
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        tensor(data, requires_grad=True)


def test_non_numeric_data_raises_type_error():
    with pytest.raises(TypeError, match="Tensor"):
        Tensor({"a": 1})


# float32 must stay float32 through every op, also when a Python number is the other operand;
# the gradient of a float32 leaf is float32.
FLOAT32_OPS = {
    "add_scalar": lambda x: x + 1,
    "radd_scalar": lambda x: 1.5 + x,
    "sub_scalar": lambda x: x - 2.0,
    "rsub_scalar": lambda x: 1.0 - x,
    "mul_scalar": lambda x: x * 3,
    "rmul_scalar": lambda x: 0.5 * x,
    "div_scalar": lambda x: x / 3.0,
    "rdiv_scalar": lambda x: 2.0 / x,
    **UNARY,  # neg, exp, log, …, powers: the input below is positive
    "sum": lambda x: x.sum(axis=1),
    "mean": lambda x: x.mean(),
    "max": lambda x: x.amax(dim=0),
    "reshape": lambda x: x.reshape(-1),
    "transpose": lambda x: x.T,
    "index": lambda x: x[[0, 0], 1:],
    "matmul": lambda x: x @ x.T,
    "log_softmax": lambda x: x.log_softmax(1),
    "sum_of_squares": lambda x: F.sum_of_squares(x),
    "conv2d": lambda x: F.conv2d(x.reshape(1, 1, 2, 3), tensor(np.ones((1, 1, 2, 2), np.float32))),
    "max_pool2d": lambda x: F.max_pool2d(x.reshape(1, 1, 2, 3), (2, 2), stride=1),
    "avg_pool2d": lambda x: F.avg_pool2d(x.reshape(1, 1, 2, 3), (2, 2), stride=1),
}


@pytest.mark.parametrize("op", sorted(FLOAT32_OPS))
def test_float32_stays_float32_and_grad_has_leaf_dtype(op):
    x = tensor(np.array([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], dtype=np.float32), requires_grad=True)
    y = FLOAT32_OPS[op](x)
    assert y.dtype == np.float32, f"{op} gave {y.dtype}"
    y.backward(np.ones(y.shape))
    assert x.grad.dtype == np.float32
    assert x.grad.shape == x.shape


def test_gradient_of_float32_leaf_is_float32_when_mixed_with_float64():
    x32 = tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    x64 = tensor(np.array([3.0, 4.0]), requires_grad=True)
    (x32 * x64).sum().backward()
    assert x32.grad.dtype == np.float32 and x64.grad.dtype == np.float64
    np.testing.assert_allclose(x32.grad.numpy(), [3.0, 4.0])  # d(x32·x64)/dx32 = x64
    np.testing.assert_allclose(x64.grad.numpy(), [1.0, 2.0])


# ---- attributes -----------------------------------------------------------------------------
def test_item_and_numpy():
    assert tensor([[2.5]]).item() == 2.5
    assert isinstance(Tensor([1.0]).numpy(), np.ndarray)
    with pytest.raises(RuntimeError, match=r"item: a Tensor with 2 elements cannot be "
                                           r"converted to Scalar \(input has shape \[2\]\)"):
        tensor([1.0, 2.0]).item()


def test_detach_shares_values_but_not_the_graph():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.detach()
    assert d.is_leaf and d.grad_fn is None and not d.requires_grad
    np.testing.assert_array_equal(d.numpy(), [3.0, 6.0])
    # a detached value is a constant: the gradient flows only through the attached path
    (y * d).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * d.numpy())  # d(3x · const)/dx = 3 · const


def test_leaf_and_grad_fn():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.requires_grad
    assert isinstance(y.grad_fn, tinygrad_pool.Node) and y.grad_fn.name == "Exp"
    assert y.grad_fn.parents[0] is x
    c = tensor([1.0, 2.0]).exp()  # nothing requires grad: nothing recorded
    assert c.grad_fn is None and not c.requires_grad


def test_repr_is_helpful():
    x = Tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True, name="w")
    text = repr(x)
    assert "float32" in text and "requires_grad=True" in text and "'w'" in text
    assert "1." in text and "2." in text
    y = x * 2
    assert "grad_fn=<Mul>" in repr(y)
    plain = repr(tensor([1, 2]))
    assert "int" in plain and "requires_grad" not in plain and "grad_fn" not in plain
    assert x.name == "w" and y.name is None


# ---- backward -------------------------------------------------------------------------------
def test_backward_of_a_simple_expression():
    # y = Σ (a·b + a²): ∂y/∂a = b + 2a, ∂y/∂b = a (by hand)
    a = tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = tensor([4.0, 5.0, 6.0], requires_grad=True)
    (a * b + a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [4 + 2, 5 - 4, 6 + 6])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, -2.0, 3.0])
    assert isinstance(a.grad, Tensor) and a.grad.grad_fn is None


def test_long_chain_backpropagates_without_recursion_error():
    x = tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    y = x
    for _ in range(50_000):  # 100,000 ops
        y = y * 1.0001
        y = y + 0.5
    y.sum().backward()
    # each multiply scales the derivative by 1.0001, each add leaves it alone
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 1.0001 ** 50_000), rtol=1e-9)


def test_nodes_are_keyed_by_identity_not_value():
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([1.0, 2.0], requires_grad=True)  # equal values, a different node
    u, v = a * 1.0, b * 1.0  # equal non-leaf values too
    (u * 2 + v * 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 3.0])


def test_diamond_sums_gradients_of_a_reused_non_leaf():
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = (x * x).retain_grad()  # used twice below
    y = (h * 2 + h * 3).sum()  # y = 5 Σx², so ∂y/∂h = 5 and ∂y/∂x = 10x
    y.backward()
    np.testing.assert_allclose(h.grad.numpy(), [5.0, 5.0, 5.0])
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 20.0, 30.0])


def test_same_tensor_as_both_operands():
    x = tensor([3.0], requires_grad=True)
    (x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_gradients_accumulate_across_separate_graphs():
    x = tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_retain_graph_allows_a_second_backward_that_doubles_the_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    product = y.grad_fn.parents[0].grad_fn  # Mul saved both factors; Sum saves no array
    assert product.saved_for_backward() and not product.released and not y.grad_fn.released
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_non_scalar_output_needs_a_gradient():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"\(2,\)"):
        y.backward()
    assert x.grad is None
    y.backward(np.array([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_gradient_argument_may_be_a_tensor():
    x = tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(gradient=tensor([3.0, 4.0]))
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 8.0])


def test_wrong_shape_gradient_raises():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises((ValueError, RuntimeError), match=r"\(3,\).*\(2,\)"):
        y.backward(np.ones(3))
    assert x.grad is None


def test_backward_releases_saved_buffers():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    fn = y.grad_fn
    assert set(fn.saved_for_backward()) >= {"a", "b"} and not fn.released
    y.sum().backward()
    assert fn.saved_for_backward() == {}
    assert fn.released


def test_second_backward_raises_before_any_gradient_changes():
    x = tensor([1.0, 2.0], requires_grad=True)
    w = tensor([5.0, 7.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    # a new graph that reaches the freed one: the fresh part (w) comes first in the reverse walk
    z = (w * 3).sum() + y
    with pytest.raises(RuntimeError, match="retain_graph"):
        z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert w.grad is None
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="requires? grad"):
        tensor([1.0]).sum().backward()


def test_non_leaf_keeps_grad_only_after_retain_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    h1 = x * 2
    h2 = (x * 3).retain_grad()
    (h1 * h2).sum().backward()  # ∂/∂h1 = h2 = 3x, ∂/∂h2 = h1 = 2x
    assert h1.grad is None
    np.testing.assert_allclose(h2.grad.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 24.0])  # 12x


def test_retained_non_leaf_grad_accumulates_like_a_leaf():
    a = tensor([1.0, 2.0], requires_grad=True)
    h = (a * 2).retain_grad()
    y = (h * h).sum()  # ∂y/∂h = 2h = 4a, ∂y/∂a = 8a
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * np.array([4.0, 8.0]))
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.array([8.0, 16.0]))


def test_leaf_without_requires_grad_gets_no_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    c = tensor([3.0, 4.0])
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_grad_is_a_private_copy():
    # Add hands one gradient array to both inputs; editing one .grad must not change the other
    a = tensor([1.0], requires_grad=True)
    b = tensor([1.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.numpy()[0] = 100.0
    assert b.grad.numpy()[0] == 1.0


# ---- no_grad --------------------------------------------------------------------------------
def test_no_grad_context_manager():
    x = tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        assert not tinygrad_pool.is_grad_enabled()
        y = x * 2
    assert tinygrad_pool.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    assert (x * 2).requires_grad


def test_no_grad_decorator():
    @no_grad()
    def double(t):
        return t * 2

    y = double(tensor([1.0], requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None
    assert tinygrad_pool.is_grad_enabled()


def test_no_grad_restores_state_after_exception():
    with pytest.raises(ZeroDivisionError):
        with no_grad():
            1 / 0
    assert tinygrad_pool.is_grad_enabled()
    assert (tensor([1.0], requires_grad=True) * 2).grad_fn is not None


def test_no_grad_nested_restores_previous_state():
    with no_grad():
        with no_grad():
            pass
        assert not tinygrad_pool.is_grad_enabled()
    assert tinygrad_pool.is_grad_enabled()


def test_numpy_scalars_keep_float32():
    import numpy as np
    from tinygrad_pool import Tensor
    x = tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    for y in (x * np.int64(3), x + np.float64(0.5), np.float64(2.0) * x):
        assert y.dtype == np.float32
    (x * np.float64(2.0)).sum().backward()
    assert x.grad.dtype == np.float32
