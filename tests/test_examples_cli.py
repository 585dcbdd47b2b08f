"""Every example takes --help and its arguments through argparse: --help prints what the
script does and creates nothing, and a picture script writes only where it is told (no silent
rewrite of docs/images)."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PICTURE_SCRIPTS = ["article_pictures.py", "docs_pictures.py"] + sorted(
    p.name for p in EXAMPLES.glob("pictures_*.py"))
SCRIPTS = PICTURE_SCRIPTS + ["article_network.py", "digits_cnn.py", "build_notebook.py"]


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_describes_the_script_and_writes_nothing(script, tmp_path):
    done = run(script, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ") and len(done.stdout.splitlines()) > 3
    assert list(tmp_path.iterdir()) == []  # (it once made a folder named --help)


@pytest.mark.parametrize("script", PICTURE_SCRIPTS)
def test_a_picture_script_needs_to_be_told_where_to_write(script, tmp_path):
    done = run(script, cwd=tmp_path)
    assert done.returncode == 2 and "the following arguments are required: out" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_bare_make_prints_the_targets():
    done = subprocess.run(["make", "-s", "-C", str(EXAMPLES.parent)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    for target in ("make demo", "make test", "make bench", "make docs-pictures"):
        assert target in done.stdout
