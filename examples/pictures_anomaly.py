"""docs/visualization.md's anomaly picture: a dead ReLU under a root-mean-square loss. Forward
is finite (√0 = 0), but backward through √ at 0 is inf; anomaly mode stops there, and
``draw_graph(..., anomalies=True)`` marks that node in red with anomaly mode's message.

Run:  python examples/pictures_anomaly.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd


def make(out_dir) -> list:
    """Write ``anomaly_backward.png`` into ``out_dir``; returns its path in a list."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    x = tp.Tensor(np.arange(1.0, 17.0).reshape(1, 1, 4, 4) / 4, dtype=tp.float64, name="x")
    W = tp.Tensor([[[[-0.5, -1.0], [0.25, -0.5]]]], dtype=tp.float64, requires_grad=True,
                  name="W")
    with autograd.set_detect_anomaly(True):  # (detect_anomaly would warn each time)
        h = F.relu(F.conv2d(x, W))            # every response is negative: a dead ReLU
        p = F.max_pool2d(h, 2)
        loss = (p * p).mean().sqrt()          # root mean square: √0 = 0, a finite forward
        loss.name = "rms"
        try:
            loss.backward()
        except RuntimeError:  # Function 'SqrtBackward0' returned inf values in its 0th output
            pass
    return [tp.save_graph(loss, out_dir / "anomaly_backward.png", anomalies=True,
                          show_values=True, legend=True)]


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
