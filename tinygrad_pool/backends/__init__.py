"""``torch.backends`` on a CPU-only machine: ``mps`` and ``cudnn`` report nothing available, and
the switches scripts set (``torch.backends.cudnn.benchmark = True``,
``torch.backends.cuda.matmul.allow_tf32 = True``) are kept and read back, changing nothing here."""
from .. import unsupported
from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
__getattr__ = unsupported.module_getattr("tinygrad_pool.backends", "torch.backends")
