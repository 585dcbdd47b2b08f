"""Activations beyond relu, sigmoid and tanh (those are in elementwise.py): leaky ReLU, ELU (and
its scaled forms SELU and CELU), GELU (exact and tanh-approximated), SiLU, softplus, log-sigmoid,
the piecewise-linear hardtanh (relu6), hardswish and hardsigmoid, mish, softsign, the error
function GELU rests on; and the shrinkages and gates: softshrink, hardshrink, tanhshrink,
threshold, prelu (a learned slope: a second input with its own gradient), rrelu (random
slopes, drawn from the package's generator in training), glu and softmin.

Each Function saves what PyTorch saves — the input, ``ctx.save_for_backward(x=x)`` — and
writes its backward with operators and ``Node.call`` (``Exp``, ``Tanh``, ``Erf``...), so that
under ``create_graph=True`` the backward is recorded and differentiates again, as all of these
do in torch (but hardsigmoid, whose second derivative torch lacks). Which side of a kink an
element lies on is read from the saved input's values (``np.asarray``): a constant mask, with
no derivative of its own.
"""
import math

import numpy as np

from ..fast.quiet import quiet
from ..engine import Node, Tensor, unbroadcast
from ..random import default_generator
from ..args import check_choice, check_flag, check_floating, check_number, tensor_arg, warn
from .elementwise import Exp, Sigmoid, Tanh, Where
from .join import chunk
from .movement import wrap_dim

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
    out[far] = np.sign(x[far]) * (1 - erfc_fraction(np.abs(x[far])))
    return out


def erfc_fraction(a: np.ndarray, depth: int = _FRACTION_DEPTH) -> np.ndarray:
    """erfc(a) for a ≥ 0 by its continued fraction, ``depth`` levels evaluated from the bottom
    (accurate relative to erfc itself, so also far out where 1 - erf(a) rounds to 0)."""
    fraction = a.copy()
    for k in range(depth, 0, -1):
        fraction = a + (k / 2) / fraction
    with quiet():  # (a² overflows to inf far out: e^-inf = 0, and 0 / inf = 0 at a = inf)
        return np.exp(-a * a) / (math.sqrt(math.pi) * fraction)


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
    """d elu(x) = (1 if x > 0 else α eˣ) dx — with torch's two scales (SELU and CELU set them),
    elu(x) = λ x for x > 0, else λ α (e^(κx) - 1), and d elu(x) = (λ if x > 0 else λ α κ e^(κx)) dx"""

    elementwise = True

    def forward(ctx, x, alpha, scale=1.0, input_scale=1.0):
        ctx.save_for_backward(x=x)
        negative = np.minimum(0, x)  # (in this order: elu(-0) is -0, as torch's)
        if input_scale != 1:
            negative = negative * x.dtype.type(input_scale)
        positive = x if scale == 1 else x * x.dtype.type(scale)
        return np.where(x > 0, positive, x.dtype.type(alpha * scale) * np.expm1(negative))

    def backward(ctx, grad):
        (x,), attrs = ctx.saved_tensors, ctx.attrs
        alpha, scale, input_scale = attrs["alpha"], attrs.get("scale", 1.0), ctx.slope_scale()
        values = np.asarray(x)
        # At 0 the slope is λακ, a constant: torch's second derivative is 0 there. The
        # exponential is taken of the negative side only (0 elsewhere): a large positive x would
        # overflow exp, and a NaN — "positive", slope λ, as in torch — would leak through 0 · NaN,
        # into the second derivative too. So: selections (Where), never products with masks.
        negative = values < 0
        exponent = Where.call(x, np.zeros((), x.dtype), condition=negative)
        if input_scale != 1:
            exponent = input_scale * exponent
        constant = np.where(values == 0, alpha * scale * input_scale, scale).astype(x.dtype)
        return grad * Where.call((alpha * scale * input_scale) * Exp.call(exponent), constant,
                                 condition=negative)

    def slope_scale(self) -> float:
        """κ as backward takes it."""
        return self.attrs.get("input_scale", 1.0)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: at 0, unless the
        negative side's slope λακ there equals the positive side's λ (gradcheck's kink report
        asks, kinks.py)."""
        attrs = self.attrs
        scale = attrs.get("scale", 1.0)
        slope = attrs["alpha"] * scale * attrs.get("input_scale", 1.0)
        return [(0.0, f"the negative side's slope {slope:g}, as PyTorch")] if slope != scale else []


class SELU(ELU):
    """selu(x) = λ x for x > 0, else λ α (eˣ - 1), with the fixed α ≈ 1.6733, λ ≈ 1.0507 of
    Klambauer et al.;  d selu(x) = (λ if x > 0 else λ α eˣ) dx"""


class CELU(ELU):
    """celu(x) = x for x > 0, else α (e^(x/α) - 1);  d celu(x) = (1 if x > 0 else e^(x/α)) dx —
    continuous in slope at 0 for every α"""

    def slope_scale(self) -> float:
        """κ = 1/α as torch's CeluBackward takes it: of α rounded to float32 (derivatives.yaml,
        ``1.0/alpha.toFloat()``), in float64 too — a slope 3e-7 off e^(x/α) for α = 0.3."""
        return 1 / float(np.float32(self.attrs["alpha"]))

    def kink_points(self) -> list:
        """None: both sides' slope is 1 at 0 (α · 1/α, which may round to 1 - 1e-16)."""
        return []


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
        scaled = np.asarray(x) * beta
        linear = scaled > threshold  # a constant mask
        at_threshold = scaled == threshold
        if at_threshold.any():
            # Exactly at the switch the slope is σ(βx), but torch's second derivative is 0
            # there (its softplus_double_backward takes βx < threshold): x enters as a constant
            x = Where.call(x, np.asarray(x), condition=~at_threshold)
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


