"""Anomaly mode: where each op was created, and the first NaN or inf, named by op and line.

    with autograd.detect_anomaly():
        loss = model(x)      # every node notes the user's line that made it (node.origin["line"])
        loss.backward()      # the first node that sends a NaN/inf gradient raises, naming it

While it is on, every op's output is checked as it is computed, and every gradient a node sends
to its inputs as backward computes it. The first non-finite value raises RuntimeError naming
the op, the input the value came from (or that every input was finite, with the arithmetic that
broke: ``log(0.0) = -inf``) and the user's line that created the op. ``check_nan=False`` only
records the lines. The engine calls in through ``tensor._anomaly`` (None while off: one
comparison per op), so this module is a layer above it, as the rest of ``autograd`` is.

What is checked, and how it differs from torch (which checks only backward, and only for NaN):
- Forward too, and inf as well as NaN: a value that is already infinite in forward is usually
  the cause of the NaN gradient, and its line is where to look. Ops under ``no_grad`` are
  checked too (evaluation, a custom Function's forward); an in-place op on tensors that record
  nothing writes straight into memory without passing the check.
- An op whose input already holds a NaN/inf raises too, saying so: anomaly mode stops every
  op that made one, so such an input came in from outside (data, a tensor computed before the
  mode was on), and its first use is the place to report.
- Backward: the first sentence is torch's ("Function 'SqrtBackward0' returned nan values in
  its 0th output."); the ops computing gradients inside a backward pass are not checked one by
  one, the node whose backward they make up is. Gradients already accumulated into leaves
  earlier in the same pass stay there (torch's engine does the same); the failing node has
  sent nothing, and keeps its saved buffers.
- The mode is process-wide, as torch's: switched on in one thread, it checks every thread.
"""
from __future__ import annotations

import collections
import linecache
import os
import sys

import numpy as np

from ..engine import Tensor, hooks, run_backward
from ..grad_mode import _ModeSwitch
from ..args import PACKAGE_DIR, check_flag, warn

_RUN_BACKWARD = run_backward.__code__
_CHECK_NAN = [True]  # is_anomaly_check_nan_enabled(); torch keeps it while the mode is off


def is_anomaly_enabled() -> bool:
    """True while anomaly mode is on (in any thread: the mode is process-wide, as torch's)."""
    return hooks.anomaly is not None


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode raises on NaN/inf (False: it only records where ops were made)."""
    return _CHECK_NAN[0]


def _set(enabled: bool, check_nan: bool) -> None:
    _CHECK_NAN[0] = check_nan
    hooks.anomaly = (_CHECKING if check_nan else _RECORDING) if enabled else None


class detect_anomaly(_ModeSwitch):
    """Anomaly mode for a block (``with``) or a function (``@detect_anomaly()``), restoring
    the mode it found when it ends, also through an exception, so blocks nest. (torch 2's
    ``detect_anomaly`` is a context manager only.)"""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_flag("detect_anomaly", "check_nan", check_nan)
        warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
             "only be enabled for debugging.")

    def __enter__(self):
        self._previous = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc) -> bool:
        _set(*self._previous)
        return False

    def clone(self):
        switch = object.__new__(type(self))  # (no second warning for each decorated call)
        switch.check_nan = self.check_nan
        return switch


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly mode now; used with ``with``, the mode it
    found comes back when the block ends, as torch's does."""

    def __init__(self, mode: bool, check_nan: bool = True):
        mode = check_flag("set_detect_anomaly", "mode", mode)
        check_nan = check_flag("set_detect_anomaly", "check_nan", check_nan)
        self._previous = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        _set(*self._previous)
        return False


class SourceLine(collections.namedtuple("SourceLine", "filename lineno text")):
    """Where an op was created: ``(filename, lineno, source text)`` of the user's line, plus the
    function it is in (``function``) for messages, printed as a traceback line."""

    def __str__(self) -> str:
        return f'File "{self.shown_filename}", line {self.lineno}, in {self.function}: {self.text}'

    @property
    def shown_filename(self) -> str:
        """The file as a learner reads it: relative to the working folder when it lies inside
        it (``examples/net.py``; a picture of it is then the same on every machine), else as
        Python gave it."""
        try:
            relative = os.path.relpath(self.filename)
        except ValueError:  # (another drive)
            return self.filename
        return self.filename if relative.startswith("..") else relative


def _caller():
    """The user's line that is running the current op — the first frame outside this package,
    so a layer's or F.*'s op gets the user's ``x = self.conv(x)`` — and whether a backward
    pass is running (its ops are checked as the node they compute the gradient of)."""
    frame, user = sys._getframe(2), None
    while frame is not None:
        code = frame.f_code
        if code is _RUN_BACKWARD:
            return user, True
        if user is None and not code.co_filename.startswith(PACKAGE_DIR):
            user = frame
        frame = frame.f_back
    if user is None:
        return None, False
    code, lineno = user.f_code, user.f_lineno
    line = SourceLine(code.co_filename, lineno,
                      linecache.getline(code.co_filename, lineno, user.f_globals).strip())
    line.function = code.co_name
    return line, False


