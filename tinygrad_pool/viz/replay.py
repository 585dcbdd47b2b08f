"""Backward replay: the backward pass, one frame per node, as a page you step through.

    from tinygrad_pool.viz import replay
    r = replay(loss, "backprop.html")          # runs loss.backward() and writes the page
    r.frames[0].grad_output                    # what the engine sent, frame by frame
    r                                          # in Jupyter: the page itself, inline

The engine calls an observer for each node as backward reaches it (``run_backward(observe=)``),
in its own order: a Function with the gradient arriving at its output and what it sends to each
input, before it frees what it saved; a leaf with the gradient it receives. The observer copies
what a frame shows — the engine may reuse a gradient's memory once nobody holds it — and reads
max pooling's ``argmax`` from ``saved_for_backward()`` while it is still there (the cells it
lights are those its backward pays, under its ``ties`` rule: viz/pool_marks.py). Nothing here
writes to a node or a tensor: a graph that already ran with ``retain_graph=True`` is replayed
into ``capture={}``, so no ``.grad`` changes.

The page is one file with no network access: the graph is laid out once by Graphviz's `dot`
(inline SVG, nodes ``n<k>`` and edges ``e<k>`` by id), each frame is a ``<section data-frame>``
of HTML tables (every number cell carries its full value in ``data-value``), and a few lines of
script step through them. ``frames_dir=`` also renders each frame through `dot -Tpng`, for
slides (and ``replay.gif`` when Pillow is installed).

Like the rest of ``viz``, this module needs neither the ``graphviz`` Python package nor anything
of PyTorch: only the `dot` program, run directly.
"""
from __future__ import annotations

import html
import math
import os
import re
import shutil
import subprocess
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import GraphvizNotFound
from .modules import dotted_paths, outermost_modules
from .pool_marks import chosen_cells, pool_marks
from ..ops.args import check_flag, check_size
from ..tensor import Function, Tensor, _node_of, _topological_order, run_backward

DIGITS = 4  # significant digits of every number shown (data-value keeps the full value)
HEAT_CELLS = 64  # a heat-map plane is drawn cell by cell up to this many cells a side, else averaged
PNG_HEAT_CELLS = 32  # ... and up to this many in the PNG frames, where each cell is a table cell
MAX_SLICES = 4  # 2-D slices listed per tensor; the rest are counted
COLOURS = {"leaf": "#b9e3a5", "op": "#ddd5f3", "constant": "#e4e4e4", "current": "#ffd54a",
           "done": "#f0f0f0", "waiting": "#ffe9c7", "active": "#e4572e", "argmax": "#7fb0ff",
           "argmax_edge": "#1747b5", "tied": "#d5e5ff", "tied_edge": "#5b8def",
           "positive": (178, 24, 43), "negative": (33, 102, 172)}


@dataclass
class Frame:
    """One step of the backward pass: a node of the graph as backward reached it.

    ``grad_output`` is the gradient arriving at the node (summed over its uses: ``parts`` lists
    each contribution, ``(sending frame, its input index, array)``); ``input_grads`` what a
    Function sends to each input (None where nothing; empty for a leaf). Arrays are copies taken
    as it ran. For max pooling, ``chosen`` | ``tied`` are exactly the input cells its backward
    sends gradient to.
    """
    index: int
    node: object  # the engine's node: a Function, or a leaf Tensor
    node_id: str  # its id in the page's graph ("n3")
    name: str  # "Conv2d#1", "W1", "fc.weight"
    op: str | None  # the Function's name; None for a leaf
    output_name: str | None  # the name of the tensor the node made (a Function's output)
    grad_output: np.ndarray
    input_grads: tuple
    input_names: tuple = ()  # who receives each input gradient ("constant" where nobody)
    parts: list = field(default_factory=list)
    edge_ids: tuple = ()  # the graph edges that carry this frame's gradients
    saved: dict = field(default_factory=dict)  # name -> "shape dtype" of what forward saved
    argmax: np.ndarray | None = None  # max pooling: each window's chosen cell, as saved
    pool_input: np.ndarray | None = None  # max pooling: the pooled input's values
    ties: str | None = None  # max pooling: its rule for equal maxima ("first", "split", "all")
    chosen: np.ndarray | None = None  # max pooling: mask of the cells some window's argmax names
    tied: np.ndarray | None = None  # ... and of the other cells its ties rule also pays
    value: np.ndarray | None = None  # the node's output value (a leaf's own value)
    value_freed: bool = False  # ... gone: a large intermediate only the graph held


class Replay:
    """What ``replay`` returns: the frames, the page, and where it was written.
    In Jupyter it shows the page inline (sandboxed in an iframe, so its script runs)."""

    def __init__(self, frames: list, page: str, path: Path | None, pngs: list):
        self.frames, self.html, self.path, self.pngs = frames, page, path, pngs

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        where = f", written to {str(self.path)!r}" if self.path is not None else ""
        return f"<Replay of {len(self.frames)} backward frames{where}>"

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts" '
                f'style="width:100%;height:720px;border:1px solid #ccc"></iframe>')


