"""viz.replay on a real network: a LeNet-5 on 28×28 digits at batch 64. What a frame shows reads
inside its pane (long vectors and wide slices summarised), says things as a reader writes them
(no Python or NumPy reprs), titles parameters by module path, lays the graph out once for every
picture, and its controls fit one row of a 1000 × 700 window in a real browser."""
import html
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn, Tensor
from tinygrad_pool.viz import replay
from tinygrad_pool.viz.summary import argument, arguments, number as rounded

from test_replay import browser, section  # noqa: F401  (the same headless chromium, by fixture)

replay_module = sys.modules["tinygrad_pool.viz.replay_page"]
pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

# What Python or NumPy print and a reader would not write: np.float32(1.0), ((64, 10)),
# dtype('float32'), NumPy's axis=/keepdims= (PyTorch: dim=/keepdim=), "array 64".
RAW_REPRS = re.compile(r"np\.|\(\(|dtype\(|axis=|keepdims=|array \d")


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 8, 3), nn.Conv2d(8, 16, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc1, self.fc2 = nn.Linear(16 * 5 * 5, 32), nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def lenet_loss(seed: int = 0):
    rng = np.random.default_rng(seed)
    model = LeNet()
    images = Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    labels = Tensor(rng.integers(0, 10, 64), dtype=np.int64)
    return model, F.cross_entropy(model(images), labels)


def page_text(page: str) -> str:
    """What a reader sees of the page: its text, without the script and styles."""
    page = re.sub(r"<(script|style)>.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.fixture
def dot_runs(monkeypatch):
    """Every `dot` command replay runs, as (argv, source)."""
    runs, run = [], subprocess.run

    def spy(command, *args, **kwargs):
        runs.append((command, kwargs.get("input", b"").decode("utf-8")))
        return run(command, *args, **kwargs)

    monkeypatch.setattr(replay_module.subprocess, "run", spy)
    return runs


# ---- no reprs ---------------------------------------------------------------------------------
def ops_zoo():
    """Ops whose saved state and arguments hold tuples, NumPy scalars, slices, lists and arrays."""
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((2, 3, 4, 4)).astype(np.float32), requires_grad=True, name="x")
    norms = nn.Sequential(nn.BatchNorm2d(3), nn.LayerNorm(4))
    embedding = nn.Embedding(5, 4)
    largest, _ = x.max(dim=1)
    parts = [x.sum(dim=1, keepdim=True).mean(dim=2), x.amax(dim=-1),
             F.softmax(x, dim=1).pow(2).permute(0, 2, 3, 1).reshape(2, -1),
             F.dropout(x, 0.5), x.clamp(-1, 1), x.expand(2, 2, 3, 4, 4), norms(x),
             embedding(Tensor(np.array([1, 2, 3]), dtype=np.int64)), largest,
             x.std(dim=1, keepdim=True)]
    joined = tinygrad_pool.cat([parts[2], parts[2]], dim=1)[:, 3:9]
    loss = sum(p.sum() for p in parts) + joined.sum() + F.nll_loss(
        x.reshape(2, -1)[:, :5].log_softmax(dim=1), Tensor(np.array([1, 4]), dtype=np.int64))
    return loss


@pytest.mark.parametrize("network", ["lenet", "ops"])
def test_no_python_or_numpy_reprs_in_the_page_or_the_frames(network, tmp_path, dot_runs):
    loss = lenet_loss()[1] if network == "lenet" else ops_zoo()
    r = replay(loss, None, frames_dir=tmp_path)
    text = page_text(r.html)
    assert RAW_REPRS.findall(text) == []
    pictures = [source for command, source in dot_runs if "-Tpng" in command]
    assert pictures and [RAW_REPRS.findall(source) for source in pictures] == [[]] * len(pictures)
    for frame in r.frames:
        assert [RAW_REPRS.findall(v) for v in frame.saved.values()] == [[]] * len(frame.saved)
    if network == "ops":  # arguments under PyTorch's names, values as one writes them
        for written in ("dim=1, keepdim=True", "dim=2, keepdim=False", "dims=(0, 2, 3, 1)",
                        "index=[:, 3:9]", "min=-1, max=1", "p=0.5", "dim=1, correction=1, keepdim=True",
                        "ignore_index=-100, reduction='mean'", "shape=2×2×3×4×4"):
            assert written in text, written
        assert "saved for backward: spans" not in text  # cat's spans are structure, not saved
        assert "saved for backward: mask 2×3×4×4 bool" in text
        return
    linear = next(f for f in r.frames if f.name == "Linear#1")
    assert linear.saved == {"x": "64×400 float32", "weight": "32×400 float32"}
    loss_frame = r.frames[0]  # an array as its shape and dtype; a 0-d one as the number it is
    assert {k: loss_frame.saved[k] for k in ("classes", "total_weight")} == \
        {"classes": "64×1 int64", "total_weight": "64"}
    pool = section(r.html, next(f for f in r.frames if f.name == "MaxPool2d#1").index)
    assert ('<p class="args">kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False, '
            'ties=&#x27;first&#x27;</p>') in pool


@pytest.mark.parametrize("value, key, written", [
    ((1,), "axis", "1"), ((0, 2, 3), "axis", "(0, 2, 3)"), ((2, 2), "kernel_size", "2"),
    ((64, 400), "x_shape", "64×400"), ((), "b_shape", "scalar"), ((28, 28), "input_hw", "28×28"),
    (np.float32(64.0), "total_weight", "64"), (np.float64(1 / 3), "scale", "0.3333"),
    (np.int64(-100), "ignore_index", "-100"), (np.bool_(True), "keepdim", "True"),
    ((slice(None), slice(3, 9), 2), "index", "[:, 3:9, 2]"), ((1, 1), "index", "[1, 1]"),
    ([(0, 48), (48, 96)], "spans", "[(0, 48), (48, 96)]"), ((2, 2), "repeats", "(2, 2)"),
    (np.arange(64) % 10, "target", "64 int64: [0, 1, 2, …, 1, 2, 3]"),
    (((0, 0), (0, 0), (1, 2)), "widths", "(1, 2)"),  # F.pad's pad: the last dim first
    (np.dtype("float32"), "dtype", "float32"), ("mean", "reduction", "'mean'"),
])
def test_values_are_written_as_a_reader_writes_them(value, key, written):
    # the page's rule is summary.argument's, at the page's DIGITS significant digits
    assert argument(key, value, precision=replay_module.DIGITS) == written


def test_arguments_take_pytorchs_names_and_leave_out_bookkeeping():
    assert arguments({"axis": (1,), "keepdims": True}) == ["dim=1", "keepdim=True"]
    assert arguments({"low": -1, "high": None}) == ["min=-1"]
    assert arguments({"p": 0.5, "mask_shape": (2, 3), "generator": object(), "out_hw": (5, 5)}) == ["p=0.5"]
    assert arguments({"ties": "first", "stride": (2, 2), "kernel_size": (3, 3)}) == \
        ["kernel_size=3", "stride=2", "ties='first'"]


def test_slices_left_out_are_counted_in_the_right_number(tmp_path):
    for count, words in ((5, "… 1 more slice<"), (7, "… 3 more slices<")):
        x = Tensor(np.ones((count, 2, 2)), requires_grad=True, name="x")
        assert words in section(replay(x.sum(), None).html, 1)


# ---- summaries --------------------------------------------------------------------------------
def grid_rows(fragment: str) -> list:
    """The number cells of each row of every table of numbers in an HTML fragment."""
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row)
            for table in re.findall(r'<table class="grid[^"]*">(.*?)</table>', fragment, flags=re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)]


