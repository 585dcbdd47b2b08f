"""Which cells of a max pool's input its backward pays: the article's "blue circles".

    chosen, tied = pool_marks(x, argmax, node.attrs)   # x: the pooled input, argmax as saved
    chosen = chosen_cells(x.shape, argmax)               # the argmax alone (any window geometry)

``chosen`` is each window's stored argmax, the cell that ties="first" (PyTorch's rule) pays;
``tied`` every cell equal to the max of a window containing it, the cells that ties="split" and
ties="all" pay too. draw_graph (viz/graph.py) and replay (viz/replay.py) both light these
cells, so the rule is written once, here: pure NumPy, importing neither the engine nor graphviz.
"""
from __future__ import annotations

import numpy as np


def pool_marks(x: np.ndarray, argmax: np.ndarray, attrs: dict) -> tuple:
    """(chosen, tied): boolean masks over the pooled (N, C, H, W) input ``x``.

    ``argmax`` is the op's saved index per window, flat within each H×W plane; ``attrs`` its
    ``kernel_size``, ``stride``, ``padding`` and ``dilation`` (pairs). A cell ties when it equals
    the max of some window it lies in, by the same comparison backward makes (fast/pool.py's
    route_tied): padding never ties, and a NaN window ties nowhere (NaN ≠ NaN), so its gradient
    follows the argmax — which is why ``chosen`` is not always inside ``tied``.
    """
    n, c, h, w = x.shape
    chosen = chosen_cells(x.shape, argmax)
    flat_argmax = argmax.reshape(n, c, -1).astype(np.intp)
    window_max = np.take_along_axis(x.reshape(n, c, h * w), flat_argmax, axis=2).reshape(argmax.shape)

    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = (attrs[k] for k in ("kernel_size", "stride", "padding",
                                                                 "dilation"))
    ho, wo = argmax.shape[2:]
    tied = np.zeros((n, c, h, w), dtype=bool)
    for i in range(kh):
        for j in range(kw):  # tap (i, j) of every window at once, as the op itself loops
            rows, cols = np.arange(ho) * sh - ph + i * dh, np.arange(wo) * sw - pw + j * dw
            rows_in, cols_in = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)  # not padding
            r, cc = rows[rows_in][:, None], cols[cols_in][None, :]
            tied[:, :, r, cc] |= x[:, :, r, cc] == window_max[:, :, rows_in][:, :, :, cols_in]
    return chosen, tied


def chosen_cells(shape: tuple, argmax: np.ndarray) -> np.ndarray:
    """Boolean mask over an (N, C, H, W) input: the cells some window's argmax (flat within each
    H×W plane, as max pooling saves it) names."""
    n, c, h, w = shape
    chosen = np.zeros((n, c, h * w), dtype=bool)
    np.put_along_axis(chosen, argmax.reshape(n, c, -1).astype(np.intp), True, axis=2)
    return chosen.reshape(n, c, h, w)