class Hardtanh(Node):
    """hardtanh(x) = min_val below min_val, max_val above max_val, else x;
    d hardtanh(x) = [min_val < x < max_val] dx — 0 at the bounds themselves, as torch's (where
    clamp's slope is 1)"""

    elementwise = True

    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward(x=x)
        low, high = _bounds_in(x.dtype, min_val, max_val)
        # Comparisons, so that x itself is kept at a bound (hardtanh(-0) is -0 with min_val 0)
        # and a NaN stays NaN; max_val last, so that it wins where min_val > max_val (only
        # hardtanh_ lets that through), as torch's.
        raised = np.where(x < low, low, x)
        return np.where(raised > high, high, raised)

    def backward(ctx, grad):
        (x,), attrs = ctx.saved_tensors, ctx.attrs
        values = np.asarray(x)
        low, high = _bounds_in(values.dtype, attrs["min_val"], attrs["max_val"])
        inside = (values > low) & (values < high)  # (a NaN is not)
        # A selection of grad: differentiable in grad (torch's double backward), constant in x
        return Where.call(grad, np.zeros((), grad.dtype), condition=inside)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps: at each bound
        (gradcheck's kink report asks, kinks.py)."""
        return [(self.attrs[bound], "slope 0 at the bound itself, as PyTorch")
                for bound in ("min_val", "max_val")]


def _bounds_in(dtype, min_val, max_val) -> tuple:
    """The bounds as the input's dtype: an integer input takes them truncated toward 0 (torch
    clamps a Long tensor with hardtanh(x, -1.5, 1.5) to [-1, 1])."""
    if dtype.kind == "f":
        return dtype.type(min_val), dtype.type(max_val)
    return dtype.type(int(min_val)), dtype.type(int(max_val))


class Hardswish(Node):
    """hardswish(x) = x · relu6(x + 3) / 6: 0 for x ≤ -3, x for x ≥ 3, else x (x + 3) / 6;
    d hardswish(x) = (0 if x ≤ -3, x/3 + ½ if -3 < x < 3, else 1) dx — torch's choice at the
    kinks, and 1 at a NaN; the 0 and the 1 are chosen, not multiplied (an inf or nan arriving
    below -3 gives 0)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        three, six = x.dtype.type(3), x.dtype.type(6)
        with quiet():  # hardswish(-inf) = -inf · 0 = nan, as torch
            return x * np.minimum(np.maximum(x + three, 0), six) / six

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = np.asarray(x)
        inside = (values > -3) & (values < 3)
        # Outside (-3, 3) the slope is a constant (1 from 3 up, and at a NaN), so the second
        # derivative is 1/3 strictly inside and 0 at the kinks, as torch's; from -3 down the
        # gradient is 0, chosen as torch's, whatever arrives there (inf · 0 would be nan)
        slope = Where.call(x / 3 + 0.5, np.ones((), grad.dtype), condition=inside)
        return Where.call(np.zeros((), grad.dtype), grad * slope, condition=values <= -3)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink
        report asks, kinks.py)."""
        return [(-3.0, "the slope below, 0, as PyTorch"), (3.0, "the slope above, 1, as PyTorch")]


# torch's hardsigmoid_backward takes its slope 1/6 as a float32 constant, in float64 too
_ONE_SIXTH = float(np.float32(1 / 6))


class Hardsigmoid(Node):
    """hardsigmoid(x) = relu6(x + 3) / 6;  d hardsigmoid(x) = [-3 < x < 3] dx / 6 (0 at the
    kinks, as torch's)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        six = x.dtype.type(6)
        return np.minimum(np.maximum(x + x.dtype.type(3), 0), six) / six

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = np.asarray(x)
        inside = (values > -3) & (values < 3)
        return Where.call(grad * _ONE_SIXTH, np.zeros((), grad.dtype), condition=inside)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink
        report asks, kinks.py)."""
        return [(-3.0, "slope 0 at the kink itself, as PyTorch"),
                (3.0, "slope 0 at the kink itself, as PyTorch")]


class Mish(Node):
    """mish(x) = x tanh(softplus(x));  d mish(x) = (t + x σ(x) (1 - t²)) dx, t = tanh(softplus(x))
    (softplus' = σ)"""

    elementwise = True

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        softplus = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))  # never overflows
        with quiet():  # mish(-inf) = -inf · 0 = nan, as torch
            return x * np.tanh(softplus)

    def backward(ctx, grad):
        # softplus(x) = -log σ(-x), LogSigmoid's stable form: no e^x to overflow (torch's
        # log1p(eˣ) does past 88 in float32, where its first derivative still comes out 1)
        (x,) = ctx.saved_tensors
        t = Tanh.call(-LogSigmoid.call(-x))
        return grad * (t + x * Sigmoid.call(x) * (1 - t * t))  # ±inf · 0 = nan at ±inf, as torch


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


