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
lights are those its backward pays, under its ``ties`` rule: MaxPool2d.paid_cells). Nothing here
writes to a node or a tensor: a graph that already ran with ``retain_graph=True`` is replayed
into ``capture={}``, so no ``.grad`` changes.

The graph is laid out once, by one run of Graphviz's `dot` (``_layout``: node positions, edge
splines, and the size of each PNG frame's panel of numbers); every picture of it is then drawn
at those positions without laying it out again (``dot -Knop2``): the page's inline SVG (nodes
``n<k>`` and edges ``e<k>`` by id) and, with ``frames_dir=``, the PNG frames, a few runs of them
side by side, each frame the same graph restyled beside its panel (and ``replay.gif`` when
Pillow is installed). The page is one file with no network access: each frame is a
``<section data-frame>`` of HTML tables (every number cell carries its full value in
``data-value``), and a few lines of script step through them.

What a tensor shows — every number, or past a size its first and last entries, statistics and
a heat-map — is decided in one place (``_kind``: viz/summary.py's rule with the page's limits),
for the page and the PNGs alike; numbers, words and arguments are written by viz/summary.py.

Like the rest of ``viz``, this module needs neither the ``graphviz`` Python package nor anything
of PyTorch: only the `dot` program, run directly.
"""
from __future__ import annotations

import html
import io
import json
import math
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .dot import GraphvizNotFound
from .modules import dotted_paths, outermost_modules
from .summary import (EDGE, MAX_SLICES, PALETTE, SMALL, argument, arguments, as_2d, ends,
                      heat_colours, heat_plane, number, plural, shape_text, slice_kind, slices,
                      stats)
from ..args import check_flag, check_size
from ..ops.pool import argmax_mask
from ..engine import Node, Tensor, _node_of, _topological_order, run_backward

DIGITS = 4  # significant digits of every number shown (data-value keeps the full value)
HEAT_CELLS = 64  # a heat-map plane is drawn cell by cell up to this many cells a side, else averaged
PNG_HEAT_CELLS = 32  # ... and up to this many in the PNG frames, where each cell is a table cell
GRID_COLUMNS = 2 * EDGE + 1  # a slice wider than this is summarised (a row this long of the
#                              longest numbers fits the page's pane in a 1000-px window)
PANEL_GAP = 24  # points between the graph and a PNG frame's panel
COLOURS = {"leaf": PALETTE["parameter"], "op": PALETTE["op"], "constant": PALETTE["constant"],
           "current": "#ffd54a", "done": "#f0f0f0", "waiting": "#ffe9c7", "active": "#e4572e",
           "argmax": PALETTE["argmax"], "argmax_edge": PALETTE["argmax_edge"],
           "tied": PALETTE["tied"], "tied_edge": "#5b8def"}


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
    saved: dict = field(default_factory=dict)  # name -> what forward saved, as text ("64×400 float32")
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
    panels = [] if frames_dir is None else [_png_panel(f, show_values, max_elements) for f in frames]
    layout = _layout(graph, panels)  # the one layout every picture below is drawn from
    page = _page(frames, _svg(_dot(graph, layout)), show_values, max_elements)
    if path is not None:
        path.write_text(page, encoding="utf-8")
    pngs = [] if frames_dir is None else _write_pngs(frames, graph, layout, panels, frames_dir)
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
    again = isinstance(root, Node) and root.ran  # ran before with retain_graph=True
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
            # an array as its shape and dtype; a number (a 0-d array too), shape or flag by value
            frame.saved = {k: f"{shape_text(v.shape)} {v.dtype}"
                           if isinstance(v, np.ndarray) and v.ndim
                           else argument(k, v, node, DIGITS) for k, v in saved.items()}
            if isinstance(saved.get("argmax"), np.ndarray) and node.parents \
                    and node.parents[0]._data.ndim == 4:  # max pooling (ours, or one like it)
                frame.argmax = np.array(saved["argmax"])
                frame.pool_input = np.array(node.parents[0]._data)
                _mark_pool(frame, node)
        frames.append(frame)

    if again:
        run_backward((loss,), (gradient,), True if retain_graph is None else retain_graph,
                     capture={}, observe=observe)
    else:
        run_backward((loss,), (gradient,), retain_graph, observe=observe)
    return frames


# ---- the graph: names, then DOT ---------------------------------------------------------------
def _graph(loss: Tensor, frames: list) -> dict:
    """Name every node, give it an id, and describe the graph for DOT (inputs on top, loss below;
    arrows in the direction data flowed, gradients run back up them): its ``nodes`` as
    (id, attributes) and ``edges`` as (id, tail, head, attributes), which ``_dot`` writes out."""
    order = _topological_order([_node_of(loss)])
    outputs = {id(order[-1]): loss}  # a Function does not know its output: its users do
    constants = []
    for node in order:
        if isinstance(node, Node):
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
            names[id(node)] = _title(node, parameter_names) or f"leaf#{counts['leaf']}"
        else:
            counts[node.name] = counts.get(node.name, 0) + 1
            names[id(node)] = f"{node.name}#{counts[node.name]}"

    nodes, edges = [], []
    edge_ids = {}  # (id(consumer), input index) -> edge id
    for node in order:
        nid = ids[id(node)]
        out = outputs.get(id(node))
        detail = (f"{out.name + ' ' if out is not None and out.name else ''}"
                  f"{shape_text(out.shape) if out is not None else ''}")
        if isinstance(node, Tensor):
            detail = f"{shape_text(node.shape)} leaf"
        fill = COLOURS["leaf"] if isinstance(node, Tensor) else COLOURS["op"]
        label = (f'<<B>{html.escape(names[id(node)])}</B><BR/>'
                 f'{SMALL.format(html.escape(detail.strip()))}>')
        nodes.append((nid, f'id="{nid}" label={label} shape=box style="rounded,filled" '
                           f'fillcolor="{fill}"'))
    for k, (node, parent) in enumerate(constants):
        title = _title(parent, parameter_names)
        text = title or (number(parent._data.item(), DIGITS) if parent._data.size == 1 else
                         f"{shape_text(parent.shape)} constant")
        nodes.append((f"c{k}", f'id="c{k}" label="{_dot_text(text)}" shape=plaintext fontsize=9 '
                               f'fontcolor="#777777"'))
        edges.append((f"ce{k}", f"c{k}", ids[id(node)], 'color="#bbbbbb"'))
    count = 0
    for node in order:
        if isinstance(node, Tensor):
            continue
        for k, (edge, parent) in enumerate(zip(node.edges, node.parents)):
            if edge is None:
                continue
            eid = edge_ids[id(node), k] = f"e{count}"
            count += 1
            edges.append((eid, ids[id(edge)], ids[id(node)],
                          f'label="{_dot_text(shape_text(parent.shape))}"'))

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
    return {"nodes": nodes, "edges": edges, "ids": ids}


def _title(t: Tensor, parameter_names: dict) -> str | None:
    """A tensor's title: its module path where it is a parameter of a called nn.Module
    (``conv1.weight``), else its own name (None when it has neither)."""
    return parameter_names.get(id(t)) or t.name or None


def _parameter_names(order: list) -> dict:
    """id(parameter) -> dotted name ("features.0.weight"), from the nn.Module calls recorded in
    the nodes' origins, by the same rule as draw_graph(group="module") (viz/modules.py)."""
    modules = {}
    for node in order:
        origin = node.origin if isinstance(node, Node) else None
        for module, _ in (origin or {}).get("modules", ()):
            modules.setdefault(id(module), module)
    return dotted_paths(outermost_modules(list(modules.values())))[1]


