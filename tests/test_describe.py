"""Ops describe themselves: the pictures (viz/), gradcheck's kink report (kinks.py,
gradient_check.py) and anomaly mode (autograd/anomaly.py) ask an op about itself by attribute —
``elementwise``, ``kink_*``, ``window_cells``, ``weight_input``, ``padding_per_side`` ... — and
never branch on its class name or the module it lives in. Read from the source (``ast``), so a
name compared anywhere in those files counts; a user's own Node subclass opts in by declaring
the same attributes."""
import ast
import pathlib
import sys
import warnings

import numpy as np
import pytest

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Node, autograd, tensor
from tinygrad_pool.gradient_check import gradcheck_report
from tinygrad_pool.ops import activation, elementwise
from tinygrad_pool.ops.matmul import MatMul
from tinygrad_pool.ops.reduce import Sum
from tinygrad_pool.viz.summary import argument, arguments

PACKAGE = pathlib.Path(tp.__file__).resolve().parent
EXPLAINERS = sorted(PACKAGE.glob("viz/*.py")) + [
    PACKAGE / "kinks.py", PACKAGE / "gradient_check.py", PACKAGE / "autograd" / "anomaly.py"]


def _subclasses(cls) -> set:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


# The package's own op classes, each a name in its module (not a user's, nor the <Name>Backward
# class made for each custom autograd.Function), and the modules that define them.
OPS = [cls for cls in _subclasses(Node) if cls.__module__.startswith("tinygrad_pool.")
       and getattr(sys.modules[cls.__module__], cls.__name__, None) is cls]
OP_NAMES = {cls.__name__ for cls in OPS}
OP_MODULES = {cls.__module__ for cls in OPS}