# SELU's constants (Klambauer et al., "Self-Normalizing Neural Networks"), as torch's
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace: bool = False) -> Tensor:
    """λ x where x > 0, else λ α (eˣ - 1), with α ≈ 1.6733 and λ ≈ 1.0507."""
    input = _float_input("selu", input)
    return _run("selu", SELU, input, inplace, alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0)


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else α (e^(x/α) - 1)."""
    input = _float_input("celu", input)
    alpha = check_number("celu", "alpha", alpha)
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha cannot be 0 for CELU (it divides "
                           "the input), got alpha=0.0")
    return _run("celu", CELU, input, inplace, alpha=alpha, scale=1.0, input_scale=1 / alpha)


def selu_(input) -> Tensor:
    """selu written into ``input``."""
    return selu(input, inplace=True)


def celu_(input, alpha: float = 1.0) -> Tensor:
    """celu written into ``input``."""
    return celu(input, alpha, inplace=True)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val], with slope 0 at the bounds themselves."""
    input = tensor_arg("hardtanh", "input", input)
    low, high = (check_number("hardtanh", name, value) for name, value in
                 (("min_val", min_val), ("max_val", max_val)))
    if low > high:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val, got "
                         f"min_val={min_val}, max_val={max_val}")
    return _hardtanh("hardtanh", input, low, high, inplace)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """hardtanh written into ``input`` (torch's builtin: min_val > max_val is not checked,
    every element becomes max_val)."""
    input = tensor_arg("hardtanh_", "input", input)
    low, high = (check_number("hardtanh_", name, value) for name, value in
                 (("min_val", min_val), ("max_val", max_val)))
    return _hardtanh("hardtanh_", input, low, high, True)