def test_a_lenet_replay_summarises_every_long_vector_and_wide_slice(tmp_path, dot_runs):
    model, loss = lenet_loss()
    r = replay(loss, None, frames_dir=tmp_path)
    widths = [len(row) for f in r.frames for row in grid_rows(section(r.html, f.index))]
    assert widths and max(widths) <= replay_module.GRID_COLUMNS  # no row of numbers runs off
    # fc1.bias (32 entries): its first and last three, with "…" between, statistics, a heat strip
    bias = next(f for f in r.frames if f.name == "fc1.bias")
    page = section(r.html, bias.index)
    block = page[page.index('data-role="grad_output"'):page.index('data-role="value"')]
    grad = bias.grad_output
    shown = [float(v) for v in re.findall(r'<td data-value="([^"]+)"', block)]
    np.testing.assert_array_equal(shown, np.concatenate([grad[:3], grad[-3:]]))
    assert '<td class="gap" title="26 more entries">…</td>' in block
    stats = dict(re.findall(r'data-stat="(\w+)" data-value="([^"]+)"', block))
    assert float(stats["min"]) == grad.min() and float(stats["max"]) == grad.max()
    assert block.count("<rect ") == 32 and "heat strip: red" in block
    # a wide slice (fc2.weight's gradient is 10×32) is statistics and a heat-map, no table
    weight = section(r.html, next(f for f in r.frames if f.name == "fc2.weight").index)
    assert "heat-map: red" in weight and "<table" not in weight
    # ... and the PNG frames the same: no row of more than GRID_COLUMNS numbers
    number = re.compile(r"<TD(?: [^>]*)?>(?:<B>)?[-+.\deinaf]+(?:</B>)?</TD>")
    for _, source in (run for run in dot_runs if "-Tpng" in run[0]):
        rows = re.findall(r"<TR>((?:(?!<TR>).)*?)</TR>", source)
        assert max(len(number.findall(row)) for row in rows) <= replay_module.GRID_COLUMNS
    (row,) = [row for row in re.findall(r"<TR>((?:(?!<TR>).)*?)</TR>", replay_module._png_panel(
        bias, True, 64)) if "…" in row]
    assert number.findall(row) == [f"<TD>{rounded(v, replay_module.DIGITS)}</TD>"
                                   for v in np.concatenate([grad[:3], grad[-3:]])]


