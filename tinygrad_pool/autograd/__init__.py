"""``torch.autograd``'s functions: gradients as values, higher derivatives, custom Functions.

    from tinygrad_pool import autograd
    (dx,) = autograd.grad(loss, [x], create_graph=True)   # dx is itself in the graph
    (dx.norm_squared := (dx * dx).sum()).backward()        # so it differentiates again

    class Exp(autograd.Function): ...                      # a custom op (autograd/function.py)
    with autograd.detect_anomaly(): ...                    # the first NaN/inf names its op and line

The backward pass itself is the engine's (``engine.run_backward``); ``differentiate.py`` chooses
what it returns. ``outputs``, ``inputs`` and the output gradients may each be one Tensor or a sequence,
as in torch (``inputs`` also a dict of named Tensors: grad then returns a dict).
"""
from __future__ import annotations

import warnings

from .. import unsupported
from ..args import check_flag
from ..engine import Tensor
from ..gradient_check import gradcheck  # noqa: F401  (torch.autograd.gradcheck)
from .differentiate import backward, grad  # noqa: F401
from . import functional  # noqa: F401
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                      is_anomaly_enabled, set_detect_anomaly)
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401


class _VariableType(type):
    """Every Tensor is a Variable, as in torch (``isinstance(t, Variable)`` is True)."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableType):
    """``torch.autograd.Variable``, which torch keeps for scripts written before 0.4 merged it
    into Tensor: ``Variable(t, requires_grad=False)`` is ``t``'s data as a new leaf (shared
    memory, no graph) that requires grad as asked; ``volatile=`` only warns, as torch's."""

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        leaf = data.detach()
        if check_flag("Variable", "requires_grad", requires_grad):
            leaf.requires_grad_(True)
        return leaf


__getattr__ = unsupported.module_getattr("tinygrad_pool.autograd", "torch.autograd")
