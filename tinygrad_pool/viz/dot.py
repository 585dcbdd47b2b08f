"""Graphviz, which the pictures need: the ``graphviz`` Python package (it writes DOT text) and
the `dot` program (it turns DOT into pixels), and the error for each one missing."""
from __future__ import annotations

MISSING_PACKAGE = (
    "draw_graph needs the graphviz Python package: pip install graphviz "
    "(and Graphviz's `dot` program to render pictures: sudo apt-get install graphviz on "
    "Debian/Ubuntu, brew install graphviz on macOS). The rest of tinygrad_pool works without it.")

try:
    import graphviz as _graphviz
except ModuleNotFoundError as _error:
    if _error.name != "graphviz":
        raise  # graphviz is there but something it needs is not: show that, not our hint
    _graphviz = None


class GraphvizNotFound(_graphviz.ExecutableNotFound if _graphviz is not None else RuntimeError):
    """The `dot` program is missing: the DOT text exists, but nothing can render it.

    A RuntimeError, and, when the graphviz package is installed, a subclass of its own
    ExecutableNotFound, so code that already catches that keeps working. The class exists either
    way, so ``except tinygrad_pool.GraphvizNotFound`` never fails for want of the package.
    """

    def __init__(self, program: str = "dot"):
        RuntimeError.__init__(self, (
            f"Graphviz's `{program}` program was not found on PATH, so the graph cannot be "
            f"rendered (the Python package `graphviz` only writes DOT text). Install Graphviz: "
            f"`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
            f"`conda install -c conda-forge graphviz`, or https://graphviz.org/download/ "
            f"(Windows: add its bin folder to PATH). The DOT text is still available as "
            f"draw_graph(...).source."))
