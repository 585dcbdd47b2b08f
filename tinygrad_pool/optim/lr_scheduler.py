"""Learning-rate schedules with PyTorch's API and arithmetic.

    scheduler = lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(optimizer)      # optimizer.step() inside
        scheduler.step()                # then move the learning rate on

A scheduler writes ``group["lr"]`` of its optimizer's parameter groups. Creating one records
each group's starting rate as ``group["initial_lr"]`` (``base_lrs``) and takes the first step
(``last_epoch`` becomes 0). The multiplicative schedules (StepLR, ExponentialLR, the cosine)
update the *current* rate the way torch does, recursively, so that a rate changed from outside
is followed and so that the values agree with torch's to the last bit, also past ``T_max``.
``state_dict()`` is the scheduler's attributes except the optimizer, as in torch.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from .. import unsupported
from ..args import check_choice, check_int, check_number, plural
from .optimizers import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "ReduceLROnPlateau", "OneCycleLR"]

_EPOCH_DEPRECATION = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(scheduler: str, name: str, optimizer: Optimizer, value) -> list:
    """One value per parameter group: a list or tuple as given (its length checked), a single
    value repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{scheduler}: {name} must have the same length as optimizer.param_groups. "
                             f"{name} has {plural(len(value), 'value')}, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """The base class: a subclass defines ``get_lr()``, the rates for ``last_epoch`` (already
    moved on when it is called), from ``base_lrs`` or from the groups' current ``lr``."""

    _is_initial = False  # True during the constructor's first step

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:  # resuming: the groups must carry the rates the schedule started from
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                                   f"when resuming scheduler with last_epoch >= 0 (load the "
                                   f"optimizer's state_dict first, or leave last_epoch=-1)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates at ``last_epoch``, one per parameter group."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates this scheduler set last, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        """Move to the next epoch (or, deprecated, to ``epoch``) and set the groups' rates."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                "1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                "result in PyTorch skipping the first value of the learning rate schedule. See "
                "more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning, stacklevel=2)
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        # get_lr reads last_epoch and _step_count (torch's subclasses do too), so both move
        # first; if get_lr refuses (OneCycleLR past its last step), they move back.
        before = self._step_count, self.last_epoch
        self._step_count += 1
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
            values = list(values)
            if len(values) != len(self.optimizer.param_groups):
                raise ValueError(f"{type(self).__name__}.step: {len(values)} learning rates for "
                                 f"{len(self.optimizer.param_groups)} parameter groups (was a "
                                 f"group added after the scheduler was made?)")
        except BaseException:
            self._step_count, self.last_epoch = before
            raise
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Every attribute except the optimizer (torch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore attributes saved by ``state_dict()``."""
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """The base class's old name, kept (as torch keeps it) for schedulers written against it."""


