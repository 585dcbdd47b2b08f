"""Numerics as torch's: stable activations and losses at |x| up to 1e4 (forward, backward and the
second derivative), torch's values at the edges (pow at 0, sign of NaN, slopes of log and sqrt
at 0), NaN through max/min and max pooling, float32 reductions as accurate as torch's — and no
NumPy RuntimeWarning where torch is silent.

float32 results are held to "no worse than torch": their error against torch's float64 result
may be at most twice torch's own float32 error plus a few ulps (torch is not always the more
accurate one: its σ(20) - 1 is 0 in float32, ours -2.06e-9). NaNs and infinities must be
exactly torch's.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, Tensor, tensor
from tinygrad_pool.nn import activation as nn_act
from tinygrad_pool.ops import activation as A
from tinygrad_pool.ops import loss as L

from helpers import check_grad

DTYPES = (np.float32, np.float64)
# Up to 1e4 either side, with the places where formulas switch (softplus' threshold 20, exp's
# float32 overflow near 88) and the tails where naive forms cancel or overflow.
WIDE = np.array([-1e4, -1e3, -100, -89, -30, -20, -17, -5, -1, -1e-3, -0.0, 0.0, 1e-3, 1, 5, 17,
                 19.5, 20.5, 30, 89, 100, 1e3, 1e4])

# name -> (ours, torch's), each a function of one input tensor
STABLE = {
    "sigmoid": (lambda x: x.sigmoid(), lambda t, x: x.sigmoid()),
    "tanh": (lambda x: x.tanh(), lambda t, x: x.tanh()),
    "softplus": (lambda x: A.softplus(x), lambda t, x: t.nn.functional.softplus(x)),
    "softplus_beta2_threshold5": (lambda x: A.softplus(x, 2.0, 5.0),
                                  lambda t, x: t.nn.functional.softplus(x, 2.0, 5.0)),
    "softplus_beta0.5_threshold30": (lambda x: A.softplus(x, 0.5, 30.0),
                                     lambda t, x: t.nn.functional.softplus(x, 0.5, 30.0)),
    "softplus_negative_beta": (lambda x: A.softplus(x, -1.5, 3.0),
                               lambda t, x: t.nn.functional.softplus(x, -1.5, 3.0)),
    "logsigmoid": (lambda x: A.logsigmoid(x), lambda t, x: t.nn.functional.logsigmoid(x)),
    "gelu": (lambda x: A.gelu(x), lambda t, x: t.nn.functional.gelu(x)),
    "gelu_tanh": (lambda x: A.gelu(x, approximate="tanh"),
                  lambda t, x: t.nn.functional.gelu(x, approximate="tanh")),
    "silu": (lambda x: A.silu(x), lambda t, x: t.nn.functional.silu(x)),
    "elu": (lambda x: A.elu(x), lambda t, x: t.nn.functional.elu(x)),
    "elu_alpha2": (lambda x: A.elu(x, 2.0), lambda t, x: t.nn.functional.elu(x, 2.0)),
}


def _bce_logits(target, weight=None, pos_weight=None):
    """binary_cross_entropy_with_logits against a constant target, per element, both sides."""
    def ours(x):
        as_ours = (lambda a: None if a is None else tensor(np.full(x.shape, a, x.dtype)))
        return F.binary_cross_entropy_with_logits(
            x, as_ours(target), weight=as_ours(weight), pos_weight=as_ours(pos_weight),
            reduction="none")

    def theirs(t, x):
        as_torch = (lambda a: None if a is None else t.full(x.shape, a, dtype=x.dtype))
        return t.nn.functional.binary_cross_entropy_with_logits(
            x, as_torch(target), weight=as_torch(weight), pos_weight=as_torch(pos_weight),
            reduction="none")
    return ours, theirs


def _bce_logits_exact(target, weight=None, pos_weight=None):
    """Value, slope and second derivative of w (-p t log σ(x) - (1 - t) log σ(-x)) in float64,
    each from stable pieces — torch's own float64 result is no reference in the tails: its
    (1 - t) x - log σ(x) is -100 + 100 = 0 at x = -100, where the loss is 3.7e-44."""
    w, p, t = (1.0 if weight is None else weight), (1.0 if pos_weight is None else pos_weight), target

    def exact(x):
        softplus_neg, softplus_pos = np.logaddexp(0, -x), np.logaddexp(0, x)
        sig_pos, sig_neg = np.exp(-softplus_neg), np.exp(-softplus_pos)  # σ(x), σ(-x)
        return (w * (p * t * softplus_neg + (1 - t) * softplus_pos),
                w * (-p * t * sig_neg + (1 - t) * sig_pos),
                w * (p * t + 1 - t) * sig_pos * sig_neg)
    return exact


STABLE.update({
    "bce_logits_t1": _bce_logits(1.0) + (_bce_logits_exact(1.0),),
    "bce_logits_t0": _bce_logits(0.0) + (_bce_logits_exact(0.0),),
    "bce_logits_t0.3_weighted": _bce_logits(0.3, weight=0.7, pos_weight=3.0)
    + (_bce_logits_exact(0.3, weight=0.7, pos_weight=3.0),),
    "bce_logits_t1_pos_weight": _bce_logits(1.0, pos_weight=0.25)
    + (_bce_logits_exact(1.0, pos_weight=0.25),),
})


# ---- helpers ----------------------------------------------------------------------------------
def _ulp(values: np.ndarray, dtype) -> np.ndarray:
    return np.spacing(np.abs(values).astype(dtype)).astype(np.float64)


def assert_no_worse_than_torch(ours, theirs, exact, dtype, what, noise=0.0):
    """Non-finite results exactly torch's; finite ones within 2× torch's error (against the
    float64 ``exact``) plus 4 ulps, plus ``noise`` (an absolute allowance, for quantities that
    are differences of much larger terms, where both frameworks give rounding noise)."""
    ours, theirs, exact = (np.asarray(a, dtype=np.float64) for a in (ours, theirs, exact))
    special = ~np.isfinite(theirs)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=f"{what}: nan/inf")
    error, torch_error = np.abs(ours - exact), np.abs(theirs - exact)
    allowed = 2 * torch_error + 4 * _ulp(exact, dtype) + noise
    bad = ~special & ~(error <= allowed)
    assert not bad.any(), (f"{what}: {ours[bad]} where torch gives {theirs[bad]} and float64 "
                           f"{exact[bad]}")


def assert_close(ours, theirs, rtol, noise, what):
    """Non-finite results exactly torch's, finite ones within rtol, plus ``noise`` (absolute,
    per element)."""
    special = ~np.isfinite(theirs)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=f"{what}: nan/inf")
    bad = ~special & ~(np.abs(ours - theirs) <= rtol * np.abs(theirs) + noise)
    assert not bad.any(), f"{what}: {ours[bad]} where torch gives {theirs[bad]}"


def first_and_second_derivatives(fn, x: Tensor):
    """(output, d out/dx, d/dx Σ d out/dx) for an elementwise fn, via create_graph."""
    out = fn(x)
    (grad,) = autograd.grad(out, [x], tensor(np.ones(out.shape, x.dtype)), create_graph=True)
    (second,) = autograd.grad(grad.sum(), [x])
    return out.numpy(), grad.numpy(), second.numpy()


def torch_derivatives(torch, fn, array):
    x = torch.tensor(array, requires_grad=True)
    out = fn(torch, x)
    (grad,) = torch.autograd.grad(out, [x], torch.ones_like(out), create_graph=True)
    (second,) = torch.autograd.grad(grad.sum(), [x])
    return out.detach().numpy(), grad.detach().numpy(), second.numpy()


def silently(fn, *args):
    """fn(*args) with every warning an error: NumPy's RuntimeWarnings must not escape."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


