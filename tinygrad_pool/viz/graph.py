"""Draw the graph the engine recorded, as Graphviz DOT: a layer above the engine.

    from tinygrad_pool import draw_graph, save_graph
    draw_graph(loss, show_values=True)              # a graphviz.Digraph; Jupyter shows it inline
    save_graph(loss, "graph.png", show_saved=True)  # through Graphviz's `dot` program

The walk follows ``tensor.grad_fn.parents`` (each node's input tensors, which carry the values
and names a picture shows; backward() follows the matching ``edges``), with an explicit
queue instead of recursion, so a chain of 100,000 ops draws without a RecursionError.
For group="module", which nn.Module call each op belongs to, how the calls nest, their paths
and which of them fold into one node come from ``viz/modules.py`` (``module_layout``); this
module only draws what that analysis says. How numbers, shapes and attributes are written, and
how a tensor too large to list is summarised, come from ``viz/summary.py`` (shared with
replay and fan_in).

It lives in the ``tinygrad_pool.viz`` package, which is imported lazily: the engine never
imports it, and ``import tinygrad_pool`` imports neither it nor the ``graphviz`` package until
``tinygrad_pool.draw_graph``, ``save_graph`` or ``GraphvizNotFound`` is first used. This module
needs the ``graphviz`` Python package; without it, importing it raises ModuleNotFoundError naming
the install command (``tinygrad_pool.viz.MISSING_PACKAGE``), and ``tinygrad_pool.viz`` then
offers draw_graph/save_graph that raise that same error when called.
"""
from __future__ import annotations

import html
import inspect
import os
import shutil
import textwrap
from collections import Counter, deque
from pathlib import Path

import numpy as np

from .dot import MISSING_PACKAGE, GraphvizNotFound

try:
    import graphviz
except ModuleNotFoundError as error:
    if error.name != "graphviz":
        raise  # graphviz is there but something it needs is not: show that, not our hint
    raise ModuleNotFoundError(MISSING_PACKAGE, name="graphviz") from error

from ..nn.module import Module
from ..args import _shown, check_flag, check_size
from ..engine import Tensor
from .modules import ModuleLayout, module_layout, parameter_paths
from .summary import (PALETTE, SMALL, argument, arguments, as_2d, ends, heat_colours, heat_plane,
                      number, plural, shape_text, summarise, stats as summary_stats)

# What each fill colour means; the legend is drawn from this table, and tests read it too.
STYLE = {
    "parameter": PALETTE["parameter"],  # leaf that requires grad: what the optimiser updates
    "constant": PALETTE["constant"],    # leaf without grad: input image, target, literal numbers
    "intermediate": "#ffffff",  # computed by an op
    "output": "#ffd083",        # the tensor draw_graph was called on
    "op": PALETTE["op"],        # an op's Node
    "saved": "#fbe3cc",         # what an op saved for backward
    "argmax": PALETTE["argmax"],  # the article's "blue circles": each pooling window's max
    "argmax_border": PALETTE["argmax_edge"],
    "tie": PALETTE["tied"],     # another cell equal to its window's max
    "elided": "#f5f5f5",
    "module": "#c9daf8",        # a folded module call: one node for all its ops
    "module_border": "#3c5a99",
    "cluster": "#eef2fa",       # the box around an nn.Module call's ops
    "anomaly": "#ff9c9c",       # NaN/inf: where it first appeared, or where backward found it
    "anomaly_border": "#c00000",
}
# Clusters nested one in another alternate between these fills, so the nesting shows.
CLUSTER_FILLS = (STYLE["cluster"], "#f8f9fd")


class GraphDigraph(graphviz.Digraph):
    """A graphviz.Digraph whose rendering fails with GraphvizNotFound, saying how to install it."""

    def _check(self):
        if shutil.which(self.engine) is None:
            raise GraphvizNotFound(self.engine)

    def pipe(self, *args, **kwargs):
        self._check()
        try:
            return super().pipe(*args, **kwargs)
        except graphviz.ExecutableNotFound as error:
            raise GraphvizNotFound(self.engine) from error

    def render(self, *args, **kwargs):
        self._check()
        try:
            return super().render(*args, **kwargs)
        except graphviz.ExecutableNotFound as error:
            raise GraphvizNotFound(self.engine) from error

    def _repr_mimebundle_(self, *args, **kwargs):
        # In Jupyter, print the installation hint instead of a traceback from deep in graphviz.
        try:
            return super()._repr_mimebundle_(*args, **kwargs)
        except GraphvizNotFound as error:
            return {"text/plain": str(error)}


