"""Weight initialisation, as ``torch.nn.init``: each function fills a tensor in place and returns it.

The functions write ``tensor.data`` directly — initialisation is not part of any graph, as
torch's run under no_grad — and keep the tensor's dtype (the random draw happens in float64 and
is cast once). Each write bumps the tensor's version, as torch's in-place init does, so a graph
that saved the tensor notices. Random draws come from ``generator`` (a NumPy Generator) or the
package's default generator (``tinygrad_pool.manual_seed``).

The scaled initialisations keep the variance of activations (or gradients) steady from layer
to layer: with fan_in inputs per unit, weights of standard deviation gain / √fan do that for a
nonlinearity whose ``calculate_gain`` is gain. A uniform U(-b, b) has standard deviation
b / √3, hence the √3 in the bounds.
"""
import math
import warnings

import numpy as np

from ..random import default_generator
from .. import unsupported
from ..tensor import Tensor

_UNIT_GAIN = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
_GAINS = {"tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity`` (torch's
    table: 1 for linear, conv and sigmoid; 5/3 tanh; √2 relu; √(2 / (1 + slope²)) leaky_relu,
    ``param`` the slope, 0.01 by default; 3/4 selu)."""
    if nonlinearity in _UNIT_GAIN:
        return 1.0
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected "
                         f"one of {list(_UNIT_GAIN) + sorted(_GAINS) + ['leaky_relu']}")
    return _GAINS[nonlinearity]


def _check_tensor(op: str, tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: tensor must be a Tensor, got {type(tensor).__name__}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    """(fan_in, fan_out) of a weight laid out (out, in, *kernel), as PyTorch counts them."""
    if tensor.ndim < 2:
        raise ValueError(f"init: fan in and fan out can not be computed for a tensor with fewer "
                         f"than 2 dimensions, got shape {tensor.shape}")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(op: str, tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode {mode!r} not supported, please use one of "
                         f"['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor: Tensor, values) -> Tensor:
    tensor.data[...] = np.asarray(values).astype(tensor.dtype, copy=False)
    tensor._bump_version()
    return tensor


def _rng(generator):
    return default_generator() if generator is None else generator


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with draws from U(a, b)."""
    _check_tensor("uniform_", tensor)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a} > to={b}")
    return _fill(tensor, _rng(generator).uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with draws from N(mean, std²)."""
    _check_tensor("normal_", tensor)
    if std < 0:
        raise RuntimeError(f"normal_ expects std >= 0.0, but found std {std}")
    return _fill(tensor, _rng(generator).normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    _check_tensor("constant_", tensor)
    if isinstance(val, bool) or not isinstance(val, (int, float, np.number)):
        raise TypeError(f"constant_: val must be a number, got {type(val).__name__} {val!r}")
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with U(-b, b), b = gain · √(6 / (fan_in + fan_out)), Glorot & Bengio (2010)."""
    _check_tensor("xavier_uniform_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""
    _check_tensor("xavier_normal_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator=generator)


def _kaiming_std(op: str, tensor: Tensor, a, mode: str, nonlinearity: str):
    """gain / √fan, or None for a tensor with no elements (torch warns and leaves it)."""
    _check_tensor(op, tensor)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(op, tensor, mode))


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
    return uniform_(tensor, -bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with N(0, std²), std = gain / √fan, He et al. (2015)."""
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator=generator)


__getattr__ = unsupported.module_getattr("tinygrad_pool.nn.init", "torch.nn.init")
