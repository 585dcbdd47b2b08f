"""The README's main demo: `python -m tinygrad_pool demo --out DIR` trains the article's network
and writes its pictures as real PNGs through Graphviz's `dot`."""
import os
import shutil
import subprocess
import sys

import pytest

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PICTURES = ["example1_graph.png", "example1_backprop.png",
            "example2_graph.png", "example2_backprop.png"]


# CI installs Graphviz, so there a missing `dot` fails instead of skipping.
@pytest.mark.skipif(shutil.which("dot") is None and not os.environ.get("CI"),
                    reason="Graphviz's dot is not installed")
def test_demo_writes_the_article_pictures(tmp_path):
    run = subprocess.run([sys.executable, "-m", "tinygrad_pool", "demo", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "1.41829836" in run.stdout and "1.39408372" in run.stdout
    for name in PICTURES:
        picture = tmp_path / name
        assert f"wrote {picture}" in run.stdout
        data = picture.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000, name


def test_demo_without_a_subcommand_is_a_usage_error():
    run = subprocess.run([sys.executable, "-m", "tinygrad_pool"], capture_output=True, text=True)
    assert run.returncode == 2 and "demo" in run.stderr
