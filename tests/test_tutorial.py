"""docs/tutorial.md runs: its ```python blocks, executed in order in one namespace."""
import re
import shutil
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def test_tutorial_code_runs(capsys):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is needed for the pictures section")
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 6
    namespace = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"tutorial.md block {number}", "exec"), namespace)
    assert Path(namespace["graph_path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "0.weight (8, 1, 3, 3) float32" in capsys.readouterr().out
