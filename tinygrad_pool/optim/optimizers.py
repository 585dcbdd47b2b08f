"""Optimizers with PyTorch's API and update rules: SGD, Adam, AdamW, RMSprop, Adagrad,
Adadelta, Adamax, NAdam, RAdam, and LBFGS.

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

LBFGS evaluates the model several times per step, so its ``step`` needs a closure (as in
torch) that recomputes the loss and its gradients:

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss
    opt.step(closure)

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
from ..engine import Tensor, zero_grad

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "LBFGS"]


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
                                       f"the gradient must be floating point, as its parameter "
                                       f"(assign p.grad = g.to(p.dtype))")
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
            return Tensor(array, dtype=array.dtype)
        if array.shape != tuple(shape):
            expected = ("its parameter has shape" if tuple(shape) == param.shape
                        else "this optimizer expects shape")
            raise ValueError(f"{optimizer}.load_state_dict: state {key!r} has shape "
                             f"{list(array.shape)} but {expected} {list(shape)}")
        floating = np.issubdtype(param.dtype, np.floating)
        return Tensor(array, dtype=param.dtype if floating else array.dtype)
    if key == "step" and isinstance(value, numbers.Real):  # an old checkpoint's plain number
        return Tensor._make(np.array(value, np.float32), None)
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
    return Tensor._make(np.zeros_like(param._data), None)


def _zero_step() -> Tensor:
    """A new state's step count: a float32 0-d tensor, as torch keeps it."""
    return Tensor._make(np.array(0.0, np.float32), None)


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


def _check_betas(optimizer: str, betas) -> None:
    """``betas``: a pair of real numbers, each in [0, 1)."""
    if not isinstance(betas, (tuple, list)):
        raise TypeError(f"{optimizer}: betas must be a pair (beta1, beta2), got "
                        f"{type(betas).__name__} {betas!r}")
    if len(betas) != 2:
        raise ValueError(f"{optimizer}: betas must be a pair (beta1, beta2), got {betas!r}")
    for index, beta in enumerate(betas):
        _check_real(optimizer, f"betas[{index}]", beta)
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta} ({optimizer} "
                             f"expects 0 <= betas[{index}] < 1)")


