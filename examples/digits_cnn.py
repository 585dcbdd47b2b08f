"""A small CNN learns scikit-learn's 8×8 handwritten digits — a PyTorch-style training loop.

    conv 3×3 (1→16) ─ReLU─ max-pool 2 ─ conv 3×3 (16→32) ─ReLU─ max-pool 2 ─ flatten ─ linear (128→10)

The data ships inside scikit-learn (``load_digits``: 1,797 images, no download). The loop is the
one PyTorch users write — ``opt.zero_grad()``, ``loss.backward()``, ``opt.step()`` — with a tqdm
bar per epoch. Afterwards the script saves, under ``--out``:

    curves.png         training loss and train/test accuracy per epoch
    graph.png          the computation graph of one batch's loss (if Graphviz is installed)
    checkpoint.npz     the trained weights, then reloaded into a fresh model and re-evaluated

Run:  python examples/digits_cnn.py [--epochs 12] [--out out/digits] [--seed 0] [--quick]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import tinygrad_pool
from tinygrad_pool import Tensor, nn, no_grad, optim, tensor
import tinygrad_pool.nn.functional as F


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test): float32 images (N, 1, 8, 8) and int64 labels.

    The split is stratified and fixed by ``seed``. Pixels are standardised with the training
    set's mean and standard deviation (zero-centred inputs let Adam settle faster).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.images.astype(np.float32)[:, None, :, :]  # pixels are 0..16
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=test_fraction, random_state=seed, stratify=labels)
    mean, std = x_train.mean(), x_train.std()
    return (x_train - mean) / std, y_train, (x_test - mean) / std, y_test


def build_model(generator: np.random.Generator | None = None) -> nn.Sequential:
    """The CNN; weights drawn from ``generator`` (default: the one ``manual_seed`` sets)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1, generator=generator),   # 16 × 8 × 8
        nn.ReLU(),
        nn.MaxPool2d(2),                                                    # 16 × 4 × 4
        nn.Conv2d(16, 32, kernel_size=3, padding=1, generator=generator),  # 32 × 4 × 4
        nn.ReLU(),
        nn.MaxPool2d(2),                                                    # 32 × 2 × 2
        nn.Flatten(),                                                       # 128
        nn.Linear(32 * 2 * 2, 10, generator=generator),
    )


def evaluate(model: nn.Module, images: np.ndarray, labels: np.ndarray, batch_size: int = 512) -> float:
    """Accuracy in [0, 1], in eval mode and without recording a graph."""
    model.eval()
    correct = 0
    with no_grad():
        for start in range(0, len(images), batch_size):
            logits = model(tensor(images[start:start + batch_size]))
            correct += int((logits.numpy().argmax(axis=1) == labels[start:start + batch_size]).sum())
    return correct / len(images)


