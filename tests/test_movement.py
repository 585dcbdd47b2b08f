"""Shape ops: reshape/view, transpose, .T, permute, flatten, flip, indexing."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

from helpers import check_grad, leaf, torch_parity

# Written so that the same lambda runs on both frameworks.
MOVES = {
    "reshape_varargs": lambda x: x.reshape(4, 6),
    "reshape_tuple": lambda x: x.reshape((3, 8)),
    "reshape_minus_one": lambda x: x.reshape(-1, 2),
    "reshape_flat": lambda x: x.reshape(-1),
    "view": lambda x: x.view(6, 4),
    "transpose_01": lambda x: x.transpose(0, 1),
    "transpose_neg": lambda x: x.transpose(-1, 0),
    "permute_varargs": lambda x: x.permute(2, 0, 1),
    "permute_tuple": lambda x: x.permute((1, 2, 0)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_0_1": lambda x: x.flatten(0, 1),
    "flip_0": lambda x: x.flip((0,)),
    "flip_12": lambda x: x.flip((1, 2)),
    "flip_neg": lambda x: x.flip((-1,)),
    "int_index": lambda x: x[1],
    "slice": lambda x: x[:, 1:3],
    "step_slice": lambda x: x[..., ::2],
    "negative_index": lambda x: x[-1, -2],
    "mixed": lambda x: x[0, :, 1:],
    "chain": lambda x: x.permute(1, 0, 2).reshape(3, -1).flip((1,))[1:],
}


# ---- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_gradcheck(rng, name):
    check_grad(MOVES[name], rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("index", [
    [0, 0, 2],
    np.array([[1, 1], [0, 2]]),
    ([0, 0, 1], [2, 2, 3]),
    (slice(None), [3, 3, 0]),
    np.array([True, False, True]),
], ids=["list_repeats", "array_2d", "pairs_repeats", "slice_then_list", "bool_mask"])
def test_advanced_indexing_gradcheck(rng, index):
    check_grad(lambda x: x[index] * 2, rng.standard_normal((3, 4)))


def test_tensor_transpose_T_and_F_flatten_gradcheck(rng):
    check_grad(lambda x: x.transpose(), rng.standard_normal((2, 3, 4)))
    check_grad(lambda x: x.T, rng.standard_normal((2, 3)))
    check_grad(lambda x: F.flatten(x, 1, 2), rng.standard_normal((2, 3, 4)))


# ---- semantics ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_forward_matches_numpy(rng, name):
    x = rng.standard_normal((2, 3, 4))
    np_moves = {
        "reshape_varargs": x.reshape(4, 6), "reshape_tuple": x.reshape(3, 8),
        "reshape_minus_one": x.reshape(-1, 2), "reshape_flat": x.reshape(-1),
        "view": x.reshape(6, 4), "transpose_01": x.swapaxes(0, 1),
        "transpose_neg": x.swapaxes(-1, 0), "permute_varargs": x.transpose(2, 0, 1),
        "permute_tuple": x.transpose(1, 2, 0), "flatten": x.ravel(), "flatten_1": x.reshape(2, 12),
        "flatten_0_1": x.reshape(6, 4), "flip_0": x[::-1], "flip_12": x[:, ::-1, ::-1],
        "flip_neg": x[..., ::-1], "int_index": x[1], "slice": x[:, 1:3],
        "step_slice": x[..., ::2], "negative_index": x[-1, -2], "mixed": x[0, :, 1:],
        "chain": x.transpose(1, 0, 2).reshape(3, -1)[:, ::-1][1:],
    }
    out = MOVES[name](Tensor(x))
    np.testing.assert_array_equal(out.data, np_moves[name])


def test_transpose_swaps_two_dims_and_without_args_reverses():
    x = Tensor(np.zeros((2, 3, 4)))
    assert x.transpose(0, 2).shape == (4, 3, 2)
    assert x.transpose(1, 2).shape == (2, 4, 3)
    assert x.transpose().shape == (4, 3, 2)
    assert x.T.shape == (4, 3, 2)


def test_repeated_indices_add_their_gradients():
    # x[[0, 0, 2]] reads x[0] twice: its gradient is the sum of both reads (by hand)
    x = leaf([10.0, 20.0, 30.0])
    x[[0, 0, 2]].backward(np.array([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(x.grad.data, [3.0, 0.0, 5.0])
    y = leaf(np.zeros((2, 2)))
    y[[1, 1, 1], [0, 0, 1]].sum().backward()
    np.testing.assert_array_equal(y.grad.data, [[0.0, 0.0], [2.0, 1.0]])


def test_index_with_a_tensor():
    x = leaf([1.0, 2.0, 3.0])
    y = x[Tensor([2, 2])]
    np.testing.assert_array_equal(y.data, [3.0, 3.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0, 2.0])


def test_slice_gradient_lands_in_place():
    x = leaf(np.zeros((3, 3)))
    x[1:, ::2].backward(np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(x.grad.data, [[0, 0, 0], [1, 0, 2], [3, 0, 4]])


def test_reshape_gradient_has_input_shape():
    x = leaf(np.arange(6.0))
    x.reshape(2, 3).backward(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.grad.data, np.arange(6.0))


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 2), (-1, 4), (-1, -1), (2, -3)], ids=str)
def test_reshape_size_mismatch(shape):
    with pytest.raises(ValueError, match=r"reshape: .*(\(2, 3\)|-1)"):
        leaf(np.ones((2, 3))).reshape(*shape)


def test_transpose_errors():
    x = leaf(np.ones((2, 3)))
    with pytest.raises(ValueError, match="transpose: dimension 2 is out of range.*2 dimensions"):
        x.transpose(0, 2)
    with pytest.raises(ValueError, match="transpose"):
        x.transpose(0)


def test_permute_errors():
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"permute: dims \(0, 0, 1\) are not a permutation"):
        x.permute(0, 0, 1)
    with pytest.raises(ValueError, match="permute"):
        x.permute(0, 1)
    with pytest.raises(ValueError, match="permute: dimension 3 is out of range"):
        x.permute(0, 1, 3)


def test_flatten_and_flip_errors():
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"flatten: start_dim 2 comes after end_dim 1.*\(2, 3, 4\)"):
        x.flatten(2, 1)
    with pytest.raises(ValueError, match="flip: dimension 3 is out of range"):
        x.flip((3,))


def test_index_out_of_range_names_the_shape():
    with pytest.raises(IndexError, match=r"index: .*\(2, 3\)"):
        leaf(np.ones((2, 3)))[5]


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_matches_torch(torch, rng, name):
    torch_parity(torch, MOVES[name], rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("index", [
    [0, 0, 2],
    ([0, 0, 1], [2, 2, 3]),
    (slice(None), [3, 3, 0]),
], ids=["list_repeats", "pairs_repeats", "slice_then_list"])
def test_advanced_indexing_matches_torch(torch, rng, index):
    torch_parity(torch, lambda x: x[index], rng.standard_normal((3, 4)))
