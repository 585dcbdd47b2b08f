"""Which cells a convolution or max-pool output read, and where its gradient goes back to.

    from tinygrad_pool.viz import fan_in
    fan_in(pooled, output_cell=(0, 1))   # the window it read, the cell it chose (receives its grad)
    fan_in(L1, input_cell=(2, 3))        # every output whose gradient flows back into x[2, 3]

Both read only what the graph already holds: the op's attributes (kernel, stride, padding,
dilation), its inputs (the image and the kernel) and, for max pooling, the argmax it saved (or,
once backward freed it, the same first-maximum rule run again on the input). Nothing is
changed: no ``.grad``, nothing a node saved.

The result is a ``graphviz.Digraph`` (Jupyter shows it inline) whose ``links`` list every
connection drawn, as ``Link(input, output, weight, gradient)``: an input cell (n, c, h, w), an
output cell (n, c, h, w), the conv weight index (f, c, i, j) that multiplies them (None for
pooling), and whether the output's gradient flows back into that input cell. ``padding`` lists
the kernel taps of the picked output that fall outside the input (they read padding).
"""
from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from .graph import STYLE, GraphDigraph

READ, CHOSEN, PICKED, PAD = "#ffe08a", STYLE["argmax"], "#d62728", "#eeeeee"
SHOW_VALUES_UP_TO = 100  # cells of a plane; larger planes are drawn as coloured squares


class Link(NamedTuple):
    input: tuple     # (n, c, h, w) of the op's input
    output: tuple    # (n, c, h, w) of its output
    weight: tuple | None  # conv: the weight (f, c, i, j) multiplying them; pooling: None
    gradient: bool   # does output's gradient flow back into input?


class FanIn(GraphDigraph):
    """The picture, with the connections it shows (``links``, ``padding``) as data."""
    links: tuple = ()
    padding: tuple = ()


def fan_in(output: Tensor, *, output_cell=None, input_cell=None) -> FanIn:
    """Pick one cell of a conv2d or max_pool2d output (``output_cell``) to see the input cells
    and weights it read — for max pooling also the one it chose, the only cell its gradient
    reaches — or one cell of the op's input (``input_cell``) to see every output cell whose
    gradient flows back into it (conv: each window covering it, by the weight written in the
    cell; max pooling: only the windows that chose it). A cell is (h, w) for the first image
    and channel, (c, h, w) for an unbatched input, or (n, c, h, w)."""
    op = _recorded_op(output)
    if (output_cell is None) == (input_cell is None):
        raise ValueError("fan_in: pass exactly one of output_cell= and input_cell=, got "
                         f"output_cell={output_cell!r}, input_cell={input_cell!r}")
    geometry = _geometry(op)
    if output_cell is not None:
        cell = _cell("output_cell", output_cell, geometry["out_shape"])
        links, padding = _read_by(geometry, cell)
    else:
        cell = _cell("input_cell", input_cell, geometry["x"].shape)
        links, padding = _flowing_into(geometry, cell), ()
    picture = FanIn(name="fan_in", graph_attr={"dpi": "96", "pad": "0.1"},
                    node_attr={"shape": "plaintext", "fontname": "Helvetica", "fontsize": "11"})
    picture.links, picture.padding = tuple(links), tuple(padding)
    picture.node("fan_in", _label(geometry, cell, output_cell is not None, links, padding))
    return picture


# ---- what the op is ---------------------------------------------------------------------------
def _recorded_op(output):
    if not isinstance(output, Tensor):
        raise TypeError(f"fan_in: output must be a Tensor made by conv2d or max_pool2d, got "
                        f"{type(output).__name__}")
    fn = output.grad_fn
    if fn is not None and fn.name == "Reshape" and fn.parents[0].grad_fn is not None \
            and fn.parents[0].grad_fn.name in ("Conv2d", "MaxPool2d") and output.ndim == 3:
        fn = fn.parents[0].grad_fn  # an unbatched image: the op ran on a batch of one
    if fn is None or fn.name not in ("Conv2d", "MaxPool2d"):
        made_by = "a leaf" if fn is None else f"{fn.name}"
        raise ValueError(f"fan_in: output must be the result of conv2d or max_pool2d recorded "
                         f"in the graph (some input requiring grad), got a tensor made by "
                         f"{made_by}")
    return fn


