"""Check backward() against finite differences, in float64 — and explain the kinks.

For a random fixed weighting R of the output, L(x) = Σ R · fn(x) is a scalar whose gradient
backward() computes in one pass; central differences (L(x + ε) - L(x - ε)) / 2ε estimate the
same numbers one element at a time. A wrong derivative shows up for almost every R.

Where fn is not differentiable — a relu input exactly 0, a tie in a max-pool window — the
central difference averages two slopes and backward, like PyTorch's, takes one of them (or a
subgradient between them), so the two disagree without anything being wrong. The same three
evaluations give the one-sided derivatives (L(x) - L(x - ε)) / ε and (L(x + ε) - L(x)) / ε:
an element whose left and right derivatives differ, with backward's value between them, is a
kink, reported with the op that is at its kink and what its backward chose (kinks.py). Every
other disagreement is a failure, as before. (PyTorch's gradcheck fails at a kink; this one
passes and warns: see docs/visualization.md.)
"""
import dataclasses
import warnings

import numpy as np

from . import kinks
from .args import check_number, plural
from .engine import Tensor, _node_of, run_backward
from .grad_mode import enable_grad, no_grad

SHOWN = 5  # kinks listed in the warning


class GradcheckError(AssertionError):
    """backward() and the finite differences disagree."""


class NondifferentiablePointWarning(UserWarning):
    """gradcheck passed only because, at some elements, fn has a kink and backward's value lies
    between the left and right derivatives there (``gradcheck_report(...).kinks`` lists them)."""


@dataclasses.dataclass(frozen=True)
class Kink:
    """An element where fn is not differentiable and backward chose a valid one-sided
    derivative or subgradient: ``backward`` lies between ``left`` and ``right``."""
    input: int  # the position of the tensor in fn's inputs
    index: tuple  # the element of that tensor
    left: float  # (L(x) - L(x - ε)) / ε
    right: float  # (L(x + ε) - L(x)) / ε
    backward: float  # what backward() computed for it
    numeric: float  # the central difference, (left + right) / 2
    reason: str  # which op is at its kink, and what its backward chose
    # The central difference agreed with backward anyway (a tie split in half is exactly the
    # average of the two slopes): this kink did not need excusing.
    central_agrees: bool = False

    def __str__(self) -> str:
        return (f"input {self.input} element {self.index}: {self.reason}; left derivative "
                f"{self.left:.6g}, right derivative {self.right:.6g}; backward gave "
                f"{self.backward:.6g}")


@dataclasses.dataclass(frozen=True)
class Failure:
    """An element where backward and the finite differences disagree with no kink to explain
    it — or with a kink, but backward's value outside [left, right] (``reason`` says which op)."""
    input: int
    index: tuple
    shape: tuple  # the input's shape
    backward: float
    numeric: float
    difference: float  # |backward - numeric|
    bound: float  # atol + rtol·|numeric|, which the difference exceeds
    left: float
    right: float
    reason: str  # "" where fn is smooth; else the kink backward's value is outside of

    def __str__(self) -> str:
        text = (f"input {self.input} (shape {self.shape}) element {self.index}: backward gives "
                f"{self.backward:.8g} but finite differences give {self.numeric:.8g} (difference "
                f"{self.difference:.3g} > atol + rtol·|numeric| = {self.bound:.3g})")
        if self.reason:
            text += (f"; a kink: {self.reason}; but {self.backward:.6g} is outside [left, right] "
                     f"= [{min(self.left, self.right):.6g}, {max(self.left, self.right):.6g}]")
        return text


@dataclasses.dataclass
class GradcheckReport:
    """What gradcheck found: ``failures`` (empty: it passes), ``kinks``, and the numbers behind
    them — the output weighting R, and per checked input backward's and the central
    differences' gradients of L = Σ R · fn(x)."""
    failures: list
    kinks: list
    output_weights: np.ndarray
    analytical: dict  # input position -> backward's gradient
    numerical: dict  # input position -> central differences

    @property
    def passed(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        lines = [f"gradcheck: {'passed' if self.passed else 'FAILED'}: "
                 f"{plural(len(self.failures), 'failure')}, {plural(len(self.kinks), 'kink')}"]
        lines += [f"  failure: {f}" for f in self.failures]
        lines += [f"  kink: {k}" for k in self.kinks]
        return "\n".join(lines)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0, raise_exception=True) -> bool:
    """Compare the gradient of ``fn(*inputs)`` with central differences for every input.

    ``inputs`` are Tensors; those with ``requires_grad=True`` are checked and must be float64.
    Returns True, or raises GradcheckError saying which input and element differ and by how much
    (returns False instead with ``raise_exception=False``). Elements where fn has a kink and
    backward chose a valid one-sided derivative pass, with one NondifferentiablePointWarning
    that says which op and what it chose (``gradcheck_report`` gives them all).
    """
    report = _check("gradcheck", fn, inputs, eps, atol, rtol, seed)
    if report.failures:
        first = report.failures[0].input
        mine = [f for f in report.failures if f.input == first]
        worst = max(mine, key=lambda f: f.difference - f.bound)
        size = int(np.prod(worst.shape))
        message = (f"gradcheck: {worst}; {len(mine)} of {plural(size, 'element')} "
                   f"{'differs' if size == 1 else 'differ'}")
        if report.kinks:
            at = "is at a kink" if len(report.kinks) == 1 else "are at kinks"
            message += (f" (and {plural(len(report.kinks), 'element')} {at} where backward's "
                        f"value is valid: see gradcheck_report)")
        if raise_exception:
            raise GradcheckError(message)
        return False
    excused = [k for k in report.kinks if not k.central_agrees]
    if excused:  # passed only thanks to them: say so, with the reasons
        listed = "\n  ".join(str(k) for k in excused[:SHOWN])
        more = len(excused) - SHOWN
        warnings.warn(f"gradcheck passed, but fn is not differentiable at "
                      f"{plural(len(excused), 'element')}, where the central difference "
                      f"averages two slopes and backward took one of them (or a value "
                      f"between):\n  {listed}"
                      + (f"\n  ... and {more} more (gradcheck_report lists them)" if more > 0
                         else ""), NondifferentiablePointWarning, stacklevel=2)
    return True


