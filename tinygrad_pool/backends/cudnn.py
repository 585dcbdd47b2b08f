"""``torch.backends.cudnn``: not available here; its flags are kept as set (torch's defaults:
``enabled`` True, ``benchmark`` and ``deterministic`` False, ``allow_tf32`` True)."""
from .. import unsupported

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None


__getattr__ = unsupported.module_getattr("tinygrad_pool.backends.cudnn", "torch.backends.cudnn")
