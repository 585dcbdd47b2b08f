"""Normalization layers: BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm, InstanceNorm1d,
InstanceNorm2d and LocalResponseNorm, as PyTorch's.

The math is ``ops.normalization`` (batch_norm, layer_norm, group_norm, instance_norm,
local_response_norm); these modules hold the learned per-feature ``weight`` (initialised to 1)
and ``bias`` (0) and, for batch and instance norm, the running statistics as buffers —
``running_mean``, ``running_var`` and the int64 ``num_batches_tracked``, under PyTorch's names,
so state_dicts have the same keys.
"""
import numbers
import warnings

import numpy as np

from ..args import check_dimension, check_flag, check_number, tensor_arg
from ..ops.normalization import (batch_norm, group_norm, instance_norm, layer_norm,
                                 local_response_norm)
from .. import dtypes
from ..engine import Tensor, check_device
from . import init
from .module import Module, Parameter


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ only in the input ranks accepted.

    In training, each call normalizes by the batch's statistics and folds them into the running
    ones: running ← (1 - momentum) · running + momentum · batch (``momentum=None``: the
    cumulative average over all batches so far, momentum = 1 / num_batches_tracked). In eval,
    the running statistics normalize — unless ``track_running_stats=False``, where there are
    none and batch statistics are used in eval too.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        name = type(self).__name__
        check_device(name, device)
        dtype = dtypes.or_default(name, dtype)
        self.num_features = check_dimension(name, "num_features", num_features)
        # (numbers as torch takes them, a bool included: eps=True is 1.0)
        self.eps = check_number(name, "eps", eps)
        if momentum is not None and not isinstance(momentum, numbers.Real):
            raise TypeError(f"{name}: momentum must be a float or None, got "
                            f"{type(momentum).__name__} {momentum!r}")
        self.momentum = None if momentum is None else float(momentum)
        self.affine = check_flag(name, "affine", affine)
        self.track_running_stats = check_flag(name, "track_running_stats", track_running_stats)
        bias = check_flag(name, "bias", bias)
        if affine:
            self.weight = Parameter(np.empty(self.num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(np.empty(self.num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._make(np.zeros(self.num_features, dtype), None))
            self.register_buffer("running_var", Tensor._make(np.ones(self.num_features, dtype), None))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, dtype=np.int64), None))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen (in place)."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset, weight 1 and bias 0 (in place)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:  # pragma: no cover - subclasses define it
        raise NotImplementedError

    def forward(self, input):
        input = tensor_arg(type(self).__name__, "input", input)
        self._check_input_dim(input)
        tracking = self.training and self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum
        if tracking and self.momentum is None:  # the cumulative average, this batch included
            momentum = 1.0 / (self.num_batches_tracked.item() + 1)
        # Batch statistics in training, and in eval when there are no running ones.
        use_batch_statistics = self.training or self.running_mean is None
        # The running statistics go in only where they are used or updated.
        running = not self.training or self.track_running_stats
        out = batch_norm(input, self.running_mean if running else None,
                         self.running_var if running else None, self.weight, self.bias,
                         use_batch_statistics, momentum, self.eps)
        if tracking:
            # (after batch_norm, not before as torch does: a rejected batch changes nothing)
            self.num_batches_tracked.add_(1)
        return out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input: statistics per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input): "
                             f"{type(self).__name__} takes (N, C) or (N, C, L), got shape "
                             f"{input.shape}")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input: statistics per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input): "
                             f"{type(self).__name__} takes (N, C, H, W), got shape {input.shape}")


class LayerNorm(Module):
    """Normalization of each sample over its trailing ``normalized_shape`` axes, then an
    elementwise weight (1) and bias (0) of that shape."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        check_device("LayerNorm", device)
        dtype = dtypes.or_default("LayerNorm", dtype)
        if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not all(
                isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                for n in normalized_shape):
            raise TypeError(f"LayerNorm: normalized_shape must be an int or a tuple of ints, "
                            f"got {type(normalized_shape).__name__} {normalized_shape!r}")
        self.normalized_shape = tuple(check_dimension("LayerNorm", "normalized_shape", n)
                                      for n in normalized_shape)
        self.eps = check_number("LayerNorm", "eps", eps)
        self.elementwise_affine = check_flag("LayerNorm", "elementwise_affine", elementwise_affine)
        bias = check_flag("LayerNorm", "bias", bias)
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalization of each sample's channels in ``num_groups`` groups (statistics over a
    group's channels and the spatial axes), then a per-channel weight (1) and bias (0)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        check_device("GroupNorm", device)
        dtype = dtypes.or_default("GroupNorm", dtype)
        self.num_groups = check_dimension("GroupNorm", "num_groups", num_groups)
        self.num_channels = check_dimension("GroupNorm", "num_channels", num_channels)
        if self.num_groups == 0 or self.num_channels % self.num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups}) (GroupNorm)")
        self.eps = check_number("GroupNorm", "eps", eps)
        self.affine = check_flag("GroupNorm", "affine", affine)
        bias = check_flag("GroupNorm", "bias", bias)
        _affine_parameters(self, (self.num_channels,), affine, bias, dtype)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """What InstanceNorm1d and InstanceNorm2d share: batch norm's parameters and buffers (as
    torch's, which share its base class), with affine and track_running_stats off by default;
    each channel of each sample is normalized by its own statistics, in training and — unless
    track_running_stats — in eval. An input without its batch dim is taken as a batch of one.
    (num_batches_tracked is kept but never counts, as torch's.)"""

    spatial_dims = 1  # (per subclass)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def forward(self, input):
        name = type(self).__name__
        input = tensor_arg(name, "input", input)
        unbatched = self.spatial_dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"expected {unbatched}D or {unbatched + 1}D input (got {input.ndim}D "
                             f"input): {name} takes (C, ...) or (N, C, ...) with "
                             f"{self.spatial_dims} spatial dims, got shape {input.shape}")
        feature_dim = input.ndim - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        batched = input if input.ndim == unbatched + 1 else input.unsqueeze(0)
        out = instance_norm(batched, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out if input.ndim == unbatched + 1 else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) input: statistics per sample and channel."""

    spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) input: statistics per sample and
    channel."""

    spatial_dims = 2


class LocalResponseNorm(Module):
    """x / (k + α · mean of x² over ``size`` neighbouring channels)^β."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool, dtype) -> None:
    """LayerNorm's and GroupNorm's weight (1) and bias (0) of ``shape``, or None for each when
    not ``affine`` (bias None also when not ``bias``), as torch registers them."""
    module.register_parameter("weight", Parameter(np.empty(shape, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(np.empty(shape, dtype=dtype))
                              if affine and bias else None)
    _reset_affine(module)


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)
