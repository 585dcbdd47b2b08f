"""Draw the graph the engine recorded, as Graphviz DOT: a layer above the engine.

    from tinygrad_pool import draw_graph, save_graph
    draw_graph(loss, show_values=True)              # a graphviz.Digraph; Jupyter shows it inline
    save_graph(loss, "graph.png", show_saved=True)  # through Graphviz's `dot` program

The walk follows ``tensor.grad_fn.parents`` (each node's input tensors, which carry the values
and names a picture shows; backward() follows the matching ``edges``), with an explicit
queue instead of recursion, so a chain of 100,000 ops draws without a RecursionError.
For group="module", which nn.Module call each op belongs to, how the calls nest, their paths
and which of them fold into one node come from ``viz/modules.py`` (``module_layout``); this
module only draws what that analysis says.

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

from . import MISSING_PACKAGE, GraphvizNotFound

try:
    import graphviz
except ModuleNotFoundError as error:
    if error.name != "graphviz":
        raise  # graphviz is there but something it needs is not: show that, not our hint
    raise ModuleNotFoundError(MISSING_PACKAGE, name="graphviz") from error

from ..grad_mode import no_grad
from ..nn.module import Module
from ..ops.args import _shown, check_flag, check_size
from ..tensor import Tensor
from .modules import ModuleLayout, module_layout
from .pool_marks import pool_marks

# What each fill colour means; the legend is drawn from this table, and tests read it too.
STYLE = {
    "parameter": "#b9e3a5",     # leaf that requires grad: what the optimiser updates
    "constant": "#e4e4e4",      # leaf without grad: input image, target, literal numbers
    "intermediate": "#ffffff",  # computed by an op
    "output": "#ffd083",        # the tensor draw_graph was called on
    "op": "#ddd5f3",            # a Function node
    "saved": "#fbe3cc",         # what an op saved for backward
    "argmax": "#7fb0ff",        # the article's "blue circles": each pooling window's max
    "argmax_border": "#1747b5",
    "tie": "#d5e5ff",           # another cell equal to its window's max
    "elided": "#f5f5f5",
    "module": "#c9daf8",        # a folded module call: one node for all its ops
    "module_border": "#3c5a99",
    "cluster": "#eef2fa",       # the box around an nn.Module call's ops
    "anomaly": "#ff9c9c",       # NaN/inf: where it first appeared, or where backward found it
    "anomaly_border": "#c00000",
}
# Clusters nested one in another alternate between these fills, so the nesting shows.
CLUSTER_FILLS = (STYLE["cluster"], "#f8f9fd")
SMALL = '<FONT POINT-SIZE="9">{}</FONT>'


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

    show_values   values and ``.grad`` as small matrices (argmax cells of max pooling in blue)
    show_saved    what each op saved for backward, with its size in bytes
    max_depth     draw only the last ``max_depth`` ops before ``tensor``; one node stands for the rest
    collapse      an int: chains of at least this many identical ops become one node ("Mul ×37");
                  None or 0 turns it off. A module path or a tuple/list of them (needs
                  group="module"): each call of those modules becomes one node
                  ("features.0 · Conv2d · 3 ops"); chains are then folded from 8 ops on
    group         None, or "module": each nn.Module call is a cluster labelled with its path
                  (``features.0``), nested as the modules are; parameters are named by their
                  path (``features.0.weight``) unless they have a ``name``
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
    max_elements  a 2-D slice larger than this is summarised (min/mean/max) instead of listed
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
    order = _forward_order(ops) if group or anomalies else []
    layout = module_layout(walk, order, model, paths, depth) if group else ModuleLayout()
    groups, hidden, inside = (_chains(ops, uses, chain_length, layout.owner) if chain_length
                              else ({}, set(), set()))
    fmt = (lambda v: format(v, precision)) if isinstance(precision, str) else (
        lambda v: f"{v:.{precision}g}")
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
        rankdir=rankdir, nodesep="0.3", ranksep="0.35", fontname="Helvetica"),
        node_attr=dict(fontname="Helvetica", fontsize="11", margin="0.08,0.04"),
        edge_attr=dict(fontname="Helvetica", fontsize="9", color="#555555"))
    body = _Body(dot)
    names = {}  # id(tensor) -> DOT node name
    for t in walk["tensors"].values():
        if id(t) in hidden or id(t) in folded or id(t) in layout.hidden:
            continue
        kind = ("output" if t is tensor else "intermediate" if t.grad_fn is not None
                else "parameter" if t.requires_grad else "constant")
        label = _tensor_label(t, kind, show_values, fmt, max_elements, marks.get(id(t)),
                              name=t.name or layout.param_names.get(id(t)),
                              stats=_stats(t, fmt) if stats else None)
        names[id(t)] = name = f"t{len(names)}"
        body.node(layout.cluster_of(t), name, f"<{label}>", shape="box", style="rounded,filled",
                  fillcolor=STYLE[kind], penwidth="2" if kind == "output" else "1")

    for number, call in enumerate(layout.folds):
        _draw_fold(body, call, ops, names, warnings, edge_labels, number)
    for number, (run, inputs, n_folded) in enumerate(op_nodes):
        op = f"op{number}"
        head = id(run[0][0])
        warning = "; ".join(warnings[id(fn)] for fn, _ in run if id(fn) in warnings)
        body.node(layout.owner.get(head), op, f"<{_op_label(run, show_saved, n_folded, warning)}>",
                  shape="box", **_op_style(warning))
        for p in inputs:
            body.edge(names[id(p)], op, label=_shape(p.shape) if edge_labels else None)
        out = run[0][1]
        body.edge(op, names[id(out)], label=_shape(out.shape) if edge_labels else None)

    if walk["frontier"]:
        more = walk["elided"]
        body.node(None, "elided", f"… {more:,} more op{'s' if more != 1 else ''}", shape="box",
                  style="dashed,filled", fillcolor=STYLE["elided"], color="#888888")
        for t in walk["frontier"]:
            body.edge("elided", names[id(t)], style="dashed")
    body.finish()
    if legend:
        _legend(dot, show_values, show_saved, clusters=bool(body.clusters),
                folds=bool(layout.folds), anomalies=anomalies)
    return dot


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
    (".2f", ".3e"; not ",.2f" or ".1%", whose text _number cannot read back)."""
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
    count = len(call.ops)
    rows = [f"<TR><TD><B>{html.escape(call.label)}</B></TD></TR>",
            f"<TR><TD>{SMALL.format(html.escape(f'{call.kind} · {count:,} op' + 's' * (count != 1)))}"
            f"</TD></TR>"] + _warning_rows(warning)
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
        body.edge(names[id(p)], name, label=_shape(p.shape) if edge_labels else None)
    for out in leaving.values():
        body.edge(name, names[id(out)], label=_shape(out.shape) if edge_labels else None)
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
                    and p.name is None and not p.retains_grad and _attr_rows(g) == _attr_rows(fn)
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
    engine's, over ``parents`` (the walk's links) rather than ``edges``."""
    order, emitted, stack = [], set(), list(ops)[:1]
    while stack:
        key = stack[-1]
        if key in emitted:
            stack.pop()
            continue
        pending = [id(p.grad_fn) for p in ops[key][0].parents
                   if id(p.grad_fn) in ops and id(p.grad_fn) not in emitted]
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
    if not warning:
        return []
    lines = textwrap.wrap(warning, 44)
    if len(lines) > 3:
        lines = lines[:3]
        lines[-1] += " …"  # the whole message is in the tooltip
    return [f'<TR><TD><FONT POINT-SIZE="9" COLOR="{STYLE["anomaly_border"]}">{html.escape(line)}'
            f'</FONT></TD></TR>' for line in lines]


# ---- labels (Graphviz HTML-like labels: every piece of text goes through html.escape) ------
def _shape(shape: tuple) -> str:
    return "×".join(map(str, shape)) if shape else "scalar"


def _attr_value(v) -> str:
    if isinstance(v, tuple) and v and all(isinstance(x, (int, np.integer)) for x in v) \
            and len(set(v)) == 1:
        return str(v[0])  # kernel_size=(2, 2) reads as 2
    if isinstance(v, tuple):
        return "(" + ", ".join(_attr_value(x) for x in v) + ")"
    if isinstance(v, slice):
        return ":".join("" if x is None else str(x) for x in (v.start, v.stop, v.step)).rstrip(":") or ":"
    if isinstance(v, np.ndarray):
        return f"array {_shape(v.shape)}"
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()  # NumPy 2 would write np.int64(3)
    if isinstance(v, float):
        return f"{v:g}"
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


# Pooling and convolution attributes in the order PyTorch's signatures list them.
_ORDER = ("kernel_size", "stride", "padding", "dilation", "groups", "ceil_mode", "ties")


def _attr_rows(fn) -> tuple:
    if not fn.attrs:
        return ()
    # out_hw is bookkeeping the output tensor's shape already shows.
    keys = sorted((k for k in fn.attrs if k != "out_hw"),
                  key=lambda k: _ORDER.index(k) if k in _ORDER else len(_ORDER))
    return tuple(f"{k}={_attr_value(fn.attrs[k])}" for k in keys)


def _op_label(run: list, show_saved: bool, constants: int, warning: str = "") -> str:
    fn = run[0][0]
    title = fn.name if len(run) == 1 else f"{fn.name} ×{len(run):,}"
    rows = [f"<TR><TD><B>{html.escape(title)}</B></TD></TR>"]
    rows += [f'<TR><TD ALIGN="LEFT">{html.escape(a)}</TD></TR>' for a in _attr_rows(fn)]
    if constants:
        rows.append(f"<TR><TD>{SMALL.format(f'+ {constants:,} constant inputs')}</TD></TR>")
    rows += _warning_rows(warning)
    if show_saved:
        rows += _saved_rows(run)
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{"".join(rows)}</TABLE>'


def _saved_rows(run: list) -> list:
    """What forward saved for backward (ndarray sizes in bytes), or that backward freed it."""
    cell = '<TR><TD ALIGN="LEFT" BGCOLOR="{}">{}</TD></TR>'.format
    head = cell(STYLE["saved"], "<I>saved for backward</I>")
    if all(fn.released for fn, _ in run):
        return [head, cell(STYLE["saved"], "(freed by backward)")]
    if len(run) > 1:  # a chain: one total, not 100,000 rows
        arrays = [v for fn, _ in run for v in fn.saved_for_backward().values()
                  if isinstance(v, np.ndarray)]
        total = sum(a.nbytes for a in arrays)
        return [head, cell(STYLE["saved"], html.escape(f"{len(arrays):,} arrays, {total:,} B"))]
    fn = run[0][0]
    rows = [head]
    for name, value in fn.saved_for_backward().items():
        if isinstance(value, np.ndarray):
            text = f"{name}: {_shape(value.shape)} {value.dtype}, {value.nbytes:,} B"
            # Many ops save their input itself (a reference, not a copy): say so.
            same = [p.name or f"input {k}" for k, p in enumerate(fn.parents)
                    if value is p._data or np.may_share_memory(value, p._data)]
            if same:
                text += f" (= {same[0]}, no copy)"
        else:
            text = f"{name}: {value!r}"[:60]
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


def _tensor_label(t: Tensor, kind: str, show_values: bool, fmt, max_elements: int, marks,
                  name: str | None = None, stats: list | None = None) -> str:
    title = name or ({"output": "output", "parameter": "parameter"}.get(kind, ""))
    if not title and kind == "constant" and t._data.size == 1:
        # A literal number: shown in full (a 1.0001 rounded to "1" would mislead).
        title = f"{t._data.item():.6g}" if t.dtype.kind in "fc" else str(t._data.item())
    rows = [f"<TR><TD COLSPAN=\"2\"><B>{html.escape(title)}</B></TD></TR>"] if title else []
    rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(f"{_shape(t.shape)} {t.dtype}"))}</TD></TR>')
    rows += [f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(line))}</TD></TR>' for line in stats or ()]
    if show_values and _value_freed(t):
        if not stats:  # (the stats line already says so)
            rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(FREED_VALUE)}</TD></TR>')
    elif show_values:
        chosen, tied, note = marks if marks else (None, None, None)
        blocks = [_matrices("value", t._data, fmt, max_elements, chosen, tied)]
        if t.grad is not None:
            blocks.append(_matrices("grad", t.grad._data, fmt, max_elements, chosen, tied))
        rows.append("<TR>" + "".join(f'<TD VALIGN="TOP">{b}</TD>' for b in blocks) + "</TR>")
        if note:
            rows.append(f'<TR><TD COLSPAN="2">{SMALL.format(html.escape(note))}</TD></TR>')
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1">{"".join(rows)}</TABLE>'


def _stats(t: Tensor, fmt) -> list:
    """stats=True: the value's min, mean and max, and the gradient's 2-norm, one rule for all."""
    values = t._data
    if _value_freed(t):
        return [FREED_VALUE]
    if values.size == 0:
        lines = ["empty"]
    else:
        if values.dtype.kind == "b":
            values = values.astype(np.int8)
        lo, mean, hi = values.min(), values.mean(dtype=np.float64), values.max()
        lines = [f"min {_number(lo, fmt)} · mean {_number(mean, fmt)} · max {_number(hi, fmt)}"]
    if t.grad is not None:
        norm = np.linalg.norm(t.grad._data.reshape(-1).astype(np.float64, copy=False))
        lines.append(f"‖grad‖ {_number(norm, fmt)}")
    return lines


def _number(value, fmt) -> str:
    """``fmt`` of a number, with a rounded-away sign dropped: -0.0001 at 3 decimals is 0.000."""
    text = fmt(float(value))
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def _slices(shape: tuple) -> list:
    """(caption, index) of each 2-D slice to show; leading length-1 axes (N, C) are squeezed,
    so a 1×1×4×4 tensor is one 4×4 grid, and at most 4 slices are listed."""
    if len(shape) <= 2:
        return [("", ...)]
    lead = shape[:-2]
    out = []
    for index in np.ndindex(*lead):
        caption = ", ".join(str(i) for i, n in zip(index, lead) if n > 1)
        out.append((f" [{caption}]" if caption else "", index))
    return out


def _matrices(caption: str, array: np.ndarray, fmt, max_elements: int, chosen, tied) -> str:
    """One HTML table per 2-D slice; cells of ``chosen`` (argmax) and ``tied`` masks highlighted."""
    as_2d = lambda a: a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a
    slices = _slices(array.shape)
    tables = []
    for label, index in slices[:4]:
        values = as_2d(array[index])
        head = SMALL.format(html.escape(caption + label))
        if values.size > max_elements or values.size == 0:
            stats = (f"min {_number(values.min(), fmt)}  mean {_number(values.mean(), fmt)}  "
                     f"max {_number(values.max(), fmt)}"
                     if values.size and values.dtype.kind in "biuf" else "")
            tables.append(f'<TABLE BORDER="0" CELLSPACING="0"><TR><TD>{head}</TD></TR>'
                          f'<TR><TD>{SMALL.format(html.escape(stats))}</TD></TR></TABLE>')
            continue
        picked = as_2d(chosen[index]) if chosen is not None else None
        tie = as_2d(tied[index]) if tied is not None else None
        rows = [f'<TR><TD COLSPAN="{values.shape[1]}" BORDER="0">{head}</TD></TR>']
        texts = [[_number(v, fmt) if values.dtype.kind == "f" else fmt(v) if values.dtype.kind == "c"
                  else str(v) for v in row] for row in values]
        # Equal column widths (in points, about 6.5 per character) so the grid reads as a matrix.
        width = 7 * max(len(t) for row in texts for t in row) + 6
        for r, row in enumerate(texts):
            cells = []
            for c, text in enumerate(row):
                text = html.escape(text)
                if picked is not None and picked[r, c]:
                    cells.append(f'<TD WIDTH="{width}" BGCOLOR="{STYLE["argmax"]}" BORDER="2" '
                                 f'COLOR="{STYLE["argmax_border"]}"><B>{text}</B></TD>')
                elif tie is not None and tie[r, c]:
                    cells.append(f'<TD WIDTH="{width}" BGCOLOR="{STYLE["tie"]}">{text}</TD>')
                else:
                    cells.append(f'<TD WIDTH="{width}">{text}</TD>')
            rows.append("<TR>" + "".join(cells) + "</TR>")
        tables.append('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" '
                      f'COLOR="#aaaaaa">{"".join(rows)}</TABLE>')
    if len(slices) > 4:
        tables.append(SMALL.format(f"… {len(slices) - 4} more slices"))
    return '<TABLE BORDER="0" CELLSPACING="2">' + "".join(
        f"<TR><TD>{t}</TD></TR>" for t in tables) + "</TABLE>"


# ---- max pooling's "blue circles" -----------------------------------------------------------
def _all_pool_marks(ops) -> dict:
    """{id(input tensor): (chosen mask, tied mask, note)} for every MaxPool2d drawn."""
    marks = {}
    for fn, _ in ops:
        if fn.name != "MaxPool2d":
            continue
        x = fn.parents[0]
        if _value_freed(x):  # nothing to mark the choices on
            continue
        chosen, tied, recomputed = _pool_marks(fn)
        if id(x) in marks:  # pooled twice: show both poolings' choices
            chosen, tied = chosen | marks[id(x)][0], tied | marks[id(x)][1]
        tied &= ~chosen
        how = "recomputed: backward freed the saved one" if recomputed else "as saved by MaxPool2d"
        ties = "; light blue = tied max" if tied.any() else ""
        marks[id(x)] = (chosen, tied, f"blue = window max (argmax, {how}){ties}")
    return marks


def _pool_marks(fn):
    """Boolean masks over the pool's (N, C, H, W) input: each window's argmax, and every cell
    equal to the max of a window containing it (the ties that ties="all"/"split" also pay)."""
    argmax = fn.saved_for_backward().get("argmax")
    recomputed = argmax is None
    if recomputed:
        # Run the op's own forward again: the very same first-max rule, with nothing to keep.
        with no_grad():
            _, fresh = type(fn).apply(fn.parents[0], return_ctx=True, **fn.attrs)
        argmax = fresh.argmax
    chosen, tied = pool_marks(fn.parents[0]._data, argmax, fn.attrs)
    return chosen, tied, recomputed


def _legend(dot: graphviz.Digraph, show_values: bool, show_saved: bool, clusters: bool = False,
            folds: bool = False, anomalies: bool = False) -> None:
    entries = [("parameter", "parameter: leaf, requires grad"),
               ("constant", "input / constant: no grad"),
               ("intermediate", "intermediate (computed)"),
               ("output", "output (the tensor drawn)"),
               ("op", "op (Function node)")]
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