def save_graph(tensor: Tensor, path, **kwargs) -> Path:
    """Draw ``tensor``'s graph and write it through `dot`; the format comes from the suffix
    (.png, .svg, .pdf, ...; no suffix means .png). Returns the path written."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"save_graph: path must be a str or a path, got {type(path).__name__}")
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".png")
    fmt = path.suffix[1:].lower()
    if fmt not in graphviz.FORMATS:
        raise ValueError(f"save_graph: cannot render to {path.suffix!r}; use a Graphviz output "
                         f"format such as .png, .svg or .pdf")
    # draw_graph's options, checked here too, so that a bad one names save_graph
    try:
        options = inspect.signature(draw_graph).bind(tensor, **kwargs)
    except TypeError as error:
        raise TypeError(f"save_graph: {error} (its options are draw_graph's)") from None
    options.apply_defaults()
    _check_arguments("save_graph", **options.arguments)
    path.write_bytes(draw_graph(tensor, **kwargs).pipe(format=fmt))
    return path


def draw_graph(tensor: Tensor, *, show_values: bool = False, show_saved: bool = False,
               max_depth: int | None = None, collapse=8, group: str | None = None,
               depth: int | None = None, model=None, stats: bool = False,
               anomalies: bool = False, rankdir: str = "TB", precision: int | str = 3,
               max_elements: int = 64, edge_labels: bool = False,
               legend: bool = True) -> GraphDigraph:
    """The graph that produced ``tensor``, data flowing from inputs through ops to it.

    show_values   values and ``.grad``: small ones number by number (argmax cells of max pooling
                  in blue), larger ones summarised (viz/summary.py: a vector by its ends, a
                  plane by min/mean/max and a heat-map; of a batch, its first slice)
    show_saved    what each op saved for backward, with its size in bytes
    max_depth     draw only the last ``max_depth`` ops before ``tensor``; one node stands for the rest
    collapse      an int: chains of at least this many identical ops become one node ("Mul ×37");
                  None or 0 turns it off. A module path or a tuple/list of them (needs
                  group="module"): each call of those modules becomes one node
                  ("features.0 · Conv2d · 3 ops"); chains are then folded from 8 ops on
    group         None, or "module": each nn.Module call is a cluster labelled with its path
                  (``features.0``), nested as the modules are. (In every picture, parameters of
                  the modules called are titled by their path, ``features.0.weight``, unless
                  they have a ``name``: then the path is under it.)
    depth         (group="module") module calls more than ``depth`` levels below the model
                  fold into their ancestor at that level: depth=1 draws each child of the
                  model as one node
    model         (group="module") the Module whose attribute names make the paths; by
                  default the outermost recorded modules, each labelled by its class name
    stats         min/mean/max of each tensor's value and the norm of its ``.grad``
    anomalies     red: the first op (in forward order) whose output has NaN/inf while its inputs
                  do not, and every op where anomaly mode's backward found a non-finite value
    rankdir       "TB" (inputs on top), "BT", "LR" or "RL"
    precision     significant digits (int) or a format spec such as ".2f" for numbers
    max_elements  a 2-D slice with more entries than this (or with rows or columns longer than
                  summary.limits(max_elements): 8 and 16 by default) is summarised, not listed
    edge_labels   write each tensor's shape on its edges
    legend        add a small cluster explaining the styles
    """
    chain_length, paths = _check_arguments(
        "draw_graph", tensor=tensor, show_values=show_values, show_saved=show_saved,
        max_depth=max_depth, collapse=collapse, group=group, depth=depth, model=model, stats=stats,
        anomalies=anomalies, rankdir=rankdir, precision=precision, max_elements=max_elements,
        edge_labels=edge_labels, legend=legend)
    walk = _walk(tensor, max_depth)
    ops, uses = walk["ops"], walk["uses"]
    # Parameters of the nn.Modules called are titled by their path (conv1.weight) in every
    # picture; finding the calls needs the forward order, as grouping and anomalies do.
    noted = any((fn.origin or {}).get("modules") for fn, _ in ops.values())
    order = _forward_order(ops) if group or anomalies or noted else []
    layout = module_layout(walk, order, model, paths, depth) if group else ModuleLayout()
    param_names = layout.param_names if group else parameter_paths(walk, order) if noted else {}
    groups, hidden, inside = (_chains(ops, uses, chain_length, layout.owner) if chain_length
                              else ({}, set(), set()))
    fmt = precision  # (summary.number's argument: significant digits or a format spec)
    marks = _all_pool_marks(ops.values()) if show_values else {}
    warnings = _anomalies(ops, order) if anomalies else {}

    # Each op node with the inputs it gets edges from. Unnamed constants feeding a collapsed
    # chain (the 1.0001 of y * 1.0001, 100,000 times) are counted in its label, not drawn.
    op_nodes, folded = [], set()
    for key, (fn, out) in ops.items():
        if key in inside or key in layout.folded_into:
            continue  # drawn as part of its chain's head, or inside a folded module's node
        if key not in groups:
            op_nodes.append(([(fn, out)], fn.parents, 0))
            continue
        inputs, n_folded = {}, 0
        for f, _ in groups[key]:
            for p in f.parents:
                if id(p) in hidden:
                    continue
                if p.grad_fn is None and not p.requires_grad and p.name is None and uses[id(p)] == 1:
                    folded.add(id(p))
                    n_folded += 1
                else:  # one edge per input, however often the chain uses it
                    inputs.setdefault(id(p), p)
        op_nodes.append((groups[key], list(inputs.values()), n_folded))

    dot = GraphDigraph(name="tinygrad_pool", graph_attr=dict(
        rankdir=rankdir, nodesep="0.3", ranksep="0.25", fontname="Helvetica"),
        node_attr=dict(fontname="Helvetica", fontsize="11", margin="0.08,0.02"),
        edge_attr=dict(fontname="Helvetica", fontsize="9", color="#555555"))
    body = _Body(dot)
    names = {}  # id(tensor) -> DOT node name
    for t in walk["tensors"].values():
        if id(t) in hidden or id(t) in folded or id(t) in layout.hidden:
            continue
        kind = ("output" if t is tensor else "intermediate" if t.grad_fn is not None
                else "parameter" if t.requires_grad else "constant")
        label = _tensor_label(t, kind, show_values, fmt, max_elements, marks.get(id(t)),
                              path=param_names.get(id(t)),
                              stats=_stats_lines(t, fmt) if stats else None)
        names[id(t)] = name = f"t{len(names)}"
        body.node(layout.cluster_of(t), name, f"<{label}>", shape="box", style="rounded,filled",
                  fillcolor=STYLE[kind], penwidth="2" if kind == "output" else "1")

    for k, call in enumerate(layout.folds):
        _draw_fold(body, call, ops, names, warnings, edge_labels, k)
    for k, (run, inputs, n_folded) in enumerate(op_nodes):
        op = f"op{k}"
        head = id(run[0][0])
        warning = "; ".join(warnings[id(fn)] for fn, _ in run if id(fn) in warnings)
        body.node(layout.owner.get(head), op, f"<{_op_label(run, show_saved, n_folded, warning)}>",
                  shape="box", **_op_style(warning))
        for p in inputs:
            body.edge(names[id(p)], op, label=shape_text(p.shape) if edge_labels else None,
                      **_path_weight(p))
        out = run[0][1]
        body.edge(op, names[id(out)], label=shape_text(out.shape) if edge_labels else None,
                  weight=PATH_WEIGHT)

    if walk["frontier"]:
        more = walk["elided"]
        body.node(None, "elided", f"… {plural(more, 'more op')}", shape="box",
                  style="dashed,filled", fillcolor=STYLE["elided"], color="#888888")
        for t in walk["frontier"]:
            body.edge("elided", names[id(t)], style="dashed")
    body.finish()
    if legend:
        _legend(dot, show_values, show_saved, clusters=bool(body.clusters),
                folds=bool(layout.folds), anomalies=anomalies)
    return dot


# The edges of the data path (computed tensors into ops, ops to their outputs) pull harder
# than those from parameters and inputs: `dot` keeps that path straight and sets the leaves
# beside it, where otherwise each layer's weights would push the rest of the picture sideways.
PATH_WEIGHT = "4"


def _path_weight(t: Tensor) -> dict:
    return {"weight": PATH_WEIGHT} if t.grad_fn is not None else {}


def _check_arguments(op, *, tensor, show_values, show_saved, max_depth, collapse, group, depth,
                     model, stats, anomalies, rankdir, precision, max_elements, edge_labels,
                     legend):
    """Every argument of draw_graph checked before anything is drawn (``op``: the function the
    user called, named in the errors); returns (chain length, module paths)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    for name, value in (("show_values", show_values), ("show_saved", show_saved),
                        ("stats", stats), ("anomalies", anomalies),
                        ("edge_labels", edge_labels), ("legend", legend)):
        check_flag(op, name, value)
    if not isinstance(rankdir, str):
        raise TypeError(f"{op}: rankdir must be a str, 'TB', 'BT', 'LR' or 'RL', got "
                        f"{_shown(rankdir)}")
    if rankdir not in ("TB", "BT", "LR", "RL"):
        raise ValueError(f"{op}: rankdir must be 'TB', 'BT', 'LR' or 'RL', got {rankdir!r}")
    _check_precision(op, precision)
    check_size(op, "max_elements", max_elements)
    if max_depth is not None:
        check_size(op, "max_depth", max_depth)
    if group is not None and not isinstance(group, str):
        raise TypeError(f"{op}: group must be None or 'module', got {_shown(group)}")
    if group not in (None, "module"):
        raise ValueError(f"{op}: group must be None or 'module', got {group!r}")
    chain_length, paths = 8, ()
    if collapse is None or isinstance(collapse, (int, np.integer)) and not isinstance(
            collapse, (bool, np.bool_)):
        chain_length = collapse
        if collapse is not None and collapse < 0:
            raise ValueError(f"{op}: collapse must be >= 0 (the shortest chain of "
                             f"identical ops to fold), got {collapse}")
    elif isinstance(collapse, (str, tuple, list)):
        paths = (collapse,) if isinstance(collapse, str) else tuple(collapse)
        for path in paths:
            if not isinstance(path, str):
                raise TypeError(f"{op}: collapse must list module paths (str), got "
                                f"{_shown(path)} in {collapse!r}")
            if not path:
                raise ValueError(f"{op}: collapse: a module path cannot be empty")
    else:
        raise TypeError(f"{op}: collapse must be an int (the shortest chain of identical "
                        f"ops to fold), a module path or a tuple/list of them, or None, got "
                        f"{_shown(collapse)}")
    if depth is not None:
        check_size(op, "depth", depth)
    if model is not None and not isinstance(model, Module):
        raise TypeError(f"{op}: model must be an nn.Module or None, got {_shown(model)}")
    if group is None:
        for name, value in (("collapse", paths or None), ("depth", depth), ("model", model)):
            if value is not None:
                raise ValueError(f"{op}: {name}={value!r} works on module calls: pass "
                                 f"group='module' too")
    return chain_length, paths


