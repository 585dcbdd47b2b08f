"""The committed pictures in docs/ are what `make docs-pictures` makes today.

Every picture is rendered again into a temporary folder by examples/docs_pictures.py and
compared with docs/images by content: PNG by decoded pixels (size, mode and every pixel byte;
the container's compression and metadata do not count), SVG by text. Nothing in docs/images is
stale (every file there is made by the script) and every picture docs/ and the README show exists.
"""
import re
import shutil
from pathlib import Path

import pytest

from helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
FIX = "run `make docs-pictures` and commit docs/images"

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs_pictures")
    written = load_script("examples/docs_pictures.py").make(out)
    return out, written


def content(path: Path):
    if path.suffix == ".svg":
        return path.read_text()
    from PIL import Image
    with Image.open(path) as image:
        return image.size, image.mode, image.tobytes()


def test_every_committed_picture_equals_a_fresh_render(fresh):
    out, written = fresh
    assert written, "examples/docs_pictures.py wrote nothing"
    for path in written:
        committed = IMAGES / path.name
        assert committed.exists(), f"{path.name} is made by docs_pictures.py but not committed: {FIX}"
        new, old = content(path), content(committed)
        if path.suffix != ".svg" and new[:2] != old[:2]:
            pytest.fail(f"{path.name}: size/mode {old[:2]} committed, {new[:2]} rendered now: {FIX}")
        assert new == old, f"{path.name} differs from a fresh render: {FIX}"


def test_nothing_in_docs_images_is_stale(fresh):
    _, written = fresh
    made = {p.name for p in written}
    stale = sorted(p.name for p in IMAGES.iterdir() if p.name not in made)
    assert not stale, f"no script makes {stale}: delete them, or add them to a pictures module"


def test_every_picture_docs_show_exists():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    missing = []
    for page in pages:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", page.read_text()):
            if not re.match(r"https?://", target) and not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, f"pictures shown but missing: {missing}"


def test_the_backprop_figures_read_at_page_width(fresh):
    from PIL import Image
    out, _ = fresh
    for name in ("example1_backprop.png", "example2_backprop.png", "tie_rules.png"):
        with Image.open(out / name) as image:
            assert image.size[0] <= 1100, f"{name} is {image.size[0]} px wide"


RESIZE_PICTURES = ("fan_in_bilinear_output.png", "fan_in_bilinear_input.png",
                   "fan_in_reflect_output.png", "fan_in_reflect_input.png", "fan_in_pad_modes.png",
                   "graph_upsampling.png")


def test_the_interpolation_and_padding_pictures_are_made_and_shown(fresh):
    """examples/pictures_resize.py's pictures: each made, shown on docs/visualization.md, and
    each fan-in picture no wider than the page."""
    from PIL import Image
    out, written = fresh
    assert set(RESIZE_PICTURES) <= {p.name for p in written}
    page = (ROOT / "docs" / "visualization.md").read_text()
    for name in RESIZE_PICTURES:
        assert f"(images/{name})" in page, f"docs/visualization.md does not show {name}"
        with Image.open(out / name) as image:
            assert not name.startswith("fan_in") or image.size[0] <= 1100, \
                f"{name} is {image.size[0]} px wide"
