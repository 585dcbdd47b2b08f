"""The seed article's network: its figures reproduced by autograd, and its hand derivation of the
max-pool backward pass checked against what .backward() computes.

The reference numbers come from ../shared/ARTICLE_NETWORK.md (re-runs of the article's original
NumPy scripts); nothing here is derived from this package's own output.
"""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from helpers import load_script



article = load_script("examples/article_network.py")

# ARTICLE_NETWORK.md, Example 1, first forward pass on x1.
W1_ROUNDED = [[0.52968, 0.112431, -0.88621], [-0.498254, -0.032892, -0.021551],
              [-0.841493, -0.283222, 0.512124]]
W2T_ROUNDED = [-4.554624, 6.201414, -10.434251, -13.186301]
L1_FIRST = [[-0.599320, -1.205704, -0.203683, -1.205704],
            [-0.069640, -1.093273, -1.089893, -1.205704],
            [-0.567893, -1.126165, -1.111444, -1.205704],
            [-1.409387, -1.409387, -0.599320, -1.205704]]
POOLED_FIRST = [[-0.069640, -0.203683], [-0.567893, -0.599320]]
MASK_FIRST = [[0, 0, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]


def convolve2d_valid(image, kernel):
    """True 2-D convolution, valid mode (what the article calls with scipy): the kernel flipped."""
    windows = sliding_window_view(image, kernel.shape)
    return np.einsum("abij,ij->ab", windows, kernel[::-1, ::-1])


def expand(matrix):
    """The article's "green box": each pooled entry repeated over its 2×2 window."""
    return matrix.repeat(2, axis=0).repeat(2, axis=1)


def article_gradients(w1, w2, image, target, activation):
    """The first step's gradients exactly as the article derives them by hand."""
    l1 = convolve2d_valid(image, w1)
    l1a = np.maximum(l1, 0) if activation else l1
    pooled = l1a.reshape(2, 2, 2, 2).max(axis=(1, 3))
    l2 = pooled.reshape(1, 4) @ w2
    out = np.arctan(l2) if activation else l2
    d_l2 = (out - target) * (1 / (1 + l2 ** 2) if activation else 1)
    grad_w2 = pooled.reshape(1, 4).T @ d_l2
    upstream = (d_l2 @ w2.T).reshape(2, 2)
    mask = (l1a == expand(pooled)).astype(float)     # the "blue circles": every tied max counts
    routed = mask * expand(upstream)
    if activation:
        routed = routed * (l1 > 0)
    # The kernel gradient: the input convolved with the routed gradient rotated by 180°, and the
    # result rotated back ("Purple Star" in the article).
    grad_w1 = np.rot90(convolve2d_valid(image, np.rot90(routed, 2)), 2)
    return {"L1": l1, "pooled": pooled, "mask": mask, "routed": routed,
            "grad_w1": grad_w1, "grad_w2": grad_w2}


def test_initial_weights_match_the_article():
    w1, w2 = article.EXAMPLE_1.initial_weights()
    np.testing.assert_allclose(w1, W1_ROUNDED, atol=1e-6)
    np.testing.assert_allclose(w2.T[0], W2T_ROUNDED, atol=1e-6)


def test_first_forward_pass_matches_the_article():
    net = article.ArticleNetwork(*article.EXAMPLE_1.initial_weights(), activation=False)
    layers = net.layers(article.X1)
    np.testing.assert_allclose(layers["L1"].numpy()[0, 0], L1_FIRST, atol=1e-6)
    np.testing.assert_allclose(layers["L1Max"].numpy()[0, 0], POOLED_FIRST, atol=1e-6)


@pytest.mark.parametrize("example", [article.EXAMPLE_1, article.EXAMPLE_2], ids=["ex1", "ex2"])
def test_first_step_gradients_equal_the_articles_derivation(example):
    w1, w2 = example.initial_weights()
    image, target = np.array(article.X1, dtype=float), example.targets()[0]
    by_hand = article_gradients(w1, w2, image, target, example.activation)

    net = article.ArticleNetwork(w1, w2, example.activation, ties="all")
    layers = net.layers(image)
    layers["L1"].retain_grad()
    net.cost(image, target, layers).backward()

    np.testing.assert_allclose(layers["L1"].numpy()[0, 0], by_hand["L1"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(layers["L1"].grad.numpy()[0, 0], by_hand["routed"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(net.w1.grad.numpy(), by_hand["grad_w1"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(net.w2.grad.numpy(), by_hand["grad_w2"], rtol=1e-10, atol=1e-12)


def test_the_mask_is_the_stored_argmax_and_the_articles_mask():
    net = article.ArticleNetwork(*article.EXAMPLE_1.initial_weights(), activation=False)
    layers = net.layers(article.X1)
    by_hand = article_gradients(*article.EXAMPLE_1.initial_weights(), np.array(article.X1, float),
                                27.0, activation=False)
    np.testing.assert_array_equal(by_hand["mask"], MASK_FIRST)
    # max_pool2d's stored argmax (flat index into the 4×4 plane) marks the same cells.
    stored = np.zeros(16)
    stored[layers["L1Max"].grad_fn.argmax.ravel()] = 1
    np.testing.assert_array_equal(stored.reshape(4, 4), MASK_FIRST)


@pytest.mark.parametrize("example, ties, key", [
    (article.EXAMPLE_1, "all", "after"), (article.EXAMPLE_1, "first", "after"),
    (article.EXAMPLE_2, "all", "after"), (article.EXAMPLE_2, "first", "after, ties=first"),
])
def test_training_reproduces_the_articles_predictions(example, ties, key):
    result = article.train(example, ties)
    np.testing.assert_allclose(result["before"], article.REFERENCE[example, "before"], atol=1e-6)
    np.testing.assert_allclose(result["after"], article.REFERENCE[example, key], atol=1e-6)


def test_example_2_differs_between_tie_rules_because_of_ties():
    article_rule = article.train(article.EXAMPLE_2, "all")
    pytorch_rule = article.train(article.EXAMPLE_2, "first")
    assert article_rule["steps_with_ties"] == 381   # ARTICLE_NETWORK.md, "Ties"
    assert abs(article_rule["after"][0] - pytorch_rule["after"][0]) > 1e-3
    # Example 1's figures are the same under either rule (ARTICLE_NETWORK.md).
    np.testing.assert_allclose(article.train(article.EXAMPLE_1, "all")["after"],
                               article.train(article.EXAMPLE_1, "first")["after"], atol=1e-6)


def test_script_prints_both_examples_and_the_explanation(capsys):
    assert article.main([]) == 0
    printed = capsys.readouterr().out
    for figure in ("12.88241385", "27.00000000", "1.41829836", "1.39408372", "381 of 1000"):
        assert figure in printed