def _geometry(fn) -> dict:
    a, x = fn.attrs, fn.parents[0].data
    g = dict(op=fn.name, x=x, stride=a["stride"], dilation=a["dilation"])
    if fn.name == "Conv2d":
        weight = fn.parents[1].data
        g.update(weight=weight, kernel=weight.shape[2:], pad=(a["padding"][0], a["padding"][2]),
                 groups=a["groups"], out_shape=(x.shape[0], weight.shape[0]) + tuple(a["out_hw"]))
        return g
    argmax = fn.saved_for_backward().get("argmax")
    if argmax is None:  # freed by backward: the op's own forward again, the same rule
        with no_grad():
            _, fresh = type(fn).apply(fn.parents[0], return_ctx=True, **fn.attrs)
        argmax = fresh.argmax
    g.update(kernel=a["kernel_size"], pad=a["padding"], ties=a["ties"], argmax=argmax,
             out_shape=x.shape[:2] + tuple(a["out_hw"]))
    return g


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


# ---- the connections ----------------------------------------------------------------------------
def _tap(g, axis: int, out: int, k: int) -> int:
    """The input row (axis 0) or column (axis 1) that tap ``k`` of output ``out`` reads."""
    return out * g["stride"][axis] - g["pad"][axis] + k * g["dilation"][axis]


def _receives(g, inp: tuple, out: tuple) -> bool:
    """Max pooling: does the window ``out`` send its gradient to ``inp``? By the node's tie
    rule: the stored argmax ("first"), or every cell equal to the window's max."""
    n, c, h, w = inp
    argmax = int(g["argmax"][out])
    if g["ties"] == "first":
        return argmax == h * g["x"].shape[3] + w
    plane = g["x"][n, c].reshape(-1)
    return bool(plane[h * g["x"].shape[3] + w] == plane[argmax])


def _channels(g, f: int) -> range:
    """The input channels output channel ``f`` reads (its group's, for conv; its own, pooling)."""
    if g["op"] == "MaxPool2d":
        return range(f, f + 1)
    per_group = g["weight"].shape[1]
    group = f // (g["weight"].shape[0] // g["groups"])
    return range(group * per_group, (group + 1) * per_group)


def _read_by(g, out: tuple):
    n, f, ho, wo = out
    (kh, kw), (h, w) = g["kernel"], g["x"].shape[2:]
    links, padding = [], []
    for c in _channels(g, f):
        c_in_group = c - _channels(g, f).start
        for i in range(kh):
            for j in range(kw):
                r, col = _tap(g, 0, ho, i), _tap(g, 1, wo, j)
                weight = (f, c_in_group, i, j) if g["op"] == "Conv2d" else None
                if not (0 <= r < h and 0 <= col < w):
                    padding.append(weight or (i, j))
                    continue
                inp = (n, c, r, col)
                gradient = True if weight else _receives(g, inp, out)
                links.append(Link(inp, out, weight, gradient))
    return links, padding