def _check_precision(op: str, precision) -> None:
    """An int (significant digits, 0 or more) or a format spec that formats a float as a number
    (".2f", ".3e"; not ",.2f" or ".1%", whose text number() cannot read back)."""
    expected = ("a non-negative int (significant digits) or a format spec for floats such as "
                "'.2f' or '.3e'")
    if isinstance(precision, (int, np.integer)) and not isinstance(precision, (bool, np.bool_)):
        if precision < 0:
            raise ValueError(f"{op}: precision must be {expected}, got {precision}")
        return
    if not isinstance(precision, str):
        raise TypeError(f"{op}: precision must be {expected}, got {_shown(precision)}")
    try:
        float(format(-1234.5678, precision))
    except ValueError:
        raise ValueError(f"{op}: precision must be {expected}, got {precision!r}") from None


class _Body:
    """The DOT statements, each node in its module call's cluster (None: the top level).

    Without clusters the statements go out in the order they were made, as they always have;
    with them, the clusters (nested, innermost filled first) come before the edges, so that a
    node's first mention is inside its cluster.
    """

    def __init__(self, dot: graphviz.Digraph):
        self.dot, self.clusters, self.edges = dot, {}, []

    def node(self, cluster, name: str, label: str, **attrs) -> None:
        if cluster is None:
            self.dot.node(name, label, **attrs)
            return
        self.clusters.setdefault(cluster, []).append((name, label, attrs))
        while cluster.parent is not None and cluster.parent not in self.clusters:
            cluster = cluster.parent
            self.clusters[cluster] = []

    def edge(self, tail: str, head: str, **attrs) -> None:
        if self.clusters:
            self.edges.append((tail, head, attrs))
        else:
            self.dot.edge(tail, head, **attrs)

    def finish(self) -> None:
        graphs = {}
        for call in sorted(self.clusters, key=lambda c: c.seq):
            graph = graphs[call] = graphviz.Digraph(name=f"cluster_{call.seq}")
            graph.attr(label=call.title, style="rounded,filled", color="#8796bd",
                       fillcolor=CLUSTER_FILLS[call.depth % len(CLUSTER_FILLS)],
                       fontsize="10", fontcolor="#2f3b5c", labeljust="l", penwidth="1")
            for name, label, attrs in self.clusters[call]:
                graph.node(name, label, **attrs)
        for call in sorted(graphs, key=lambda c: (-c.depth, c.seq)):  # children into parents
            (self.dot if call.parent is None else graphs[call.parent]).subgraph(graphs[call])
        for tail, head, attrs in self.edges:
            self.dot.edge(tail, head, **attrs)