# ---- 1. softplus and logsigmoid ---------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(STABLE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_stable_at_large_magnitudes(torch, name, dtype):
    """Value, slope and second derivative at |x| up to 1e4: no overflow, no cancellation — as
    accurate as torch's in float32, equal to it in float64 (where torch's float64 is exact) —
    and no warning."""
    ours_fn, torch_fn, *exact_fn = STABLE[name]
    x = tensor(WIDE.astype(dtype), requires_grad=True)
    ours = silently(first_and_second_derivatives, ours_fn, x)
    theirs = torch_derivatives(torch, torch_fn, WIDE.astype(dtype))
    exact = exact_fn[0](WIDE) if exact_fn else torch_derivatives(torch, torch_fn, WIDE)
    for what, a, b, c in zip(("value", "slope", "second derivative"), ours, theirs, exact):
        assert a.dtype == dtype
        # a second derivative is a difference of terms of order 1 (and of x, for silu/gelu)
        noise = 8 * np.finfo(dtype).eps * (1 + np.abs(WIDE)) if what == "second derivative" else 0
        if dtype == np.float64 and not exact_fn:
            # gelu_tanh: torch's slope has 1 - tanh² u, which cancels where tanh u nears ±1 (at
            # x = -5 in its 10th digit; from x = -17 on it is 0, ours the true 1e-161)
            rtol, floor = (1e-8, 1e-150) if name == "gelu_tanh" else (1e-12, 0)
            assert_close(a, b, rtol, noise + floor, f"{name} {what}")
        else:
            assert_no_worse_than_torch(a, b, c, dtype, f"{name} {what}", noise)


