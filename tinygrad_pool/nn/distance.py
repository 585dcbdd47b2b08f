"""Distance layers, as ``torch.nn``'s: CosineSimilarity and PairwiseDistance hold their settings
and call the function of ``ops/normalization.py`` in ``forward``."""
from ..ops.normalization import cosine_similarity, pairwise_distance
from .module import Module


class PairwiseDistance(Module):
    """‖x1 - x2 + ε‖_p along the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Σ x1 x2 / (max(‖x1‖, ε) max(‖x2‖, ε)) along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)
