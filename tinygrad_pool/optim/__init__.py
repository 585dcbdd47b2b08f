"""Optimizers with PyTorch's API and update rules: SGD, Adam, AdamW, RMSprop, Adagrad.

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

``step()`` reads each parameter's ``.grad`` and updates ``p._data`` in place, in the parameter's
own dtype (float32 stays float32), bumping the parameter's version like torch's in-place update
(so a backward through a graph that saved the old weights raises instead of using the new
ones). Parameters whose ``.grad`` is None are skipped, as in PyTorch. Every gradient is checked
before any parameter changes: a step either updates everything or raises and changes nothing.

What a PyTorch script touches is laid out as torch lays it out: ``param_groups`` (dicts of
options; ``group["lr"] = x`` takes effect at the next step), ``state`` (per parameter, keyed
by the parameter, with torch's names: ``momentum_buffer``, ``step``, ``exp_avg``...), and
``state_dict()`` / ``load_state_dict()`` in torch's layout. The formulas follow torch's
single-tensor (CPU) implementations operation for operation, so the numbers match.
``foreach``, ``fused`` and ``capturable`` are accepted and recorded for compatibility; they
only choose among torch's kernels, and there is one way of computing here.
"""
import copy
import functools
import numbers
import warnings
from collections import defaultdict

import numpy as np

from ..grad_mode import enable_grad
from .. import unsupported
from ..tensor import Tensor, zero_grad

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]