def _check_integer(optimizer: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{optimizer}: {name} must be an integer, got "
                        f"{type(value).__name__} {value!r}")


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
                        # a copy, not the grad; in the grad's dtype (Tensor(data) is float32)
                        buf = state["momentum_buffer"] = Tensor(grad, dtype=grad.dtype)
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
        _check_betas(name, group["betas"])
        _check_at_least_zero(name, group, "weight_decay")
        betas = group["betas"]
        if not all(isinstance(beta, float) for beta in betas):  # torch refuses e.g. (0, 0.99)
            raise ValueError(f"betas must be either both floats or both Tensors ({name} got "
                             f"{betas!r}; write them as floats, e.g. 0.0)")
        _check_implementation_flags(name, group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            amsgrad = group["amsgrad"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = _zero_step()
                    state["exp_avg"] = _zeros_like(param)
                    state["exp_avg_sq"] = _zeros_like(param)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(param)
                step = _step_count(state)
                grad = _decayed_gradient(group, param, grad)  # AdamW: the weight decays itself
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
                    state["step"] = _zero_step()
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
        state["step"] = _zero_step()
        initial = self.defaults["initial_accumulator_value"]
        state["sum"] = Tensor._make(np.full_like(param._data, initial), None)

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


class Adadelta(Optimizer):
    """Adadelta (Zeiler), PyTorch's rule (g = -g first when ``maximize``):

        g = g + weight_decay · p
        v = ρ · v + (1 - ρ) · g²                      (square_avg)
        Δ = sqrt(u + eps) / sqrt(v + eps) · g
        u = ρ · u + (1 - ρ) · Δ²                      (acc_delta)
        p = p - lr · Δ
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_at_least_zero("Adadelta", group, "lr")
        rho = group["rho"]
        _check_real("Adadelta", "rho", rho)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho} (Adadelta expects 0 <= rho <= 1)")
        _check_at_least_zero("Adadelta", group, "eps", "weight_decay")
        _check_implementation_flags("Adadelta", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = _zero_step()
                    state["square_avg"] = _zeros_like(param)
                    state["acc_delta"] = _zeros_like(param)
                _step_count(state)
                grad = _followed_gradient(group, param, grad)
                square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
                square_avg *= rho
                square_avg += (1 - rho) * grad * grad
                # The step's unit comes from the past steps' RMS (u), its size relative to the
                # gradient's RMS (v): no learning rate is needed in the paper (lr = 1).
                delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * grad
                acc_delta *= rho
                acc_delta += (1 - rho) * delta * delta
                param._data -= lr * delta
                param._bump_version()
        return loss


class Adamax(Optimizer):
    """Adamax (Kingma & Ba), Adam with the infinity norm, PyTorch's rule (g = -g first when
    ``maximize``):

        g = g + weight_decay · p
        m = β1 · m + (1 - β1) · g                     (exp_avg)
        u = max(β2 · u, |g| + eps)                    (exp_inf)
        p = p - lr / (1 - β1ᵗ) · m / u
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_adam_variant("Adamax", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = _zero_step()
                    state["exp_avg"] = _zeros_like(param)
                    state["exp_inf"] = _zeros_like(param)
                step = _step_count(state)
                grad = _followed_gradient(group, param, grad)
                exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)  # β1·m + (1-β1)·g, as torch's lerp
                exp_inf *= beta2
                np.maximum(exp_inf, np.abs(grad) + eps, out=exp_inf)
                # u needs no bias correction: a maximum is not pulled towards its zero start.
                param._data -= lr / (1 - beta1 ** step) * (exp_avg / exp_inf)
                param._bump_version()
        return loss


def _check_adam_variant(optimizer: str, group: dict, *more: str) -> None:
    """Adamax's, NAdam's and RAdam's options, in torch's order: lr, eps, betas, weight_decay,
    ``more``."""
    _check_at_least_zero(optimizer, group, "lr", "eps")
    _check_betas(optimizer, group["betas"])
    _check_at_least_zero(optimizer, group, "weight_decay", *more)
    _check_implementation_flags(optimizer, group)


def _decayed_gradient(group: dict, param: Tensor, grad: np.ndarray) -> np.ndarray:
    """The gradient Adam, NAdam and RAdam follow: with ``decoupled_weight_decay`` the weight itself
    decays first (p = p · (1 - lr · weight_decay), as AdamW), otherwise it is L2 in g."""
    decoupled = group["decoupled_weight_decay"]
    if decoupled and group["weight_decay"] != 0:
        param._data *= 1 - group["lr"] * group["weight_decay"]
    return _followed_gradient(group, param, grad, l2=not decoupled)


class NAdam(Optimizer):
    """NAdam (Dozat), Adam with Nesterov momentum, PyTorch's rule (g = -g first when
    ``maximize``), t the step and ψ = ``momentum_decay``:

        g = g + weight_decay · p    (or p = p · (1 - lr · weight_decay): decoupled)
        μₜ = β1 · (1 - 0.5 · 0.96^(t·ψ))             Πₜ = μ₁ ··· μₜ   (mu_product)
        m = β1 · m + (1 - β1) · g          v = β2 · v + (1 - β2) · g²
        denom = sqrt(v / (1 - β2ᵗ)) + eps
        p = p - lr · (1 - μₜ) / (1 - Πₜ) · g / denom - lr · μₜ₊₁ / (1 - Πₜ·μₜ₊₁) · m / denom
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_adam_variant("NAdam", group, "momentum_decay")

    def _state_shape(self, param: Tensor, key) -> tuple:
        return () if key == "mu_product" else param.shape

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            momentum_decay = group["momentum_decay"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = _zero_step()
                    # A float32 scalar as torch's (its rounding is part of the trajectory);
                    # loading a state dict casts it to the parameter's dtype, as in torch.
                    state["mu_product"] = Tensor._make(np.array(1.0, np.float32), None)
                    state["exp_avg"] = _zeros_like(param)
                    state["exp_avg_sq"] = _zeros_like(param)
                step = _step_count(state)
                grad = _decayed_gradient(group, param, grad)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
                state["mu_product"]._data *= mu
                mu_product = float(state["mu_product"]._data)
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)  # torch's lerp
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                denom = np.sqrt(exp_avg_sq / (1 - beta2 ** step)) + eps
                # Nesterov: this step's gradient with the current momentum weight, and the
                # average with the next one's (the look-ahead).
                param._data -= lr * (1.0 - mu) / (1.0 - mu_product) * (grad / denom)
                param._data -= lr * mu_next / (1.0 - mu_product * mu_next) * (exp_avg / denom)
                param._bump_version()
        return loss


class RAdam(Optimizer):
    """RAdam (Liu et al.), Adam with a rectified adaptive rate, PyTorch's rule (g = -g first
    when ``maximize``), t the step:

        g = g + weight_decay · p    (or p = p · (1 - lr · weight_decay): decoupled)
        m = β1 · m + (1 - β1) · g          v = β2 · v + (1 - β2) · g²
        ρ∞ = 2 / (1 - β2) - 1              ρₜ = ρ∞ - 2t · β2ᵗ / (1 - β2ᵗ)
        p = p - lr · m / (1 - β1ᵗ) · sqrt(1 - β2ᵗ) / (sqrt(v) + eps) · r      if ρₜ > 5,
            r = sqrt((ρₜ - 4)(ρₜ - 2) ρ∞ / ((ρ∞ - 4)(ρ∞ - 2) ρₜ))
        p = p - lr · m / (1 - β1ᵗ)                                             otherwise
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_adam_variant("RAdam", group)

    def step(self, closure=None):
        loss = _evaluate(closure)
        for group, gradients in self._gradients():
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for param, grad in gradients:
                state = self.state[param]
                if not state:
                    state["step"] = _zero_step()
                    state["exp_avg"] = _zeros_like(param)
                    state["exp_avg_sq"] = _zeros_like(param)
                step = _step_count(state)
                grad = _decayed_gradient(group, param, grad)
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)  # torch's lerp
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                bias_correction1, bias_correction2 = 1 - beta1 ** step, 1 - beta2 ** step
                update = exp_avg / bias_correction1 * lr
                # ρₜ is the length of the simple moving average that v approximates; while it
                # is short (ρₜ <= 5) v's variance is too large to trust: plain momentum SGD.
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = bias_correction2 ** 0.5 / (np.sqrt(exp_avg_sq) + eps)
                    update = update * adaptive_lr * rect
                param._data -= update
                param._bump_version()
        return loss


