"""Pictures for docs/visualization.md ("Backward replay"): frames of the seed article's network.

The first training step of Example 2 (conv → ReLU → max pool → @ W2 → arctan → ½(out − y)², on
image x1), replayed by ``tinygrad_pool.viz.replay``. Under PyTorch's tie rule two of its frames
are kept: the max-pool node routing its gradient to the chosen cells, and W1 receiving its
gradient; under the article's own rule (ties="all") the max-pool frame again, where every cell
tied with its window's max receives the gradient too.

Run:  python examples/pictures_replay.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import article_network as article  # noqa: E402

from tinygrad_pool.viz import replay  # noqa: E402

# (ties rule, frame (output or node name) -> file): PyTorch's rule, then the seed article's own
KEPT = [("first", {"L1Max": "replay_maxpool.png", "W1": "replay_w1.png"}),
        ("all", {"L1Max": "replay_maxpool_ties_all.png"})]


def make(out_dir) -> list:
    """Write the replay frames the docs show into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    example = article.EXAMPLE_2
    written = []
    for ties, kept in KEPT:
        net = article.ArticleNetwork(*example.initial_weights(), example.activation, ties=ties)
        cost = net.cost(article.X1, example.targets()[0])
        with tempfile.TemporaryDirectory() as scratch:
            frames = replay(cost, None, frames_dir=scratch)
            for frame in frames.frames:
                name = kept.get(frame.output_name) or kept.get(frame.name)
                if name:
                    written.append(Path(shutil.copyfile(
                        Path(scratch) / f"frame_{frame.index:03d}.png", out_dir / name)))
    return written


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