def _op_style(warning: str) -> dict:
    if warning:
        return dict(style="filled", fillcolor=STYLE["anomaly"], color=STYLE["anomaly_border"],
                    penwidth="2", tooltip=warning)
    return dict(style="filled", fillcolor=STYLE["op"], color="#6a5aa8")


def _draw_fold(body: _Body, call, ops: dict, names: dict, warnings: dict, edge_labels: bool,
               number: int):
    """One node for a folded module call: edges from the tensors entering it, to the ones
    leaving it."""
    name = f"module{number}"
    inside = [ops[key] for key in call.ops]
    warning = "; ".join(f"{fn.name}: {warnings[id(fn)]}" for fn, _ in inside if id(fn) in warnings)
    kind = f"{call.kind} · {plural(len(call.ops), 'op')}"
    rows = [f"<TR><TD><B>{html.escape(call.label)}</B></TD></TR>",
            f"<TR><TD>{SMALL.format(html.escape(kind))}</TD></TR>"] + _warning_rows(warning)
    attrs = (_op_style(warning) if warning else
             dict(style="filled", fillcolor=STYLE["module"], color=STYLE["module_border"]))
    body.node(call.parent, name, f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" '
              f'CELLPADDING="1">{"".join(rows)}</TABLE>>', shape="box3d", **attrs)
    entering, leaving = {}, {}
    for fn, out in inside:
        for p in fn.parents:
            if id(p) in names and id(p.grad_fn) not in call.ops:
                entering.setdefault(id(p), p)
        if id(out) in names:
            leaving.setdefault(id(out), out)
    for p in entering.values():
        body.edge(names[id(p)], name, label=shape_text(p.shape) if edge_labels else None)
    for out in leaving.values():
        body.edge(name, names[id(out)], label=shape_text(out.shape) if edge_labels else None)
    return name


# ---- the walk --------------------------------------------------------------------------------
def _walk(root: Tensor, max_depth: int | None) -> dict:
    """Breadth-first from the output, so each op is reached at its distance (in ops) from it.

    Returns the tensors and ops to draw, how many drawn ops use each tensor (and which: the
    ops' keys), the tensors whose producing op lies beyond max_depth (the frontier) and how many
    ops are elided behind it.
    """
    tensors, ops, uses, users, frontier = {id(root): root}, {}, Counter(), {}, []
    queue = deque([(root, 0)])
    while queue:
        t, depth = queue.popleft()
        fn = t.grad_fn
        if fn is None or id(fn) in ops:
            continue
        if max_depth is not None and depth >= max_depth:
            frontier.append(t)
            continue
        ops[id(fn)] = (fn, t)  # an op does not know its output; remember the tensor that led here
        for p in fn.parents:
            uses[id(p)] += 1
            users.setdefault(id(p), []).append(id(fn))
            if id(p) not in tensors:
                tensors[id(p)] = p
                queue.append((p, depth + 1))
    # Count what max_depth hides (cheap: no labels), so the picture says how much is missing.
    stack, seen_ops, elided = [t.grad_fn for t in frontier], set(ops), 0
    while stack:
        fn = stack.pop()
        if id(fn) in seen_ops:
            continue
        seen_ops.add(id(fn))
        elided += 1
        stack.extend(p.grad_fn for p in fn.parents if p.grad_fn is not None)
    return dict(root=root, tensors=tensors, ops=ops, uses=uses, users=users, frontier=frontier,
                elided=elided)