def test_softplus_and_logsigmoid_have_the_tails_right():
    """The stable forms keep what the naive ones lose: log σ(-1e4) = -1e4 (not log 0),
    softplus(-1e4) = 0 (not -inf), σ(-x) in the slope of log σ at x = 30 (not 1 - σ = 0)."""
    x = tensor(np.array([-1e4, 30.0, 1e4], np.float32), requires_grad=True)
    out = A.logsigmoid(x)
    np.testing.assert_array_equal(out.numpy()[[0, 2]], [-1e4, 0])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, np.exp(-30.0), 0], rtol=1e-6)
    np.testing.assert_array_equal(A.softplus(x).numpy(), [0, 30, 1e4])


@settings(max_examples=25, deadline=None)
@given(beta=st.sampled_from([0.5, 1.0, 3.0, -2.0]), threshold=st.sampled_from([1.0, 20.0, 50.0]),
       seed=st.integers(0, 2**16))
def test_softplus_gradients_by_finite_differences(beta, threshold, seed):
    # away from the threshold, where softplus switches from one formula to the other
    x = np.random.default_rng(seed).uniform(-6, 6, 5)
    x = x[np.abs(beta * x - threshold) > 1e-3]
    check_grad(lambda t: A.softplus(t, beta, threshold), x)
    check_grad(lambda t: A.logsigmoid(t), x)


@pytest.mark.parametrize("fn", [lambda t: A.softplus(t, 2.0, 5.0), A.logsigmoid],
                         ids=["softplus", "logsigmoid"])
def test_softplus_and_logsigmoid_second_derivatives_by_finite_differences(fn):
    x, eps = np.array([-3.0, -0.4, 0.2, 2.4]), 1e-6  # (not at β x = threshold, 2.5)

    def slope(values):
        return first_and_second_derivatives(fn, tensor(values, requires_grad=True))[1]
    second = first_and_second_derivatives(fn, tensor(x, requires_grad=True))[2]
    np.testing.assert_allclose(second, (slope(x + eps) - slope(x - eps)) / (2 * eps), rtol=1e-6)


def test_modules_and_their_reprs(torch):
    pairs = [(nn_act.Softplus(), torch.nn.Softplus()),
             (nn_act.Softplus(beta=2, threshold=10.0), torch.nn.Softplus(beta=2, threshold=10.0)),
             (nn_act.Softplus(beta=2.5), torch.nn.Softplus(beta=2.5)),
             (nn_act.LogSigmoid(), torch.nn.LogSigmoid())]
    x = np.linspace(-30, 30, 13, dtype=np.float32)
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=1e-6, atol=1e-7)


# ---- 2. torch's values at the edges, silently -------------------------------------------------
EDGES = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 1e30, 1e4, -1e4])

