"""Named kernels: each op's arithmetic, its reference in ``ops/``, a faster one in ``fast/``.

An op's forward and backward call kernels by name (``im2col``, ``col2im``,
``max_pool_argmax``...). The reference implementation of each is written in the op's own file
and reads as the math; ``fast/`` may register a replacement under the same name that takes the
same arguments and returns the same numbers, only sooner. One switch picks which run::

    tinygrad_pool.set_kernels("reference")   # or "fast" (the default)
    TINYGRAD_POOL_KERNELS=reference python train.py

so every gradient can be checked on the plain definitions, and each replacement against its
reference (tests/test_kernels.py). The switch binds the kernel's name in the op's module to the
implementation chosen, so a call costs nothing more than a call of that function, and nothing
above this file knows which one ran.
"""
import os
import sys

_MODES = ("fast", "reference")
_references = {}  # name -> the reference implementation (ops/)
_replacements = {}  # name -> its faster replacement (fast/)
_modules = {}  # name -> the op module whose global of that name calls go through
_mode = [os.environ.get("TINYGRAD_POOL_KERNELS", "fast")]
if _mode[0] not in _MODES:
    raise ValueError(f"TINYGRAD_POOL_KERNELS: expected one of {', '.join(_MODES)}, "
                     f"got {_mode[0]!r}")


def kernel(reference):
    """Declare a kernel by its reference implementation (a decorator in ``ops/``): the name is
    bound to the implementation the switch picks."""
    name = reference.__name__
    reference.reference = reference  # (each implementation names its reference: tests read it)
    _references[name] = reference
    _modules[name] = sys.modules[reference.__module__]
    if name in _replacements:
        _replacements[name].reference = reference
    return _pick(name)


def replaces(name: str):
    """Register a faster implementation of kernel ``name`` (a decorator in ``fast/``)."""
    def register(fast):
        _replacements[name] = fast
        if name in _references:
            fast.reference = _references[name]
            _bind(name)
        return fast
    return register


def _pick(name: str):
    if _mode[0] == "fast" and name in _replacements:
        return _replacements[name]
    return _references[name]


def _bind(name: str) -> None:
    setattr(_modules[name], name, _pick(name))


def running(name: str):
    """The implementation kernel ``name`` calls now."""
    return getattr(_modules[name], name)


def set_kernels(mode: str) -> None:
    """Run every kernel on its reference implementation (``"reference"``) or on its faster
    replacement where ``fast/`` has one (``"fast"``, the default)."""
    if mode not in _MODES:
        raise ValueError(f"set_kernels: mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"got {mode!r}")
    _mode[0] = mode
    for name in _references:
        _bind(name)


def get_kernels() -> str:
    """The mode ``set_kernels`` chose: ``"fast"`` or ``"reference"``."""
    return _mode[0]


def implementations(name: str) -> tuple:
    """(reference, replacement or None) of kernel ``name``, for tests."""
    return _references[name], _replacements.get(name)


def names() -> list:
    """Every kernel the ops declare, sorted."""
    return sorted(_references)


def replaced() -> list:
    """The kernels ``fast/`` replaces, sorted."""
    return sorted(_replacements)