def class_checks(source: str, where: str = "") -> list:
    """Each place in ``source`` that tells ops apart by name or module: a string that is an op's
    class name (compared, or in a tuple to compare with), a prefix or suffix tested that begins or
    ends one (``.startswith("Adaptive")``), ``__module__``, inspect's getmodule/getfile, or an op
    class imported to test against."""
    found = []
    for node in ast.walk(ast.parse(source)):
        at = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in OP_NAMES:
            found.append(f"{at} the op name {node.value!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            text, test = node.args[0].value, node.func.attr
            if any(getattr(name, test)(text) for name in OP_NAMES):
                found.append(f"{at} .{test}({text!r}), part of an op's name")
        elif isinstance(node, ast.Attribute) and node.attr == "__module__":
            found.append(f"{at} __module__")
        elif isinstance(node, ast.Attribute) and node.attr in ("getmodule", "getfile",
                                                                 "getsourcefile"):
            found.append(f"{at} inspect.{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").lstrip(".")  # (relative to the package: ..ops is ops)
            for alias in node.names:
                if alias.name in OP_NAMES or f"tinygrad_pool.{module}.{alias.name}" in OP_MODULES:
                    found.append(f"{at} imports {module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found += [f"{at} imports {alias.name}" for alias in node.names if alias.name in OP_MODULES]
    return found


@pytest.mark.parametrize("path", EXPLAINERS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_explainers_ask_the_op_never_its_name_or_module(path):
    assert OP_NAMES >= {"Conv2d", "ConvTranspose2d", "MaxPool2d", "ReLU", "Reshape", "Einsum"}
    found = class_checks(path.read_text(), path.name)
    assert not found, "ask the op (an attribute it declares) instead:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_name_and_module_test():
    """The scan is able to fail: the branches these files had before ops described themselves."""
    source = '\n'.join([
        'from ..ops import activation, elementwise',
        'from ..ops.pool import MaxPool2d',
        'OPS = ("Conv2d", "ConvTranspose2d", "MaxPool2d")',
        'if fn.name == "Reshape" and op.startswith("Adaptive"): pass',
        'if type(ctx).__module__ in MODULES: pass',
        'ok = error.name != "graphviz" and name.endswith("Backward") and key == "padding"',
    ])
    found = class_checks(source)
    # (line 6 compares names that are no op's: an error's, a custom Function's suffix, a key)
    assert sorted(found) == [":1 imports ops.activation", ":1 imports ops.elementwise",
                             ":2 imports ops.pool.MaxPool2d", ":3 the op name 'Conv2d'",
                             ":3 the op name 'ConvTranspose2d'", ":3 the op name 'MaxPool2d'",
                             ":4 .startswith('Adaptive'), part of an op's name",
                             ":4 the op name 'Reshape'", ":5 __module__"]


# ---- what the ops declare -------------------------------------------------------------------------
def test_every_elementwise_and_activation_op_says_it_is_elementwise():
    """What anomaly mode once read from the module an op lives in, the op now says."""
    for module in (elementwise, activation):
        ops = [cls for cls in vars(module).values()
               if isinstance(cls, type) and issubclass(cls, Node) and cls.__module__ == module.__name__]
        assert ops and all(cls.elementwise for cls in ops), module.__name__
    assert not Node.elementwise and not Sum.elementwise and not MatMul.elementwise


PROTOCOLS = {  # what a reader of one of these attributes relies on finding beside it
    "kink_candidates": ("kink_choice",),
    "window_cells": ("cells_reading", "channel_groups", "padding_read"),
    "spreads": ("weight_input",),
}


def test_an_op_that_declares_part_of_a_description_declares_all_of_it():
    described = {name: [cls for cls in _subclasses(Node) if hasattr(cls, name)] for name in PROTOCOLS}
    assert {cls.__name__ for cls in described["window_cells"]} >= {"Conv2d", "ConvTranspose2d",
                                                                   "MaxPool2d"}
    assert {cls.__name__ for cls in described["kink_candidates"]} >= {
        "Max", "MaxAlongDim", "MaxPool2d", "AdaptiveMaxPool2d"}
    for name, needed in PROTOCOLS.items():
        for cls in described[name]:
            missing = [attr for attr in needed if not hasattr(cls, attr)]
            assert not missing, f"{cls.__name__} declares {name} but not {missing}"


# ---- a user's own op opts in ------------------------------------------------------------------
class Hinge(Node):
    """max(x, 1) written by a user, who says what the check and the pictures ask: it is
    elementwise, its slope jumps at 1 (backward takes the right side's 1 there), and its
    ``at`` argument is PyTorch's ``threshold``."""

    elementwise = True
    argument_names = {"at": "threshold"}

    def forward(ctx, x, at):
        ctx.save_for_backward(x=x)
        return np.maximum(x, at)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (np.asarray(x) >= ctx.attrs["at"])

    def kink_points(self) -> list:
        return [(self.attrs["at"], "the right side's slope 1, as the user chose")]


def test_a_users_own_node_describes_itself_like_the_packages_ops():
    x = tensor(np.array([1.0, 3.0, -2.0]), requires_grad=True)
    report = gradcheck_report(lambda t: Hinge.apply(t, at=1.0), [x])
    [kink] = report.kinks
    assert kink.index == (0,) and report.passed
    assert kink.reason == ("Hinge's input (0,) is 1, its kink: backward takes the right side's "
                           "slope 1, as the user chose")
    # without the declaration: named as an op the check has no rule for
    undescribed = type("Plain", (Hinge,), {"kink_points": None})
    [kink] = gradcheck_report(lambda t: undescribed.apply(t, at=1.0), [x]).kinks
    assert kink.reason.endswith("it goes through Plain, a Function this check has no kink rule for")
    # anomaly mode shows the arithmetic of an op that says it is elementwise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with autograd.detect_anomaly(), pytest.raises(RuntimeError) as raised:
            Hinge.apply(tensor(np.array([2.0, -1.0]), requires_grad=True), at=np.inf)
    assert "input 0 holds 2.0 at [0], and hinge(2.0, at=inf) = inf" in str(raised.value)
    # and a picture writes its argument by the name it gives
    assert arguments({"at": 2.5}, Hinge) == ["threshold=2.5"]
    assert arguments({"at": 2.5}) == ["at=2.5"]


def test_the_packages_ops_say_how_pytorch_writes_their_arguments():
    x = tensor(np.ones((1, 2, 5, 5)), requires_grad=True)
    conv = F.conv2d(x, tensor(np.ones((3, 2, 3, 3))), padding=(1, 2)).grad_fn
    assert argument("padding", conv.attrs["padding"], conv) == "(1, 2)"  # (top, bottom, left, right)
    assert argument("padding", conv.attrs["padding"]) == "(1, 1, 2, 2)"  # an op that says nothing
    pool = F.adaptive_avg_pool2d(x, (2, 3)).grad_fn
    assert arguments(pool.attrs, pool) == ["output_size=2×3"]
    both = tp.einsum("ij,jk->ik", tensor(np.ones((2, 3)), requires_grad=True),
                     tensor(np.ones((3, 4)))).grad_fn
    assert arguments(both.attrs, both) == ["equation='ij,jk->ik'"]