# name -> (ours, torch's)
ELEMENTWISE = {
    "exp": (lambda x: x.exp(), lambda x: x.exp()),
    "log": (lambda x: x.log(), lambda x: x.log()),
    "log1p": (lambda x: x.log1p(), lambda x: x.log1p()),
    "sqrt": (lambda x: x.sqrt(), lambda x: x.sqrt()),
    "rsqrt": (lambda x: x.rsqrt(), lambda x: x.rsqrt()),
    "reciprocal": (lambda x: 1 / x, lambda x: 1 / x),
    "sin": (lambda x: x.sin(), lambda x: x.sin()),
    "cos": (lambda x: x.cos(), lambda x: x.cos()),
    "arctan": (lambda x: x.arctan(), lambda x: x.arctan()),
    "abs": (lambda x: x.abs(), lambda x: x.abs()),
    "sign": (lambda x: x.sign(), lambda x: x.sign()),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid()),
    "relu": (lambda x: x.relu(), lambda x: x.relu()),
    "clamp": (lambda x: x.clamp(-1, 1), lambda x: x.clamp(-1, 1)),
    "softplus": (lambda x: A.softplus(x), lambda x: __import__("torch").nn.functional.softplus(x)),
    "logsigmoid": (lambda x: A.logsigmoid(x),
                   lambda x: __import__("torch").nn.functional.logsigmoid(x)),
    "elu": (lambda x: A.elu(x), lambda x: __import__("torch").nn.functional.elu(x)),
}
ELEMENTWISE.update({f"pow{p}": ((lambda p: (lambda x: x ** p, lambda x: x ** p))(p))
                    for p in (0, 0.5, 1.5, -0.5, 2.5, 2, 3, -1, -2)})


def _first_derivative(fn, array):
    x = tensor(array, requires_grad=True)
    out = fn(x)
    out.backward(np.ones(out.shape, array.dtype))
    return out.numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_slopes_at_the_edges_are_torchs(torch, name, dtype):
    """0, -0, ±1, ±inf, nan, tiny, huge: torch's value and slope, nan/inf and signs of zero
    included (torch: sign(nan) = 0 and |x|'s slope at nan 0; x^-½ of -0 is -inf; elu's slope at
    nan 1) — and no NumPy warning on the way."""
    ours_fn, torch_fn = ELEMENTWISE[name]
    # (elu's slope at nan is 1 in torch's scalar kernel, nan in its vectorised float64 one: see
    # test_elu_at_nan)
    array = EDGES[~np.isnan(EDGES)].astype(dtype) if name == "elu" else EDGES.astype(dtype)
    value, slope = silently(_first_derivative, ours_fn, array)
    x = torch.tensor(array, requires_grad=True)
    out = torch_fn(x)
    out.backward(torch.ones_like(out))
    for what, a, b in (("value", value, out.detach().numpy()), ("slope", slope, x.grad.numpy())):
        np.testing.assert_allclose(a, b, rtol=2e-7 if dtype == np.float32 else 1e-15,
                                   err_msg=f"{name} {what}")  # (nan and inf equal: exact)
        zeros = b == 0
        np.testing.assert_array_equal(np.signbit(a[zeros]), np.signbit(b[zeros]),
                                      err_msg=f"{name} {what}: the sign of a zero")


# (exponent 0: our slope is a constant 0, with no graph to differentiate; torch's is a where()
# over x, whose derivative is 0 again)
def test_elu_at_nan(torch):
    """A NaN counts as positive (torch's "x <= 0 ? α eˣ : 1"): value nan, slope 1, second
    derivative 0 — not the nan that α eˣ · 0 would leak in."""
    x = tensor(np.array([np.nan, -1.0]), requires_grad=True)
    value, slope, second = first_and_second_derivatives(lambda t: A.elu(t, 2.0), x)
    theirs = torch_derivatives(torch, lambda t, t_x: t.nn.functional.elu(t_x[:1], 2.0),
                               np.array([np.nan]))  # (one element: torch's scalar kernel)
    np.testing.assert_array_equal([value[0], slope[0], second[0]], [t[0] for t in theirs])
    np.testing.assert_allclose(slope[1], 2 * np.exp(-1.0))


