"""Why a function is not differentiable at a point: the ops whose derivative jumps, and what
their backward chose there.

gradcheck finds the elements where the left and right finite differences disagree and
backward's value lies between them; this module names the op at its kink for such an element
and the one-sided derivative (or subgradient) its backward took. It reads only what the engine
records anyway: the graph of fn at x, at x - ε·e and at x + ε·e (the same code records the same
graph, node for node), the arrays each node received, and what the node at x saved (max
pooling's argmax, max(dim)'s indices).

An op is at a kink for the element when the branch its forward took differs between x - ε·e
and x + ε·e: relu's input changes sign, a clamp's input crosses a bound, a window's maximum
moves to another cell. That finds an input exactly at the kink (relu's input 0) and one within
the step of it (1e-7) alike; the sentence says which.
"""
import numpy as np

from .ops import activation as A
from .ops import elementwise as E
from .ops import pool as P
from .ops import reduce as R
from .engine import Tensor, _node_of, _topological_order
from .windows import adaptive_window_index

SHOWN = 3  # positions named per op; the rest are counted


def recorded_inputs(output: Tensor) -> tuple:
    """(nodes, arrays): the Function nodes that made ``output``, in the engine's order, and a
    copy of the arrays each received — copies, because gradcheck perturbs its inputs in place
    and puts them back, which would change a leaf's array under the node's feet."""
    nodes = [n for n in _topological_order([_node_of(output)]) if not isinstance(n, Tensor)]
    return nodes, [tuple(np.array(p._data) for p in node.parents) for node in nodes]


def explain(at: tuple, below: tuple, above: tuple) -> tuple:
    """(reasons, unknown): one sentence per op at its kink for the perturbed element, and the
    names of Functions without a rule (a user's own) whose inputs the element moves.

    ``at``, ``below``, ``above``: ``recorded_inputs`` of fn at x, x - ε·e and x + ε·e.
    """
    nodes, received = at
    if not _same_graph(at, below) or not _same_graph(at, above):
        return ["fn records a different graph at x - eps and at x + eps (which ops run depends "
                "on this element), so it is not differentiable here"], []
    reasons, unknown = [], []
    for node, values, lower, upper in zip(nodes, received, below[1], above[1]):
        rule = _rule_for(type(node))
        if rule is not None:
            reasons += rule(node, values, lower, upper)
        elif not type(node).__module__.startswith(__package__ + ".") and any(
                np.any(lo != hi) for lo, hi in zip(lower, upper)):
            unknown.append(node.name)
    return reasons, list(dict.fromkeys(unknown))


def _same_graph(one: tuple, other: tuple) -> bool:
    return [type(n) for n in one[0]] == [type(n) for n in other[0]] and all(
        a.shape == b.shape for xs, ys in zip(one[1], other[1]) for a, b in zip(xs, ys))


def _rule_for(cls):
    for base in cls.__mro__:  # MaxAll is a Max, MinAlongDim a MaxAlongDim
        if base in RULES:
            return RULES[base]
    return None


def _position(index) -> str:
    return str(tuple(int(i) for i in index))


def _listed(items: list) -> list:
    """The first SHOWN items, and a count of the rest."""
    return items[:SHOWN] + ([f"{len(items) - SHOWN} more like it"] if len(items) > SHOWN else [])


def _crossed(lower, upper) -> np.ndarray:
    """Where a difference changes sign between x - ε·e and x + ε·e (NaN never counts)."""
    with np.errstate(invalid="ignore"):
        return (np.sign(lower) != np.sign(upper)) & ~np.isnan(lower) & ~np.isnan(upper)


# ---- ops whose derivative jumps where the input crosses a point ------------------------------
def _pointwise(points, taken):
    """The rule of an op whose slope jumps where its input crosses one of ``points(node)``;
    ``taken(node, point)`` says which slope backward uses exactly there."""
    def rule(node, values, lower, upper):
        x, reasons = values[0], []
        for point in points(node):
            for index in np.argwhere(_crossed(lower[0] - point, upper[0] - point)):
                index = tuple(index)
                value = x[index]
                if value == point:
                    reasons.append(f"{node.name}'s input {_position(index)} is {value:g}, its kink: "
                                   f"backward takes {taken(node, point)}")
                else:
                    reasons.append(f"{node.name}'s input {_position(index)} is {value:.6g}, within "
                                   f"the step of its kink at {point:g}: backward takes the slope "
                                   f"at {value:.6g} itself")
        return _listed(reasons)
    return rule