def relu6(input, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh(x, 0, 6)."""
    return _hardtanh("relu6", tensor_arg("relu6", "input", input), 0.0, 6.0, inplace)


def _hardtanh(op: str, input: Tensor, low: float, high: float, inplace) -> Tensor:
    """hardtanh on a float or integer tensor (as torch; bool refused), in place or not."""
    kind = input._data.dtype.kind
    if kind == "b":
        raise RuntimeError(f"{op}: Bool inputs not supported for hardtanh; convert the input "
                           f"with .float() or .int()")
    if kind == "u" and (low < 0 or high < 0):
        raise RuntimeError(f"{op}: cannot do hardtanh on an unsigned type with negative limits "
                           f"(min_val={low:g}, max_val={high:g}, dtype {input._data.dtype})")
    return _run(op, Hardtanh, input, inplace, min_val=low, max_val=high)


def hardswish(input, inplace: bool = False) -> Tensor:
    """x · relu6(x + 3) / 6: 0 below -3, x above 3."""
    return _run("hardswish", Hardswish, _float_input("hardswish", input), inplace)


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6: 0 below -3, 1 above 3."""
    return _run("hardsigmoid", Hardsigmoid, _float_input("hardsigmoid", input), inplace)


def mish(input, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x))."""
    return _run("mish", Mish, _float_input("mish", input), inplace)


def softsign(input) -> Tensor:
    """x / (1 + |x|) — composed of abs, add and div, as torch's (so its gradient, its second
    derivative and its nan at ±inf = inf/inf are torch's too)."""
    input = tensor_arg("softsign", "input", input)
    return input / (input.abs() + 1)


def erf(input) -> Tensor:
    """The error function, 2/√π ∫₀ˣ e^(-t²) dt."""
    return Erf.apply(_float_input("erf", input))


