"""Weight initialisation, as ``torch.nn.init``: each function fills a tensor in place and returns it.

The functions write ``tensor._data`` directly — initialisation is not part of any graph, as
torch's run under no_grad — and keep the tensor's dtype (the random draw happens in float64 and
is cast once). Each write bumps the tensor's version, as torch's in-place init does, so a graph
that saved the tensor notices. Random draws come from ``generator`` (a ``tinygrad_pool.Generator``
or a NumPy Generator: both offer NumPy's ``uniform`` and ``normal``) or the package's default
generator (``tinygrad_pool.manual_seed``).

The scaled initialisations keep the variance of activations (or gradients) steady from layer
to layer: with fan_in inputs per unit, weights of standard deviation gain / √fan do that for a
nonlinearity whose ``calculate_gain`` is gain. A uniform U(-b, b) has standard deviation
b / √3, hence the √3 in the bounds.
"""
import math
import warnings

import numpy as np

from ..args import check_choice, check_floating, check_number, tensor_arg
from ..random import default_generator
from .. import unsupported
from ..engine import Tensor

_UNIT_GAIN = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
_GAINS = {"tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity`` (torch's
    table: 1 for linear, conv and sigmoid; 5/3 tanh; √2 relu; √(2 / (1 + slope²)) leaky_relu,
    ``param`` the slope, 0.01 by default; 3/4 selu)."""
    return _gain("calculate_gain", nonlinearity, param, "param")


def _gain(op: str, nonlinearity, slope, slope_name: str) -> float:
    """calculate_gain, its errors naming ``op`` and what the caller calls the slope."""
    if nonlinearity in _UNIT_GAIN:
        return 1.0
    if nonlinearity == "leaky_relu":
        if slope is None:
            slope = 0.01
        elif isinstance(slope, bool) or not isinstance(slope, (int, float, np.integer,
                                                                np.floating)):
            raise ValueError(f"{op}: negative_slope {slope!r} is not a valid number ({slope_name} "
                             f"must be a number)")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if not isinstance(nonlinearity, str) or nonlinearity not in _GAINS:
        raise ValueError(f"{op}: unsupported nonlinearity {nonlinearity!r}; expected one of "
                         f"{list(_UNIT_GAIN) + sorted(_GAINS) + ['leaky_relu']}")
    return _GAINS[nonlinearity]


def _check_tensor(op: str, tensor, random: bool = True) -> Tensor:
    """A Tensor; for a random draw a floating one (torch has no random ints here)."""
    tensor_arg(op, "tensor", tensor)
    return check_floating(op, "tensor", tensor) if random else tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor, op: str = "init") -> tuple:
    """(fan_in, fan_out) of a weight laid out (out, in, *kernel), as PyTorch counts them."""
    if tensor.ndim < 2:
        raise ValueError(f"{op}: fan in and fan out can not be computed for a tensor with "
                         f"fewer than 2 dimensions, got shape {tensor.shape}")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(op: str, tensor: Tensor, mode: str) -> int:
    if isinstance(mode, str) and mode not in ("fan_in", "fan_out"):  # torch's text
        raise ValueError(f"{op}: mode {mode!r} not supported, please use one of "
                         f"['fan_in', 'fan_out']")
    check_choice(op, "mode", mode, ("fan_in", "fan_out"))
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, op)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor: Tensor, values) -> Tensor:
    tensor._data[...] = np.asarray(values).astype(tensor.dtype, copy=False)
    tensor._bump_version()
    return tensor


def _rng(generator):
    return default_generator() if generator is None else generator


def _uniform(op: str, tensor: Tensor, low: float, high: float, generator, name: str) -> Tensor:
    """U(low, high) for ``op``, whose argument ``name`` gave the bounds (torch's checks)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"{op}: {name} gives the bounds [{low}, {high}), out of bounds for "
                           f"float (they must be finite)")
    if low > high:
        raise RuntimeError(f"{op}: {name} gives the bounds [{low}, {high}): uniform_ expects "
                           f"to return a [from, to) range, but found from={low} > to={high}")
    return _fill(tensor, _rng(generator).uniform(low, high, size=tensor.shape))


def _normal(op: str, tensor: Tensor, mean: float, std: float, generator, name: str) -> Tensor:
    if not std >= 0:  # (NaN too)
        raise RuntimeError(f"{op}: {name} gives std {std}: normal expects std >= 0.0, but "
                           f"found std {std}")
    return _fill(tensor, _rng(generator).normal(mean, std, size=tensor.shape))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with draws from U(a, b)."""
    _check_tensor("uniform_", tensor)
    a, b = check_number("uniform_", "a", a), check_number("uniform_", "b", b)
    return _uniform("uniform_", tensor, a, b, generator, "a, b")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with draws from N(mean, std²)."""
    _check_tensor("normal_", tensor)
    mean, std = check_number("normal_", "mean", mean), check_number("normal_", "std", std)
    return _normal("normal_", tensor, mean, std, generator, "std")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    _check_tensor("constant_", tensor, random=False)
    return _fill(tensor, check_number("constant_", "val", val))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1)


def _xavier_std(op: str, tensor: Tensor, gain) -> float:
    _check_tensor(op, tensor)
    gain = check_number(op, "gain", gain)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, op)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with U(-b, b), b = gain · √(6 / (fan_in + fan_out)), Glorot & Bengio (2010)."""
    bound = math.sqrt(3.0) * _xavier_std("xavier_uniform_", tensor, gain)
    return _uniform("xavier_uniform_", tensor, -bound, bound, generator, "gain")


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""
    std = _xavier_std("xavier_normal_", tensor, gain)
    return _normal("xavier_normal_", tensor, 0.0, std, generator, "gain")


def _kaiming_std(op: str, tensor: Tensor, a, mode: str, nonlinearity: str):
    """gain / √fan, or None for a tensor with no elements (torch warns and leaves it)."""
    _check_tensor(op, tensor)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return None
    return _gain(op, nonlinearity, a, "a") / math.sqrt(_fan(op, tensor, mode))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with U(-bound, bound), bound = gain · √(3 / fan), He et al. (2015).

    PyTorch's layers call this with ``a=sqrt(5)``: gain = sqrt(2 / (1 + 5)) = sqrt(1/3), so the
    bound becomes exactly 1 / sqrt(fan_in).
    """
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return _uniform("kaiming_uniform_", tensor, -bound, bound, generator, "a")


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with N(0, std²), std = gain / √fan, He et al. (2015)."""
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return _normal("kaiming_normal_", tensor, 0.0, std, generator, "a")


__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.init", "torch.nn.init")
