"""The pictures of docs/visualization.md's "Graphs that stay readable" section, and the networks
they show (tests/test_graph_modules.py draws the same ones).

    python examples/pictures_graphs.py docs/images

``SmallCNN``      conv → ReLU → max pool twice, then a classifier: drawn with group="module",
                  every nn.Module call a cluster, and again with stats=True.
``ResNetStyle``   a stem, 8 residual blocks (bottlenecks gated by CBAM's channel attention, in
                  four stages) and a head: over 300 ops, drawn with depth=1, one node per
                  block.
"""
from __future__ import annotations

import pathlib

import numpy as np

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8 * 2 * 2, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class ChannelGate(nn.Module):
    """Each channel scaled by a gate computed from all channels' means and maxima (the
    channel attention of CBAM: squeeze-and-excitation with a second, max-pooled squeeze)."""

    def __init__(self, channels: int, reduced: int):
        super().__init__()
        self.mean, self.max = nn.AdaptiveAvgPool2d(1), nn.AdaptiveMaxPool2d(1)
        self.flatten = nn.Flatten()
        self.reduce, self.expand = nn.Linear(channels, reduced), nn.Linear(reduced, channels)

    def squeeze(self, pooled):
        return self.expand(F.relu(self.reduce(self.flatten(pooled))))

    def forward(self, x):
        gate = (self.squeeze(self.mean(x)) + self.squeeze(self.max(x))).sigmoid()
        return x * gate.reshape(x.shape[0], x.shape[1], 1, 1)


class Bottleneck(nn.Module):
    """1×1 conv down, 3×3 conv (strided where the stage halves the image), 1×1 conv up, each
    with batch norm; gated; plus the skip, itself a strided 1×1 conv where the width changes."""

    def __init__(self, channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        inner = out_channels // 2
        self.reduce = nn.Sequential(nn.Conv2d(channels, inner, 1, bias=False),
                                    nn.BatchNorm2d(inner), nn.ReLU())
        self.conv = nn.Sequential(nn.Conv2d(inner, inner, 3, stride, padding=1, bias=False),
                                  nn.BatchNorm2d(inner), nn.ReLU())
        self.expand = nn.Sequential(nn.Conv2d(inner, out_channels, 1, bias=False),
                                    nn.BatchNorm2d(out_channels))
        self.gate = ChannelGate(out_channels, inner)
        self.shortcut = (nn.Identity() if stride == 1 and channels == out_channels else
                         nn.Sequential(nn.Conv2d(channels, out_channels, 1, stride, bias=False),
                                       nn.BatchNorm2d(out_channels)))

    def forward(self, x):
        return F.relu(self.shortcut(x) + self.gate(self.expand(self.conv(self.reduce(x)))))


class ResNetStyle(nn.Module):
    """A stem, four stages of two blocks (the later three halve the image and double the
    width) and a classifier head."""

    def __init__(self, width: int = 8, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2))
        widths = [width * 2 ** (i // 2) for i in range(8)]
        self.blocks = nn.ModuleList([
            Bottleneck(widths[max(i - 1, 0)], widths[i], stride=2 if i in (2, 4, 6) else 1)
            for i in range(8)])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(widths[-1], classes))

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def small_cnn_loss():
    """SmallCNN on a 1×1×8×8 image, cross-entropy against class 2, after backward()."""
    tp.manual_seed(0)
    model = SmallCNN()
    image = tp.Tensor(np.random.default_rng(0).random((1, 1, 8, 8), dtype=np.float32), name="image")
    loss = F.cross_entropy(model(image), tp.tensor([2]))
    loss.name = "loss"
    loss.backward(retain_graph=True)
    return model, loss


def resnet_loss():
    """ResNetStyle on two 3×16×16 images, cross-entropy, after backward()."""
    tp.manual_seed(0)
    model = ResNetStyle()
    images = tp.Tensor(np.random.default_rng(1).standard_normal((2, 3, 16, 16), dtype=np.float32),
                       name="images")
    loss = F.cross_entropy(model(images), tp.tensor([3, 7]))
    loss.name = "loss"
    loss.backward()
    return model, loss


def make(out_dir) -> list[pathlib.Path]:
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _, loss = small_cnn_loss()
    written = [tp.save_graph(loss, out_dir / "graph_modules.png", group="module"),
               tp.save_graph(loss, out_dir / "graph_stats.png", group="module", stats=True,
                             collapse="classifier")]
    _, loss = resnet_loss()
    written.append(tp.save_graph(loss, out_dir / "graph_resnet_depth1.png", group="module",
                                 depth=1))
    return written


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
