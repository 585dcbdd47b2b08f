"""The benchmark's workloads, written once for tinygrad_pool and PyTorch.

Each builder takes the framework's module (``tinygrad_pool`` or ``torch``) and returns a
no-argument callable that runs one step and returns the step's loss (a scalar tensor; the
worker reads the first one to check that both frameworks compute the same thing). The code is
what a user writes, and it is the same text for both frameworks: tinygrad_pool has PyTorch's
API, so ``lib.nn.Conv2d``, ``lib.optim.SGD`` and ``lib.nn.functional.cross_entropy`` name the
same things in both.

  a  LeNet-style step: 64×1×28×28 → conv 8@3×3 → ReLU → max-pool 2 → linear 10 → cross-entropy,
     forward + backward (no optimizer; the input needs no gradient)
  b  conv2d 32×16×32×32, 32 filters 3×3, padding 1, then max-pool 2, forward + backward
     (input gradient included)
  c  max_pool2d alone on 64×16×32×32, kernel 3, stride 2 (overlapping windows), fwd + bwd
  d  the seed article's network, full training of both examples (per-image SGD, float64):
     per-op overhead on tiny tensors
  e  a chain of elementwise ops (mul, add, tanh in turn; 10,000 by default) on 16 elements,
     forward + backward: engine overhead
  f  LeNet-5 training step on 1×28×28 (batch 1, 64, 256 in the table)
  g  VGG-style block training step on 3×32×32, batch 32
  h  MLP 784-128-10 training step, batch 64

f, g, h are full training steps: ``zero_grad(set_to_none=True)``, forward, cross-entropy,
backward, ``SGD(lr=0.01, momentum=0.9).step()``, float32, from the same initial weights in
every framework (drawn here with NumPy from PyTorch's default distribution and copied in).
"""
import math
import os
import sys

import numpy as np

F32 = np.float32
LEARNING_RATE, MOMENTUM = 0.01, 0.9

# ---- the three networks of f, g, h, as layer lists every framework can build -------------------
# ("conv", in, out, kernel, padding) | ("pool", kernel) | ("fc", in, out) | "relu" | "flatten"
NETWORKS = {
    "lenet5": ((1, 28, 28), [
        ("conv", 1, 6, 5, 2), "relu", ("pool", 2),
        ("conv", 6, 16, 5, 0), "relu", ("pool", 2),
        "flatten", ("fc", 16 * 5 * 5, 120), "relu", ("fc", 120, 84), "relu", ("fc", 84, 10)]),
    "vgg": ((3, 32, 32), [
        ("conv", 3, 32, 3, 1), "relu", ("conv", 32, 32, 3, 1), "relu", ("pool", 2),
        ("conv", 32, 64, 3, 1), "relu", ("pool", 2),
        "flatten", ("fc", 64 * 8 * 8, 10)]),
    "mlp": ((784,), [("fc", 784, 128), "relu", ("fc", 128, 10)]),
}


def initial_weights(network, seed=0):
    """Each layer's (weight, bias) as float32 arrays, from PyTorch's default initialisation
    (kaiming-uniform with a=√5 for the weight and the same bound for the bias:
    U(−1/√fan_in, 1/√fan_in)), so that every framework starts from the same numbers."""
    rng = np.random.default_rng(seed)
    arrays = []
    for layer in NETWORKS[network][1]:
        if isinstance(layer, tuple) and layer[0] in ("conv", "fc"):
            shape = (layer[2], layer[1], layer[3], layer[3]) if layer[0] == "conv" else (layer[2], layer[1])
            bound = 1 / math.sqrt(math.prod(shape[1:]))
            arrays.append(rng.uniform(-bound, bound, shape).astype(F32))
            arrays.append(rng.uniform(-bound, bound, shape[0]).astype(F32))
    return arrays


