"""``torch.cuda`` on a machine without CUDA, as torch's CPU build answers: nothing is available,
seeding is a no-op (so a script's ``torch.cuda.manual_seed(1)`` runs), and what needs a GPU
raises torch's AssertionError."""
from . import unsupported
from .devices import device, missing

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "empty_cache", "synchronize", "current_device", "get_device_name",
           "set_device"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def manual_seed(seed) -> None:
    """Seeds CUDA's generators, of which there are none here (torch's CPU build: a no-op)."""


def manual_seed_all(seed) -> None:
    """As ``manual_seed``: a no-op without CUDA."""


def seed() -> None:
    """A no-op without CUDA, as in torch's CPU build."""


def seed_all() -> None:
    """A no-op without CUDA, as in torch's CPU build."""


def empty_cache() -> None:
    """Nothing is cached without CUDA (torch's CPU build: a no-op)."""


def _no_cuda(op: str):
    return missing(f"cuda.{op}", device("cuda"))


def synchronize(device=None) -> None:  # noqa: F811  (torch's argument name)
    raise _no_cuda("synchronize")


def current_device() -> int:
    raise _no_cuda("current_device")


def get_device_name(device=None) -> str:
    raise _no_cuda("get_device_name")


def set_device(device) -> None:
    raise _no_cuda("set_device")


__getattr__ = unsupported.module_getattr("tinygrad_pool.cuda", "torch.cuda")
