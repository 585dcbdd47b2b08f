"""What the pictures say, read as a learner reads them: every picture kind (draw_graph plain, with
values, with saved buffers, grouped by module, with anomaly mode's red node; fan_in of conv,
max pool and conv_transpose2d, from an output cell and from an input cell), for a small network
and for LeNet/digits-sized ones at batch 64, holds no raw Python or NumPy repr, no NumPy argument
names, no cut anomaly message, no "1 channels"; parameters carry their module paths; targets
show their values; the big picture stays under 4,000 px. And each summary rule of
viz/summary.py, directly.

The text is the DOT source's labels with the markup taken out, and (where `dot` is installed)
the text of the rendered SVG.
"""
import html
import math
import re
import shutil

import numpy as np
import pytest

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, draw_graph, nn, save_graph, Tensor, tensor
from tinygrad_pool.viz import fan_in
from tinygrad_pool.ops.conv import Conv2d
from tinygrad_pool.ops.pool import AdaptiveAvgPool2d
from tinygrad_pool.viz import summary
from tinygrad_pool.viz.summary import (argument, arguments, ends, heat_colours, heat_plane, limits,
                                       number, plain, plural, shape_text, slice_kind, stats,
                                       summarise)

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")

# What a learner must never read in a picture (the list, and what made it).
FORBIDDEN = {
    "an array's repr": r"\barray \d",
    "NumPy's module prefix": r"\bnp\.",
    "a dtype repr": r"dtype\(",
    "a doubled parenthesis": r"\(\(",
    "NumPy's axis": r"\baxis=",
    "NumPy's keepdims": r"\bkeepdims=",
    "a wrong plural": r"\b1 (channels|slices|rows|outputs|cells|inputs|ops|arrays)\b",
    "an object's address": r"at 0x[0-9a-f]",
    "a class repr": r"<class ",
    "a negative zero": r"(?<![\w.])-0(\.0+)?(?![\w.]*[1-9])\b",
}


def labels(source: str) -> dict:
    """{DOT node name: its HTML-like label} (a label ends where its < and > balance)."""
    found = {}
    for match in re.finditer(r"(\w+) \[label=<", source):
        depth, end = 1, match.end()
        while depth:
            depth += {"<": 1, ">": -1}.get(source[end], 0)
            end += 1
        found[match.group(1)] = source[match.end():end - 1]
    return found


def visible(source: str) -> str:
    """The words of every label of a DOT source (or of one label), as the picture shows them."""
    texts = list(labels(source).values()) or [source]
    texts += re.findall(r'label="([^"]*)"', source)
    text = "\n".join(re.sub(r"<BR[^>]*>|</TR>|</TD>", "\n", label) for label in texts)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def svg_text(picture) -> str:
    """The words of the rendered SVG (what a reader of the picture actually sees)."""
    svg = picture.pipe(format="svg").decode("utf-8")
    return html.unescape("\n".join(re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)))


def check_plain(text: str, where: str) -> None:
    for what, pattern in FORBIDDEN.items():
        found = re.search(pattern, text)
        assert not found, (f"{where}: {what} in the picture: "
                           f"...{text[max(0, found.start() - 60):found.end() + 40]}...")


# ---- the networks ------------------------------------------------------------------------------
def article_loss():
    """The seed article's network: a 6×6 image, a 3×3 conv, ReLU, 2×2 max pool, weights, and
    half the squared error against a target (everything small: drawn number by number)."""
    rng = np.random.RandomState(7839)
    x = Tensor(rng.randint(0, 2, (1, 1, 6, 6)).astype(np.float64), dtype=np.float64, name="x")
    W1 = Tensor(rng.randn(1, 1, 3, 3), requires_grad=True, dtype=np.float64, name="W1")
    W2 = Tensor(rng.randn(4, 1), requires_grad=True, dtype=np.float64, name="W2")
    pooled = F.max_pool2d(F.relu(F.conv2d(x, W1)), 2)
    out = pooled.reshape(1, 4) @ W2
    cost = F.sum_of_squares(out - Tensor([[3.0]], dtype=np.float64, name="target")) * 0.5
    cost.name = "cost"
    cost.backward(retain_graph=True)
    return None, cost, x


