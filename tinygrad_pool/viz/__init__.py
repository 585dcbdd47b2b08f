"""Pictures of the graph the engine recorded: ``draw_graph``, ``save_graph`` (see ``viz/graph.py``),
and the backward pass replayed frame by frame: ``replay`` (see ``viz/replay_page.py``).

    from tinygrad_pool import draw_graph, save_graph   # or: from tinygrad_pool.viz import ...
    draw_graph(loss, show_values=True)                 # a graphviz.Digraph; Jupyter shows it inline
    save_graph(loss, "graph.png", show_saved=True)     # through Graphviz's `dot` program
    replay(loss, "backprop.html")                      # the backward pass: one page, a frame per node

This package is the only part of tinygrad_pool that uses the ``graphviz`` Python package, and it
is imported lazily: ``import tinygrad_pool`` imports neither it nor ``graphviz``; the first use of
``tinygrad_pool.draw_graph``, ``save_graph`` or ``GraphvizNotFound`` imports it. So tinygrad_pool
imports, trains and checkpoints without ``graphviz`` installed. Importing this package never
fails for want of it either: ``draw_graph`` and ``save_graph`` then raise ModuleNotFoundError (an
ImportError) when called, with the message ``MISSING_PACKAGE``, which names the install command.

Two things can be missing, and each has its own error:
  * the ``graphviz`` Python package (writes DOT text): ModuleNotFoundError, ``MISSING_PACKAGE``;
  * Graphviz's ``dot`` program (turns DOT into pixels): ``GraphvizNotFound``, a RuntimeError,
    raised only when rendering (``save_graph``, ``.render``, ``.pipe``); ``draw_graph(...).source``
    still works without it.
``replay`` runs the `dot` program itself, without the Python package, so it works either way.
"""
from __future__ import annotations

from .dot import MISSING_PACKAGE, GraphvizNotFound, _graphviz

if _graphviz is not None:
    from .graph import draw_graph, save_graph  # noqa: E402  (STYLE stays in .graph)
    from .fan_in_figure import fan_in  # noqa: E402  (a Graphviz picture too)
else:
    def draw_graph(tensor, **kwargs):
        """Stands in for draw_graph while the graphviz Python package is not installed."""
        raise ModuleNotFoundError(MISSING_PACKAGE, name="graphviz")

    def save_graph(tensor, path, **kwargs):
        """Stands in for save_graph while the graphviz Python package is not installed."""
        raise ModuleNotFoundError(MISSING_PACKAGE.replace("draw_graph needs", "save_graph needs", 1),
                                  name="graphviz")

    def fan_in(output, **kwargs):
        """Stands in for fan_in while the graphviz Python package is not installed."""
        raise ModuleNotFoundError(MISSING_PACKAGE.replace("draw_graph needs", "fan_in needs", 1),
                                  name="graphviz")

from .replay_page import Replay, replay  # noqa: E402

__all__ = ["draw_graph", "save_graph", "replay", "Replay", "fan_in", "GraphvizNotFound",
           "MISSING_PACKAGE"]
