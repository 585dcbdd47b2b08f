"""draw_graph(group="module"): each nn.Module call a cluster named by its path, folded to one
node by name or by depth; parameters named by their path; stats=True numbers; anomalies=True
marks where NaN/inf appeared; a 300-op ResNet-style net stays under 2,000 px at depth=1.

The DOT text is read back (clusters, their labels, the nodes inside each) and checked against
what the model is: its module tree, its parameters' values and gradients.
"""
import re
import shutil
import struct

import numpy as np
import pytest
from helpers import load_script

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import draw_graph, nn, Tensor, tensor
from tinygrad_pool.viz.graph import STYLE

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


@pytest.fixture(scope="module")
def pictures():
    return load_script("examples/pictures_graphs.py")


# ---- reading the DOT text ----------------------------------------------------------------------
def clusters(dot) -> dict:
    """cluster name -> {"label", "parent" (cluster name or None), "nodes" (names directly in it)};
    the top level is None."""
    out, stack = {None: dict(label=None, parent=None, nodes=[])}, [None]
    for line in dot.body:
        opened = re.match(r"\s*subgraph (cluster_\w+) \{", line)
        if opened:
            out[opened.group(1)] = dict(label=None, parent=stack[-1], nodes=[])
            stack.append(opened.group(1))
        elif line.strip() == "}":
            stack.pop()
        elif "[" not in line and (label := re.search(r'\blabel=("[^"]*"|\S+)', line)):
            out[stack[-1]]["label"] = label.group(1).strip('"')  # the cluster's own attributes
        elif (node := re.match(r"\s*(\w+) \[", line)) and "->" not in line:
            out[stack[-1]]["nodes"].append(node.group(1))
    return out


def node_lines(dot) -> dict:
    return {m.group(1): line for line in dot.body
            if (m := re.match(r"\s*(\w+) \[", line)) and "->" not in line}


def titled(dot, title: str) -> list:
    """The DOT names of the nodes whose bold title is ``title``."""
    return [n for n, line in node_lines(dot).items() if f"<B>{title}</B>" in line]


def one(dot, title: str) -> str:
    found = titled(dot, title)
    assert len(found) == 1, f"{len(found)} nodes titled {title!r}"
    return found[0]


def edges(dot) -> set:
    return {(a, b) for line in dot.body for a, b in re.findall(r"^\s*(\w+) -> (\w+)", line)}


def cluster_of(dot, node: str):
    """The label of the cluster a node is declared in (None at the top level)."""
    found = clusters(dot)
    (name,) = [c for c, info in found.items() if node in info["nodes"]]
    return found[name]["label"]


def ancestry(dot, node: str) -> list:
    """The labels of the clusters around a node, innermost first."""
    found = clusters(dot)
    (name,) = [c for c, info in found.items() if node in info["nodes"]]
    labels = []
    while name is not None:
        labels.append(found[name]["label"])
        name = found[name]["parent"]
    return labels


def ops_in(dot, label: str) -> list:
    """The op titles declared directly in the cluster labelled ``label``."""
    (info,) = [i for i in clusters(dot).values() if i["label"] == label]
    lines = node_lines(dot)
    return [re.search(r"<B>([^<]+)</B>", lines[n]).group(1) for n in info["nodes"]
            if n.startswith("op")]


# ---- what nn.Module.__call__ notes -------------------------------------------------------------
def test_a_module_call_is_noted_on_its_output_node_with_its_input_nodes():
    layer = nn.Linear(3, 2)
    x = tensor(np.ones((1, 3), dtype=np.float32), requires_grad=True)
    h = x * 2
    y = layer(h)
    assert y.grad_fn.origin["modules"] == [(layer, (h.grad_fn,))]
    with tp.no_grad():
        assert layer(h).grad_fn is None  # nothing recorded, nothing noted
    same = nn.Identity()(h)  # made no op: nothing to note on h's node
    assert same is h and h.grad_fn.origin is None
    # In place: the input's node is taken before forward moves h onto the ReLU's node.
    before = h.grad_fn
    out = nn.ReLU(inplace=True)(h)
    assert out is h and h.grad_fn is not before
    assert h.grad_fn.origin["modules"][0][1] == (before,)


