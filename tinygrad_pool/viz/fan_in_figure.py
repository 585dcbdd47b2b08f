"""Which cells a convolution, transposed convolution or max-pool output read, and where its
gradient goes back to.

    from tinygrad_pool.viz import fan_in
    fan_in(pooled, output_cell=(0, 1))   # the window it read, the cell it chose (receives its grad)
    fan_in(L1, input_cell=(2, 3))        # every output whose gradient flows back into x[2, 3]
    fan_in(up, output_cell=(4, 4))       # conv_transpose2d: the input cells spread onto it

A transposed convolution is conv2d's adjoint: input cell (h, w) spreads onto the output cells
(h·s - p + i·d, w·s - p + j·d) that conv2d's window of output (h, w) would read, so its two
pictures are conv2d's two with input and output exchanged.

Interpolation and pad's copying modes (reflect, replicate, circular) are fixed linear maps:
each output cell is a weighted sum of input cells (its ``coefficients``), tagged in each cell
read (4 significant digits; untagged: 1, a copy), its gradient going back as g·c. A padding
op's border, the cells it added around the copy of its input, is drawn grey.

Both read only what the graph already holds, and ask the op about itself (see "what the op
is" below): the cells each output read and the outputs that read each input cell, its weight,
and for max pooling the cells its tie rule pays (from the argmax it saved or, once backward
freed it, the same first-maximum rule run again on the input). Nothing is changed: no
``.grad``, nothing a node saved.

With a gradient at the output (``grad_output=``, or the output's ``.grad`` after
``retain_grad()`` and backward) the picture also shows the numbers of backward: for an input
cell, each output's gradient g, what multiplies it (conv: the weight w; max pooling: the share of
its window, 1, 1/k or 0), the products, and their sum — the cell's gradient from this op; for an
output cell, where its g goes (conv: g·w to each input cell, g·x to each weight).

A plane larger than CROP cells a side (a 28×28 image) is drawn cut to the cells lit in it and
a cell of context around them, the cut sides marked "⋮" and "…" and its caption saying which
rows and columns it shows; each column of the picture holds at most MAX_PLANES planes and
counts the rest. The weight is titled by its name or its module path (``conv1.weight``; pass
``model=`` to name it within your model).

The result is a ``graphviz.Digraph`` (Jupyter shows it inline) whose ``links`` list every
connection drawn, as ``Link``s (below), ``padding`` the kernel taps of the picked output that
fall outside the input (they read padding), ``grad_output`` the (n, c, h, w) gradient used (or
None), ``input_gradient`` the picked input cell's gradient from this op (or None),
``summary`` the picture's caption and ``label`` the whole picture as the HTML-like label of its
one node (to set several pictures side by side in a graph of your own).
"""
from __future__ import annotations

import html
import textwrap
from typing import NamedTuple

import numpy as np

from ..nn.module import Module
from ..engine import Tensor
from .graph import STYLE, GraphDigraph
from .modules import dotted_paths, outermost_modules
from .summary import SMALL, number, plural, shape_text

READ, CHOSEN, PICKED, PAD = "#ffe08a", STYLE["argmax"], "#d62728", "#eeeeee"
DECIMALS = ".3f"         # how every number is written: 3 decimals (summary.number) ...
COEFFICIENT = ".4g"      # ... but a linear map's coefficients: 4 significant digits, so that
#                          bilinear's 0.1875 = 0.75 · 0.25 reads as that product, in its tag and table
SHOW_VALUES_UP_TO = 100  # cells of a plane; larger planes are drawn as coloured squares
CROP = 12                # a plane longer than this a side is cut to the cells lit in it ...
MARGIN = 1               # ... and this many more on each side (the cut sides marked ⋮ and …)
SQUARES = 224            # points: the most a plane drawn as squares takes a side (14 a square)
CUT = 16                 # points: the row or column that marks where a plane is cut
MAX_PLANES = 4           # planes in each column of the picture; the rest are counted
TITLE, CAPTION = 20, 15  # points: the rows of a plane's title (11-point bold) and caption (9)
SPACING = 6              # points between the planes of a column
TITLE_CHAR, CAPTION_CHAR = 7.5, 5.5  # points a character, at most, of each
TERMS_SHOWN = 12         # rows of the table of backward's terms; the sum always counts them all
CHAR_WIDTH = 6.6         # points per character of the table's 11-point text (bold: the widest)
ROW = 22                 # points: one line of 11-point text with its padding and border
WRAP = 100               # characters per line of the summary, so that a picture stays narrow


class Link(NamedTuple):
    """One input cell and one output cell that reads it (with a gradient: what backward sends)."""
    input: tuple              # (n, c, h, w) of the op's input
    output: tuple             # (n, c, h, w) of its output
    weight: tuple | None      # conv: the weight (f, c, i, j) multiplying them; pooling: None
    derivative: float         # ∂output/∂input: conv, that weight's value; max pooling, 1 for the
    #                           cell its window chose, 1/k under ties='split' (k tied), else 0
    gradient: float | None    # ∂L/∂output · derivative: what backward sends the input along this
    #                           link; None when no gradient at the output is known
    weight_gradient: float | None  # conv: ∂L/∂output · input, this pair's part of ∂L/∂weight;
    #                                None for pooling or when no gradient is known