_HEAD = ['  graph [rankdir=TB nodesep=0.3 ranksep=0.35 fontname="Helvetica"]',
         '  node [fontname="Helvetica" fontsize=11 margin="0.08,0.04"]',
         '  edge [fontname="Helvetica" fontsize=9 color="#555555" fontcolor="#555555"]']


def _dot(graph: dict, layout: dict | None = None, nodes: dict | None = None,
         edges: dict | None = None, extra: tuple = (), bb: tuple | None = None) -> str:
    """The graph as DOT; with a ``layout``, at its positions (drawn by ``dot -Knop2``, which
    lays nothing out). ``nodes`` / ``edges``: more attributes for some ids (a frame's colours);
    ``extra``: more statements; ``bb``: the drawing's bounding box (default: the layout's)."""
    nodes, edges = nodes or {}, edges or {}
    lines = ["digraph replay {", *_HEAD]
    if layout is not None:
        lines.append('  graph [bb="{:g},{:g},{:g},{:g}"]'.format(*(bb or layout["bb"])))
    for nid, attributes in graph["nodes"]:
        where = f' pos="{layout["nodes"][nid]}"' if layout is not None else ""
        lines.append(f"  {nid} [{attributes}{where}{nodes.get(nid, '')}]")
    for eid, tail, head, attributes in graph["edges"]:
        where = ""
        if layout is not None:
            spline, label_at = layout["edges"][eid]
            where = f' pos="{spline}"' + (f' lp="{label_at}"' if label_at else "")
        lines.append(f'  {tail} -> {head} [id="{eid}" {attributes}{where}{edges.get(eid, "")}]')
    return "\n".join([*lines, *extra, "}"])


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _layout(graph: dict, panels: list = ()) -> dict:
    """Lay the graph out: one `dot` run, the only one of a replay. Returns where it put each
    node (``nodes``: id -> "x,y") and edge (``edges``: id -> (spline, label position)), its
    bounding box ``bb``, and the size in points of each of ``panels`` (HTML-like tables, a PNG
    frame's numbers, measured in the same run as one-node graphs)."""
    source = "\n".join([_dot(graph)] + [f"digraph panel{k} {{\n" + "\n".join(_HEAD) + "\n"
                                          + _panel_node(p) + "\n}" for k, p in enumerate(panels)])
    text = _run_dot(source, "json0").decode("utf-8")
    decoder, documents, blank = json.JSONDecoder(), [], re.compile(r"\s*")
    at = blank.match(text).end()
    while at < len(text):  # one JSON document per graph, one after the other
        document, at = decoder.raw_decode(text, at)
        documents.append(document)
        at = blank.match(text, at).end()
    drawn, measured = documents[0], documents[1:]
    return {"bb": tuple(float(v) for v in drawn["bb"].split(",")),
            "nodes": {o["name"]: o["pos"] for o in drawn.get("objects", ())},
            "edges": {e["id"]: (e["pos"], e.get("lp")) for e in drawn.get("edges", ())},
            "panels": [(72 * float(d["objects"][0]["width"]), 72 * float(d["objects"][0]["height"]))
                       for d in measured]}  # (Graphviz gives a node's size in inches)


