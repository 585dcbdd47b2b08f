"""Graph pictures are optional: tinygrad_pool imports and trains without the `graphviz` Python
package, only ``tinygrad_pool.viz`` ever imports it, and only on first use of the pictures.

Each check that needs a fresh interpreter (what ``import tinygrad_pool`` imports, or a Python
without graphviz) runs in a subprocess. There the package is hidden by a ``sys.meta_path`` finder
placed before all others, which answers every import of ``graphviz`` as if it were not installed.
"""
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import graphviz
import pytest

import tinygrad_pool.viz
import tinygrad_pool.viz.graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tinygrad_pool"

# Hides graphviz (and anything under it) from the interpreter it is run in: installed before any
# other import, so the package behaves as on a machine where it was never installed.
HIDE_GRAPHVIZ = '''
import sys

class HideGraphviz:
    blocked = ("graphviz",)

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked or name in self.blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, HideGraphviz())
'''

# A few steps of linear regression with nn.Linear and SGD; prints the losses.
TRAIN = '''
import numpy as np
import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn, optim, Tensor, tensor

tinygrad_pool.manual_seed(0)
rng = np.random.default_rng(0)
x = tensor(rng.standard_normal((32, 3)).astype(np.float32))
y = tensor((x.numpy() @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.25).astype(np.float32))
model = nn.Linear(3, 1)
opt = optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(float(loss.numpy()))
loss = F.mse_loss(model(x), y)  # one more graph, left un-backwarded, to draw
assert losses[-1] < 0.1 * losses[0], losses
'''


def run_python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter from the repository root; fail with its output."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


# ---- without the graphviz package ------------------------------------------------------------
def test_tinygrad_pool_imports_and_trains_without_graphviz():
    run_python(HIDE_GRAPHVIZ + '''
import tinygrad_pool
assert "graphviz" not in sys.modules
''' + TRAIN + '''
assert "graphviz" not in sys.modules
assert issubclass(tinygrad_pool.GraphvizNotFound, RuntimeError)
for call in (lambda: tinygrad_pool.draw_graph(loss), lambda: tinygrad_pool.save_graph(loss, "g.png")):
    try:
        call()
    except ImportError as error:
        message = str(error)
        assert "pip install graphviz" in message and "apt-get install graphviz" in message, message
    else:
        raise AssertionError("drawing without graphviz did not raise ImportError")
assert "graphviz" not in sys.modules
''')


def test_viz_without_graphviz_raises_the_install_command_only_when_drawing():
    run_python(HIDE_GRAPHVIZ + '''
import tinygrad_pool.viz as viz  # importing the package itself works: nothing is drawn yet
from tinygrad_pool import tensor
assert "graphviz" not in sys.modules
assert "tinygrad_pool.viz.graph" not in sys.modules
assert issubclass(viz.GraphvizNotFound, RuntimeError)
assert "pip install graphviz" in viz.MISSING_PACKAGE

t = tensor([1.0, 2.0], requires_grad=True) * 3
for call, name in ((lambda: viz.draw_graph(t, show_values=True), "draw_graph"),
                   (lambda: viz.save_graph(t, "never_written.png"), "save_graph")):
    try:
        call()
    except ImportError as error:
        assert isinstance(error, ModuleNotFoundError) and error.name == "graphviz"
        assert f"{name} needs the graphviz Python package: pip install graphviz" in str(error), error
    else:
        raise AssertionError(f"{name} without graphviz did not raise ImportError")

try:  # the module itself cannot load, and says why in the same words
    import tinygrad_pool.viz.graph
except ModuleNotFoundError as error:
    assert error.name == "graphviz" and "pip install graphviz" in str(error), error
else:
    raise AssertionError("tinygrad_pool.viz.graph imported without graphviz")

import os
assert not os.path.exists("never_written.png")
assert "graphviz" not in sys.modules
''')


def test_a_broken_graphviz_install_is_reported_as_itself():
    # graphviz is there, but a module it needs is not: that error must not be hidden behind
    # "pip install graphviz".
    run_python(HIDE_GRAPHVIZ.replace('blocked = ("graphviz",)', 'blocked = ("graphviz.backend",)')
               + '''
try:
    import tinygrad_pool.viz
except ModuleNotFoundError as error:
    assert error.name == "graphviz.backend", error
    assert "pip install graphviz" not in str(error), error
else:
    raise AssertionError("a broken graphviz went unnoticed")
''')


# ---- with graphviz installed: imported on first use only -------------------------------------
def test_import_tinygrad_pool_leaves_graphviz_unimported_until_draw_graph():
    run_python('''
import sys
import tinygrad_pool
assert "graphviz" not in sys.modules, "import tinygrad_pool imported graphviz"
assert "tinygrad_pool.viz" not in sys.modules, "import tinygrad_pool imported tinygrad_pool.viz"
''' + TRAIN + '''
assert "graphviz" not in sys.modules, "training imported graphviz"

dot = tinygrad_pool.draw_graph(loss)
assert "graphviz" in sys.modules and "tinygrad_pool.viz" in sys.modules
assert "<B>MSELoss</B>" in dot.source and "<B>weight</B>" in dot.source

import graphviz
import tinygrad_pool.viz
assert tinygrad_pool.draw_graph is tinygrad_pool.viz.draw_graph
assert tinygrad_pool.save_graph is tinygrad_pool.viz.save_graph
assert tinygrad_pool.GraphvizNotFound is tinygrad_pool.viz.GraphvizNotFound
assert issubclass(tinygrad_pool.GraphvizNotFound, graphviz.ExecutableNotFound)
''')


def test_from_import_of_the_drawing_names_works():
    run_python('''
from tinygrad_pool import GraphvizNotFound, draw_graph, save_graph
from tinygrad_pool.viz import draw_graph as viz_draw_graph
assert draw_graph is viz_draw_graph and callable(save_graph)
assert issubclass(GraphvizNotFound, RuntimeError)
''')


def test_viz_exports_the_real_functions_when_graphviz_is_installed():
    viz = tinygrad_pool.viz
    assert viz.draw_graph is viz.graph.draw_graph
    assert viz.save_graph is viz.graph.save_graph
    assert viz.graph.GraphvizNotFound is viz.GraphvizNotFound
    assert issubclass(viz.GraphvizNotFound, graphviz.ExecutableNotFound)
    assert issubclass(viz.GraphvizNotFound, RuntimeError)
    assert "apt-get install graphviz" in str(viz.GraphvizNotFound())
    assert set(viz.graph.STYLE) >= {"parameter", "constant", "op", "argmax"}


# ---- nothing else imports graphviz, or viz at import time ------------------------------------
TOP_LEVEL_IMPORT = re.compile(r"^(?:import|from)\s[^\n#]*\b(graphviz|viz)\b", re.M)


@pytest.mark.parametrize("path", sorted(p.relative_to(PACKAGE).as_posix()
                                        for p in PACKAGE.rglob("*.py") if "viz" not in p.parts),
                         ids=str)
def test_only_viz_imports_graphviz(path):
    # Indented imports (inside a function, such as a module __getattr__) are lazy and allowed.
    found = TOP_LEVEL_IMPORT.findall((PACKAGE / path).read_text(encoding="utf-8"))
    assert not found, f"tinygrad_pool/{path} imports {found} at import time"
