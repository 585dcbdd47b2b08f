"""Numerics at extreme inputs, against torch: every activation, softmax and log-softmax, the
logits losses, and exp, log, sqrt and pow with a scalar exponent, at ±1e4, ±100, ±88.7 and ±89
(either side of float32's exp overflow), ±710 (float64's), ±inf, zeros and subnormals, in
float32 and float64 — values, gradients, and (through create_graph) second derivatives.

The rule each test asserts, element by element, for the forward value and the gradient: where
torch's is not NaN, ours is not either and agrees with it (the same infinity, or close); where
torch's is NaN, ours is NaN too. (A user's training loop survives the same inputs in both.)
The exceptions are places where ours is not NaN and torch's is NaN or overflowed, each listed in
KNOWN_BETTER with its reason (docs/porting.md, "Extremes").

Not compared: the gradient at a NaN input. torch's depends on where the element lies in its
vectorised loop (hardtanh's is 1 in the scalar tail, 0 in a full vector), so any fixed answer
disagrees with torch somewhere; test_a_nan_input_gives_a_nan_value checks the value only.
"""
import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F

FLOAT32 = [0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.2e-38, 1e-20, 1.0, -1.0, 3.0, -3.0, 6.0, 20.0,
           -20.0, 30.0, -30.0, 88.7, -88.7, 89.0, -89.0, 100.0, -100.0, 104.0, -104.0, 1e4, -1e4,
           3e38, -3e38, np.inf, -np.inf]
FLOAT64 = FLOAT32 + [5e-324, -5e-324, 1e-310, 700.0, -700.0, 709.8, 710.0, -710.0, -745.0,
                     -746.0, 1e300, -1e300]
VALUES = {np.float32: FLOAT32, np.float64: FLOAT64}
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
# Agreement here is within a few units of rounding relative to 1: near 0 torch's own formulas
# lose the digits that ours keep (bce_with_logits(-30, target 0) is 9.3576e-14, torch's float64
# 9.237e-14; float32 gelu(-3) is -0.00404969, torch's -0.00405022 where float64 says -0.00404969),
# and last-digit parity at ordinary inputs is what test_activation.py and test_loss.py check.
TOLERANCES = {np.float32: dict(rtol=1e-4, atol=1e-6), np.float64: dict(rtol=1e-7, atol=1e-13)}

# name -> f(F, x), the same code for both libraries (F: torch.nn.functional or ours)
ELEMENTWISE = {
    "relu": lambda F, x: F.relu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x),
    "elu_0.5": lambda F, x: F.elu(x, 0.5),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta2_threshold10": lambda F, x: F.softplus(x, beta=2.0, threshold=10.0),
    "softplus_beta0.5": lambda F, x: F.softplus(x, beta=0.5),
    "softplus_beta-1": lambda F, x: F.softplus(x, beta=-1.0),
    "softplus_threshold100": lambda F, x: F.softplus(x, threshold=100.0),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "relu6": lambda F, x: F.relu6(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -2.0, 3.0),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "mish": lambda F, x: F.mish(x),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.5),
    "softsign": lambda F, x: F.softsign(x),
    "exp": lambda F, x: x.exp(),
    "log": lambda F, x: x.log(),
    "log_of_abs": lambda F, x: x.abs().log(),
    "sqrt": lambda F, x: x.sqrt(),
    "sqrt_of_abs": lambda F, x: x.abs().sqrt(),
    **{f"pow_{p:g}": (lambda p: lambda F, x: x.pow(p))(p)
       for p in (0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5, 2.5, -1.5)},
    "pow_2.0_of_abs": lambda F, x: x.abs() ** 2.0,
    "pow_0.5_of_abs": lambda F, x: x.abs() ** 0.5,
}

# (name, what) -> ({dtype: the inputs}, why ours is finite or inf there where torch's is NaN or
# overflows)
F32, F64 = np.float32, np.float64
KNOWN_BETTER = {
    ("gelu", "value"): ({F32: (np.inf, 3e38)},
                        "torch's float32 gelu(inf) is nan in its vectorised loop and inf for a "
                        "one-element tensor (and in float64); ours is inf. gelu(3e38) overflows "
                        "to inf in torch's float32 x · (1 + erf) and is 3e38 in ours (computed "
                        "in float64, as torch's float64)"),
    ("gelu", "second derivative"): (
        {F32: (3e38, -3e38), F64: (1e300, -1e300)},
        "x² overflows in torch's formula for gelu's second derivative (inf · 0 = nan); ours "
        "is the limit, 0"),
    ("mish", "second derivative"): (
        {F32: (89.0, 100.0, 104.0, 1e4), F64: (709.8, 710.0, 1e4, 3e38, 1e300)},
        "torch's recorded mish backward takes log1p(eˣ), whose derivative eˣ/(1 + eˣ) is "
        "inf/inf = nan where eˣ overflows; ours goes through log σ(-x): the limit, 0"),
    ("softplus_threshold100", "gradient"): (
        {F32: (89.0, 100.0)},
        "softplus's gradient where 88 < βx <= threshold is torch's e^(βx) / (e^(βx) + 1) = "
        "inf / inf = nan in float32, σ(βx) = 1 in ours (docs/porting.md, Extremes)"),
    **{(name, "value"): ({F32: (-np.inf,), F64: (-np.inf,)},
                         "bce_with_logits(-inf, target > 0) is +inf, the limit, where torch's "
                         "is nan (docs/porting.md, Extremes)")
       for name in ("bce_with_logits_target1", "bce_with_logits_target0.3",
                    "bce_with_logits_pos_weight3", "bce_with_logits_weight")},
}


