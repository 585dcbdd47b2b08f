"""Activations beyond relu, sigmoid and tanh (those are in elementwise.py): leaky ReLU, ELU, GELU
(exact and tanh-approximated), SiLU, softplus, log-sigmoid, and the error function GELU rests on.

Each Function saves what PyTorch saves — the input, ``ctx.save_for_backward(x=x)`` — and
writes its backward with operators and ``Node.call`` (``Exp``, ``Tanh``, ``Erf``...), so that
under ``create_graph=True`` the backward is recorded and differentiates again, as all of these
do in torch. Which side of zero an element lies on is read from the saved input's values
(``np.asarray``): a constant mask, with no derivative of its own.
"""
import math

import numpy as np

from ..fast.quiet import quiet
from ..engine import Node, Tensor
from ..args import check_choice, check_flag, check_floating, check_number, tensor_arg
from .elementwise import Exp, Sigmoid, Where

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_CUBIC = 0.044715  # the cubic term of GELU's tanh approximation (Hendrycks & Gimpel)

# Where erf switches from its power series to the continued fraction of erfc, and how many
# terms each takes: measured against math.erf, both stay within 2e-15 of it on their side.
_SERIES_BELOW, _SERIES_TERMS, _FRACTION_DEPTH = 2.0, 40, 40


def erf_values(x) -> np.ndarray:
    """erf(x) in float64, to about 1e-16, for every element at once (NumPy has no erf, and the
    package depends on NumPy alone).

    |x| < 2: erf(x) = 2/√π · e^(-x²) · Σₙ 2ⁿ x^(2n+1) / (1·3·5···(2n+1)) — every term has the
    sign of x, so the sum never cancels (the plain Taylor series alternates).
    |x| ≥ 2: erf(x) = sign(x) (1 - erfc|x|), with the continued fraction
    erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated from the bottom.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    near = np.abs(x) < _SERIES_BELOW
    s = x[near]
    s2 = s * s
    ratio = 2 * s2  # term n = term n-1 · 2x² / (2n + 1), updated in place
    term, total = s.copy(), s.copy()
    for n in range(1, _SERIES_TERMS):
        term *= ratio
        term *= 1 / (2 * n + 1)
        total += term
    out[near] = _TWO_OVER_SQRT_PI * np.exp(-s2) * total
    far = ~near  # (NaN lands here and stays NaN; ±inf gives ±1)
    a = np.abs(x[far])
    fraction = a.copy()
    for k in range(_FRACTION_DEPTH, 0, -1):
        fraction = a + (k / 2) / fraction
    erfc = np.exp(-a * a) / (math.sqrt(math.pi) * fraction)  # (0 / inf = 0 at |x| = inf)
    out[far] = np.sign(x[far]) * (1 - erfc)
    return out


class Erf(Node):
    """d erf(x) = (2/√π) e^(-x²) dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return erf_values(x).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (_TWO_OVER_SQRT_PI * Exp.call(-(x * x)))


class LeakyReLU(Node):
    """d leaky_relu(x) = (1 if x > 0 else negative_slope) dx"""

    elementwise = True

    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x=x)
        return np.where(x > 0, x, x * x.dtype.type(negative_slope))

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        x = np.asarray(x)
        slope = np.where(x > 0, 1, ctx.attrs["negative_slope"]).astype(x.dtype)
        return grad * slope

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink report
        asks, kinks.py)."""
        return [(0.0, f"the negative side's slope {self.attrs['negative_slope']:g}, as PyTorch")]


class ELU(Node):
    """d elu(x) = (1 if x > 0 else α eˣ) dx"""

    elementwise = True

    def forward(ctx, x, alpha):
        ctx.save_for_backward(x=x)
        # (minimum in this order: elu(-0) is -0, as torch's)
        return np.where(x > 0, x, x.dtype.type(alpha) * np.expm1(np.minimum(0, x)))

    def backward(ctx, grad):
        (x,), alpha = ctx.saved_tensors, ctx.attrs["alpha"]
        values = np.asarray(x)
        # At 0 the slope is α, a constant: torch's second derivative is 0 there. eˣ is taken
        # of the negative side only (0 elsewhere): a large positive x would overflow exp, and
        # a NaN — "positive", slope 1, as in torch — would leak through 0 · NaN, into the
        # second derivative too. So: selections (Where), never products with masks.
        negative = values < 0
        exp_negative = Exp.call(Where.call(x, np.zeros((), x.dtype), condition=negative))
        constant = np.where(values == 0, alpha, 1).astype(x.dtype)
        return grad * Where.call(alpha * exp_negative, constant, condition=negative)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: at 0, unless α = 1
        (gradcheck's kink report asks, kinks.py)."""
        alpha = self.attrs["alpha"]
        return [(0.0, f"the negative side's slope α = {alpha:g}, as PyTorch")] if alpha != 1 else []