def replay(loss: Tensor, path="backprop.html", *, gradient=None, retain_graph: bool | None = None,
           show_values: bool = True, max_elements: int = 64, frames_dir=None) -> Replay:
    """Run (or re-run) ``loss``'s backward pass and write it as a page, one frame per node.

    A graph that has not run backward yet runs it for real: ``.grad`` is accumulated exactly as
    ``loss.backward(gradient, retain_graph)`` would. A graph that already ran with
    ``retain_graph=True`` runs again without touching any ``.grad`` (and stays retained unless
    ``retain_graph=False``). A graph whose buffers were freed raises backward's own error.

    path          the HTML file to write (None: write nothing; the page is in ``.html``)
    show_values   numbers (grids, heat-maps); False: shapes and statistics only
    max_elements  a 2-D slice with more entries is shown as statistics and a heat-map
    frames_dir    also write frame_000.png, ... there (and replay.gif with Pillow); created if
                  missing, in a directory that must exist
    """
    if not isinstance(loss, Tensor):
        raise TypeError(f"replay: loss must be a Tensor, got {type(loss).__name__}")
    for name, value in (("path", path), ("frames_dir", frames_dir)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"replay: {name} must be a str, a path or None, got "
                            f"{type(value).__name__}")
    show_values = check_flag("replay", "show_values", show_values)
    max_elements = check_size("replay", "max_elements", max_elements, minimum=1)
    if retain_graph is not None:
        retain_graph = check_flag("replay", "retain_graph", retain_graph)
    path = None if path is None else _writable("path", Path(path), folder=False)
    frames_dir = None if frames_dir is None else _writable("frames_dir", Path(frames_dir), folder=True)
    if shutil.which("dot") is None:  # before backward runs: a failed replay changes nothing
        raise GraphvizNotFound("dot")

    frames = _record(loss, gradient, retain_graph)
    graph = _graph(loss, frames)
    page = _page(frames, _svg(graph["dot"]), show_values, max_elements)
    if path is not None:
        path.write_text(page, encoding="utf-8")
    pngs = [] if frames_dir is None else _write_pngs(frames, graph, frames_dir, show_values,
                                                     max_elements)
    return Replay(frames, page, path, pngs)


def _writable(name: str, path: Path, folder: bool) -> Path:
    """``path`` if replay can write there: its directory exists (checked before backward runs,
    so that a typo in a path does not cost a backward pass and its .grad); a file path must not
    be a directory, nor a folder a file. Python's own error types for each, with our message."""
    parent = path.parent
    if not parent.exists():
        raise FileNotFoundError(f"replay: {name}={str(path)!r} is in a directory that does not exist: "
                                f"{str(parent)!r} (create it first)")
    if not parent.is_dir():
        raise NotADirectoryError(f"replay: {name}={str(path)!r} is inside {str(parent)!r}, which "
                                 f"is a file, not a directory")
    if folder and path.exists() and not path.is_dir():
        raise NotADirectoryError(f"replay: {name}={str(path)!r} is a file; expected a directory "
                                 f"to write the frames into")
    if not folder and path.is_dir():
        raise IsADirectoryError(f"replay: {name}={str(path)!r} is a directory; expected the HTML "
                                f"file to write, e.g. {str(path / 'backprop.html')!r}")
    return path


# ---- recording: what backward did, node by node ---------------------------------------------
def _record(loss: Tensor, gradient, retain_graph) -> list:
    root = _node_of(loss)
    again = isinstance(root, Function) and root.ran  # ran before with retain_graph=True
    frames, arrivals = [], {}  # arrivals: id(node) -> [(sending frame, input index, array)]

    def observe(node, grad_output, input_grads):
        frame = Frame(index=len(frames), node=node, node_id="", name="", op=None,
                      output_name=None, grad_output=np.array(grad_output), input_grads=())
        frame.parts = arrivals.pop(id(node), [])
        if input_grads is not None:
            frame.op = node.name
            frame.input_grads = tuple(None if g is None else np.array(g) for g in input_grads)
            for k, (edge, g) in enumerate(zip(node.edges, frame.input_grads)):
                if edge is not None and g is not None:
                    arrivals.setdefault(id(edge), []).append((frame, k, g))
            saved = node.saved_for_backward()
            frame.saved = {k: f"{_shape(v.shape)} {v.dtype}" if isinstance(v, np.ndarray)
                           else _short(v) for k, v in saved.items()}
            if isinstance(saved.get("argmax"), np.ndarray) and node.parents \
                    and node.parents[0]._data.ndim == 4:  # max pooling (ours, or one like it)
                frame.argmax = np.array(saved["argmax"])
                frame.pool_input = np.array(node.parents[0]._data)
                _mark_pool(frame, node.attrs)
        frames.append(frame)

    if again:
        run_backward((loss,), (gradient,), True if retain_graph is None else retain_graph,
                     capture={}, observe=observe)
    else:
        run_backward((loss,), (gradient,), retain_graph, observe=observe)
    return frames