def _chains(ops: dict, uses: Counter, min_length: int, owner: dict):
    """Runs of identical ops (same name, same attributes), each feeding only the next.

    Returns {id(head op): [(op, output), ...] from the output backwards} for runs of at least
    ``min_length`` ops, the ids of the tensors inside them and of their ops other than the head
    (neither is drawn). A tensor with a name or retain_grad() stays visible: it ends a run, and
    so does the edge of a module call (``owner``: id(op) -> its innermost call, when grouped).
    """
    previous = {}  # id(op) -> the identical op whose output is its input
    for key, (fn, _) in ops.items():
        for p in fn.parents:
            g = p.grad_fn
            if (g is not None and g.name == fn.name and id(g) in ops and uses[id(p)] == 1
                    and p.name is None and not p.retains_grad
                    and arguments(g.attrs, g) == arguments(fn.attrs, fn)
                    and owner.get(id(g)) is owner.get(key)):
                previous[key] = id(g)
                break
    not_heads = set(previous.values())
    groups, hidden, inside = {}, set(), set()
    for key in previous:
        if key in not_heads:
            continue
        run, j = [ops[key]], key
        while j in previous:
            j = previous[j]
            run.append(ops[j])
        if len(run) >= min_length:
            groups[key] = run
            hidden.update(id(out) for _, out in run[1:])
            inside.update(id(fn) for fn, _ in run[1:])
    return groups, hidden, inside


def _forward_order(ops: dict) -> list:
    """The drawn ops' keys, each after every drawn op it was computed from (the order forward
    ran them in, up to independent branches): an iterative depth-first search, as the
    engine's, over ``parents`` (the walk's links) rather than ``edges``. A tensor written in
    place through a view is the parent of ops that ran before the write, whose node it now
    points to: such a loop is cut where it closes, so the search always ends."""
    order, emitted, entered, stack = [], set(), set(), list(ops)[:1]
    while stack:
        key = stack[-1]
        if key in emitted:
            stack.pop()
            continue
        entered.add(key)
        pending = [id(p.grad_fn) for p in ops[key][0].parents
                   if id(p.grad_fn) in ops and id(p.grad_fn) not in emitted
                   and id(p.grad_fn) not in entered]
        if pending:
            stack.extend(reversed(pending))
        else:
            stack.pop()
            emitted.add(key)
            order.append(key)
    return order


# ---- NaN and inf ------------------------------------------------------------------------------
def _anomalies(ops: dict, order: list) -> dict:
    """{id(op): why it is red}: the first op in forward order whose output has NaN/inf while
    none of its inputs has (computed from the values alone, anomaly mode or not), and every op
    where anomaly mode's backward noted a non-finite gradient (``origin["anomaly"]``)."""
    found, finite = {}, {}

    def is_finite(t: Tensor) -> bool:
        if id(t) not in finite:
            finite[id(t)] = t._data.dtype.kind not in "fc" or bool(np.isfinite(t._data).all())
        return finite[id(t)]

    for key in order:
        fn, out = ops[key]
        if not is_finite(out) and all(is_finite(p) for p in fn.parents):
            nan, inf = int(np.isnan(out._data).sum()), int(np.isinf(out._data).sum())
            what = " and ".join(f"{n:,} {kind}" for n, kind in ((nan, "nan"), (inf, "inf")) if n)
            found[key] = (f"first op to produce NaN/inf: {what} of {out._data.size:,} output "
                          f"values, from finite inputs")
            break
    for key, (fn, _) in ops.items():
        message = (fn.origin or {}).get("anomaly")
        if message:
            found[key] = f"{found[key]}; {message}" if key in found else str(message)
    return found


def _warning_rows(warning: str) -> list:
    """The reason an op is red, every word of it: each line of the message wrapped (a long
    path or number is broken rather than cut), none left out."""
    if not warning:
        return []
    lines = [piece for paragraph in warning.split("\n")  # (a source line's runs of spaces: one)
             for piece in textwrap.wrap(" ".join(paragraph.split()), WARNING_WIDTH)]
    return [f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9" COLOR="{STYLE["anomaly_border"]}">'
            f'{html.escape(line)}</FONT></TD></TR>' for line in lines]


# ---- labels (Graphviz HTML-like labels: every piece of text goes through html.escape) ------
WARNING_WIDTH = 56  # characters per line of an anomaly's reason in its red node
ATTR_WIDTH = 44     # characters per line of an op's attributes
HEAT_CELLS = 24     # a heat-map is drawn cell by cell up to this many cells a side, else
#                     averaged in blocks (each cell is a table cell of the label: few, small)
HEAT_POINTS = 60    # ... and is at most about this many points a side (3-point cells at least)


def _lines(items: tuple, width: int = ATTR_WIDTH) -> list:
    """Items joined by ", " into lines of at most ``width`` characters (an item longer than
    that on a line of its own), so an op with six attributes is three lines, not six."""
    lines = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return lines


def _op_label(run: list, show_saved: bool, constants: int, warning: str = "") -> str:
    fn = run[0][0]
    title = fn.name if len(run) == 1 else f"{fn.name} ×{len(run):,}"
    rows = [f"<TR><TD><B>{html.escape(title)}</B></TD></TR>"]
    rows += [f'<TR><TD ALIGN="LEFT">{html.escape(line)}</TD></TR>'
             for line in _lines(arguments(fn.attrs, fn))]
    if constants:
        rows.append(f"<TR><TD>{SMALL.format('+ ' + plural(constants, 'constant input'))}</TD></TR>")
    rows += _warning_rows(warning)
    if show_saved:
        rows += _saved_rows(run)
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{"".join(rows)}</TABLE>'