def train(model: nn.Module, data, epochs: int = 12, batch_size: int = 32, lr: float = 1e-2,
          seed: int = 0, progress: bool = True) -> dict:
    """Adam on mini-batches, reshuffled each epoch with a generator fixed by ``seed``, with the
    learning rate decaying from ``lr`` towards 0 along a half cosine.

    Returns the history: per epoch the mean training loss, the training accuracy (of the
    batches as they were seen) and the test accuracy.
    """
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = data
    optimizer = optim.Adam(model.parameters(), lr=lr)
    shuffle = np.random.default_rng(seed)
    history = {"loss": [], "train_accuracy": [], "test_accuracy": []}
    for epoch in range(1, epochs + 1):
        # Cosine decay of the learning rate, set per epoch through the optimizer's param group
        # (what torch.optim.lr_scheduler.CosineAnnealingLR does): big steps early, then settle.
        optimizer.param_groups[0]["lr"] = lr * 0.5 * (1 + np.cos(np.pi * (epoch - 1) / epochs))
        model.train()
        order = shuffle.permutation(len(x_train))
        batches = range(0, len(order), batch_size)
        bar = tqdm(batches, desc=f"epoch {epoch}/{epochs}", unit="batch", leave=True,
                   disable=not progress)
        total_loss = total_correct = seen = 0
        for start in bar:
            index = order[start:start + batch_size]
            logits = model(tensor(x_train[index]))
            loss = F.cross_entropy(logits, tensor(y_train[index]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            total_loss += loss.item() * len(index)
            total_correct += int((logits.numpy().argmax(axis=1) == y_train[index]).sum())
            seen += len(index)
            bar.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{total_correct / seen:.3f}")
        history["loss"].append(total_loss / seen)
        history["train_accuracy"].append(total_correct / seen)
        history["test_accuracy"].append(evaluate(model, x_test, y_test))
        if progress:
            bar.write(f"epoch {epoch}: loss {history['loss'][-1]:.4f}, test accuracy "
                      f"{history['test_accuracy'][-1]:.4f}")
    return history


def plot_curves(history: dict, path: Path) -> None:
    """Loss (left) and accuracy (right) per epoch, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history["loss"]) + 1)
    figure, (loss_axis, accuracy_axis) = plt.subplots(1, 2, figsize=(10, 4))
    loss_axis.plot(epochs, history["loss"], marker="o")
    loss_axis.set(title="training loss (cross-entropy)", xlabel="epoch", ylabel="loss")
    accuracy_axis.plot(epochs, history["train_accuracy"], marker="o", label="train")
    accuracy_axis.plot(epochs, history["test_accuracy"], marker="o", label="test")
    accuracy_axis.set(title="accuracy", xlabel="epoch", ylabel="accuracy")
    accuracy_axis.legend()
    for axis in (loss_axis, accuracy_axis):
        axis.grid(alpha=0.3)
        axis.xaxis.get_major_locator().set_params(integer=True)
    figure.suptitle("tinygrad_pool CNN on scikit-learn digits")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def save_loss_graph(model: nn.Module, images: np.ndarray, labels: np.ndarray, path: Path) -> bool:
    """Draw the graph of one small batch's loss; False, saying why, when Graphviz is missing
    (the `graphviz` Python package or its `dot` program): training never needs it."""
    from tinygrad_pool.viz import GraphvizNotFound, save_graph  # imported only when drawing

    for name, param in model.named_parameters():
        param.name = name  # the graph labels a tensor with its name: "0.weight", "7.bias", ...
    loss = F.cross_entropy(model(Tensor(images, name="images")),
                           tensor(labels))
    try:
        save_graph(loss, path)
    except (ImportError, GraphvizNotFound) as error:
        print(f"no graph: {error}")
        return False
    return True


def run(epochs: int, out: Path, seed: int, quick: bool = False, progress: bool = True) -> dict:
    """The whole example; returns what it measured (and the paths it wrote)."""
    out.mkdir(parents=True, exist_ok=True)
    tinygrad_pool.manual_seed(seed)
    data = load_data(seed)
    if quick:  # a shortened run for the tests: a third of the training images
        x_train, y_train, x_test, y_test = data
        data = (x_train[:480], y_train[:480], x_test, y_test)
    model = build_model()
    print(model)
    started = time.perf_counter()
    history = train(model, data, epochs=epochs, seed=seed, progress=progress)
    seconds = time.perf_counter() - started
    accuracy = history["test_accuracy"][-1]
    print(f"trained {epochs} epochs in {seconds:.1f} s; test accuracy {accuracy:.4f}")

    curves, graph, checkpoint = out / "curves.png", out / "graph.png", out / "checkpoint.npz"
    plot_curves(history, curves)
    has_graph = save_loss_graph(model, data[0][:4], data[1][:4], graph)
    tinygrad_pool.save(model.state_dict(), checkpoint)

    fresh = build_model(np.random.default_rng(seed + 1))  # different weights until loaded
    fresh.load_state_dict(tinygrad_pool.load(checkpoint))
    reloaded_accuracy = evaluate(fresh, data[2], data[3])
    print(f"test accuracy after reloading {checkpoint}: {reloaded_accuracy:.4f} "
          f"(before saving: {accuracy:.4f})")
    print(f"wrote {curves}" + (f", {graph}" if has_graph else " (no graph: Graphviz is not "
                               "installed)") + f", {checkpoint}")
    return dict(history=history, accuracy=accuracy, reloaded_accuracy=reloaded_accuracy,
                seconds=seconds, curves=curves, graph=graph if has_graph else None,
                checkpoint=checkpoint)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=None, help="epochs (default 12, or 3 with --quick)")
    parser.add_argument("--out", type=Path, default=Path("out/digits"), help="output directory")
    parser.add_argument("--seed", type=int, default=0, help="seed for init, split and shuffling")
    parser.add_argument("--quick", action="store_true", help="a short run on fewer images (tests)")
    parser.add_argument("--no-progress", action="store_true", help="hide the tqdm bars")
    args = parser.parse_args(argv)
    epochs = args.epochs if args.epochs is not None else (3 if args.quick else 12)
    return run(epochs, args.out, args.seed, quick=args.quick, progress=not args.no_progress)


if __name__ == "__main__":
    main()