class FanIn(GraphDigraph):
    """The picture, with the connections and numbers it shows as data."""
    links: tuple = ()
    padding: tuple = ()
    grad_output = None      # the (n, c, h, w) gradient arriving at the output, or None
    input_gradient = None   # input_cell= with a gradient: Σ link.gradient, the cell's ∂L/∂input
    summary = ""            # what the picture shows, in words (its last lines)
    label = ""              # the picture: its one node's HTML-like label, "<...>"


def fan_in(output: Tensor, *, output_cell=None, input_cell=None, grad_output=None,
           model=None) -> FanIn:
    """Pick one cell of a conv2d, conv_transpose2d or max_pool2d output (``output_cell``) to see
    the input cells and weights it read — for max pooling also the one it chose, the only cell
    its gradient reaches — or one cell of the op's input (``input_cell``) to see every output
    cell whose gradient flows back into it (conv: each window covering it, by the weight written
    in the cell; transposed conv: each output it is spread onto; max pooling: only the windows
    that chose it). A cell is (h, w) for the first image and channel, (c, h, w) for an
    unbatched input, or (n, c, h, w).

    ``grad_output`` (a Tensor or array of the output's shape; default: ``output.grad`` when
    set) is the gradient arriving at the output: with it the picture shows backward's terms
    and their sum. The weight is titled by its ``name``, else by its path among the modules
    called (``conv1.weight``: in ``model``, an nn.Module, when given; else in the outermost
    module whose call made ``output``). A plane more than CROP cells a side is cut to the
    cells lit in it, and a column shows at most MAX_PLANES planes; the rest are counted."""
    op, out_shape = _recorded_op(output)
    if model is not None and not isinstance(model, Module):
        raise TypeError(f"fan_in: model must be an nn.Module or None, got {type(model).__name__}")
    if (output_cell is None) == (input_cell is None):
        raise ValueError("fan_in: pass exactly one of output_cell= and input_cell=, got "
                         f"output_cell={output_cell!r}, input_cell={input_cell!r}")
    geometry, from_output = _geometry(op, out_shape), output_cell is not None
    cell = _cell("output_cell", output_cell, geometry["out_shape"]) if from_output else \
        _cell("input_cell", input_cell, geometry["x"].shape)
    grad = _grad_output(output, grad_output, geometry["out_shape"])
    links, padding = _read_by(geometry, cell) if from_output else (_flowing_into(geometry, cell), [])
    links = [_with_gradient(geometry, link, grad) for link in links]
    picture = FanIn(name="fan_in", graph_attr={"dpi": "96", "pad": "0.1"},
                    node_attr={"shape": "plaintext", "fontname": "Helvetica", "fontsize": "11"})
    picture.links, picture.padding, picture.grad_output = tuple(links), tuple(padding), grad
    if not from_output and grad is not None:
        picture.input_gradient = float(sum(link.gradient for link in links))
    picture.label = _label(geometry, cell, from_output, picture, op, model)
    picture.node("fan_in", picture.label)
    return picture


# ---- what the op is: it says so itself ----------------------------------------------------------
# fan_in draws an op that names the cells each output read (``window_cells``), the outputs that
# read an input cell (``cells_reading``), how its channels are grouped (``channel_groups``: input
# and output channels per group) and the padding its windows read (``padding_read``), and that
# either has a weight (``weight_input``, its position among the inputs; ``spreads``: the adjoint
# form, each input cell spread onto outputs) or pays cells by a rule (``paid_cells``: max
# pooling), or is a fixed linear map of its input whose ``coefficients(out_cell)`` give
# {input cell: ∂out/∂input} (interpolate's modes, pad's reflect/replicate/circular). Conv2d,
# ConvTranspose2d, MaxPool2d, Interpolate and EdgePad do; so may a user's own op.
def _drawn(fn) -> bool:
    return fn is not None and callable(getattr(fn, "window_cells", None)) and (
        getattr(fn, "weight_input", None) is not None or callable(getattr(fn, "paid_cells", None))
        or callable(getattr(fn, "coefficients", None)))


def _is_linear_map(fn) -> bool:
    """An op each output cell of which is a fixed weighted sum of input cells."""
    return callable(getattr(fn, "coefficients", None))


