"""embedding, the Embedding module and one_hot."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.sparse import Embedding
from tinygrad_pool.ops.embedding import embedding, one_hot

from helpers import check_grad, leaf

HYPOTHESIS = settings(max_examples=25, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])
REPEATED = np.array([[1, 3, 1, 0], [3, 3, 2, 1]])  # index 3 read three times, 1 three times


def _embedding_parity(torch, weight, indices, dtype=np.float64, rtol=1e-12, **kwargs):
    """Forward and the weight's gradient (for a random output weighting) against torch."""
    ours = tensor(weight.astype(dtype), requires_grad=True)
    theirs = torch.tensor(weight.astype(dtype), requires_grad=True)
    out = embedding(tensor(indices), ours, **kwargs)
    tout = torch.nn.functional.embedding(torch.from_numpy(indices), theirs, **kwargs)
    assert out.dtype == dtype and out.shape == tuple(tout.shape)
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    weights = np.random.default_rng(0).standard_normal(out.shape).astype(dtype)
    out.backward(weights)
    tout.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=rtol)
    return ours, theirs


# ---- embedding --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-6), (np.float64, 1e-12)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding_with_repeated_indices_matches_torch(torch, rng, dtype, rtol, index_dtype):
    weight = rng.standard_normal((5, 3))
    ours, _ = _embedding_parity(torch, weight, REPEATED.astype(index_dtype), dtype, rtol)
    # the gradients of every place that read a row accumulate in it; unread rows get 0
    assert np.all(ours.grad.numpy()[4] == 0)


@pytest.mark.parametrize("padding_idx", [0, 3, -2, -5])
def test_embedding_padding_row_gets_no_gradient(torch, rng, padding_idx):
    weight = rng.standard_normal((5, 3))
    ours, _ = _embedding_parity(torch, weight, REPEATED, padding_idx=padding_idx)
    np.testing.assert_array_equal(ours.grad.numpy()[padding_idx], 0)


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_scale_grad_by_freq_matches_torch(torch, rng, padding_idx):
    _embedding_parity(torch, rng.standard_normal((5, 3)), REPEATED, padding_idx=padding_idx,
                      scale_grad_by_freq=True)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_renormalizes_rows_in_place_as_torch(torch, rng, norm_type):
    weight = rng.standard_normal((6, 4)) * 2
    ours, theirs = _embedding_parity(torch, weight, REPEATED, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12)
    read = np.unique(REPEATED)
    norms = np.linalg.norm(ours.numpy(), ord=norm_type, axis=1)
    assert np.all(norms[read] <= 1.5 + 1e-9)
    np.testing.assert_array_equal(ours.numpy()[[4, 5]], weight[[4, 5]])  # rows not read: untouched
    assert ours._version == 1  # an in-place write, noted


def test_embedding_gradcheck(rng):
    # (padding_idx and scale_grad_by_freq change the gradient on purpose, away from the true
    # derivative: those are checked against torch above, not against finite differences)
    check_grad(lambda w: embedding(tensor(REPEATED), w), rng.standard_normal((5, 3)))
    check_grad(lambda w: embedding(tensor(REPEATED), w) ** 2, rng.standard_normal((5, 3)))


def test_embedding_double_backward(rng):
    # Σ (W[i])³ weighted: the gradient of the gradient goes back through the lookup again
    w = leaf(rng.standard_normal((5, 3)))
    (grad,) = tinygrad_pool.autograd.grad((embedding(tensor(REPEATED), w, padding_idx=1) ** 3).sum(), [w],
                                          create_graph=True)
    grad.sum().backward()
    counts = np.bincount(REPEATED.ravel(), minlength=5)[:, None] * (np.arange(5) != 1)[:, None]
    np.testing.assert_allclose(grad.numpy(), 3 * w.numpy() ** 2 * counts)
    np.testing.assert_allclose(w.grad.numpy(), 6 * w.numpy() * counts)


@HYPOTHESIS
@given(rows=st.integers(1, 6), dim=st.integers(1, 4),
       shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       padding=st.one_of(st.none(), st.integers(-6, 5)), seed=st.integers(0, 2 ** 16))
