"""The seed article's network, trained by tinygrad_pool's autograd instead of hand-written gradients.

"Only Numpy: Understanding Back Propagation for Max Pooling Layer in Multi Layer CNN" (Jae Duk
Seo, 2018) derives backpropagation through max pooling by hand, for

    6×6 image ─conv 3×3─▶ L1 (4×4) ─[ReLU]─▶ max-pool 2×2 ─▶ 1×4 ─@ W2 (4×1)─▶ L2 ─[arctan]─▶ ½(out − y)²

Example 1 has no activation; Example 2 adds ReLU and arctan. This script builds both from Tensor
ops, trains them with ``.backward()`` (same data, seeds, initialisation, learning rates, epochs
and per-image update order as the article) and prints the same figures the article's code does.

Run:  python examples/article_network.py [--graphs DIR]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinygrad_pool import Tensor
import tinygrad_pool.nn.functional as F
from tinygrad_pool.optim import SGD

# The article's two 6×6 training images. Rows repeat, so identical 3×3 patches give identical
# conv outputs — which is why max-pool windows can hold tied maxima.
X1 = [[1, 1, 0, 1, 0, 1],
      [1, 1, 0, 1, 0, 1],
      [1, 1, 0, 1, 0, 1],
      [1, 1, 1, 1, 0, 1],
      [1, 1, 1, 1, 0, 1],
      [1, 1, 1, 1, 0, 1]]
X2 = [[-1, 0, -1, 0, 0, 1],
      [-1, 0, -1, 0, 0, 1],
      [-1, 0, -1, 1, 0, 1],
      [-1, -1, -1, 0, 0, -1],
      [-1, 0, -1, 0, 0, -1],
      [-1, 0, -1, 0, 0, -1]]
IMAGES = np.array([X1, X2], dtype=np.float64)


@dataclass(frozen=True)
class Example:
    title: str
    seed: int
    w1_scale: float
    w2_scale: float
    epochs: int
    learning_rate: float
    activation: bool  # ReLU after the conv and arctan on the output

    def targets(self) -> np.ndarray:
        """The pixel sums (squashed by arctan when the output is)."""
        sums = IMAGES.sum(axis=(1, 2))
        return np.arctan(sums) if self.activation else sums

    def initial_weights(self) -> tuple:
        """The article's draw: one RandomState, W1 first, then W2."""
        rng = np.random.RandomState(self.seed)
        w1 = rng.randn(3, 3) * self.w1_scale
        w2 = rng.randn(4, 1) * self.w2_scale
        return w1, w2


EXAMPLE_1 = Example("Example 1 — without activation", 7839, 0.66, 5.7, 100, 0.001, False)
EXAMPLE_2 = Example("Example 2 — with ReLU and arctan", 56789, 5.66, 5.7, 500, 0.01, True)

# What the article's original NumPy scripts print (../shared/ARTICLE_NETWORK.md), for comparison.
REFERENCE = {
    (EXAMPLE_1, "before"): [12.882414, -28.558395],
    (EXAMPLE_1, "after"): [27.000000, -12.000000],
    (EXAMPLE_2, "before"): [-1.44188643, 1.49725129],
    (EXAMPLE_2, "after"): [1.41829836, -1.47037691],          # the article's tie rule
    (EXAMPLE_2, "after, ties=first"): [1.39408372, -1.42412095],  # PyTorch's tie rule
}