def _step(node, values, lower, upper):
    """floor, ceil, round, sign: the output jumps; backward's 0 is the slope everywhere else."""
    jumped = node.call(lower[0], **node.attrs) != node.call(upper[0], **node.attrs)
    return _listed([f"{node.name} jumps at its input {_position(i)} = {values[0][tuple(i)]:.6g} "
                    f"(not even continuous there); backward takes 0, its slope everywhere "
                    f"else, as PyTorch" for i in np.argwhere(jumped)])


def _tie(larger: bool):
    """maximum(a, b) / minimum(a, b): a kink where a and b tie."""
    which = "larger" if larger else "smaller"

    def rule(node, values, lower, upper):
        a, b = np.broadcast_arrays(*values)
        reasons = []
        for index in np.argwhere(_crossed(np.subtract(*lower), np.subtract(*upper))):
            index = tuple(index)
            if a[index] == b[index]:
                reasons.append(f"{node.name}'s inputs tie at {_position(index)} (a = b = "
                               f"{a[index]:g}): backward gives each half the gradient, as PyTorch")
            else:
                reasons.append(f"{node.name}'s inputs at {_position(index)}, {a[index]:.6g} and "
                               f"{b[index]:.6g}, are within the step of a tie: backward gives the "
                               f"{which} the whole gradient")
        return _listed(reasons)
    return rule


def _clamp_tensor(node, values, lower, upper):
    """clamp with tensor bounds: a kink where x crosses a bound."""
    reasons = []
    for k, side in enumerate(node.attrs["sides"], start=1):
        x, bound = np.broadcast_arrays(values[0], values[k])
        for index in np.argwhere(_crossed(lower[0] - lower[k], upper[0] - upper[k])):
            index = tuple(index)
            how = ("equals" if x[index] == bound[index] else "is within the step of")
            reasons.append(f"{node.name}'s input {_position(index)} = {x[index]:.6g} {how} its {side} "
                           f"bound {bound[index]:.6g}: backward passes the gradient to the input "
                           f"(slope 1 at the bound itself), none to the bound, as PyTorch")
    return _listed(reasons)


# ---- ops that select one of several candidates: max, min, max pooling ---------------------
def _selection(candidates, chosen):
    """The rule of an op whose output is the max (or min) of each group of candidates.

    ``candidates(node, x) -> (values (G, K), oriented so that the larger wins; cell(g, k) and
    group(g), which name a candidate and a group)``; ``chosen(node, g, tied, cell) -> str``
    says where backward sent the group's gradient. A group is at a kink when its winners differ
    between x - ε·e and x + ε·e.
    """
    def rule(node, values, lower, upper):
        (at, cell, group), (below, _, _), (above, _, _) = (
            candidates(node, v[0]) for v in (values, lower, upper))
        winners = [v == v.max(axis=-1, keepdims=True) for v in (at, below, above)]
        reasons = []
        for g in np.flatnonzero(np.any(winners[1] != winners[2], axis=-1)):
            tied = list(dict.fromkeys(cell(g, k) for k in np.flatnonzero(winners[0][g])))
            if len(tied) > 1:
                reasons.append(f"tie between {' and '.join(tied)} of {group(g)}; "
                               f"{chosen(node, g, tied, cell)}")
            else:
                near = list(dict.fromkeys(cell(g, k) for k in np.flatnonzero(
                    winners[1][g] | winners[2][g])))
                reasons.append(f"{' and '.join(near)} of {group(g)} are within the step of a tie; "
                               f"backward follows the winner at x, {tied[0]}")
        return _listed(reasons)
    return rule


def _pool_windows(node, x):
    n, c, h, w = x.shape
    pixel, inside = node.windows()  # (kh·kw, out_h, out_w); padding never wins
    values = np.where(inside, x.reshape(n, c, h * w)[:, :, pixel], -np.inf)
    shape = (n, c) + pixel.shape[1:]

    def cell(g, k):
        i, j = np.unravel_index(g, shape)[2:]
        return (f"window cell {divmod(int(k), node.attrs['kernel_size'][1])} "
                f"(pixel {divmod(int(pixel[k, i, j]), w)})")

    def group(g):
        return f"{node.name} window {_position(np.unravel_index(g, shape))}"
    return np.moveaxis(values, 2, -1).reshape(-1, len(pixel)), cell, group