def test_nested_calls_are_noted_innermost_first_on_a_shared_output():
    inner = nn.Linear(3, 2)
    outer = nn.Sequential(inner)
    y = outer(tensor(np.ones((1, 3), dtype=np.float32)))
    assert [m for m, _ in y.grad_fn.origin["modules"]] == [inner, outer]
    assert y.grad_fn.origin["modules"][0][1] == ()  # a constant input has no node


# ---- clusters, paths, nesting ------------------------------------------------------------------
def test_each_module_call_is_a_cluster_nested_as_the_modules_are(pictures):
    model, loss = pictures.small_cnn_loss()
    dot = draw_graph(loss, group="module")
    labels = {info["label"] for name, info in clusters(dot).items()
              if name not in (None, "cluster_legend")}
    assert labels == {"SmallCNN", "features · Sequential", "classifier · Sequential",
                      "features.0 · Conv2d", "features.1 · ReLU", "features.2 · MaxPool2d",
                      "features.3 · Conv2d", "features.4 · ReLU", "features.5 · MaxPool2d",
                      "classifier.0 · Flatten", "classifier.1 · Linear"}
    convs = titled(dot, "Conv2d")
    assert sorted(ancestry(dot, c) for c in convs) == [
        [f"features.{i} · Conv2d", "features · Sequential", "SmallCNN"] for i in (0, 3)]
    assert ops_in(dot, "classifier.1 · Linear") == ["Linear"]
    assert ops_in(dot, "classifier.0 · Flatten") == ["Reshape"]
    assert ops_in(dot, "features.2 · MaxPool2d") == ["MaxPool2d"]
    assert ops_in(dot, "SmallCNN") == ops_in(dot, "features · Sequential") == []
    # cross_entropy ran outside every module, and the image came from outside too.
    for title in ("LogSoftmax", "NLLLoss", "image", "loss"):
        assert cluster_of(dot, one(dot, title)) is None
    # A layer's output tensor sits in its cluster, the next layer takes it from there.
    (conv0,) = [c for c in convs if cluster_of(dot, c) == "features.0 · Conv2d"]
    (conv0_out,) = [b for a, b in edges(dot) if a == conv0]
    assert cluster_of(dot, conv0_out) == "features.0 · Conv2d"
    (relu,) = [b for a, b in edges(dot) if a == conv0_out]
    assert cluster_of(dot, relu) == "features.1 · ReLU"


def test_parameters_are_named_by_their_module_path(pictures):
    model, loss = pictures.small_cnn_loss()
    dot = draw_graph(loss, group="module")
    for path, param in model.named_parameters():
        node, owner = one(dot, path), path.rsplit(".", 1)[0]  # features.0.weight: features.0
        assert cluster_of(dot, node) == f"{owner} · {type(model.get_submodule(owner)).__name__}"
        assert f"{'×'.join(map(str, param.shape))} float32" in node_lines(dot)[node]
    plain = draw_graph(loss)  # group=None: the same paths, without the clusters
    for path, _ in model.named_parameters():
        assert len(titled(plain, path)) == 1
    model.features[0].weight.name = "W1"  # the path still titles it; the user's name under it
    for relabelled in (draw_graph(loss, group="module"), draw_graph(loss)):
        assert titled(relabelled, "features.0.weight") and not titled(relabelled, "W1")
        (w1,) = titled(relabelled, "features.0.weight")
        assert ">W1</FONT>" in node_lines(relabelled)[w1]


def test_model_argument_names_calls_made_on_its_parts(pictures):
    model = pictures.SmallCNN()
    x = tensor(np.ones((1, 1, 8, 8), dtype=np.float32))
    out = model.classifier(model.features(x)).sum()  # model itself never called
    unnamed = {i["label"] for i in clusters(draw_graph(out, group="module")).values()}
    assert {"Sequential", "Sequential_2", "Sequential.0 · Conv2d"} <= unnamed  # two roots
    named = {i["label"] for i in clusters(draw_graph(out, group="module", model=model)).values()}
    assert {"features · Sequential", "classifier.1 · Linear"} <= named
    assert "SmallCNN" not in named  # it made no call: no cluster of its own
    dot = draw_graph(out, group="module", model=model)
    assert titled(dot, "classifier.1.weight")


