"""Regenerate every picture in docs/: ``make docs-pictures`` runs this.

Each picture comes from a module with ``make(out_dir) -> list[Path]``: examples/article_pictures.py
and every examples/pictures_*.py (found by name, in sorted order, so a new module needs no
registration here). tests/test_docs_pictures.py renders them all again and fails when a committed
picture differs from a fresh render.

Run:  python examples/docs_pictures.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent


def picture_modules() -> list:
    """The scripts that make docs pictures, article_pictures.py first."""
    return [EXAMPLES / "article_pictures.py"] + sorted(EXAMPLES.glob("pictures_*.py"))


def load(path: Path):
    """A script of examples/ as a module (examples/ is no package; its scripts import each
    other by name, so it goes on sys.path first)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"docs_pictures_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make(out_dir) -> list:
    """Every docs picture, written into ``out_dir``; returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in picture_modules():
        written += [Path(p) for p in load(path).make(out_dir)]
    return written


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