def _saved_rows(run: list) -> list:
    """What forward saved for backward (ndarray sizes in bytes), or that backward freed it."""
    cell = lambda colour, text: (f'<TR><TD ALIGN="LEFT" BGCOLOR="{colour}" CELLPADDING="0">'
                                 f'{SMALL.format(text)}</TD></TR>')
    head = cell(STYLE["saved"], "<I>saved for backward</I>")
    if all(fn.released for fn, _ in run):
        return [head, cell(STYLE["saved"], "(freed by backward)")]
    if len(run) > 1:  # a chain: one total, not 100,000 rows
        arrays = [v for fn, _ in run for v in fn.saved_for_backward().values()
                  if isinstance(v, np.ndarray)]
        total = sum(a.nbytes for a in arrays)
        return [head, cell(STYLE["saved"], html.escape(f"{plural(len(arrays), 'array')}, {total:,} B"))]
    fn = run[0][0]
    rows = [head]
    for name, value in fn.saved_for_backward().items():
        if isinstance(value, np.ndarray):
            size = f"{value.dtype}, {value.nbytes:,} B"
            # (a 0-d array, such as nll_loss's total_weight, is a number: its value first)
            text = (f"{name}: {argument(name, value)} (scalar {size})" if value.ndim == 0
                    else f"{name}: {shape_text(value.shape)} {size}")
            # Many ops save their input itself (a reference, not a copy): say so.
            same = [p.name or f"input {k}" for k, p in enumerate(fn.parents)
                    if value is p._data or np.may_share_memory(value, p._data)]
            if same:
                text += f" (= {same[0]}, no copy)"
        else:  # a number, a shape, a flag: as a learner reads it
            text = f"{name}: {argument(name, value, fn)}"
        rows.append(cell(STYLE["saved"], html.escape(text)))
    if len(rows) == 1:
        rows.append(cell(STYLE["saved"], "(nothing)"))
    return rows


# A large intermediate's value that is gone: only the graph held it, and backward did not need it
# (or no longer does), so it was freed as PyTorch frees it (tensor.ReleasedValue). The node
# keeps its shape, dtype and name, not its numbers.
FREED_VALUE = "value freed: only the graph held it (keep a reference to show it)"


def _value_freed(t) -> bool:
    return getattr(t, "value_freed", False)


def _title(t: Tensor, kind: str, path: str | None) -> tuple:
    """(title, subtitle) of a tensor's node: its module path (``conv1.weight``) when it belongs
    to a module that was called, with its own name beneath if it has another; else its name;
    the tensor drawn by what made it (the outermost module whose output it is, else its op:
    ``NLLLoss``); an unnamed parameter ``parameter``; a literal number its value. (The replay
    titles them in the same order.)"""
    if path:
        return path, (t.name if t.name and t.name != path else None)
    if t.name:
        return t.name, None
    if kind == "output" and t.grad_fn is not None:
        modules = (t.grad_fn.origin or {}).get("modules") or ()
        return (type(modules[-1][0]).__name__ if modules else str(t.grad_fn.name)), None
    if kind == "parameter" or kind == "output" and t.requires_grad:
        return "parameter", None
    if kind == "constant" and t._data.size == 1:
        # A literal number: shown in full (a 1.0001 rounded to "1" would mislead).
        return number(t._data.item(), ".6g"), None
    return "", None


def _tensor_label(t: Tensor, kind: str, show_values: bool, fmt, max_elements: int, marks,
                  path: str | None = None, stats: list | None = None) -> str:
    title, subtitle = _title(t, kind, path)
    rows = [f"<TR><TD COLSPAN=\"2\"><B>{html.escape(title)}</B></TD></TR>"] if title else []
    if subtitle:
        rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(subtitle))}</TD></TR>')
    what = f"{shape_text(t.shape)} {t.dtype}"
    rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(what))}</TD></TR>')
    rows += [f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(line))}</TD></TR>' for line in stats or ()]
    if show_values and _value_freed(t):
        if not stats:  # (the stats line already says so)
            rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(FREED_VALUE)}</TD></TR>')
    elif show_values:
        chosen, tied, note = marks if marks else (None, None, None)
        parts = [("value", t._data)] + ([("grad", t.grad._data)] if t.grad is not None else [])
        plan = summarise(t.shape, max_elements)
        wide = _wide(t.shape, plan)
        if (wide and chosen is None and len(plan.slices) == 1
                and as_2d(t._data[plan.slices[0][1]]).shape[0] == 1):
            # a vector: its value and gradient as two rows of one table, entries aligned (a
            # pooled one keeps the matrix layout, which frames its argmax cells)
            rows.append(f'<TR><TD COLSPAN="2">{_vector(parts, plan, fmt)}</TD></TR>')
        else:
            blocks = [_matrices(caption, a, fmt, plan, chosen, tied) for caption, a in parts]
            if wide:  # a wide matrix: its gradient under it, not beside
                rows += [f'<TR><TD COLSPAN="2">{b}</TD></TR>' for b in blocks]
            else:
                rows.append("<TR>" + "".join(f'<TD VALIGN="TOP">{b}</TD>' for b in blocks) + "</TR>")
        if note and plan.kind == "grid":  # (a heat-map says what its frames are itself)
            rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(note))}</TD></TR>')
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1">{"".join(rows)}</TABLE>'


def _wide(shape: tuple, plan) -> bool:
    """Whether a tensor's numbers are listed in rows wider than tall (a vector is one row):
    drawn side by side, its value and gradient would make the picture twice as wide as they
    are. (A heat-map is small either way: side by side.) ``plan``: summarise's for shape."""
    rows, columns = (1, shape[-1]) if len(shape) == 1 else shape[-2:] if shape else (1, 1)
    return columns > rows and plan.kind != "heat"