# ---- L-BFGS -------------------------------------------------------------------------------------
# Written on flat NumPy vectors (every parameter's values, then every gradient, one after the
# other) as torch's is on flat tensors. Scalars computed from them (gᵀd, yᵀs, ...) stay NumPy
# scalars of the parameters' dtype, as torch's are 0-d tensors: float32 parameters then round
# the line search's arithmetic as torch does (NumPy and torch both compute a 0-d float32 with a
# Python float in float32).

def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser, clamped to ``bounds`` (default [x1, x2] in order), of the cubic through
    (x1, f1) and (x2, f2) with slopes g1, g2; the bounds' midpoint when the cubic has none.
    torch's port of ``polyinterp.lua``, branch for branch."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    # Degenerate points (x1 = x2, a flat cubic) give inf or NaN, silently as torch's 0-d
    # tensors do, and the comparisons below then pick a bound.
    with np.errstate(divide="ignore", invalid="ignore"):
        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        d2_square = d1 ** 2 - g1 * g2
        if d2_square >= 0:
            d2 = np.sqrt(d2_square)
            if x1 <= x2:
                min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
            else:
                min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
            return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions,
    f(x + t·d) <= f + c1·t·gᵀd (enough decrease) and |g(x + t·d)ᵀd| <= c2·|gᵀd| (flat enough):
    first bracket such a step (growing t by cubic extrapolation), then zoom into the bracket
    by cubic interpolation. ``obj_func(x, t, d)`` gives (loss, flat gradient) at x + t·d.
    Returns (loss, gradient, t, evaluations). torch's port of ``lswolfe.lua``, step for step."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new @ d

    # Bracketing: grow t until [t_prev, t] holds a point meeting the conditions.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # Extrapolate: the cubic's minimiser, at least 1% past t and at most 10·t.
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new @ d
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations: between the start and the last try
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket around its low point until the conditions hold.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # too small to matter
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # A point too close to an end of the bracket makes little progress: after two such
        # in a row (or one outside), try 10% of the bracket in from the nearer end instead.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new @ d
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Not enough decrease, or no lower than the low end: t becomes the high end.
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # The slope at t points at the high end: the old low end becomes the high one.
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = (bracket_g[low_pos],
                                                              bracket_gtd[low_pos])
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _from_state(value):
    """A state value as the step computes with it: a Tensor's array (a 0-d one as a NumPy
    scalar), lists item by item."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data
    if isinstance(value, list):
        return [_from_state(item) for item in value]
    return value


def _to_state(value):
    """A value as torch keeps it in the state: arrays and NumPy scalars as Tensors (torch's
    0-d tensors), Python numbers and None as they are, lists item by item. (Arrays are wrapped,
    not copied: the step makes new ones and never writes into those it was given.)"""
    if isinstance(value, np.ndarray):
        return Tensor._make(value, None)
    if isinstance(value, np.generic):
        return Tensor._make(np.array(value), None)
    if isinstance(value, list):
        return [_to_state(item) for item in value]
    return value


class LBFGS(Optimizer):
    """L-BFGS (Nocedal), PyTorch's algorithm (after minFunc). Each ``step(closure)`` runs up
    to ``max_iter`` iterations on x, every parameter flattened into one vector, with gradient g:

        d = -H·g          H: the inverse Hessian estimated from the last ``history_size``
                          pairs s = t·d, y = Δg (two-loop recursion, H₀ = sᵀy / yᵀy)
        x = x + t·d       t = lr (on the very first iteration min(1, 1/Σ|g|) · lr), or the
                          step found by a strong-Wolfe line search (``line_search_fn=
                          "strong_wolfe"``, cubic interpolation)

    and stops early when max|g| <= tolerance_grad, when gᵀd, max|t·d| or the loss change
    falls below tolerance_change, or after ``max_eval`` closure calls (default 1.25·max_iter).
    ``closure`` is required: it clears the gradients, computes the loss, calls backward and
    returns the loss; step returns its first loss. One parameter group only. The state
    (torch's names: ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``, ``al``, ``func_evals``, ``n_iter``) is kept under the
    first parameter, as torch keeps it.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval=None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn=None):
        _check_integer("LBFGS", "max_iter", max_iter)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        self._check_options(defaults)
        super().__init__(params, defaults)

    def _check_options(self, group: dict) -> None:
        _check_at_least_zero("LBFGS", group, "lr")
        for name in ("max_iter", "max_eval", "history_size"):
            _check_integer("LBFGS", name, group[name])
        if group["history_size"] < 1:  # (torch fails at its second iteration)
            raise ValueError(f"LBFGS: history_size must be at least 1, got "
                             f"{group['history_size']}")
        _check_real("LBFGS", "tolerance_grad", group["tolerance_grad"])
        _check_real("LBFGS", "tolerance_change", group["tolerance_change"])
        _check_line_search(group["line_search_fn"])

    def add_param_group(self, param_group: dict) -> None:
        # torch accepts a second group here and fails at the next step; refused at once.
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _state_shape(self, param: Tensor, key) -> tuple:
        if key in ("d", "prev_flat_grad", "old_dirs", "old_stps"):
            return (self._numel(),)
        return ()  # t, H_diag, ro, al: scalars

    # ---- the parameters as one flat vector ------------------------------------------------
    def _params(self) -> list:
        return self.param_groups[0]["params"]

    def _numel(self) -> int:
        return sum(p._data.size for p in self._params())

    def _gather_flat_grad(self) -> np.ndarray:
        """Every parameter's gradient, flattened and joined (zeros for a missing one); the
        gradients are checked as every optimizer's are."""
        ((_, pairs),) = self._gradients()
        grads = {id(param): grad for param, grad in pairs}
        return np.concatenate([grads[id(p)].reshape(-1) if id(p) in grads
                               else np.zeros(p._data.size, p.dtype) for p in self._params()])

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        """x = x + step_size · update, each parameter its slice."""
        offset = 0
        for param in self._params():
            size = param._data.size
            param._data += (step_size * update[offset:offset + size]).reshape(param.shape)
            param._bump_version()
            offset += size

    def _clone_param(self) -> list:
        return [param._data.copy() for param in self._params()]

    def _set_param(self, params_data: list) -> None:
        for param, data in zip(self._params(), params_data):
            param._data[...] = data
            param._bump_version()

    def _directional_evaluate(self, closure, x, t, d):
        """(loss, flat gradient) at x + t·d; the parameters are put back to x after."""
        self._add_grad(t, d)
        loss = float(_evaluate(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        if len(self.param_groups) != 1:  # (only by writing to param_groups directly)
            raise AssertionError(f"Expected exactly one param_group, but got "
                                 f"{len(self.param_groups)}")
        if not callable(closure):
            raise TypeError(f"'{type(closure).__name__}' object is not callable (LBFGS.step "
                            f"needs a closure that clears the gradients, computes the loss, "
                            f"calls backward and returns the loss)")
        group = self.param_groups[0]
        _check_line_search(group["line_search_fn"])
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        # The first loss and gradient, checked before any state changes.
        orig_loss = _evaluate(closure)
        loss = float(orig_loss)
        flat_grad = self._gather_flat_grad()
        # L-BFGS's state is global; torch files it under the first parameter.
        state = self.state[self._params()[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        current_evals = 1
        state["func_evals"] += 1
        opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:  # already optimal
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        old_dirs, old_stps = _from_state(state.get("old_dirs")), _from_state(state.get("old_stps"))
        ro, H_diag = _from_state(state.get("ro")), _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # -- the direction: steepest descent at first, then d = -H·g --------------------
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y @ s
                if ys > 1e-10:  # a pair with positive curvature only (H stays positive definite)
                    if len(old_dirs) == history_size:  # forget the oldest pair
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / (y @ y)  # scale of the initial inverse Hessian
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                # (Entries are written before they are read: NumPy scalars during the step.)
                al = state["al"]
                # Two-loop recursion: q = -g through the pairs newest first, scale by H₀,
                # then back oldest first; d and r are the same array, as in torch.
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = (old_stps[i] @ q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = (old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # -- the step length ------------------------------------------------------------
            if state["n_iter"] == 1:  # no curvature known yet: at most lr / Σ|g|
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad @ d  # the directional derivative
            if gtd > -tolerance_change:  # d no longer goes down
                break

            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # The loss at the new point (not after the last iteration: in a stochastic
                    # setting the next step evaluates afresh anyway).
                    loss = float(_evaluate(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # -- stop? ------------------------------------------------------------------------
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:  # the step no longer moves x
                break
            if abs(loss - prev_loss) < tolerance_change:  # nor the loss
                break

        state["d"], state["t"] = _to_state(d), _to_state(t)
        state["old_dirs"], state["old_stps"] = _to_state(old_dirs), _to_state(old_stps)
        state["ro"], state["H_diag"] = _to_state(ro), _to_state(H_diag)
        state["prev_flat_grad"], state["prev_loss"] = _to_state(prev_flat_grad), prev_loss
        if "al" in state:
            state["al"] = _to_state(state["al"])
        return orig_loss


def _check_line_search(line_search_fn) -> None:
    if line_search_fn not in (None, "strong_wolfe"):
        raise RuntimeError(f"only 'strong_wolfe' is supported (LBFGS got line_search_fn="
                           f"{line_search_fn!r}; or None, a fixed step)")
