"""Dropout layers: Dropout (elements), Dropout1d, Dropout2d, Dropout3d (whole channels),
AlphaDropout and FeatureAlphaDropout (SELU's, elements or channels), active only in training
mode (``model.train()``); in eval mode (``model.eval()``) they return their input unchanged."""
from . import functional
from ..args import check_flag
from ..ops.dropout import _check_p
from .module import Module


class _DropoutNd(Module):
    """What Dropout and Dropout2d share: p, inplace, and the generator masks are drawn from
    (``generator=None``: the package's default generator, seeded by ``manual_seed``)."""

    def __init__(self, p: float = 0.5, inplace: bool = False, *, generator=None):
        super().__init__()
        _check_p(type(self).__name__, p)
        self.p = p  # as given (torch prints p=0 for 0, not p=0.0)
        self.inplace = check_flag(type(self).__name__, "inplace", inplace)
        self.generator = generator

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""

    def forward(self, input):
        # Through nn.functional, as torch's Dropout calls functional.dropout: replacing that one function
        # (tests/test_porting.py does, to share masks with torch) changes the layer too.
        return functional.dropout(input, self.p, self.training, self.inplace, generator=self.generator)


class Dropout2d(_DropoutNd):
    """Zero each whole channel of (N, C, H, W) input with probability p; scale the rest by
    1 / (1 - p)."""

    def forward(self, input):
        return functional.dropout2d(input, self.p, self.training, self.inplace, generator=self.generator)


class Dropout1d(_DropoutNd):
    """Zero each whole channel of (N, C, L) or (C, L) input with probability p; scale the rest by
    1 / (1 - p)."""

    def forward(self, input):
        return functional.dropout1d(input, self.p, self.training, self.inplace,
                                    generator=self.generator)


class Dropout3d(_DropoutNd):
    """Zero each whole channel of (N, C, D, H, W) or (C, D, H, W) input with probability p;
    scale the rest by 1 / (1 - p)."""

    def forward(self, input):
        return functional.dropout3d(input, self.p, self.training, self.inplace,
                                    generator=self.generator)


class AlphaDropout(_DropoutNd):
    """Alpha dropout of each element (for SELU networks): keeps zero mean and unit variance.
    Like torch's, it ignores ``inplace`` (which it keeps and prints)."""

    def forward(self, input):
        return functional.alpha_dropout(input, self.p, self.training, generator=self.generator)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of each whole channel of (N, C, ...) input. Like torch's, it ignores
    ``inplace``."""

    def forward(self, input):
        return functional.feature_alpha_dropout(input, self.p, self.training,
                                                generator=self.generator)
