"""Matrix product with NumPy's batched and 1-D rules, and F.linear."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor

from helpers import check_grad, leaf, torch_parity

SHAPES = [
    ((3,), (3,)),            # 1-D @ 1-D: a dot product, 0-d result
    ((3,), (3, 4)),          # 1-D @ 2-D: a row vector
    ((2, 3), (3,)),          # 2-D @ 1-D: a column vector
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),     # batched @ matrix
    ((2, 3), (5, 3, 4)),     # matrix @ batched
    ((5, 2, 3), (5, 3, 4)),  # same batch
    ((2, 1, 2, 3), (4, 3, 2)),  # batch dims broadcast: (2, 1) with (4,)
    ((3,), (2, 3, 4)),       # 1-D @ batched
    ((2, 4, 3), (3,)),       # batched @ 1-D
]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_gradcheck(rng, shapes):
    check_grad(lambda a, b: a @ b, rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1]))


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_forward_matches_numpy(rng, shapes):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    out = tensor(a) @ tensor(b)
    assert out.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(out.numpy(), a @ b)
    np.testing.assert_allclose(tensor(a).matmul(tensor(b)).numpy(), a @ b)


def test_dot_product_gradient_by_hand():
    # d(a·b)/da = b, d(a·b)/db = a
    a, b = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    y = a @ b
    assert y.shape == () and y.item() == 32.0
    y.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])


def test_constant_operand_gets_no_gradient_and_ndarray_on_the_left_is_recorded(rng):
    w = leaf(rng.standard_normal((3, 2)))
    x = rng.standard_normal((4, 3))
    y = x @ w  # ndarray @ Tensor
    assert isinstance(y, Tensor) and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), x.T @ np.ones((4, 2)))  # ∂/∂W = xᵀ G


def test_broadcast_batch_gradient_is_summed():
    # the (3, 2) matrix is used by all 5 batch entries: its gradient is the sum over them
    a = leaf(np.ones((5, 1, 3)))
    b = leaf(np.ones((3, 2)))
    (a @ b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.full((3, 2), 5.0))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((5, 1, 3), 2.0))


# ---- F.linear -------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 5, 3)], ids=str)
def test_linear_gradcheck(rng, x_shape):
    check_grad(lambda x, w, b: F.linear(x, w, b), rng.standard_normal(x_shape),
               rng.standard_normal((2, 3)), rng.standard_normal(2))
    check_grad(lambda x, w: F.linear(x, w), rng.standard_normal(x_shape), rng.standard_normal((2, 3)))


def test_linear_is_one_node_whose_gradients_are_laid_out_as_the_parameters(rng):
    x = tensor(rng.standard_normal((2, 5, 3)))
    w, b = leaf(rng.standard_normal((4, 3))), leaf(rng.standard_normal(1))  # b expands to 4
    out = F.linear(x, w, b)
    assert out.grad_fn.name == "Linear" and out.grad_fn.parents == (x, w, b)
    out.backward(np.ones((2, 5, 4)))
    np.testing.assert_allclose(w.grad.numpy(), np.ones((10, 4)).T @ x.numpy().reshape(10, 3))
    np.testing.assert_allclose(b.grad.numpy(), [40.0])
    assert w.grad.numpy().flags.c_contiguous  # (no transposed gradient to copy into place)
    check_grad(lambda x, w, b: F.linear(x, w, b), rng.standard_normal((2, 5, 3)),
               rng.standard_normal((4, 3)), rng.standard_normal(1))


def test_linear_forward(rng):
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    np.testing.assert_allclose(F.linear(tensor(x), tensor(w), tensor(b)).numpy(), x @ w.T + b)


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)), ((5, 2, 3), (2, 4))],
                         ids=str)
def test_inner_dimension_mismatch_names_both_shapes(shapes):
    a, b = leaf(np.ones(shapes[0])), leaf(np.ones(shapes[1]))
    with pytest.raises(ValueError, match="matmul") as info:
        a @ b
    assert str(shapes[0]) in str(info.value) and str(shapes[1]) in str(info.value)


def test_batch_dims_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"matmul \(@\): batch .*\(2, 2, 3\).*\(3, 3, 4\)"):
        leaf(np.ones((2, 2, 3))) @ leaf(np.ones((3, 3, 4)))


def test_matmul_of_a_scalar():
    with pytest.raises(ValueError, match=r"matmul \(@\): .*\(\)"):
        leaf(2.0) @ leaf(np.ones(3))


def test_linear_shape_errors():
    with pytest.raises(RuntimeError, match=r"linear: input has shape \(4, 3\) but weight has shape \(2, 5\)"):
        F.linear(leaf(np.ones((4, 3))), leaf(np.ones((2, 5))))


def test_linear_bias_with_wrong_shape():
    with pytest.raises(ValueError, match=r"\(4, 2\).*\(3,\)|\(3,\).*\(4, 2\)"):
        F.linear(leaf(np.ones((4, 3))), leaf(np.ones((2, 3))), leaf(np.ones(3)))


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_matches_torch(torch, rng, shapes):
    torch_parity(torch, lambda a, b: a @ b, rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1]))


@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 5, 3)], ids=str)
def test_linear_matches_torch(torch, rng, x_shape):
    torch_parity(torch, F.linear, rng.standard_normal(x_shape), rng.standard_normal((2, 3)),
                 rng.standard_normal(2), torch_fn=torch.nn.functional.linear)
