"""Graph rendering: the DOT text names what the engine recorded, the argmax cells are the ones
max pooling chose, big graphs stay small, and a missing `dot` gives an installable answer.

The real-render tests run `dot` itself (CI installs Debian's graphviz); only they skip, and only
when `dot` is not on PATH.
"""
import re
import shutil
from pathlib import Path

import graphviz
import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import draw_graph, GraphvizNotFound, save_graph, Tensor, tensor
from tinygrad_pool.viz.graph import STYLE

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# A 4×4 image whose 2×2 windows have their maxima at known places: 9, 8, 7 and 11, i.e. the
# flat positions 1, 6, 8 and 15 of the 4×4 plane. No window holds a tie.
POOL_INPUT = np.array([[1, 9, 2, 3],
                       [4, 5, 8, 6],
                       [7, 0, 1, 2],
                       [3, 2, 4, 11]], dtype=np.float64)
ARGMAX_CELLS = {1, 6, 8, 15}


# ---- helpers that read the DOT text ----------------------------------------------------------
def nodes(dot) -> dict:
    """DOT node name -> its whole statement, for every node line of the graph."""
    out = {}
    for line in dot.body:
        match = re.match(r"\s*(\w+) \[", line)
        if match and "->" not in line:
            out[match.group(1)] = line
    return out


def node_of(dot, title: str) -> str:
    """The DOT name of the node whose bold title is ``title`` (a tensor name or an op name)."""
    found = [n for n, line in nodes(dot).items() if f"<B>{title}</B>" in line]
    assert len(found) == 1, f"{len(found)} nodes titled {title!r}"
    return found[0]


def edges(dot) -> set:
    return {(a, b) for line in dot.body for a, b in re.findall(r"^\s*(\w+) -> (\w+)", line)}


def cells(label: str, caption: str) -> list:
    """(attributes, text) of each matrix cell after ``caption`` ("value" or "grad"), row-major."""
    section = label.split(f">{caption}</FONT>", 1)[1]
    if caption == "value" and ">grad</FONT>" in section:
        section = section.split(">grad</FONT>", 1)[0]
    return re.findall(r"<TD( [^>]*)?>(?:<B>)?([^<]*)(?:</B>)?</TD>", section)


def highlighted(label: str, caption: str, colour: str) -> set:
    return {i for i, (attrs, _) in enumerate(cells(label, caption)) if f'BGCOLOR="{colour}"' in attrs}


def pooled_graph(ties="first", retain_graph=True):
    a = Tensor(POOL_INPUT.reshape(1, 1, 4, 4), requires_grad=True, dtype=np.float64, name="a")
    pooled = F.max_pool2d(a, 2, ties=ties)
    pooled.name = "pooled"
    loss = (pooled * Tensor(np.arange(1.0, 5.0).reshape(1, 1, 2, 2), dtype=np.float64, name="g")).sum()
    loss.backward(retain_graph=retain_graph)
    return a, loss


def article_graph():
    """Like the reference network (6×6 image → 3×3 conv → ReLU → 2×2 max pool → weights →
    squared error), with padding so that the conv has a non-default attribute to show."""
    rng = np.random.RandomState(7839)
    x = Tensor(rng.randint(0, 2, (1, 1, 6, 6)).astype(np.float64), dtype=np.float64, name="x")
    W1 = Tensor(rng.randn(1, 1, 3, 3), requires_grad=True, dtype=np.float64, name="W1")
    W2 = Tensor(rng.randn(9, 1), requires_grad=True, dtype=np.float64, name="W2")
    L1 = F.relu(F.conv2d(x, W1, padding=1)).retain_grad()
    L1.name = "L1"
    pooled = F.max_pool2d(L1, 2, stride=2).retain_grad()
    pooled.name = "pooled"
    out = pooled.reshape(1, 9) @ W2
    cost = F.sum_of_squares(out - Tensor([[3.0]], dtype=np.float64, name="target")) * 0.5
    cost.name = "cost"
    cost.backward(retain_graph=True)
    return cost


