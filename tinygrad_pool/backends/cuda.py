"""``torch.backends.cuda``: not built here; ``matmul.allow_tf32`` and the other precision flags
scripts set are kept and read back (torch's defaults)."""
from .. import unsupported


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: the flags torch reads before a CUDA product."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    return False


__getattr__ = unsupported.module_getattr("tinygrad_pool.backends.cuda", "torch.backends.cuda")