class _Checker:
    """What the engine calls while anomaly mode is on: ``forward`` after every op,
    ``backward`` as the observer of every backward pass."""

    def __init__(self, check_nan: bool):
        self.check_nan = check_nan

    def forward(self, ctx, inputs, result) -> None:
        """Note the user's line on a recorded node; raise if the output is not finite."""
        recorded = "edges" in ctx.__dict__
        out = result._data
        check = self.check_nan and out.dtype.kind in "fc" and not np.isfinite(out).all()
        if not (recorded or check):
            return
        line, in_backward = _caller()
        if recorded and line is not None:
            if ctx.origin is None:
                ctx.origin = {}
            ctx.origin.setdefault("line", line)
        if check and not in_backward:
            raise RuntimeError(f"{_forward_message(ctx, inputs, out)}\n  {_created(line)}")

    def backward(self, node, grad_output, input_grads) -> None:
        """Raise at the first gradient with a NaN/inf that ``node`` sends to an input."""
        if input_grads is None or not self.check_nan:  # a leaf: it only receives
            return
        for k, grad in enumerate(input_grads):
            if isinstance(grad, Tensor):  # (under create_graph)
                grad = grad._data
            if grad is None or grad.dtype.kind not in "fc" or np.isfinite(grad).all():
                continue
            message = _backward_message(node, k, grad, grad_output)
            if node.origin is None:
                node.origin = {}
            node.origin["anomaly"] = message  # for draw_graph(..., anomalies=True)
            raise RuntimeError(message)

    def chain(self, observe):
        """An observer that calls ``observe`` (a picture sees the bad gradient too) and then
        checks."""
        def observe_and_check(node, grad_output, input_grads):
            observe(node, grad_output, input_grads)
            self.backward(node, grad_output, input_grads)
        return observe_and_check


_CHECKING, _RECORDING = _Checker(True), _Checker(False)


# ---- the messages ---------------------------------------------------------------------------
def _first_bad(array: np.ndarray) -> tuple:
    """The index of the first NaN (torch reports NaN), else of the first inf."""
    bad = np.isnan(array)
    if not bad.any():
        bad = ~np.isfinite(array)
    return tuple(int(i) for i in np.unravel_index(np.argmax(bad), array.shape))


def _at(index: tuple) -> str:
    return f" at {list(index)}" if index else ""


def _broadcast_index(index: tuple, shape: tuple) -> tuple:
    """The element of an input of ``shape`` that NumPy broadcast to output element ``index``."""
    return tuple(0 if n == 1 else i for i, n in zip(index[len(index) - len(shape):], shape))


def _forward_message(ctx, inputs, out: np.ndarray) -> str:
    index = _first_bad(out)
    head = f"Function '{ctx.name}' returned {out[index]} values in forward"
    head += f", first at {list(index)}" if index else ""
    for k, t in enumerate(inputs):
        a = t._data
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            j = _first_bad(a)
            return (f"{head}: input {k} already holds {a[j]}{_at(j)}. It came in from outside the "
                    f"ops anomaly mode checked: data, a tensor computed before anomaly mode was on "
                    f"(or with check_nan=False), or a value written into ._data")
    return f"{head}: {_finite_inputs_reason(ctx, inputs, out, index)}"


def _finite_inputs_reason(ctx, inputs, out: np.ndarray, index: tuple) -> str:
    """Why an op made a NaN/inf out of finite inputs: the arithmetic, for an op that says it is
    elementwise (each output element from the inputs' elements at the same broadcast place:
    ``Node.elementwise``); for any other, the overflow limit of the dtype."""
    shapes = [t._data.shape for t in inputs]
    if ctx.elementwise and all(
            len(s) <= out.ndim and np.broadcast_shapes(s, out.shape) == out.shape for s in shapes):
        places = [_broadcast_index(index, s) for s in shapes]
        values = [str(t._data[j]) for t, j in zip(inputs, places)]
        held = " and ".join(f"input {k} holds {v}{_at(j)}"
                            for k, (v, j) in enumerate(zip(values, places)))
        attrs = [f"{name}={value}" for name, value in ctx.attrs.items()  # (str: no np.float64(…))
                 if isinstance(value, (bool, int, float))]
        return f"{held}, and {ctx.name.lower()}({', '.join(values + attrs)}) = {out[index]}"
    reason = "every input is finite, so the op itself "
    if np.isnan(out[index]):
        return reason + "computed an undefined value (0/0, or inf - inf or 0·inf after an overflow)"
    largest = max((float(np.abs(t._data).max()) for t in inputs
                   if t._data.dtype.kind in "fc" and t._data.size), default=0.0)
    return (reason + f"overflowed: {out.dtype} holds at most {np.finfo(out.dtype).max:.4g}, and "
            f"the inputs' largest magnitude is {largest:.4g}")


def _backward_message(node, k: int, grad: np.ndarray, grad_output) -> str:
    index = _first_bad(grad)
    kind = "nan" if np.isnan(grad[index]) else "inf"
    name = node.name
    # torch's names: LogBackward0 for an op, <Name>Backward for a custom Function (ours too)
    torch_name = name if name.endswith("Backward") else f"{name}Backward0"
    parent = node.parents[k]
    # (a large input the graph let go of, tensor.ReleasedValue, has no value left to show)
    where = f", where input {k} holds {parent._data[index]}" \
        if parent.shape == grad.shape and not getattr(parent, "value_freed", False) else ""
    arriving = grad_output._data if isinstance(grad_output, Tensor) else grad_output
    if arriving.dtype.kind not in "fc":  # (the per-output slots of a custom Function)
        arriving = "it computed that from the gradients of its outputs"
    elif np.isfinite(arriving).all():
        arriving = "the gradient arriving at its output is finite"
    else:
        j = _first_bad(arriving)
        arriving = (f"the gradient arriving at its output already holds {arriving[j]}{_at(j)} "
                    f"(the gradient passed to backward())")
    origin = node.origin or {}
    return (f"Function '{torch_name}' returned {kind} values in its {k}th output. "
            f"{name} sent {grad[index]} to its input {k}{_at(index)}{where}; {arriving}.\n"
            f"  {_created(origin.get('line'))}")


def _created(line) -> str:
    if line is None:
        return ("The op's line was not recorded: it was created while anomaly mode was off, or "
                "by a custom autograd.Function")
    return f"The op was created at {line}"
