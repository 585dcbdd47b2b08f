"""``torch.nn.parallel`` on a machine without accelerators, which is what tinygrad_pool is.

DataParallel     what torch's is when no GPU is found: the wrapped model, run as it is, under the
                 name ``module`` (so its state_dict keys read ``module.weight``, as torch's)
DistributedDataParallel
                 refused when made, as torch refuses it without a process group: there is no
                 ``torch.distributed`` here to make one
"""
from .. import unsupported
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Runs ``module`` as it is: ``forward`` passes everything through to it.

    torch splits the batch across its GPUs; with none (always, here) it keeps only the module
    and ``device_ids = []``, ignoring ``device_ids``, ``output_device`` and ``dim``.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        if not isinstance(module, Module):  # (torch accepts any object, then fails calling it)
            raise TypeError(f"DataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """torch's needs a process group from ``torch.distributed.init_process_group``, which
    tinygrad_pool does not have; making one is torch's error for a missing group."""

    def __init__(self, module, *args, **kwargs):
        raise ValueError(
            "DistributedDataParallel: Default process group has not been initialized, please "
            "make sure to call init_process_group. tinygrad_pool has no torch.distributed (one "
            "process, no process groups): run the module as it is, or in nn.DataParallel, "
            "which runs it as it is; " + unsupported.not_supported(
                "torch.nn.parallel.DistributedDataParallel"))


unsupported.refuse_submodules(__name__, "torch.nn.parallel")
__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.parallel", "torch.nn.parallel")