def _recorded_op(output) -> tuple:
    """(the node drawn, the shape (n, c, h, w) of its output)."""
    if not isinstance(output, Tensor):
        raise TypeError(f"fan_in: output must be a Tensor made by conv2d, conv_transpose2d or "
                        f"max_pool2d, got {type(output).__name__}")
    fn = output.grad_fn
    unbatched = getattr(fn, "drops_leading_axis", None)  # (a view that says so)
    if callable(unbatched) and output.ndim == 3 and _drawn(fn.parents[0].grad_fn) and unbatched():
        return fn.parents[0].grad_fn, tuple(fn.parents[0].shape)  # the op ran on a batch of one
    if not _drawn(fn):
        made_by = "a leaf" if fn is None else f"{fn.name}"
        raise ValueError(f"fan_in: output must be the result of conv2d, conv_transpose2d, "
                         f"max_pool2d, interpolate or pad (reflect, replicate, circular) recorded "
                         f"in the graph (some input requiring grad), got a tensor made by "
                         f"{made_by}")
    if _is_linear_map(fn) and (fn.parents[0].ndim != 4 or output.ndim != 4):
        raise ValueError(f"fan_in: draws planes of a 4-D (N, C, H, W) input and output; this "
                         f"{fn.name} maps a {fn.parents[0].ndim}-D input to a {output.ndim}-D "
                         f"output")
    return fn, tuple(output.shape)


def _geometry(fn, out_shape: tuple) -> dict:
    if getattr(fn.parents[0], "value_freed", False):
        raise ValueError(f"fan_in: the input of this {fn.name} was freed (only the graph held "
                         f"it, and backward no longer needed it); keep a reference to the "
                         f"input, or call backward(retain_graph=True), to show it")
    x, k = fn.parents[0]._data, getattr(fn, "weight_input", None)
    return dict(op=fn, x=x, out_shape=out_shape, weight=None if k is None else fn.parents[k]._data,
                spreads=bool(getattr(fn, "spreads", False)), pad=tuple(fn.padding_read()),
                groups=tuple(fn.channel_groups()), ties=fn.attrs.get("ties"),
                # the op's own tie rule (its argmax run again if backward freed it)
                paid=fn.paid_cells(x) if k is None and not _is_linear_map(fn) else None,
                linear=_is_linear_map(fn), border=_border(fn))


def _border(fn) -> tuple | None:
    """((top, bottom), (left, right)): the rows and columns of each output plane that a padding
    op (one naming its ``widths``, (before, after) for each padded trailing axis) added around
    the input's copy — drawn grey; None for an op that adds none. (A negative width crops.)"""
    widths = (fn.attrs.get("widths") if _is_linear_map(fn) else None) or ()
    border = (((0, 0),) * 2 + tuple((max(b, 0), max(a, 0)) for b, a in widths))[-2:]
    return border if any(map(any, border)) else None


def _cell(argument: str, cell, shape: tuple) -> tuple:
    """(n, c, h, w), checked against ``shape``."""
    if not isinstance(cell, (tuple, list)) or not all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in cell):
        raise TypeError(f"fan_in: {argument} must be a tuple of ints (h, w), (c, h, w) or "
                        f"(n, c, h, w), got {cell!r}")
    if len(cell) not in (2, 3, 4):
        raise ValueError(f"fan_in: {argument} must have 2, 3 or 4 indices (h, w), (c, h, w) or "
                         f"(n, c, h, w), got {len(cell)}: {cell!r}")
    full = (0,) * (4 - len(cell)) + tuple(int(i) for i in cell)
    if any(not 0 <= i < size for i, size in zip(full, shape)):
        raise ValueError(f"fan_in: {argument}={tuple(cell)!r} is outside the tensor of shape "
                         f"(n, c, h, w) = {tuple(shape)} (negative indices are not accepted)")
    return full


def _grad_output(output: Tensor, grad_output, out_shape: tuple):
    """The gradient arriving at the output as an (n, c, h, w) array, or None if none is known."""
    if grad_output is None:
        if output.grad is None:  # a non-leaf keeps .grad only after retain_grad() and backward
            return None
        grad_output = output.grad
    if not isinstance(grad_output, (Tensor, np.ndarray)):
        raise TypeError(f"fan_in: grad_output must be a Tensor or a NumPy array of the output's "
                        f"shape {tuple(output.shape)}, got {type(grad_output).__name__}")
    data = grad_output._data if isinstance(grad_output, Tensor) else grad_output
    if data.dtype.kind != "f":
        raise TypeError(f"fan_in: grad_output must be floating point, as gradients are, got "
                        f"dtype {data.dtype}")
    if data.shape != tuple(output.shape):
        raise ValueError(f"fan_in: grad_output must have the output's shape "
                         f"{tuple(output.shape)}, got {data.shape}")
    return data.reshape(out_shape)  # an unbatched output's gradient, as the op's batch of one


# ---- the connections ----------------------------------------------------------------------------
def _pool_derivative(g, inp: tuple, out: tuple) -> float:
    """Max pooling: the share of window ``out``'s gradient that ``inp`` receives, by the node's
    tie rule (``MaxPool2d.paid_cells``: 1, 1/k or 0), as the op's backward routes it."""
    pixel, share = g["paid"].pixel, g["paid"].share  # (K, ho, wo), (N, C, K, ho, wo)
    (n, c, h, w), (i, j) = inp, out[2:]
    return float(share[n, c, :, i, j][pixel[:, i, j] == h * g["x"].shape[3] + w].sum())


