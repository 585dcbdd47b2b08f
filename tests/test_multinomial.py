"""torch.multinomial and Tensor.multinomial: shapes, dtypes and torch's errors (against
PyTorch), repeatability under manual_seed and generator=, and the distributions drawn — with
replacement a chi-square test against the weights, without replacement no repeats and
inclusion frequencies against their exact values. The seeds are fixed and the bounds generous
(a correct sampler fails them with probability far below 1e-6)."""
import itertools

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import tensor


def same_error(torch_call, our_call):
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(type(theirs.value)):
        our_call()


@pytest.mark.parametrize("shape, num_samples, replacement", [
    ((5,), 3, False), ((5,), 5, False), ((5,), 9, True), ((3, 4), 2, False), ((3, 4), 7, True),
    ((0, 4), 2, False), ((0, 4), 6, True), ((1,), 1, False), ((2, 1), 3, True)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_shape_and_dtype_as_torch(torch, shape, num_samples, replacement, dtype):
    weights = np.random.default_rng(0).random(shape).astype(dtype) + 0.1
    got = tinygrad_pool.multinomial(tensor(weights), num_samples, replacement)
    want = torch.multinomial(torch.tensor(weights), num_samples, replacement)
    assert got.dtype == tinygrad_pool.int64 and got.shape == tuple(want.shape)
    assert not got.requires_grad
    assert ((got.numpy() >= 0) & (got.numpy() < shape[-1])).all()
    method = tensor(weights).multinomial(num_samples, replacement=replacement)
    assert method.shape == got.shape and method.dtype == got.dtype


def test_no_repeats_without_replacement_and_zero_weights_last():
    rng = np.random.default_rng(1)
    weights = rng.random((200, 6))
    weights[:, 2] = 0
    drawn = tinygrad_pool.multinomial(tensor(weights), 6).numpy()
    assert (np.sort(drawn, axis=1) == np.arange(6)).all()  # every category, once
    assert (drawn[:, -1] == 2).all()  # the one of weight 0, after all the others
    # as torch's: once the positive weights are drawn, the zero ones follow, lowest index first
    assert tinygrad_pool.multinomial(tensor([0.0, 1.0, 0.0]), 3).tolist() == [1, 0, 2]


def test_a_category_of_weight_zero_is_never_drawn_with_replacement():
    weights = np.array([[0.0, 1.0, 0.0, 2.0, 0.0], [3.0, 0.0, 0.0, 0.0, 1e-30]])
    drawn = tinygrad_pool.multinomial(tensor(weights), 5000, True).numpy()
    assert set(np.unique(drawn[0])) == {1, 3}
    assert set(np.unique(drawn[1])) <= {0, 4}
    only = tinygrad_pool.multinomial(tensor([0.0, 0.0, 5.0]), 100, True)
    assert (only.numpy() == 2).all()


def chi_square(counts, probabilities):
    expected = counts.sum() * probabilities
    return (((counts - expected) ** 2) / expected).sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_with_replacement_follows_the_weights(dtype):
    tinygrad_pool.manual_seed(2)
    weights = np.array([[1.0, 2.0, 0.0, 3.0, 4.0], [5.0, 1.0, 1.0, 1.0, 2.0]], dtype)
    drawn = tinygrad_pool.multinomial(tensor(weights), 20000, replacement=True).numpy()
    for row, w in zip(drawn, weights.astype(np.float64)):
        positive = w > 0
        counts = np.bincount(row, minlength=len(w))
        assert counts[~positive].sum() == 0
        # 3 or 4 degrees of freedom: P(χ² > 40) < 1e-7
        assert chi_square(counts[positive], w[positive] / w.sum()) < 40


def inclusion_probabilities(weights, k):
    """P(category i is among k drawn one by one without replacement, each draw in proportion to
    the weights left), summed over every ordered sequence of k categories."""
    p = np.asarray(weights, np.float64)
    inclusion = np.zeros(len(p))
    for sequence in itertools.permutations(range(len(p)), k):
        chance, left = 1.0, p.sum()
        for i in sequence:
            chance *= p[i] / left
            left -= p[i]
        inclusion[list(sequence)] += chance
    return inclusion


def test_without_replacement_inclusion_frequencies_match_the_exact_values():
    weights, k, trials = [1.0, 2.0, 3.0, 4.0, 0.5], 2, 40000
    tinygrad_pool.manual_seed(3)
    drawn = tinygrad_pool.multinomial(tensor(np.tile(weights, (trials, 1))), k).numpy()
    frequency = np.bincount(drawn.ravel(), minlength=len(weights)) / trials
    exact = inclusion_probabilities(weights, k)
    assert np.isclose(exact.sum(), k)
    # a binomial frequency's standard deviation is at most 0.5/sqrt(trials) = 0.0025
    np.testing.assert_allclose(frequency, exact, atol=0.0125)
    # and the first draw follows the weights themselves
    first = np.bincount(drawn[:, 0], minlength=len(weights)) / trials
    np.testing.assert_allclose(first, np.array(weights) / sum(weights), atol=0.0125)


def test_repeatable_under_manual_seed_and_generator():
    weights = tensor(np.random.default_rng(4).random((3, 7)))
    for replacement in (False, True):
        tinygrad_pool.manual_seed(7)
        first = tinygrad_pool.multinomial(weights, 5, replacement)
        tinygrad_pool.manual_seed(7)
        again = weights.multinomial(5, replacement)
        assert first.tolist() == again.tolist()
        one = tinygrad_pool.multinomial(weights, 5, replacement,
                                        generator=tinygrad_pool.Generator().manual_seed(1))
        two = tinygrad_pool.multinomial(weights, 5, replacement,
                                        generator=tinygrad_pool.Generator().manual_seed(1))
        assert one.tolist() == two.tolist()
        three = tinygrad_pool.multinomial(weights, 5, replacement,
                                          generator=np.random.default_rng(1))
        assert three.shape == (3, 5)
    # a draw moves the default generator on: two draws in a row differ (somewhere)
    tinygrad_pool.manual_seed(8)
    draws = [tinygrad_pool.multinomial(tensor(np.ones(50)), 50).tolist() for _ in range(2)]
    assert draws[0] != draws[1]


ERROR_CASES = [
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (0,), {}),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (-1, True), {}),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (4,), {}),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (2.0,), {}),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (True,), {}),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (2,), dict(replacement=1)),
    (lambda m: m.tensor([1.0, 2.0, 3.0]), (2,), dict(generator=3)),
    (lambda m: m.tensor([1.0, -1.0]), (1,), {}),
    (lambda m: m.tensor([1.0, float("inf")]), (1,), {}),
    (lambda m: m.tensor([1.0, float("nan")]), (1, True), {}),
    (lambda m: m.tensor([0.0, 0.0]), (1,), {}),
    (lambda m: m.tensor([[1.0, 1.0], [0.0, 0.0]]), (1, True), {}),
    (lambda m: m.tensor([1, 2]), (1,), {}),
    (lambda m: m.tensor([True, False]), (1,), {}),
    (lambda m: m.tensor(1.0), (1,), {}),
    (lambda m: m.ones(2, 2, 2), (0,), {}),
    (lambda m: m.ones(0), (1,), {}),
    (lambda m: m.ones(2, 0), (1,), {}),
    (lambda m: m.ones(0, 3), (0,), {}),
    (lambda m: m.ones(2 ** 24 + 1), (1,), {}),
]


@pytest.mark.parametrize("make, args, kwargs", ERROR_CASES)
def test_errors_as_torch(torch, make, args, kwargs):
    same_error(lambda: torch.multinomial(make(torch), *args, **kwargs),
               lambda: tinygrad_pool.multinomial(make(tinygrad_pool), *args, **kwargs))


def test_input_must_be_a_tensor(torch):
    same_error(lambda: torch.multinomial([1.0, 2.0], 1),
               lambda: tinygrad_pool.multinomial([1.0, 2.0], 1))