def test_weight_sharing_draws_one_cluster_per_call_and_the_weight_once():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(2, 2)

        def forward(self, x):
            return self.encoder(F.relu(self.encoder(x)))

    model = Twice()
    loss = model(tensor(np.ones((1, 2), dtype=np.float32))).sum()
    dot = draw_graph(loss, group="module")
    labels = [i["label"] for i in clusters(dot).values()]
    assert labels.count("encoder (call 1) · Linear") == labels.count("encoder (call 2) · Linear") == 1
    assert sorted(ops_in(dot, "encoder (call 1) · Linear")) == \
        sorted(ops_in(dot, "encoder (call 2) · Linear")) == ["Linear"]
    assert ops_in(dot, "Twice") == ["ReLU"]
    # The weight feeds both calls: drawn once, in the cluster around both.
    assert cluster_of(dot, one(dot, "encoder.weight")) == "Twice"
    folded = draw_graph(loss, group="module", collapse="encoder")
    assert len(titled(folded, "encoder (call 1)")) == len(titled(folded, "encoder (call 2)")) == 1
    # call 1 → its output → ReLU → its output → call 2
    first, second = one(folded, "encoder (call 1)"), one(folded, "encoder (call 2)")
    relu = one(folded, "ReLU")
    e = edges(folded)
    (between,) = [b for a, b in e if a == first]
    (after_relu,) = [b for a, b in e if a == relu]
    assert (between, relu) in e and (after_relu, second) in e


def test_graphs_without_modules_and_long_chains_inside_one():
    x = Tensor([1.0, 2.0], requires_grad=True, dtype=np.float64, name="x")
    plain = (x * 3).sum()
    grouped = draw_graph(plain, group="module")
    assert [n for n in clusters(grouped) if n not in (None, "cluster_legend")] == []
    assert grouped.source == draw_graph(plain).source

    class Chain(nn.Module):
        def forward(self, y):
            for _ in range(20_000):  # far past the recursion limit: the walks are iterative
                y = y * 1.0001
            return y

    out = Chain()(x).sum()
    dot = draw_graph(out, group="module")
    assert ops_in(dot, "Chain") == ["Mul ×20,000"]
    (sum_op,) = [n for n in titled(dot, "Sum") if n.startswith("op")]  # (its output: "Sum" too)
    assert cluster_of(dot, sum_op) is None
    folded = draw_graph(out, group="module", depth=0)
    assert "Chain · 20,000 ops" in folded.source and "<B>Mul" not in folded.source


# ---- folding modules ---------------------------------------------------------------------------
def test_collapse_by_name_draws_a_module_as_one_node_with_its_edges(pictures):
    model, loss = pictures.small_cnn_loss()
    dot = draw_graph(loss, group="module", collapse="features")
    node = one(dot, "features")
    assert "Sequential · 6 ops" in node_lines(dot)[node]
    assert cluster_of(dot, node) == "SmallCNN"
    assert not titled(dot, "Conv2d") and not titled(dot, "MaxPool2d")
    assert not titled(dot, "features.0.weight")  # its parameters are inside the node
    e = edges(dot)
    assert (one(dot, "image"), node) in e
    (out,) = [b for a, b in e if a == node]  # its output, 1×8×2×2, goes on to Flatten
    assert "1×8×2×2 float32" in node_lines(dot)[out]
    assert (out, one(dot, "Reshape")) in e
    assert len([a for a, b in e if b == node]) == 1  # only the image goes in
    both = draw_graph(loss, group="module", collapse=("features.0", "classifier"))
    assert "Conv2d · 1 op<" in node_lines(both)[one(both, "features.0")]
    assert "Sequential · 2 ops" in node_lines(both)[one(both, "classifier")]
    assert len(titled(both, "Conv2d")) == 1 and titled(both, "features.3.weight")
    # chains are still folded (at 8) when modules are named
    assert both.source.count("<B>ReLU</B>") == 2