def _link(g, inp: tuple, out: tuple, weight) -> Link:
    derivative = float(g["weight"][weight]) if weight else (
        g["op"].coefficients(out).get(inp, 0.0) if g["linear"] else _pool_derivative(g, inp, out))
    return Link(inp, out, weight, derivative, None, None)


def _with_gradient(g, link: Link, grad) -> Link:
    """``link`` with what backward sends along it, for the gradient ``grad`` at the output."""
    if grad is None:
        return link
    arriving = float(grad[link.output])
    to_weight = arriving * float(g["x"][link.input]) if link.weight else None
    return link._replace(gradient=arriving * link.derivative, weight_gradient=to_weight)


def _partners(g, channel: int, of_output: bool) -> range:
    """The input channels an output channel reads (``of_output``), or the output channels an
    input channel feeds — its group's (``channel_groups``): the planes a picture draws when no
    cell of them is lit."""
    inputs, outputs = g["groups"]
    size = inputs if of_output else outputs
    group = channel // (outputs if of_output else inputs)
    return range(group * size, (group + 1) * size)


def _read_by(g, out: tuple):
    """The links of output cell ``out`` and the taps of its window that meet no input cell (a
    weighted op names them by their weight cell, a pool by the tap (i, j)): ``window_cells``."""
    if g["weight"] is None:
        cells, padding = g["op"].window_cells(out)
        return [_link(g, cell, out, None) for cell in cells], padding
    cells = g["op"].window_cells(out)
    return ([_link(g, c.input, out, c.weight) for c in cells if not c.padding],
            [c.weight for c in cells if c.padding])


def _flowing_into(g, inp: tuple) -> list:
    """The links of input cell ``inp``: every output that reads it (``cells_reading``)."""
    return sorted(_link(g, inp, out, weight) for out, weight in g["op"].cells_reading(inp))


# ---- the picture ----------------------------------------------------------------------------------
def _where(cell: tuple) -> str:
    return "[" + ", ".join(map(str, cell)) + "]"


def _share(derivative: float) -> str:
    """A max-pool share as the fraction it is: 1, 1/k or 0."""
    return "1" if derivative == 1 else "0" if derivative == 0 else f"1/{round(1 / derivative)}"


def _window(extent: tuple, role_marks: dict, centre: tuple) -> tuple:
    """The rows and columns drawn of each plane of one role (inputs, or outputs): the whole
    plane (with its drawn padding) while it is at most CROP cells a side; a larger one cut to
    the cells lit in any of them (``role_marks``: {channel: {(h, w): mark}}), MARGIN more on
    each side — or, where nothing is lit, around ``centre``. ((r0, r1), (c0, c1)), ends
    exclusive, in the plane's own coordinates (padding is negative, or past the end).
    ``extent``: ((h, w), (rows, columns) of padding drawn around the plane)."""
    (h, w), (rows_pad, cols_pad) = extent
    lit = [at for marks in role_marks.values() for at in marks] or [centre]
    spans = []
    for axis, (size, pad) in enumerate(((h, rows_pad), (w, cols_pad))):
        lo, hi = -pad, size + pad
        at = [p[axis] for p in lit]
        first, last = max(lo, min(at) - MARGIN), min(hi, max(at) + MARGIN + 1)
        # a plane that fits is drawn whole; so is one whose lit cells spread too far to cut
        spans.append((lo, hi) if hi - lo <= CROP or last - first > 2 * CROP else (first, last))
    return tuple(spans)


