"""The package's default random generator, so that ``manual_seed`` makes initialisation repeatable.

Layers draw their initial weights from ``default_generator()`` unless they are given a
``generator=`` of their own; ``manual_seed(seed)`` replaces the default with a freshly seeded
``np.random.Generator``, as ``torch.manual_seed`` does for PyTorch's default generator.
"""
import numpy as np

# Unseeded until manual_seed() is called: two runs without a seed start from different weights.
_default_generator = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Seed the default generator that layer initialisation draws from; returns it."""
    global _default_generator
    # torch takes what int() takes (2.5 is 2, True is 1, "7" is 7), a negative one modulo 2⁶⁴
    try:
        value = int(seed)
    except (TypeError, ValueError) as error:
        raise type(error)(f"manual_seed: seed must be an int, got {seed!r}") from None
    if not -2 ** 63 <= value < 2 ** 64:
        raise ValueError(f"manual_seed: seed must fit in 64 bits, got {seed!r}")
    _default_generator = np.random.default_rng(value % 2 ** 64)
    return _default_generator


def default_generator() -> np.random.Generator:
    """The generator used when a layer or init function is not given ``generator=``."""
    return _default_generator
