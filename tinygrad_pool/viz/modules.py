"""Which nn.Module call each op of a graph belongs to: the analysis behind draw_graph(group="module").

    layout = module_layout(walk, order, model, collapse=("features",), depth=None)
    layout.owner[id(op)]           # the innermost call around an op: its cluster
    layout.folded_into[id(op)]     # the folded call whose single node stands for the op
    layout.param_names[id(param)]  # "features.0.weight"
    parameter_paths(walk, order)   # the same names, without the rest of the layout
    layout.cluster_of(tensor)      # the cluster a tensor's node is declared in (None: top level)

nn.Module.__call__ notes each call on the node that made its output: ``node.origin["modules"]``
holds (module, its input nodes) for every call whose output that node made, innermost first.
From those notes alone this module finds each call's ops, how the calls nest, the paths that name
them (``features.0``, from ``named_modules()``), the paths that name parameters, and which calls
fold into one node when draw_graph is asked to collapse by path or depth.

It is pure graph analysis: it reads nodes, tensors and modules, imports nothing (not even
``graphviz``, which only viz/graph.py needs) and changes nothing it reads.
"""
from __future__ import annotations

from collections import Counter


class ModuleCall:
    """One call of an nn.Module, as nn.Module.__call__ noted it on its output's node."""

    def __init__(self, module, stops: tuple, seq: int):
        self.module, self.stops, self.seq = module, {id(n) for n in stops}, seq
        self.outputs = []   # keys of the ops that made its output(s)
        self.ops = {}       # key -> None: the ops between its inputs and its outputs, in walk order
        self.parent = None  # the innermost call around it
        self.depth = 0
        self.path = self.label = self.title = ""
        self.kind = type(module).__name__


class ModuleLayout:
    """Where each drawn op and tensor sits among the module calls; ``ModuleLayout()`` is the
    layout without any (group=None): every node at the top level, nothing folded or renamed.

    owner         {id(op): its innermost ModuleCall}
    folded_into   {id(op): the folded ModuleCall whose node stands for it}
    folds         the folded calls, in forward order
    param_names   {id(parameter): its path}
    hidden        ids of the tensors a folded call's node stands for (not drawn)
    """

    def __init__(self, walk: dict | None = None, calls: list = (), owner: dict | None = None,
                 param_names: dict | None = None, folded_into: dict | None = None):
        self.walk, self.calls = walk, list(calls)
        self.owner, self.param_names = owner or {}, param_names or {}
        self.folded_into = folded_into or {}
        self.folds = sorted(set(self.folded_into.values()), key=lambda c: c.seq)
        self.hidden = _hidden_in_folds(walk, self.folded_into, self.param_names) if self.folds else set()

    def place(self, key):
        """The cluster an op's output sits in: its call's, or beside its folded call's node."""
        return self.folded_into[key].parent if key in self.folded_into else self.owner.get(key)

    def cluster_of(self, t):
        """The cluster a tensor's node is declared in (None: the top level). A computed tensor
        sits with the op that made it; a parameter (or a literal number) in the innermost
        cluster around all of its users; an input, a target or a tensor from beyond max_depth
        at the top level."""
        if not self.calls:
            return None
        if id(t.grad_fn) in self.walk["ops"]:
            return self.place(id(t.grad_fn))
        if t.grad_fn is not None or not _travels_with_its_users(t, self.param_names):
            return None
        common = first = object()
        for key in self.walk["users"].get(id(t), ()):
            cluster = self.place(key)
            common = cluster if common is first else _common_ancestor(common, cluster)
        return None if common is first else common


def module_layout(walk: dict, order: list, model=None, collapse: tuple = (),
                  depth: int | None = None) -> ModuleLayout:
    """The module calls noted on the walked ops, nested and named, and the ones folded.

    walk      draw_graph's walk: its ``ops`` ({id(op): (op, output)}), ``tensors``, ``users``
              ({id(tensor): keys of the ops using it}) and ``root`` (the tensor drawn)
    order     the ops' keys in forward order: calls are numbered in it ("encoder (call 2)")
    model     the Module whose attribute names make the paths; by default the outermost
              recorded modules, each named by its class
    collapse  module paths whose calls fold into one node each
    depth     calls this many levels below the top fold into one node each
    """
    ops = walk["ops"]
    calls = _noted_calls(ops, order)
    owner = _nest(calls)
    param_names = _name(calls, model)
    folded_into = _folded(calls, collapse, depth) if collapse or depth is not None else {}
    return ModuleLayout(walk, calls, owner, param_names, folded_into)


def parameter_paths(walk: dict, order: list, model=None) -> dict:
    """{id(parameter): its path} ("features.0.weight") for the parameters of the module calls
    noted on the walked ops: the names group="module" gives them, for pictures that draw no
    clusters (``order``: the ops' keys in forward order, which numbers the roots' classes)."""
    return _name(_noted_calls(walk["ops"], order), model)


# ---- finding and nesting the calls --------------------------------------------------------------
def _noted_calls(ops: dict, order: list) -> list:
    """The calls noted on the ops, in forward order, each with the ops of its region.

    An op belongs to a call if it lies between the call's inputs and its output: the walk back
    from the output stops at the input nodes and at leaves. A call whose region is empty (its
    output is one of its inputs' nodes) has nothing to draw and is left out.
    """
    calls = {}  # id(the noted (module, inputs) tuple) -> ModuleCall
    for key in order:
        origin = ops[key][0].origin
        for entry in (origin or {}).get("modules", ()):
            call = calls.get(id(entry))
            if call is None:
                call = calls[id(entry)] = ModuleCall(entry[0], entry[1], len(calls))
            call.outputs.append(key)
    return [call for call in calls.values() if _claim_region(call, ops)]