def test_a_vector_is_every_number_up_to_the_width_of_a_summary():
    columns = replay_module.GRID_COLUMNS
    shown = {}
    for n in (columns, columns + 1):
        x = Tensor(np.zeros(n), requires_grad=True, name="x")
        r = replay((x * Tensor(np.arange(float(n)))).sum(), None)
        shown[n] = grid_rows(section(r.html, r.frames[-1].index))[0]
    assert shown[columns] == [str(v) for v in range(columns)]
    assert shown[columns + 1] == ["0", "1", "2", "…", *map(str, range(columns - 2, columns + 1))]
    assert len(shown[columns + 1]) == columns  # a summary is no wider than the widest grid


# ---- titles -----------------------------------------------------------------------------------
def test_parameters_are_titled_by_module_path_in_every_frame_and_label(tmp_path, dot_runs):
    model, _ = lenet_loss()
    model.fc1.weight.name = "W"  # its own name: the module path still titles it
    model.conv1.bias.requires_grad_(False)  # frozen: a constant, titled all the same
    scale = nn.Parameter(np.array(2.0, dtype=np.float32), name="scale")  # no module holds it: its name
    images = Tensor(np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype(np.float32))
    loss = (model(images) * scale).sum()
    r = replay(loss, None, frames_dir=tmp_path)
    paths = {id(p): name for name, p in model.named_parameters()}
    leaves = {f.name: id(f.node) for f in r.frames if f.op is None}
    assert leaves == {name: id(p) for name, p in model.named_parameters() if p.requires_grad} | \
        {"scale": id(scale)}
    svg = r.html[r.html.index("<svg"):r.html.index("</svg>")]
    for name in paths.values():  # its node in the graph (conv1.bias: drawn as a constant)
        assert f">{name}</text>" in svg, name
    assert ">W</text>" not in svg and "leaf#" not in r.html
    linear = section(r.html, next(f for f in r.frames if f.name == "Linear#1").index)
    assert "input 1 → fc1.weight" in linear and "input 2 → fc1.bias" in linear
    assert "Gradient arriving: ∂loss/∂fc1.weight" in section(
        r.html, next(f for f in r.frames if f.name == "fc1.weight").index)
    pictures = "\n".join(source for command, source in dot_runs if "-Tpng" in command)
    assert "sent to input 1 (fc1.weight):" in pictures and "sent to input 1 (W)" not in pictures