def exempt(name, what, dtype, x, ours, theirs):
    """Ours and torch's without the inputs KNOWN_BETTER lists for them; there, each of torch's
    is NaN or inf and none of ours is NaN (asserted, so that a stale entry fails)."""
    inputs = KNOWN_BETTER.get((name, what), ({}, ""))[0].get(dtype)
    x = np.broadcast_to(x, ours.shape)
    if not inputs:
        return x, ours, theirs
    listed = np.isin(x, np.array(inputs, dtype=dtype))
    assert listed.sum() >= len(inputs), (name, what, "an input KNOWN_BETTER lists is not tried")
    assert not np.isfinite(theirs[listed]).any(), (name, what, "torch's is finite there now")
    assert not np.isnan(ours[listed]).any(), (name, what)
    return x[~listed], ours[~listed], theirs[~listed]


def run(lib, fn, x: np.ndarray, weights: np.ndarray, create_graph=False):
    """fn's value at x and the gradient of Σ weights · fn(x), as arrays, in ``lib``
    (``create_graph``: through the recorded backward, and the second derivative too: the
    derivative of Σ (gradient) by x, None where the library has none)."""
    functional = lib.nn.functional
    leaf = lib.tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        out = fn(functional, leaf)
        (grad,) = lib.autograd.grad(out, [leaf], grad_outputs=[lib.tensor(weights)],
                                    create_graph=create_graph)
        second = None
        if create_graph:
            try:
                (second,) = lib.autograd.grad(grad.sum(), [leaf], allow_unused=True)
            except RuntimeError as error:
                if "does not require grad" not in str(error):
                    # torch's hardsigmoid has no second derivative
                    return out.detach().numpy(), grad.detach().numpy(), None
                # ours: the gradient of a piecewise-linear op does not depend on x, so it is
                # not recorded (torch records a zero derivative)
            second = np.zeros_like(x) if second is None else second.numpy()
    return out.detach().numpy(), grad.detach().numpy(), second


def assert_like_torch(ours, theirs, dtype, what, x):
    """Where torch's value is not NaN, ours agrees (infinities equal); where it is NaN, ours
    is NaN: isclose with equal_nan does both (NaN and inf positions must match)."""
    theirs = np.asarray(theirs)
    assert ours.dtype == theirs.dtype, what
    bad = ~np.isclose(ours, theirs, equal_nan=True, **TOLERANCES[dtype])
    if bad.any():
        x = np.broadcast_to(x, bad.shape)
        listed = ", ".join(f"x={x[i]!r}: ours {ours[i]!r}, torch {theirs[i]!r}"
                           for i in zip(*np.nonzero(bad)))
        pytest.fail(f"{what}: {listed}")


@DTYPES
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_value_and_gradient_at_extremes(torch, name, dtype):
    x = np.array(VALUES[dtype], dtype=dtype)
    weights = np.ones_like(x)
    ours = run(tinygrad_pool, ELEMENTWISE[name], x, weights)
    theirs = run(torch, ELEMENTWISE[name], x, weights)
    for what, mine, torch_s in zip(("value", "gradient"), ours, theirs):
        shown, mine, torch_s = exempt(name, what, dtype, x, mine, torch_s)
        assert_like_torch(mine, torch_s, dtype, f"{name} {what}", shown)


@DTYPES
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_recorded_gradient_and_second_derivative_at_extremes(torch, name, dtype):
    """The same through create_graph=True, where backward runs on Tensors (its own code path),
    and the second derivative, where torch has one."""
    x = np.array(VALUES[dtype], dtype=dtype)
    weights = np.ones_like(x)
    ours = run(tinygrad_pool, ELEMENTWISE[name], x, weights, create_graph=True)
    theirs = run(torch, ELEMENTWISE[name], x, weights, create_graph=True)
    for what, mine, torch_s in zip(("value", "gradient", "second derivative"), ours, theirs):
        if torch_s is None:
            continue
        shown, mine, torch_s = exempt(name, what, dtype, x, mine, torch_s)
        assert_like_torch(mine, torch_s, dtype, f"{name} {what}", shown)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_a_nan_input_gives_a_nan_value(torch, name):
    x = np.array([np.nan, 1.0, np.nan])
    with np.errstate(all="ignore"):
        ours = ELEMENTWISE[name](F, tinygrad_pool.tensor(x)).numpy()
        theirs = ELEMENTWISE[name](torch.nn.functional, torch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))