def _flowing_into(g, inp: tuple) -> list:
    n, c, h, w = inp
    (kh, kw), (ho_n, wo_n) = g["kernel"], g["out_shape"][2:]
    if g["op"] == "Conv2d":
        per_filter = g["weight"].shape[0] // g["groups"]
        group = c // g["weight"].shape[1]
        filters = range(group * per_filter, (group + 1) * per_filter)
    else:
        filters = range(c, c + 1)
    taps = []  # (output index, tap) pairs along each axis that land on this row / column
    for axis, (at, k_n, o_n) in enumerate(((h, kh, ho_n), (w, kw, wo_n))):
        k = np.arange(k_n)
        start = at + g["pad"][axis] - k * g["dilation"][axis]
        hit = (start % g["stride"][axis] == 0) & (start >= 0) & (start // g["stride"][axis] < o_n)
        taps.append(list(zip((start[hit] // g["stride"][axis]).tolist(), k[hit].tolist())))
    links = []
    for f in filters:
        for ho, i in taps[0]:
            for wo, j in taps[1]:
                out = (n, f, ho, wo)
                if g["op"] == "Conv2d":
                    links.append(Link(inp, out, (f, c - group * g["weight"].shape[1], i, j), True))
                else:
                    links.append(Link(inp, out, None, _receives(g, inp, out)))
    return sorted(links)


# ---- the picture ----------------------------------------------------------------------------------
def _number(value) -> str:
    return f"{round(float(value), 3) + 0.0:.3f}"  # 3 decimals, never "-0.000"


def _grid(title: str, values: np.ndarray, offset: tuple, marks: dict) -> str:
    """A plane as an HTML-like table; ``offset`` = (rows, columns) of padding drawn around it;
    ``marks`` maps (h, w) in the plane's own coordinates to (colour, small tag, picked)."""
    rows_pad, cols_pad = offset
    h, w = values.shape
    show = (h + 2 * rows_pad) * (w + 2 * cols_pad) <= SHOW_VALUES_UP_TO
    tagged = any(tag for _, tag, _ in marks.values())
    width, height = (50, 32 if tagged else 22) if show else (14, 14)
    rows = []
    for r in range(-rows_pad, h + rows_pad):
        cells = []
        for c in range(-cols_pad, w + cols_pad):
            inside = 0 <= r < h and 0 <= c < w
            colour, tag, picked = marks.get((r, c), ("white" if inside else PAD, "", False))
            text = (_number(values[r, c]) if inside else "pad") if show else ""
            if tag:
                text += f'<BR/><FONT POINT-SIZE="8">{html.escape(tag)}</FONT>'
            border = f' BORDER="3" COLOR="{PICKED}"' if picked else ""
            cells.append(f'<TD BGCOLOR="{colour}" FIXEDSIZE="TRUE" WIDTH="{width}" '
                         f'HEIGHT="{height}"{border}>{text or " "}</TD>')
        rows.append("<TR>" + "".join(cells) + "</TR>")
    # fixed sizes, cells and table: a plane never stretches to the height of its neighbour
    grid = (f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2" COLOR="#999999" '
            f'FIXEDSIZE="TRUE" WIDTH="{width * (w + 2 * cols_pad)}" '
            f'HEIGHT="{height * (h + 2 * rows_pad)}">' + "".join(rows) + "</TABLE>")
    return (f'<TABLE BORDER="0" CELLSPACING="0"><TR><TD><B>{html.escape(title)}</B></TD></TR>'
            f"<TR><TD>{grid}</TD></TR></TABLE>")


def _label(g, cell: tuple, from_output: bool, links: list, padding: list) -> str:
    conv = g["op"] == "Conv2d"
    n = cell[0]
    x_marks, out_marks, w_marks = {}, {}, {}
    for link in links:
        tap = f"w[{link.weight[2]},{link.weight[3]}]" if link.weight else ""
        colour = CHOSEN if (link.gradient and not conv) else READ
        if from_output:
            x_marks.setdefault(link.input[1], {})[link.input[2:]] = (colour, tap, False)
            if conv:
                w_marks.setdefault(link.weight[:2], {})[link.weight[2:]] = (READ, "", False)
        else:  # pooling: yellow windows contain the cell, blue ones chose it
            out_marks.setdefault(link.output[1], {})[link.output[2:]] = (colour, tap, False)
            if conv:
                w_marks.setdefault(link.weight[:2], {})[link.weight[2:]] = (READ, "", False)
    if from_output:
        out_marks.setdefault(cell[1], {})[cell[2:]] = ("white", "", True)
        channels, filters = sorted(x_marks) or [cell[1]], [cell[1]]
        for tap in padding if conv else ():
            w_marks.setdefault(tap[:2], {})[tap[2:]] = (PAD, "pad", False)
    else:
        x_marks.setdefault(cell[1], {})[cell[2:]] = ("white", "", True)
        channels, filters = [cell[1]], sorted(out_marks) or [cell[1]]
    pad = g["pad"]
    columns = [[_grid(f"input [{n}, {c}]", g["x"][n, c], pad, x_marks.get(c, {}))
                for c in channels[:4]]]
    if conv:
        columns.append([_grid(f"weight [{f}, {c}]", g["weight"][f, c], (0, 0), w_marks[f, c])
                        for f, c in sorted(w_marks)[:4]])
    columns.append([_grid(f"output [{n}, {f}]", _output_plane(g, n, f), (0, 0), out_marks.get(f, {}))
                    for f in filters[:4]])
    body = "".join('<TD VALIGN="TOP"><TABLE BORDER="0" CELLSPACING="6">'
                   + "".join(f"<TR><TD>{t}</TD></TR>" for t in column) + "</TABLE></TD>"
                   for column in columns)
    text = html.escape(_summary(g, cell, from_output, links, padding))
    return (f'<<TABLE BORDER="0" CELLSPACING="8"><TR>{body}</TR>'
            f'<TR><TD COLSPAN="{len(columns)}" ALIGN="LEFT"><FONT POINT-SIZE="10">{text}'
            f"</FONT></TD></TR></TABLE>>")


def _output_plane(g, n: int, f: int) -> np.ndarray:
    """One output plane, recomputed from the input (the op's output array is not kept)."""
    (kh, kw), (ho_n, wo_n) = g["kernel"], g["out_shape"][2:]
    x = g["x"][n]
    if g["op"] == "MaxPool2d":
        return x[f].reshape(-1)[g["argmax"][n, f]]
    plane = np.zeros((ho_n, wo_n))
    rows, cols = np.arange(ho_n), np.arange(wo_n)
    for c_in_group, c in enumerate(_channels(g, f)):
        for i in range(kh):
            for j in range(kw):
                r, col = _tap(g, 0, rows, i), _tap(g, 1, cols, j)
                ok_r, ok_c = (r >= 0) & (r < x.shape[1]), (col >= 0) & (col < x.shape[2])
                plane[np.ix_(ok_r, ok_c)] += g["weight"][f, c_in_group, i, j] * \
                    x[c][np.ix_(r[ok_r], col[ok_c])]
    return plane


def _summary(g, cell: tuple, from_output: bool, links: list, padding: list) -> str:
    where = "[" + ", ".join(map(str, cell)) + "]"
    if from_output and g["op"] == "Conv2d":
        return (f"output{where} = Σ weight · input over the {len(links)} yellow input cells "
                f"(each tagged with its weight); {len(padding)} weight taps read padding (0). "
                f"Its gradient flows back to all of them, times their weight.")
    if from_output:
        chosen = sum(link.gradient for link in links)
        return (f"output{where} is the max of the {len(links)} cells of its window (yellow); "
                f"blue: the {chosen} cell(s) its gradient flows back to (ties='{g['ties']}'). "
                f"{len(padding)} window cells lie in the padding.")
    flowing = [link for link in links if link.gradient]
    if g["op"] == "Conv2d":
        return (f"input{where} is read by {len(links)} outputs (yellow); each sends back its "
                f"gradient times the weight tagged in its cell.")
    return (f"input{where} lies in {len(links)} pooling windows; {len(flowing)} of them chose it "
            f"(blue) and send it their gradient (ties='{g['ties']}'), the others none.")
