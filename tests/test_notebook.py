"""docs/tutorial.ipynb: docs/tutorial.md as a notebook (examples/build_notebook.py makes it), run top
to bottom by nbclient in a kernel of this very interpreter, with a graph picture and a backward
replay shown inline."""
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from helpers import load_script  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[1]
NOTEBOOK = REPOSITORY / "docs" / "tutorial.ipynb"
TUTORIAL = REPOSITORY / "docs" / "tutorial.md"
PICTURES = ("image/svg+xml", "image/png")

# Appended to the committed notebook when it runs here: what the inline outputs must show,
# computed by the kernel from the tutorial's own objects.
PROBE = """import json
print(json.dumps({"loss": format(tiny_loss.item(), ".3g"), "replay_html": movie._repr_html_(),
                  "replay_bytes": os.path.getsize(movie.path),
                  "parameters": [name for name, _ in tiny.named_parameters()]}))"""


@pytest.fixture(scope="module")
def builder():
    return load_script("examples/build_notebook.py")


@pytest.fixture(scope="module")
def committed():
    return nbformat.read(str(NOTEBOOK), as_version=4)


def code_cell(nb, text: str):
    """The one code cell whose source contains ``text``."""
    found = [c for c in nb.cells if c.cell_type == "code" and text in c.source]
    assert len(found) == 1, f"{len(found)} code cells contain {text!r}"
    return found[0]


def mime_types(cell) -> set:
    return {mime for output in cell.outputs for mime in output.get("data", {})}


def printed(cell) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


# ---- the notebook is the markdown ------------------------------------------------------------
def test_committed_notebook_has_the_cells_the_markdown_makes(builder, committed):
    fresh = builder.notebook_from_markdown(TUTORIAL.read_text(encoding="utf-8"))
    assert ([(c.cell_type, c.source) for c in committed.cells]
            == [(c.cell_type, c.source) for c in fresh.cells]), \
        "docs/tutorial.ipynb is out of date: run python examples/build_notebook.py"
    assert [c.id for c in committed.cells] == [c.id for c in fresh.cells]
    # The very blocks tests/test_tutorial.py runs, in the same order.
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), re.DOTALL)
    assert [c.source for c in committed.cells if c.cell_type == "code"] == [b.rstrip("\n") for b in blocks]
    assert committed.metadata == {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}
    nbformat.validate(committed)


def test_markdown_splits_into_prose_and_code_cells(builder):
    text = ("# Title\n\nIntro.\n\n## 1. First\n\n```python\nx = 1\n\nprint(x)\n```\n\nMiddle,\n"
            "```sh\n# a shell comment, not a heading\npython run.py\n```\n### Sub\nEnd.\n")
    nb = builder.notebook_from_markdown(text)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        ("markdown", "# Title\n\nIntro."),
        ("markdown", "## 1. First"),
        ("code", "x = 1\n\nprint(x)"),
        ("markdown", "Middle,\n```sh\n# a shell comment, not a heading\npython run.py\n```"),
        ("markdown", "### Sub\nEnd.")]
    assert [c.id for c in nb.cells] == ["cell-00", "cell-01", "cell-02", "cell-03", "cell-04"]