# ---- one layout -------------------------------------------------------------------------------
def test_frames_dir_lays_the_graph_out_once_for_the_page_and_every_frame(tmp_path, dot_runs,
                                                                       monkeypatch):
    layouts, layout = [], replay_module._layout
    monkeypatch.setattr(replay_module, "_layout", lambda *a: layouts.append(a) or layout(*a))
    _, loss = lenet_loss()
    r = replay(loss, tmp_path / "r.html", frames_dir=tmp_path / "frames")
    assert len(r.frames) == 20 and len(sorted((tmp_path / "frames").glob("frame_*.png"))) == 20
    assert len(layouts) == 1
    laid_out = [command for command, _ in dot_runs if "-Knop2" not in command]
    assert laid_out == [["dot", "-Tjson0"]]  # the only run that places anything
    drawn = [command for command, _ in dot_runs if "-Knop2" in command]
    assert len(drawn) < len(r.frames) and ["dot", "-Tsvg", "-Knop2"] in drawn
    # every frame draws each node where the page's graph has it
    positions = [dict(re.findall(r'\n  (n\d+) \[.*? pos="([^"]+)"', source))
                 for command, source in dot_runs if "-Knop2" in command]
    assert len(positions[0]) == len(r.frames) and all(p == positions[0] for p in positions)


def test_png_files_are_split_by_their_chunks_not_by_a_byte_pattern():
    def png(payload: bytes) -> bytes:
        chunk = lambda kind, data: len(data).to_bytes(4, "big") + kind + data + b"crc!"
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IDAT", payload) + chunk(b"IEND", b"")
    tricky = png(b"IEND\xaeB`\x82 inside the data"), png(b"x" * 100)
    assert replay_module._split_pngs(b"".join(tricky)) == list(tricky)


# ---- in a real browser, at 1000 × 700 ---------------------------------------------------------
def test_controls_are_one_row_and_the_graph_and_numbers_fit_a_1000_by_700_window(browser, tmp_path):
    _, loss = lenet_loss()
    r = replay(loss, tmp_path / "r.html")
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(r.path.as_uri())
    header = page.locator("header").bounding_box()
    controls = [page.locator(s).bounding_box() for s in
                ("header h1", "#prev", "#play", "#next", "#slider", "#frame-counter", ".legend")]
    rows = {round(c["y"] + c["height"] / 2) for c in controls}
    assert max(rows) - min(rows) <= 3, controls  # one row: every control on the same line
    assert all(c["x"] + c["width"] <= 1000 and c["y"] + c["height"] <= header["y"] + header["height"]
               for c in controls)
    assert header["height"] < 2 * max(c["height"] for c in controls)
    # The whole graph is in its pane, below the controls; nothing covers its top node
    pane, graph = page.locator("#graph").bounding_box(), page.locator("#graph-svg").bounding_box()
    bottom = header["y"] + header["height"]
    assert bottom <= pane["y"] <= graph["y"] and graph["y"] + graph["height"] <= pane["y"] + pane["height"]
    assert graph["x"] >= pane["x"] and graph["x"] + graph["width"] <= pane["x"] + pane["width"]
    top = min((page.locator(f"#{f.node_id}").bounding_box() for f in r.frames), key=lambda b: b["y"])
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('#graph') !== null",
                        [top["x"] + top["width"] / 2, top["y"] + top["height"] / 2])
    assert hit and top["y"] >= bottom
    page.screenshot(path=str(tmp_path / "lenet_frame_1.png"))
    # Every frame's numbers fit the pane's width: no row runs off it
    for k in range(len(r.frames)):
        overflow = page.eval_on_selector("#panel", "p => p.scrollWidth - p.clientWidth")
        assert overflow <= 0, f"frame {k + 1} ({r.frames[k].name}) runs {overflow} px off the pane"
        if r.frames[k].name == "fc1.bias":
            page.screenshot(path=str(tmp_path / "lenet_fc1_bias.png"))
        page.keyboard.press("ArrowRight")
    page.close()


def test_the_widest_grid_of_long_numbers_fits_the_pane(browser, tmp_path):
    """GRID_COLUMNS numbers of the longest kind (10 characters at 4 significant digits)."""
    x = Tensor(np.zeros((8, replay_module.GRID_COLUMNS)), requires_grad=True, name="x")
    r = replay((x * Tensor(np.full(x.shape, -0.00019414))).sum(), tmp_path / "r.html")
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(r.path.as_uri())
    page.keyboard.press("End")  # x's frame: its gradient, 8 × GRID_COLUMNS
    cells = page.query_selector_all(f'section[data-frame="{r.frames[-1].index}"] '
                                    f'[data-role="grad_output"] td')
    assert [c.inner_text() for c in cells][:2] == ["-0.0001941"] * 2
    assert page.eval_on_selector("#panel", "p => p.scrollWidth - p.clientWidth") <= 0
    page.screenshot(path=str(tmp_path / "widest_grid.png"))
    page.close()
