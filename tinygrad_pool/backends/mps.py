"""``torch.backends.mps``: Apple's GPU backend, not built here."""
from .. import unsupported


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


__getattr__ = unsupported.module_getattr("tinygrad_pool.backends.mps", "torch.backends.mps")