def _claim_region(call: ModuleCall, ops: dict) -> bool:
    stack = [key for key in call.outputs if key not in call.stops]
    while stack:
        key = stack.pop()
        if key in call.ops:
            continue
        call.ops[key] = None
        for p in ops[key][0].parents:
            g = id(p.grad_fn)
            if g in ops and g not in call.stops and g not in call.ops:
                stack.append(g)
    return bool(call.ops)


def _nest(calls: list) -> dict:
    """Set each call's parent and depth; return {id(op): its innermost call}.

    Nested calls' regions lie inside their callers', so visiting calls from the largest region
    down and letting each claim its ops leaves every op with its innermost call, and each call's
    parent is whoever held its output before it claimed it. (A region is walked once: time grows
    with the ops times the nesting depth, never with anything quadratic in the graph.)
    """
    owner = {}
    # Biggest region first; for equal regions (a Sequential of one layer) the outer call,
    # which nn.Module.__call__ noted after the inner one.
    for call in sorted(calls, key=lambda c: (-len(c.ops), -c.seq)):
        call.parent = owner.get(call.outputs[0])
        call.depth = 0 if call.parent is None else call.parent.depth + 1
        for key in call.ops:
            owner[key] = call
    return owner


# ---- paths -------------------------------------------------------------------------------------
def outermost_modules(modules: list, model=None) -> list:
    """``model`` (when given) and every module of ``modules`` that no other one contains: the
    roots whose attribute names make the paths."""
    below = set()  # modules inside another one's tree
    for m in ([model] if model is not None else []) + modules:
        below.update(id(sub) for _, sub in m.named_modules() if sub is not m)
    return ([model] if model is not None else []) + [
        m for m in modules if id(m) not in below and m is not model]


def dotted_paths(roots: list) -> tuple[dict, dict]:
    """({id(module): path}, {id(parameter): path}) under ``roots``, as named_modules() and
    named_parameters() write them. A lone root is named by its class and its parts plainly
    (``features.0.weight``); several roots prefix their parts with their class names, numbered
    from the second of a class on (``Sequential_2.0.weight``)."""
    paths, params, seen = {}, {}, Counter()
    for root in roots:
        seen[type(root).__name__] += 1
        n = seen[type(root).__name__]
        label = type(root).__name__ + (f"_{n}" if n > 1 else "")
        prefix = f"{label}." if len(roots) > 1 else ""
        for name, sub in root.named_modules():
            paths.setdefault(id(sub), prefix + name if name else label)
        for name, param in root.named_parameters():
            params.setdefault(id(param), prefix + name)
    return paths, params


def _name(calls: list, model) -> dict:
    """Give each call its path, label and cluster title; return {id(parameter): its path}."""
    roots = outermost_modules(list({id(c.module): c.module for c in calls}.values()), model)
    paths, params = dotted_paths(roots)
    calls_of = Counter(id(c.module) for c in calls)
    numbered = Counter()
    for call in calls:  # forward order: "encoder (call 1)", "encoder (call 2)"
        call.path = paths[id(call.module)]
        numbered[id(call.module)] += 1
        call.label = call.path + (f" (call {numbered[id(call.module)]})"
                                  if calls_of[id(call.module)] > 1 else "")
        is_root = any(call.module is root for root in roots)  # named by its class already
        call.title = call.label if is_root else f"{call.label} · {call.kind}"
    return params


# ---- folding -----------------------------------------------------------------------------------
def _folded(calls: list, paths: tuple, depth: int | None) -> dict:
    """{id(op): the folded call whose node stands for it}: the calls of the modules at
    ``paths`` and those ``depth`` levels below the top; an outer fold takes in inner ones."""
    known = {c.path for c in calls}
    for path in paths:
        if path not in known:
            listed = ", ".join(repr(p) for p in sorted(known)[:12]) or "none was recorded"
            raise ValueError(f"draw_graph: collapse names {path!r}, which is no module path "
                             f"in this graph (the paths: {listed})")
    chosen = [c for c in calls if c.path in paths or c.depth == depth]
    folded_into = {}
    for call in sorted(chosen, key=lambda c: (-len(c.ops), -c.seq)):
        if call.outputs[0] not in folded_into:
            folded_into.update(dict.fromkeys(call.ops, call))
    return folded_into


def _travels_with_its_users(t, param_names: dict) -> bool:
    """A parameter or a literal number (an unnamed one-element leaf) belongs with the ops that
    use it; an input or a target stays outside every module."""
    return id(t) in param_names or (t.name is None and t._data.size == 1)


def _hidden_in_folds(walk: dict, folded_into: dict, param_names: dict) -> set:
    """Tensors a folded module's node stands for: made by its ops and used only there (not the
    output drawn), and the parameters and literal numbers only its ops use."""
    root, hidden = walk["root"], set()
    for t in walk["tensors"].values():
        users = {folded_into.get(key) for key in walk["users"].get(id(t), ())}
        if t is root or len(users) != 1 or None in users:
            continue
        (call,) = users
        if t.grad_fn is not None:
            if folded_into.get(id(t.grad_fn)) is call:
                hidden.add(id(t))
        elif _travels_with_its_users(t, param_names):
            hidden.add(id(t))
    return hidden


def _common_ancestor(a, b):
    while a is not b:
        if a is None or b is None:
            return None
        if a.depth >= b.depth:
            a = a.parent
        else:
            b = b.parent
    return a