def digits_loss(size=8, batch=64):
    """Conv2d(1,8,3)-ReLU-MaxPool-Conv2d(8,16,3)-ReLU-MaxPool-Flatten-Linear-ReLU-Linear(…,10)
    on 1×size×size images (8×8 padded, as the digits example; 28×28 unpadded)."""
    rng = np.random.default_rng(0)
    pad = 1 if size == 8 else 0
    side = size
    for _ in range(2):
        side = (side + 2 * pad - 2) // 2
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=pad), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=pad), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * side * side, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    x = tensor(rng.standard_normal((batch, 1, size, size)).astype(np.float32))
    loss = F.cross_entropy(model(x), tensor(rng.integers(0, 10, batch)))
    loss.backward(retain_graph=True)
    return model, loss, x


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x.flatten(1))))))


def lenet_loss(batch=64):
    rng = np.random.default_rng(1)
    model = LeNet5()
    x = tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    loss = F.cross_entropy(model(x), tensor(rng.integers(0, 10, batch)))
    loss.backward(retain_graph=True)
    return model, loss, x


NETWORKS = {"article": article_loss, "digits 8×8": digits_loss,
            "digits 28×28": lambda: digits_loss(28), "LeNet-5": lenet_loss}


@pytest.fixture(scope="module")
def networks():
    return {name: make() for name, make in NETWORKS.items()}


GRAPH_KINDS = {"plain": {}, "show_values": dict(show_values=True),
               "show_saved": dict(show_saved=True),
               "values and saved": dict(show_values=True, show_saved=True),
               "group=module": dict(group="module", show_values=True, show_saved=True),
               "stats": dict(stats=True, show_values=True)}


# ---- draw_graph: every kind, every network -----------------------------------------------------
# (group="module" on the article's network, which calls no module, would draw the plain picture)
@pytest.mark.parametrize("network, kind", [(network, kind) for network in NETWORKS
                                           for kind in GRAPH_KINDS
                                           if not (network == "article" and kind == "group=module")])
def test_graph_text_is_plain(networks, network, kind):
    model, loss, _ = networks[network]
    source = draw_graph(loss, **GRAPH_KINDS[kind]).source
    check_plain(visible(source), f"{network}, {kind}")
    assert "<B>output</B>" not in source  # the loss is titled by its op
    assert "<B>parameter</B>" not in source  # every parameter by its name or its path


@needs_dot
@pytest.mark.parametrize("network", ["article", "digits 8×8"])
def test_rendered_svg_text_is_plain(networks, network):
    _, loss, _ = networks[network]
    text = svg_text(draw_graph(loss, show_values=True, show_saved=True))
    check_plain(text, network)
    assert "NLLLoss" in text or "cost" in text


@needs_dot
@pytest.mark.parametrize("network", ["digits 8×8", "digits 28×28", "LeNet-5"])
def test_a_batch_of_64_renders_under_4000_px(networks, network, tmp_path):
    """The issue's digits CNN at batch 32 rendered 13,392 × 6,813 px; now every tensor past
    its size is summarised and the data path stays straight, whatever the batch."""
    Image = pytest.importorskip("PIL.Image")
    _, loss, _ = networks[network]
    path = save_graph(loss, tmp_path / "big.png", show_values=True, show_saved=True)
    with Image.open(path) as picture:
        assert max(picture.size) < 4000, f"{network}: {picture.size}"