def _pool_chosen(node, g, tied, cell):
    """Where window g's gradient went: the op's own tie rule (``MaxPool2d.paid_cells``)."""
    x, argmax = node.saved_tensors
    share = node.paid_cells(x, argmax).share  # (N, C, K, out_h, out_w)
    share = np.moveaxis(share, 2, -1).reshape(-1, share.shape[2])[g]  # window g's cells
    ties, count = node.attrs["ties"], np.count_nonzero(share)
    if ties == "split":
        return f"ties='split' gives each of the {count} cells 1/{count} of the gradient"
    if ties == "all":
        return (f"ties='all' gives each of the {count} cells the whole gradient: for each cell "
                f"alone that is one of its one-sided derivatives, but together not a subgradient "
                f"(raising all {count} by t raises the max by t; backward predicts {count}·t)")
    return (f"ties='first' chose {cell(g, np.flatnonzero(share)[0])}, PyTorch's rule: it gets "
            f"the whole gradient")


def _adaptive_windows(node, x):
    n, c, h, w = x.shape
    shape = (n, c) + tuple(node.attrs["out_hw"])
    pixel = adaptive_window_index((h, w), shape[2:])  # a short window repeats a cell: one name

    def cell(g, k):
        i, j = np.unravel_index(g, shape)[2:]
        return f"pixel {divmod(int(pixel[i, j, k]), w)}"

    def group(g):
        return f"{node.name} window {_position(np.unravel_index(g, shape))}"
    values = x.reshape(n, c, h * w)[:, :, pixel]
    return values.reshape(-1, values.shape[-1]), cell, group


def _adaptive_chosen(node, g, tied, cell):
    x, argmax = node.saved_tensors
    return (f"backward sent the whole gradient to the first, pixel "
            f"{divmod(int(argmax.reshape(-1)[g]), x.shape[3])} (PyTorch's rule)")


def _reduced_slices(axes, x, sign, name):
    """The slices a reduction over ``axes`` takes its max (sign 1) or min (sign -1) of."""
    moved = list(range(x.ndim - len(axes), x.ndim))
    kept_shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    values = np.moveaxis(x, axes, moved).reshape(int(np.prod(kept_shape)), -1) * sign
    where = np.moveaxis(np.indices(x.shape), [d + 1 for d in axes], [d + 1 for d in moved])
    where = where.reshape(x.ndim, values.shape[0], -1)

    def cell(g, k):
        return f"element {_position(where[:, g, k])}"

    def group(g):
        return (f"{name} of all elements" if not kept_shape else
                f"the {name} slice at {_position(np.unravel_index(g, kept_shape))}")
    return values, cell, group


def _reduce_candidates(node, x):
    axes = tuple(sorted(a % x.ndim for a in node.attrs["axis"])) if x.ndim else ()
    sign = 1 if node.reducer is np.max else -1
    return _reduced_slices(axes, x.reshape(x.shape or (1,)), sign, node.name)


def _reduce_chosen(node, g, tied, cell):
    return (f"backward splits the gradient equally among the {len(tied)} (1/{len(tied)} each), "
            f"as PyTorch's amax and max()")


def _along_dim_candidates(node, x):
    sign = 1 if node.pick is np.argmax else -1
    return _reduced_slices((node.attrs["dim"] % max(x.ndim, 1),), x.reshape(x.shape or (1,)),
                           sign, node.name)


def _along_dim_chosen(node, g, tied, cell):
    index = int(np.asarray(node.saved_for_backward()["indices"]).reshape(-1)[g])
    return (f"{node.name} selected index {index} (the first, as PyTorch on the CPU): it gets the "
            f"whole gradient")


RULES = {
    E.ReLU: _pointwise(lambda node: [0.0], lambda node, point: "relu'(0) = 0, as PyTorch"),
    E.Abs: _pointwise(lambda node: [0.0], lambda node, point: "sign(0) = 0, as PyTorch"),
    E.Clamp: _pointwise(
        lambda node: [b for b in (node.attrs["low"], node.attrs["high"]) if b is not None],
        lambda node, point: "slope 1 at the bound itself, as PyTorch"),
    A.LeakyReLU: _pointwise(
        lambda node: [0.0],
        lambda node, point: f"the negative side's slope {node.attrs['negative_slope']:g}, as PyTorch"),
    A.ELU: _pointwise(lambda node: [0.0] if node.attrs["alpha"] != 1 else [],
                      lambda node, point: f"the negative side's slope α = {node.attrs['alpha']:g}, "
                                          f"as PyTorch"),
    E.StepFunction: _step,
    E.Maximum: _tie(larger=True),
    E.Minimum: _tie(larger=False),
    E.ClampTensor: _clamp_tensor,
    R.Max: _selection(_reduce_candidates, _reduce_chosen),
    R.MaxAlongDim: _selection(_along_dim_candidates, _along_dim_chosen),
    P.MaxPool2d: _selection(_pool_windows, _pool_chosen),
    P.AdaptiveMaxPool2d: _selection(_adaptive_windows, _adaptive_chosen),
}
