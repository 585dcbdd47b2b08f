"""Losses: sum_of_squares, mse_loss, log_softmax / softmax, cross_entropy."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

from helpers import check_grad, leaf, torch_parity

REDUCTIONS = ["mean", "sum", "none"]
LABELS = np.array([2, 0, 4, 4])  # for 4×5 logits


# ---- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), ()], ids=str)
def test_sum_of_squares_gradcheck(rng, shape):
    check_grad(F.sum_of_squares, rng.standard_normal(shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_gradcheck(rng, reduction):
    # both input and target may require grad
    check_grad(lambda x, t: F.mse_loss(x, t, reduction=reduction),
               rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    target = Tensor(rng.standard_normal((3, 4)))
    check_grad(lambda x: F.mse_loss(x, target, reduction=reduction), rng.standard_normal((3, 4)))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("op", ["log_softmax", "softmax"])
def test_softmax_family_gradcheck(rng, op, dim):
    check_grad(lambda x: getattr(F, op)(x, dim), rng.standard_normal((3, 4)))
    check_grad(lambda x: getattr(x, op)(dim), rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_gradcheck(rng, reduction):
    check_grad(lambda x: F.cross_entropy(x, LABELS, reduction=reduction), rng.standard_normal((4, 5)))
    check_grad(lambda x: F.cross_entropy(x, Tensor(LABELS), reduction=reduction),
               rng.standard_normal((4, 5)) * 5)


def test_cross_entropy_equals_log_softmax_composition(rng):
    # -mean(log_softmax(x)[i, label_i]) built from the differentiable parts
    x = rng.standard_normal((4, 5))
    rows = np.arange(4)
    composed = -(F.log_softmax(leaf(x), 1)[rows, LABELS]).mean()
    np.testing.assert_allclose(F.cross_entropy(leaf(x), LABELS).item(), composed.item())


# ---- semantics ------------------------------------------------------------------------------
def test_sum_of_squares_by_hand():
    x = leaf([1.0, -2.0, 3.0])
    y = F.sum_of_squares(x)
    assert y.shape == () and y.item() == 14.0  # 1 + 4 + 9
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, -4.0, 6.0])  # 2x


def test_mse_loss_by_hand():
    x, t = leaf([1.0, 2.0, 4.0]), np.array([0.0, 2.0, 1.0])
    # squared errors [1, 0, 9]: mean 10/3, sum 10
    assert F.mse_loss(x, t).item() == pytest.approx(10 / 3)
    assert F.mse_loss(x, t, reduction="sum").item() == pytest.approx(10.0)
    np.testing.assert_allclose(F.mse_loss(x, t, reduction="none").data, [1.0, 0.0, 9.0])
    F.mse_loss(x, t).backward()
    np.testing.assert_allclose(x.grad.data, 2 * (x.data - t) / 3)  # 2(x - t)/n


def test_softmax_rows_sum_to_one_and_log_softmax_is_its_log(rng):
    x = rng.standard_normal((3, 4))
    p = F.softmax(Tensor(x), dim=1).data
    np.testing.assert_allclose(p.sum(axis=1), np.ones(3))
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(p, expected)
    np.testing.assert_allclose(F.log_softmax(Tensor(x), 1).data, np.log(expected))


def test_cross_entropy_by_hand():
    # logits [0, 0] with label 0: -log(1/2) = log 2; gradient softmax - onehot = [-1/2, 1/2]
    x = leaf([[0.0, 0.0]])
    loss = F.cross_entropy(x, np.array([0]))
    assert loss.item() == pytest.approx(np.log(2))
    loss.backward()
    np.testing.assert_allclose(x.grad.data, [[-0.5, 0.5]])


def test_cross_entropy_is_stable_for_huge_logits():
    x = leaf([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]])
    loss = F.cross_entropy(x, np.array([1, 2]), reduction="none")
    # row 0: label logit is 1e4 below the max -> loss 1e4 (exactly, to double precision)
    # row 1: two equal maxima, label on one -> log 2
    np.testing.assert_allclose(loss.data, [1e4, np.log(2)])
    loss.sum().backward()
    assert np.isfinite(x.grad.data).all()
    np.testing.assert_allclose(x.grad.data, [[1.0, -1.0, 0.0], [0.0, 0.5, -0.5]], atol=1e-12)
    big = leaf(np.array([[1e4, -1e4]]))
    ls = F.log_softmax(big, 1)
    assert np.isfinite(ls.data).all()
    ls.sum().backward()
    assert np.isfinite(big.grad.data).all()


def test_float32_losses_stay_float32():
    x = Tensor(np.array([[1.0, 2.0, 3.0]], dtype=np.float32), requires_grad=True)
    loss = F.cross_entropy(x, np.array([1]))
    assert loss.dtype == np.float32
    loss.backward()
    assert x.grad.dtype == np.float32
    mse = F.mse_loss(x, Tensor(np.zeros((1, 3), dtype=np.float32)))
    assert mse.dtype == np.float32


# ---- errors ---------------------------------------------------------------------------------
def test_mse_loss_shapes_must_match():
    with pytest.raises(ValueError, match=r"mse_loss: input has shape \(4, 1\) but target has shape \(4,\)"):
        F.mse_loss(leaf(np.ones((4, 1))), np.ones(4))


@pytest.mark.parametrize("loss", ["mse_loss", "cross_entropy"])
def test_bad_reduction(loss):
    args = (leaf(np.ones((2, 3))), np.ones((2, 3)) if loss == "mse_loss" else np.array([0, 1]))
    with pytest.raises(ValueError, match=rf"{loss}: reduction must be one of .*'average'"):
        getattr(F, loss)(*args, reduction="average")


def test_cross_entropy_rejects_float_labels():
    with pytest.raises(TypeError, match="cross_entropy: target must hold integer class labels.*float64"):
        F.cross_entropy(leaf(np.ones((2, 3))), np.array([0.0, 1.0]))


@pytest.mark.parametrize("labels", [[0, 3], [-1, 0]], ids=str)
def test_cross_entropy_rejects_out_of_range_labels(labels):
    with pytest.raises(ValueError, match=r"cross_entropy: labels must lie in \[0, 3\)"):
        F.cross_entropy(leaf(np.ones((2, 3))), np.array(labels))


def test_cross_entropy_shape_errors():
    message = r"cross_entropy: target has shape \(3,\) but input has shape \(2, 3\)"
    with pytest.raises(ValueError, match=message):
        F.cross_entropy(leaf(np.ones((2, 3))), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"cross_entropy: input must be 2-D .*\(2, 3, 4\)"):
        F.cross_entropy(leaf(np.ones((2, 3, 4))), np.array([0, 1]))


def test_log_softmax_dim_out_of_range():
    message = "log_softmax: axis 2 is out of range for a tensor with 2 dimensions"
    with pytest.raises(ValueError, match=message):
        F.log_softmax(leaf(np.ones((2, 3))), 2)


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_matches_torch(torch, rng, reduction):
    torch_parity(torch, lambda x, t: F.mse_loss(x, t, reduction=reduction),
                 rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                 torch_fn=lambda x, t: torch.nn.functional.mse_loss(x, t, reduction=reduction))


@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_and_softmax_match_torch(torch, rng, dim):
    x = rng.standard_normal((3, 4))
    torch_parity(torch, lambda t: F.log_softmax(t, dim), x,
                 torch_fn=lambda t: torch.nn.functional.log_softmax(t, dim))
    torch_parity(torch, lambda t: F.softmax(t, dim), x,
                 torch_fn=lambda t: torch.nn.functional.softmax(t, dim))


@pytest.mark.parametrize("scale", [1.0, 1e4])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_matches_torch(torch, rng, reduction, scale):
    labels = torch.tensor(LABELS)
    torch_parity(torch, lambda x: F.cross_entropy(x, LABELS, reduction=reduction),
                 rng.standard_normal((4, 5)) * scale,
                 torch_fn=lambda x: torch.nn.functional.cross_entropy(x, labels, reduction=reduction))


def test_sum_of_squares_matches_torch(torch, rng):
    torch_parity(torch, F.sum_of_squares, rng.standard_normal((2, 3)),
                 torch_fn=lambda x: (x * x).sum())
