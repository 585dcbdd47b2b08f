"""Grad mode: whether ops record the graph, per thread, as in PyTorch.

    with no_grad():                 # or @no_grad / @no_grad() on a function
        p -= lr * p.grad            # an update, not part of any graph

Each thread has its own mode, and a new thread starts with grad enabled (torch does the same),
so one thread's ``no_grad`` never drops another thread's gradients. Every switch restores the
mode it found when its block ends, also through an exception, so they nest freely.
"""
from __future__ import annotations

import functools
import inspect
import threading


class _Mode(threading.local):
    # Class attributes are each new thread's starting values.
    grad_enabled = True
    inference = False


_mode = _Mode()


def is_grad_enabled() -> bool:
    """True when ops record the graph in this thread."""
    return _mode.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _mode.inference


class _ModeSwitch:
    """A context manager that is also a decorator, with or without parentheses."""

    def __new__(cls, *args, **kwargs):
        # ``@no_grad`` without parentheses hands the function itself over as the argument.
        if cls._takes_no_argument and len(args) == 1 and not kwargs and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    _takes_no_argument = True

    def _set(self) -> None:  # pragma: no cover - each switch defines it
        raise NotImplementedError

    def __enter__(self):
        self._previous = (_mode.grad_enabled, _mode.inference)
        self._set()
        return self

    def __exit__(self, *exc) -> bool:
        _mode.grad_enabled, _mode.inference = self._previous
        return False

    def clone(self):
        return type(self)()

    def __call__(self, function):
        if inspect.isgeneratorfunction(function):
            @functools.wraps(function)
            def generator(*args, **kwargs):
                # The mode holds while the generator's own code runs, not while its caller's does.
                gen = function(*args, **kwargs)
                value = None
                while True:
                    with self.clone():
                        try:
                            item = gen.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield item
            return generator

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.clone():  # a fresh switch per call: recursive calls each restore their own
                return function(*args, **kwargs)
        return wrapper


class no_grad(_ModeSwitch):
    """Ops compute their outputs but record nothing, so nothing is saved for backward."""

    def _set(self) -> None:
        _mode.grad_enabled = False


class enable_grad(_ModeSwitch):
    """Record the graph again, e.g. inside a function that runs under no_grad."""

    def _set(self) -> None:
        _mode.grad_enabled = True


class set_grad_enabled(_ModeSwitch):
    """``set_grad_enabled(False)``: as a call, switch now; as a context manager or decorator,
    switch for the block and restore afterwards."""

    _takes_no_argument = False

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be a bool, got {mode!r}")
        self.mode = mode
        self._previous = (_mode.grad_enabled, _mode.inference)
        _mode.grad_enabled = mode  # torch switches on the call itself

    def _set(self) -> None:
        _mode.grad_enabled = self.mode

    def __enter__(self):
        self._set()  # the mode to restore was noted when the object was made
        return self

    def clone(self):
        previous = _mode.grad_enabled
        switch = set_grad_enabled(self.mode)
        _mode.grad_enabled = previous  # making the clone must not switch anything yet
        switch._previous = (previous, _mode.inference)
        return switch

    def __call__(self, function):
        _mode.grad_enabled = self._previous[0]  # as a decorator: switch only while it runs
        return super().__call__(function)


class inference_mode(_ModeSwitch):
    """Like no_grad (nothing is recorded), for code that will never call backward.
    ``inference_mode(False)`` switches it off again: grad enabled, as in torch."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _set(self) -> None:
        _mode.grad_enabled, _mode.inference = not self.mode, self.mode

    def clone(self):
        return inference_mode(self.mode)
