"""Upsampling layers, as torch.nn's: Upsample (F.interpolate as a module) and the two fixed
ones, UpsamplingNearest2d and UpsamplingBilinear2d (align_corners=True), with PyTorch's
constructors and reprs. The math and the argument checks live in ``ops/resize.py``."""
from ..ops.resize import interpolate
from .module import Module


class Upsample(Module):
    """Resizes the spatial dims of an (N, C, *spatial) input to ``size`` or by ``scale_factor``,
    by ``mode`` (see F.interpolate)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        # as torch keeps it: a float (or a tuple of them); 0 and None both mean none
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest') for a 4-D input."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True) for a 4-D input."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