# ---- the graph: names, then DOT ---------------------------------------------------------------
def _graph(loss: Tensor, frames: list) -> dict:
    """Name every node, give it an id, and write the graph as DOT (inputs on top, loss below;
    arrows in the direction data flowed, gradients run back up them)."""
    order = _topological_order([_node_of(loss)])
    outputs = {id(order[-1]): loss}  # a Function does not know its output: its users do
    constants = []
    for node in order:
        if isinstance(node, Function):
            for edge, parent in zip(node.edges, node.parents):
                if edge is None:
                    constants.append((node, parent))
                elif not isinstance(edge, Tensor):
                    outputs.setdefault(id(edge), parent)
    parameter_names = _parameter_names(order)
    ids, names, counts = {}, {}, {}
    for k, node in enumerate(order):
        ids[id(node)] = f"n{k}"
        if isinstance(node, Tensor):
            counts["leaf"] = counts.get("leaf", 0) + 1
            names[id(node)] = node.name or parameter_names.get(id(node)) or f"leaf#{counts['leaf']}"
        else:
            counts[node.name] = counts.get(node.name, 0) + 1
            names[id(node)] = f"{node.name}#{counts[node.name]}"

    lines = ['digraph replay {', '  graph [rankdir=TB nodesep=0.3 ranksep=0.35 fontname="Helvetica"]',
             '  node [fontname="Helvetica" fontsize=11 margin="0.08,0.04"]',
             '  edge [fontname="Helvetica" fontsize=9 color="#555555" fontcolor="#555555"]']
    edge_ids = {}  # (id(consumer), input index) -> edge id
    for node in order:
        nid = ids[id(node)]
        out = outputs.get(id(node))
        detail = (f"{out.name + ' ' if out is not None and out.name else ''}"
                  f"{_shape(out.shape) if out is not None else ''}")
        if isinstance(node, Tensor):
            detail = f"{_shape(node.shape)} leaf"
        fill = COLOURS["leaf"] if isinstance(node, Tensor) else COLOURS["op"]
        label = (f'<<B>{html.escape(names[id(node)])}</B><BR/>'
                 f'<FONT POINT-SIZE="9">{html.escape(detail.strip())}</FONT>>')
        lines.append(f'  {nid} [id="{nid}" label={label} shape=box style="rounded,filled" '
                     f'fillcolor="{fill}"]')
    for k, (node, parent) in enumerate(constants):
        text = parent.name or (f"{parent._data.item():.6g}" if parent._data.size == 1 else
                               f"{_shape(parent.shape)} constant")
        lines.append(f'  c{k} [id="c{k}" label="{_dot_text(text)}" shape=plaintext '
                     f'fontsize=9 fontcolor="#777777"]')
        lines.append(f'  c{k} -> {ids[id(node)]} [color="#bbbbbb"]')
    count = 0
    for node in order:
        if isinstance(node, Tensor):
            continue
        for k, (edge, parent) in enumerate(zip(node.edges, node.parents)):
            if edge is None:
                continue
            eid = edge_ids[id(node), k] = f"e{count}"
            count += 1
            lines.append(f'  {ids[id(edge)]} -> {ids[id(node)]} [id="{eid}" '
                         f'label="{_dot_text(_shape(parent.shape))}"]')
    lines.append("}")

    for frame in frames:
        node = frame.node
        frame.node_id, frame.name = ids[id(node)], names[id(node)]
        out = outputs.get(id(node))
        if isinstance(node, Tensor):
            frame.value = np.array(node._data)
            continue
        frame.output_name = out.name if out is not None else None
        # (a large intermediate that only the graph held has no value left: tensor.ReleasedValue)
        frame.value_freed = getattr(out, "value_freed", False)
        frame.value = np.array(out._data) if out is not None and not frame.value_freed else None
        frame.input_names = tuple("constant" if e is None else names[id(e)] for e in node.edges)
        frame.edge_ids = tuple(edge_ids[id(node), k] for k, (e, g) in
                               enumerate(zip(node.edges, frame.input_grads))
                               if e is not None and g is not None)
    return {"dot": "\n".join(lines), "lines": lines, "ids": ids}


def _parameter_names(order: list) -> dict:
    """id(parameter) -> dotted name ("features.0.weight"), from the nn.Module calls recorded in
    the nodes' origins, by the same rule as draw_graph(group="module") (viz/modules.py)."""
    modules = {}
    for node in order:
        origin = node.origin if isinstance(node, Function) else None
        for module, _ in (origin or {}).get("modules", ()):
            modules.setdefault(id(module), module)
    return dotted_paths(outermost_modules(list(modules.values())))[1]


