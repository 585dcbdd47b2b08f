"""Optimizers: SGD (with momentum, Nesterov, weight decay) and Adam, with PyTorch's update rules.

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

``step()`` reads each parameter's ``.grad`` and updates ``p.data`` in place, in the parameter's
own dtype (float32 stays float32), bumping the parameter's version like torch's in-place update
(so a backward through a graph that saved the old weights raises instead of using the new
ones); parameters whose ``.grad`` is None are skipped, as in PyTorch. Per-parameter state (momentum buffers, Adam's moments) lives in ``optimizer.state``.
"""
import math

import numpy as np

from .tensor import Tensor, zero_grad


class Optimizer:
    """Holds parameter groups (lists of Tensors plus their hyperparameters) and per-parameter
    state. ``params`` is an iterable of Tensors, or of dicts ``{"params": [...], "lr": ...}``
    whose missing hyperparameters come from the defaults."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        # Keyed by id(p): a Tensor that one day defines elementwise __eq__ stops being hashable.
        self.state = {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Tensors, got a "
                            f"single Tensor; wrap it in a list")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{type(self).__name__}: a parameter group must be a dict with a "
                            f"'params' entry, got {group!r}")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for index, param in enumerate(params):
            if not isinstance(param, Tensor):
                raise TypeError(f"{type(self).__name__}: parameter {index} is a "
                                f"{type(param).__name__}, not a Tensor")
            if not param.requires_grad or not param.is_leaf:
                raise ValueError(f"{type(self).__name__}: parameter {index} (shape {param.shape}) "
                                 f"must be a leaf Tensor with requires_grad=True")
            if id(param) in seen:
                raise ValueError(f"{type(self).__name__}: parameter {index} (shape {param.shape}) "
                                 f"appears in more than one parameter group")
            seen.add(id(param))
        unknown = set(group) - set(self.defaults) - {"params"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown hyperparameter(s) {sorted(unknown)}; "
                            f"expected some of {sorted(self.defaults)}")
        full = dict(self.defaults, **group)
        full["params"] = params
        self._check_hyperparameters(full)
        self.param_groups.append(full)

    def _check_hyperparameters(self, group: dict) -> None:  # pragma: no cover - overridden
        pass

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``grad = None`` (PyTorch's default) or, if not, zeros."""
        zero_grad([p for group in self.param_groups for p in group["params"]], set_to_none)

    def _params_with_grad(self, group):
        """(param, grad array in the param's dtype) for every param of the group that has one."""
        for param in group["params"]:
            if param.grad is None:
                continue
            grad = param.grad.data
            if grad.shape != param.shape:
                raise ValueError(f"{type(self).__name__}.step: a parameter of shape {param.shape} "
                                 f"has a gradient of shape {grad.shape}")
            yield param, grad.astype(param.dtype, copy=False)

    def step(self) -> None:  # pragma: no cover - every optimizer defines it
        raise NotImplementedError

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            lines += [f"    {key}: {value}" for key, value in sorted(group.items()) if key != "params"]
        return "\n".join(lines) + "\n)"


def _check_non_negative(optimizer: str, name: str, value) -> None:
    if not value >= 0.0:  # also refuses NaN
        raise ValueError(f"{optimizer}: invalid {name} {value!r}; it must be >= 0")


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's rule:

        d = g + weight_decay · p
        buf = d                                   on the first step,
        buf = momentum · buf + (1 - dampening) · d  afterwards
        d = d + momentum · buf  (nesterov)   or   d = buf            (if momentum != 0)
        p = p - lr · d
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _check_hyperparameters(self, group: dict) -> None:
        for name in ("lr", "momentum", "weight_decay"):
            _check_non_negative("SGD", name, group[name])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"SGD: Nesterov momentum requires a momentum > 0 and zero dampening, "
                             f"got momentum={group['momentum']}, dampening={group['dampening']}")

    def step(self) -> None:
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for param, grad in self._params_with_grad(group):
                direction = grad + weight_decay * param.data if weight_decay else grad
                if momentum:
                    state = self.state.setdefault(id(param), {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = np.array(direction, dtype=param.dtype)  # a copy, not a view of .grad
                    else:
                        buf *= momentum
                        buf += (1 - dampening) * direction
                    state["momentum_buffer"] = buf
                    direction = direction + momentum * buf if nesterov else buf
                param.data -= (lr * direction).astype(param.dtype, copy=False)
                param._bump_version()  # an in-place update: graphs that saved p must notice


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's rule; weight decay is L2 added to the gradient (not AdamW):

        g = g + weight_decay · p
        m = β1 · m + (1 - β1) · g          v = β2 · v + (1 - β2) · g²
        p = p - lr / (1 - β1ᵗ) · m / (sqrt(v) / sqrt(1 - β2ᵗ) + eps)

    With ``amsgrad=True`` the running maximum of v replaces v in the denominator.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad))

    def _check_hyperparameters(self, group: dict) -> None:
        for name in ("lr", "eps", "weight_decay"):
            _check_non_negative("Adam", name, group[name])
        betas = tuple(group["betas"])
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"Adam: invalid betas {group['betas']!r}; each must lie in [0, 1)")

    def step(self) -> None:
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay = group["weight_decay"]
            for param, grad in self._params_with_grad(group):
                if weight_decay:
                    grad = grad + weight_decay * param.data
                state = self.state.setdefault(id(param), {})
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = np.zeros_like(param.data)
                    state["exp_avg_sq"] = np.zeros_like(param.data)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = np.zeros_like(param.data)
                state["step"] += 1
                step = state["step"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg += (1 - beta1) * (grad - exp_avg)  # β1·m + (1-β1)·g, as torch's lerp
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                if group["amsgrad"]:
                    np.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
                    second_moment = state["max_exp_avg_sq"]
                else:
                    second_moment = exp_avg_sq
                # Bias corrections undo the zero start of m and v (large in the first steps).
                step_size = lr / (1 - beta1 ** step)
                denom = np.sqrt(second_moment) / math.sqrt(1 - beta2 ** step) + eps
                param.data -= (step_size * exp_avg / denom).astype(param.dtype, copy=False)
                param._bump_version()