def batch(network, size, seed=1):
    """Inputs (standard normal, float32) and class labels (0-9) for one step."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((size, *NETWORKS[network][0]), dtype=F32),
            rng.integers(0, 10, size))


def sequential(lib, network):
    """The network as ``lib.nn.Sequential``, with the shared initial weights copied in."""
    nn = lib.nn
    modules = []
    for layer in NETWORKS[network][1]:
        if layer == "relu":
            modules.append(nn.ReLU())
        elif layer == "flatten":
            modules.append(nn.Flatten())
        elif layer[0] == "conv":
            modules.append(nn.Conv2d(layer[1], layer[2], layer[3], padding=layer[4]))
        elif layer[0] == "pool":
            modules.append(nn.MaxPool2d(layer[1]))
        else:
            modules.append(nn.Linear(layer[1], layer[2]))
    model = nn.Sequential(*modules)
    with lib.no_grad():
        for parameter, array in zip(model.parameters(), initial_weights(network), strict=True):
            parameter.copy_(lib.from_numpy(array))
    return model


def training_step(lib, network, size):
    model = sequential(lib, network)
    optimizer = lib.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    images, labels = batch(network, size)
    x, y = lib.from_numpy(images), lib.from_numpy(labels)
    cross_entropy = lib.nn.functional.cross_entropy

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def lenet5(lib, size=64):
    return training_step(lib, "lenet5", size)


def vgg(lib, size=32):
    return training_step(lib, "vgg", size)


def mlp(lib, size=64):
    return training_step(lib, "mlp", size)


# ---- a-e: the earlier workloads, unchanged in what they compute -------------------------------
def lenet_style(lib, size=64):
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((size, 1, 28, 28), dtype=F32))
    labels = lib.from_numpy(rng.integers(0, 10, size))
    w1 = lib.tensor(rng.standard_normal((8, 1, 3, 3), dtype=F32) * 0.3, requires_grad=True)
    b1 = lib.zeros(8, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((10, 8 * 13 * 13), dtype=F32) * 0.03, requires_grad=True)
    b2 = lib.zeros(10, requires_grad=True)
    params = (w1, b1, w2, b2)

    def step():
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
        loss = F.cross_entropy(F.linear(h.reshape(size, -1), w2, b2), labels)
        loss.backward()
        for p in params:
            p.grad = None
        return loss
    return step


def conv_pool(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((32, 16, 32, 32), dtype=F32), requires_grad=True)
    w = lib.tensor(rng.standard_normal((32, 16, 3, 3), dtype=F32) * 0.1, requires_grad=True)

    def step():
        loss = F.max_pool2d(F.conv2d(x, w, padding=1), 2).sum()
        loss.backward()
        x.grad = w.grad = None
        return loss
    return step


def pool(lib):
    F = lib.nn.functional
    x = lib.tensor(np.random.default_rng(2).standard_normal((64, 16, 32, 32), dtype=F32),
                   requires_grad=True)

    def step():
        loss = F.max_pool2d(x, 3, stride=2).sum()
        loss.backward()
        x.grad = None
        return loss
    return step


# The seed article's two 6×6 images and its two training runs (docs: ARTICLE_NETWORK.md), from
# the example that reproduces the article (one copy of its data).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from article_network import EXAMPLE_1, EXAMPLE_2, IMAGES  # noqa: E402

ARTICLE_RUNS = tuple(  # seed, W1 scale, epochs, lr, with ReLU + arctan
    (e.seed, e.w1_scale, e.epochs, e.learning_rate, e.activation) for e in (EXAMPLE_1, EXAMPLE_2))


def article(lib):
    F = lib.nn.functional
    images = [lib.from_numpy(img.reshape(1, 1, 6, 6)) for img in IMAGES]
    sums = [img.sum() for img in IMAGES]

    def train():
        """Both trainings; returns the sum of the final output weights of both (to compare)."""
        final = 0.0
        for seed, scale, epochs, lr, activations in ARTICLE_RUNS:
            rng = np.random.RandomState(seed)
            w1 = lib.tensor(rng.randn(3, 3) * scale, requires_grad=True)
            w2 = lib.tensor(rng.randn(4, 1) * 5.7, requires_grad=True)
            targets = [lib.tensor(np.arctan(s) if activations else s) for s in sums]
            for _ in range(epochs):
                for image, target in zip(images, targets):
                    # True convolution = cross-correlation with the flipped kernel.
                    layer1 = F.conv2d(image, w1.flip((0, 1)).reshape(1, 1, 3, 3))
                    if activations:
                        layer1 = layer1.relu()
                    out = F.max_pool2d(layer1, 2).reshape(1, 4) @ w2
                    if activations:
                        out = out.arctan()
                    cost = ((out - target) ** 2).sum() * 0.5
                    cost.backward()
                    with lib.no_grad():
                        w1 -= lr * w1.grad
                        w2 -= lr * w2.grad
                    w1.grad = w2.grad = None
            final += w2.sum().item()
        return final
    return train


def chain(lib, length=10_000):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal(16, dtype=F32), requires_grad=True)
    scale = lib.full((16,), 0.9)
    shift = lib.from_numpy(rng.standard_normal(16, dtype=F32) * 0.1)

    def step():
        y = x
        for i in range(length):
            kind = i % 3
            y = y * scale if kind == 0 else (y + shift if kind == 1 else y.tanh())
        loss = y.sum()
        loss.backward()
        x.grad = None
        return loss
    return step


# ---- FLOPs of (g), for the GEMM ceiling ---------------------------------------------------------
def training_flops(network, size):
    """Multiply-adds ×2 of forward + backward, counted on the GEMM layers only (convolutions and
    linear layers; ReLU, pooling and the loss are a rounding error beside them).

    Forward of a convolution: 2·N·Cout·Ho·Wo·Cin·k²; backward: the same again for the weight
    gradient and again for the input gradient, except in the first layer (the images need no
    gradient). Linear layers likewise, with Ho·Wo·k² = 1."""
    channels, height, width = (NETWORKS[network][0] + (1, 1))[:3]
    total, first = 0, True
    for layer in NETWORKS[network][1]:
        if not isinstance(layer, tuple):
            continue
        if layer[0] == "pool":
            height, width = height // layer[1], width // layer[1]
            continue
        if layer[0] == "conv":
            _, cin, cout, k, pad = layer
            height, width = height + 2 * pad - k + 1, width + 2 * pad - k + 1
            forward = 2 * size * cout * height * width * cin * k * k
        else:
            forward = 2 * size * layer[1] * layer[2]
        total += forward * (2 if first else 3)
        first = False
    return total