class ArticleNetwork:
    """The article's network as Tensor ops. ``ties`` is max_pool2d's tie rule: "all" is the
    article's mask (every tied maximum gets the full gradient), "first" is PyTorch's."""

    def __init__(self, w1: np.ndarray, w2: np.ndarray, activation: bool, ties: str = "all"):
        self.w1 = Tensor(w1, dtype=np.float64, requires_grad=True, name="W1")
        self.w2 = Tensor(w2, dtype=np.float64, requires_grad=True, name="W2")
        self.activation, self.ties = activation, ties

    def parameters(self) -> list:
        return [self.w1, self.w2]

    def layers(self, image) -> dict:
        """Every intermediate of one forward pass, by the article's names."""
        x = Tensor(np.reshape(image, (1, 1, 6, 6)), dtype=np.float64, name="x")
        # The article convolves (scipy's convolve2d flips the kernel); conv2d cross-correlates,
        # so it gets W1 rotated by 180°. The flip is an op, so W1's gradient flows back through it.
        kernel = self.w1.flip((0, 1)).reshape(1, 1, 3, 3)
        out = {"x": x, "L1": F.conv2d(x, kernel)}
        pool_input = out["L1"]
        if self.activation:
            pool_input = out["L1A"] = out["L1"].relu()
        out["L1Max"] = F.max_pool2d(pool_input, 2, ties=self.ties)
        out["L2"] = out["L1Max"].reshape(1, 4) @ self.w2
        out["output"] = out["L2"].arctan() if self.activation else out["L2"]
        for name, tensor in out.items():
            tensor.name = name
        return out

    def predict(self, image) -> float:
        return self.layers(image)["output"].item()

    def cost(self, image, target: float, layers: dict | None = None) -> Tensor:
        """½ (output − target)², the article's cost per image."""
        layers = layers or self.layers(image)
        cost = 0.5 * F.sum_of_squares(layers["output"] - target)
        cost.name = "cost"
        return cost


def tied_windows(pool_input: np.ndarray, activation: bool) -> int:
    """How many 2×2 windows hold their maximum more than once: the windows where the article's
    mask and PyTorch's first-maximum rule route the gradient differently. After ReLU a window
    of zeros is tied too, but ReLU's derivative (0 there) stops its gradient either way."""
    windows = pool_input.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4)
    maxima = windows.max(axis=1)
    tied = (windows == maxima[:, None]).sum(axis=1) > 1
    if activation:
        tied &= maxima > 0
    return int(tied.sum())


def train(example: Example, ties: str = "all", log=None) -> dict:
    """Per-image SGD exactly as the article: for each epoch, x1 then x2, update after each."""
    net = ArticleNetwork(*example.initial_weights(), example.activation, ties)
    optimizer = SGD(net.parameters(), lr=example.learning_rate)
    targets = example.targets()
    before = [net.predict(image) for image in IMAGES]
    costs, steps_with_ties = [], 0
    for epoch in range(example.epochs):
        epoch_cost = 0.0
        for image, target in zip(IMAGES, targets):
            layers = net.layers(image)
            cost = net.cost(image, target, layers)
            pool_input = layers.get("L1A", layers["L1"]).numpy()
            steps_with_ties += tied_windows(pool_input, example.activation) > 0
            optimizer.zero_grad()
            cost.backward()
            optimizer.step()  # plain SGD: W ← W − learning_rate · ∂cost/∂W, as the article
            epoch_cost += cost.item()
        costs.append(epoch_cost)
        if log and (epoch % max(1, example.epochs // 10) == 0 or epoch == example.epochs - 1):
            log(f"  epoch {epoch + 1:4d}/{example.epochs}  cost {epoch_cost:.6g}")
    after = [net.predict(image) for image in IMAGES]
    return {"net": net, "before": before, "after": after, "costs": costs,
            "steps": example.epochs * len(IMAGES), "steps_with_ties": steps_with_ties}


def _row(values) -> str:
    return "[" + ", ".join(f"{v:.8f}" for v in values) + "]"


def report(example: Example, out=print) -> dict:
    out(f"\n{example.title}")
    out(f"  ground truth          {_row(example.targets())}")
    result = train(example, "all", log=out)
    out(f"  before training       {_row(result['before'])}   (article: {_row(REFERENCE[example, 'before'])})")
    out(f"  after training        {_row(result['after'])}   (article: {_row(REFERENCE[example, 'after'])})")
    if example.activation:
        first = train(example, "first")
        out(f"  after, ties='first'   {_row(first['after'])}   "
            f"(PyTorch's rule: {_row(REFERENCE[example, 'after, ties=first'])})")
        out(f"  Why they differ: in {result['steps_with_ties']} of {result['steps']} update steps a "
            f"2×2 window held its ReLU'd maximum twice; the article's mask gives every tied "
            f"position the full gradient, PyTorch only the first.")
        result["first"] = first
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", metavar="DIR", help="also write the graph pictures (PNG) here")
    args = parser.parse_args(argv)
    for example in (EXAMPLE_1, EXAMPLE_2):
        report(example)
    if args.graphs:
        from article_pictures import write_pictures  # noqa: E402  (examples/ is on sys.path)
        for path in write_pictures(Path(args.graphs)):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