def test_random_embedding_matches_torch(torch, rows, dim, shape, padding, seed):
    rng = np.random.default_rng(seed)
    if padding is not None and not -rows <= padding < rows:
        padding = None
    indices = rng.integers(0, rows, size=shape)
    _embedding_parity(torch, rng.standard_normal((rows, dim)), indices, padding_idx=padding)


def test_embedding_output_is_a_copy_not_a_view(rng):
    weight = tensor(rng.standard_normal((4, 2)))
    for indices in (np.array([1, 1]), np.array(2)):
        out = embedding(tensor(indices), weight)
        out.numpy()[...] = 100
        assert not (weight.numpy() == 100).any()
    assert embedding(tensor(np.array(2)), weight).shape == (2,)


@pytest.mark.parametrize("call,error,message", [
    (lambda w: embedding(tensor(np.array([1.0])), w), RuntimeError,
     "int64 \\(Long\\), int32 \\(Int\\); but got dtype float64"),
    (lambda w: embedding(tensor(np.array([1], np.int16)), w), RuntimeError, "got dtype int16"),
    (lambda w: embedding(tensor(np.array([0, 5])), w), IndexError,
     r"index out of range in self: index 5 .*\[0, 5\)"),
    (lambda w: embedding(tensor(np.array([-1])), w), IndexError, "index -1"),
    (lambda w: embedding(tensor(np.array([1])), w, padding_idx=5), AssertionError,
     "Padding_idx must be within num_embeddings"),
    (lambda w: embedding(tensor(np.array([1])), w, padding_idx=-6), AssertionError,
     "Padding_idx must be within num_embeddings"),
    (lambda w: embedding(tensor(np.array([1])), w, padding_idx=1.0), TypeError, "padding_idx"),
    (lambda w: embedding(tensor(np.array([1])), w[0]), RuntimeError, "'weight' must be 2-D"),
    (lambda w: embedding(tensor(np.array([1])), w, sparse=True), NotImplementedError, "sparse"),
    (lambda w: embedding(tensor(np.array([1])), w, max_norm="1"), TypeError, "max_norm"),
])
def test_embedding_errors(rng, call, error, message):
    weight = tensor(rng.standard_normal((5, 3)), requires_grad=True)
    before = weight.numpy().copy()
    with pytest.raises(error, match=message):
        call(weight)
    np.testing.assert_array_equal(weight.numpy(), before)


# ---- the module -------------------------------------------------------------------------------
def test_embedding_module_initialises_from_a_standard_normal_with_padding_zeroed():
    tinygrad_pool.manual_seed(0)
    layer = Embedding(1000, 64, padding_idx=2)
    w = layer.weight.numpy()
    assert w.shape == (1000, 64) and w.dtype == np.float32 and layer.weight.requires_grad
    np.testing.assert_array_equal(w[2], 0)
    others = np.delete(w, 2, axis=0)
    assert abs(others.mean()) < 0.01 and abs(others.std() - 1) < 0.01  # 64k draws
    tinygrad_pool.manual_seed(0)
    np.testing.assert_array_equal(Embedding(1000, 64, padding_idx=2).weight.numpy(), w)


