"""The pictures of docs/visualization.md's "Interpolation and padding modes": the fan-in of
bilinear upsampling and of reflect padding (viz.fan_in), the corner cell of an image under
each of pad's modes reflect, replicate and circular, one above the other, and the graph of a
tiny upsampling network (conv → interpolate → reflect pad → conv, grouped by module).

Every gradient drawn is the engine's: each op runs on a small image, then the backward of
L = ½ Σ (output − target)², so ∂L/∂output = output − target; each picked input cell's sum in the
picture is checked against the engine's ∂L/∂input.

Run:  python examples/pictures_resize.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

from pathlib import Path

import graphviz
import numpy as np

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn, tensor
from tinygrad_pool.viz import fan_in

# Bilinear 4×4 → 8×8 (align_corners=False): output (3, 4) sits at input position
# (1.25, 1.75), so it blends rows 1, 2 by (0.75, 0.25) and columns 1, 2 by (0.25, 0.75).
BILINEAR_OUTPUT, BILINEAR_INPUT = (3, 4), (1, 2)
# Reflect padding of a 6×6 image by 1: output (0, 3) is padded position (-1, 2), the mirror
# of input (1, 2) about row 0; so input (1, 2) is copied twice, at outputs (0, 3) and (2, 3).
REFLECT_OUTPUT, REFLECT_INPUT = (0, 3), (1, 2)
# The corner cell of a 4×4 image padded by 1: reflect copies it nowhere (the border mirrors
# about it), replicate into the three border cells beside it, circular into the other corners.
PAD_MODES, CORNER = ("reflect", "replicate", "circular"), (0, 0)


def image(side: int) -> np.ndarray:
    """A (1, 1, side, side) image of small, distinct-looking values (multiples of ½)."""
    return ((np.arange(side * side) * 5.0) % 7 - 3).reshape(1, 1, side, side) / 2


def after_backward(make_output, x_array: np.ndarray):
    """(x, output) after the backward of L = ½ Σ (output − target)², output.grad retained."""
    x = tensor(x_array, requires_grad=True)
    output = make_output(x)
    output.retain_grad()  # fan_in reads ∂L/∂output from output.grad
    target = tensor(((np.arange(output.numel()) * 3.0) % 5 - 2).reshape(output.shape) / 4)
    (((output - target) ** 2).sum() * 0.5).backward()
    return x, output


def checked(picture, x, cell: tuple):
    """``picture`` of an input cell, its sum checked against the engine's ∂L/∂input."""
    engine = x.grad.numpy()[(0, 0) + cell]
    if not np.isclose(picture.input_gradient, engine, rtol=0, atol=1e-12):
        raise AssertionError(f"pictures_resize: fan_in's sum {picture.input_gradient} is not the "
                             f"engine's ∂L/∂input {engine}")
    return picture


def fan_in_pictures() -> dict:
    x, up = after_backward(
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), image(4))
    pictures = {"fan_in_bilinear_output.png": fan_in(up, output_cell=BILINEAR_OUTPUT),
                "fan_in_bilinear_input.png": checked(fan_in(up, input_cell=BILINEAR_INPUT), x,
                                                     BILINEAR_INPUT)}
    x, padded = after_backward(lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"), image(6))
    pictures["fan_in_reflect_output.png"] = fan_in(padded, output_cell=REFLECT_OUTPUT)
    pictures["fan_in_reflect_input.png"] = checked(fan_in(padded, input_cell=REFLECT_INPUT), x,
                                                   REFLECT_INPUT)
    return pictures


def pad_modes_picture() -> graphviz.Digraph:
    """The fan-in of CORNER under each of PAD_MODES, one above the other, each under its call."""
    figure = graphviz.Digraph(name="pad_modes", graph_attr={"dpi": "96", "pad": "0.1",
                                                            "ranksep": "0.3"},
                              node_attr={"shape": "plaintext", "fontname": "Helvetica",
                                         "fontsize": "11"})
    for mode in PAD_MODES:
        x, padded = after_backward(lambda x: F.pad(x, (1, 1, 1, 1), mode=mode), image(4))
        picture = checked(fan_in(padded, input_cell=CORNER), x, CORNER)
        title = f"F.pad(x, (1, 1, 1, 1), mode='{mode}'): the gradient of input cell {CORNER}"
        figure.node(mode, f'<<TABLE BORDER="0" CELLSPACING="0"><TR><TD ALIGN="LEFT"><FONT '
                          f'POINT-SIZE="14"><B>{title}</B></FONT></TD></TR><TR><TD>'
                          f'{picture.label[1:-1]}</TD></TR></TABLE>>')
    for above, below in zip(PAD_MODES, PAD_MODES[1:]):  # (an unseen edge: one above the other)
        figure.edge(above, below, style="invis")
    return figure


class UpsamplingNet(nn.Module):
    """A 4×4 image to an 8×8 one: a 3×3 conv, bilinear upsampling by 2, reflect padding by 1
    (so that the last 3×3 conv keeps the size without reading zeros), a 3×3 conv."""

    def __init__(self, channels: int = 2):
        super().__init__()
        self.encode = nn.Conv2d(1, channels, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear")
        self.pad = nn.ReflectionPad2d(1)
        self.decode = nn.Conv2d(channels, 1, 3)

    def forward(self, x):
        return self.decode(self.pad(self.up(F.relu(self.encode(x)))))


def upsampling_loss():
    """UpsamplingNet on a 1×1×4×4 image, mean squared error against an 8×8 target, after
    backward()."""
    tp.manual_seed(0)
    model = UpsamplingNet()
    rng = np.random.default_rng(0)
    small = tp.Tensor(rng.random((1, 1, 4, 4), dtype=np.float32), name="image")
    target = tp.Tensor(rng.random((1, 1, 8, 8), dtype=np.float32), name="target")
    loss = F.mse_loss(model(small), target)
    loss.name = "loss"
    loss.backward(retain_graph=True)
    return model, loss


def make(out_dir) -> list:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    pictures = fan_in_pictures()
    pictures["fan_in_pad_modes.png"] = pad_modes_picture()
    for name, picture in pictures.items():
        path = out_dir / name
        path.write_bytes(picture.pipe(format="png"))
        written.append(path)
    _, loss = upsampling_loss()
    written.append(Path(tp.save_graph(loss, out_dir / "graph_upsampling.png", group="module")))
    return written


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
