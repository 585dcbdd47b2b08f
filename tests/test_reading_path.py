"""docs/architecture.md stays true to the code.

The reading path: the files it lists exist, their line counts are about what it says, and
together they stay within 1,200 lines — the few files a newcomer reads to see the whole engine
and one op end to end. The map: the table's "imports from the package" column and the mermaid
chart say exactly which part imports which, as the import walk of tests/test_layers.py finds it.
"""
import re
from pathlib import Path

import pytest

from test_layers import GRAPH, MODULES, PACKAGE

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
BUDGET = 1200  # lines, all the reading path's files together

# Modules the map leaves out, as the page says: what only gathers names (a package's
# __init__.py that re-exports), and what nearly everything imports (its own row, no arrows).
GATHERERS = {"tinygrad_pool", "tinygrad_pool.__main__", "tinygrad_pool.optim",
             "tinygrad_pool.utils", "tinygrad_pool.viz"}
LEFT_OUT_IMPORTS = {"tinygrad_pool.args", "tinygrad_pool.unsupported"}
NOT_IN_THE_CHART = GATHERERS | LEFT_OUT_IMPORTS | {"tinygrad_pool.threads"}

PATHS = {module: path.relative_to(PACKAGE).as_posix() for module, path in MODULES.items()}


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/architecture.md has no section '## {title}'"
    return match.group(1)


# ---- the reading path --------------------------------------------------------------------------
ITEM = re.compile(r"^\d+\. `(tinygrad_pool/[\w/]+\.py)` \(([\d,]+) lines\)", re.M)
TOTAL = re.compile(r"Together: ([\d,]+) lines")


def reading_path(text: str) -> tuple:
    """([(path, lines written beside it)], the total written) of the '## Reading path' list."""
    body = section(text, "Reading path")
    items = [(path, int(count.replace(",", ""))) for path, count in ITEM.findall(body)]
    total = TOTAL.search(body)
    return items, int(total.group(1).replace(",", "")) if total else None


