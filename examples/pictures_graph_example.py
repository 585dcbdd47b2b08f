"""docs/graph_rendering.md's example picture: conv → max pool → cost, with values, gradients and
the pooling argmax, exactly the code that page shows.

Run:  python examples/pictures_graph_example.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F


def make(out_dir) -> list:
    """Write ``graph_example.png`` into ``out_dir``; returns its path in a list."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    x = tp.Tensor((np.arange(25.0) * 7 % 11).reshape(1, 1, 5, 5), dtype=tp.float64, name="x")
    W = tp.Tensor([[[[0.5, -1.0], [1.0, 0.25]]]], dtype=tp.float64, requires_grad=True,
                  name="W")
    L1 = F.conv2d(x, W).retain_grad()     # keep .grad on intermediates we want to see
    L1.name = "L1"
    p = F.max_pool2d(L1, 2).retain_grad()
    p.name = "pooled"
    cost = F.sum_of_squares(p) * 0.5
    cost.name = "cost"
    cost.backward(retain_graph=True)      # keep the saved buffers (argmax, cols) to show them
    return [tp.save_graph(cost, out_dir / "graph_example.png", show_values=True, show_saved=True)]


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
