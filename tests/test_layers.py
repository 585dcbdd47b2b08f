"""The package's layers: every import, including those inside functions, points down.

engine <- ops <- nn / optim / ... <- viz: a module never imports one of its own importers, so
there is no import cycle anywhere, and the engine knows nothing of any op. Read from the
source (``ast``), so an import inside a function counts as much as one at the top.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tinygrad_pool"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str) -> dict:
    """The package modules ``module`` imports: name -> the line of the first such import."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module if node.level == 0 else _resolve(module, is_package, node.level,
                                                                  node.module)
            names = [f"{base}.{alias.name}" for alias in node.names]
            if any(name not in MODULES for name in names):  # a name defined in ``base`` itself
                names.append(base)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            names = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
        for name in names:
            if name in MODULES and name != module:  # (a module, or a name in ``base``)
                found.setdefault(name, node.lineno)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def _cycle():
    """One import cycle, as a list of modules, or None."""
    state = {}
    for start in GRAPH:
        stack = [(start, iter(GRAPH[start]))]
        path = [start]
        if state.get(start):
            continue
        state[start] = "open"
        while stack:
            module, children = stack[-1]
            for child in children:
                if state.get(child) == "open":
                    return path[path.index(child):] + [child]
                if child not in state:
                    state[child] = "open"
                    stack.append((child, iter(GRAPH[child])))
                    path.append(child)
                    break
            else:
                state[module] = "done"
                stack.pop()
                path.pop()
    return None


def test_there_is_no_import_cycle():
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(
        f"{a} (line {GRAPH[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


# Each layer, and what it must never import (directly or not): the layers above it.
ABOVE = {
    "tinygrad_pool.engine": ("tinygrad_pool.ops", "tinygrad_pool.methods", "tinygrad_pool.nn",
                             "tinygrad_pool.optim", "tinygrad_pool.autograd",
                             "tinygrad_pool.viz", "tinygrad_pool.kernels",
                             "tinygrad_pool.fast.memory", "tinygrad_pool.random"),
    "tinygrad_pool.fast": ("tinygrad_pool.engine", "tinygrad_pool.ops", "tinygrad_pool.nn",
                           "tinygrad_pool.viz"),
    "tinygrad_pool.kernels": ("tinygrad_pool.engine", "tinygrad_pool.ops", "tinygrad_pool.fast"),
    "tinygrad_pool.ops": ("tinygrad_pool.methods", "tinygrad_pool.nn", "tinygrad_pool.optim",
                          "tinygrad_pool.viz", "tinygrad_pool.autograd",
                          "tinygrad_pool.functions", "tinygrad_pool.fast.memory"),
    "tinygrad_pool.nn": ("tinygrad_pool.viz", "tinygrad_pool.optim"),
    "tinygrad_pool.optim": ("tinygrad_pool.viz", "tinygrad_pool.nn"),
}


def _reach(module: str) -> set:
    seen, todo = set(), [module]
    while todo:
        for child in GRAPH[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_layer_imports_one_above_it(layer):
    wrong = []
    for module in GRAPH:
        if module == layer or module.startswith(layer + "."):
            for reached in _reach(module):
                if any(reached == top or reached.startswith(top + ".") for top in ABOVE[layer]):
                    wrong.append(f"{module} reaches {reached}")
    assert not wrong, "\n".join(wrong)


def test_no_module_is_imported_under_a_one_letter_alias():
    short = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    target = alias.name if isinstance(node, ast.Import) else \
                        f"{node.module or ''}.{alias.name}"
                    if alias.asname and len(alias.asname) == 1 and alias.name[:1].islower():
                        short.append(f"{module}:{node.lineno} {target} as {alias.asname}")
    assert not short, "\n".join(short)


def test_no_module_is_shadowed_by_a_name_of_its_package():
    """``package.x`` is the submodule x, never a function or class of the same name (the
    package's ``tensor()`` once hid the module tensor.py)."""
    import importlib
    shadowed = []
    for module in MODULES:
        package, _, leaf = module.rpartition(".")
        if not package:
            continue
        value = getattr(importlib.import_module(package), leaf, None)
        if value is not None and getattr(value, "__name__", None) != module:
            shadowed.append(f"{package}.{leaf} is {value!r}, not the module {module}")
    assert not shadowed, "\n".join(shadowed)


def test_the_check_finds_a_cycle_and_a_wrong_layer(monkeypatch):
    """The walk is able to fail: a function-level import from the engine into ops is both."""
    graph = {k: dict(v) for k, v in GRAPH.items()}
    graph["tinygrad_pool.engine.tensor"]["tinygrad_pool.ops.movement"] = 1
    monkeypatch.setitem(globals(), "GRAPH", graph)
    assert _cycle() is not None
    with pytest.raises(AssertionError, match="reaches tinygrad_pool.ops"):
        test_no_layer_imports_one_above_it("tinygrad_pool.engine")