# ---- what the DOT text says --------------------------------------------------------------------
def test_ops_attributes_and_names_are_drawn():
    dot = draw_graph(article_graph())
    src = dot.source
    for op in ("Conv2d", "ReLU", "MaxPool2d", "Reshape", "MatMul", "Sub", "SumOfSquares", "Mul"):
        assert f"<B>{op}</B>" in src
    pool = nodes(dot)[node_of(dot, "MaxPool2d")]
    for attr in ("kernel_size=2", "stride=2", "padding=0", "dilation=1", "ceil_mode=False", "ties=&#x27;first&#x27;"):
        assert attr in pool
    assert "padding=1" in nodes(dot)[node_of(dot, "Conv2d")]
    assert "groups=1" in nodes(dot)[node_of(dot, "Conv2d")]
    assert "out_hw" not in src  # internal bookkeeping stays out of the picture
    for name in ("x", "W1", "W2", "L1", "pooled", "target", "cost"):
        assert f"<B>{name}</B>" in src
    assert "1×1×6×6 float64" in nodes(dot)[node_of(dot, "x")]


def test_styles_encode_leaf_parameter_and_output():
    dot = draw_graph(article_graph())
    n = nodes(dot)
    fill = lambda title: re.search(r'fillcolor="([^"]+)"', n[node_of(dot, title)]).group(1)
    assert fill("W1") == fill("W2") == STYLE["parameter"]
    assert fill("x") == fill("target") == STYLE["constant"]
    assert fill("L1") == fill("pooled") == STYLE["intermediate"]
    assert fill("cost") == STYLE["output"]
    assert fill("Conv2d") == fill("MaxPool2d") == STYLE["op"]
    assert "rounded" in n[node_of(dot, "x")] and "rounded" not in n[node_of(dot, "Conv2d")]
    assert "cluster_legend" in dot.source
    assert "cluster_legend" not in draw_graph(article_graph(), legend=False).source


def test_edges_follow_the_data_from_inputs_through_ops_to_outputs():
    dot = draw_graph(article_graph())
    e = edges(dot)
    x, w1, conv, relu = (node_of(dot, t) for t in ("x", "W1", "Conv2d", "ReLU"))
    assert {(x, conv), (w1, conv)} <= e
    (conv_out,) = [b for a, b in e if a == conv]
    assert (conv_out, relu) in e
    assert (node_of(dot, "Mul"), node_of(dot, "cost")) in e
    shaped = draw_graph(article_graph(), edge_labels=True).source
    assert re.search(r'-> \w+ \[label="1×1×6×6"\]', shaped)


def test_argmax_cells_of_the_pool_input_are_highlighted_in_value_and_grad():
    a, loss = pooled_graph()
    label = nodes(dot := draw_graph(loss, show_values=True))[node_of(dot, "a")]
    assert len(cells(label, "value")) == 16  # 1×1×4×4 shown as one 4×4 grid
    assert [float(t) for _, t in cells(label, "value")] == POOL_INPUT.ravel().tolist()
    assert highlighted(label, "value", STYLE["argmax"]) == ARGMAX_CELLS
    assert highlighted(label, "grad", STYLE["argmax"]) == ARGMAX_CELLS
    assert highlighted(label, "value", STYLE["tie"]) == set()
    # The routed gradient: each window's upstream gradient (1, 2, 3, 4) sits on its argmax.
    grads = [float(t) for _, t in cells(label, "grad")]
    assert {i for i, g in enumerate(grads) if g} == ARGMAX_CELLS
    assert "as saved by MaxPool2d" in label
    _, indices = F.max_pool2d(a, 2, return_indices=True)
    assert set(indices.numpy().ravel().tolist()) == ARGMAX_CELLS
    # The pooled output itself is not a pool input: nothing highlighted there.
    assert STYLE["argmax"] not in nodes(dot)[node_of(dot, "pooled")]


