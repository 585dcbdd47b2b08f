"""F.pad: constant padding (the ``Pad`` node, in movement.py) and the modes that copy input
cells into the border — reflect, replicate, circular.

Each padded axis is a map from output positions to the input cell they copy (resize.py's
``AxisMap``, one tap of weight 1): position j of an axis padded by (before, after) is input
position p = j - before, brought inside the input by the mode —

    reflect    mirrored about the edge cell:  -p before it, 2(n - 1) - p past it
    replicate  clamped to the edge cell:      min(max(p, 0), n - 1)
    circular   wrapped around:                p mod n  (torch crops first, then wraps
               around the m cells left: c + (j - max(before, 0)) mod m, c the first kept cell)

(a negative width crops: the same formula, p just never leaves the input on that side). The
op copies, so its backward adds each output cell's gradient into the cell it copied
(``EdgePadGrad``, resize.py's ``scatter``), and that backward's own backward is the copy again.
"""
from __future__ import annotations

import numpy as np

from ..args import check_choice, tensor_arg
from ..engine import Node, Tensor
from ..args import plural
from .movement import Pad, int_sizes
from .resize import AxisMap, FixedLinearMap, resample, scatter

PAD_MODES = ("constant", "reflect", "replicate", "circular")

# pad length -> the input ranks a non-constant mode pads with it (an unbatched and a batched one)
MODE_RANKS = {2: (2, 3), 4: (3, 4), 6: (4, 5)}


def edge_map(mode: str, size: int, before: int, after: int) -> AxisMap:
    """Which input cell each output position of one axis copies (see the module docstring)."""
    p = np.arange(size + before + after) - before
    if mode == "reflect":
        p = np.where(p < 0, -p, np.where(p >= size, 2 * (size - 1) - p, p))
    elif mode == "replicate":
        p = np.clip(p, 0, size - 1)
    else:  # circular: torch crops first, then wraps around what is left
        start, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
        p = (p + before - max(before, 0)) % max(kept, 1) + start
    return AxisMap(p.astype(np.intp)[:, None], None)


def edge_maps(input_shape: tuple, widths: tuple, mode: str) -> tuple:
    """The maps of the padded (trailing) axes; ``widths`` (before, after) for each of them."""
    first = len(input_shape) - len(widths)
    return tuple(edge_map(mode, input_shape[first + k], before, after)
                 for k, (before, after) in enumerate(widths))


class EdgePad(FixedLinearMap, Node):
    """out[j] = x[source(j)] per padded axis (reflect, replicate or circular);
    ∂L/∂x[i] = Σ over the j with source(j) = i of ∂L/∂out[j]  (EdgePadGrad)

    ``widths``: (before, after) for each padded axis, the trailing ones. Pictures ask it which
    input cell an output cell copies (``coefficients``, ``window_cells``, ``cells_reading``)."""

    fresh_gradients = True  # scatter makes each gradient anew

    def forward(ctx, x, *, widths, mode):
        return resample(x, edge_maps(x.shape, widths, mode))

    def backward(ctx, grad):
        return EdgePadGrad.call(grad, input_shape=tuple(ctx.parents[0].shape), **ctx.attrs)

    def maps(self) -> tuple:
        return edge_maps(tuple(self.parents[0].shape), self.attrs["widths"], self.attrs["mode"])


class EdgePadGrad(Node):
    """z[i] = Σ over the j with source(j) = i of g[j], EdgePad's input gradient; linear in g, so
    ∂L/∂g[j] = Z[source(j)]  (EdgePad)"""

    fresh_gradients = True

    def forward(ctx, g, *, input_shape, widths, mode):
        padded = input_shape[len(input_shape) - len(widths):]
        return scatter(g, edge_maps(input_shape, widths, mode), padded)

    def backward(ctx, grad):
        a = ctx.attrs
        return EdgePad.call(grad, widths=a["widths"], mode=a["mode"])