def _grid(title: str, values: np.ndarray, offset: tuple, marks: dict, window=None,
          border=None) -> tuple:
    """A plane as an HTML-like table, (html, width, height) in points, under its title;
    ``offset`` = (rows, columns) of padding drawn around it; ``border`` ((top, bottom), (left,
    right)) the rows and columns of the plane a padding op added, drawn grey where not marked;
    ``marks`` maps (h, w) in the plane's own coordinates to (colour, small tag, picked);
    ``window`` ((r0, r1), (c0, c1)) the rows and columns drawn (_window), the cut sides
    marked "⋮" and "…" and the caption saying which part of the plane it is."""
    rows_pad, cols_pad = offset
    h, w = values.shape
    (r0, r1), (c0, c1) = window or ((-rows_pad, h + rows_pad), (-cols_pad, w + cols_pad))
    cut = (r0 > -rows_pad, r1 < h + rows_pad, c0 > -cols_pad, c1 < w + cols_pad)  # top, bottom, left, right
    n_rows, n_cols = r1 - r0, c1 - c0
    show = n_rows * n_cols <= SHOW_VALUES_UP_TO
    tagged = show and any(tag for (r, c), (_, tag, _) in marks.items() if r0 <= r < r1 and c0 <= c < c1)
    if show:
        width, height = 46, 32 if tagged else ROW
    else:  # squares, as small as a large plane needs (no room for a number or a tag)
        width = height = max(4, min(14, SQUARES // max(n_rows, n_cols)))
    gap = lambda text, w_, h_: (f'<TD BORDER="0" FIXEDSIZE="TRUE" WIDTH="{w_}" HEIGHT="{h_}">'
                                f'<FONT POINT-SIZE="8">{text}</FONT></TD>')
    edge_row = ("<TR>" + (gap(" ", CUT, CUT) if cut[2] else "")
                + "".join(gap("⋮", width, CUT) for _ in range(n_cols))
                + (gap(" ", CUT, CUT) if cut[3] else "") + "</TR>")
    rows = [edge_row] if cut[0] else []
    for r in range(r0, r1):
        cells = [gap("…", CUT, height)] if cut[2] else []
        for c in range(c0, c1):
            inside = 0 <= r < h and 0 <= c < w
            plain = "white" if inside and not _in_border((r, c), (h, w), border) else PAD
            colour, tag, picked = marks.get((r, c), (plain, "", False))
            text = (number(values[r, c], DECIMALS) if inside else "pad") if show else ""
            if tag and show:
                text += f'<BR/><FONT POINT-SIZE="8">{html.escape(tag)}</FONT>'
            frame = f' BORDER="3" COLOR="{PICKED}"' if picked else ""
            cells.append(f'<TD BGCOLOR="{colour}" FIXEDSIZE="TRUE" WIDTH="{width}" '
                         f'HEIGHT="{height}"{frame}>{text or " "}</TD>')
        if cut[3]:
            cells.append(gap("…", CUT, height))
        rows.append("<TR>" + "".join(cells) + "</TR>")
    if cut[1]:
        rows.append(edge_row)
    # Fixed sizes, cells and tables, the title's and caption's from a generous guess at their
    # text: a plane never stretches to the height of its neighbour, nor its title away from it.
    grid_w, grid_h = width * n_cols + CUT * (cut[2] + cut[3]), height * n_rows + CUT * (cut[0] + cut[1])
    grid = (f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2" COLOR="#999999" '
            f'FIXEDSIZE="TRUE" WIDTH="{grid_w}" HEIGHT="{grid_h}">' + "".join(rows) + "</TABLE>")
    caption = ""
    if any(cut):
        part = lambda lo, hi, n, what: (f"{what} {max(lo, 0)}–{min(hi, n) - 1}" if lo > 0 or hi < n
                                        else f"all {what}")
        caption = f"{part(r0, r1, h, 'rows')}, {part(c0, c1, w, 'columns')} of {shape_text((h, w))}"
    full = max(grid_w, round(TITLE_CHAR * len(title)) + 6, round(CAPTION_CHAR * len(caption)) + 6)
    cell = lambda height_, content: (f'<TR><TD FIXEDSIZE="TRUE" WIDTH="{full}" HEIGHT="{height_}">'
                                     f"{content}</TD></TR>")
    height_ = TITLE + (CAPTION if caption else 0) + grid_h
    return (f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="0" FIXEDSIZE="TRUE" WIDTH="{full}" '
            f'HEIGHT="{height_}">' + cell(TITLE, f"<B>{html.escape(title)}</B>")
            + (cell(CAPTION, SMALL.format(html.escape(caption))) if caption else "")
            + cell(grid_h, grid) + "</TABLE>"), full, height_


def _in_border(at: tuple, shape: tuple, border) -> bool:
    """Whether plane cell ``at`` lies in the ``border`` ((top, bottom), (left, right)) of a
    plane of ``shape``."""
    return border is not None and any(p < before or p >= size - after
                                      for p, size, (before, after) in zip(at, shape, border))


def _note(text: str) -> tuple:
    """A line of small text as a column item: (html, width, height), its width a generous guess."""
    width = round(CAPTION_CHAR * len(text)) + 6
    return (f'<TABLE BORDER="0" CELLPADDING="0" FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="{CAPTION}">'
            f'<TR><TD>{SMALL.format(html.escape(text))}</TD></TR></TABLE>'), width, CAPTION


def _column(items: list) -> str:
    """Items ((html, width, height): planes, notes) stacked at the top of a column of the
    picture. Every size is fixed, the column's too, so that the columns beside a taller one
    keep their planes together at the top (a table would spread them over its height)."""
    if not items:  # (no weight was read: a cell between the strided windows)
        return " "
    width = max(w for _, w, _ in items) + 2 * SPACING
    height = sum(h for _, _, h in items) + SPACING * (len(items) + 1)
    return (f'<TABLE BORDER="0" CELLSPACING="{SPACING}" CELLPADDING="0" FIXEDSIZE="TRUE" '
            f'WIDTH="{width}" HEIGHT="{height}" VALIGN="TOP">'
            + "".join(f"<TR><TD>{item}</TD></TR>" for item, _, _ in items) + "</TABLE>")


def _weight_title(op, model) -> str:
    """The weight's title: its name, else its path in the modules called (``conv1.weight``,
    in ``model`` when given, else in the outermost module whose call made this output), else
    ``weight``."""
    weight = op.parents[op.weight_input]
    if weight.name:
        return weight.name
    modules = [module for module, _ in (op.origin or {}).get("modules", ())]
    if modules or model is not None:
        path = dotted_paths(outermost_modules(modules, model))[1].get(id(weight))
        if path:
            return path
    return "weight"


def _label(g, cell: tuple, from_output: bool, picture: FanIn, op, model) -> str:
    conv, links, grad = g["weight"] is not None, picture.links, picture.grad_output
    n = cell[0]
    x_marks, out_marks, w_marks = {}, {}, {}
    for link in links:
        tap = f"w[{link.weight[2]},{link.weight[3]}]" if link.weight else ""
        if g["linear"] and link.derivative != 1:  # a blend: each cell tagged with its weight
            tap = f"×{number(link.derivative, COEFFICIENT)}"
        colour = CHOSEN if (link.derivative and not conv and not g["linear"]) else READ
        if from_output:
            x_marks.setdefault(link.input[1], {})[link.input[2:]] = (colour, tap, False)
        else:  # pooling: yellow windows contain the cell, blue ones chose it
            out_marks.setdefault(link.output[1], {})[link.output[2:]] = (colour, tap, False)
        if conv:
            w_marks.setdefault(link.weight[:2], {})[link.weight[2:]] = (READ, "", False)
    if from_output:  # (a picked cell of the border stays grey, framed)
        plain = PAD if _in_border(cell[2:], g["out_shape"][2:], g["border"]) else "white"
        out_marks.setdefault(cell[1], {})[cell[2:]] = (plain, "", True)
        channels, filters = sorted(x_marks) or [_partners(g, cell[1], True)[0]], [cell[1]]
        for tap in picture.padding if conv else ():
            w_marks.setdefault(tap[:2], {})[tap[2:]] = (PAD, "pad", False)
    else:
        x_marks.setdefault(cell[1], {})[cell[2:]] = ("white", "", True)
        channels, filters = [cell[1]], sorted(out_marks) or [_partners(g, cell[1], False)[0]]
    drawn_pad = g["pad"]  # (a transposed conv reads none: its padding crops its output)
    x_shape, out_shape = g["x"].shape[2:], g["out_shape"][2:]
    # Where nothing of a role is lit, its window follows the picked cell across the op.
    scale = lambda at, src, dst: tuple(int(a * d / s) for a, s, d in zip(at, src, dst))
    centre_x = cell[2:] if not from_output else scale(cell[2:], out_shape, x_shape)
    centre_out = cell[2:] if from_output else scale(cell[2:], x_shape, out_shape)
    x_window = _window((x_shape, drawn_pad), {c: x_marks.get(c, {}) for c in channels[:MAX_PLANES]},
                       centre_x)
    shown_filters = filters[:MAX_PLANES // (2 if grad is not None else 1)]
    out_window = _window((out_shape, (0, 0)), {f: out_marks.get(f, {}) for f in shown_filters},
                         centre_out)
    more = lambda count, what: [_note(f"… and {plural(count, what)} not drawn")] if count > 0 else []
    columns = [[_grid(f"input [{n}, {c}]", g["x"][n, c], drawn_pad, x_marks.get(c, {}), x_window)
                for c in channels[:MAX_PLANES]] + more(len(channels) - MAX_PLANES, "more input channel")]
    if conv:
        title = _weight_title(op, model)
        # the weight planes of the drawn planes: conv2d's of the output channels drawn, a
        # transposed conv's (input channel first) of the input channels drawn
        drawn = [key for key in sorted(w_marks) if key[0] in (
            channels[:MAX_PLANES] if g["spreads"] else shown_filters)][:MAX_PLANES]
        columns.append([_grid(f"{title} [{f}, {c}]", g["weight"][f, c], (0, 0), w_marks[f, c])
                        for f, c in drawn] + more(len(w_marks) - len(drawn), "more weight plane"))
    outputs = []
    for f in shown_filters:
        outputs.append(_grid(f"output [{n}, {f}]", _output_plane(g, n, f), (0, 0),
                             out_marks.get(f, {}), out_window, g["border"]))
        if grad is not None:  # the gradient under the values it belongs to, marked the same way
            outputs.append(_grid(f"∂L/∂output [{n}, {f}]", grad[n, f], (0, 0),
                                 out_marks.get(f, {}), out_window, g["border"]))
    columns.append(outputs + more(len(filters) - len(shown_filters), "more output channel"))
    body = "".join(f"<TD>{_column(column)}</TD>" for column in columns)
    picture.summary = _summary(g, cell, from_output, picture)
    lines = textwrap.wrap(picture.summary, WRAP)
    text = "".join(f'{html.escape(line)}<BR ALIGN="LEFT"/>' for line in lines)
    terms = "" if grad is None else (f'<TR><TD COLSPAN="{len(columns)}" ALIGN="LEFT">'
                                     f"{_terms(g, cell, from_output, picture)}</TD></TR>")
    return (f'<<TABLE BORDER="0" CELLSPACING="8"><TR>{body}</TR>{terms}'
            f'<TR><TD COLSPAN="{len(columns)}" ALIGN="LEFT"><FONT POINT-SIZE="10">{text}'
            f"</FONT></TD></TR></TABLE>>")


def _terms(g, cell: tuple, from_output: bool, picture: FanIn) -> str:
    """Backward's arithmetic at the picked cell as a table: one row per link, and the sum."""
    conv, grad = g["weight"] is not None, picture.grad_output
    links = picture.links
    if from_output:
        title = f"g = ∂L/∂output{_where(cell)} = {number(grad[cell], DECIMALS)} goes back to"
        if conv:
            header = ("weight", "input", "w", "x", "g · w\n→ ∂L/∂input", "g · x\n→ ∂L/∂weight")
            rows = [(_where(link.weight), _where(link.input), number(link.derivative, DECIMALS),
                     number(g["x"][link.input], DECIMALS), number(link.gradient, DECIMALS),
                     number(link.weight_gradient, DECIMALS)) for link in links]
        elif g["linear"]:
            header = ("input", "x", "coefficient", "g · coefficient\n→ ∂L/∂input")
            rows = [(_where(link.input), number(g["x"][link.input], DECIMALS),
                     number(link.derivative, COEFFICIENT), number(link.gradient, DECIMALS))
                    for link in links]
        else:  # only the cells the window chose receive anything
            links = [link for link in links if link.derivative]
            header = ("input", "x", "share", "g · share\n→ ∂L/∂input")
            rows = [(_where(link.input), number(g["x"][link.input], DECIMALS), _share(link.derivative),
                     number(link.gradient, DECIMALS)) for link in links]
        total = None
    else:
        title = f"∂L/∂input{_where(cell)}: one term for each output " + (
            "it is spread onto" if g["spreads"] else "that reads it" if g["linear"]
            else "whose window holds it")
        if conv:
            header = ("output", "weight", "g = ∂L/∂output", "w", "g · w")
            rows = [(_where(link.output), _where(link.weight), number(grad[link.output], DECIMALS),
                     number(link.derivative, DECIMALS), number(link.gradient, DECIMALS)) for link in links]
        elif g["linear"]:
            header = ("output", "g = ∂L/∂output", "coefficient", "g · coefficient")
            rows = [(_where(link.output), number(grad[link.output], DECIMALS),
                     number(link.derivative, COEFFICIENT), number(link.gradient, DECIMALS))
                    for link in links]
        else:
            header = ("output", "g = ∂L/∂output", "share", "g · share")
            rows = [(_where(link.output), number(grad[link.output], DECIMALS), _share(link.derivative),
                     number(link.gradient, DECIMALS)) for link in links]
        total = f"Σ = ∂L/∂input{_where(cell)} from this op", number(picture.input_gradient, DECIMALS)
    shown = rows[:TERMS_SHOWN]
    # fixed sizes, from the longest text of each column: a table never stretches to the width
    # of the planes above it
    widths = [round(CHAR_WIDTH * max(len(line) for text in column for line in text.split("\n")))
              + 12 for column in zip(header, *shown)]
    if total is not None:  # the sum's label spans all columns but the last, its value the last
        widths[0] += max(0, round(CHAR_WIDTH * len(total[0])) + 12 - sum(widths[:-1]))
        widths[-1] = max(widths[-1], round(CHAR_WIDTH * len(total[1])) + 12)
    header_height = 16 * (1 + max(text.count("\n") for text in header)) + 4

    def td(text, width, height=ROW, colour="white", bold=False, span=1):
        lines = "<BR/>".join(html.escape(line) for line in text.split("\n"))
        align = "CENTER" if colour == PAD else "LEFT" if text.startswith("[") else "RIGHT"
        return (f'<TD FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="{height}" ALIGN="{align}" '
                f'BGCOLOR="{colour}" COLSPAN="{span}">{f"<B>{lines}</B>" if bold else lines}</TD>')

    table = ["".join(td(text, width, header_height, PAD, True) for text, width in zip(header, widths))]
    table += ["".join(td(text, width) for text, width in zip(texts, widths)) for texts in shown]
    if len(rows) > len(shown):
        table.append(td(f"… and {plural(len(rows) - len(shown), 'more row')}", sum(widths),
                        span=len(widths)))
    if total is not None:
        table.append(td(total[0], sum(widths[:-1]), colour=READ, bold=True, span=len(widths) - 1)
                     + td(total[1], widths[-1], colour=READ, bold=True))
    grid = (f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="#999999" '
            f'FIXEDSIZE="TRUE" WIDTH="{sum(widths)}" ALIGN="LEFT" '
            f'HEIGHT="{header_height + ROW * (len(table) - 1)}">'
            + "".join(f"<TR>{cells}</TR>" for cells in table) + "</TABLE>")
    return (f'<TABLE BORDER="0" CELLSPACING="0"><TR><TD ALIGN="LEFT"><B>{html.escape(title)}</B>'
            f'</TD></TR><TR><TD ALIGN="LEFT">{grid}</TD></TR></TABLE>')


def _output_plane(g, n: int, f: int) -> np.ndarray:
    """One output plane: the op's own forward run again on image ``n`` (the op's output array
    is not kept) — a weighted op's in float64 and without the inputs after its weight (a bias),
    so that it is the sum of the terms drawn."""
    if g.get("out_of") != n:
        op, k = g["op"], getattr(g["op"], "weight_input", None)
        arrays = [g["x"][n:n + 1]] if k is None else [g["x"][n:n + 1].astype(np.float64)] + [
            p._data.astype(np.float64) for p in op.parents[1:k + 1]]
        g["out"], g["out_of"] = type(op).call(*arrays, **op.attrs)[0], n
    return g["out"][f]


def _summary(g, cell: tuple, from_output: bool, picture: FanIn) -> str:
    links, padding, known = picture.links, picture.padding, picture.grad_output is not None
    where = _where(cell)
    hint = "" if known else (" Pass grad_output= (or call output.retain_grad() before backward) "
                             "to see the gradients.")
    if from_output and g["spreads"]:
        cells, taps = plural(len(links), 'yellow input cell'), plural(len(padding), 'weight tap')
        return (f"output{where} = Σ weight · input over the {cells} spread onto it (each tagged "
                f"with its weight); {taps} meet{'s' if len(padding) == 1 else ''} no input cell "
                f"(the zeros between strided input cells, or past the border). Its gradient g "
                f"flows back to each input cell times its weight (g · w), and to each weight "
                f"times its input (g · x).{hint}")
    if g["spreads"]:
        return (f"input{where} is spread onto {plural(len(links), 'output')} (yellow), by the "
                f"weight tagged in each; each sends back its gradient times that weight, and the "
                f"cell's gradient from this transposed conv is their sum.{hint}")
    if from_output and g["weight"] is not None:
        return (f"output{where} = Σ weight · input over the {plural(len(links), 'yellow input cell')}"
                f" (each tagged with its weight); {plural(len(padding), 'weight tap', verb='read')} "
                f"padding (0). Its gradient g flows back to each input cell times its weight (g · w),"
                f" and to each weight times its input (g · x).{hint}")
    border = "" if g["border"] is None else (
        f" Grey: the border pad(mode='{g['op'].attrs.get('mode')}') added around the copy of "
        f"the input; each of its cells is a copy of an input cell too.")
    if g["linear"] and from_output:
        if len(links) == 1 and links[0].derivative == 1:
            return (f"output{where} is a copy of the yellow input cell, and its gradient g flows "
                    f"back to that cell alone.{border}{hint}")
        return (f"output{where} = Σ coefficient · input over the "
                f"{plural(len(links), 'yellow input cell')} (each tagged with its coefficient). "
                f"Its gradient g flows back to each of them times its coefficient (g · c)."
                f"{border}{hint}")
    if g["linear"]:
        if not links:  # (circular padding with a negative width crops it away)
            return (f"input{where} is read by no output: it receives no gradient from this "
                    f"{g['op'].name}.{border}")
        if len(links) == 1 and links[0].derivative == 1:
            return (f"input{where} is copied into 1 output (yellow), which sends back its whole "
                    f"gradient: the cell's gradient from this {g['op'].name}.{border}{hint}")
        if all(link.derivative == 1 for link in links):
            return (f"input{where} is copied into {plural(len(links), 'output')} (yellow); each "
                    f"sends back its whole gradient, and the cell's gradient from this "
                    f"{g['op'].name} is their sum.{border}{hint}")
        copies = " (untagged: 1, a copy)" if any(link.derivative == 1 for link in links) else ""
        return (f"input{where} is read by {plural(len(links), 'output')} (yellow); each sends back "
                f"its gradient times the coefficient tagged in its cell{copies}, and the cell's "
                f"gradient from this {g['op'].name} is their sum.{border}{hint}")
    if from_output:
        chosen = sum(1 for link in links if link.derivative)
        return (f"output{where} is the max of the {plural(len(links), 'cell')} of its window "
                f"(yellow); blue: the {plural(chosen, 'cell')} its gradient flows back to "
                f"(ties='{g['ties']}'). {plural(len(padding), 'window cell', verb='lie')} in the padding."
                f"{hint}")
    if g["weight"] is not None:
        return (f"input{where} is read by {plural(len(links), 'output')} (yellow); each sends "
                f"back its gradient times the weight tagged in its cell, and the cell's gradient "
                f"from this conv is their sum.{hint}")
    flowing, windows = sum(1 for link in links if link.derivative), len(links)
    text = f"input{where} lies in {plural(windows, 'pooling window')}; "
    if flowing == 0:
        return text + f"none chose it (ties='{g['ties']}'): it receives no gradient from this pool."
    chose = f"all {windows} chose it" if flowing == windows > 1 else f"{flowing} chose it"
    sends = "sends it its gradient" if flowing == 1 else "send it their gradient"
    others = (f"; the other {windows - flowing} send{'s' if windows - flowing == 1 else ''} none"
              if flowing < windows else "")
    return (text + f"{chose} (blue, ties='{g['ties']}') and {sends}{others}. The cell's gradient "
            f"from this pool is the sum.{hint}")