class Optimizer:
    """The base class: parameter groups (a list of Tensors plus their options) and per-parameter
    state. ``params`` is an iterable of Tensors, of ``(name, Tensor)`` pairs
    (``named_parameters()``), or of dicts ``{"params": [...], "lr": ...}`` whose missing options
    come from ``defaults``. A subclass defines ``step(closure=None)``."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        # Keyed by the parameter itself, as torch: Tensors hash by identity.
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a Tensor (wrap it in a list)")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A learning-rate scheduler warns when it is stepped before the optimizer ever was
        # (torch's "Detected call of lr_scheduler.step() before optimizer.step()"): every
        # subclass's step() notes that it ran, custom optimizers included.
        step = vars(cls).get("step")
        if step is not None and not getattr(step, "_notes_call", False):
            @functools.wraps(step)
            def noted_step(self, *args, **kwargs):
                self._opt_called = True
                return step(self, *args, **kwargs)
            noted_step._notes_call = True
            cls.step = noted_step

    # ---- parameter groups -------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add ``{"params": [...], option: value, ...}``; missing options take the defaults.
        Everything is checked before the group is added (torch's errors and messages)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        if "params" not in param_group:
            raise KeyError(f"{type(self).__name__}.add_param_group: a parameter group needs a "
                           f"'params' entry, got keys {sorted(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        # named_parameters() gives (name, tensor) pairs: the names go to "param_names".
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) and len(p) == 2 else p for p in params]
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for index, param in enumerate(tensors):
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(param).__name__} (parameter {index} of the group)")
            if not (param.is_leaf or param.retains_grad):
                raise ValueError(f"can't optimize a non-leaf Tensor (parameter {index} of the "
                                 f"group, shape {param.shape}, made by {param.grad_fn.name}; "
                                 f"optimize the leaves it was computed from)")
        for group in self.param_groups:
            if ("param_names" in group) != bool(names):
                which = "with names" if names else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        full = dict(self.defaults)
        full.update((key, value) for key, value in param_group.items() if key != "params")
        self._check_options(full)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        # Checked: now fill in the caller's dict itself, which becomes the group (torch's way:
        # the dict you passed is the one in param_groups).
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for key, value in self.defaults.items():
            param_group.setdefault(key, value)
        self.param_groups.append(param_group)

    def _check_options(self, group: dict) -> None:
        """Raise torch's ValueError for an invalid option (each optimizer lists its own)."""

    # ---- gradients ----------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``grad = None`` (PyTorch's default) or, if not, zeros."""
        zero_grad([p for group in self.param_groups for p in group["params"]], set_to_none)

    def _gradients(self) -> list:
        """``(group, [(param, grad array), ...])`` for every group, the grads in the params'
        dtypes and skipping params without one; all checked before a step changes anything."""
        per_group = []
        for group in self.param_groups:
            pairs = []
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not isinstance(param.grad, Tensor):
                    raise TypeError(f"{type(self).__name__}.step: a parameter's .grad must be a "
                                    f"Tensor (or None), got {type(param.grad).__name__}")
                grad = param.grad._data
                if grad.dtype.kind != "f" and param.dtype.kind == "f":
                    raise RuntimeError(f"{type(self).__name__}.step: a parameter of dtype "
                                       f"{param.dtype} has a gradient of dtype {grad.dtype}; "
                                       f"the gradient must be floating point, as its parameter")
                if grad.shape != param.shape:
                    raise RuntimeError(f"{type(self).__name__}.step: a parameter of shape "
                                       f"{list(param.shape)} has a gradient of shape "
                                       f"{list(grad.shape)}; they must match")
                pairs.append((param, grad.astype(param.dtype, copy=False)))
            per_group.append((group, pairs))
        return per_group

    def step(self, closure=None):
        """One update of every parameter that has a gradient (each optimizer defines it).
        ``closure`` re-evaluates the model and returns the loss; step returns that loss."""
        raise NotImplementedError

    # ---- saving and resuming -----------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{options..., "params": [indices]}]}``:
        parameters replaced by their position across the groups. As in torch the state's
        Tensors are the live ones, not copies."""
        index_of = {}
        param_groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            param_groups.append(packed)
        state = {index_of[id(key)] if isinstance(key, Tensor) else key: value
                 for key, value in self.state.items()}
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and state saved by ``state_dict()`` onto this optimizer's parameters
        (matched by position). State Tensors are copied, cast to their parameter's dtype except
        ``step`` (torch's rule). Everything is checked before anything changes."""
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise TypeError(f"{name}.load_state_dict: expected a dict from state_dict(), got "
                            f"{type(state_dict).__name__}")
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise KeyError(f"{name}.load_state_dict: the state dict has no {key!r} entry "
                               f"(expected the dict returned by state_dict())")
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)} saved, this optimizer has "
                             f"{len(self.param_groups)})")
        for index, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't "
                                 f"match the size of optimizer's group (group {index}: "
                                 f"{len(saved['params'])} saved, {len(group['params'])} here)")
        param_of = {saved_index: param
                    for group, saved in zip(self.param_groups, saved_groups)
                    for saved_index, param in zip(saved["params"], group["params"])}
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = {k: _restored(name, param, k, v, self._state_shape(param, k))
                                for k, v in value.items()}
            else:  # state not tied to a parameter is kept as it is (torch does too)
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for key, value in self.defaults.items():  # a checkpoint older than an option
                saved.setdefault(key, value)
        self.state, self.param_groups = state, saved_groups

    def _state_shape(self, param: Tensor, key) -> tuple:
        """The shape a loaded state value ``key`` of ``param`` must have: the parameter's own
        (momentum buffers, moment estimates); an optimizer with other state says so."""
        return param.shape

    def __repr__(self) -> str:
        text = f"{type(self).__name__} ("
        for index, group in enumerate(self.param_groups):  # torch's layout, blank line included
            text += f"\nParameter Group {index}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"


def _restored(optimizer: str, param: Tensor, key, value, shape: tuple):
    """A copy of one loaded state value: arrays and Tensors become Tensors in the parameter's
    dtype (``step`` keeps its own, a float32 count) after their shape is checked against
    ``shape``; containers are copied through (a list's items checked against the same shape)."""
    if isinstance(value, (Tensor, np.ndarray)):
        array = value._data if isinstance(value, Tensor) else value
        if key == "step":
            return Tensor(array)
        if array.shape != tuple(shape):
            expected = ("its parameter has shape" if tuple(shape) == param.shape
                        else "this optimizer expects shape")
            raise ValueError(f"{optimizer}.load_state_dict: state {key!r} has shape "
                             f"{list(array.shape)} but {expected} {list(shape)}")
        floating = np.issubdtype(param.dtype, np.floating)
        return Tensor(array, dtype=param.dtype if floating else None)
    if key == "step" and isinstance(value, numbers.Real):  # an old checkpoint's plain number
        return Tensor(np.float32(value))
    if isinstance(value, dict):
        return {k: _restored(optimizer, param, k, v, shape) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_restored(optimizer, param, f"{key}[{index}]", v, shape)
                           for index, v in enumerate(value))
    return value


def _evaluate(closure):
    """The loss from ``closure`` (with gradients on, as torch), or None without one."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _step_count(state: dict) -> float:
    """Add one to the state's ``step`` (a float32 0-d Tensor, as torch) and return it."""
    state["step"]._data += 1
    return float(state["step"]._data)


