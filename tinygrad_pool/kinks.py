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

Each op says where its kinks are, by one of these attributes (a user's own Node subclass
declares them the same way; RULES reads them):
  kink_points()         [(input value, what backward takes there)]: the slope jumps where the
                        input crosses the value (relu, abs, clamp, leaky_relu, elu)
  kink_jumps = True     the output itself jumps (floor, ceil, round, sign); backward takes 0
  kink_tie = "larger"   a kink where its two inputs tie (maximum; "smaller": minimum)
  kink_bounds()         [(input index, side)]: the slope jumps where input 0 crosses that
                        input, a bound (clamp with tensor bounds)
  kink_candidates(x), kink_choice(g, tied, cell)
                        the output is the max of each group of candidates (max, max(dim), max
                        pooling): (values (G, K) oriented so that the larger wins, cell(g, k),
                        group(g)) name them; kink_choice says where backward sent group g's
                        gradient when its ``tied`` candidates tie
An op that declares none of them is named as one without a kink rule when the element moves
its inputs and no declared op explains the kink.
"""
import numpy as np

from .engine import Tensor, _node_of, _topological_order

SHOWN = 3  # positions named per op; the rest are counted


def recorded_inputs(output: Tensor) -> tuple:
    """(nodes, arrays): the Function nodes that made ``output``, in the engine's order, and a
    copy of the arrays each received — copies, because gradcheck perturbs its inputs in place
    and puts them back, which would change a leaf's array under the node's feet."""
    nodes = [n for n in _topological_order([_node_of(output)]) if not isinstance(n, Tensor)]
    return nodes, [tuple(np.array(p._data) for p in node.parents) for node in nodes]


def explain(at: tuple, below: tuple, above: tuple) -> tuple:
    """(reasons, unknown): one sentence per op at its kink for the perturbed element, and the
    names of the ops that declare no kinks (a user's own, or one whose kinks this check does not
    describe) whose inputs the element moves.

    ``at``, ``below``, ``above``: ``recorded_inputs`` of fn at x, x - ε·e and x + ε·e.
    """
    nodes, received = at
    if not _same_graph(at, below) or not _same_graph(at, above):
        return ["fn records a different graph at x - eps and at x + eps (which ops run depends "
                "on this element), so it is not differentiable here"], []
    reasons, unknown = [], []
    for node, values, lower, upper in zip(nodes, received, below[1], above[1]):
        rules = [rule for attribute, rule in RULES if getattr(node, attribute, None)]
        for rule in rules:
            reasons += rule(node, values, lower, upper)
        if not rules and any(np.any(lo != hi) for lo, hi in zip(lower, upper)):
            unknown.append(node.name)
    return reasons, list(dict.fromkeys(unknown))


def _same_graph(one: tuple, other: tuple) -> bool:
    return [type(n) for n in one[0]] == [type(n) for n in other[0]] and all(
        a.shape == b.shape for xs, ys in zip(one[1], other[1]) for a, b in zip(xs, ys))


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
def _pointwise(node, values, lower, upper):
    """kink_points: the slope jumps where the input crosses one of the points; the op says which
    slope backward uses exactly there."""
    x, reasons = values[0], []
    for point, taken in node.kink_points():
        for index in np.argwhere(_crossed(lower[0] - point, upper[0] - point)):
            index = tuple(index)
            value = x[index]
            if value == point:
                reasons.append(f"{node.name}'s input {_position(index)} is {value:g}, its kink: "
                               f"backward takes {taken}")
            else:
                reasons.append(f"{node.name}'s input {_position(index)} is {value:.6g}, within "
                               f"the step of its kink at {point:g}: backward takes the slope "
                               f"at {value:.6g} itself")
    return _listed(reasons)


def _step(node, values, lower, upper):
    """kink_jumps (floor, ceil, round, sign): the output jumps; backward's 0 is the slope
    everywhere else."""
    jumped = node.call(lower[0], **node.attrs) != node.call(upper[0], **node.attrs)
    return _listed([f"{node.name} jumps at its input {_position(i)} = {values[0][tuple(i)]:.6g} "
                    f"(not even continuous there); backward takes 0, its slope everywhere "
                    f"else, as PyTorch" for i in np.argwhere(jumped)])


def _tie(node, values, lower, upper):
    """kink_tie (maximum(a, b), minimum(a, b)): a kink where a and b tie."""
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
                           f"{node.kink_tie} the whole gradient")
    return _listed(reasons)


def _bounds(node, values, lower, upper):
    """kink_bounds (clamp with tensor bounds): a kink where x crosses a bound."""
    reasons = []
    for k, side in node.kink_bounds():
        x, bound = np.broadcast_arrays(values[0], values[k])
        for index in np.argwhere(_crossed(lower[0] - lower[k], upper[0] - upper[k])):
            index = tuple(index)
            how = ("equals" if x[index] == bound[index] else "is within the step of")
            reasons.append(f"{node.name}'s input {_position(index)} = {x[index]:.6g} {how} its {side} "
                           f"bound {bound[index]:.6g}: backward passes the gradient to the input "
                           f"(slope 1 at the bound itself), none to the bound, as PyTorch")
    return _listed(reasons)


# ---- ops that select one of several candidates: max, min, max pooling ---------------------
def _selection(node, values, lower, upper):
    """kink_candidates: the output is the max (or min) of each group of candidates; a group is
    at a kink when its winners differ between x - ε·e and x + ε·e, and the op's kink_choice says
    where backward sent its gradient."""
    (at, cell, group), (below, _, _), (above, _, _) = (
        node.kink_candidates(v[0]) for v in (values, lower, upper))
    winners = [v == v.max(axis=-1, keepdims=True) for v in (at, below, above)]
    reasons = []
    for g in np.flatnonzero(np.any(winners[1] != winners[2], axis=-1)):
        tied = list(dict.fromkeys(cell(g, k) for k in np.flatnonzero(winners[0][g])))
        if len(tied) > 1:
            reasons.append(f"tie between {' and '.join(tied)} of {group(g)}; "
                           f"{node.kink_choice(g, tied, cell)}")
        else:
            near = list(dict.fromkeys(cell(g, k) for k in np.flatnonzero(
                winners[1][g] | winners[2][g])))
            reasons.append(f"{' and '.join(near)} of {group(g)} are within the step of a tie; "
                           f"backward follows the winner at x, {tied[0]}")
    return _listed(reasons)


# The attribute an op declares its kinks with, and the rule that reads it.
RULES = (("kink_points", _pointwise), ("kink_jumps", _step), ("kink_tie", _tie),
         ("kink_bounds", _bounds), ("kink_candidates", _selection))
