"""Reductions: sum, mean, max over axes (int, tuple, None), keepdims, and PyTorch's dim/keepdim."""
import numpy as np
import pytest

from tinygrad_pool import Tensor

from helpers import check_grad, leaf, torch_parity

AXES = [None, 0, 1, -1, (0, 2), (2, 0), (0, 1, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reduce_gradcheck(rng, op, axis, keepdims):
    # random floats: no ties, so max is differentiable everywhere
    check_grad(lambda x: getattr(x, op)(axis=axis, keepdims=keepdims), rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reduce_of_1d_and_0d(rng, op):
    check_grad(lambda x: getattr(x, op)(), rng.standard_normal(5))
    check_grad(lambda x: getattr(x, op)(), rng.standard_normal(()))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reduce_forward_matches_numpy(rng, op, axis, keepdims):
    x = rng.standard_normal((2, 3, 4))
    out = getattr(Tensor(x), op)(axis=axis, keepdims=keepdims)
    expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_pytorch_dim_keepdim_spelling(rng, op):
    x = rng.standard_normal((2, 3, 4))
    a, b = leaf(x), leaf(x)
    ya = getattr(a, op)(dim=1, keepdim=True)
    yb = getattr(b, op)(axis=1, keepdims=True)
    assert ya.shape == yb.shape == (2, 1, 4)
    np.testing.assert_array_equal(ya.data, yb.data)
    w = rng.standard_normal(ya.shape)
    ya.backward(w)
    yb.backward(w)
    np.testing.assert_array_equal(a.grad.data, b.grad.data)
    assert getattr(Tensor(x), op)(dim=(0, 2)).shape == (3,)


def test_full_reduction_is_0d():
    y = leaf(np.ones((2, 3))).sum()
    assert y.shape == () and y.item() == 6.0


def test_sum_and_mean_gradients_by_hand():
    x = leaf(np.ones((2, 3)))
    x.mean(axis=1).sum().backward()  # each row's mean: ∂/∂x = 1/3
    np.testing.assert_allclose(x.grad.data, np.full((2, 3), 1 / 3))
    y = leaf(np.ones((2, 3)))
    y.sum(axis=0).backward(np.array([1.0, 2.0, 3.0]))  # column j receives g_j
    np.testing.assert_allclose(y.grad.data, [[1, 2, 3], [1, 2, 3]])


def test_max_ties_split_the_gradient_equally():
    # hand-derived: the max 3 appears twice, so each copy gets 1/2 (torch.amax's rule)
    x = leaf([1.0, 3.0, 3.0, 2.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 0.5, 0.5, 0.0])
    # per row: row 0 = [1, 1] (a tie: 1/2 each), row 1 = [2, 0] (one max)
    y = leaf([[1.0, 1.0], [2.0, 0.0]])
    y.max(axis=1).backward(np.array([1.0, 4.0]))
    np.testing.assert_allclose(y.grad.data, [[0.5, 0.5], [4.0, 0.0]])
    # three-way tie over a tuple of axes: 1/3 each
    z = leaf(np.array([[[5.0, 1.0], [5.0, 0.0]], [[5.0, 2.0], [1.0, 1.0]]]))
    z.max(axis=(0, 1)).backward(np.array([3.0, 6.0]))
    np.testing.assert_allclose(z.grad.data, [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 6.0], [0.0, 0.0]]])


def test_argmax_is_an_integer_index():
    x = Tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 1.0]])
    np.testing.assert_array_equal(x.argmax(axis=1).data, [1, 0])
    np.testing.assert_array_equal(x.argmax(dim=0).data, [1, 0, 0])
    assert x.argmax().item() == 3


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("axis", [3, -4, (0, 5)], ids=str)
def test_axis_out_of_range(op, axis):
    with pytest.raises(ValueError, match=rf"{op}: axis .*out of range.*3 dimensions"):
        getattr(leaf(np.ones((2, 3, 4))), op)(axis=axis)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_axis_named_twice(op):
    with pytest.raises(ValueError, match=rf"{op}: axis .*twice.*\(2, 3\)"):
        getattr(leaf(np.ones((2, 3))), op)(axis=(1, -1))


def test_max_of_empty_tensor():
    with pytest.raises(ValueError, match=r"max: .*empty.*\(0, 3\)"):
        leaf(np.ones((0, 3))).max()


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_matches_torch(torch, rng, op, dim, keepdim):
    x = rng.standard_normal((2, 3, 4))
    ours_op = "max" if op == "amax" else op

    def ours(t):
        return getattr(t, ours_op)(dim=dim, keepdim=keepdim)

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

    torch_parity(torch, lambda t: t.max(dim=dim), x, torch_fn=theirs)
