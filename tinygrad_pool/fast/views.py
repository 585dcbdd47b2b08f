"""Views that NumPy makes through Python, made by the ndarray constructor instead.

``np.broadcast_to`` builds an iterator and checks its arguments in several calls, whatever the
array's size; the same read-only view from ``windows.read_only_view`` is one constructor call
(measured: see benchmarks/README.md). A shape that does not broadcast goes to NumPy, which
gives NumPy's error.
"""
import numpy as np

from ..windows import read_only_view


def broadcast_to(x: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(x, shape)``: a read-only view repeating x along new leading axes and
    along its axes of length 1 (stride 0 there). Every training step broadcasts the loss's
    gradient back through it, so its fixed cost counts on small networks (measured: see
    benchmarks/README.md)."""
    lead = len(shape) - x.ndim
    if lead < 0 or (shape and min(shape) < 0) \
            or any(n != 1 and n != m for n, m in zip(x.shape, shape[lead:])):
        return np.broadcast_to(x, shape)
    strides = (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(x.shape, x.strides))
    return read_only_view(x, shape, strides)
