"""Activation layers, as ``torch.nn``'s: each holds its settings and calls one op in ``forward``
(the Functions and their derivatives live in ``ops/activation.py``, ``ops/elementwise.py`` and
``ops/loss.py``). Their reprs are torch's, so a printed model reads the same in both.
"""
import warnings

import numpy as np

from .. import dtypes
from ..args import check_dimension, check_number
from ..engine import check_device
from ..ops import activation
from ..ops.loss import implicit_softmax_dim, log_softmax, softmax  # noqa: F401
from . import init as nn_init
from .module import Module, Parameter


class ReLU(Module):
    """max(x, 0), elementwise; ``inplace=True`` overwrites the input (``relu_``)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else input.relu()

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope · x."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return activation.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x where x > 0, else α (eˣ - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return activation.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(Module):
    """λ x where x > 0, else λ α (eˣ - 1), with SELU's fixed α ≈ 1.6733, λ ≈ 1.0507."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return activation.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CELU(Module):
    """x where x > 0, else α (e^(x/α) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return activation.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (slope 0 at the bounds). ``min_value``/``max_value``:
    torch's deprecated spellings, with its FutureWarning."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:  # (torch's check and error type, at construction)
            raise AssertionError(f"Hardtanh: max_val ({max_val}) must be greater than min_val "
                                 f"({min_val})")

    def forward(self, input):
        return activation.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): Hardtanh(0.0, 6.0), as torch's."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardswish(Module):
    """x · relu6(x + 3) / 6. (Its repr does not show ``inplace``, as torch's.)"""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return activation.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """relu6(x + 3) / 6. (Its repr does not show ``inplace``, as torch's.)"""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return activation.hardsigmoid(input, self.inplace)


class Mish(Module):
    """x tanh(softplus(x))."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return activation.mish(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return activation.softsign(input)


class GELU(Module):
    """x Φ(x), Φ the standard normal CDF; ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return activation.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x σ(x)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return activation.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """log(1 + e^(βx)) / β, and x itself where βx > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return activation.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """log σ(x), stable for any x."""

    def forward(self, input):
        return activation.logsigmoid(input)


class Sigmoid(Module):
    """1 / (1 + e⁻ˣ)."""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return input.tanh()


class Softmax(Module):
    """exp(x) / Σ exp(x) along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return softmax(input, self.dim)  # (dim None: torch's legacy implicit dim, with its warning)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log Σ exp(x) along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    """a · σ(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return activation.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """x where x > 0, else a · x, with the slope a learned: one for all channels
    (``num_parameters=1``) or one per channel (dim 1), each initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        check_device("PReLU", device)
        dtype = dtypes.or_default("PReLU", dtype)
        self.num_parameters = check_dimension("PReLU", "num_parameters", num_parameters)
        self.init = check_number("PReLU", "init", init)
        self.weight = Parameter(np.empty(self.num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope back to ``init`` (in place)."""
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return activation.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(Module):
    """softmax(-x) along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return activation.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return activation.tanhshrink(input)


class Softshrink(Module):
    """x - λ above λ, x + λ below -λ, 0 in between."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return activation.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    """x where |x| > λ, else 0."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return activation.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return activation.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class RReLU(Module):
    """x where x > 0, else a · x: in training a drawn from U(lower, upper) per element and call,
    in eval a = (lower + upper) / 2."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return activation.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")