def test_embedding_module_trains_without_moving_the_padding_row(torch):
    layer = Embedding(5, 3, padding_idx=0, dtype=np.float64, generator=np.random.default_rng(1))
    tlayer = torch.nn.Embedding(5, 3, padding_idx=0).double()
    with torch.no_grad():
        tlayer.weight.copy_(torch.from_numpy(layer.weight.numpy()))
    indices = np.array([[0, 1, 4], [4, 4, 0]])
    for _ in range(3):
        out, tout = layer(tensor(indices)), tlayer(torch.from_numpy(indices))
        (out ** 2).sum().backward()
        (tout ** 2).sum().backward()
        layer.weight.data -= 0.1 * layer.weight.grad.data
        layer.weight.grad = None
        with torch.no_grad():
            tlayer.weight -= 0.1 * tlayer.weight.grad
        tlayer.weight.grad = None
    np.testing.assert_allclose(layer.weight.numpy(), tlayer.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(layer.weight.numpy()[0], 0)


@pytest.mark.parametrize("kwargs", [dict(), dict(padding_idx=-1), dict(padding_idx=0),
                                    dict(max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True)],
                         ids=str)
def test_embedding_module_repr_and_state_dict_match_torch(torch, kwargs):
    ours, theirs = Embedding(5, 3, **kwargs), torch.nn.Embedding(5, 3, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.padding_idx == theirs.padding_idx


def test_embedding_module_with_given_weight_and_from_pretrained(rng):
    table = rng.standard_normal((4, 2)).astype(np.float32)
    layer = Embedding(4, 2, padding_idx=1, _weight=tensor(table))
    np.testing.assert_array_equal(layer.weight.numpy(), table)  # not re-initialised, pad kept
    frozen = Embedding.from_pretrained(tensor(table))
    assert not frozen.weight.requires_grad and frozen.num_embeddings == 4
    np.testing.assert_array_equal(frozen(tensor(np.array([3, 0]))).numpy(), table[[3, 0]])
    trainable = Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad and trainable.padding_idx == 0
    np.testing.assert_array_equal(trainable.weight.numpy()[0], table[0])  # pad row not zeroed
    out = trainable(tensor(np.array([0, 2, 2])))
    out.sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy(), [[0, 0], [0, 0], [2, 2], [0, 0]])


@pytest.mark.parametrize("call,error,message", [
    (lambda: Embedding(5, 3, padding_idx=5), AssertionError, "Padding_idx must be within"),
    (lambda: Embedding(5, 3, padding_idx=-6), AssertionError, "Padding_idx must be within"),
    (lambda: Embedding(5, 3, _weight=tensor(np.zeros((4, 3)))), AssertionError,
     r"Shape of weight does not match.*\(4, 3\).*\(5, 3\)"),
    (lambda: Embedding.from_pretrained(tensor(np.zeros(4))), AssertionError,
     "expected to be 2-dimensional"),
    (lambda: Embedding(5.0, 3), TypeError, "num_embeddings"),
    (lambda: Embedding(5, 3, sparse=True), NotImplementedError, "sparse"),
])
def test_embedding_module_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- one_hot ----------------------------------------------------------------------------------
@pytest.mark.parametrize("labels,num_classes", [([1, 0, 3], -1), ([1, 0, 3], 6),
                                                ([[2, 2], [0, 1]], -1), (3, 5), ([], 4),
                                                ([[]], 2)], ids=str)
def test_one_hot_matches_torch(torch, labels, num_classes):
    array = np.array(labels, dtype=np.int64)
    ours = one_hot(tensor(array), num_classes)
    theirs = torch.nn.functional.one_hot(torch.from_numpy(array), num_classes)
    assert ours.dtype == np.int64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not ours.requires_grad


@pytest.mark.parametrize("labels,num_classes,error,message", [
    (np.array([1, 2], np.int32), -1, RuntimeError, "int64.*got dtype int32"),
    (np.array([1.0]), -1, RuntimeError, "got dtype float64"),
    (np.array([-1, 2]), -1, RuntimeError, "class values must be non-negative, got -1"),
    (np.array([1, 2]), 2, RuntimeError, r"smaller than num_classes \(2\), got 2"),
    (np.array([1]), -2, RuntimeError, "smaller than num_classes"),
    (np.array([1]), 0, RuntimeError, "smaller than num_classes"),
    (np.array([], np.int64), -1, RuntimeError, "can not infer total number of classes"),
    (np.array([], np.int64), 0, RuntimeError, "can not infer total number of classes"),
    (np.array([1]), 2.0, TypeError, "num_classes must be an int"),
])
def test_one_hot_errors(labels, num_classes, error, message):
    with pytest.raises(error, match=message):
        one_hot(tensor(labels), num_classes)


def test_one_hot_errors_match_torch_types(torch):
    for labels, num_classes in [([-1, 2], -1), ([1, 2], 2)]:
        with pytest.raises(RuntimeError):
            torch.nn.functional.one_hot(torch.tensor(labels), num_classes)
        with pytest.raises(RuntimeError):
            one_hot(tensor(np.array(labels)), num_classes)
