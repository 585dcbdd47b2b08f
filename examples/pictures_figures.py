"""Two figures for docs/visualization.md: the three tie rules of max_pool2d on the article's
Example 2, and the fan-in of a convolution and a max pool (viz.fan_in).

Every gradient drawn is the engine's: max_pool2d run with each ``ties=`` and backward of the
upstream gradient of the real training step.

Run:  python examples/pictures_figures.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import tinygrad_pool.nn.functional as F
from tinygrad_pool import tensor
from tinygrad_pool.optim import SGD
from tinygrad_pool.ops.pool import TIE_RULES
from tinygrad_pool.viz import fan_in

sys.path.insert(0, str(Path(__file__).resolve().parent))
import article_network as article  # noqa: E402
from article_pictures import (ARGMAX_COLOUR, TIE_COLOUR, arrow, number, panel,  # noqa: E402
                              picture, render_png)

# Example 2's first epoch (1-based) whose step on x1 holds a clearly visible tied maximum
# (0.382 twice in each right-hand window); the first ties, from epoch 120 on, are 0.002.
TIE_EPOCH = 124
UNIQUE_MAX_COLOUR = "#ffe08a"  # a window's only maximum (fan_in's colour for a cell read)
RULE_TEXT = {"first": "ties='first' (PyTorch): the stored argmax gets all of it",
             "split": "ties='split': each tied cell gets an equal share",
             "all": "ties='all' (the article): each tied cell gets all of it"}


def tied_step() -> dict:
    """ReLU(L1) and ∂cost/∂L1Max of Example 2's step on x1 in epoch TIE_EPOCH (article rule)."""
    example = article.EXAMPLE_2
    net = article.ArticleNetwork(*example.initial_weights(), example.activation, "all")
    optimizer = SGD(net.parameters(), lr=example.learning_rate)
    for epoch in range(1, TIE_EPOCH + 1):
        for k, (image, target) in enumerate(zip(article.IMAGES, example.targets())):
            layers = net.layers(image)
            if epoch == TIE_EPOCH and k == 0:
                layers["L1Max"].retain_grad()
                net.cost(image, target, layers).backward()
                return {"input": layers["L1A"].numpy(), "upstream": layers["L1Max"].grad.numpy()}
            cost = net.cost(image, target, layers)
            optimizer.zero_grad()
            cost.backward()
            optimizer.step()
    raise AssertionError("unreachable")


def tie_rules_picture():
    step = tied_step()
    values, upstream = step["input"], step["upstream"]
    if article.tied_windows(values, activation=True) == 0:
        raise AssertionError(f"pictures_figures: epoch {TIE_EPOCH} no longer has a tied window")
    maxima = F.max_pool2d(tensor(values), 2).numpy()
    is_max = (values == maxima.repeat(2, axis=2).repeat(2, axis=3))[0, 0]
    rows, cols = is_max.shape
    maxima_per_window = is_max.reshape(rows // 2, 2, cols // 2, 2).sum(axis=(1, 3))
    tied = is_max & (maxima_per_window.repeat(2, axis=0).repeat(2, axis=1) > 1)
    shade = np.where(tied, TIE_COLOUR, np.where(is_max, UNIQUE_MAX_COLOUR, ""))
    panels = [panel("ReLU(L1): each window's max shaded\n(yellow: one max, blue: tied)", values,
                    shade),
              arrow("upstream\n∂cost/∂L1Max"),
              panel("∂cost/∂L1Max", upstream)]
    gradients = []
    for rule in TIE_RULES:
        x = tensor(values, requires_grad=True)
        F.max_pool2d(x, 2, ties=rule).backward(upstream)
        grad = x.grad.numpy()[0, 0]
        gradients.append(panel(f"∂cost/∂ReLU(L1), ties='{rule}'", grad,
                               np.where(grad != 0, ARGMAX_COLOUR, ""),
                               note=f"sum of the top-right window: {number(grad[:2, 2:].sum())}"))
    g = upstream[0, 0, 0, 1]
    caption = (f"Example 2, training step on x1 in epoch {TIE_EPOCH} (the article's training). The "
               f"top-right window holds its maximum {number(maxima[0, 0, 0, 1])} twice, and its "
               f"upstream gradient is {number(g)}.\n"
               + "\n".join(RULE_TEXT.values())
               + "\n'first' and 'split' send the window exactly its gradient (subgradients of the "
               "max); 'all' sends it twice. Blue: cells that receive a gradient. Rounded to 3 decimals.")
    rows = [("the pooled values and the gradient arriving from above", panels),
            ("what each tie rule of max_pool2d sends back (engine's backward)", gradients)]
    return picture("max_pool2d's three tie rules on a tied window", rows, caption, "tie rules")


FAN_IN_CELL = (3, 3)  # with a 3×3 kernel, stride 2 and padding 1: a cell in four windows


def fan_in_pictures() -> dict:
    """A 3×3 convolution with stride 2 and padding 1, and a 3×3 max pool with stride 2 and
    padding 1, of one small image, each after the backward of L = ½ Σ (output − target)²: so
    ∂L/∂output = output − target, and fan_in shows the numbers backward computes with it.

    The image's largest value sits at FAN_IN_CELL, so all four pooling windows holding it choose
    it. Each picked input cell's gradient in the picture is checked against the engine's."""
    image = ((np.arange(36.0) * 7) % 11 - 5).reshape(1, 1, 6, 6) / 4
    image[(0, 0) + FAN_IN_CELL] = 2.0
    kernel = tensor(np.array([[1.0, 0.5, -1.0], [0.25, 2.0, -0.5], [-1.0, 0.75, 1.0]])
                    .reshape(1, 1, 3, 3), requires_grad=True)
    target = tensor((np.arange(9.0).reshape(1, 1, 3, 3) - 4) / 4)
    pictures = {}
    for op, make_output in (("conv", lambda x: F.conv2d(x, kernel, stride=2, padding=1)),
                            ("pool", lambda x: F.max_pool2d(x, 3, stride=2, padding=1))):
        x = tensor(image, requires_grad=True)
        output = make_output(x)
        output.retain_grad()  # fan_in reads ∂L/∂output from output.grad
        (((output - target) ** 2).sum() * 0.5).backward()
        pictures[f"fan_in_{op}_output.png"] = fan_in(output, output_cell=(0, 1) if op == "conv"
                                                     else (1, 1))
        pictures[f"fan_in_{op}_input.png"] = picked = fan_in(output, input_cell=FAN_IN_CELL)
        engine = x.grad.numpy()[(0, 0) + FAN_IN_CELL]
        if not np.isclose(picked.input_gradient, engine, rtol=0, atol=1e-12):
            raise AssertionError(f"pictures_figures: fan_in's sum {picked.input_gradient} is not "
                                 f"the engine's ∂L/∂input {engine}")
    return {name: pictures[name] for name in ("fan_in_conv_output.png", "fan_in_conv_input.png",
                                              "fan_in_pool_output.png", "fan_in_pool_input.png")}


def make(out_dir) -> list:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [render_png(tie_rules_picture(), out_dir / "tie_rules.png")]
    for name, graph in fan_in_pictures().items():
        written.append(render_png(graph, out_dir / name))
    return written


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