@pytest.mark.parametrize("exponent", [0.5, 1.5, -0.5, 2.5, -1.0, 2.0, 3.0])
def test_pow_second_derivative_at_zero_and_negatives_is_torchs(torch, exponent):
    array = np.array([0.0, -0.0, -1.0, -2.5, 2.0])
    x = tensor(array, requires_grad=True)
    ours = first_and_second_derivatives(lambda t: t ** exponent, x)
    theirs = torch_derivatives(torch, lambda t, t_x: t_x ** exponent, array)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-15)
        np.testing.assert_array_equal(np.signbit(a[b == 0]), np.signbit(b[b == 0]))


def test_pow_with_tensor_exponent_at_zero_base_is_torchs(torch):
    """d(aᵇ)/db at a = 0: 0 where b ≥ 0, as torch; d/da at b = 0: 0 — both orders."""
    base = np.array([0.0, 0.0, 0.0, 2.0, -2.0, 0.0])
    exponent = np.array([0.0, 2.0, -1.0, 0.5, 2.0, 0.5])
    a, b = tensor(base, requires_grad=True), tensor(exponent, requires_grad=True)
    out = silently(lambda: a ** b)
    grads = silently(lambda: autograd.grad(out.sum(), [a, b], create_graph=True))
    with warnings.catch_warnings():  # inf · 0 in Mul's backward: see the xfail below
        warnings.simplefilter("ignore", RuntimeWarning)
        seconds = autograd.grad(sum(g.sum() for g in grads), [a, b])
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (base, exponent))
    tout = ta ** tb
    tgrads = torch.autograd.grad(tout.sum(), [ta, tb], create_graph=True)
    tseconds = torch.autograd.grad(sum(g.sum() for g in tgrads), [ta, tb])
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    for ours, theirs in zip(list(grads) + list(seconds), list(tgrads) + list(tseconds)):
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-14)


@pytest.mark.parametrize("base", [0.0, 2.0])
def test_number_to_a_tensor_power_is_torchs(torch, base):
    exponent = np.array([-1.0, 0.0, 0.5, 3.0])
    x = tensor(exponent, requires_grad=True)
    with warnings.catch_warnings():  # inf · 0 in Mul's backward: see the xfail below
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = first_and_second_derivatives(lambda t: base ** t, x)
    theirs = torch_derivatives(torch, lambda t, t_x: base ** t_x, exponent)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-15)


def test_the_slope_of_the_square_root_of_a_square_at_zero_is_torchs_nan(torch):
    x = tensor(np.array([0.0, 3.0], np.float32), requires_grad=True)
    with warnings.catch_warnings():  # (for now: see the xfail below)
        warnings.simplefilter("ignore", RuntimeWarning)
        ((x * x) ** 0.5).sum().backward()
    t = torch.tensor([0.0, 3.0], requires_grad=True)
    ((t * t) ** 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())  # [nan, 1]