def _svg(dot_source: str) -> str:
    """The graph as inline SVG: `dot`'s output without its XML prolog, comments and namespace
    declarations (HTML needs none of them, and a page that names no URL fetches none)."""
    svg = _run_dot(dot_source, "svg").decode("utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg)
    return svg.replace("<svg ", '<svg id="graph-svg" ', 1)


def _run_dot(source: str, fmt: str) -> bytes:
    try:
        done = subprocess.run(["dot", f"-T{fmt}"], input=source.encode("utf-8"),
                              capture_output=True, check=False)
    except FileNotFoundError as error:
        raise GraphvizNotFound("dot") from error
    if done.returncode != 0:
        raise RuntimeError(f"replay: Graphviz's dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


# ---- numbers ----------------------------------------------------------------------------------
def _number(v) -> str:
    """One rounding rule everywhere: DIGITS significant digits, never "-0"; nan and ±inf spelled."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v + 0.0:.{DIGITS}g}"  # + 0.0 turns -0.0 into 0.0


def _shape(shape: tuple) -> str:
    return "×".join(map(str, shape)) if shape else "scalar"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _slices(array: np.ndarray) -> list:
    """(caption, 2-D array) of each slice to show: leading axes of length 1 are dropped, so a
    1×1×4×4 tensor is one 4×4 grid; a scalar is 1×1 and a vector one row."""
    if array.ndim <= 2:
        return [("", array.reshape(1, -1) if array.ndim < 2 else array)]
    lead = array.shape[:-2]
    return [("[" + ", ".join(str(i) for i, n in zip(index, lead) if n > 1) + "]"
             if any(n > 1 for n in lead) else "", array[index]) for index in np.ndindex(*lead)]


def _stats(array: np.ndarray) -> list:
    with np.errstate(all="ignore"):
        a = array.astype(np.float64)
        return [("min", a.min()), ("mean", a.mean()), ("max", a.max()),
                ("norm", np.sqrt((a * a).sum()))] if a.size else []


def _block_size(shape: tuple, cells: int) -> int:
    """The block side that brings a plane to at most ``cells`` a side: 1 (every cell drawn)
    when it fits; else the smallest that divides every longer side evenly, if one is at most
    twice the least possible, so that blocks tile the plane like pooling windows do."""
    least = max(1, math.ceil(max(shape) / cells))
    for block in range(least, 2 * least + 1):
        if all(n % block == 0 or n < block for n in shape):
            return block
    return least


def _heat_plane(plane: np.ndarray, cells: int, marks=None) -> tuple:
    """The plane averaged down to at most ``cells`` a side, its marks (0 none, 1 tied,
    2 argmax) likewise, a block taking the strongest mark inside it; and the block side."""
    plane = plane.astype(np.float64)
    block = _block_size(plane.shape, cells)
    if block == 1:
        return plane, marks, 1
    h, w = (math.ceil(n / block) * block for n in plane.shape)
    padded = np.full((h, w), np.nan)
    padded[:plane.shape[0], :plane.shape[1]] = plane
    with warnings.catch_warnings():  # a block of nan values averages to nan, as it should
        warnings.simplefilter("ignore", RuntimeWarning)
        small = np.nanmean(padded.reshape(h // block, block, w // block, block), axis=(1, 3))
    if marks is not None:
        padded_marks = np.zeros((h, w), dtype=marks.dtype)
        padded_marks[:plane.shape[0], :plane.shape[1]] = marks
        marks = padded_marks.reshape(h // block, block, w // block, block).max(axis=(1, 3))
    return small, marks, block


def _heat_colours(plane: np.ndarray) -> tuple:
    """Each cell's colour on a diverging scale: white at 0, red for the largest positive |value|
    of the plane, blue for negative; nan is black. Returns (colours, scale)."""
    finite = plane[np.isfinite(plane)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    with np.errstate(all="ignore"):
        t = np.clip(plane / scale, -1, 1) if scale > 0 else np.zeros_like(plane)
    t = np.where(np.isinf(plane), np.sign(plane), t)
    pos, neg = np.array(COLOURS["positive"]), np.array(COLOURS["negative"])
    mag = np.abs(t)[..., None]
    rgb = 255 * (1 - mag) + np.where(t[..., None] >= 0, pos, neg) * mag
    rgb = np.where(np.isnan(plane)[..., None], 0, np.rint(rgb)).astype(int)
    return np.array([[f"#{r:02x}{g:02x}{b:02x}" for r, g, b in row] for row in rgb]), scale


# ---- the page ----------------------------------------------------------------------------------
def _grid(array: np.ndarray, role: str, show_values: bool, max_elements: int, lit=None) -> str:
    """A tensor as HTML: each 2-D slice a table of numbers, or (large) shape, statistics and a
    heat-map per plane. ``lit``: a mask of the same shape, cells to highlight (2: a window's
    argmax, 1: another cell its max pool pays, 0: none)."""
    head = f'<div class="tensor" data-role="{role}" data-shape="{",".join(map(str, array.shape))}">'
    parts = [head, f'<div class="shape">{_shape(array.shape)} {array.dtype}</div>']
    slices = _slices(array)
    lit_slices = [m for _, m in _slices(lit)] if lit is not None else [None] * len(slices)
    if not show_values or slices[0][1].size > max_elements:
        parts.append('<div class="stats">' + " ".join(
            f'<span data-stat="{name}" data-value="{float(v)!r}">{name} {_number(v)}</span>'
            for name, v in _stats(array)) + "</div>")
        if show_values:
            parts += [_heat_svg(caption, plane, marks)
                      for (caption, plane), marks in zip(slices[:MAX_SLICES], lit_slices)]
    else:
        for (caption, plane), marks in zip(slices[:MAX_SLICES], lit_slices):
            rows = []
            for r, row in enumerate(plane):
                cells = "".join(
                    f'<td{_MARK_CLASS[marks[r, c]] if marks is not None else ""} '
                    f'data-value="{float(v)!r}">{_number(v)}</td>' for c, v in enumerate(row))
                rows.append(f"<tr>{cells}</tr>")
            cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
            parts.append(f'<table class="grid">{cap}{"".join(rows)}</table>')
    if show_values and len(slices) > MAX_SLICES:
        parts.append(f'<div class="more">… {len(slices) - MAX_SLICES} more slices</div>')
    return "".join(parts) + "</div>"


def _heat_svg(caption: str, plane: np.ndarray, marks=None) -> str:
    """A plane as SVG squares; the cells (or blocks) its max pool pays outlined: dark for a
    window's argmax, light for another tied cell."""
    small, marks, block = _heat_plane(plane, HEAT_CELLS, marks)
    colours, scale = _heat_colours(small)
    size = max(4, 192 // max(small.shape))
    rects = [f'<rect x="{c * size}" y="{r * size}" width="{size}" height="{size}" fill="{colour}"/>'
             for r, row in enumerate(colours) for c, colour in enumerate(row)]
    if marks is not None:  # after the squares, so no neighbour paints over an outline
        for mark, name in ((1, "tied"), (2, "argmax")):
            rects += [f'<rect class="{name}" data-cell="{r},{c}" x="{c * size + 0.5}" '
                      f'y="{r * size + 0.5}" width="{size - 1}" height="{size - 1}" fill="none" '
                      f'stroke="{COLOURS[name + "_edge"]}"/>' for r, c in np.argwhere(marks == mark)]
    note = f", {block}×{block} blocks averaged" if block > 1 else ""
    if marks is not None and marks.any():
        note += "; outlined: " + ("blocks holding " if block > 1 else "") + "cells max pooling pays"
    h, w = small.shape[0] * size, small.shape[1] * size
    return (f'<figure class="heat"><svg width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'{"".join(rects)}</svg><figcaption>{html.escape(caption)} heat-map: red '
            f'+{_number(scale)}, blue -{_number(scale)}{note}</figcaption></figure>')


_MARK_CLASS = {0: "", 1: " class=tied", 2: " class=argmax"}  # a page cell's class, by its mark


def _mark_pool(frame: Frame, attrs: dict) -> None:
    """Mark the pooled cells backward pays: each window's argmax and, under ties="split" or
    "all", every other cell equal to its window's max. A pooling op without our geometry
    attributes (someone's own Function saving an argmax) is taken to pay its argmax alone."""
    frame.ties = attrs.get("ties") if attrs.get("ties") in ("split", "all") else "first"
    geometry = all(k in attrs for k in ("kernel_size", "stride", "padding", "dilation"))
    if frame.ties in ("split", "all") and geometry:
        frame.chosen, tied = pool_marks(frame.pool_input, frame.argmax, attrs)
        frame.tied = tied & ~frame.chosen
    else:
        frame.chosen = chosen_cells(frame.pool_input.shape, frame.argmax)
        frame.tied = np.zeros_like(frame.chosen)


def _pool_marks(frame: Frame):
    """The frame's pool marks as one int8 mask (2 argmax, 1 other tied cell, 0 none), or None."""
    return None if frame.chosen is None else 2 * frame.chosen.astype(np.int8) + frame.tied


_POOL_RULE = {  # what the lit cells mean, by max_pool2d's ties rule
    "first": "each window's chosen cell (its saved argmax): its whole gradient goes there",
    "split": "each window's saved argmax (dark) and every other cell equal to its max (light): "
             "its gradient is split equally among them (ties='split')",
    "all": "each window's saved argmax (dark) and every other cell equal to its max (light): "
           "each receives its whole gradient (ties='all')"}


def _frame_html(frame: Frame, receivers: dict, waiting: list, show_values: bool,
                max_elements: int) -> str:
    grid = lambda a, role, lit=None: _grid(a, role, show_values, max_elements, lit)
    leaf = frame.op is None
    kind = "leaf" if leaf else "op"
    out = f" → {frame.output_name}" if frame.output_name else ""
    body = [f'<h2><span class="step">{frame.index + 1}.</span> '
            f'<span class="node-name">{html.escape(frame.name)}</span>{html.escape(out)}</h2>']
    target = frame.name if leaf else (frame.output_name or f"({frame.name}'s output)")
    parts = frame.parts
    body.append(f'<h3>Gradient arriving: ∂loss/∂{html.escape(target)}</h3>')
    if len(parts) > 1:
        names = [f"{p.name}" + (f" (input {k})" if len(p.input_grads) > 1 else "") for p, k, _ in parts]
        body.append(f'<p class="accumulation">received {len(parts)} of {len(parts)} contributions: '
                    f'{html.escape(" + ".join(names))} = total</p>')
        body.append('<div class="parts">' + "".join(
            f'<div class="part"><div class="from">from {html.escape(name)}</div>'
            f'{grid(g, "part")}</div>' for name, (_, _, g) in zip(names, parts)) + "</div>")
        body.append('<div class="total"><div class="from">= total</div>')
    elif parts:
        body.append(f'<p class="from">from {html.escape(parts[0][0].name)}</p>')
    else:
        body.append('<p class="from">the seed: ∂loss/∂loss (backward starts here)</p>')
    body.append(grid(frame.grad_output, "grad_output"))
    if len(parts) > 1:
        body.append("</div>")
    if frame.value is not None and show_values:
        body.append(f'<details class="value"><summary>forward value of '
                    f'{html.escape(target)}</summary>'
                    f'{grid(frame.value, "value")}</details>')
    elif frame.value_freed and show_values:
        body.append(f'<p class="note">The forward value of {html.escape(target)} was freed: only '
                    f'the graph held it (keep a reference to show it).</p>')
    if leaf:
        body.append('<p class="note">A leaf: backward accumulates this into its <code>.grad</code> '
                    '(a replay of a retained graph leaves <code>.grad</code> as it was).</p>')
    else:
        if frame.saved:
            body.append('<p class="saved">saved for backward: ' + html.escape(", ".join(
                f"{k} ({v})" for k, v in frame.saved.items())) + "</p>")
        lit = _pool_marks(frame)
        if lit is not None:
            body.append(f'<h3 class="pool-rule">Max pooling: {html.escape(_POOL_RULE[frame.ties])}</h3>')
            body.append(grid(frame.pool_input, "pool_input", lit))
        body.append("<h3>Sent to each input</h3>")
        for k, (name, g) in enumerate(zip(frame.input_names, frame.input_grads)):
            count = ""
            receiver, number = receivers.get((frame.index, k), (None, 0))
            if receiver is not None and len(receiver.parts) > 1:
                count = f" (contribution {number + 1} of {len(receiver.parts)})"
            head = f'<div class="input" data-input="{k}"><h4>input {k} → {html.escape(name)}{count}</h4>'
            if g is None:
                why = "a constant: no gradient" if name == "constant" else "no gradient (None)"
                body.append(f'{head}<p class="none">{why}</p></div>')
            else:
                body.append(head + grid(g, "input_grad", lit if g.shape == getattr(lit, "shape", 0)
                                        else None) + "</div>")
    return (f'<section class="frame {kind}" data-frame="{frame.index}" data-node="{frame.node_id}" '
            f'data-edges="{" ".join(frame.edge_ids)}" data-waiting="{" ".join(sorted(waiting))}"'
            f'{" hidden" if frame.index else ""}>{"".join(body)}</section>')


def _page(frames: list, svg: str, show_values: bool, max_elements: int) -> str:
    # Who receives each sent gradient, as its how-manieth contribution; and, for each frame,
    # the nodes holding part of their gradient (from its first contribution until their turn).
    receivers, waiting = {}, [[] for _ in frames]
    for f in frames:
        for number, (sender, k, _) in enumerate(f.parts):
            receivers[sender.index, k] = (f, number)
        if f.parts:
            for i in range(min(p.index for p, _, _ in f.parts), f.index):
                waiting[i].append(f.node_id)
    sections = "\n".join(_frame_html(f, receivers, waiting[f.index], show_values, max_elements)
                         for f in frames)
    css = _CSS
    for name, colour in COLOURS.items():
        if isinstance(colour, str):
            css = css.replace(f"{{colours[{name}]}}", colour)
    return _TEMPLATE.format(css=css, svg=svg, sections=sections, last=max(len(frames) - 1, 0),
                            count=len(frames), script=_SCRIPT, colours=COLOURS)


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  margin: 0; color: #222; height: 100vh; display: flex; flex-direction: column; }
header { flex: none; background: #fafafa; border-bottom: 1px solid #ddd;
  padding: 6px 12px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0 12px 0 0; }
#slider { flex: 1; min-width: 160px; }
/* The page itself never scrolls: the graph and the numbers each scroll in their own pane, so
   the controls and the current node (scrolled into view by show()) stay on screen together. */
main { flex: 1; min-height: 0; display: flex; gap: 16px; padding: 12px; }
#graph { flex: 1 1 45%; overflow: auto; }
#graph svg { max-width: 100%; height: auto; }
#panel { flex: 1 1 55%; overflow: auto; }
#graph g.node { scroll-margin: 12px; }
#graph g.node.current polygon, #graph g.node.current path { fill: {colours[current]};
  stroke: #000; stroke-width: 3px; }
#graph g.node.done polygon, #graph g.node.done path { fill: {colours[done]}; }
#graph g.node.waiting polygon, #graph g.node.waiting path { fill: {colours[waiting]};
  stroke: #e0a030; stroke-width: 2px; }
#graph g.edge.active path { stroke: {colours[active]}; stroke-width: 3px; }
#graph g.edge.active polygon { fill: {colours[active]}; stroke: {colours[active]}; }
#graph g.edge.active text { fill: {colours[active]}; font-weight: bold; }
h2 { font-size: 18px; margin: 4px 0; } h3 { font-size: 14px; margin: 12px 0 4px; }
h4 { font-size: 13px; margin: 8px 0 2px; font-weight: normal; }
table.grid { border-collapse: collapse; margin: 2px 8px 6px 0; display: inline-table;
  font-variant-numeric: tabular-nums; font-size: 12px; }
table.grid td { border: 1px solid #bbb; padding: 2px 5px; text-align: right; min-width: 3em; }
table.grid td.argmax { background: {colours[argmax]}; font-weight: bold;
  outline: 2px solid {colours[argmax_edge]}; }
table.grid td.tied { background: {colours[tied]}; outline: 1px solid {colours[tied_edge]}; }
table.grid caption { font-size: 11px; color: #666; }
.shape, .stats, figcaption, .more, .from, .saved, .note { font-size: 12px; color: #555; }
.stats span { margin-right: 10px; } figure.heat { display: inline-block; margin: 4px 8px 4px 0; }
.parts { display: flex; gap: 12px; flex-wrap: wrap; } .accumulation { font-weight: bold; }
.total { border-top: 1px solid #ccc; margin-top: 4px; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 4px; border: 1px solid #aaa;
  font-size: 12px; }
"""

_SCRIPT = """
const frames = Array.from(document.querySelectorAll('section.frame'));
const slider = document.getElementById('slider');
const counter = document.getElementById('frame-counter');
const playButton = document.getElementById('play');
let current = 0, timer = null;
function mark(ids, cls) {
  for (const id of ids.split(' ')) {
    const el = id && document.getElementById(id);
    if (el) el.classList.add(cls);
  }
}
function show(k) {
  current = Math.max(0, Math.min(frames.length - 1, k));
  const frame = frames[current];
  frames.forEach((f, j) => { f.hidden = j !== current; });
  document.querySelectorAll('#graph .current, #graph .done, #graph .waiting, #graph .active')
    .forEach(el => el.classList.remove('current', 'done', 'waiting', 'active'));
  if (frame) {
    frames.slice(0, current).forEach(f => mark(f.dataset.node, 'done'));
    mark(frame.dataset.waiting, 'waiting');
    mark(frame.dataset.node, 'current');
    mark(frame.dataset.edges, 'active');
    // The graph pane scrolls: bring the current node into view (in a notebook's 720-px iframe
    // most of a network's graph is below the fold), moving as little as possible.
    const node = document.getElementById(frame.dataset.node);
    if (node) node.scrollIntoView({block: 'nearest', inline: 'nearest'});
  }
  slider.value = current;
  counter.textContent = 'Frame ' + (current + 1) + ' / ' + frames.length;
}
function stop() { clearInterval(timer); timer = null; playButton.textContent = '\u25b6 Play'; }
function play() {
  if (current >= frames.length - 1) show(0);
  playButton.textContent = '\u275a\u275a Pause';
  timer = setInterval(() => { if (current >= frames.length - 1) stop(); else show(current + 1); },
                      1200);
}
playButton.addEventListener('click', () => { if (timer) stop(); else play(); });
document.getElementById('prev').addEventListener('click', () => { stop(); show(current - 1); });
document.getElementById('next').addEventListener('click', () => { stop(); show(current + 1); });
slider.addEventListener('input', () => { stop(); show(Number(slider.value)); });
document.addEventListener('keydown', e => {
  if (e.target === slider && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) {
    e.preventDefault();  // the slider would move too: one step per key press
  }
  if (e.key === 'ArrowRight') { stop(); show(current + 1); }
  else if (e.key === 'ArrowLeft') { stop(); show(current - 1); }
  else if (e.key === 'Home') { stop(); show(0); }
  else if (e.key === 'End') { stop(); show(frames.length - 1); }
  else if (e.key === ' ' && e.target.tagName !== 'BUTTON') { e.preventDefault(); playButton.click(); }
});
show(0);
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backward replay</title><style>{css}</style></head>
<body>
<header><h1>Backward replay</h1>
<button id="prev" type="button">&#9664; Prev</button>
<button id="play" type="button">&#9654; Play</button>
<button id="next" type="button">Next &#9654;</button>
<input id="slider" type="range" min="0" max="{last}" step="1" value="0" aria-label="frame">
<span id="frame-counter">Frame 1 / {count}</span>
<span class="legend"><span style="background:{colours[current]}">current node</span><span
 style="background:{colours[waiting]}">has gradient waiting</span><span
 style="background:{colours[done]}">done</span><span style="color:{colours[active]}">&#8594;
 edge carrying gradient now</span></span>
</header>
<main><div id="graph">{svg}</div><div id="panel">
{sections}
</div></main>
<script>{script}</script>
</body></html>
"""


# ---- PNG frames, for slides ---------------------------------------------------------------------
def _write_pngs(frames: list, graph: dict, folder: Path, show_values: bool, max_elements: int) -> list:
    """Each frame as the graph (its node highlighted, its edges coloured) beside a panel of its
    numbers, rendered by `dot -Tpng`; with Pillow, also one animated GIF of them all."""
    folder.mkdir(exist_ok=True)  # its parent exists: replay checked before backward ran
    paths = []
    body = graph["lines"][1:-1]
    for frame in frames:
        done = {f.node_id for f in frames[:frame.index]}
        extra = [f'  {nid} [fillcolor="{COLOURS["done"]}"]' for nid in sorted(done)]
        extra.append(f'  {frame.node_id} [fillcolor="{COLOURS["current"]}" penwidth=3]')
        active = set(frame.edge_ids)
        edges = [re.sub(r'(\[id="(e\d+)")', lambda m: m.group(1) + (
            f' color="{COLOURS["active"]}" penwidth=3 fontcolor="{COLOURS["active"]}"'
            if m.group(2) in active else ""), line) for line in body]
        panel = _png_panel(frame, show_values, max_elements)
        source = "\n".join(["digraph replay {", *edges, *extra,
                            f"  panel [shape=plaintext label=<{panel}>]", "}"])
        path = folder / f"frame_{frame.index:03d}.png"
        path.write_bytes(_run_dot(source, "png"))
        paths.append(path)
    try:
        from PIL import Image
    except ModuleNotFoundError:
        return paths
    images = [Image.open(p).convert("RGB") for p in paths]
    if images:
        width, height = max(i.width for i in images), max(i.height for i in images)
        canvases = []
        for image in images:  # frames differ in size: each on a white canvas of the largest
            canvas = Image.new("RGB", (width, height), "white")
            canvas.paste(image, (0, 0))
            canvases.append(canvas)
        gif = folder / "replay.gif"
        canvases[0].save(gif, save_all=True, append_images=canvases[1:], duration=1500, loop=0)
        paths.append(gif)
    return paths


def _png_table(array: np.ndarray, show_values: bool, max_elements: int, lit=None) -> str:
    """A Graphviz HTML-like table: the first 2-D slice's numbers, or statistics and a heat-map."""
    caption, plane = _slices(array)[0]
    head = html.escape(f"{_shape(array.shape)}{' ' + caption if caption else ''}")
    marks = _slices(lit)[0][1] if lit is not None else None
    if not show_values or plane.size > max_elements:
        stats = "  ".join(f"{name} {_number(v)}" for name, v in _stats(array))
        rows = [f'<TR><TD BORDER="0">{head}</TD></TR>',
                f'<TR><TD BORDER="0"><FONT POINT-SIZE="9">{html.escape(stats)}</FONT></TD></TR>']
        if show_values:
            rows += _png_heat(plane, marks)
        return f'<TABLE BORDER="0" CELLSPACING="0">{"".join(rows)}</TABLE>'
    rows = [f'<TR><TD COLSPAN="{plane.shape[1]}" BORDER="0"><FONT POINT-SIZE="9">{head}</FONT></TD></TR>']
    fills = {2: COLOURS["argmax"], 1: COLOURS["tied"]}
    for r, row in enumerate(plane):
        rows.append("<TR>" + "".join(
            f'<TD BGCOLOR="{fills[marks[r, c]]}"><B>{_number(v)}</B></TD>'
            if marks is not None and marks[r, c] else f"<TD>{_number(v)}</TD>"
            for c, v in enumerate(row)) + "</TR>")
    return f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">{"".join(rows)}</TABLE>'


def _png_heat(plane: np.ndarray, marks) -> list:
    """Table rows: the plane as square cells (every cell up to PNG_HEAT_CELLS a side, else
    blocks averaged), the cells max pooling pays framed; and a caption saying so."""
    small, marks, block = _heat_plane(plane, PNG_HEAT_CELLS, marks)
    colours, scale = _heat_colours(small)
    size = min(12, max(6, 256 // max(small.shape)))  # points; FIXEDSIZE keeps every cell square
    edges = {1: COLOURS["tied_edge"], 2: COLOURS["argmax_edge"]}
    cells = "".join("<TR>" + "".join(
        f'<TD BGCOLOR="{colour}" WIDTH="{size}" HEIGHT="{size}" FIXEDSIZE="TRUE"'
        + (f' BORDER="1" COLOR="{edges[marks[r, c]]}"' if marks is not None and marks[r, c] else "")
        + "></TD>" for c, colour in enumerate(row)) + "</TR>" for r, row in enumerate(colours))
    note = f"red +{_number(scale)}, blue -{_number(scale)}"
    note += f"; {block}×{block} blocks averaged" if block > 1 else ""
    if marks is not None and marks.any():
        note += "; framed: " + ("blocks holding " if block > 1 else "") + "cells max pooling pays"
    # A table is stretched to fill its cell unless its own size is fixed (a wide caption above
    # would pull the squares apart into columns).
    h, w = (n * size for n in small.shape)
    return [f'<TR><TD BORDER="0"><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" '
            f'FIXEDSIZE="TRUE" WIDTH="{w}" HEIGHT="{h}">{cells}</TABLE></TD></TR>',
            f'<TR><TD BORDER="0"><FONT POINT-SIZE="9">{html.escape(note)}</FONT></TD></TR>']


def _png_panel(frame: Frame, show_values: bool, max_elements: int) -> str:
    """The frame's numbers as one Graphviz HTML-like table (a cell holds text or a table, not
    both: each caption is a row of its own)."""
    rows = []
    text = lambda t, bold=False: rows.append(
        f'<TR><TD ALIGN="LEFT">{"<B>" if bold else ""}{html.escape(t)}{"</B>" if bold else ""}</TD></TR>')
    table = lambda a, lit=None: rows.append(
        f'<TR><TD ALIGN="LEFT">{_png_table(a, show_values, max_elements, lit)}</TD></TR>')
    text(f"{frame.index + 1}. {frame.name}" + (f" → {frame.output_name}" if frame.output_name else ""),
         bold=True)
    if len(frame.parts) > 1:
        text(f"received {len(frame.parts)} contributions, summed:")
        for p, _, g in frame.parts:
            text(f"from {p.name}:")
            table(g)
    text("gradient arriving (total):" if len(frame.parts) > 1 else "gradient arriving:")
    table(frame.grad_output)
    lit = _pool_marks(frame)
    if lit is not None:
        text(f"pooled input: {_POOL_RULE[frame.ties]}")
        table(frame.pool_input, lit)
    for k, (name, g) in enumerate(zip(frame.input_names, frame.input_grads)):
        text(f"sent to input {k} ({name}):" + (" nothing" if g is None else ""))
        if g is not None:
            table(g, lit if lit is not None and g.shape == lit.shape else None)
    if frame.op is None:
        text("a leaf: accumulated into .grad")
    return f'<TABLE BORDER="0" CELLSPACING="2">{"".join(rows)}</TABLE>'