def test_a_freed_large_intermediate_is_drawn_without_its_value(rng):
    """The graph keeps every tensor's node, shape and name; a large intermediate that nobody
    else held, and that backward no longer needs, has no value left to show, and says so (one
    node however many ops it fed); one the user holds still shows its numbers."""
    x = Tensor(rng.standard_normal((4, 8, 32, 32)), requires_grad=True, dtype=np.float64, name="x")
    freed = x * 2
    freed.name = "freed"
    held = freed.relu()
    held.name = "held"
    loss = (F.max_pool2d(held, 2).sum() + freed.sigmoid().sum())
    del freed
    loss.backward()
    dot = draw_graph(loss, show_values=True, stats=True)
    labels = nodes(dot)
    freed_label = labels[node_of(dot, "freed")]  # (node_of asserts exactly one node)
    assert freed_label.count("value freed: only the graph held it (keep a reference to show it)") == 1
    assert "4×8×32×32 float64" in freed_label
    assert "value [0, 0]" not in freed_label and "min" not in freed_label
    assert (node_of(dot, "freed"), node_of(dot, "ReLU")) in edges(dot)
    held_label = labels[node_of(dot, "held")]
    assert "value [0, 0]" in held_label and "value freed" not in held_label
    # listed (not a heat-map), it shows the pool's choices, recomputed from its input
    listed = draw_graph(loss, show_values=True, max_elements=1024)
    assert "blue = window max (argmax, recomputed" in nodes(listed)[node_of(listed, "held")]


def test_argmax_is_recomputed_when_backward_freed_it():
    _, loss = pooled_graph(retain_graph=False)
    dot = draw_graph(loss, show_values=True)
    label = nodes(dot)[node_of(dot, "a")]
    assert highlighted(label, "value", STYLE["argmax"]) == ARGMAX_CELLS
    assert "recomputed" in label


@pytest.mark.parametrize("ties", ["first", "all", "split"])
def test_tied_maxima_are_marked_apart_from_the_argmax(ties):
    image = np.array([[5, 5, 1, 2],
                      [0, 1, 3, 0],
                      [4, 0, 0, 9],
                      [4, 1, 9, 0]], dtype=np.float64).reshape(1, 1, 4, 4)
    a = Tensor(image, requires_grad=True, dtype=np.float64, name="a")
    loss = F.max_pool2d(a, 2, ties=ties).sum()
    loss.backward(retain_graph=True)
    label = nodes(dot := draw_graph(loss, show_values=True))[node_of(dot, "a")]
    assert highlighted(label, "value", STYLE["argmax"]) == {0, 6, 8, 11}  # first maximum each
    assert highlighted(label, "value", STYLE["tie"]) == {1, 12, 14}
    assert "tied max" in label


def test_values_are_squeezed_sliced_summarised_and_formatted():
    w = Tensor(np.full((1, 2, 3, 3), 0.123456), requires_grad=True, dtype=np.float64, name="w")
    big = Tensor(np.arange(100.0).reshape(10, 10), requires_grad=True, dtype=np.float64, name="big")
    loss = (w.sum() + big.sum())
    loss.backward()
    dot = draw_graph(loss, show_values=True, precision=2)
    w_label = nodes(dot)[node_of(dot, "w")]
    assert ">value [0]</FONT>" in w_label and ">value [1]</FONT>" in w_label  # one grid per channel
    assert ">0.12<" in w_label and ">0.123<" not in w_label
    big_label = nodes(dot)[node_of(dot, "big")]
    assert "min 0" in big_label and "mean 50" in big_label and "max 99" in big_label
    # summarised: a heat-map (cells without text), not 100 numbers
    assert not re.search(r">(\d+(\.\d+)?)</TD>", big_label)
    assert "red +99" in big_label
    fixed = draw_graph(loss, show_values=True, precision=".3f").source
    assert ">0.123<" in fixed


def test_no_negative_zero_is_drawn():
    # a product with 0 is -0.0 where the other factor is negative (in torch too)
    x = Tensor([[-1.0, 2.0], [-3.0, 4.0]], requires_grad=True, dtype=np.float64, name="x")
    h = (x * tensor([[0.0, 1.0], [0.0, 1.0]])).retain_grad()
    loss = (h * tensor([[-1.0, -2.0], [-3.0, 1e-9]])).sum()
    loss.backward()
    assert np.signbit(h.numpy()[0, 0])  # the engine's own -0.0 is there to be drawn
    for precision in (3, ".3f", ".2e"):
        source = draw_graph(loss, show_values=True, precision=precision).source
        assert not re.search(r">-0(\.0*)?(e[+-]0+)?<", source), precision
    big = Tensor(-np.full((10, 10), 1e-9), requires_grad=True, dtype=np.float64, name="big")
    source = draw_graph(big.sum(), show_values=True, precision=".2f").source
    assert "min 0.00" in source and "-0.00" not in source  # a summary too