def test_the_square_root_of_a_square_at_zero_backpropagates_silently():
    x = tensor(np.array([0.0, 3.0], np.float32), requires_grad=True)
    silently(lambda: ((x * x) ** 0.5).sum().backward())


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_of_infinities_are_torchs_and_silent(torch, dtype):
    array = np.array([[np.inf, 1.0, 2.0], [-np.inf, np.inf, 0.0], [1.0, 2.0, 3.0]], dtype)
    for name in ("var", "std", "logsumexp", "log_softmax", "mean"):
        def ours(x, name=name):
            return (F.log_softmax(x, 1) if name == "log_softmax" else
                    getattr(x, name)(1) if name != "mean" else x.mean(1))
        theirs = (lambda t, x, name=name: t.log_softmax(x, 1) if name == "log_softmax"
                  else getattr(x, name)(1))
        value, slope = silently(_first_derivative, ours, array)
        x = torch.tensor(array, requires_grad=True)
        out = theirs(torch, x)
        out.backward(torch.ones_like(out))
        np.testing.assert_allclose(value, out.detach().numpy(), rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(slope, x.grad.numpy(), rtol=1e-6, err_msg=name)


def test_mean_of_nothing_is_nan_silently(torch):
    empty = np.zeros((0, 3), np.float32)
    ours = silently(lambda: tensor(empty).mean(0))
    np.testing.assert_array_equal(ours.numpy(), torch.tensor(empty).mean(0).numpy())


# ---- 3. losses at the edges -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_cross_entropy_of_certain_probabilities_is_torchs(torch, dtype):
    """p = 0 or 1: each log clamped at -100 (a loss of 100, not inf), the slope divided by
    max(p (1 - p), 1e-12) — torch's numbers exactly, without a warning."""
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-30], dtype)
    t = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0], dtype)
    for reduction in ("none", "mean"):
        x = tensor(p, requires_grad=True)
        out = silently(lambda: F.binary_cross_entropy(x, tensor(t), reduction=reduction))
        silently(lambda: out.backward(np.ones(out.shape, dtype)))
        tx = torch.tensor(p, requires_grad=True)
        tout = torch.nn.functional.binary_cross_entropy(tx, torch.tensor(t), reduction=reduction)
        tout.backward(torch.ones_like(tout))
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_family_at_plus_minus_1e4(torch, dtype):
    logits = np.array([[1e4, -1e4, 0.0], [1e4, 1e4 - 1, -1e4], [-1e4, -1e4, -1e4 + 2]], dtype)
    labels = np.array([1, 0, 2])
    cases = {
        "log_softmax": (lambda x: F.log_softmax(x, 1), lambda t, x: t.log_softmax(x, 1)),
        "softmax": (lambda x: F.softmax(x, 1), lambda t, x: t.softmax(x, 1)),
        "logsumexp": (lambda x: x.logsumexp(1), lambda t, x: t.logsumexp(x, 1)),
        "cross_entropy": (lambda x: F.cross_entropy(x, tensor(labels), reduction="none"),
                          lambda t, x: t.nn.functional.cross_entropy(
                              x, t.tensor(labels), reduction="none")),
    }
    for name, (ours_fn, torch_fn) in cases.items():
        value, slope = silently(_first_derivative, ours_fn, logits)
        x = torch.tensor(logits, requires_grad=True)
        out = torch_fn(torch, x)
        out.backward(torch.ones_like(out))
        assert np.isfinite(value).all() and np.isfinite(slope).all()
        np.testing.assert_allclose(value, out.detach().numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(slope, x.grad.numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


# ---- 4. NaN through max, min and max pooling --------------------------------------------------
NAN_ROWS = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, 1.0, 0.0], [np.nan, 5.0, 5.0, -1.0]])

NAN_REDUCTIONS = {
    "max": lambda x: x.max(),
    "min": lambda x: x.min(),
    "amax": lambda x: x.amax(),
    "amax_dim": lambda x: x.amax(1),
    "amin_dim0": lambda x: x.amin(0),
    "max_dim": lambda x: x.max(1),
    "max_dim0_keepdim": lambda x: x.max(0, keepdim=True),
    "min_dim": lambda x: x.min(1),
    "clamp": lambda x: x.clamp(0.0, 2.0),
    "relu": lambda x: x.relu(),
    "maximum": lambda x: x.maximum(x.flip(1)),
    "logsumexp": lambda x: x.logsumexp(1),
}


def _values_and_indices(result):
    return (result[0], result[1]) if isinstance(result, tuple) else (result, None)


@pytest.mark.parametrize("name", sorted(NAN_REDUCTIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_propagates_and_routes_gradients_as_torch(torch, name, dtype):
    """The NaN is the max (and the min); max(dim) returns the index of the first NaN; amax
    shares the gradient among equal values (a NaN equals nothing: its share is NaN) — all as
    torch's, forward and backward."""
    fn = NAN_REDUCTIONS[name]
    array = NAN_ROWS.astype(dtype)
    x = tensor(array, requires_grad=True)
    out, indices = _values_and_indices(silently(fn, x))
    weights = np.arange(1, out.numpy().size + 1, dtype=dtype).reshape(out.shape)
    silently(lambda: out.backward(weights))
    tx = torch.tensor(array, requires_grad=True)
    tout, tindices = _values_and_indices(fn(tx))
    tout.backward(torch.tensor(weights))
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    if indices is not None:
        np.testing.assert_array_equal(indices.numpy(), tindices.numpy())


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_argmax_and_argmin_point_at_the_first_nan(torch, dim):
    for op in ("argmax", "argmin"):
        ours = getattr(tensor(NAN_ROWS), op)(dim)
        theirs = getattr(torch.tensor(NAN_ROWS), op)(dim)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


POOLS = [dict(kernel_size=2), dict(kernel_size=3, stride=1), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=2, dilation=2), dict(kernel_size=2, ceil_mode=True),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)]