def test_depth_folds_every_call_below_that_level(pictures):
    model, loss = pictures.small_cnn_loss()
    top = draw_graph(loss, group="module", depth=1)
    assert "Sequential · 6 ops" in node_lines(top)[one(top, "features")]
    assert "Sequential · 2 ops" in node_lines(top)[one(top, "classifier")]
    ops = [n for n in node_lines(top) if n.startswith("op")]
    assert sorted(re.search(r"<B>(\w+)</B>", node_lines(top)[n]).group(1) for n in ops) == \
        ["LogSoftmax", "NLLLoss"]
    whole = draw_graph(loss, group="module", depth=0)
    assert "SmallCNN · 8 ops" in node_lines(whole)[one(whole, "SmallCNN")]
    assert [i["label"] for n, i in clusters(whole).items() if n not in (None, "cluster_legend")] == []
    layers = draw_graph(loss, group="module", depth=2)
    assert len([n for n in node_lines(layers) if n.startswith("module")]) == 8
    assert "Linear · 1 op<" in node_lines(layers)[one(layers, "classifier.1")]
    # depth deeper than the model: nothing to fold, the grouped picture as it is
    assert draw_graph(loss, group="module", depth=5).source == draw_graph(loss, group="module").source


@needs_dot
def test_a_300_op_resnet_at_depth_1_fits_in_2000_pixels(pictures, tmp_path):
    model, loss = pictures.resnet_loss()
    dot = draw_graph(loss, group="module", depth=1)
    assert "Sequential · 8 ops" in dot.source and "Sequential · 3 ops" in dot.source
    ops = sum(int(n) for n in re.findall(r"· (\d+) ops", dot.source)) + 2  # + cross_entropy's
    assert ops >= 300
    # stem → blocks.0 → … → blocks.7 → head, each a node, chained through their outputs
    chain = ["stem"] + [f"blocks.{i}" for i in range(8)] + ["head"]
    e = edges(dot)
    for a, b in zip(chain, chain[1:]):
        (out,) = [t for s, t in e if s == one(dot, a)]
        assert (out, one(dot, b)) in e, (a, b)
    png = tp.save_graph(loss, tmp_path / "resnet.png", group="module", depth=1).read_bytes()
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert width <= 2000 and height > width


# ---- stats and anomalies -----------------------------------------------------------------------
def stats_of(label: str):
    found = re.search(r"min (\S+) · mean (\S+) · max ([^<\s]+)", label)
    norm = re.search(r"‖grad‖ ([^<\s]+)", label)
    return found.groups(), norm.group(1) if norm else None


def test_stats_are_the_values_min_mean_max_and_the_gradient_norm(pictures):
    model, loss = pictures.small_cnn_loss()
    dot = draw_graph(loss, group="module", stats=True, precision=4)
    g = lambda v: f"{v:.4g}"
    weight = model.features[3].weight
    (lo, mean, hi), norm = stats_of(node_lines(dot)[one(dot, "features.3.weight")])
    assert (lo, mean, hi) == (g(weight.numpy().min()), g(weight.numpy().astype(np.float64).mean()),
                              g(weight.numpy().max()))
    assert norm == g(np.sqrt((weight.grad.numpy().astype(np.float64) ** 2).sum()))
    assert float(norm) > 0
    (lo, mean, hi), norm = stats_of(node_lines(dot)[one(dot, "loss")])
    assert lo == mean == hi == g(loss.item()) and norm is None  # no .grad on an intermediate
    assert "‖grad‖" not in draw_graph(loss, group="module").source
    # One rounding rule, and a value that rounds to zero has no sign.
    t = Tensor([-1e-9, 0.5, 2.0], requires_grad=True, dtype=np.float64, name="t")
    (t * 1).sum().backward()
    label = node_lines(d := draw_graph(t * 1, stats=True, precision=".2f"))[one(d, "t")]
    assert stats_of(label) == (("0.00", "0.83", "2.00"), "1.73")


def log_of_zero():
    x = Tensor([0.0, 1.0], requires_grad=True, dtype=np.float64, name="x")
    y = x.log()  # -inf at 0: the first non-finite value
    z = y * 2.0  # -inf again, but from an input that already had it
    return x, (z + 1.0).sum()


