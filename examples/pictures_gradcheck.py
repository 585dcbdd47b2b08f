"""docs/visualization.md's kink picture: what gradcheck sees at a tie in a max-pool window.

The function is L(x) = Σ R · max_pool2d(x, 2) for gradcheck's own random weighting R, on a 2×2
window whose cells (0, 1) and (1, 0) tie at the maximum. Moving cell (0, 1) by t traces L along
one coordinate: flat to the left (the other cell is the max), slope R to the right (this cell
wins). The picture shows that slice, the left and right derivatives gradcheck measured, the
central difference (their average: what a plain gradcheck compares with, and fails on), the
slope backward chose, and the reason gradcheck_report gives — all computed, nothing typed in.

Run:  python examples/pictures_gradcheck.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, no_grad, tensor
from tinygrad_pool.gradient_check import gradcheck_report

WINDOW = [[[[0.0, 1.0], [1.0, 0.0]]]]
CELL = (0, 0, 0, 1)


def make(out_dir) -> list:
    """Write ``gradcheck_kink.png`` into ``out_dir``; returns its path in a list."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    x = Tensor(WINDOW, dtype="float64", requires_grad=True)
    fn = lambda t: F.max_pool2d(t, 2)  # noqa: E731
    report = gradcheck_report(fn, [x])
    kink = next(k for k in report.kinks if k.index == CELL)
    weights = report.output_weights

    steps = np.linspace(-0.5, 0.5, 201)
    values = []
    with no_grad():
        for t in steps:
            moved = np.array(WINDOW)
            moved[CELL] += t
            values.append(float(np.sum(weights * fn(tensor(moved)).numpy())))
    at = values[100]

    plt.rcParams["svg.hashsalt"] = "tinygrad_pool"
    fig, ax = plt.subplots(figsize=(8.0, 4.6), dpi=110)
    # backward's choice first, wide and pale, so the one-sided slope it equals shows on top
    for slope, colour, style, width, name in (
            (kink.backward, "#9bd39b", "-", 6, f"backward's choice {kink.backward:.4g}"),
            (kink.left, "#1f77b4", "--", 1.4, f"left derivative {kink.left:.4g}"),
            (kink.right, "#d62728", "--", 1.4, f"right derivative {kink.right:.4g}"),
            (kink.numeric, "#7f7f7f", ":", 1.4,
             f"central difference {kink.numeric:.4g} (their mean: what a plain check compares)")):
        ax.plot(steps, at + slope * steps, color=colour, ls=style, lw=width, label=name)
    ax.plot(steps, values, color="#222222", lw=2.2, label="L(x + t·e), e = cell (0, 1)")
    ax.plot([0], [at], "o", color="#222222")
    ax.set_xlabel("t: how far cell (0, 1) moves from its tie with cell (1, 0)")
    ax.set_ylabel("L = Σ R · max_pool2d(x, 2)")
    ax.set_title("gradcheck at a tie: two one-sided slopes, and the one backward took")
    ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    ax.grid(alpha=0.3)
    fig.text(0.01, 0.01, "\n".join(textwrap.wrap("gradcheck_report: " + kink.reason, 125)),
             fontsize=7.2, va="bottom")
    fig.subplots_adjust(bottom=0.22, top=0.92, left=0.1, right=0.98)
    path = out_dir / "gradcheck_kink.png"
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return [path]


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