def _zeros_like(param: Tensor) -> Tensor:
    return Tensor(np.zeros_like(param._data))


def _followed_gradient(group: dict, param: Tensor, grad: np.ndarray, l2: bool = True):
    """The gradient an update rule follows: negated for ``maximize``, plus weight_decay·param
    (torch's weight_decay: L2 in the gradient) unless ``l2`` is False (AdamW decays the weight
    itself)."""
    if group["maximize"]:
        grad = -grad
    if l2 and group["weight_decay"] != 0:
        grad = grad + group["weight_decay"] * param._data
    return grad


# ---- argument checks: torch's ValueError texts, plus who raised it and what was expected --------
def _check_real(optimizer: str, name: str, value) -> None:
    if isinstance(value, Tensor) or not isinstance(value, numbers.Real):
        raise TypeError(f"{optimizer}: {name} must be a real number, got "
                        f"{type(value).__name__} {value!r}")


_TORCH_TEXT = {"lr": "Invalid learning rate", "eps": "Invalid epsilon value"}  # else "Invalid
# {name} value", as torch words it


def _check_at_least_zero(optimizer: str, group: dict, *names: str) -> None:
    """Each of the group's options ``names``, in turn: a real number, at least 0."""
    for name in names:
        value = group[name]
        _check_real(optimizer, name, value)
        if not value >= 0.0:  # also refuses NaN
            text = _TORCH_TEXT.get(name, f"Invalid {name} value")
            raise ValueError(f"{text}: {value} ({optimizer} expects {name} >= 0)")


def _check_implementation_flags(optimizer: str, group: dict) -> None:
    if group.get("differentiable"):
        raise NotImplementedError(f"{optimizer}: differentiable=True (a step that autograd can "
                                  f"differentiate through) is not supported")
    if group.get("fused") and group.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's rule (g = -g first when ``maximize``):

        g = g + weight_decay · p
        buf = g                                     on the first step,
        buf = momentum · buf + (1 - dampening) · g  afterwards         (if momentum != 0)
        g = g + momentum · buf  (nesterov)   or   g = buf
        p = p - lr · g
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_at_least_zero("SGD", group, "lr", "momentum", "weight_decay")
        _check_real("SGD", "dampening", group["dampening"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"Nesterov momentum requires a momentum and zero dampening (SGD got "
                             f"momentum={group['momentum']}, dampening={group['dampening']})")
        _check_implementation_flags("SGD", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for param, grad in gradients:
                grad = _followed_gradient(group, param, grad)
                if momentum != 0:
                    state = self.state[param]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor(grad)  # a copy, not the grad
                    else:
                        buf._data *= momentum
                        # (no dampening, the default: no temporary for (1 - 0) · g)
                        buf._data += grad if dampening == 0 else (1 - dampening) * grad
                    grad = grad + momentum * buf._data if group["nesterov"] else buf._data
                param._data -= lr * grad
                param._bump_version()  # an in-place update: graphs that saved p must notice
        return loss


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's rule (g = -g first when ``maximize``):

        g = g + weight_decay · p        (or p = p · (1 - lr · weight_decay): decoupled, AdamW)
        m = β1 · m + (1 - β1) · g          v = β2 · v + (1 - β2) · g²
        p = p - lr / (1 - β1ᵗ) · m / (sqrt(v) / sqrt(1 - β2ᵗ) + eps)

    With ``amsgrad=True`` the running maximum of v replaces v in the denominator.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        self._check_options(defaults)
        defaults["betas"] = tuple(betas)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        name = type(self).__name__
        _check_at_least_zero(name, group, "lr", "eps")
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)):
            raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got "
                            f"{type(betas).__name__} {betas!r}")
        if len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for index, beta in enumerate(betas):
            _check_real(name, f"betas[{index}]", beta)
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {beta} ({name} "
                                 f"expects 0 <= betas[{index}] < 1)")
        _check_at_least_zero(name, group, "weight_decay")
        if not all(isinstance(beta, float) for beta in betas):  # torch refuses e.g. (0, 0.99)
            raise ValueError(f"betas must be either both floats or both Tensors ({name} got "
                             f"{betas!r}; write them as floats, e.g. 0.0)")
        _check_implementation_flags(name, group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = Tensor(np.float32(0.0))
                    state["exp_avg"] = _zeros_like(param)
                    state["exp_avg_sq"] = _zeros_like(param)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(param)
                step = _step_count(state)
                decoupled = group["decoupled_weight_decay"]
                if decoupled and weight_decay != 0:
                    param._data *= 1 - lr * weight_decay  # AdamW: decay the weight itself
                grad = _followed_gradient(group, param, grad, l2=not decoupled)  # Adam: L2
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)  # β1·m + (1-β1)·g, as torch's lerp
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                if amsgrad:
                    second_moment = state["max_exp_avg_sq"]._data
                    np.maximum(second_moment, exp_avg_sq, out=second_moment)
                else:
                    second_moment = exp_avg_sq
                # Bias corrections undo the zero start of m and v (large in the first steps).
                step_size = lr / (1 - beta1 ** step)
                denom = np.sqrt(second_moment) / (1 - beta2 ** step) ** 0.5 + eps
                param._data -= step_size * (exp_avg / denom)
                param._bump_version()
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p = p · (1 - lr · weight_decay)``
    before the Adam update, instead of adding ``weight_decay · p`` to the gradient."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:  # AdamW is always decoupled, whatever was saved
            group["decoupled_weight_decay"] = True