def _stats_lines(t: Tensor, fmt) -> list:
    """stats=True: the value's min, mean and max, and the gradient's 2-norm (summary.stats)."""
    if _value_freed(t):
        return [FREED_VALUE]
    found = summary_stats(t._data)
    lines = [" · ".join(f"{what} {number(v, fmt)}" for what, v in found[:3]) if found else "empty"]
    if t.grad is not None:
        lines.append(f"‖grad‖ {number(dict(summary_stats(t.grad._data)).get('norm', 0.0), fmt)}")
    return lines


def _matrices(caption: str, array: np.ndarray, fmt, plan, chosen, tied) -> str:
    """A tensor's value (or grad, of the same shape) as ``plan``, summarise's for that shape,
    says: each small 2-D slice a grid of numbers (cells of the ``chosen`` argmax and ``tied``
    masks highlighted); a long vector by its first and last entries; anything larger as its
    statistics and a heat-map."""
    tables = []
    if plan.kind == "empty":
        tables.append(SMALL.format(html.escape(f"{caption}: empty")))
    # Of a large tensor only the first slice is drawn: its caption says so ("first of 384");
    # a small one lists its slices, and counts any past MAX_SLICES under them.
    first_of = f" (first of {plan.more + 1:,})" if len(plan.slices) == 1 and plan.more else ""
    for label, index in plan.slices:
        values = as_2d(array[index])
        name = (f"{caption} {label}" if label else caption) + first_of
        head = SMALL.format(html.escape(name))
        marked = None
        if chosen is not None:
            marked = as_2d(2 * chosen[index].astype(np.int8) + (tied[index] & ~chosen[index]))
        if plan.kind == "grid":
            tables.append(_grid(head, values, fmt, marked))
        elif plan.kind == "ends":
            tables.append(_ends(head, values, fmt))
        else:  # the whole tensor's statistics beside its first slice's heat-map
            stats = " · ".join(f"{what} {number(v, fmt)}" for what, v in summary_stats(array)[:3])
            tables.append(_heat(name, values, fmt, stats))
    if plan.more and not first_of:
        tables.append(SMALL.format(f"… {plural(plan.more, 'more slice')}"))
    return '<TABLE BORDER="0" CELLSPACING="2">' + "".join(
        f"<TR><TD>{t}</TD></TR>" for t in tables) + "</TABLE>"


def _texts(values: np.ndarray, fmt) -> list:
    return [[number(v, fmt) for v in row] for row in values]


def _grid(head: str, values: np.ndarray, fmt, marked) -> str:
    """Every number of a small slice, in a grid; argmax cells blue and bold, ties light blue."""
    texts = _texts(values, fmt)
    # Equal column widths (in points, about 6.5 per character) so the grid reads as a matrix.
    width = 7 * max(len(t) for row in texts for t in row) + 6
    rows = [f'<TR><TD COLSPAN="{values.shape[1]}" BORDER="0">{head}</TD></TR>']
    for r, row in enumerate(texts):
        cells = []
        for c, text in enumerate(row):
            text = html.escape(text)
            mark = marked[r, c] if marked is not None else 0
            if mark == 2:
                cells.append(f'<TD WIDTH="{width}" BGCOLOR="{STYLE["argmax"]}" BORDER="2" '
                             f'COLOR="{STYLE["argmax_border"]}"><B>{text}</B></TD>')
            elif mark == 1:
                cells.append(f'<TD WIDTH="{width}" BGCOLOR="{STYLE["tie"]}">{text}</TD>')
            else:
                cells.append(f'<TD WIDTH="{width}">{text}</TD>')
        rows.append("<TR>" + "".join(cells) + "</TR>")
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" '
            f'COLOR="#aaaaaa">{"".join(rows)}</TABLE>')


GAP = ' BORDER="0"'  # the cell of "…": no box around what is not there


def _ends(head: str, values: np.ndarray, fmt) -> str:
    """A vector too long to list: its first and last entries, "…" (a row) or "⋮" (a column)
    where the rest are left out."""
    column = values.shape[1] == 1 and values.shape[0] > 1
    flat = values.reshape(-1)
    shown = ends(range(flat.size))
    texts = ["…" if i is None and not column else "⋮" if i is None else
             number(flat[i], fmt) for i in shown]
    width = 7 * max(len(t) for t in texts) + 6
    cells = [f'<TD WIDTH="{width}"{GAP if i is None else ""}>{html.escape(t)}</TD>'
             for i, t in zip(shown, texts)]
    rows = ["".join(cells)] if not column else cells
    span = 1 if column else len(cells)
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="#aaaaaa">'
            f'<TR><TD COLSPAN="{span}" BORDER="0">{head}</TD></TR>'
            + "".join(f"<TR>{r}</TR>" for r in rows) + "</TABLE>")


def _vector(parts: list, plan, fmt) -> str:
    """A row vector's value and gradient as the rows of one table ("value", "grad" at their
    left), every entry listed or, past its limit, its first and last with "…" between."""
    index = plan.slices[0][1]
    label = f" {plan.slices[0][0]}" if plan.slices[0][0] else ""
    if plan.more:
        label += f" (first of {plan.more + 1:,})"
    flats = [a[index].reshape(-1) for _, a in parts]
    shown = range(flats[0].size) if plan.kind == "grid" else ends(range(flats[0].size))
    texts = [["…" if i is None else number(flat[i], fmt) for i in shown] for flat in flats]
    width = 7 * max(len(text) for row in texts for text in row) + 6
    rows = []
    for (caption, _), row in zip(parts, texts):
        cells = "".join(f'<TD WIDTH="{width}"{GAP if i is None else ""}>{html.escape(text)}</TD>'
                        for i, text in zip(shown, row))
        rows.append(f'<TR><TD BORDER="0" ALIGN="RIGHT">{SMALL.format(html.escape(caption + label))}'
                    f'</TD>{cells}</TR>')
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="#aaaaaa">'
            + "".join(rows) + "</TABLE>")