def line_count(path: str) -> int:
    with open(ROOT / path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def check_reading_path(text: str) -> None:
    """The promise: files that exist, at most BUDGET lines together, counts written about right
    (within a tenth, or 10 lines: a small edit need not touch the page), the total their sum."""
    items, total = reading_path(text)
    assert len(items) >= 2, "the reading path lists no files (expected '1. `path` (N lines)...')"
    missing = [path for path, _ in items if not (ROOT / path).is_file()]
    assert not missing, f"the reading path names files that do not exist: {missing}"
    actual = {path: line_count(path) for path, _ in items}
    assert sum(actual.values()) <= BUDGET, (
        f"the reading path is {sum(actual.values())} lines, over its budget of {BUDGET}: "
        + ", ".join(f"{path} {n}" for path, n in actual.items()))
    wrong = [f"{path}: written {written}, wc -l says {actual[path]}" for path, written in items
             if abs(written - actual[path]) > max(10, actual[path] // 10)]
    assert not wrong, "update the line counts in the reading path: " + "; ".join(wrong)
    assert total == sum(written for _, written in items), (
        f"'Together: {total} lines' is not the sum of the counts written beside the files "
        f"({sum(written for _, written in items)})")


def test_the_reading_path_keeps_its_promise():
    check_reading_path(DOC.read_text(encoding="utf-8"))


def test_the_reading_path_covers_the_engine_and_one_op_that_saves_explicitly():
    paths = [path for path, _ in reading_path(DOC.read_text(encoding="utf-8"))[0]]
    for core in ("tinygrad_pool/engine/tensor.py", "tinygrad_pool/engine/node.py",
                 "tinygrad_pool/engine/backward.py"):
        assert core in paths, f"the reading path leaves out {core}"
    ops = [path for path in paths if path.startswith("tinygrad_pool/ops/")]
    assert ops, "the reading path shows no op"
    source = (ROOT / ops[0]).read_text(encoding="utf-8")
    assert "ctx.save_for_backward(" in source and "ctx.saved_tensors" in source, (
        f"{ops[0]} does not show explicit saving (save_for_backward / saved_tensors)")


def test_the_check_refuses_a_path_over_its_budget():
    """It can fail: a path through the two longest files is over 1,200 lines."""
    longest = sorted(PATHS.values(), key=lambda p: -line_count(f"tinygrad_pool/{p}"))[:2]
    items = "\n".join(f"{k}. `tinygrad_pool/{p}` ({line_count(f'tinygrad_pool/{p}')} lines)"
                      for k, p in enumerate(longest, 1))
    text = f"## Reading path\n\n{items}\n\nTogether: 0 lines\n"
    with pytest.raises(AssertionError, match="over its budget"):
        check_reading_path(text)


# ---- the map: table and chart against the imports -----------------------------------------------
PATH_TOKEN = re.compile(r"^[\w/]+(\.py|/)$")


def paths_in(text: str) -> list:
    """The file (``x.py``) and package (``x/``) names in a cell or label, each checked."""
    tokens = [t.strip() for t in re.split(r",|<br/>", re.sub(r"\([^)]*\)", "", text))]
    tokens = [t.strip("`") for t in tokens if t]
    bad = [t for t in tokens if not PATH_TOKEN.match(t)]
    assert not bad, f"not a file or package name: {bad} in {text!r}"
    return tokens


def assign(parts: dict, left_out: set) -> dict:
    """module -> the part that holds it: the one naming its file, else the one naming the
    innermost package that holds it. Every module but ``left_out`` must land in one part, and
    every name must be of a module."""
    where, unknown = {}, []
    for part, names in parts.items():
        for name in names:
            if not any(p == name or (name.endswith("/") and p.startswith(name))
                       for p in PATHS.values()):
                unknown.append(name)
    assert not unknown, f"names no module of tinygrad_pool/: {unknown}"
    for module, path in PATHS.items():
        best, depth = None, -1
        for part, names in parts.items():
            for name in names:
                if name == path:
                    best, depth = part, 10 ** 6
                elif name.endswith("/") and path.startswith(name) and len(name) > depth:
                    best, depth = part, len(name)
        if best is not None:
            where[module] = best
    homeless = sorted(set(PATHS) - set(where) - left_out)
    assert not homeless, f"modules the map does not show: {homeless}"
    return where


def imports_between(where: dict, left_out: set, not_counted: set) -> set:
    """(A, B) for every part A some module of which imports a module of part B (imports of
    ``left_out`` modules and of ``not_counted`` ones are not counted)."""
    found = set()
    for module, imported in GRAPH.items():
        if module in left_out or module not in where:
            continue
        for target in imported:
            if target not in not_counted and where.get(target, where[module]) != where[module]:
                found.add((where[module], where[target]))
    return found


def describe(pairs) -> str:
    return ", ".join(f"{a} --> {b}" for a, b in sorted(pairs))


def test_the_chart_draws_every_import_and_nothing_else():
    body = section(DOC.read_text(encoding="utf-8"), "Dependencies")
    chart = re.search(r"```mermaid\n(.*?)```", body, re.S)
    assert chart, "the Dependencies section has no mermaid chart"
    lines = chart.group(1).splitlines()
    assert not [l for l in lines if "-." in l or "==>" in l or "-->|" in l], (
        "the chart has dotted, thick or labelled arrows: every arrow is a plain import")
    nodes = {m.group(1): paths_in(m.group(2))
             for m in (re.match(r'\s*(\w+)\["(.*)"\]\s*$', l) for l in lines) if m}
    arrows = {m.groups() for m in (re.match(r"\s*(\w+) --> (\w+)\s*$", l) for l in lines) if m}
    strangers = {n for arrow in arrows for n in arrow} - set(nodes)
    assert not strangers, f"arrows between undeclared nodes: {strangers}"
    found = imports_between(assign(nodes, NOT_IN_THE_CHART), NOT_IN_THE_CHART, NOT_IN_THE_CHART)
    assert not found - arrows, f"imports the chart does not draw: {describe(found - arrows)}"
    assert not arrows - found, f"arrows no import makes: {describe(arrows - found)}"


def test_the_table_lists_every_import_and_nothing_else():
    body = section(DOC.read_text(encoding="utf-8"), "One module per concern")
    rows = [l for l in body.splitlines() if l.startswith("| `")]
    assert rows, "the table has no rows"
    parts, listed = {}, {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 3, f"a row of three cells (module | concern | imports): {row}"
        names = paths_in(" , ".join(re.findall(r"`[^`]+`", cells[0])))
        parts[names[0]] = names
        listed[names[0]] = [] if cells[2] == "nothing" else paths_in(cells[2])
    row_of = {name: key for key, names in parts.items() for name in names}
    unknown = sorted({n for names in listed.values() for n in names} - set(row_of))
    assert not unknown, f"the imports column names what has no row: {unknown}"
    said = {(key, row_of[name]) for key, names in listed.items() for name in names}
    found = imports_between(assign(parts, GATHERERS), GATHERERS, GATHERERS | LEFT_OUT_IMPORTS)
    assert not found - said, f"imports the table does not list: {describe(found - said)}"
    assert not said - found, f"imports the table lists that no module makes: {describe(said - found)}"
