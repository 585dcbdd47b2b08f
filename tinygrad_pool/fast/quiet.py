"""``np.errstate(all="ignore")`` for the hot paths, without its Python set-up on each entry.

Infinities and NaNs are values like any other, as in torch: backward (once per pass) and the
ops whose results may overflow or divide by zero (sum, pow, div, exp, log, ...) run with
NumPy's floating-point warnings off. ``np.errstate`` builds its settings in Python each time
it is entered, a noticeable share of a small graph's backward pass, and a training step
enters it several times. NumPy 2 keeps
these settings in a context variable; ``quiet()`` sets it to what NumPy's own
``_make_extobj(all="ignore")`` makes from the current settings (so a buffer size or error
callback the user set is kept) and resets it on exit (measured: see benchmarks/README.md).
On a NumPy without that variable (1.x) it is ``np.errstate`` itself.
"""
import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - NumPy 1.x
    _extobj_contextvar = _make_extobj = None


class _Quiet:
    """The context: warnings off on entry, the previous settings back on exit (nests, and
    each entry is its own object, so threads and re-entry never share a token)."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = _extobj_contextvar.set(_make_extobj(all="ignore"))

    def __exit__(self, *exc_info):
        _extobj_contextvar.reset(self.token)


def quiet():
    """A context in which NumPy neither warns nor raises on floating-point errors."""
    return _Quiet() if _extobj_contextvar is not None else np.errstate(all="ignore")