class RMSprop(Optimizer):
    """RMSprop (Hinton), PyTorch's rule (g = -g first when ``maximize``):

        g = g + weight_decay · p
        v = α · v + (1 - α) · g²
        avg = sqrt(v - ḡ²) + eps  with ḡ = α · ḡ + (1 - α) · g  (centered)  or  sqrt(v) + eps
        buf = momentum · buf + g / avg;  p = p - lr · buf     (if momentum > 0)
        p = p - lr · g / avg                                   (otherwise)
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_at_least_zero("RMSprop", group, "lr", "eps", "momentum", "weight_decay", "alpha")
        _check_implementation_flags("RMSprop", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            momentum, centered = group["momentum"], group["centered"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = Tensor(np.float32(0.0))
                    state["square_avg"] = _zeros_like(param)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(param)
                    if centered:
                        state["grad_avg"] = _zeros_like(param)
                _step_count(state)
                grad = _followed_gradient(group, param, grad)
                square_avg = state["square_avg"]._data
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                if centered:
                    grad_avg = state["grad_avg"]._data
                    grad_avg += (1 - alpha) * (grad - grad_avg)  # torch's lerp
                    # v - ḡ² >= 0 in exact arithmetic; rounding may dip below, and then the
                    # result is NaN as in torch, without NumPy's warning.
                    with np.errstate(invalid="ignore"):
                        avg = np.sqrt(square_avg - grad_avg * grad_avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    param._data -= lr * buf
                else:
                    param._data -= lr * (grad / avg)
                param._bump_version()
        return loss


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), PyTorch's rule (g = -g first when ``maximize``), t the step:

        g = g + weight_decay · p
        sum = sum + g²
        p = p - lr / (1 + (t - 1) · lr_decay) · g / (sqrt(sum) + eps)
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        self._check_options(defaults)
        super().__init__(params, defaults)
        # torch creates every parameter's state here, from the constructor's
        # initial_accumulator_value (a group's own value is not used): so does this.
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param)

    def _init_state(self, param: Tensor) -> None:
        state = self.state[param]
        state["step"] = Tensor(np.float32(0.0))
        state["sum"] = Tensor(np.full_like(param._data, self.defaults["initial_accumulator_value"]))

    def _check_options(self, group: dict) -> None:
        _check_at_least_zero("Adagrad", group, "lr", "lr_decay", "weight_decay",
                             "initial_accumulator_value", "eps")
        _check_implementation_flags("Adagrad", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            for param, grad in gradients:
                if not self.state[param]:  # a parameter added later by add_param_group
                    self._init_state(param)
                state = self.state[param]
                step = _step_count(state)
                grad = _followed_gradient(group, param, grad)
                decayed_lr = lr / (1 + (step - 1) * lr_decay)
                state_sum = state["sum"]._data
                state_sum += grad * grad
                std = np.sqrt(state_sum) + eps
                param._data -= decayed_lr * (grad / std)
                param._bump_version()
        return loss


from . import lr_scheduler  # noqa: E402  (it builds on Optimizer, defined above)


__getattr__ = unsupported.module_getattr("tinygrad_pool.optim", "torch.optim")