def test_small_tensors_are_drawn_in_full_and_large_ones_summarised(networks):
    _, cost, x = networks["article"]
    source = draw_graph(cost, show_values=True).source
    numbers = re.findall(r">(-?\d+(?:\.\d+)?)</TD>", source)
    assert len(numbers) > 36 and "…" not in visible(source)  # the 6×6 image, every number
    assert "first of" not in source and "blocks averaged" not in source
    model, loss, _ = networks["LeNet-5"]
    text = visible(draw_graph(loss, show_values=True).source)
    assert "value [0] (first of 64)" in text  # the batch: its first image, as a heat-map
    assert re.search(r"min -?\d", text) and "2×2 blocks averaged" in text
    bias = model.fc1.bias.numpy()  # 120 entries: its first and last three, "…" between
    shown = text.split("fc1.bias", 1)[1].split("grad", 1)[0].split()
    assert shown[3:] == [number(v) for v in bias[:3]] + ["…"] + [number(v) for v in bias[-3:]]


def test_parameters_carry_their_module_paths_in_every_picture(networks):
    model, loss, _ = networks["LeNet-5"]
    paths = [path for path, _ in model.named_parameters()]
    assert "conv1.weight" in paths
    for kind, options in GRAPH_KINDS.items():
        source = draw_graph(loss, **options).source
        for path in paths:
            assert source.count(f"<B>{path}</B>") == 1, (kind, path)
    sequential, loss, _ = networks["digits 8×8"]
    source = draw_graph(loss).source
    for path, _ in sequential.named_parameters():
        assert f"<B>{path}</B>" in source  # 0.weight, 0.bias, 3.weight, ...
    assert "<B>0.bias</B>" in source


def test_a_parameter_named_by_its_user_is_titled_by_its_path_with_its_name_beneath():
    model = LeNet5()
    model.conv1.weight.name = "kernels"
    out = model(tensor(np.ones((1, 1, 28, 28), dtype=np.float32)))
    source = draw_graph(out).source
    assert "<B>conv1.weight</B>" in source and "<B>kernels</B>" not in source
    assert re.search(r"<B>conv1\.weight</B>.*?>kernels</FONT>", source)
    assert "<B>LeNet5</B>" in labels(source)["t0"]  # the output drawn: by the module that made it


def test_the_loss_is_titled_by_what_made_it():
    logits = tensor(np.zeros((2, 10), dtype=np.float32), requires_grad=True)
    by_function = F.cross_entropy(logits, tensor([3, 7]))
    assert "<B>NLLLoss</B>" in labels(draw_graph(by_function).source)["t0"]  # t0: the output
    by_module = nn.CrossEntropyLoss()(logits, tensor([3, 7]))
    assert "<B>CrossEntropyLoss</B>" in draw_graph(by_module).source
    named = F.cross_entropy(logits, tensor([3, 7]))
    named.name = "loss"
    assert "<B>loss</B>" in draw_graph(named).source


@pytest.mark.parametrize("target, shown", [([2], "target=[2]"), ([3, 7], "target=[3, 7]")])
def test_targets_are_shown_by_their_values(target, shown):
    logits = tensor(np.zeros((len(target), 10), dtype=np.float32), requires_grad=True)
    text = visible(draw_graph(F.cross_entropy(logits, tensor(target))).source)
    assert shown in text


def test_a_long_target_shows_shape_dtype_and_its_ends():
    labels = np.arange(64) % 10
    logits = tensor(np.zeros((64, 10), dtype=np.float32), requires_grad=True)
    text = visible(draw_graph(F.cross_entropy(logits, tensor(labels))).source)
    assert "target=64 int64: [0, 1, 2, …, 1, 2, 3]" in text


def test_attributes_are_spelled_as_pytorch_spells_them():
    x = tensor(np.ones((2, 3, 4, 4)), requires_grad=True)
    text = visible(draw_graph(x.mean() + x.sum(dim=1, keepdim=True).sum() + x.amax(dim=(2, 3)).sum()
                              + x.reshape(6, 16).sum() + F.pad(x, (1, 1)).sum()
                              + x.clamp(min=-1).sum()).source)
    assert "dim=(0, 1, 2, 3), keepdim=False" in text and "dim=1, keepdim=True" in text
    assert "shape=6×16" in text and "pad=(1, 1)" in text
    assert "min=-1" in text and "None" not in text  # clamp's min, and no argument left as None
    check_plain(text, "reductions")