def _image_with_nans(shape, dtype, seed=0):
    image = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    flat = image.reshape(-1)
    flat[np.random.default_rng(seed + 1).choice(flat.size, max(3, flat.size // 40), False)] = np.nan
    image[0, 0, 3, 3:5] = np.nan  # two NaNs side by side: in one window under most geometries
    return image


@pytest.mark.parametrize("kwargs", POOLS, ids=str)
@pytest.mark.parametrize("shape", [(2, 2, 7, 7), (2, 4, 40, 40)], ids=["small", "large"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool2d_propagates_nan_and_routes_to_it(torch, kwargs, shape, dtype):
    """A window with a NaN outputs NaN, its index (return_indices) is torch's — the last NaN
    in the window, by torch's "val > max || isnan(val)" — and the gradient goes there; with
    overlapping windows, padding, dilation and ceil_mode, on the small-input and the general
    kernels alike."""
    image = _image_with_nans(shape, dtype)
    x = tensor(image, requires_grad=True)
    out, indices = silently(lambda: F.max_pool2d(x, return_indices=True, **kwargs))
    weights = np.random.default_rng(2).standard_normal(out.shape).astype(dtype)
    out.backward(weights)
    tx = torch.tensor(image, requires_grad=True)
    tout, tindices = torch.nn.functional.max_pool2d(tx, return_indices=True, **kwargs)
    tout.backward(torch.tensor(weights))
    assert np.isnan(out.numpy()).any()
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("output_size", [3, (2, 3), 1, 7])
def test_adaptive_max_pool2d_propagates_nan_as_torch(torch, output_size):
    image = _image_with_nans((2, 2, 7, 7), np.float64, seed=5)
    x = tensor(image, requires_grad=True)
    out, indices = F.adaptive_max_pool2d(x, output_size, return_indices=True)
    out.backward(np.ones(out.shape))
    tx = torch.tensor(image, requires_grad=True)
    tout, tindices = torch.nn.functional.adaptive_max_pool2d(tx, output_size, return_indices=True)
    tout.backward(torch.ones_like(tout))
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


# ---- 5. float32 reductions as accurate as torch's ---------------------------------------------
def _reduction_error(result, exact) -> float:
    return float(np.max(np.abs(np.asarray(result, np.float64) - exact) / np.abs(exact)))


REDUCTIONS = {  # name -> (ours, torch's, the float64 truth), each of (array, axis)
    "sum": (lambda x, a: x.sum(a), lambda x, a: x.sum(a), lambda x, a: x.sum(a)),
    "mean": (lambda x, a: x.mean(a), lambda x, a: x.mean(a), lambda x, a: x.mean(a)),
    "var": (lambda x, a: x.var(a), lambda x, a: x.var(a), lambda x, a: x.var(a, ddof=1)),
    "std": (lambda x, a: x.std(a), lambda x, a: x.std(a), lambda x, a: x.std(a, ddof=1)),
    "logsumexp": (lambda x, a: x.logsumexp(a), lambda x, a: x.logsumexp(a),
                  lambda x, a: np.log(np.exp(x).sum(a))),
    "cumsum": (lambda x, a: x.cumsum(a), lambda x, a: x.cumsum(a), lambda x, a: x.cumsum(a)),
    "norm": (lambda x, a: x.norm(dim=a), lambda x, a: x.norm(dim=a),
             lambda x, a: np.sqrt((x * x).sum(a))),
}


@pytest.fixture(scope="module")
def float32_arrays():
    rng = np.random.default_rng(7)
    return {"tall": (rng.random((200_000, 3)) + 0.1).astype(np.float32),
            "square": rng.random((600, 600)).astype(np.float32),
            "cube": rng.random((100, 300, 4)).astype(np.float32)}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_float32_reductions_along_every_axis_are_as_accurate_as_torchs(torch, float32_arrays,
                                                                       name):
    """NumPy adds naively along every axis but the contiguous one (its pairwise sum runs only
    there); long float32 reductions accumulate in float64 instead, as torch's var and cumsum
    do: no worse than torch's error (2× plus 2 ulps) along any axis."""
    ours_fn, torch_fn, exact_fn = REDUCTIONS[name]
    for key, array in float32_arrays.items():
        wide = array.astype(np.float64)
        for axis in range(array.ndim):
            exact = exact_fn(wide, axis)
            ours = silently(ours_fn, tensor(array), axis).numpy()
            assert ours.dtype == np.float32
            ours_error = _reduction_error(ours, exact)
            torch_error = _reduction_error(torch_fn(torch.tensor(array), axis).numpy(), exact)
            assert ours_error <= 2 * torch_error + 2 * np.finfo(np.float32).eps, \
                (key, axis, ours_error, torch_error)


def test_a_long_float32_sum_is_accurate(torch):
    tenth = np.full(10**7, 0.1, np.float32)
    exact = tenth.astype(np.float64).sum()
    for result in (tensor(tenth).sum().numpy(), tensor(tenth.reshape(-1, 1)).sum(0).numpy(),
                   tensor(tenth.reshape(-1, 10)).mean(0).numpy() * 10**7):
        assert abs(float(np.asarray(result).reshape(-1)[0]) - exact) / exact < 4e-7


def test_float32_losses_are_as_accurate_as_torchs(torch):
    rng = np.random.default_rng(11)
    p, q = rng.random(10**6).astype(np.float32), rng.random(10**6).astype(np.float32)
    logits, labels = rng.standard_normal((10**5, 10)).astype(np.float32), rng.integers(0, 10, 10**5)
    p64, q64, logits64 = p.astype(np.float64), q.astype(np.float64), logits.astype(np.float64)
    log_probs = logits64 - np.log(np.exp(logits64).sum(1, keepdims=True))
    cases = [
        (F.mse_loss(tensor(p), tensor(q)), torch.nn.functional.mse_loss(
            torch.tensor(p), torch.tensor(q)), ((p64 - q64) ** 2).mean()),
        (F.cross_entropy(tensor(logits), tensor(labels)), torch.nn.functional.cross_entropy(
            torch.tensor(logits), torch.tensor(labels)),
         -log_probs[np.arange(10**5), labels].mean()),
        (F.binary_cross_entropy_with_logits(tensor(logits), tensor(p[:10**6].reshape(-1, 10))),
         torch.nn.functional.binary_cross_entropy_with_logits(
             torch.tensor(logits), torch.tensor(p.reshape(-1, 10))),
         np.mean(np.maximum(logits64, 0) - logits64 * p64.reshape(-1, 10)
                 + np.log1p(np.exp(-np.abs(logits64))))),
    ]
    for ours, theirs, exact in cases:
        assert _reduction_error(ours.numpy(), exact) <= \
            2 * _reduction_error(theirs.numpy(), exact) + 2 * np.finfo(np.float32).eps


def test_small_reductions_keep_numpys_own_sum():
    """Below LONG_SUM elements a reduction is NumPy's sum as it is (fast, already accurate)."""
    from tinygrad_pool.ops.reduce import LONG_SUM
    x = np.random.default_rng(1).random((LONG_SUM - 1, 5)).astype(np.float32)
    np.testing.assert_array_equal(tensor(x).sum(0).numpy(), x.sum(0))


def test_loss_module_keeps_logsigmoid_as_the_activation_op():
    """binary_cross_entropy_with_logits rests on the one LogSigmoid (ops/activation.py)."""
    assert L.LogSigmoid is A.LogSigmoid