def red(dot) -> set:
    return {n for n, line in node_lines(dot).items() if f'fillcolor="{STYLE["anomaly"]}"' in line}


def test_anomalies_mark_the_first_op_that_made_a_nan_or_inf():
    x, loss = log_of_zero()
    dot = draw_graph(loss, anomalies=True)
    assert red(dot) == {one(dot, "Log")}
    line = node_lines(dot)[one(dot, "Log")]
    assert "1 inf of 2 output values" in line and f'color="{STYLE["anomaly_border"]}"' in line
    assert 'tooltip="first op to produce NaN/inf' in line
    assert "NaN/inf: first op" in node_lines(dot)["legend"]
    assert red(draw_graph(loss)) == set() and "NaN/inf" not in draw_graph(loss).source
    finite = (tensor([1.0, 2.0], requires_grad=True).log() * 2).sum()
    assert red(draw_graph(finite, anomalies=True)) == set()
    nan = (tensor([-1.0], requires_grad=True).sqrt() + tensor([1.0]).log()).sum()
    only = draw_graph(nan, anomalies=True)
    assert red(only) == {one(only, "Sqrt")} and "1 nan of 1" in node_lines(only)[one(only, "Sqrt")]


def test_anomalies_mark_what_backward_noted_and_folded_modules_that_hold_it():
    x, loss = log_of_zero()
    mul = loss.grad_fn.parents[0].grad_fn.parents[0].grad_fn
    assert mul.name == "Mul"
    mul.origin = {"anomaly": "Function 'MulBackward' returned nan values in its 0th output."}
    dot = draw_graph(loss, anomalies=True)
    assert red(dot) == {one(dot, "Log"), one(dot, "Mul")}
    assert "returned nan values" in node_lines(dot)[one(dot, "Mul")]

    class LogLayer(nn.Module):
        def forward(self, v):
            return v.log() * 2.0

    out = LogLayer()(tensor([0.0, 1.0], requires_grad=True)).sum()
    folded = draw_graph(out, group="module", depth=0, anomalies=True)
    assert red(folded) == {one(folded, "LogLayer")}
    assert "Log: first op to produce NaN/inf" in node_lines(folded)[one(folded, "LogLayer")]


def test_pictures_are_deterministic(pictures):
    sources = [draw_graph(pictures.small_cnn_loss()[1], group="module", stats=True).source
               for _ in range(2)]
    assert sources[0] == sources[1]


# ---- bad arguments -----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, words", [
    (dict(group="modules"), ValueError, "group must be None or 'module'"),
    (dict(group=1), TypeError, "group must be None or 'module', got int"),
    (dict(group="module", depth=-1), ValueError, "depth must be at least 0, got -1"),
    (dict(group="module", depth=1.5), TypeError, "depth must be an int"),
    (dict(group="module", depth=True), TypeError, "depth must be an int"),
    (dict(depth=1), ValueError, "depth=1 works on module calls: pass group='module'"),
    (dict(collapse="features"), ValueError, "collapse=('features',) works on module calls"),
    (dict(group="module", collapse=2.5), TypeError, "collapse must be an int"),
    (dict(group="module", collapse=True), TypeError, "collapse must be an int"),
    (dict(group="module", collapse=["features", 1]), TypeError, "module paths (str), got int"),
    (dict(group="module", collapse=""), ValueError, "cannot be empty"),
    (dict(collapse=-1), ValueError, "collapse must be >= 0"),
    (dict(group="module", collapse="feature"), ValueError,
     "'feature', which is no module path in this graph (the paths: 'SmallCNN', 'classifier'"),
    (dict(group="module", model=3), TypeError, "model must be an nn.Module or None, got int"),
    (dict(stats="yes"), TypeError, "stats must be bool"),
    (dict(anomalies=1), TypeError, "anomalies must be bool"),
    (dict(max_depth="3"), TypeError, "max_depth must be an int"),
])
def test_bad_arguments_are_refused_naming_draw_graph_and_the_argument(pictures, kwargs, error, words):
    _, loss = pictures.small_cnn_loss()
    with pytest.raises(error, match=re.escape("draw_graph: ") + ".*" + re.escape(words)):
        draw_graph(loss, **kwargs)