def test_show_saved_lists_buffers_and_their_bytes_then_freed():
    x = Tensor(np.ones((1, 1, 6, 6)), dtype=np.float64, name="x")
    W = Tensor(np.ones((1, 1, 3, 3)), requires_grad=True, dtype=np.float64, name="W")
    conv_out = F.conv2d(x, W)
    loss = F.max_pool2d(conv_out, 2).sum()
    src = draw_graph(loss, show_saved=True)
    pool = nodes(src)[node_of(src, "MaxPool2d")]
    assert "argmax: 1×1×2×2 int32, 16 B" in pool  # 4 int32 indices
    conv = nodes(src)[node_of(src, "Conv2d")]
    saved = {name: a for name, a in conv_out.grad_fn.saved_for_backward().items()
             if isinstance(a, np.ndarray)}
    assert saved  # each array conv saved: its shape, dtype and bytes
    for name, a in saved.items():
        assert f"{name}: {'×'.join(map(str, a.shape))} float64, {a.nbytes:,} B" in conv
    assert "saved for backward" not in draw_graph(loss).source
    loss.backward()  # without retain_graph: the buffers are gone
    freed = nodes(dot := draw_graph(loss, show_saved=True))[node_of(dot, "MaxPool2d")]
    assert "(freed" in freed and "argmax" not in freed


def test_labels_escape_html():
    a = Tensor([1.0, 2.0], requires_grad=True, dtype=np.float64, name="a<b & \"c\"")
    dot = draw_graph((a * 2).sum(), show_values=True)
    assert "a&lt;b &amp; &quot;c&quot;" in dot.source
    assert "a<b" not in dot.source


# ---- big graphs --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_chain():
    x = Tensor([1.0, 2.0], requires_grad=True, dtype=np.float64, name="x")
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    return y


def test_max_depth_keeps_a_100000_op_chain_small(long_chain):
    # (How fast that is belongs in a benchmark, not in a timed assertion here.)
    dot = draw_graph(long_chain, max_depth=5, collapse=None)
    # 5 ops, their 5 constants, 6 tensors, the elided node and the legend: nothing grows with n
    assert len(nodes(dot)) == 3 * 5 + 3
    assert "… 99,995 more ops" in dot.source
    assert "x" not in {m for line in nodes(dot).values() for m in re.findall(r"<B>(\w+)</B>", line)}


def test_collapse_draws_a_100000_op_chain_as_one_node(long_chain):
    dot = draw_graph(long_chain)
    assert len(nodes(dot)) <= 5  # x, the chain, its output, the legend
    assert "Mul ×100,000" in dot.source and "+ 100,000 constant inputs" in dot.source
    assert (node_of(dot, "x"), node_of(dot, "Mul ×100,000")) in edges(dot)


def test_walk_is_iterative_even_without_collapsing():
    x = Tensor([1.0], requires_grad=True, dtype=np.float64, name="x")
    y = x
    for _ in range(3000):  # three times the default recursion limit
        y = y.relu()
    dot = draw_graph(y, collapse=None)
    assert dot.source.count("<B>ReLU</B>") == 3000 + 1  # (the output drawn: titled by its op)


def test_collapse_stops_at_named_tensors_and_different_attributes():
    x = Tensor([1.0], requires_grad=True, dtype=np.float64, name="x")
    y = x
    for i in range(20):
        y = y * 1.0
        if i == 9:
            y.name = "mid"  # visible, so it splits the chain
    for _ in range(10):
        y = y ** 3
    for _ in range(10):
        y = y ** 0.5
    src = draw_graph(y, collapse=8, show_saved=True).source
    assert "10 arrays, 80 B" in src  # each Mul saved its 1-element constant (as torch's x * c)
    assert src.count("Mul ×10<") == 2 and "<B>mid</B>" in src
    assert "Pow ×10" in src and src.count("Pow ×10") == 2
    assert "exponent=3" in src and "exponent=0.5" in src
    uncollapsed = draw_graph(y, collapse=None).source
    assert uncollapsed.count("<B>Mul</B>") == 20 and "Mul ×" not in uncollapsed
    assert "Mul ×" not in draw_graph(y, collapse=21).source  # shorter than the threshold