def _svg(dot_source: str) -> str:
    """The graph as inline SVG: `dot`'s output without its XML prolog, comments and namespace
    declarations (HTML needs none of them, and a page that names no URL fetches none)."""
    svg = _run_dot(dot_source, "svg", positioned=True).decode("utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg)
    return svg.replace("<svg ", '<svg id="graph-svg" ', 1)


def _run_dot(source: str, fmt: str, positioned: bool = False) -> bytes:
    """`dot -T<fmt>` on ``source`` (one or more graphs); ``positioned``: graphs whose nodes and
    edges already carry their ``pos``, drawn where they are (``-Knop2``: no layout)."""
    command = ["dot", f"-T{fmt}"] + (["-Knop2"] if positioned else [])
    try:
        done = subprocess.run(command, input=source.encode("utf-8"), capture_output=True,
                              check=False)
    except FileNotFoundError as error:
        raise GraphvizNotFound("dot") from error
    if done.returncode != 0:
        raise RuntimeError(f"replay: Graphviz's dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def _split_pngs(data: bytes) -> list:
    """The PNG files `dot` wrote one after another: each is its signature and chunks up to
    IEND (read by their lengths, so no byte pattern inside an image can cut it short)."""
    images, start = [], 0
    while start < len(data):
        at = start + 8  # the signature
        while True:
            length, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8]
            at += 12 + length  # length, type, data, CRC
            if kind == b"IEND" or at >= len(data):
                break
        images.append(data[start:at])
        start = at
    return images


# ---- summaries: what a tensor shows, on the page and in the PNGs -------------------------------
PAGE_LIMITS = (GRID_COLUMNS, math.inf)  # entries a listed row, a listed column may have


def _kind(plane: np.ndarray, show_values: bool, max_elements: int) -> str:
    """How a tensor whose 2-D slices are like ``plane`` is drawn: summary.slice_kind with the
    page's limits — "grid" (every number), "ends" (a long row: its first and last entries,
    statistics and a heat strip; a long column is a heat-map), "heat" (statistics and a
    heat-map per slice) — or "stats" (statistics only: ``show_values=False``)."""
    if not show_values:
        return "stats"
    return slice_kind(plane.shape, max_elements, PAGE_LIMITS, column_ends=False)


def _planes(array: np.ndarray, lit, first: int | None = None) -> list:
    """(caption, 2-D slice, its marks or None) of the ``first`` slices of ``array``
    (summary.slices: leading axes of length 1 dropped, a scalar 1×1, a vector one row)."""
    return [(caption, as_2d(array[index]), None if lit is None else as_2d(lit[index]))
            for caption, index in slices(array.shape, first)]


# ---- the page ----------------------------------------------------------------------------------
def _grid(array: np.ndarray, role: str, show_values: bool, max_elements: int, lit=None) -> str:
    """A tensor as HTML: each 2-D slice a table of numbers, or summarised (``_kind``): a long
    vector as its first and last entries, statistics and a heat strip; a large slice as shape,
    statistics and a heat-map per plane. ``lit``: a mask of the same shape, cells to highlight
    (2: a window's argmax, 1: another cell its max pool pays, 0: none)."""
    head = f'<div class="tensor" data-role="{role}" data-shape="{",".join(map(str, array.shape))}">'
    parts = [head, f'<div class="shape">{shape_text(array.shape)} {array.dtype}</div>']
    planes = _planes(array, lit, MAX_SLICES)
    kind = _kind(planes[0][1], show_values, max_elements)
    if kind != "grid":
        parts.append('<div class="stats">' + " ".join(
            f'<span data-stat="{name}" data-value="{float(v)!r}">{name} {number(v, DIGITS)}</span>'
            for name, v in stats(array)) + "</div>")
    for caption, plane, marks in planes if show_values else ():
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        if kind == "heat":
            parts.append(_heat_svg(caption, plane, marks))
        elif kind == "ends":
            shown = ends(plane[0])
            more = plural(plane.shape[1] - len(shown) + 1, "more entry", "more entries")
            cells = [f'<td class="gap" title="{more}">…</td>' if v is None else _cell(v)
                     for v in shown]
            parts.append(f'<div class="vector"><table class="grid edges">{cap}<tr>{"".join(cells)}'
                         f'</tr></table>{_heat_svg(caption, plane, marks)}</div>')
        else:
            rows = "".join("<tr>" + "".join(_cell(v, marks[r, c] if marks is not None else 0)
                                            for c, v in enumerate(row)) + "</tr>"
                           for r, row in enumerate(plane))
            parts.append(f'<table class="grid">{cap}{rows}</table>')
    count = math.prod(array.shape[:-2])  # slices
    if show_values and count > MAX_SLICES:
        parts.append(f'<div class="more">… {plural(count - MAX_SLICES, "more slice")}</div>')
    return "".join(parts) + "</div>"


def _cell(v, mark: int = 0) -> str:
    """A number's table cell: rounded, its full value in data-value (and its pool mark)."""
    return f'<td{_MARK_CLASS[mark]} data-value="{float(v)!r}">{number(v, DIGITS)}</td>'


def _heat_svg(caption: str, plane: np.ndarray, marks=None) -> str:
    """A plane as SVG squares (a vector as a strip of taller cells); the cells (or blocks) its
    max pool pays outlined: dark for a window's argmax, light for another tied cell."""
    small, marks, block = heat_plane(plane, HEAT_CELLS, marks)
    colours, scale = heat_colours(small)
    size = max(4, 192 // max(small.shape))
    tall = size if small.shape[0] > 1 else max(size, 10)  # a strip one cell high stays visible
    rects = [f'<rect x="{c * size}" y="{r * tall}" width="{size}" height="{tall}" fill="{colour}"/>'
             for r, row in enumerate(colours) for c, colour in enumerate(row)]
    if marks is not None:  # after the squares, so no neighbour paints over an outline
        for mark, name in ((1, "tied"), (2, "argmax")):
            rects += [f'<rect class="{name}" data-cell="{r},{c}" x="{c * size + 0.5}" '
                      f'y="{r * tall + 0.5}" width="{size - 1}" height="{tall - 1}" fill="none" '
                      f'stroke="{COLOURS[name + "_edge"]}"/>' for r, c in np.argwhere(marks == mark)]
    note = f", {block}×{block} blocks averaged" if block > 1 and small.shape[0] > 1 else \
        f", {block} entries averaged per cell" if block > 1 else ""
    if marks is not None and marks.any():
        note += "; outlined: " + ("blocks holding " if block > 1 else "") + "cells max pooling pays"
    what = "heat-map" if small.shape[0] > 1 else "heat strip"
    h, w = small.shape[0] * tall, small.shape[1] * size
    return (f'<figure class="heat"><svg width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'{"".join(rects)}</svg><figcaption>{html.escape(caption)} {what}: red '
            f'+{number(scale, DIGITS)}, blue -{number(scale, DIGITS)}{note}</figcaption></figure>')


_MARK_CLASS = {0: "", 1: " class=tied", 2: " class=argmax"}  # a page cell's class, by its mark


def _mark_pool(frame: Frame, node) -> None:
    """Mark the pooled cells backward pays: each window's argmax and, under ties="split" or
    "all", every other cell equal to its window's max (the op's own rule, ``paid_cells``). A
    pool that does not say (adaptive max pooling, someone's own Function saving an argmax) is
    taken to pay its argmax alone."""
    attrs, shape = node.attrs, frame.pool_input.shape
    frame.ties = attrs.get("ties") if attrs.get("ties") in ("split", "all") else "first"
    frame.chosen = argmax_mask(shape, frame.argmax)
    if hasattr(node, "paid_cells"):
        paid = node.paid_cells(frame.pool_input, frame.argmax).mask(shape)
        frame.tied = paid & ~frame.chosen
    else:
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
    written = [] if leaf else arguments(getattr(frame.node, "attrs", None) or {}, frame.node, DIGITS)
    if written:
        body.append(f'<p class="args">{html.escape(", ".join(written))}</p>')
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
            body.append('<p class="saved">saved for backward: ' + html.escape(" · ".join(
                f"{k} {v}" for k, v in frame.saved.items())) + "</p>")
        lit = _pool_marks(frame)
        if lit is not None:
            body.append(f'<h3 class="pool-rule">Max pooling: {html.escape(_POOL_RULE[frame.ties])}</h3>')
            body.append(grid(frame.pool_input, "pool_input", lit))
        body.append("<h3>Sent to each input</h3>")
        for k, (name, g) in enumerate(zip(frame.input_names, frame.input_grads)):
            count = ""
            receiver, position = receivers.get((frame.index, k), (None, 0))
            if receiver is not None and len(receiver.parts) > 1:
                count = f" (contribution {position + 1} of {len(receiver.parts)})"
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


def _waiting(frames: list) -> list:
    """For each frame, the ids of the nodes holding part of their gradient while it runs (from
    their first contribution until their turn)."""
    waiting = [[] for _ in frames]
    for f in frames:
        if f.parts:
            for i in range(min(p.index for p, _, _ in f.parts), f.index):
                waiting[i].append(f.node_id)
    return waiting


def _page(frames: list, svg: str, show_values: bool, max_elements: int) -> str:
    # Who receives each sent gradient, as its how-manieth contribution.
    receivers, waiting = {}, _waiting(frames)
    for f in frames:
        for position, (sender, k, _) in enumerate(f.parts):
            receivers[sender.index, k] = (f, position)
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
/* The controls are one row (the slider takes what is left; narrow windows drop the title, then
   the legend), so they never wrap over two lines nor take the graph's room. */
header { flex: none; background: #fafafa; border-bottom: 1px solid #ddd; padding: 4px 10px;
  display: flex; gap: 8px; align-items: center; flex-wrap: nowrap; white-space: nowrap;
  font-size: 13px; }
header h1 { font-size: 15px; margin: 0 4px 0 0; }
header button { font-size: 13px; padding: 2px 8px; }
#slider { flex: 1 1 0; min-width: 60px; }
#frame-counter { font-variant-numeric: tabular-nums; }
.legend { display: flex; gap: 4px; font-size: 11px; }
.legend span { padding: 0 5px; border: 1px solid #aaa; }
@media (max-width: 900px) { header h1 { display: none; } }
@media (max-width: 640px) { header .legend { display: none; } }
/* The page itself never scrolls: the graph and the numbers each scroll in their own pane, so
   the controls and the current node (scrolled into view by show()) stay on screen together.
   fit() sizes the graph: whole in its pane when it stays legible, else as wide as the pane. */
main { flex: 1; min-height: 0; display: flex; gap: 16px; padding: 10px 12px; }
#graph { flex: 1 1 45%; overflow: auto; scrollbar-gutter: stable; }
#graph svg { display: block; max-width: 100%; height: auto; }
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
/* A grid has at most GRID_COLUMNS columns (wider slices are summarised): at this size such a
   row of the longest numbers (-0.0001941) fits the pane of a 1000-px window. */
table.grid { border-collapse: collapse; margin: 2px 8px 6px 0; display: inline-table;
  font-variant-numeric: tabular-nums; font-size: 11px; }
table.grid td { border: 1px solid #bbb; padding: 1px 3px; text-align: right; min-width: 2.5em; }
table.grid td.gap { border: none; color: #666; text-align: center; min-width: 0; }
table.grid td.argmax { background: {colours[argmax]}; font-weight: bold;
  outline: 2px solid {colours[argmax_edge]}; }
table.grid td.tied { background: {colours[tied]}; outline: 1px solid {colours[tied_edge]}; }
table.grid caption { font-size: 11px; color: #666; }
.shape, .stats, figcaption, .more, .from, .saved, .note, .args { font-size: 12px; color: #555; }
.args { font-family: ui-monospace, Menlo, Consolas, monospace; margin: 0 0 4px; }
.stats span { margin-right: 10px; } figure.heat { display: inline-block; margin: 4px 8px 4px 0; }
.vector { display: inline-block; vertical-align: top; margin-right: 8px; }
.vector figure.heat { display: block; margin-top: 0; }
.parts { display: flex; gap: 12px; flex-wrap: wrap; } .accumulation { font-weight: bold; }
.total { border-top: 1px solid #ccc; margin-top: 4px; }
"""

_SCRIPT = """
const frames = Array.from(document.querySelectorAll('section.frame'));
const slider = document.getElementById('slider');
const counter = document.getElementById('frame-counter');
const playButton = document.getElementById('play');
const graphPane = document.getElementById('graph');
const svg = document.getElementById('graph-svg');
let current = 0, timer = null;
function fit() {
  // The whole graph in its pane when that keeps it at least half size (its labels legible);
  // else as wide as the pane, scrolling down to the current node. Never larger than drawn.
  if (!svg) return;
  const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
  const across = Math.min(1, graphPane.clientWidth / w);
  const whole = Math.min(across, graphPane.clientHeight / h);
  const scale = whole >= Math.min(across, 0.5) ? whole : across;
  svg.style.width = (w * scale) + 'px';
  svg.style.height = (h * scale) + 'px';
}
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
window.addEventListener('resize', () => { fit(); show(current); });
fit();
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
<span class="legend"><span style="background:{colours[current]}" title="the node backward is at"
 >current</span><span style="background:{colours[waiting]}" title="has gradient, waits its turn"
 >waiting</span><span style="background:{colours[done]}">done</span><span
 style="color:{colours[active]}" title="edges carrying gradient now">&#8594; gradient</span></span>
</header>
<main><div id="graph">{svg}</div><div id="panel">
{sections}
</div></main>
<script>{script}</script>
</body></html>
"""


# ---- PNG frames, for slides ---------------------------------------------------------------------
def _write_pngs(frames: list, graph: dict, layout: dict, panels: list, folder: Path) -> list:
    """Each frame as the graph at its one layout (its node highlighted, its edges coloured)
    beside a panel of its numbers, drawn where the layout put them; with Pillow, also one
    animated GIF of them all."""
    folder.mkdir(exist_ok=True)  # its parent exists: replay checked before backward ran
    x0, y0, x1, y1 = layout["bb"]
    waiting = _waiting(frames)
    sources = []
    for frame, panel, (width, height) in zip(frames, panels, layout["panels"]):
        nodes = {f.node_id: f' fillcolor="{COLOURS["done"]}"' for f in frames[:frame.index]}
        nodes.update({nid: f' fillcolor="{COLOURS["waiting"]}" color="#e0a030" penwidth=2'
                      for nid in waiting[frame.index]})
        nodes[frame.node_id] = f' fillcolor="{COLOURS["current"]}" penwidth=3'
        edges = {eid: f' color="{COLOURS["active"]}" penwidth=3 fontcolor="{COLOURS["active"]}"'
                 for eid in frame.edge_ids}
        left = x1 + PANEL_GAP  # the panel right of the graph, their tops level
        at = f"{left + width / 2:.2f},{y1 - height / 2:.2f}"
        sources.append(_dot(graph, layout, nodes, edges, (_panel_node(panel, at),),
                            bb=(x0, min(y0, y1 - height), left + width, y1)))
    images = _render_pngs(sources)
    paths = []
    for frame, image in zip(frames, images):
        path = folder / f"frame_{frame.index:03d}.png"
        path.write_bytes(image)
        paths.append(path)
    gif = _write_gif(images, folder / "replay.gif")
    return paths + ([gif] if gif is not None else [])


def _render_pngs(sources: list) -> list:
    """Positioned graphs as PNGs, drawn by a few `dot -Knop2` runs side by side, each over a
    run of them: rasterizing is most of a frame's cost, and each run uses one core."""
    size = math.ceil(len(sources) / max(1, min(len(sources), os.cpu_count() or 1, 4)))
    runs = [sources[k:k + size] for k in range(0, len(sources), size)]
    draw = lambda run: _split_pngs(_run_dot("\n".join(run), "png", positioned=True))
    with ThreadPoolExecutor(max(1, len(runs))) as pool:  # each thread waits on its own `dot`
        images = [image for drawn in pool.map(draw, runs) for image in drawn]
    if len(images) != len(sources):
        raise RuntimeError(f"replay: Graphviz's dot drew {len(images)} frames of {len(sources)}")
    return images


def _panel_node(panel: str, at: str | None = None) -> str:
    """A frame's panel as a DOT node (measured by ``_layout``, then drawn ``at`` a position)."""
    where = f' pos="{at}"' if at else ""
    return f"  panel [shape=plaintext label=<{panel}>{where}]"


def _write_gif(pngs: list, path: Path) -> Path | None:
    """The frames as one animated GIF (None without Pillow). Frames differ in size: each goes on
    a white canvas of the largest. Each is brought to 256 colours by maximum coverage, without
    dithering: it keeps the graph's flat fills exact (a done node's grey stays grey), and is
    much quicker than Pillow's default for a GIF (median cut, quantizing each frame anew)."""
    try:
        from PIL import Image
    except ModuleNotFoundError:
        return None
    if not pngs:
        return None
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in pngs]
    width, height = max(i.width for i in images), max(i.height for i in images)
    frames = []
    for image in images:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(image, (0, 0))
        frames.append(canvas.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE,
                                      dither=Image.Dither.NONE))
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=1500, loop=0)
    return path


def _png_table(array: np.ndarray, show_values: bool, max_elements: int, lit=None) -> str:
    """A Graphviz HTML-like table: the first 2-D slice's numbers, or summarised as on the page
    (``_kind``): a long vector as its first and last entries, statistics and a heat strip,
    a large slice as statistics and a heat-map."""
    [(caption, plane, marks)] = _planes(array, lit, 1)
    head = html.escape(f"{shape_text(array.shape)}{' ' + caption if caption else ''}")
    kind = _kind(plane, show_values, max_elements)
    if kind != "grid":
        summary = "  ".join(f"{name} {number(v, DIGITS)}" for name, v in stats(array))
        rows = [f'<TR><TD BORDER="0">{head}</TD></TR>',
                f'<TR><TD BORDER="0">{SMALL.format(html.escape(summary))}</TD></TR>']
        if kind == "ends":
            cells = ['<TD BORDER="0">…</TD>' if v is None else f"<TD>{number(v, DIGITS)}</TD>"
                     for v in ends(plane[0])]
            rows.append(f'<TR><TD BORDER="0" ALIGN="LEFT"><TABLE BORDER="0" CELLBORDER="1" '
                        f'CELLSPACING="0" CELLPADDING="3"><TR>{"".join(cells)}</TR></TABLE></TD></TR>')
        if kind in ("ends", "heat"):
            rows += _png_heat(plane, marks)
        return f'<TABLE BORDER="0" CELLSPACING="0">{"".join(rows)}</TABLE>'
    rows = [f'<TR><TD COLSPAN="{plane.shape[1]}" BORDER="0">{SMALL.format(head)}</TD></TR>']
    fills = {2: COLOURS["argmax"], 1: COLOURS["tied"]}
    for r, row in enumerate(plane):
        rows.append("<TR>" + "".join(
            f'<TD BGCOLOR="{fills[marks[r, c]]}"><B>{number(v, DIGITS)}</B></TD>'
            if marks is not None and marks[r, c] else f"<TD>{number(v, DIGITS)}</TD>"
            for c, v in enumerate(row)) + "</TR>")
    return f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">{"".join(rows)}</TABLE>'


def _png_heat(plane: np.ndarray, marks) -> list:
    """Table rows: the plane as square cells (every cell up to PNG_HEAT_CELLS a side, else
    blocks averaged; a vector as a strip of taller cells), the cells max pooling pays framed;
    and a caption saying so."""
    small, marks, block = heat_plane(plane, PNG_HEAT_CELLS, marks)
    colours, scale = heat_colours(small)
    size = min(12, max(6, 256 // max(small.shape)))  # points; FIXEDSIZE keeps every cell square
    tall = size if small.shape[0] > 1 else max(size, 10)
    edges = {1: COLOURS["tied_edge"], 2: COLOURS["argmax_edge"]}
    cells = "".join("<TR>" + "".join(
        f'<TD BGCOLOR="{colour}" WIDTH="{size}" HEIGHT="{tall}" FIXEDSIZE="TRUE"'
        + (f' BORDER="1" COLOR="{edges[marks[r, c]]}"' if marks is not None and marks[r, c] else "")
        + "></TD>" for c, colour in enumerate(row)) + "</TR>" for r, row in enumerate(colours))
    note = f"red +{number(scale, DIGITS)}, blue -{number(scale, DIGITS)}"
    if block > 1:
        note += (f"; {block}×{block} blocks averaged" if small.shape[0] > 1 else
                 f"; {block} entries averaged per cell")
    if marks is not None and marks.any():
        note += "; framed: " + ("blocks holding " if block > 1 else "") + "cells max pooling pays"
    # A table is stretched to fill its cell unless its own size is fixed (a wide caption above
    # would pull the squares apart into columns).
    h, w = small.shape[0] * tall, small.shape[1] * size
    return [f'<TR><TD BORDER="0"><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" '
            f'FIXEDSIZE="TRUE" WIDTH="{w}" HEIGHT="{h}">{cells}</TABLE></TD></TR>',
            f'<TR><TD BORDER="0">{SMALL.format(html.escape(note))}</TD></TR>']


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
    written = [] if frame.op is None else arguments(getattr(frame.node, "attrs", None) or {},
                                                    frame.node, DIGITS)
    if written:
        text(", ".join(written))
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