def _check_edge_widths(mode: str, shape: tuple, widths: tuple, pad: tuple) -> None:
    """torch's rules for the modes that copy input cells."""
    padded = shape[len(shape) - len(widths):]
    names = "DHW"[3 - len(widths):]
    if mode == "circular":
        for n, (before, after) in zip(padded, widths):
            kept = n - max(-before, 0) - max(-after, 0)
            if before > n or after > n:
                raise RuntimeError(f"pad: Padding value causes wrapping around more than once "
                                   f"(mode='circular', pad={pad}, a width above the size {n} "
                                   f"of the dim it pads)")
            if kept < 0:
                raise RuntimeError(f"pad: Negative padding value is resulting in an empty "
                                   f"dimension (mode='circular', pad={pad}, dim of size {n})")
            if max(before, after) > kept:  # (torch fails here too, with an error of its own)
                raise RuntimeError(f"pad: mode='circular' wraps around the {kept} cells that "
                                   f"cropping by pad={pad} leaves of a dim of size {n}, at most "
                                   f"once: a width above {kept} is not supported")
        return
    # reflect and replicate: every dim must be non-empty but a batch's (the first, when there
    # is one beyond the channels)
    if any(n == 0 for n in shape[1:]) or (len(shape) == len(widths) + 1 and shape[0] == 0):
        ranks = MODE_RANKS[2 * len(widths)]
        raise RuntimeError(f"pad: Expected {ranks[0]}D or {ranks[1]}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)} (mode={mode!r})")
    if mode == "reflect":
        for d, (n, (before, after)) in enumerate(zip(padded, widths)):
            if before >= n or after >= n:
                raise RuntimeError(f"pad: Argument #4: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding "
                                   f"({before}, {after}) at dimension {len(shape) - len(widths) + d}"
                                   f" of input {list(shape)} (mode='reflect')")
    out = [n + before + after for n, (before, after) in zip(padded, widths)]
    if len(widths) == 1 and out[0] < 1:  # (torch's 2-D and 3-D kernels make an empty output)
        raise RuntimeError(f"pad: input ({', '.join(f'{a}: {n}' for a, n in zip(names, padded))})"
                           f" is too small. Calculated output "
                           f"{' '.join(f'{a}: {n}' for a, n in zip(names, out))} "
                           f"(mode={mode!r}, pad={pad})")
    if min(out) < 0:
        raise RuntimeError(f"pad: Trying to create tensor with negative dimension {min(out)}: "
                           f"pad={pad} crops more than the whole of a dim of {list(shape)} "
                           f"(mode={mode!r})")


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """torch.nn.functional.pad: ``pad`` = (left, right) widths for the last dim, then for the one
    before it, and so on; a negative width crops. ``mode``: "constant" (``value``, default 0;
    movement.py's ``Pad``), or "reflect", "replicate", "circular", which pad the last 1, 2 or 3
    dims of a 2-D..5-D input (see the module docstring). Always a new tensor."""
    input = tensor_arg("pad", "input", input)
    # an unknown mode is torch's NotImplementedError ("Unrecognised padding mode"); not a str,
    # its TypeError
    check_choice("pad", "mode", mode, PAD_MODES, error=NotImplementedError)
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad: pad must be a tuple of ints, got {type(pad).__name__}")
    widths = int_sizes("pad", "pad", (tuple(pad),))
    if len(widths) % 2:
        raise RuntimeError(f"pad: padding length must be divisible by 2, got pad={widths}")
    if len(widths) > 2 * input.ndim:
        raise RuntimeError(f"pad: padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(widths)} and input "
                           f"of dimension {input.ndim}")
    # (left, right) pairs run from the last dim backwards
    pairs = tuple([(widths[i], widths[i + 1]) for i in range(0, len(widths), 2)][::-1])
    if mode == "constant":
        return _constant_pad(input, widths, pairs, value)
    if value is not None and value != 0:
        raise RuntimeError(f'pad: Padding mode "{mode}" doesn\'t take in value argument, got '
                           f"value={value!r}")
    if input.ndim not in MODE_RANKS.get(len(widths), ()):
        raise NotImplementedError(
            f"pad: Padding size {len(widths)} is not supported for {input.ndim}D input tensor "
            f"(mode={mode!r}). Supported combinations for non-constant padding: 2D or 3D input: "
            f"padding size = 2 (pads last dimension); 3D or 4D input: padding size = 4 (pads "
            f"last 2 dimensions); 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    _check_edge_widths(mode, tuple(input.shape), pairs, widths)
    return EdgePad.apply(input, widths=pairs, mode=mode)


def _constant_pad(input: Tensor, widths: tuple, pairs: tuple, value) -> Tensor:
    """Constant mode: the dims before the padded ones are not padded."""
    per_dim = ((0, 0),) * (input.ndim - len(pairs)) + pairs
    for d, (n, (before, after)) in enumerate(zip(input.shape, per_dim)):
        # torch crops first, then pads: cropping more than the whole dim is an error even
        # where the padding would make up for it
        if n - max(-before, 0) - max(-after, 0) < 0:
            raise RuntimeError(f"pad: pad={widths} crops "
                               f"{plural(max(-before, 0) + max(-after, 0), 'element')} from dim "
                               f"{d}, which has only {n}")
    if value is None:
        value = 0
    if not isinstance(value, (int, float, bool, np.number)):
        raise TypeError(f"pad: value must be a number, got {type(value).__name__}")
    return Pad.apply(input, widths=per_dim, value=value)