class GELU(Node):
    """gelu(x) = x Φ(x);  d gelu(x) = (Φ(x) + x φ(x)) dx, Φ the standard normal CDF, φ its density"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        wide = np.asarray(x, dtype=np.float64)
        # As torch computes it: x · ½ (1 + erf(x/√2)).
        return (wide * 0.5 * (1 + erf_values(wide * _SQRT_HALF))).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        cdf = 0.5 * (1 + Erf.call(x * _SQRT_HALF))
        density = _INV_SQRT_2PI * Exp.call(-0.5 * (x * x))
        return grad * (cdf + x * density)


class GELUTanh(Node):
    """gelu(x) ≈ ½ x (1 + tanh u), u = √(2/π)(x + 0.044715 x³);
    d gelu = (½ (1 + tanh u) + ½ x (1 - tanh² u) u′) dx, u′ = √(2/π)(1 + 3·0.044715 x²)
           = (σ(2u) + 2 x σ(2u) σ(-2u) u′) dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        inner = x.dtype.type(_SQRT_2_OVER_PI) * (x + x.dtype.type(_GELU_CUBIC) * x * x * x)
        return 0.5 * x * (1 + np.tanh(inner))

    def backward(ctx, grad):
        # ½(1 + tanh u) = σ(2u) and ½(1 - tanh u) = σ(-2u), so 1 - tanh² u = 4 σ(2u) σ(-2u):
        # written so, nothing cancels where tanh saturates (1 + t and 1 - t·t did, in float32).
        (x,) = ctx.saved_tensors
        u = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * (x * x * x))
        lower, upper = Sigmoid.call(2 * u), Sigmoid.call(-2 * u)
        du = _SQRT_2_OVER_PI * (1 + (3 * _GELU_CUBIC) * (x * x))
        return grad * (lower + 2 * x * lower * upper * du)


def _sigmoid_values(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + e⁻ˣ) with e raised only to -|x| (no overflow), and small values kept as
    they are (σ(-40) ≈ 4e-18, where 1 + tanh(x/2) would round to 0)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


class SiLU(Node):
    """silu(x) = x σ(x);  d silu(x) = σ(x) (1 + x (1 - σ(x))) dx"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        with quiet():  # silu(-inf) = -inf · 0 = nan, as torch
            return x * _sigmoid_values(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = Sigmoid.call(x)
        # ±inf · 0 at x = ±inf: nan, as torch
        return grad * (s * (1 + x * (1 - s)))


class Softplus(Node):
    """softplus(x) = log(1 + e^(βx)) / β, and x itself where βx > threshold (torch's switch to
    the linear part, where the two agree to the rounding);  d softplus(x) = σ(βx) dx there, 1 past
    the threshold"""

    elementwise = True

    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x=x)
        scaled = x * x.dtype.type(beta)
        # exp overflows only where βx > threshold > 88 (a threshold of the caller's): there
        # the result is x anyway. β = 0 gives log 2 / 0 = inf, as torch.
        with quiet():
            curve = np.log1p(np.exp(scaled)) / x.dtype.type(beta)
        return np.where(scaled > threshold, x, curve)

    def backward(ctx, grad):
        # σ(βx) is torch's e^(βx) / (e^(βx) + 1), written so that it never divides inf by inf
        # (torch's nan for 88 < βx ≤ a large threshold) and differentiates again stably.
        (x,), beta, threshold = ctx.saved_tensors, ctx.attrs["beta"], ctx.attrs["threshold"]
        linear = np.asarray(x) * beta > threshold  # a constant mask
        return Where.call(grad, grad * Sigmoid.call(beta * x), condition=linear)


class LogSigmoid(Node):
    """log σ(x) = min(x, 0) - log(1 + e^-|x|);  d log σ(x) = σ(-x) dx

    The form with -|x| never exponentiates a positive number: stable for any x (log σ(-1e4) is
    -1e4, not log 0 = -inf; log σ(1e4) is -0, not log 1 rounded).
    """

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))

    def backward(ctx, grad):
        # σ(-x), with Sigmoid's stable form: accurate in both tails, where 1 - σ(x) would
        # round to 0.
        (x,) = ctx.saved_tensors
        return grad * Sigmoid.call(-x)


# ---- the functional forms (torch.nn.functional's names and signatures) ----------------------
def _float_input(op: str, input) -> Tensor:
    return check_floating(op, "input", tensor_arg(op, "input", input))


def _run(op: str, fn: type, input: Tensor, inplace: bool, **attrs) -> Tensor:
    """The op out of place, or written into ``input`` (``inplace=True``, as torch's ``op_``)."""
    if check_flag(op, "inplace", inplace):
        return input._inplace(fn, **attrs)
    return fn.apply(input, **attrs)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope · x."""
    input = _float_input("leaky_relu", input)
    slope = check_number("leaky_relu", "negative_slope", negative_slope)
    return _run("leaky_relu", LeakyReLU, input, inplace, negative_slope=slope)


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else α (eˣ - 1)."""
    input = _float_input("elu", input)
    return _run("elu", ELU, input, inplace, alpha=check_number("elu", "alpha", alpha))


def gelu(input, approximate: str = "none") -> Tensor:
    """x Φ(x) (``approximate='none'``) or its tanh approximation (``approximate='tanh'``)."""
    check_choice("gelu", "approximate", approximate, ("none", "tanh"), error=RuntimeError)
    input = _float_input("gelu", input)
    return (GELU if approximate == "none" else GELUTanh).apply(input)


def silu(input, inplace: bool = False) -> Tensor:
    """x σ(x) (also called swish)."""
    return _run("silu", SiLU, _float_input("silu", input), inplace)


def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^(βx)) / β, smooth relu; x itself where βx > threshold."""
    input = _float_input("softplus", input)
    return Softplus.apply(input, beta=check_number("softplus", "beta", beta),
                          threshold=check_number("softplus", "threshold", threshold))


def logsigmoid(input) -> Tensor:
    """log σ(x) = -softplus(-x), computed without overflow for any x."""
    return LogSigmoid.apply(_float_input("logsigmoid", input))


def erf(input) -> Tensor:
    """The error function, 2/√π ∫₀ˣ e^(-t²) dt."""
    return Erf.apply(_float_input("erf", input))
