"""The losses as Modules, as ``torch.nn`` has them: ``criterion = nn.CrossEntropyLoss()``, then
``loss = criterion(logits, labels)``.

Each module keeps its settings and calls its function in ``ops/loss.py``, where the math is. A
``weight`` (and BCEWithLogitsLoss's ``pos_weight``) is a buffer, as in PyTorch, so it appears in
``state_dict()`` under the same key — or not at all when it is None. The deprecated
``size_average``/``reduce`` arguments are accepted where PyTorch accepts them, and set
``reduction`` as PyTorch does.
"""
from ..ops import loss
from ..args import check_flag, check_int, check_number, tensor_arg
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


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities from a target distribution (see
    ``F.kl_div``; 'batchmean' is the divergence's definition, averaged over the batch)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = check_flag("KLDivLoss", "log_target", log_target)

    def forward(self, input, target):
        return loss.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson rate (see ``F.poisson_nll_loss``)."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = check_flag("PoissonNLLLoss", "log_input", log_input)
        self.full = check_flag("PoissonNLLLoss", "full", full)
        self.eps = check_number("PoissonNLLLoss", "eps", eps)

    def forward(self, log_input, target):
        return loss.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                     eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a Gaussian with predicted mean and variance (see
    ``F.gaussian_nll_loss``)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full = check_flag("GaussianNLLLoss", "full", full)
        self.eps = check_number("GaussianNLLLoss", "eps", eps)

    def forward(self, input, target, var):
        return loss.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                      reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where it is -1 (see
    ``F.hinge_embedding_loss``)."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number("HingeEmbeddingLoss", "margin", margin)

    def forward(self, input, target):
        return loss.hinge_embedding_loss(input, target, margin=self.margin,
                                         reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss log(1 + exp(-target · input)) (see ``F.soft_margin_loss``)."""

    def forward(self, input, target):
        return loss.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class binary logistic loss, averaged over the classes (see
    ``F.multilabel_soft_margin_loss``)."""

    def forward(self, input, target):
        return loss.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                                reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss on class indices (see ``F.multi_margin_loss``)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                 reduce=None, reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.ndim}D instead")
        self.p = p
        self.margin = check_number("MultiMarginLoss", "margin", margin)

    def forward(self, input, target):
        return loss.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                      weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss on -1-terminated target lists (see
    ``F.multilabel_margin_loss``)."""

    def forward(self, input, target):
        return loss.multilabel_margin_loss(input, target, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target · (input1 - input2) + margin) (see ``F.margin_ranking_loss``)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number("MarginRankingLoss", "margin", margin)

    def forward(self, input1, input2, target):
        return loss.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                        reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos where target is 1, max(0, cos - margin) where it is -1 (see
    ``F.cosine_embedding_loss``)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number("CosineEmbeddingLoss", "margin", margin)

    def forward(self, input1, input2, target):
        return loss.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                          reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) (see
    ``F.triplet_margin_loss``)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number("TripletMarginLoss", "margin", margin)
        if not self.margin > 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.p = check_number("TripletMarginLoss", "p", p)
        self.eps = check_number("TripletMarginLoss", "eps", eps)
        self.swap = check_flag("TripletMarginLoss", "swap", swap)

    def forward(self, anchor, positive, negative):
        return loss.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                        eps=self.eps, swap=self.swap, reduction=self.reduction)
