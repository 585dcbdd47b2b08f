"""Weight initialisation, as ``torch.nn.init``: each function fills a tensor in place and returns it.

The functions write ``tensor.data`` directly — initialisation is not part of any graph — and
keep the tensor's dtype (the random draw happens in float64 and is cast once). Each write bumps
the tensor's version, as torch's in-place init does, so a graph that saved it notices.
"""
import math

import numpy as np

from ..random import default_generator
from ..tensor import Tensor

_GAINS = {"linear": 1.0, "identity": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity`` (torch's table)."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected "
                         f"one of {sorted(_GAINS) + ['leaky_relu']}")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    """(fan_in, fan_out) of a weight laid out (out, in, *kernel), as PyTorch counts them."""
    if tensor.ndim < 2:
        raise ValueError(f"init: fan in and fan out need a tensor with at least 2 dimensions, "
                         f"got shape {tensor.shape}")
    receptive_field = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fill(tensor: Tensor, values) -> Tensor:
    tensor.data[...] = np.asarray(values).astype(tensor.dtype, copy=False)
    tensor._bump_version()
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with draws from U(a, b)."""
    if not a <= b:
        raise ValueError(f"uniform_: need a <= b, got a={a}, b={b}")
    rng = default_generator() if generator is None else generator
    return _fill(tensor, rng.uniform(a, b, size=tensor.shape))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _fill(tensor, 1)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with U(-bound, bound), bound = gain · sqrt(3 / fan), He et al. (2015).

    PyTorch's layers call this with ``a=sqrt(5)``: gain = sqrt(2 / (1 + 5)) = sqrt(1/3), so the
    bound becomes exactly 1 / sqrt(fan_in).
    """
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming_uniform_: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:  # an empty weight: nothing to draw (PyTorch warns and returns it too)
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator=generator)
