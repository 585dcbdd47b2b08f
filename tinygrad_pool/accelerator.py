"""``torch.accelerator`` on a machine with none: ``is_available()`` is False and
``current_accelerator()`` None, so ``device = torch.accelerator.current_accelerator() if
torch.accelerator.is_available() else "cpu"`` picks the CPU, as in torch."""
from . import unsupported

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise RuntimeError("accelerator.current_device_index: Cannot access accelerator device when "
                       "none is available.")


__getattr__ = unsupported.module_getattr("tinygrad_pool.accelerator", "torch.accelerator")