def test_saved_numbers_and_shapes_read_as_numbers_and_shapes():
    logits = tensor(np.zeros((4, 3), dtype=np.float32), requires_grad=True)
    loss = F.cross_entropy(logits.sum(dim=1, keepdim=True) * logits, tensor([0, 1, 2, 0]))
    text = visible(draw_graph(loss, show_saved=True).source)
    # total_weight a 0-d array: its value, then what it is; an array as its shape and dtype
    assert "total_weight: 4 (scalar float32, 4 B)" in text and "classes: 4×1 int64" in text
    assert "input_shape" not in text  # a shape kept as an attribute is structure, not saved
    check_plain(text, "saved")


# ---- anomaly mode's red node ------------------------------------------------------------------
def test_an_anomaly_message_is_wrapped_whole_in_its_red_node():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 2, bias=False)

        def forward(self, x):
            return F.max_pool2d(F.relu(self.conv(x)), 2)

    net = Net()
    with tp.no_grad():
        net.conv.weight.copy_(tensor([[[[-0.5, -1.0], [0.25, -0.5]]]]))
    x = tensor(np.arange(1.0, 17.0, dtype=np.float32).reshape(1, 1, 4, 4) / 4)
    with autograd.set_detect_anomaly(True):
        p = net(x)
        loss = (p * p).mean().sqrt()  # √0: a finite forward, an infinite gradient
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            loss.backward()
    message = loss.grad_fn.origin["anomaly"]
    for options in (dict(), dict(group="module", show_values=True)):
        source = draw_graph(loss, anomalies=True, **options).source
        (red,) = [line for line in source.splitlines() if "Sqrt</B>" in line and "tooltip" in line]
        shown = visible(red)
        # every character, in order: wrapped (a word longer than a line broken), never cut
        assert "".join(message.split()) in "".join(shown.split())
        assert "…" not in shown and len(shown.strip().splitlines()) > 3
        check_plain(visible(source), "anomaly")


