"""viz.replay: the backward pass as frames, checked against the engine's own numbers, torch's, and
a real headless browser (Debian's chromium driven by Playwright)."""
import html
import pathlib
import re
import shutil
import sys

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, nn, Tensor, tensor
from tinygrad_pool.engine import _node_of, _topological_order
from tinygrad_pool.viz import Replay, replay

from helpers import Cube, exp_function

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import article_network as article  # noqa: E402

replay_module = sys.modules["tinygrad_pool.viz.replay_page"]
pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

X = np.array([[0.5, -1.0, 2.0, 0.0, 1.5, -0.5],
              [1.0, 2.0, -2.0, 0.5, 0.0, 1.0],
              [-1.5, 0.5, 1.0, 2.5, -1.0, 0.0],
              [0.0, 1.0, 0.5, -0.5, 2.0, 1.5],
              [2.0, -0.5, 0.0, 1.0, 0.5, -2.0],
              [1.0, 0.0, -1.0, 1.5, 0.5, 0.5]]).reshape(1, 1, 6, 6)
W = np.array([[[[0.2, -0.1, 0.3], [0.0, 0.4, -0.2], [0.1, 0.1, -0.3]]],
              [[[-0.3, 0.2, 0.1], [0.5, -0.1, 0.0], [0.2, -0.4, 0.3]]]])


def tiny(**kwargs):
    """conv -> relu -> max_pool2d -> (p·p).sum() + p.sum(): p is used three times."""
    x = Tensor(X, dtype=np.float64, name="x")
    w = Tensor(W, requires_grad=True, dtype=np.float64, name="w")
    h = F.conv2d(x, w)
    a = h.relu()
    p = F.max_pool2d(a, 2)
    loss = (p * p).sum() + p.sum()
    for name, t in dict(h=h, a=a, p=p, loss=loss).items():
        t.name = name
        t.retain_grad()
    return dict(x=x, w=w, h=h, a=a, p=p, loss=loss)


def frame_of(r: Replay, name: str):
    (frame,) = [f for f in r.frames if f.output_name == name or f.name == name]
    return frame


def section(page: str, index: int) -> str:
    start = page.index(f'data-frame="{index}"')
    return page[start:page.index("</section>", start)]


def values(fragment: str, role: str) -> np.ndarray:
    """The full-precision numbers of the first tensor with this role in an HTML fragment."""
    start = fragment.index(f'data-role="{role}"')
    end = fragment.find('<div class="tensor"', start + 1)
    return np.array([float(v) for v in re.findall(r'data-value="([^"]+)"', fragment[start:end])])


# ---- frames against the engine ----------------------------------------------------------------
def test_frames_are_the_engines_order_and_gradients(tmp_path, torch):
    t = tiny()
    r = replay(t["loss"], tmp_path / "r.html")
    order = list(reversed(_topological_order([_node_of(t["loss"])])))
    assert [f.node for f in r.frames] == order  # every node is reached here
    for name in ("h", "a", "p", "loss"):
        np.testing.assert_array_equal(frame_of(r, name).grad_output, t[name].grad.numpy())
    np.testing.assert_array_equal(frame_of(r, "w").grad_output, t["w"].grad.numpy())
    # ... and the engine's numbers are torch's
    tw = torch.tensor(W, requires_grad=True)
    tp = torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(torch.tensor(X), tw)), 2)
    ((tp * tp).sum() + tp.sum()).backward()
    np.testing.assert_allclose(frame_of(r, "w").grad_output, tw.grad.numpy(), rtol=1e-12)
    # what Conv2d sends to w is what the leaf then receives; x is a constant: nothing sent
    conv = frame_of(r, "h")
    assert conv.input_grads[0] is None and conv.input_names == ("constant", "w")
    np.testing.assert_array_equal(conv.input_grads[1], t["w"].grad.numpy())


def test_a_fresh_graph_accumulates_grad_exactly_once(tmp_path):
    t, reference = tiny(), tiny()
    reference["loss"].backward()
    t["w"].grad = tensor(np.ones_like(W))
    replay(t["loss"], tmp_path / "r.html")
    np.testing.assert_allclose(t["w"].grad.numpy(), 1 + reference["w"].grad.numpy(), rtol=1e-15)
    assert t["loss"].grad_fn.released  # as backward() without retain_graph leaves it