def test_a_leaf_draws_alone_and_bad_arguments_are_refused():
    dot = draw_graph(Tensor([1.0], dtype=np.float64, name="solo"))
    assert len(nodes(dot)) == 2 and not edges(dot)  # the tensor and the legend
    with pytest.raises(TypeError):
        draw_graph(np.ones(3))
    with pytest.raises(ValueError):
        draw_graph(tensor([1.0]), max_depth=-1)
    with pytest.raises(ValueError, match="rankdir"):
        draw_graph(tensor([1.0]), rankdir="up")
    assert "rankdir=BT" in draw_graph(tensor([1.0]), rankdir="BT").source


def test_the_engine_does_not_import_the_renderer():
    root = Path(tinygrad_pool.__file__).parent
    for path in [*(root / "engine").glob("*.py"), *(root / "ops").glob("*.py")]:
        assert not re.search(r"^\s*(from|import)\s+\S*(graph|viz)", path.read_text(), re.M), path


# ---- rendering through the real `dot` ---------------------------------------------------------
@needs_dot
def test_save_graph_writes_a_real_png(tmp_path):
    path = save_graph(article_graph(), tmp_path / "article.png", show_values=True, show_saved=True)
    data = Path(path).read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 20_000


@needs_dot
def test_save_graph_takes_the_format_from_the_suffix(tmp_path):
    _, loss = pooled_graph()
    svg = save_graph(loss, tmp_path / "g.svg", show_values=True)
    assert "<svg" in Path(svg).read_text()
    plain = save_graph(loss, tmp_path / "g")
    assert plain == tmp_path / "g.png" and plain.read_bytes()[:8] == PNG_SIGNATURE
    with pytest.raises(ValueError, match="format"):
        save_graph(loss, tmp_path / "g.docx")


@needs_dot
def test_a_collapsed_100000_op_chain_renders(long_chain, tmp_path):
    data = save_graph(long_chain, tmp_path / "chain.png", max_depth=4).read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 2_000


@needs_dot
def test_jupyter_display_renders_svg():
    _, loss = pooled_graph()
    assert "<svg" in draw_graph(loss)._repr_mimebundle_()["image/svg+xml"]


# ---- when `dot` is missing --------------------------------------------------------------------
def check_install_hint(error):
    message = str(error)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda", ".source"):
        assert hint in message
    assert isinstance(error, RuntimeError) and isinstance(error, graphviz.ExecutableNotFound)


def test_missing_dot_gives_a_clear_error_while_source_still_works(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    _, loss = pooled_graph()
    dot = draw_graph(loss, show_values=True, show_saved=True)
    assert "<B>MaxPool2d</B>" in dot.source
    with pytest.raises(GraphvizNotFound) as error:
        save_graph(loss, tmp_path / "g.png")
    check_install_hint(error.value)
    with pytest.raises(GraphvizNotFound):
        dot.render(tmp_path / "g", format="png")
    assert "apt-get install graphviz" in dot._repr_mimebundle_()["text/plain"]
    assert not (tmp_path / "g.png").exists()


def test_dot_vanishing_from_path_is_reported_the_same_way(monkeypatch, tmp_path):
    # shutil.which still answers, but the program cannot be started: graphviz's own error is
    # turned into ours.
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: "/usr/bin/dot")
    monkeypatch.setenv("PATH", str(tmp_path))
    _, loss = pooled_graph()
    with pytest.raises(GraphvizNotFound) as error:
        save_graph(loss, tmp_path / "g.png")
    check_install_hint(error.value)


def test_a_pooled_row_vector_keeps_its_argmax_marks():
    """A (1, 1, L) input of max pooling is a single row: drawn as a grid, not the aligned
    value/grad vector, so the cells pooling chose stay outlined (and the note that says so is
    true)."""
    pytest.importorskip("graphviz")
    from tinygrad_pool.nn import functional as F
    from tinygrad_pool.viz.graph import STYLE
    a = Tensor(np.array([[[1.0, 9.0, 8.0, 2.0, 3.0, 3.0]]]), requires_grad=True, name="a")
    loss = F.max_pool1d(a, 2).sum()
    loss.backward(retain_graph=True)
    label = nodes(dot := draw_graph(loss, show_values=True))[node_of(dot, "a")]
    assert highlighted(label, "value", STYLE["argmax"]) == {1, 2, 4}
    assert highlighted(label, "value", STYLE["tie"]) == {5}
    assert "blue = window max" in label