# ---- fan_in: conv, max pool, conv_transpose2d ---------------------------------------------------
def fan_in_cases(size: int, channels: int = 3):
    rng = np.random.default_rng(3)
    x = tensor(rng.standard_normal((2, channels, size, size)).astype(np.float32))
    model = nn.Sequential(nn.Conv2d(channels, 4, 3, padding=1))
    conv = model(x)
    conv.retain_grad()
    pooled = F.max_pool2d(conv, 2)
    pooled.retain_grad()
    up = F.conv_transpose2d(pooled, tensor(rng.standard_normal((4, 2, 3, 3)).astype(np.float32),
                                           requires_grad=True), stride=2)
    up.retain_grad()
    (up.sum() + pooled.sum() * 0.5).backward()
    mid = size // 2
    return model, {
        "conv output": (conv, dict(output_cell=(1, 2, mid, mid))),
        "conv input": (conv, dict(input_cell=(1, 0, mid, mid))),
        "pool output": (pooled, dict(output_cell=(0, 1, mid // 2, mid // 2))),
        "pool input": (pooled, dict(input_cell=(0, 1, mid, mid))),
        "conv_transpose2d output": (up, dict(output_cell=(0, 1, mid, mid))),
        "conv_transpose2d input": (up, dict(input_cell=(0, 2, mid // 2, mid // 2))),
    }


@pytest.mark.parametrize("size", [5, 28])
def test_fan_in_text_is_plain(size):
    model, cases = fan_in_cases(size)
    for name, (output, cell) in cases.items():
        picture = fan_in(output, **cell)
        check_plain(visible(picture.source), f"fan_in {name}, {size}×{size}")
        check_plain(picture.summary, f"fan_in {name} summary")


def test_fan_in_of_a_large_plane_shows_the_cells_around_the_picked_one():
    _, cases = fan_in_cases(28)
    conv, cell = cases["conv input"]
    text = visible(fan_in(conv, **cell).source)
    assert "of 28×28" in text and re.search(r"rows \d+–\d+, columns \d+–\d+ of 28×28", text)
    _, small = fan_in_cases(5)
    assert "of 5×5" not in visible(fan_in(small["conv input"][0], **small["conv input"][1]).source)


@needs_dot
def test_fan_in_of_a_large_plane_stays_small(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    _, cases = fan_in_cases(28, channels=6)
    for name, (output, cell) in cases.items():
        path = tmp_path / "fan_in.png"
        path.write_bytes(fan_in(output, **cell).pipe(format="png"))
        with Image.open(path) as picture:
            assert max(picture.size) < 2600, (name, picture.size)


def test_fan_in_titles_the_weight_by_its_module_path():
    model, cases = fan_in_cases(5)
    conv, cell = cases["conv output"]
    assert "<B>0.weight [2, 0]</B>" in fan_in(conv, **cell).source  # the Sequential's call
    assert "<B>weight [2, 0]</B>" not in fan_in(conv, **cell).source
    lenet = LeNet5()
    out = lenet.conv2(F.max_pool2d(lenet.conv1(tensor(np.ones((1, 1, 28, 28), np.float32))), 2))
    assert "<B>conv2.weight [0, 0]</B>" in fan_in(out, output_cell=(0, 0), model=lenet).source
    assert "<B>weight [0, 0]</B>" in fan_in(out, output_cell=(0, 0)).source  # only conv2 known
    with pytest.raises(TypeError, match="fan_in: model must be an nn.Module"):
        fan_in(out, output_cell=(0, 0), model="lenet")


# ---- the summary rules ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape, kind, drawn, more", [
    ((3, 3), "grid", 1, 0),
    ((1, 1, 6, 6), "grid", 1, 0),        # leading 1s squeezed: one 6×6 grid
    ((2, 1, 3, 3), "grid", 2, 0),        # a small tensor: all its slices
    ((1, 8, 2, 2), "grid", 4, 4),        # ... up to MAX_SLICES, the rest counted
    ((8, 1, 3, 3), "grid", 1, 7),        # larger than max_elements: its first slice
    ((64, 8, 8, 8), "grid", 1, 511),     # an 8×8 plane still lists (64 entries)
    ((9, 1), "grid", 1, 0),              # the article's W2: a column of 9
    ((8,), "grid", 1, 0),
    ((64,), "ends", 1, 0),               # a long vector: its ends
    ((16,), "ends", 1, 0),               # longer than a row may be
    ((64, 1), "ends", 1, 0),
    ((64, 10), "heat", 1, 0),
    ((3, 20), "heat", 1, 0),             # 60 entries, but rows too wide to list
    ((64, 6, 28, 28), "heat", 1, 383),
    ((0, 3), "empty", 0, 0),
])
def test_summarise(shape, kind, drawn, more):
    plan = summarise(shape, 64)
    assert (plan.kind, len(plan.slices), plan.more) == (kind, drawn, more)


@pytest.mark.parametrize("shape, limit, column_ends, kind", [
    ((3, 3), None, True, "grid"), ((3, 20), None, True, "heat"), ((64, 1), None, True, "ends"),
    ((1, 8), (7, math.inf), False, "ends"),     # replay's page: a row of at most 7 numbers
    ((1, 7), (7, math.inf), False, "grid"),
    ((64, 1), (7, math.inf), False, "grid"),    # ... and a column as long as max_elements allows
    ((65, 1), (7, math.inf), False, "heat"),    # ... past it a heat-map, not its ends
])
def test_slice_kind(shape, limit, column_ends, kind):
    assert slice_kind(shape, 64, limit, column_ends) == kind


def test_stats_keep_integers_exact():
    found = dict(stats(np.array([3, 100_001, 7], dtype=np.int64)))
    assert number(found["max"]) == "100001" and found["mean"] == pytest.approx(100_011 / 3)
    assert [number(v) for _, v in stats(np.array([True, False]))] == ["0", "0.5", "1", "1"]
    assert stats(np.zeros((0, 3))) == []
    assert number(dict(stats(np.array([np.nan, 1.0])))["max"]) == "nan"


def test_summarise_captions_and_limits():
    assert summarise((1, 1, 4, 4)).slices == [("", (0, 0))]
    assert [c for c, _ in summarise((1, 2, 3, 3)).slices] == ["[0]", "[1]"]
    assert [c for c, _ in summarise((2, 2, 2, 2)).slices] == ["[0, 0]", "[0, 1]", "[1, 0]", "[1, 1]"]
    assert limits(64) == (summary.ROW, summary.COLUMN) == (8, 16)
    assert limits(1024) == (32, 32)
    assert summarise((20, 20), 400).kind == "grid" and summarise((20, 20), 64).kind == "heat"


@pytest.mark.parametrize("value, precision, text", [
    (-0.0, 3, "0"), (-1e-9, ".2f", "0.00"), (-0.0696, 3, "-0.0696"), (0.123456, ".3f", "0.123"),
    (float("nan"), 3, "nan"), (float("-inf"), 3, "-inf"), (np.float32(64.0), 3, "64"),
    (np.int64(3), 3, "3"), (True, 3, "True"), (12345.678, 3, "1.23e+04"),
])
def test_number(value, precision, text):
    assert number(value, precision) == text


@pytest.mark.parametrize("value, key, text", [
    (np.array([3, 7]), None, "[3, 7]"),
    (np.array([2]), None, "[2]"),
    (np.arange(64), None, "64 int64: [0, 1, 2, …, 61, 62, 63]"),
    (np.ones((2, 3), dtype=bool), None, "2×3 bool"),
    (np.array(5.0), None, "5"),
    (np.float32(64.0), None, "64"),
    (np.float64(0.5), None, "0.5"),
    (np.dtype("float32"), None, "float32"),
    (np.float64, None, "float64"),
    ((64, 10), "x_shape", "64×10"),
    ((10,), "bias_shape", "10"),
    ((), "shape", "scalar"),
    ((2, 2), "kernel_size", "(2, 2)"),   # a pair, as PyTorch writes it; not a shape
    ((1,), "dims", "1"),                 # dims=(1,) reads dims=1
    (((0, 0), (1, 1)), "widths", "([0, 0], [1, 1])"),  # nested: never "(("
    ([(0, 48), (48, 96)], "spans", "[(0, 48), (48, 96)]"),  # a list of pairs as Python writes it
    (slice(1, 3), None, "1:3"), (slice(None, None, 2), None, "::2"), (slice(None), None, ":"),
    (None, None, "None"), ("mean", None, "'mean'"), (Ellipsis, None, "..."),
    (np.random.default_rng(0), None, "Generator"),
])
def test_plain(value, key, text):
    assert plain(value, key) == text
    check_plain(text, "plain")


def test_plain_rounds_floats_at_the_precision_asked():
    assert plain(1 / 3) == "0.333333" and plain(1 / 3, precision=4) == "0.3333"
    assert plain((1 / 3, [2.0, 1 / 7]), precision=2) == "(0.33, [2, 0.14])"
    assert plain(np.array([1 / 3, 2.5]), precision=".1f") == "[0.3, 2.5]"


@pytest.mark.parametrize("key, value, op, text", [
    ("kernel_size", (2, 2), "MaxPool2d", "2"),             # a pair with equal halves, once
    ("repeats", (2, 2), "Repeat", "(2, 2)"),               # ... but not any tuple
    ("padding", (1, 1, 2, 2), Conv2d, "(1, 2)"),  # padding_per_side: (top, bottom, left, right) as (h, w)
    ("padding", (1, 1, 2, 2), "Pad", "(1, 1, 2, 2)"),
    ("widths", ((0, 0), (0, 0), (1, 2), (3, 3)), "Pad", "(3, 3, 1, 2)"),  # F.pad: last dim first
    ("index", (slice(None), slice(3, 9)), "Index", "[:, 3:9]"),
    ("index", 2, "Index", "[2]"),
    ("target", np.arange(100), "NLLLoss", "100 int64: [0, 1, 2, …, 97, 98, 99]"),
    ("tail", tuple(range(40)), "", "(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, …"),  # 48 at most
])
def test_argument(key, value, op, text):
    assert argument(key, value, op) == text
    check_plain(text, "argument")


def test_arguments_are_pytorchs_in_pytorchs_order():
    assert arguments({"axis": (0, 1), "keepdims": False}) == ["dim=(0, 1)", "keepdim=False"]
    assert arguments({"low": -1, "high": None}) == ["min=-1"]  # clamp's, None left out
    assert arguments({"ties": "all", "dilation": (1, 1), "stride": (2, 2), "kernel_size": (2, 2),
                      "padding": (0, 0), "out_hw": (4, 4)}, "MaxPool2d") == \
        ["kernel_size=2", "stride=2", "padding=0", "dilation=1", "ties='all'"]
    assert arguments({"out_hw": (3, 5)}, AdaptiveAvgPool2d) == ["output_size=3×5"]  # as it says
    assert arguments({"p": 0.5, "mask_shape": (2, 3), "generator": object()}) == ["p=0.5"]
    assert arguments({"scale": 1 / 3}, precision=4) == ["scale=0.3333"]
    assert arguments({}) == []


def test_shape_plural_and_ends():
    assert shape_text((1, 3)) == "1×3" and shape_text(()) == "scalar"
    assert plural(1, "channel") == "1 channel" and plural(3, "channel") == "3 channels"
    assert plural(1_000, "slice") == "1,000 slices" and plural(0, "row") == "0 rows"
    assert plural(1, "more entry", "more entries") == "1 more entry"
    assert plural(26, "more entry", "more entries") == "26 more entries"
    assert plural(1, "tap", verb="read") == "1 tap reads" and plural(3, "tap", verb="read") == "3 taps read"
    assert ends(range(5)) == [0, 1, 2, 3, 4]
    assert ends(range(7)) == list(range(7))  # nothing to leave out: no "…" for one entry
    assert ends(range(8)) == [0, 1, 2, None, 5, 6, 7]


def test_heat_plane_averages_square_blocks_that_tile_the_plane():
    plane = np.arange(28 * 28, dtype=np.float64).reshape(28, 28)
    small, _, block = heat_plane(plane, 24)
    assert block == 2 and small.shape == (14, 14)
    assert small[0, 0] == plane[:2, :2].mean() and small[-1, -1] == plane[-2:, -2:].mean()
    same, _, one = heat_plane(plane[:10, :10], 24)
    assert one == 1 and np.array_equal(same, plane[:10, :10])
    marks = np.zeros((28, 28), dtype=np.int8)
    marks[5, 7] = 2
    _, small_marks, _ = heat_plane(plane, 24, marks)
    assert small_marks[2, 3] == 2 and small_marks.sum() == 2  # a block takes its strongest mark


def test_heat_colours_white_zero_red_positive_blue_negative_black_nan():
    colours, scale = heat_colours(np.array([[0.0, 2.0], [-2.0, np.nan]]))
    assert scale == 2.0
    assert colours.tolist() == [["#ffffff", "#b2182b"], ["#2166ac", "#000000"]]
    assert heat_colours(np.zeros((1, 2)))[0].tolist() == [["#ffffff", "#ffffff"]]