# ---- along a dim: softmax, log-softmax, cross-entropy -----------------------------------------
def rows(dtype) -> np.ndarray:
    """Each extreme value v in rows of three with ordinary and extreme neighbours: (v, 0, 1),
    (v, v, 0), (v, -v, 1), (v, -inf, 0), (v, v, v) (a row all -inf: fully masked)."""
    v = np.array(VALUES[dtype], dtype=dtype)[:, None]
    zero, one = np.zeros_like(v), np.ones_like(v)
    masked = np.full_like(v, -np.inf)  # an attention mask's -inf beside each
    return np.concatenate([np.hstack([v, zero, one]), np.hstack([v, v, zero]),
                           np.hstack([v, -v, one]), np.hstack([v, masked, zero]),
                           np.hstack([v, v, v])])


def classes(lib, x, k):
    return lib.full((x.shape[0],), k, dtype=lib.int64)


def probabilities(lib, x):
    dtype = x.detach().numpy().dtype
    return lib.tensor(np.tile(np.array([0.2, 0.3, 0.5], dtype=dtype), (x.shape[0], 1)))


ALONG_A_DIM = {  # name -> f(lib, x)
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, dim=-1),
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, dim=-1),
    "softmax_dim0": lambda lib, x: lib.nn.functional.softmax(x.t(), dim=0),
    "log_softmax_dim0": lambda lib, x: lib.nn.functional.log_softmax(x.t(), dim=0),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, 0), reduction="none"),
    "cross_entropy_class2": lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, 2), reduction="none"),
    "cross_entropy_smoothing": lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, 1), reduction="none", label_smoothing=0.1),
    "cross_entropy_probabilities": lambda lib, x: lib.nn.functional.cross_entropy(
        x, probabilities(lib, x), reduction="none"),
    "cross_entropy_mean": lambda lib, x: lib.nn.functional.cross_entropy(
        x[:len(x) // 5], classes(lib, x[:len(x) // 5], 1)),
}


def run_along(lib, fn, x, weights, create_graph):
    """As ``run``; the second derivative is that of Σ gradient · v, v fixed."""
    leaf = lib.tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        out = fn(lib, leaf)
        (grad,) = lib.autograd.grad(out, [leaf], grad_outputs=[lib.tensor(weights)],
                                    create_graph=create_graph)
        if not create_graph:
            return out.detach().numpy(), grad.numpy()
        direction = np.random.default_rng(1).standard_normal(x.shape).astype(x.dtype)
        (second,) = lib.autograd.grad((grad * lib.tensor(direction)).sum(), [leaf])
    return out.detach().numpy(), grad.detach().numpy(), second.numpy()


@DTYPES
@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("name", sorted(ALONG_A_DIM))
def test_along_a_dim_value_and_gradient_at_extremes(torch, name, create_graph, dtype):
    x = rows(dtype)
    fn = ALONG_A_DIM[name]
    with np.errstate(all="ignore"):
        shape = tuple(fn(torch, torch.tensor(x)).shape)
    weights = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    ours = run_along(tinygrad_pool, fn, x, weights, create_graph)
    theirs = run_along(torch, fn, x, weights, create_graph)
    shown = x if shape == x.shape else x.T if shape == x.T.shape else x[:, 0] if shape else x[0, 0]
    assert_like_torch(ours[0], theirs[0], dtype, f"{name} value", shown)
    for what, mine, torch_s in zip(("gradient", "second derivative"), ours[1:], theirs[1:]):
        assert_like_torch(mine, torch_s, dtype, f"{name} {what}", x)


# ---- binary cross-entropy with logits ---------------------------------------------------------
BCE = {
    "bce_with_logits_target0": dict(target=0.0),
    "bce_with_logits_target1": dict(target=1.0),
    "bce_with_logits_target0.3": dict(target=0.3),
    "bce_with_logits_pos_weight3": dict(target=0.7, pos_weight=3.0),
    "bce_with_logits_weight": dict(target=1.0, weight=0.5),
}


@DTYPES
@pytest.mark.parametrize("name", sorted(BCE))
def test_bce_with_logits_value_and_gradients_at_extremes(torch, name, dtype):
    case = BCE[name]
    x = np.array(VALUES[dtype], dtype=dtype)
    target = np.full_like(x, case["target"])

    def both(lib):
        leaf = lib.tensor(x, requires_grad=True)
        goal = lib.tensor(target, requires_grad=True)
        extra = {key: lib.tensor(np.full_like(x, case[key]))
                 for key in ("pos_weight", "weight") if key in case}
        with np.errstate(all="ignore"):
            out = lib.nn.functional.binary_cross_entropy_with_logits(
                leaf, goal, reduction="none", **extra)
            grads = lib.autograd.grad(out.sum(), [leaf, goal])
        return [out.detach().numpy()] + [g.numpy() for g in grads]

    ours, theirs = both(tinygrad_pool), both(torch)
    for what, mine, torch_s in zip(("value", "input gradient", "target gradient"), ours, theirs):
        shown, mine, torch_s = exempt(name, what, dtype, x, mine, torch_s)
        assert_like_torch(mine, torch_s, dtype, f"{name} {what}", shown)
