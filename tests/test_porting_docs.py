"""docs/porting.md stays true to the code: every name its "Supported names" lists exists where the
section says, and a torch name that is not supported fails loudly, pointing to that page."""
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import tinygrad_pool
from tinygrad_pool import autograd, nn, optim, Tensor, tensor
from tinygrad_pool.autograd import function as autograd_function
from tinygrad_pool.autograd import functional as autograd_functional
from tinygrad_pool.nn import functional as F
from tinygrad_pool.optim import lr_scheduler
from tinygrad_pool.utils import data

PORTING = Path(__file__).resolve().parents[1] / "docs" / "porting.md"
# Where the names of each section live (a name must be found in one of them).
NAMESPACES = {
    "Module level": [tinygrad_pool],
    "Tensor": [Tensor],
    "torch.nn": [nn, nn.Module, nn.init, nn.utils],
    "torch.nn.functional": [F],
    "torch.optim and torch.optim.lr_scheduler": [optim, optim.Optimizer, lr_scheduler,
                                                 lr_scheduler.LRScheduler],
    "torch.utils.data": [data],
    "torch.autograd": [autograd, autograd_functional, autograd_function, autograd.Function,
                       tinygrad_pool],
}
# (instances too: some names are attributes every object has, such as Module.training)
_LINEAR = nn.Linear(2, 1)
NAMESPACES["torch.nn"] += [_LINEAR, SimpleNamespace(nn=nn)]
NAMESPACES["torch.optim and torch.optim.lr_scheduler"].append(optim.SGD(_LINEAR.parameters()))
NAMESPACES["torch.autograd"].append(SimpleNamespace(tinygrad_pool=tinygrad_pool))
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def sections() -> dict:
    text = PORTING.read_text(encoding="utf-8")
    supported = text.split("## Supported names", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", supported, flags=re.MULTILINE)[1:]
    return {title.replace("`", "").strip(): body for title, body in zip(parts[::2], parts[1::2])}


def listed_names(body: str) -> list:
    return [n for n in re.findall(r"`([^`]+)`", body) if IDENTIFIER.match(n)]


class _Square(autograd.Function):
    """A custom Function whose forward keeps its ctx, to look ctx's attributes up on."""

    @staticmethod
    def forward(ctx, x):
        _Square.ctx = ctx
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad


def resolves(name: str, namespaces: list) -> bool:
    first, *rest = name.split(".")
    if first == "ctx":  # ctx.save_for_backward: an attribute of a real ctx
        _Square.apply(tensor([1.0], requires_grad=True))
        namespaces, (first, *rest) = [_Square.ctx], rest
    for namespace in namespaces:
        obj = getattr(namespace, first, None)
        try:
            for part in rest:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if obj is not None:
            return True
    return False


def test_every_section_is_known():
    assert set(sections()) == set(NAMESPACES)


@pytest.mark.parametrize("section", sorted(NAMESPACES))
def test_every_listed_name_exists(section):
    names = listed_names(sections()[section])
    assert len(names) > 10, section
    missing = [n for n in names if not resolves(n, NAMESPACES[section])]
    assert not missing, f"docs/porting.md lists, under {section!r}, names that do not exist: {missing}"


@pytest.mark.parametrize("namespace, name", [(tinygrad_pool, "fft"), (nn, "Transformer"),
                                              (F, "fractional_max_pool2d"),
                                              (tensor([1.0]), "is_sparse")])
def test_an_unsupported_torch_name_points_to_the_porting_page(namespace, name):
    with pytest.raises(AttributeError, match=r"not support .*docs/porting\.md"):
        getattr(namespace, name)


def test_the_unsupported_tensor_names_are_in_step_with_torch_and_the_code(torch):
    """Every public torch.Tensor attribute is either ours or refused with the pointer — and the
    refused list names nothing we support (tinygrad_pool/unsupported.py)."""
    from tinygrad_pool import unsupported
    ours = {n for n in dir(Tensor) if not n.startswith("_")} - unsupported.TENSOR
    theirs = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    assert not unsupported.TENSOR & {n for n, v in vars(Tensor).items()
                                     if not isinstance(v, type(vars(Tensor)["is_sparse"]))}
    assert theirs - ours - unsupported.TENSOR == set()
    assert all(not hasattr(tensor([1.0]), name) for name in unsupported.TENSOR)
