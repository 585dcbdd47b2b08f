"""The losses as Modules, as ``torch.nn`` has them: ``criterion = nn.CrossEntropyLoss()``, then
``loss = criterion(logits, labels)``.

Each module keeps its settings and calls its function in ``ops/loss.py``, where the math is. A
``weight`` (and BCEWithLogitsLoss's ``pos_weight``) is a buffer, as in PyTorch, so it appears in
``state_dict()`` under the same key — or not at all when it is None. The deprecated
``size_average``/``reduce`` arguments are accepted where PyTorch accepts them, and set
``reduction`` as PyTorch does.
"""
from ..ops import loss
from ..args import check_int, check_number, tensor_arg
from .module import Module


class _Loss(Module):
    """The numeric settings and the weights are checked here, so that a bad one names the loss;
    ``reduction`` is checked by the loss function at the first call, as torch's."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = loss._reduction(type(self).__name__, reduction, size_average, reduce)
        self.reduction = reduction

    def _register_weight(self, name: str, weight) -> None:
        if weight is not None:
            tensor_arg(type(self).__name__, name, weight)
        self.register_buffer(name, weight)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self._register_weight("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum) absolute error |input - target|."""

    def forward(self, input, target):
        return loss.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum) squared error (input - target)²."""

    def forward(self, input, target):
        return loss.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above (see ``F.smooth_l1_loss``)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = check_number("SmoothL1Loss", "beta", beta, low=0.0, error=RuntimeError)

    def forward(self, input, target):
        return loss.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """delta · SmoothL1Loss(beta=delta) (see ``F.huber_loss``)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = check_number("HuberLoss", "delta", delta)
        if not self.delta > 0:  # (NaN too)
            raise RuntimeError(f"HuberLoss: delta must be positive, got {delta}")

    def forward(self, input, target):
        return loss.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices, given log-probabilities (see ``F.nll_loss``)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = check_int("NLLLoss", "ignore_index", ignore_index)

    def forward(self, input, target):
        return loss.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax then NLLLoss, with class-index or class-probability targets and optional
    label smoothing (see ``F.cross_entropy``)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = check_int("CrossEntropyLoss", "ignore_index", ignore_index)
        # (a negative one means none, as torch takes it)
        self.label_smoothing = check_number("CrossEntropyLoss", "label_smoothing",
                                            label_smoothing, high=1.0, error=RuntimeError)

    def forward(self, input, target):
        return loss.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (see ``F.binary_cross_entropy``)."""

    def forward(self, input, target):
        return loss.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits, sigmoid included and stable (see
    ``F.binary_cross_entropy_with_logits``)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self._register_weight("weight", weight)
        self._register_weight("pos_weight", pos_weight)

    def forward(self, input, target):
        return loss.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