def test_a_retained_graph_is_replayed_without_touching_grad_or_saved_state(tmp_path):
    t = tiny()
    t["loss"].backward(retain_graph=True)
    grad = t["w"].grad
    before = np.array(grad.numpy())
    pool = t["p"].grad_fn
    saved = dict(pool.saved_for_backward())
    r = replay(t["loss"], tmp_path / "r.html")
    assert t["w"].grad is grad
    np.testing.assert_array_equal(grad.numpy(), before)
    np.testing.assert_array_equal(frame_of(r, "w").grad_output, before)
    assert pool.saved_for_backward().keys() == saved.keys()
    assert all(pool.saved_for_backward()[k] is v for k, v in saved.items())
    t["loss"].backward()  # still retained: a real second pass adds the same gradient again
    np.testing.assert_allclose(t["w"].grad.numpy(), 2 * before, rtol=1e-15)


def test_a_freed_graph_raises_backwards_own_error(tmp_path):
    t = tiny()
    t["loss"].backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        replay(t["loss"], tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


def test_accumulation_shows_each_contribution_and_their_sum(tmp_path):
    t = tiny()
    r = replay(t["loss"], tmp_path / "r.html")
    pool = frame_of(r, "p")
    assert [(sender.name, k) for sender, k, _ in pool.parts] == [("Mul#1", 0), ("Mul#1", 1), ("Sum#1", 0)]
    p = t["p"].numpy()
    for (_, _, part), expected in zip(pool.parts, (p, p, np.ones_like(p))):  # d(p·p)/dp = p, twice
        np.testing.assert_array_equal(part, expected)
    np.testing.assert_array_equal(pool.grad_output, 2 * p + 1)
    page = section(r.html, pool.index)
    assert "received 3 of 3 contributions: Mul#1 (input 0) + Mul#1 (input 1) + Sum#1 = total" in page
    np.testing.assert_array_equal(values(page, "grad_output"), (2 * p + 1).ravel())
    mul = section(r.html, frame_of(r, "Mul#1").index)
    assert "input 0 → MaxPool2d#1 (contribution 1 of 3)" in mul
    assert "input 1 → MaxPool2d#1 (contribution 2 of 3)" in mul


def test_max_pool_lights_each_windows_argmax(tmp_path):
    t = tiny()
    r = replay(t["loss"], tmp_path / "r.html", retain_graph=True)
    pool = frame_of(r, "p")
    np.testing.assert_array_equal(pool.argmax, t["p"].grad_fn.saved_for_backward()["argmax"])
    # The first maximum of each 2×2 window, found here from the values alone.
    a = t["a"].numpy()
    expected = np.zeros_like(a, dtype=bool)
    for c in range(2):
        for i in range(2):
            for j in range(2):
                window = a[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                r_, c_ = np.unravel_index(np.argmax(window), window.shape)
                expected[0, c, 2 * i + r_, 2 * j + c_] = True
    page = section(r.html, pool.index)
    block = page[page.index('data-role="pool_input"'):page.index('data-role="input_grad"')]
    cells = re.findall(r"<td( class=argmax)? data-value", block)
    np.testing.assert_array_equal(np.array([bool(c) for c in cells]), expected.ravel())
    # the gradient it sends lands on exactly those cells
    sent = pool.input_grads[0]
    assert not sent[~expected].any()
    np.testing.assert_array_equal(sent[expected], pool.grad_output.ravel())


GEOMETRIES = {  # max_pool2d keyword arguments: tiling, overlapping + padded, dilated, ceil mode
    "2x2": dict(kernel_size=2), "3x3 s2 p1": dict(kernel_size=3, stride=2, padding=1),
    "dilated": dict(kernel_size=2, stride=1, dilation=2), "ceil": dict(kernel_size=2, ceil_mode=True)}


def pooled_with_ties(ties: str, geometry: dict, size: int = 7, seed: int = 0):
    """A pool over values in {0, 1, 2} (ties everywhere), weighted by positive numbers: every
    window's gradient is nonzero and shares never cancel, so the cells backward pays are
    exactly the nonzero cells of what it sends."""
    rng = np.random.default_rng(seed)
    x = tensor(rng.integers(0, 3, (1, 2, size, size)).astype(np.float64), requires_grad=True)
    pooled = F.max_pool2d(x, **geometry, ties=ties)
    loss = (pooled * tensor(rng.uniform(0.5, 2.0, pooled.shape))).sum()
    return x, loss


@pytest.mark.parametrize("geometry", GEOMETRIES.values(), ids=GEOMETRIES.keys())
@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_the_lit_cells_are_exactly_where_each_tie_rule_sends_gradient(ties, geometry):
    x, loss = pooled_with_ties(ties, geometry)
    r = replay(loss, None, max_elements=64)
    (pool,) = [f for f in r.frames if f.op == "MaxPool2d"]
    paid = pool.input_grads[0] != 0
    np.testing.assert_array_equal(pool.chosen | pool.tied, paid)
    np.testing.assert_array_equal(paid, x.grad.numpy() != 0)
    assert not (pool.chosen & pool.tied).any() and pool.ties == ties
    assert pool.tied.any() == (ties != "first")  # this input does tie: the rules differ on it
    # the page: dark cells are the saved argmax, light ones the other cells paid
    page = section(r.html, pool.index)
    for role in ("pool_input", "input_grad"):
        block = page[page.index(f'data-role="{role}"'):]
        classes = re.findall(r"<td( class=\w+)? data-value", block)[:x.numpy().size]
        np.testing.assert_array_equal(np.array(classes).reshape(x.shape),
                                      np.where(pool.chosen, " class=argmax",
                                               np.where(pool.tied, " class=tied", "")))
    assert {"first": "its whole gradient goes there", "split": "split equally",
            "all": "each receives its whole gradient"}[ties] in page


def test_the_repro_ties_split_lights_both_cells_it_pays():
    x = tensor(np.array([[1.0, 1.0], [0.0, 0.0]]).reshape(1, 1, 2, 2), requires_grad=True)
    r = replay(F.max_pool2d(x, 2, ties="split").sum() * 3, None)
    (pool,) = [f for f in r.frames if f.op == "MaxPool2d"]
    np.testing.assert_array_equal(pool.input_grads[0].ravel(), [1.5, 1.5, 0, 0])
    np.testing.assert_array_equal(pool.chosen.ravel(), [True, False, False, False])
    np.testing.assert_array_equal(pool.tied.ravel(), [False, True, False, False])


def outlines(block: str, name: str) -> set:
    return {tuple(map(int, cell.split(","))) for cell in
            re.findall(rf'<rect class="{name}" data-cell="([\d,]+)"', block)}


def test_heat_maps_outline_the_cells_max_pooling_pays(tmp_path):
    x, loss = pooled_with_ties("all", dict(kernel_size=2), size=12)
    r = replay(loss, None, max_elements=16)
    (pool,) = [f for f in r.frames if f.op == "MaxPool2d"]
    page = section(r.html, pool.index)
    for role in ("pool_input", "input_grad"):
        block = page[page.index(f'data-role="{role}"'):]
        block = block[:block.index("</figure>")]  # the first plane, drawn cell by cell
        assert block.count('fill="#') == 144 and "blocks averaged" not in block
        assert outlines(block, "argmax") == set(map(tuple, np.argwhere(pool.chosen[0, 0])))
        assert outlines(block, "tied") == set(map(tuple, np.argwhere(pool.tied[0, 0])))
        assert "outlined: cells max pooling pays" in block


def test_a_large_plane_is_averaged_in_blocks_that_tile_it():
    from tinygrad_pool.viz.summary import block_size, heat_plane  # (the replay's and the graph's)
    # 66×99 takes 3×3 blocks, not 2×2 ones that would leave a ragged last row; 97 is prime: no
    # block divides it, and the least one pads
    assert [block_size(shape, 64) for shape in ((64, 64), (128, 96), (66, 99), (1, 200), (97, 97))] \
        == [1, 2, 3, 4, 2]
    plane = np.zeros((130, 130))  # 3 and 4 leave ragged blocks: 5×5 ones, 26 a side
    marks = np.zeros((130, 130), dtype=np.int8)
    plane[7, 3], marks[7, 3], marks[6, 4], marks[0, 129] = 5.0, 2, 1, 1
    small, small_marks, block = heat_plane(plane, 64, marks)
    assert block == 5 and small.shape == small_marks.shape == (26, 26)
    assert small[1, 0] == 5.0 / 25 and np.count_nonzero(small) == 1
    assert set(zip(*np.nonzero(small_marks))) == {(1, 0), (0, 25)}
    assert small_marks[1, 0] == 2 and small_marks[0, 25] == 1  # a block shows its strongest mark


def test_png_heat_maps_are_square_cells_at_full_resolution_with_the_paid_cells_framed():
    x, loss = pooled_with_ties("split", dict(kernel_size=2), size=24)
    r = replay(loss, None, max_elements=16)
    (pool,) = [f for f in r.frames if f.op == "MaxPool2d"]
    table = replay_module._png_table(pool.input_grads[0], True, 16, replay_module._pool_marks(pool))
    cells = re.findall(r'<TD BGCOLOR="#\w+" WIDTH="(\d+)" HEIGHT="(\d+)" FIXEDSIZE="TRUE"'
                       r'(?: BORDER="1" COLOR="(#\w+)")?></TD>', table)
    assert len(cells) == 24 * 24 and {w == h for w, h, _ in cells} == {True}  # square, every cell
    framed = np.array([c for _, _, c in cells]).reshape(24, 24)
    colours = replay_module.COLOURS
    np.testing.assert_array_equal(framed == colours["argmax_edge"], pool.chosen[0, 0])
    np.testing.assert_array_equal(framed == colours["tied_edge"], pool.tied[0, 0])
    assert "framed: cells max pooling pays" in table


def test_custom_functions_replay_like_built_in_ops(tmp_path):
    Exp = exp_function(autograd.Function)  # a torch-style Function; Cube an engine one
    x = Tensor([0.5, -1.0, 2.0], requires_grad=True, dtype=np.float64, name="x")
    y = Exp.apply(Cube.apply(x))
    loss = y.sum()
    r = replay(loss, tmp_path / "r.html")
    assert [f.name for f in r.frames] == ["Sum#1", "ExpBackward#1", "Cube#1", "x"]
    cube = r.frames[2]
    expected = np.exp(x.numpy() ** 3) * 3 * x.numpy() ** 2
    np.testing.assert_allclose(cube.input_grads[0], expected, rtol=1e-14)
    np.testing.assert_array_equal(r.frames[3].grad_output, x.grad.numpy())
    assert cube.saved == {"x": "3 float64"}


def test_parameter_names_come_from_the_module_calls_recorded_in_origin(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    out = model(tensor(np.ones((4, 3), dtype=np.float32))).sum()
    # nn.Module.__call__ records (module, input nodes) on the node each call's output came from
    r = replay(out, None)
    leaves = {f.name: id(f.node) for f in r.frames if f.op is None}
    assert leaves == {name: id(p) for name, p in model.named_parameters()}
    assert r.path is None


# ---- the page -----------------------------------------------------------------------------------
def test_the_page_is_one_self_contained_deterministic_file(tmp_path):
    r = replay(tiny()["loss"], tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page == r.html
    for outside in ("http://", "https://", "<script src", "@import", "url(", "<link"):
        assert outside not in page
    assert len(re.findall(r'<section class="frame [a-z]+" data-frame="\d+"', page)) == len(r.frames) == 8
    for f in r.frames:
        assert f'<g id="{f.node_id}" class="node">' in page
        for edge in f.edge_ids:
            assert f'<g id="{edge}" class="edge">' in page
    assert replay(tiny()["loss"], None).html == page  # same graph, same text


def test_numbers_have_one_rounding_rule():
    from tinygrad_pool.viz.summary import number  # (every number of the page and the frames)
    assert [number(v, replay_module.DIGITS) for v in (-0.0, 1 / 3, -2.5e-7, 123456.0, np.nan,
                                                      np.inf, -np.inf)] == \
        ["0", "0.3333", "-2.5e-07", "1.235e+05", "nan", "inf", "-inf"]


def test_large_tensors_are_statistics_and_a_heat_map(tmp_path):
    x = Tensor(np.arange(-50.0, 50.0).reshape(10, 10), requires_grad=True, dtype=np.float64, name="x")
    loss = (x * x).sum()
    r = replay(loss, tmp_path / "r.html", max_elements=16)
    page = section(r.html, frame_of(r, "x").index)
    grad = 2 * x.numpy()
    block = page[page.index('data-role="grad_output"'):page.index('data-role="value"')]
    stats = dict(re.findall(r'data-stat="(\w+)" data-value="([^"]+)"', block))
    assert {k: float(v) for k, v in stats.items()} == {
        "min": grad.min(), "mean": grad.mean(), "max": grad.max(), "norm": np.sqrt((grad ** 2).sum())}
    assert block.count("<rect ") == 100 and "heat-map: red +100, blue -100" in block
    assert "<td" not in page  # no grid of 100 numbers, for the gradient or the value


def test_a_freed_forward_value_is_said_so_and_a_held_one_shown(tmp_path):
    """A large intermediate that only the graph held (ReLU does not save its input) has no
    forward value left to show; one the user holds is shown."""
    x = Tensor(np.linspace(-1, 1, 128 * 128).reshape(128, 128), requires_grad=True, dtype=np.float64, name="x")
    freed, held = x * 2, x * 3
    freed.name, held.name = "freed", "held"
    loss = freed.relu().sum() + held.relu().sum()
    del freed
    r = replay(loss, tmp_path / "r.html", max_elements=16)
    freed_frame, held_frame = frame_of(r, "freed"), frame_of(r, "held")
    assert freed_frame.value is None and freed_frame.value_freed
    np.testing.assert_array_equal(held_frame.value, held.numpy())
    assert not held_frame.value_freed
    page = section(r.html, freed_frame.index)
    assert "The forward value of freed was freed: only the graph held it" in page
    assert 'data-role="value"' not in page
    assert 'data-role="value"' in section(r.html, held_frame.index)


def test_repr_html_embeds_the_page_sandboxed(tmp_path):
    r = replay(tiny()["loss"], tmp_path / "r.html")
    shown = r._repr_html_()
    assert shown.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in shown
    assert html.unescape(shown[len('<iframe srcdoc="'):shown.index('" sandbox')]) == r.html
    assert repr(r) == f"<Replay of 8 backward frames, written to {str(tmp_path / 'r.html')!r}>"


def test_frames_dir_writes_a_png_per_frame_and_a_gif(tmp_path):
    x = Tensor(X[:, :, :4, :4], requires_grad=True, dtype=np.float64, name="x")
    loss = F.max_pool2d(x, 2).sum()
    r = replay(loss, tmp_path / "r.html", frames_dir=tmp_path / "frames", retain_graph=True)
    pngs = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert len(pngs) == len(r.frames) == 3 and r.pngs[:3] == pngs
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    PIL = pytest.importorskip("PIL.Image")
    with PIL.open(tmp_path / "frames" / "replay.gif") as gif:
        assert gif.n_frames == len(r.frames)
    replay(loss, None, frames_dir=tmp_path / "again")  # the retained graph, replayed
    assert [p.read_bytes() for p in sorted((tmp_path / "again").glob("frame_*.png"))] == \
        [p.read_bytes() for p in pngs]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(loss=1.0), TypeError, "replay: loss must be a Tensor, got float"),
    (dict(path=3), TypeError, "replay: path must be a str, a path or None, got int"),
    (dict(show_values=1), TypeError, "replay: show_values must be bool, got int"),
    (dict(max_elements=0), ValueError, "replay: max_elements must be at least 1, got 0"),
    (dict(max_elements=2.5), TypeError, "replay: max_elements must be an int, got float"),
    (dict(retain_graph="yes"), TypeError, "replay: retain_graph must be bool, got str"),
    (dict(frames_dir=1), TypeError, "replay: frames_dir must be a str, a path or None, got int"),
])
def test_bad_arguments_are_refused_before_anything_runs(tmp_path, kwargs, error, message):
    t = tiny()
    arguments = dict(loss=t["loss"], path=tmp_path / "r.html") | kwargs
    with pytest.raises(error, match=re.escape(message)):
        replay(arguments.pop("loss"), arguments.pop("path"), **arguments)
    assert t["w"].grad is None and not t["loss"].grad_fn.released
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argument, where, error, message", [
    ("path", "missing/r.html", FileNotFoundError,
     "replay: path='{d}/missing/r.html' is in a directory that does not exist: '{d}/missing'"),
    ("path", "notes.txt/r.html", NotADirectoryError,
     "replay: path='{d}/notes.txt/r.html' is inside '{d}/notes.txt', which is a file"),
    ("path", ".", IsADirectoryError, "replay: path='{d}' is a directory; expected the HTML file"),
    ("frames_dir", "missing/frames", FileNotFoundError,
     "replay: frames_dir='{d}/missing/frames' is in a directory that does not exist: '{d}/missing'"),
    ("frames_dir", "notes.txt", NotADirectoryError,
     "replay: frames_dir='{d}/notes.txt' is a file; expected a directory"),
])
def test_paths_it_cannot_write_are_refused_before_backward_runs(tmp_path, argument, where, error,
                                                                message):
    (tmp_path / "notes.txt").write_text("not a directory")
    t = tiny()
    arguments = dict(path=None, frames_dir=None) | {argument: tmp_path / where}
    with pytest.raises(error, match=re.escape(message.format(d=tmp_path))):
        replay(t["loss"], arguments.pop("path"), **arguments)
    assert t["w"].grad is None and not t["loss"].grad_fn.released  # backward never ran
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_losses_backward_refuses_are_refused_as_backward_does(tmp_path):
    with pytest.raises(RuntimeError, match="does not require grad"):
        replay(tensor([1.0]), tmp_path / "r.html")
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        replay(x * 2, tmp_path / "r.html")
    r = replay(x * 2, tmp_path / "r.html", gradient=tensor([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -2.0])
    np.testing.assert_array_equal(r.frames[0].grad_output, [1.0, -1.0])


def test_the_article_network_replays_its_first_step(tmp_path):
    example = article.EXAMPLE_2
    net = article.ArticleNetwork(*example.initial_weights(), example.activation, "all")
    layers = net.layers(article.X1)
    cost = net.cost(article.X1, example.targets()[0], layers)
    r = replay(cost, tmp_path / "r.html")
    reference = article.ArticleNetwork(*example.initial_weights(), example.activation, "all")
    reference.cost(article.X1, example.targets()[0]).backward()
    for name, t in (("W1", reference.w1), ("W2", reference.w2)):
        np.testing.assert_array_equal(frame_of(r, name).grad_output, t.grad.numpy())
    assert [f.name for f in r.frames][:2] == ["Mul#1", "SumOfSquares#1"]
    assert frame_of(r, "L1Max").op == "MaxPool2d"


# ---- in a real browser ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="the playwright Python package is not installed")
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not pathlib.Path(executable).exists():
        pytest.skip(f"Debian's chromium is not installed (make deps installs it): no {executable}")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield browser
        browser.close()


def test_the_page_steps_through_the_frames_in_a_browser(browser, tmp_path):
    t = tiny()
    r = replay(t["loss"], tmp_path / "r.html")
    page = browser.new_page()
    requested, errors = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def only_local(route):
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            requested.append(url)
            route.abort()

    page.route("**/*", only_local)
    page.clock.install()  # play's timer runs on this clock: no real waiting
    page.goto(r.path.as_uri())

    def shown() -> int:
        """The frame on screen, checked against the engine: highlighted node, counter, numbers."""
        visible = page.query_selector_all("section.frame:not([hidden])")
        assert len(visible) == 1
        k = int(visible[0].get_attribute("data-frame"))
        frame = r.frames[k]
        current = page.query_selector_all("#graph g.node.current")
        assert [g.get_attribute("id") for g in current] == [frame.node_id]
        assert frame.name in current[0].text_content()
        assert page.inner_text("#frame-counter") == f"Frame {k + 1} / {len(r.frames)}"
        assert page.input_value("#slider") == str(k)
        cells = visible[0].query_selector_all('[data-role="grad_output"] td')
        np.testing.assert_array_equal([float(c.get_attribute("data-value")) for c in cells],
                                      frame.grad_output.ravel())
        active = {g.get_attribute("id") for g in page.query_selector_all("#graph g.edge.active")}
        assert active == set(frame.edge_ids)
        return k

    assert page.eval_on_selector_all("section.frame", "s => s.length") == len(r.frames) == 8
    assert shown() == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert shown() == 2
    page.keyboard.press("ArrowLeft")
    assert shown() == 1
    page.eval_on_selector("#slider", "(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }", 4)
    assert shown() == 4  # MaxPool2d: its lit cells are the saved argmax
    lit = page.eval_on_selector_all('section[data-frame="4"] [data-role="pool_input"] td',
                                    "cells => cells.map(c => c.classList.contains('argmax'))")
    np.testing.assert_array_equal(lit, r.frames[4].chosen.ravel())
    page.click("#next")
    assert shown() == 5
    page.click("#prev")
    page.click("#prev")
    assert shown() == 3
    assert page.get_attribute("#" + r.frames[2].node_id, "class") == "node done"
    page.click("#play")
    page.clock.run_for(1300)
    assert shown() == 4
    page.click("#play")  # pause
    page.clock.run_for(5000)
    assert shown() == 4
    page.keyboard.press("End")
    assert shown() == 7
    assert requested == [] and errors == []
    page.close()


def test_the_current_node_is_scrolled_into_view_in_a_notebook_sized_window(browser, tmp_path):
    x = Tensor([0.5, -0.25], requires_grad=True, dtype=np.float64, name="x")
    h = x
    for _ in range(25):  # a graph some 50 nodes tall: far taller than the 720-px iframe
        h = (h * 1.5).tanh()
    r = replay(h.sum(), tmp_path / "r.html")
    page = browser.new_page(viewport={"width": 1000, "height": 720})
    page.goto(r.path.as_uri())
    assert page.eval_on_selector("#graph svg", "s => s.getBoundingClientRect().height") > 1200

    def in_view(k: int) -> None:
        box = page.locator(f"#{r.frames[k].node_id}").bounding_box()
        pane = page.locator("#graph").bounding_box()
        header = page.locator("header").bounding_box()
        assert box["y"] >= max(pane["y"], header["y"] + header["height"]) - 1
        assert box["y"] + box["height"] <= min(pane["y"] + pane["height"], 720) + 1
        assert 0 <= box["x"] and box["x"] + box["width"] <= 1000

    in_view(0)  # the loss, at the bottom of the graph
    page.keyboard.press("End")
    in_view(len(r.frames) - 1)  # x, at the top
    for k in range(len(r.frames) // 2):
        page.keyboard.press("ArrowLeft")
    in_view(len(r.frames) - 1 - len(r.frames) // 2)  # a node in the middle
    page.close()


def test_the_page_shows_tied_cells_apart_from_the_argmax_in_a_browser(browser, tmp_path):
    x, loss = pooled_with_ties("split", dict(kernel_size=3, stride=2, padding=1))
    r = replay(loss, tmp_path / "r.html", max_elements=64)
    (pool,) = [f for f in r.frames if f.op == "MaxPool2d"]
    page = browser.new_page()
    page.goto(r.path.as_uri())
    page.eval_on_selector("#slider", "(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }",
                          pool.index)
    cells = page.eval_on_selector_all(
        f'section[data-frame="{pool.index}"] [data-role="input_grad"] td',
        "cells => cells.map(c => [c.className, getComputedStyle(c).backgroundColor, c.checkVisibility()])")
    assert len(cells) == x.numpy().size and all(visible for _, _, visible in cells)
    shown = np.array([name for name, _, _ in cells]).reshape(x.shape)
    np.testing.assert_array_equal(shown, np.where(pool.chosen, "argmax", np.where(pool.tied, "tied", "")))
    colour = {name: background for name, background, _ in cells}
    rgb = lambda hex_: "rgb(" + ", ".join(str(int(hex_[i:i + 2], 16)) for i in (1, 3, 5)) + ")"
    assert colour == {"argmax": rgb(replay_module.COLOURS["argmax"]),
                      "tied": rgb(replay_module.COLOURS["tied"]), "": "rgba(0, 0, 0, 0)"}
    page.close()