def _heat(head: str, values: np.ndarray, fmt, stats: str) -> str:
    """A slice too large to list, as a heat-map: square cells, white 0, red positive, blue
    negative (scaled to the slice's largest |value|), averaged in square blocks past
    HEAT_CELLS a side. Beside it its caption ``head``, ``stats`` (the whole tensor's min, mean,
    max) and the colour scale. (Max pooling's argmax is marked where numbers are listed; in a
    strip this small, frames would hide the colours they frame.)"""
    small, _, block = heat_plane(values, HEAT_CELLS)
    colours, scale = heat_colours(small)
    size = max(3, min(8, HEAT_POINTS // max(small.shape)))  # points; FIXEDSIZE keeps cells square
    cells = "".join("<TR>" + "".join(
        f'<TD BGCOLOR="{colour}" WIDTH="{size}" HEIGHT="{size}" FIXEDSIZE="TRUE"></TD>'
        for colour in row) + "</TR>" for row in colours)
    scale_text = number(scale, fmt)
    if float(scale_text.replace(",", "")) == 0 and scale:  # (".2f" of 1e-9: its 3 digits instead)
        scale_text = number(scale, 3)
    note = (f"red +{scale_text}, blue -{scale_text}" if scale else
            "every finite value 0 (white)" if np.isfinite(small).any() else "no finite value")
    if np.isnan(small).any():
        note += "; black: nan"
    if block > 1:
        note += f", {block}×{block} blocks averaged"
    h, w = (n * size for n in small.shape)
    # A table is stretched to fill its cell unless its own size is fixed (the words beside it
    # would pull the squares apart).
    heat = (f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" FIXEDSIZE="TRUE" '
            f'WIDTH="{w}" HEIGHT="{h}">{cells}</TABLE>')
    # the caption and the words beside the squares, not above and under them: a long graph is
    # made of such nodes
    text = "".join(f'{html.escape(line)}<BR ALIGN="LEFT"/>' for line in (head, *stats.split(" · "), note))
    return (f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD VALIGN="TOP">{heat}</TD>'
            f'<TD VALIGN="TOP" ALIGN="LEFT">{SMALL.format(text)}</TD></TR></TABLE>')


# ---- max pooling's "blue circles" -----------------------------------------------------------
def _all_pool_marks(ops) -> dict:
    """{id(input tensor): (chosen mask, tied mask, note)} for every MaxPool2d drawn."""
    marks = {}
    for fn, _ in ops:
        if not hasattr(fn, "paid_cells"):  # (max pooling says which cells it pays)
            continue
        x = fn.parents[0]
        if _value_freed(x):  # nothing to mark the choices on
            continue
        chosen, tied, recomputed = _pool_marks(fn)
        if id(x) in marks:  # pooled twice: show both poolings' choices
            chosen, tied = chosen | marks[id(x)][0], tied | marks[id(x)][1]
        tied &= ~chosen
        how = "recomputed: backward freed the saved one" if recomputed else f"as saved by {fn.name}"
        ties = "; light blue = tied max" if tied.any() else ""
        marks[id(x)] = (chosen, tied, f"blue = window max (argmax, {how}){ties}")
    return marks


def _pool_marks(fn):
    """Boolean masks over the pool's (N, C, H, W) input: each window's argmax, and every cell
    equal to the max of a window containing it (the ties that ties="all"/"split" also pay), by
    the op's own rule (its argmax run again where backward freed the saved one)."""
    x = fn.parents[0]._data
    recomputed = fn.argmax is None
    chosen = fn.paid_cells(x, ties="first").mask(x.shape)
    return chosen, fn.paid_cells(x, ties="all").mask(x.shape), recomputed


def _legend(dot: graphviz.Digraph, show_values: bool, show_saved: bool, clusters: bool = False,
            folds: bool = False, anomalies: bool = False) -> None:
    entries = [("parameter", "parameter: leaf, requires grad"),
               ("constant", "input / constant: no grad"),
               ("intermediate", "intermediate (computed)"),
               ("output", "output (the tensor drawn)"),
               ("op", "op (a Node)")]
    if show_saved:
        entries.append(("saved", "saved for backward"))
    if show_values:
        entries += [("argmax", "argmax of a max-pool window: receives its gradient"),
                    ("tie", "tied max: gets gradient only if ties='all'/'split'")]
    if clusters:
        entries.append(("cluster", "box: the ops of one nn.Module call"))
    if folds:
        entries.append(("module", "nn.Module call folded to one node"))
    if anomalies:
        entries.append(("anomaly", "NaN/inf: first op to make one, or backward found one"))
    rows = "".join(f'<TR><TD BGCOLOR="{STYLE[k]}" BORDER="1" WIDTH="18"> </TD>'
                   f'<TD ALIGN="LEFT">{html.escape(text)}</TD></TR>' for k, text in entries)
    with dot.subgraph(name="cluster_legend") as legend:
        legend.attr(label="legend", fontsize="10", style="dashed", color="#999999")
        legend.node("legend", f'<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2">{rows}</TABLE>>',
                    shape="plaintext", fontsize="9")