def gradcheck_report(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0) -> GradcheckReport:
    """gradcheck's findings without raising or warning: the failures, the kinks (each with its
    left and right derivatives, backward's value and the reason), and the gradients compared."""
    return _check("gradcheck_report", fn, inputs, eps, atol, rtol, seed)


def _check(op, fn, inputs, eps, atol, rtol, seed) -> GradcheckReport:
    if not callable(fn):
        raise TypeError(f"{op}: fn must be callable, got {type(fn).__name__}")
    eps = check_number(op, "eps", eps)
    if not (eps > 0 and np.isfinite(eps)):  # a zero step divides by zero
        raise ValueError(f"{op}: eps must be a positive finite step, got {eps}")
    for name, value in (("atol", atol), ("rtol", rtol)):
        check_number(op, name, value, low=0.0, error=RuntimeError)
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    checked = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError(f"{op}: no input has requires_grad=True, so there is nothing to check")
    for k in checked:
        if inputs[k].dtype != np.float64:
            raise TypeError(f"{op}: input {k} has dtype {inputs[k].dtype}; finite "
                            f"differences need float64 (pass x.double(), and a float64 model: "
                            f"model.double())")

    output = fn(*inputs)
    if not isinstance(output, Tensor):
        raise TypeError(f"{op}: fn must return a Tensor, got {type(output).__name__}")
    weights = np.random.default_rng(seed).standard_normal(output.shape)

    def weighted(out: Tensor) -> float:
        return float(np.sum(weights * out._data))

    at_x = weighted(output)
    # capture: backward's gradients come back here, and no input's .grad is touched; the graph
    # is retained because the kink analysis reads what its ops saved at x
    captured = {id(_node_of(inputs[k])): None for k in checked}
    run_backward([output], [weights], retain_graph=True, capture=captured)
    report = GradcheckReport([], [], weights, {}, {})
    graph_at_x = None  # what each op of fn's graph at x received, read when an element needs it

    for k in checked:
        data = inputs[k]._data
        grad = captured[id(_node_of(inputs[k]))]
        analytical = np.zeros(data.shape) if grad is None else np.asarray(grad, np.float64)
        plus, minus = np.empty(data.shape), np.empty(data.shape)
        with no_grad():
            for index in np.ndindex(data.shape):
                original = data[index]
                try:
                    data[index] = original + eps
                    plus[index] = weighted(fn(*inputs))
                    data[index] = original - eps
                    minus[index] = weighted(fn(*inputs))
                finally:
                    data[index] = original
        numerical = (plus - minus) / (2 * eps)
        left, right = (at_x - minus) / eps, (plus - at_x) / eps
        report.analytical[k], report.numerical[k] = analytical, numerical
        error = np.abs(analytical - numerical)
        bound = atol + rtol * np.abs(numerical)
        failed = error > bound
        # Where the slope jumps, left and right differ by more than the tolerance (a smooth
        # function's differ by about ε·f'', far less). Only these and the failures get a closer
        # look: a kink where the central difference happens to agree (a tie split in half is
        # exactly the average of the two slopes) is reported too, when an op explains it.
        jumps = np.abs(right - left) > atol + rtol * np.maximum(np.abs(left), np.abs(right))
        for index in map(tuple, np.argwhere(failed | jumps)):
            lo, hi = sorted((left[index], right[index]))
            value, reason = analytical[index], ""
            if jumps[index]:  # which op is at its kink, and what did it choose?
                if graph_at_x is None:
                    graph_at_x = kinks.recorded_inputs(output)
                reason, known = _why(fn, inputs, data, index, eps, graph_at_x)
                slack = atol + rtol * max(abs(lo), abs(hi))
                if lo - slack <= value <= hi + slack and (failed[index] or known):
                    report.kinks.append(Kink(k, _ints(index), left[index], right[index], value,
                                             numerical[index], reason, not failed[index]))
                    continue
            if failed[index]:
                report.failures.append(Failure(
                    k, _ints(index), data.shape, value, numerical[index], error[index],
                    bound[index], left[index], right[index], reason))
    return report


def _why(fn, inputs, data, index, eps, at_x) -> tuple:
    """(reason, known) for a kink at ``data[index]``: the ops at their kinks, from fn's graph
    at x and at x ∓ ε (kinks.py; known), or what can be said without one (not known)."""
    original = data[index]
    try:
        with enable_grad():
            data[index] = original - eps
            below = kinks.recorded_inputs(fn(*inputs))
            data[index] = original + eps
            above = kinks.recorded_inputs(fn(*inputs))
    finally:
        data[index] = original
    reasons, unknown = kinks.explain(at_x, below, above)
    if reasons:
        return "; ".join(reasons), True
    text = "left and right derivatives differ, so fn is not differentiable here"
    if unknown:  # ops that declare no kinks (kinks.py): one of them may have one here
        what = "a Function" if len(unknown) == 1 else "Functions"
        return text + f"; it goes through {', '.join(unknown)}, {what} this check has no kink " \
                      f"rule for", False
    return text + "; no op with a known kink rule is at its kink", False


def _ints(index) -> tuple:
    return tuple(int(i) for i in index)