# ---- shrinkage, thresholds, gates and learned or random slopes ------------------------------
class Softshrink(Node):
    """softshrink(x) = x - λ above λ, x + λ below -λ, else 0;  d softshrink(x) = [|x| > λ] dx
    (0 at ±λ themselves, as torch's)"""

    elementwise = True

    def forward(ctx, x, lambd):
        ctx.save_for_backward(x=x)
        bound = x.dtype.type(lambd)
        # A NaN is neither above nor below: it falls through to x itself, as torch's
        shrunk = np.where(x > bound, x - bound, np.where(x < -bound, x + bound, x))
        return np.where(np.abs(x) <= bound, np.copysign(x.dtype.type(0), x), shrunk)  # (-0, x < 0)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = np.asarray(x)
        return Where.call(np.zeros((), grad.dtype), grad,
                          condition=np.abs(values) <= values.dtype.type(ctx.attrs["lambd"]))

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink
        report asks, kinks.py)."""
        lambd = self.attrs["lambd"]
        return [(-lambd, "slope 0 at the kink itself, as PyTorch"),
                (lambd, "slope 0 at the kink itself, as PyTorch")]


class Hardshrink(Node):
    """hardshrink(x) = x where |x| > λ, else 0;  d hardshrink(x) = [|x| > λ] dx (the output
    jumps at ±λ; 0 there, as torch's)"""

    elementwise = True

    def forward(ctx, x, lambd):
        ctx.save_for_backward(x=x)
        bound = x.dtype.type(lambd)
        return np.where((x >= -bound) & (x <= bound), x.dtype.type(0), x)  # (NaN stays NaN)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = np.asarray(x)
        bound = values.dtype.type(ctx.attrs["lambd"])
        return Where.call(np.zeros((), grad.dtype), grad,
                          condition=(values >= -bound) & (values <= bound))

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the output jumps (gradcheck's kink
        report asks, kinks.py)."""
        lambd = self.attrs["lambd"]
        return [(-lambd, "slope 0 at the jump itself, as PyTorch"),
                (lambd, "slope 0 at the jump itself, as PyTorch")]


class Threshold(Node):
    """threshold(x) = x where x > threshold, else value;  d threshold(x) = [x > threshold] dx
    (0 at the threshold itself; a NaN passes through with its gradient, as torch's)"""

    elementwise = True

    def forward(ctx, x, threshold, value):
        ctx.save_for_backward(x=x)
        return np.where(x <= _scalar_as(x.dtype, threshold), _scalar_as(x.dtype, value), x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = np.asarray(x)
        below = values <= _scalar_as(values.dtype, ctx.attrs["threshold"])
        return Where.call(np.zeros((), grad.dtype), grad, condition=below)

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope (and, unless value equals
        it, the output) jumps (gradcheck's kink report asks, kinks.py)."""
        return [(self.attrs["threshold"], "slope 0 at the threshold itself, as PyTorch")]


def _scalar_as(dtype, value):
    """A Python number as ``dtype`` (an integer input takes it truncated toward 0, as torch)."""
    return dtype.type(value if dtype.kind == "f" else int(value))


def _check_fits(op: str, name: str, value: float, dtype) -> float:
    """A number that ``dtype`` holds (inf and nan do, in a float), else torch's RuntimeError."""
    if dtype.kind == "f":
        fits = not np.isfinite(value) or abs(value) <= float(np.finfo(dtype).max)
    else:
        fits = np.isfinite(value) and np.iinfo(dtype).min <= int(value) <= np.iinfo(dtype).max
    if not fits:
        raise RuntimeError(f"{op}: {name}={value}: value cannot be converted to type {dtype} "
                           f"(the input's dtype) without overflow")
    return value


class PReLU(Node):
    """prelu(x, w) = x where x > 0, else w x, w broadcast against x (prelu's one slope, or one
    per channel shaped (1, C, 1, ...));  ∂/∂x = (1 if x > 0 else w),
    ∂/∂w = Σ (0 if x > 0 else x) over the axes w was broadcast along"""

    elementwise = True

    def forward(ctx, x, weight):
        ctx.save_for_backward(x=x, weight=weight)
        return np.where(x > 0, x, weight * x)

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        positive = np.asarray(x) > 0  # a constant mask: the second derivative in x is 0
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = Where.call(grad, grad * weight, condition=positive)
        if ctx.needs_input_grad[1]:
            per_element = Where.call(np.zeros((), grad.dtype), grad * x, condition=positive)
            grad_w = unbroadcast(per_element, weight.shape)
        return grad_x, grad_w

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink
        report asks, kinks.py)."""
        return [(0.0, "the negative side's slope, the weight, as PyTorch")]


class RReLU(Node):
    """rrelu(x) = x where x > 0, else a x, each a drawn from U(lower, upper) when the op runs;
    d rrelu(x) = (1 if x > 0 else a) dx (the drawn slopes are constants)"""

    elementwise = True

    def forward(ctx, x, lower, upper, generator):
        slopes = generator.uniform(lower, upper, size=x.shape).astype(x.dtype)
        slopes[~(x <= 0)] = 1  # (a NaN keeps slope 1, as torch's)
        ctx.save_for_backward(slopes=slopes)
        return x * slopes

    def backward(ctx, grad):
        (slopes,) = ctx.saved_tensors
        return grad * slopes

    def kink_points(self) -> list:
        """(input value, what backward takes there) where the slope jumps (gradcheck's kink
        report asks, kinks.py)."""
        return [(0.0, "the slope drawn for it, as PyTorch")]


def softshrink(input, lambd: float = 0.5) -> Tensor:
    """x - λ above λ, x + λ below -λ, 0 in between."""
    input = _float_input("softshrink", input)
    lambd = check_number("softshrink", "lambd", lambd)
    if not 0 <= lambd <= np.finfo(input._data.dtype).max:
        raise RuntimeError(f"softshrink: lambda must be in range [0, "
                           f"{np.finfo(input._data.dtype).max:g}] for input dtype "
                           f"{input._data.dtype}, but found {lambd}")
    return Softshrink.apply(input, lambd=lambd)


def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """x where |x| > λ, else 0 (a negative λ keeps every x, as torch's)."""
    input = _float_input("hardshrink", input)
    lambd = check_number("hardshrink", "lambd", lambd)
    return Hardshrink.apply(input, lambd=_check_fits("hardshrink", "lambd", lambd,
                                                     input._data.dtype))


def tanhshrink(input) -> Tensor:
    """x - tanh(x) — composed, as torch's (an integer input gives float32)."""
    input = tensor_arg("tanhshrink", "input", input)
    if input._data.dtype.kind != "f":
        input = input.float()
    return input - input.tanh()


def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value (integer inputs too, as torch's)."""
    return _threshold("threshold", input, threshold, value, inplace)


def threshold_(input, threshold: float, value: float) -> Tensor:
    """threshold written into ``input``."""
    return _threshold("threshold_", input, threshold, value, True)


def _threshold(op: str, input, threshold: float, value: float, inplace) -> Tensor:
    input = tensor_arg(op, "input", input)
    if input._data.dtype.kind not in "iuf":
        raise NotImplementedError(f"{op}: input must be a number tensor, got dtype "
                                  f"{input._data.dtype} (\"threshold_cpu\" not implemented for "
                                  f"'Bool')")
    dtype = input._data.dtype
    threshold, value = (_check_fits(op, name, check_number(op, name, number), dtype)
                        for name, number in (("threshold", threshold), ("value", value)))
    return _run(op, Threshold, input, inplace, threshold=threshold, value=value)


def glu(input, dim: int = -1) -> Tensor:
    """a · σ(b), a and b the two halves of ``input`` along ``dim`` — composed of sigmoid and a
    product, whose first and second derivatives are torch's."""
    input = tensor_arg("glu", "input", input)
    if input.ndim == 0:
        raise RuntimeError("glu: glu does not support scalars because halving size must be even "
                           "(input is 0-dimensional)")
    input = _float_input("glu", input)
    dim = wrap_dim("glu", dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]} (input shape {list(input.shape)})")
    first, second = chunk(input, 2, dim)
    return first * second.sigmoid()


def prelu(input, weight) -> Tensor:
    """x where x > 0, else weight · x: weight holds one slope, or one per channel (dim 1)."""
    input = _float_input("prelu", input)
    weight = tensor_arg("prelu", "weight", weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = {channels}.")
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype} input and "
                           f"{weight.dtype} weight; convert the weight with "
                           f"weight.to(input.dtype)")
    if weight.numel() == 1:
        shape = (1,) * input.ndim
    else:  # one slope per channel, dim 1
        shape = (1, channels) + (1,) * (input.ndim - 2)
    return PReLU.apply(input, weight.reshape(shape))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """x where x > 0, else a x: in training a drawn from U(lower, upper) per element (the
    package's generator, ``tinygrad_pool.manual_seed``), else a = (lower + upper) / 2."""
    input = _float_input("rrelu", input)
    lower, upper = (check_number("rrelu", name, value)
                    for name, value in (("lower", lower), ("upper", upper)))
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper bound, "
                           f"got lower={lower}, upper={upper}")
    if not check_flag("rrelu", "training", training):
        return _run("rrelu", LeakyReLU, input, inplace, negative_slope=(lower + upper) / 2)
    return _run("rrelu", RReLU, input, inplace, lower=lower, upper=upper,
                generator=default_generator())


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """rrelu written into ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``; ``dtype``: the input cast to it first, as torch's. (Through
    Tensor.softmax: ops/loss.py, softmax's home, imports this module.)"""
    input = tensor_arg("softmin", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    input = _float_input("softmin", input)
    if dim is None:  # torch's legacy implicit dim, softmax's rule (ops/loss.py), with its warning
        warn("Implicit dimension choice for softmin has been deprecated. Change the call to "
             "include dim=X as an argument.")
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return (-input).softmax(dim)
