"""Write docs/tutorial.ipynb from docs/tutorial.md and run it, so the notebook carries its outputs.

docs/tutorial.md stays the one source: its prose becomes markdown cells (a new cell at each
heading) and each ```python block a code cell; other fences (```sh) stay prose. The notebook is
then executed top to bottom by nbclient in a kernel that runs this very interpreter — the
project's venv, whatever `python3` kernel Jupyter would otherwise pick — from a scratch folder,
so nothing is written into the repository but the notebook itself.

The written file is reproducible: cell ids are numbered, timing metadata is not recorded, the
kernel's version details are dropped, and no path of this machine is left in it.

Run:  python examples/build_notebook.py [NOTEBOOK]     (default: docs/tutorial.ipynb)
tests/test_notebook.py checks that the committed notebook is what this script makes, and runs it.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
TUTORIAL = REPO / "docs" / "tutorial.md"
NOTEBOOK = REPO / "docs" / "tutorial.ipynb"
KERNEL_NAME = "python3"
OWN_KERNEL_NAME = "tinygrad-pool-venv"  # the kernelspec written when python3 is another Python
TIMEOUT_S = 120                         # per cell; the training loop takes about a second

# A ```python block, and a heading line: where new cells start.
_CODE = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_HEADING = re.compile(r"#{1,6} ")


def notebook_from_markdown(text: str) -> nbformat.NotebookNode:
    """The notebook for a markdown page, not yet executed."""
    cells = []

    def add_prose(prose: str):
        part, fenced = [], False
        for line in prose.splitlines():
            if _HEADING.match(line) and not fenced:
                add_markdown(part)  # a `# comment` inside a ```sh fence is no heading
                part = []
            fenced ^= line.startswith("```")
            part.append(line)
        add_markdown(part)

    def add_markdown(lines: list[str]):
        if "".join(lines).strip():
            cells.append(nbformat.v4.new_markdown_cell("\n".join(lines).strip("\n")))

    start = 0
    for block in _CODE.finditer(text):
        add_prose(text[start:block.start()])
        cells.append(nbformat.v4.new_code_cell(block.group(1).rstrip("\n")))
        start = block.end()
    add_prose(text[start:])
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number:02d}"  # nbformat draws random ids: numbered ones diff cleanly
    return nbformat.v4.new_notebook(cells=cells, metadata=_metadata())


def _metadata() -> dict:
    # What a reader's Jupyter needs to pick a kernel; nothing about this machine's Python.
    return {"kernelspec": {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"}}


def kernel_command(kernel_name: str) -> list[str]:
    """The command Jupyter would start for ``kernel_name``: its kernelspec's argv, with the
    substitutions jupyter_client makes (a bare ``python`` becomes the running interpreter)."""
    return KernelManager(kernel_name=kernel_name).format_kernel_cmd()


@contextlib.contextmanager
def this_python_kernel():
    """The name of a kernel that runs ``sys.executable``, for as long as the block runs.

    Usually that is python3 itself: ipykernel's spec says ``python``, which jupyter_client
    replaces with the running interpreter. A python3 spec installed elsewhere (a user's
    ~/.local/share/jupyter, a conda base) may name another Python, one without tinygrad_pool;
    then a spec pointing at this interpreter is written to a temporary folder put first on
    JUPYTER_PATH, and its name is yielded instead.
    """
    if kernel_command(KERNEL_NAME)[0] == sys.executable:
        yield KERNEL_NAME
        return
    previous = os.environ.get("JUPYTER_PATH")
    with tempfile.TemporaryDirectory(prefix="tinygrad-pool-kernel-") as data_dir:
        spec_dir = Path(data_dir, "kernels", OWN_KERNEL_NAME)
        spec_dir.mkdir(parents=True)
        spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (tinygrad_pool)", "language": "python"}
        (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [data_dir, previous]))
        try:
            yield OWN_KERNEL_NAME
        finally:
            if previous is None:
                del os.environ["JUPYTER_PATH"]
            else:
                os.environ["JUPYTER_PATH"] = previous


def execute(nb: nbformat.NotebookNode, timeout: int = TIMEOUT_S) -> nbformat.NotebookNode:
    """Run every cell of ``nb`` in place, top to bottom; the first error raises
    nbclient's CellExecutionError, naming the cell.

    The kernel imports tinygrad_pool from this checkout and starts in a scratch folder, which is
    also its TMPDIR: whatever the cells write (tempfile.mkdtemp()) is gone afterwards, and its
    paths can be taken out of the outputs.
    """
    with this_python_kernel() as kernel_name, \
            tempfile.TemporaryDirectory(prefix="tinygrad-pool-notebook-") as run_dir:
        env = dict(os.environ, TMPDIR=run_dir,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, record_timing=False,
                                resources={"metadata": {"path": run_dir}})
        client.execute(env=env)
        _scrub(nb, [run_dir, os.path.realpath(run_dir)])
    nb.metadata = nbformat.from_dict(_metadata())  # drop the kernel's version details
    return nb


def _scrub(nb: nbformat.NotebookNode, run_dirs: list[str]) -> None:
    """Make the text outputs the same on every run and machine: the scratch folder (and the
    random name of a tempfile.mkdtemp() inside it) becomes $TMPDIR, the checkout $REPO, and the
    memory address in a default repr (<... at 0x7f...>) goes."""
    folders = "|".join(re.escape(d) for d in sorted(set(run_dirs), key=len, reverse=True))
    rules = [(re.compile(rf"(?:{folders})(?:/tmp[\w-]{{8}}(?=/))?"), "$TMPDIR"),
             (re.compile(re.escape(str(REPO))), "$REPO"),
             (re.compile(r" at 0x[0-9a-fA-F]+>"), ">")]

    def scrub(text: str) -> str:
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
        return text

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = scrub(output.text)
            for mime, value in output.get("data", {}).items():
                if isinstance(value, str):
                    output.data[mime] = scrub(value)
            if "traceback" in output:
                output.traceback = [scrub(line) for line in output.traceback]


def build(markdown: Path = TUTORIAL, notebook: Path = NOTEBOOK) -> Path:
    """Make ``notebook`` from ``markdown``, execute it and write it (only if every cell ran)."""
    nb = execute(notebook_from_markdown(markdown.read_text(encoding="utf-8")))
    nbformat.validate(nb)
    nbformat.write(nb, str(notebook))
    return notebook


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebook", type=Path, nargs="?", default=NOTEBOOK,
                        help="where to write the executed notebook (default: %(default)s)")
    print(build(notebook=parser.parse_args(argv).notebook))


if __name__ == "__main__":
    main()
