"""docs/api.md stays true to the code: every signature in a ``###`` heading equals
``inspect.signature`` of the object it names, and every public name has a heading."""
import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import Tensor, autograd, nn, optim, unsupported
from tinygrad_pool.autograd import functional as autograd_functional
from tinygrad_pool.nn import functional as F
from tinygrad_pool.nn import init
from tinygrad_pool.optim import lr_scheduler
from tinygrad_pool.utils import data
from tinygrad_pool.engine import OMITTED

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"
PREFIXES = {"tinygrad_pool": tinygrad_pool, "Tensor": Tensor, "F": F, "nn": nn, "init": init,
            "optim": optim, "lr_scheduler": lr_scheduler, "data": data}
HEADING = re.compile(r"^### `([\w.]+)(?:\((.*)\))?`\s*$", re.MULTILINE)


def headings():
    return HEADING.findall(API.read_text(encoding="utf-8"))


def resolve(dotted: str):
    first, *rest = dotted.split(".")
    obj = PREFIXES[first]
    for part in rest:
        obj = inspect.getattr_static(obj, part) if inspect.isclass(obj) else getattr(obj, part)
    return obj


def documented_parameters(text: str) -> list:
    """(name, kind, default) of each parameter written in the docs, via Python's own parser."""
    args = ast.parse(f"def f({text}): pass").body[0].args
    def default(node):
        try:
            return ast.literal_eval(node)
        except ValueError:
            return eval(ast.unparse(node), {"numpy": np})  # e.g. numpy.float32
    params = []
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + [
        default(d) for d in args.defaults]
    params += [(a.arg, "POSITIONAL_OR_KEYWORD", d) for a, d in zip(positional, defaults)]
    if args.vararg:
        params.append((args.vararg.arg, "VAR_POSITIONAL", inspect.Parameter.empty))
    params += [(a.arg, "KEYWORD_ONLY", inspect.Parameter.empty if d is None else default(d))
               for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        params.append((args.kwarg.arg, "VAR_KEYWORD", inspect.Parameter.empty))
    return params


def actual_parameters(obj) -> list:
    signature = inspect.signature(obj)
    params = list(signature.parameters.values())
    if inspect.isfunction(obj) and params and params[0].name in ("self", "cls", "ctx"):
        params = params[1:]  # a method named through its class: Tensor.sum(...) means t.sum(...)
    return [(p.name, p.kind.name, _as_documented(p.default)) for p in params]


def _as_documented(default):
    """The docs write torch's signatures: where the code's default is OMITTED (telling an
    argument left out from an explicit None, which torch refuses there), they show None."""
    return None if default is OMITTED else default


@pytest.mark.parametrize("name, arguments", [h for h in headings() if h[1] or "(" in h[0]],
                         ids=[h[0] for h in headings() if h[1] or "(" in h[0]])
def test_documented_signature_matches_the_code(name, arguments):
    obj = resolve(name)
    if isinstance(obj, classmethod):
        obj = obj.__get__(None, Tensor)  # bound: no cls
        actual = [(p.name, p.kind.name, _as_documented(p.default))
                  for p in inspect.signature(obj).parameters.values()]
    else:
        actual = actual_parameters(obj)
    assert documented_parameters(arguments) == actual, f"docs/api.md: {name}({arguments})"


def test_headings_without_arguments_name_real_attributes():
    for name, arguments in headings():
        resolve(name)  # raises if the name does not exist


def test_empty_parentheses_mean_no_arguments():
    for name, arguments in headings():
        if arguments == "" and f"`{name}()`" in API.read_text(encoding="utf-8"):
            assert actual_parameters(resolve(name)) == [], name


def public_names():
    names = {f"tinygrad_pool.{n}" for n in tinygrad_pool.__all__ if n not in ("nn", "optim")}
    names |= {f"Tensor.{n}" for n, v in vars(Tensor).items() if not n.startswith("_")
              and not inspect.ismemberdescriptor(v) and n not in unsupported.TENSOR}
    names |= {f"F.{n}" for n, v in vars(F).items()
              if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == F.__name__}
    names |= {f"nn.{n}" for n in nn.__all__ if n not in ("functional", "init")}
    names |= {f"nn.Module.{n}" for n in vars(nn.Module) if not n.startswith("_")}
    names |= {f"init.{n}" for n, v in vars(init).items()
              if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == init.__name__}
    names |= {f"F.{n}" for n in F.__all__ if inspect.isfunction(getattr(F, n))}
    names |= {f"optim.{n}" for n in optim.__all__ if n != "lr_scheduler"}
    names |= {f"optim.Optimizer.{n}" for n in vars(optim.Optimizer) if not n.startswith("_")}
    names |= {f"lr_scheduler.{n}" for n in lr_scheduler.__all__}
    names |= {f"lr_scheduler.LRScheduler.{n}" for n in vars(lr_scheduler.LRScheduler)
              if not n.startswith("_")}
    names |= {f"data.{n}" for n, v in vars(data).items()
              if not n.startswith("_") and getattr(v, "__module__", None) == data.__name__}
    names |= {f"nn.utils.{n}" for n, v in vars(nn.utils).items() if not n.startswith("_")
              and inspect.isfunction(v) and v.__module__ == nn.utils.__name__}
    names |= {f"tinygrad_pool.autograd.{n}" for n in ("grad", "backward", "Function", "Variable",
                                                      "FunctionCtx", "once_differentiable",
                                                      "detect_anomaly", "set_detect_anomaly")}
    names |= {f"tinygrad_pool.viz.{n}" for n in ("replay", "fan_in")}
    names |= {f"tinygrad_pool.autograd.functional.{n}"
              for n, v in vars(autograd_functional).items() if not n.startswith("_")
              and inspect.isfunction(v) and v.__module__ == autograd_functional.__name__}
    names |= {f"tinygrad_pool.autograd.Function.{n}" for n in vars(autograd.Function)
              if not n.startswith("_")}
    names |= {f"tinygrad_pool.autograd.FunctionCtx.{n}" for n in (
        "save_for_backward", "saved_tensors", "mark_non_differentiable", "mark_dirty",
        "set_materialize_grads")}
    names |= {f"tinygrad_pool.Node.{n}" for n in ("apply", "saved_for_backward",
                                                      "release")}
    return names


def test_every_public_name_is_documented():
    documented = {name for name, _ in headings()}
    missing = sorted(public_names() - documented)
    assert not missing, f"docs/api.md has no heading for: {missing}"
