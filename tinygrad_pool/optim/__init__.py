"""``torch.optim``: the optimizers (optimizers.py) and the learning-rate schedulers
(lr_scheduler.py), with PyTorch's API and update rules."""
from .. import unsupported
from .optimizers import (LBFGS, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, Optimizer,
                         RAdam, RMSprop)
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "LBFGS", "lr_scheduler"]
__getattr__ = unsupported.module_getattr("tinygrad_pool.optim", "torch.optim")