class LambdaLR(LRScheduler):
    """``lr = base_lr · lr_lambda(epoch)``; ``lr_lambda`` is one function or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        _check_optimizer(optimizer)
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"Expected {plural(groups, 'lr_lambda')}, but got {len(lr_lambda)} "
                                 f"(LambdaLR: lr_lambda must be one function or one per "
                                 f"parameter group)")
            lambdas = list(lr_lambda)
        else:
            lambdas = [lr_lambda] * groups
        for index, fn in enumerate(lambdas):
            if not callable(fn):
                raise TypeError(f"LambdaLR: lr_lambda must be a function of the epoch (or a list "
                                f"of them), got {type(fn).__name__} {fn!r} for group {index}")
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        """As the base, but a lambda is not data: saved as None, a callable object as its
        ``__dict__`` (torch's rule)."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)  # the caller's dict keeps its "lr_lambdas"
        saved_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        # (torch would divide by zero at the first step, and takes a negative one)
        if check_int("StepLR", "step_size", step_size) <= 0:
            raise ValueError(f"StepLR: step_size must be > 0, got {step_size!r}")
        self.step_size = step_size
        self.gamma = check_number("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each milestone epoch (by gamma^k for a milestone
    listed k times)."""

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1):
        if isinstance(milestones, str) or not hasattr(milestones, "__iter__"):
            raise TypeError(f"MultiStepLR: milestones must be a list of epochs (ints), got "
                            f"{type(milestones).__name__} {milestones!r}")
        # (in any order: a Counter, as torch keeps them)
        self.milestones = Counter(check_int("MultiStepLR", "milestones", epoch)
                                  for epoch in milestones)
        self.gamma = check_number("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return [group["lr"] for group in self.optimizer.param_groups]
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = check_number("ExponentialLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:  # resuming must not decay once more at construction
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base_lr - eta_min) · (1 + cos(π · epoch / T_max)) / 2``, computed as
    torch does, one epoch from the last:

        lr_t = eta_min + (lr_{t-1} - eta_min) · (1 + cos(π t / T)) / (1 + cos(π (t-1) / T))

    except where the denominator vanishes (t - 1 = T, 3T, ...: the rate sits at eta_min), where
    the rate climbs back by the cosine's increment. Past ``T_max`` the rate therefore rises
    again and keeps oscillating with period 2·T_max, exactly as torch's.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1):
        check_number("CosineAnnealingLR", "T_max", T_max)
        if not T_max > 0:  # torch would divide by zero at the first step, and takes -1
            raise ValueError(f"CosineAnnealingLR: T_max must be > 0, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = check_number("CosineAnnealingLR", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups, epoch, period = self.optimizer.param_groups, self.last_epoch, self.T_max
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and epoch > 0:  # resumed: start from the closed form
            return self._get_closed_form_lr()
        if (epoch - 1 - period) % (2 * period) == 0:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / period)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * epoch / period))
                / (1 + math.cos(math.pi * (epoch - 1) / period))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` once the metric passed to ``step(metrics)`` has not
    improved for more than ``patience`` epochs (then wait ``cooldown`` epochs). Improvement is
    relative (``best · (1 ∓ threshold)``) or absolute (``best ∓ threshold``); a reduction
    smaller than ``eps`` is skipped and no rate goes below its ``min_lr``."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8):
        name = "ReduceLROnPlateau"
        if not check_number(name, "factor", factor) < 1.0:
            raise ValueError(f"Factor should be < 1.0. ({name} got factor={factor!r})")
        _check_optimizer(optimizer)
        for option, value in (("patience", patience), ("threshold", threshold),
                              ("cooldown", cooldown), ("eps", eps)):
            check_number(name, option, value)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {plural(len(optimizer.param_groups), 'min_lr')}, got "
                                 f"{len(min_lr)} ({name}: min_lr must be one number or one "
                                 f"per parameter group)")
            default_min_lr, min_lrs = None, [check_number(name, "min_lr", v) for v in min_lr]
        else:
            check_number(name, "min_lr", min_lr)
            default_min_lr, min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self._check_modes(mode, threshold_mode)
        self.factor = factor
        self.optimizer = optimizer
        self.default_min_lr, self.min_lrs = default_min_lr, min_lrs
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    @staticmethod
    def _check_modes(mode, threshold_mode) -> None:
        for option, value, choices in (("mode", mode, ("min", "max")),
                                       ("threshold_mode", threshold_mode, ("rel", "abs"))):
            if isinstance(value, str) and value not in choices:  # torch's text first
                raise ValueError(f"{option.replace('_', ' ')} {value} is unknown! "
                                 f"(ReduceLROnPlateau: {option} must be one of {choices})")
            check_choice("ReduceLROnPlateau", option, value, choices)

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics, epoch=None) -> None:
        """Record this epoch's metric (a number or a one-element Tensor); reduce if stuck."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from "
                    f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    f"to a new param group being added to the optimizer. Please modify the "
                    f"`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    def load_state_dict(self, state_dict: dict) -> None:
        self._check_modes(state_dict.get("mode", self.mode),
                          state_dict.get("threshold_mode", self.threshold_mode))
        self.__dict__.update(state_dict)
        self.mode_worse = math.inf if self.mode == "min" else -math.inf


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith): the rate anneals from ``max_lr / div_factor`` up to ``max_lr``
    over the first ``pct_start`` of ``total_steps``, then down to ``initial_lr /
    final_div_factor`` (with ``three_phase``: back to the initial rate first, then down). The
    momentum (SGD's ``momentum``, Adam's ``betas[0]``) cycles the opposite way between
    ``max_momentum`` and ``base_momentum``. Step it after every batch; stepping more than
    ``total_steps`` times raises ValueError."""

    def __init__(self, optimizer: Optimizer, max_lr, total_steps=None, epochs=None,
                 steps_per_epoch=None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        # Every argument is checked before a parameter group is touched (torch's texts, after
        # the class name).
        name = "OneCycleLR"

        def positive_int(option: str, value) -> int:
            check_number(name, option, value)  # (a string or None: TypeError, as torch)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name}: Expected positive integer {option}, but got {value}")
            return value

        if total_steps is not None:
            self.total_steps = positive_int("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (positive_int("epochs", epochs)
                                * positive_int("steps_per_epoch", steps_per_epoch))
        else:
            raise ValueError(f"{name}: You must define either total_steps OR (epochs AND "
                             f"steps_per_epoch)")
        check_number(name, "pct_start", pct_start)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"{name}: Expected float between 0 and 1 pct_start, but got "
                             f"{pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: anneal_strategy must be one of 'cos' or 'linear', instead "
                             f"got {anneal_strategy}")
        for option, value in (("div_factor", div_factor), ("final_div_factor", final_div_factor)):
            if check_number(name, option, value) == 0:
                raise ZeroDivisionError(f"{name}: {option} must not be 0 (the rates are divided "
                                        f"by it)")
        max_lrs = [check_number(name, "max_lr", lr) for lr in _per_group(name, "max_lr",
                                                                          optimizer, max_lr)]
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                                 "option enabled")
            max_momentums = _per_group(name, "max_momentum", optimizer, max_momentum)
            base_momentums = _per_group(name, "base_momentum", optimizer, base_momentum)

        # Each phase runs from the previous phase's end_step to its own, annealing between two
        # of the group's entries (names, looked up at each step).
        steps = self.total_steps
        if three_phase:
            self._schedule_phases = [
                dict(end_step=float(pct_start * steps) - 1, start_lr="initial_lr",
                     end_lr="max_lr", start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * steps) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        else:
            self._schedule_phases = [
                dict(end_step=float(pct_start * steps) - 1, start_lr="initial_lr",
                     end_lr="max_lr", start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
            ]
        self._anneal_func_type = anneal_strategy
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = "betas" in optimizer.defaults
        if last_epoch == -1:
            for index, group in enumerate(optimizer.param_groups):
                group["initial_lr"] = max_lrs[index] / div_factor
                group["max_lr"] = max_lrs[index]
                group["min_lr"] = group["initial_lr"] / final_div_factor
                if cycle_momentum:
                    if self.use_beta1:
                        group["betas"] = (max_momentums[index], *group["betas"][1:])
                    else:
                        group["momentum"] = max_momentums[index]
                    group["max_momentum"] = max_momentums[index]
                    group["base_momentum"] = base_momentums[index]
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from ``start`` (pct = 0) to ``end`` (pct = 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        """Straight line from ``start`` (pct = 0) to ``end`` (pct = 1)."""
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        anneal = self._annealing_cos if self._anneal_func_type == "cos" else self._annealing_linear
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for index, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or index == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = anneal(group[phase["start_momentum"]],
                                          group[phase["end_momentum"]], pct)
                        if self.use_beta1:
                            group["betas"] = (momentum, *group["betas"][1:])
                        else:
                            group["momentum"] = momentum
                    break
                start_step = phase["end_step"]
        return lrs


__getattr__ = unsupported.module_getattr("tinygrad_pool.optim.lr_scheduler", "torch.optim.lr_scheduler")