def test_committed_notebook_carries_its_outputs(committed):
    cells = [c for c in committed.cells if c.cell_type == "code"]
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1))  # one run, in order
    outputs = [o for c in cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"]
    assert "0.weight (8, 1, 3, 3) float32" in printed(code_cell(committed, "named_parameters():\n"
                                                                          "    print(name"))
    graph = code_cell(committed, "draw_graph(tiny_loss")
    assert mime_types(graph) & set(PICTURES)
    assert "<svg" in graph.outputs[0].data["image/svg+xml"]
    assert "text/html" in mime_types(code_cell(committed, "viz.replay(tiny_loss"))


def test_committed_notebook_names_no_path_of_this_machine():
    text = NOTEBOOK.read_text(encoding="utf-8")
    for path in {str(REPOSITORY), str(Path.home()), os.path.realpath(tempfile.gettempdir()),
                 sys.executable}:
        assert path not in text
    assert not re.search(r"(?<![\w$])/(?:tmp|home|root|Users|work)/", text)
    assert not re.search(r" at 0x[0-9a-f]{6,}>", text)  # default reprs: a new address each run


# ---- the kernel --------------------------------------------------------------------------------
def test_kernel_runs_this_interpreter(builder):
    with builder.this_python_kernel() as name:
        assert builder.kernel_command(name)[0] == sys.executable


def test_a_python3_kernel_of_another_python_is_replaced(builder, monkeypatch, tmp_path):
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": ["/opt/other/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    assert builder.kernel_command("python3")[0] == "/opt/other/bin/python3"  # the trap is set
    with builder.this_python_kernel() as name:
        assert name == builder.OWN_KERNEL_NAME
        assert builder.kernel_command(name)[0] == sys.executable
    assert os.environ["JUPYTER_PATH"] == str(tmp_path)  # put back as it was
    assert builder.kernel_command("python3")[0] == "/opt/other/bin/python3"


# ---- running it ------------------------------------------------------------------------------
@pytest.mark.slow
def test_notebook_runs_top_to_bottom_with_inline_graph_and_replay(builder, committed):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is needed for the pictures section")
    nb = nbformat.from_dict(json.loads(json.dumps(committed)))  # a copy: outputs get replaced
    nb.cells.append(nbformat.v4.new_code_cell(PROBE, id="probe"))
    builder.execute(nb)  # raises CellExecutionError, naming the cell, if any cell fails

    *cells, probe = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    # The same kinds of output as the committed run, cell by cell.
    committed_cells = [c for c in committed.cells if c.cell_type == "code"]
    assert [sorted(mime_types(c)) for c in cells] == [sorted(mime_types(c)) for c in committed_cells]
    assert "0.weight (8, 1, 3, 3) float32" in printed(code_cell(nb, "named_parameters():\n"
                                                                   "    print(name"))
    seen = json.loads(printed(probe))

    # The inline graph: an SVG of tiny_loss's graph, labelled with its parameters and its value.
    svg = code_cell(nb, "draw_graph(tiny_loss").outputs[0].data["image/svg+xml"]
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert seen["parameters"] == ["0.weight", "0.bias", "4.weight", "4.bias"]
    for label in seen["parameters"] + ["image", "MaxPool2d", seen["loss"]]:
        assert f">{label}<" in svg, label

    # The inline replay: the page of the object viz.replay returned, written to its path.
    replay = code_cell(nb, "viz.replay(tiny_loss")
    html = [o.data["text/html"] for o in replay.outputs if "text/html" in o.get("data", {})]
    assert html == [seen["replay_html"]]
    assert seen["replay_bytes"] > 1000


def test_build_writes_nothing_when_a_cell_fails(builder, tmp_path):
    from nbclient.exceptions import CellExecutionError
    page = tmp_path / "page.md"
    page.write_text("# Broken\n\n```python\nprint('first')\n```\n\n```python\n1 / 0\n```\n")
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        builder.build(page, tmp_path / "page.ipynb")
    assert not (tmp_path / "page.ipynb").exists()


def test_outputs_are_scrubbed_of_the_run_folder_and_addresses(builder):
    run_dir = "/scratch/tinygrad-pool-notebook-ab12"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("stream", name="stdout",
                               text=f"{run_dir}/tmpk3j_9x0a/graph.png {builder.REPO}/docs\n"),
        nbformat.v4.new_output("execute_result", execution_count=1, data={
            "text/plain": "<tinygrad_pool.viz.replay_page.Replay at 0x7fc0bc65c290>",
            "text/html": f'<a href="{run_dir}/backprop.html">'})])])
    builder._scrub(nb, [run_dir])
    stream, result = nb.cells[0].outputs
    assert stream.text == "$TMPDIR/graph.png $REPO/docs\n"
    assert result.data == {"text/plain": "<tinygrad_pool.viz.replay_page.Replay>",
                           "text/html": '<a href="$TMPDIR/backprop.html">'}
