"""Losses: sum_of_squares, log_softmax / softmax, and PyTorch's losses — mse, l1, smooth_l1,
huber, binary_cross_entropy (+ with_logits), nll_loss, cross_entropy — as functions and Modules.

Each loss is written once as ``fn(lib, reduction, *leaves)`` (``lib`` supplies the framework's
functional module and constant constructors) and run on both frameworks: forward and gradients
against PyTorch in float64 and float32, double backward against PyTorch, and finite differences
without PyTorch. Errors are checked to be of the type PyTorch raises for the same call.
"""
import warnings
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, no_grad, Tensor, tensor
from tinygrad_pool.nn import loss as nn_loss
from tinygrad_pool.ops import loss as L

from helpers import check_grad, leaf, torch_parity

REDUCTIONS = ["mean", "sum", "none"]
LABELS = np.array([2, 0, 4, 4])  # for 4×5 logits
W5 = np.array([0.5, 2.0, 1.0, 0.25, 3.0])  # per-class weights for 5 classes
LABELS_IGNORED = np.array([2, -100, 4, 1])  # one ignored with the default ignore_index
LABELS_ND = np.array([[[0, 4], [1, 1], [3, 2]], [[4, -100], [2, 0], [-100, 3]]])  # (2, 3, 2)
LABELS_3D = np.array([[0, 4, 2], [1, 1, 3]])  # (2, 3) for (2, 5, 3) logits


# ---- the two frameworks behind one interface ---------------------------------------------------
def _ours(dtype):
    return SimpleNamespace(F=L, const=lambda a: tensor(np.array(a, dtype=dtype)),
                           long=lambda a: tensor(np.array(a, dtype=np.int64)),
                           boolean=lambda a: tensor(np.array(a, dtype=bool)))


def _theirs(torch, dtype):
    return SimpleNamespace(F=torch.nn.functional,
                           const=lambda a: torch.tensor(np.array(a, dtype=dtype)),
                           long=lambda a: torch.tensor(np.array(a, dtype=np.int64)),
                           boolean=lambda a: torch.tensor(np.array(a, dtype=bool)))


# ---- the loss table ----------------------------------------------------------------------------
# fn(lib, reduction, *leaves); arrays: (kind, shape) per leaf
Case = namedtuple("Case", "fn arrays")
N, P, U = "normal", "probability", "unit"  # N(0, 1)·2; uniform (0.05, 0.95); uniform [0, 1]

CASES = {
    "mse": Case(lambda lib, r, x, t: lib.F.mse_loss(x, t, reduction=r), [(N, (4, 3)), (N, (4, 3))]),
    "mse_broadcast": Case(lambda lib, r, x, t: lib.F.mse_loss(x, t, reduction=r),
                          [(N, (4, 1)), (N, (3,))]),
    "l1": Case(lambda lib, r, x, t: lib.F.l1_loss(x, t, reduction=r), [(N, (4, 3)), (N, (4, 3))]),
    "l1_broadcast": Case(lambda lib, r, x, t: lib.F.l1_loss(x, t, reduction=r),
                         [(N, (2, 1, 3)), (N, (4, 1))]),
    "smooth_l1": Case(lambda lib, r, x, t: lib.F.smooth_l1_loss(x, t, reduction=r),
                      [(N, (4, 3)), (N, (4, 3))]),
    "smooth_l1_beta_half": Case(lambda lib, r, x, t: lib.F.smooth_l1_loss(x, t, reduction=r,
                                                                          beta=0.5),
                                [(N, (4, 3)), (N, (4, 3))]),
    "smooth_l1_beta_0": Case(lambda lib, r, x, t: lib.F.smooth_l1_loss(x, t, reduction=r, beta=0.0),
                             [(N, (4, 3)), (N, (4, 3))]),
    "smooth_l1_broadcast": Case(lambda lib, r, x, t: lib.F.smooth_l1_loss(x, t, reduction=r,
                                                                          beta=2.0),
                                [(N, (4, 1)), (N, (3,))]),
    "huber": Case(lambda lib, r, x, t: lib.F.huber_loss(x, t, reduction=r),
                  [(N, (4, 3)), (N, (4, 3))]),
    "huber_delta_2": Case(lambda lib, r, x, t: lib.F.huber_loss(x, t, reduction=r, delta=2.0),
                          [(N, (4, 3)), (N, (4, 3))]),
    "bce": Case(lambda lib, r, x, t: lib.F.binary_cross_entropy(x, t, reduction=r),
                [(P, (4, 3)), (U, (4, 3))]),
    "bce_weight": Case(lambda lib, r, x, t: lib.F.binary_cross_entropy(
        x, t, weight=lib.const([0.5, 2.0, 1.5]), reduction=r), [(P, (4, 3)), (U, (4, 3))]),
    "bce_with_logits": Case(lambda lib, r, x, t: lib.F.binary_cross_entropy_with_logits(
        x, t, reduction=r), [(N, (4, 3)), (U, (4, 3))]),
    "bce_with_logits_pos_weight": Case(lambda lib, r, x, t: lib.F.binary_cross_entropy_with_logits(
        x, t, reduction=r, pos_weight=lib.const([0.5, 2.0, 3.0])), [(N, (4, 3)), (U, (4, 3))]),
    "bce_with_logits_both_weights": Case(
        lambda lib, r, x, t: lib.F.binary_cross_entropy_with_logits(
            x, t, weight=lib.const([[1.0], [0.5], [2.0], [0.0]]), reduction=r,
            pos_weight=lib.const([0.5, 2.0, 3.0])), [(N, (4, 3)), (U, (4, 3))]),
    "nll": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(LABELS), reduction=r), [(N, (4, 5))]),
    "nll_weight": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(LABELS), weight=lib.const(W5),
                                                        reduction=r), [(N, (4, 5))]),
    "nll_ignore": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(LABELS_IGNORED),
                                                        weight=lib.const(W5), reduction=r),
                       [(N, (4, 5))]),
    "nll_ignore_a_class": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(LABELS), ignore_index=4,
                                                                reduction=r), [(N, (4, 5))]),
    "nll_4d": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(LABELS_ND), weight=lib.const(W5),
                                                    reduction=r), [(N, (2, 5, 3, 2))]),
    "nll_unbatched": Case(lambda lib, r, x: lib.F.nll_loss(x, lib.long(3), reduction=r),
                          [(N, (5,))]),
    "cross_entropy": Case(lambda lib, r, x: lib.F.cross_entropy(x, lib.long(LABELS), reduction=r),
                          [(N, (4, 5))]),
    "cross_entropy_weight_ignore": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(LABELS_IGNORED), weight=lib.const(W5), reduction=r), [(N, (4, 5))]),
    "cross_entropy_smoothing": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(LABELS), reduction=r, label_smoothing=0.2), [(N, (4, 5))]),
    "cross_entropy_smoothing_weight_ignore": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(LABELS), weight=lib.const(W5), ignore_index=4, reduction=r,
        label_smoothing=0.3), [(N, (4, 5))]),
    "cross_entropy_3d_smoothing": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(LABELS_3D), weight=lib.const(W5), ignore_index=1, reduction=r,
        label_smoothing=0.1), [(N, (2, 5, 3))]),
    "cross_entropy_4d": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(LABELS_ND), reduction=r, label_smoothing=0.25), [(N, (2, 5, 3, 2))]),
    "cross_entropy_unbatched": Case(lambda lib, r, x: lib.F.cross_entropy(
        x, lib.long(1), weight=lib.const(W5), reduction=r, label_smoothing=0.4), [(N, (5,))]),
    "cross_entropy_probabilities": Case(lambda lib, r, x, p: lib.F.cross_entropy(x, p, reduction=r),
                                        [(N, (4, 5)), (U, (4, 5))]),
    "cross_entropy_probabilities_weight_smoothing": Case(lambda lib, r, x, p: lib.F.cross_entropy(
        x, p, weight=lib.const(W5), reduction=r, label_smoothing=0.15), [(N, (4, 5)), (U, (4, 5))]),
    "cross_entropy_probabilities_3d": Case(lambda lib, r, x, p: lib.F.cross_entropy(
        x, p, reduction=r), [(N, (2, 5, 3)), (U, (2, 5, 3))]),
    "cross_entropy_probabilities_unbatched": Case(lambda lib, r, x, p: lib.F.cross_entropy(
        x, p, weight=lib.const(W5), reduction=r), [(N, (5,)), (U, (5,))]),
}
CASE_IDS = [(name, r) for name in CASES for r in REDUCTIONS]


def _arrays(name: str) -> list:
    rng = np.random.default_rng(sum(map(ord, name)))
    make = {N: lambda s: 2 * rng.standard_normal(s), P: lambda s: rng.uniform(0.05, 0.95, s),
            U: lambda s: rng.uniform(0.0, 1.0, s)}
    return [make[kind](shape) for kind, shape in CASES[name].arrays]


def _run(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the broadcast cases warn (both sides)
        return fn()


def _np(t):
    return t.numpy() if isinstance(t, Tensor) else t.detach().numpy()


def _parity(torch, fn, arrays, dtype, rtol, atol):
    """Forward and every input's gradient (for one random output weighting) against PyTorch."""
    theirs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    ours = [tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    tout = _run(lambda: fn(_theirs(torch, dtype), *theirs))
    out = _run(lambda: fn(_ours(dtype), *ours))
    assert out.dtype == dtype and out.shape == tuple(tout.shape)
    np.testing.assert_allclose(out.numpy(), _np(tout), rtol=rtol, atol=atol, err_msg="forward")
    weights = np.random.default_rng(1).standard_normal(out.shape).astype(dtype)
    tout.backward(torch.tensor(weights))
    out.backward(weights)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.grad.dtype == dtype
        np.testing.assert_allclose(a.grad.numpy(), _np(b.grad), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k}")


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=[f"{n}-{r}" for n, r in CASE_IDS])
def test_matches_torch_float64(torch, name, reduction):
    fn = CASES[name].fn
    _parity(torch, lambda lib, *xs: fn(lib, reduction, *xs), _arrays(name), np.float64,
            rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=[f"{n}-{r}" for n, r in CASE_IDS])
def test_matches_torch_float32(torch, name, reduction):
    fn = CASES[name].fn
    _parity(torch, lambda lib, *xs: fn(lib, reduction, *xs), _arrays(name), np.float32,
            rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=[f"{n}-{r}" for n, r in CASE_IDS])
def test_gradcheck(name, reduction):
    fn = CASES[name].fn
    _run(lambda: check_grad(lambda *xs: fn(_ours(np.float64), reduction, *xs), *_arrays(name)))


def _double_backward(lib, grad, fn, leaves, w, vs, w_requires_grad):
    """g = ∂(Σ W·fn)/∂leaves with create_graph; then ∂(Σ g·V)/∂(leaves, W)."""
    out = _run(lambda: fn(lib, *leaves))
    W = lib.const(w).requires_grad_(w_requires_grad)
    g = grad(out, leaves, grad_outputs=W, create_graph=True)
    s = sum((gk * lib.const(v)).sum() for gk, v in zip(g, vs))
    targets = list(leaves) + ([W] if w_requires_grad else [])
    second = grad(s, targets, allow_unused=True) if s.requires_grad else [None] * len(targets)
    return [out] + list(g) + list(second), [t.shape for t in [out] + list(leaves) + targets]


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=[f"{n}-{r}" for n, r in CASE_IDS])
def test_double_backward_matches_torch(torch, name, reduction):
    """Second derivatives with respect to the inputs and to the output weighting W (which
    catches a backward that is right but not recorded: d(Σ g·V)/dW = J·V)."""
    fn = CASES[name].fn
    w_requires_grad = True
    arrays = _arrays(name)
    rng = np.random.default_rng(2)
    fn_r = lambda lib, *xs: fn(lib, reduction, *xs)  # noqa: E731
    tleaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = _run(lambda: fn_r(_theirs(torch, np.float64), *tleaves))
    w = rng.standard_normal(tuple(tout.shape))
    vs = [rng.standard_normal(a.shape) for a in arrays]
    expected, shapes = _double_backward(_theirs(torch, np.float64), torch.autograd.grad, fn_r,
                                        tleaves, w, vs, w_requires_grad)
    got, _ = _double_backward(_ours(np.float64), autograd.grad, fn_r, [leaf(a) for a in arrays],
                              w, vs, w_requires_grad)
    for k, (a, b, shape) in enumerate(zip(got, expected, shapes)):
        a = np.zeros(shape) if a is None else _np(a)
        b = np.zeros(shape) if b is None else b.detach().numpy(force=True)
        # (rtol 1e-8: PyTorch's BCE double backward divides by (x + 1e-12)² (1 - x + 1e-12)²)
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=f"result {k}")


# ---- hypothesis: shapes, classes, weights, ignore_index, label smoothing -----------------------
@st.composite
def _class_problems(draw):
    batch = draw(st.integers(1, 4))
    classes = draw(st.integers(1, 5))
    extra = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    unbatched = draw(st.booleans()) and not extra
    ignore_index = draw(st.sampled_from([-100, 0, classes - 1, classes + 2]))
    probabilities = draw(st.booleans()) and ignore_index < 0
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    shape = (classes,) if unbatched else (batch, classes) + extra
    logits = rng.standard_normal(shape) * draw(st.sampled_from([1.0, 30.0]))
    if probabilities:
        target = rng.uniform(0, 1, shape)
    else:
        target_shape = () if unbatched else (batch,) + extra
        target = rng.integers(0, classes, target_shape)
        target = np.where(rng.uniform(size=target_shape) < 0.3, ignore_index, target)
    weight = rng.uniform(0.1, 3.0, classes) if draw(st.booleans()) else None
    return dict(logits=logits, target=target, weight=weight, ignore_index=ignore_index,
                reduction=draw(st.sampled_from(REDUCTIONS)),
                label_smoothing=draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])),
                probabilities=probabilities)


def _class_loss(lib, name, problem, x):
    target = problem["target"]
    target = lib.const(target) if problem["probabilities"] else lib.long(target)
    weight = None if problem["weight"] is None else lib.const(problem["weight"])
    kwargs = dict(weight=weight, ignore_index=problem["ignore_index"],
                  reduction=problem["reduction"])
    if name == "cross_entropy":
        return lib.F.cross_entropy(x, target, label_smoothing=problem["label_smoothing"], **kwargs)
    return lib.F.nll_loss(x, target, **kwargs)


@settings(max_examples=25, deadline=None)
@given(problem=_class_problems(), name=st.sampled_from(["cross_entropy", "nll_loss"]))
def test_class_losses_match_torch_hypothesis(problem, name):
    torch = pytest.importorskip("torch")
    assume(name == "cross_entropy" or not problem["probabilities"])  # (cross_entropy's alone)
    _parity(torch, lambda lib, x: _class_loss(lib, name, problem, x), [problem["logits"]],
            np.float64, rtol=1e-9, atol=1e-11)


@st.composite
def _elementwise_problems(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    # the target's shape: the same, or one that broadcasts with it (leading axes dropped/1s)
    target_shape = tuple(1 if draw(st.booleans()) else n for n in shape[draw(st.integers(0, len(shape))):])
    seed = draw(st.integers(0, 2**16))
    return dict(shape=shape, target_shape=target_shape, seed=seed,
                reduction=draw(st.sampled_from(REDUCTIONS)),
                loss=draw(st.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])),
                scale=draw(st.sampled_from([0.5, 1.0, 2.0])))


@settings(max_examples=25, deadline=None)
@given(problem=_elementwise_problems())
def test_elementwise_losses_match_torch_hypothesis(problem):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(problem["seed"])
    arrays = [rng.standard_normal(problem["shape"]) * 2, rng.standard_normal(problem["target_shape"])]
    name, scale = problem["loss"], problem["scale"]
    extra = {"smooth_l1_loss": {"beta": scale}, "huber_loss": {"delta": scale}}.get(name, {})
    _parity(torch, lambda lib, x, t: getattr(lib.F, name)(x, t, reduction=problem["reduction"],
                                                          **extra),
            arrays, np.float64, rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3).map(tuple), seed=st.integers(0, 2**16),
       scale=st.sampled_from([1.0, 10.0, 1e4]), reduction=st.sampled_from(REDUCTIONS),
       weighted=st.booleans(), pos_weighted=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]))
def test_binary_cross_entropy_with_logits_matches_torch_hypothesis(shape, seed, scale, reduction,
                                                                   weighted, pos_weighted, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) * scale, rng.uniform(0, 1, shape)]
    weight = rng.uniform(0, 2, shape[-1:]) if weighted else None
    pos_weight = rng.uniform(0, 3, shape[-1:]) if pos_weighted else None

    def fn(lib, x, t):
        return lib.F.binary_cross_entropy_with_logits(
            x, t, weight=None if weight is None else lib.const(weight), reduction=reduction,
            pos_weight=None if pos_weight is None else lib.const(pos_weight))
    tolerances = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)
    # (the loss reaches |x| = 3e4: absolute tolerance relative to that in float32)
    _parity(torch, fn, arrays, dtype, rtol=tolerances[0], atol=tolerances[1] * scale)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3).map(tuple), seed=st.integers(0, 2**16),
       reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(),
       edges=st.booleans())
def test_binary_cross_entropy_matches_torch_hypothesis(shape, seed, reduction, weighted, edges):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.01, 0.99, shape)
    if edges:  # predictions of exactly 0 and 1: the logs are clamped at -100
        x = np.where(rng.uniform(size=shape) < 0.3, rng.integers(0, 2, shape).astype(float), x)
    targets = rng.uniform(0, 1, shape)
    weight = rng.uniform(0, 2, shape[-1:]) if weighted else None

    def fn(lib, x):
        return lib.F.binary_cross_entropy(x, lib.const(targets),
                                          weight=None if weight is None else lib.const(weight),
                                          reduction=reduction)
    _parity(torch, fn, [x], np.float64, rtol=1e-10, atol=1e-12)


# ---- finite differences of the existing ops ----------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), ()], ids=str)
def test_sum_of_squares_gradcheck(rng, shape):
    check_grad(F.sum_of_squares, rng.standard_normal(shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_gradcheck(rng, reduction):
    # both input and target may require grad
    check_grad(lambda x, t: F.mse_loss(x, t, reduction=reduction),
               rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    target = tensor(rng.standard_normal((3, 4)))
    check_grad(lambda x: F.mse_loss(x, target, reduction=reduction), rng.standard_normal((3, 4)))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("op", ["log_softmax", "softmax"])
def test_softmax_family_gradcheck(rng, op, dim):
    check_grad(lambda x: getattr(F, op)(x, dim), rng.standard_normal((3, 4)))
    check_grad(lambda x: getattr(x, op)(dim), rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_gradcheck(rng, reduction):
    check_grad(lambda x: F.cross_entropy(x, tensor(LABELS), reduction=reduction),
               rng.standard_normal((4, 5)))
    check_grad(lambda x: F.cross_entropy(x, tensor(LABELS), reduction=reduction),
               rng.standard_normal((4, 5)) * 5)


def test_cross_entropy_equals_log_softmax_composition(rng):
    # -mean(log_softmax(x)[i, label_i]) built from the differentiable parts
    x = rng.standard_normal((4, 5))
    rows = np.arange(4)
    composed = -(F.log_softmax(leaf(x), 1)[rows, LABELS]).mean()
    np.testing.assert_allclose(F.cross_entropy(leaf(x), tensor(LABELS)).item(), composed.item())


# ---- semantics, by hand ------------------------------------------------------------------------
def test_sum_of_squares_by_hand():
    x = leaf([1.0, -2.0, 3.0])
    y = F.sum_of_squares(x)
    assert y.shape == () and y.item() == 14.0  # 1 + 4 + 9
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])  # 2x


def test_mse_loss_by_hand():
    x, t = leaf([1.0, 2.0, 4.0]), tensor(np.array([0.0, 2.0, 1.0]))
    # squared errors [1, 0, 9]: mean 10/3, sum 10
    assert F.mse_loss(x, t).item() == pytest.approx(10 / 3)
    assert F.mse_loss(x, t, reduction="sum").item() == pytest.approx(10.0)
    np.testing.assert_allclose(F.mse_loss(x, t, reduction="none").numpy(), [1.0, 0.0, 9.0])
    F.mse_loss(x, t).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (x.numpy() - t) / 3)  # 2(x - t)/n


def test_l1_smooth_l1_and_huber_by_hand():
    x, t = leaf([0.0, 0.5, 3.0, -2.0]), tensor(np.zeros(4))
    np.testing.assert_allclose(L.l1_loss(x, t, reduction="none").numpy(), [0.0, 0.5, 3.0, 2.0])
    # beta = 1: |d| < 1 -> d²/2; else |d| - 1/2
    np.testing.assert_allclose(L.smooth_l1_loss(x, t, reduction="none").numpy(),
                               [0.0, 0.125, 2.5, 1.5])
    # delta = 2: |d| < 2 -> d²/2; else 2 (|d| - 1)
    np.testing.assert_allclose(L.huber_loss(x, t, reduction="none", delta=2.0).numpy(),
                               [0.0, 0.125, 4.0, 2.0])
    L.smooth_l1_loss(x, t, reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 1.0, -1.0])  # clamp(d / beta, -1, 1)


def test_softmax_rows_sum_to_one_and_log_softmax_is_its_log(rng):
    x = rng.standard_normal((3, 4))
    p = F.softmax(tensor(x), dim=1).numpy()
    np.testing.assert_allclose(p.sum(axis=1), np.ones(3))
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(p, expected)
    np.testing.assert_allclose(F.log_softmax(tensor(x), 1).numpy(), np.log(expected))


def test_cross_entropy_by_hand():
    # logits [0, 0] with label 0: -log(1/2) = log 2; gradient softmax - onehot = [-1/2, 1/2]
    x = leaf([[0.0, 0.0]])
    loss = F.cross_entropy(x, tensor(np.array([0])))
    assert loss.item() == pytest.approx(np.log(2))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-0.5, 0.5]])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 2, 3), (0, 5)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_without_weights_or_ignored_targets_equals_the_weighted_path(rng, dtype, shape,
                                                                           reduction):
    # NLLLoss skips the mask and the weights when every target counts with weight 1; weight=ones
    # takes the general path: the loss and the gradient must be the same bits, nan for an
    # empty 'mean' included, and under create_graph the gradient of the gradient too
    labels = tensor(rng.integers(0, shape[1], shape[:1] + shape[2:]))
    values = np.log(rng.dirichlet(np.ones(shape[1]), shape[:1] + shape[2:])).astype(dtype)
    values = np.moveaxis(values, -1, 1)
    results = []
    for weight in (None, tensor(np.ones(shape[1], dtype))):
        x = tensor(values, requires_grad=True)
        loss = L.nll_loss(x, labels, weight=weight, reduction=reduction)
        upstream = tensor(np.linspace(0.5, 2, loss.numel(), dtype=dtype).reshape(loss.shape))
        (grad,) = autograd.grad(loss, x, upstream, create_graph=True)
        results.append((loss.numpy(), grad.numpy()))
    assert results[0][0].dtype == results[1][0].dtype == dtype
    for short, general in zip(*results):
        np.testing.assert_array_equal(short, general, strict=True)


def test_weighted_mean_divides_by_the_weights_of_the_targets_not_ignored():
    log_probs = leaf(np.log([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]))
    weight = tensor(np.array([1.0, 2.0, 4.0]))
    labels = tensor(np.array([0, 2, -100]))  # the third is ignored: its weight 4 does not count
    loss = L.nll_loss(log_probs, labels, weight=weight)
    expected = -(1 * np.log(0.5) + 4 * np.log(0.1)) / (1 + 4)
    assert loss.item() == pytest.approx(expected)
    loss.backward()
    np.testing.assert_allclose(log_probs.grad.numpy(), [[-1 / 5, 0, 0], [0, 0, -4 / 5], [0, 0, 0]])


def test_label_smoothing_by_hand():
    # two classes, logits [0, 0] (p = 1/2 each), label 0, ε = 0.2:
    # (1 - ε)·(-log ½) + ε/2·(-log ½ - log ½) = log 2
    x = leaf([[0.0, 0.0], [0.0, 0.0]])
    labels = tensor(np.array([0, 1]))
    assert L.cross_entropy(x, labels, label_smoothing=0.2).item() == pytest.approx(np.log(2))
    # with weights [1, 3], label 0 only: nll 1·log 2 / 1; smooth (1 + 3)·log 2 / 1
    w = tensor(np.array([1.0, 3.0]))
    got = L.cross_entropy(x[:1], labels[:1], weight=w, label_smoothing=0.2).item()
    assert got == pytest.approx(0.8 * np.log(2) + 0.1 * 4 * np.log(2))


def test_probability_targets_by_hand():
    # target (1/4, 3/4) on logits [0, 0]: -(¼ log ½ + ¾ log ½) = log 2; gradient p - target
    x = leaf([[0.0, 0.0]])
    target = tensor(np.array([[0.25, 0.75]]))
    loss = L.cross_entropy(x, target)
    assert loss.item() == pytest.approx(np.log(2))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.25, -0.25]])


@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_all_targets_ignored(torch, weighted, smoothing):
    """The mean over no targets is nan (0/0) and every gradient 0, as in PyTorch — without a
    NumPy warning (the suite turns those into errors)."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    labels = np.full(3, -100)
    weight = W5[:4] if weighted else None
    for reduction, expected in (("mean", np.nan), ("sum", 0.0)):
        ours = leaf(x)
        loss = L.cross_entropy(ours, tensor(labels), weight=None if weight is None else tensor(weight),
                               reduction=reduction, label_smoothing=smoothing)
        theirs = torch.tensor(x, requires_grad=True)
        tloss = torch.nn.functional.cross_entropy(
            theirs, torch.tensor(labels), reduction=reduction, label_smoothing=smoothing,
            weight=None if weight is None else torch.tensor(weight))
        np.testing.assert_equal(loss.item(), expected)
        np.testing.assert_equal(tloss.item(), expected)
        loss.backward()
        tloss.backward()
        np.testing.assert_array_equal(ours.grad.numpy(), np.zeros((3, 4)))
        np.testing.assert_array_equal(theirs.grad.numpy(), np.zeros((3, 4)))


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_zero_total_weight_matches_torch(torch, smoothing):
    """Targets kept but weighing 0 in all: the mean is 0/0 = nan, and so are the gradients of
    the kept targets (PyTorch divides by the total), while the ignored one gets 0."""
    labels, weight = np.array([0, 0, -100]), np.array([0.0, 1.0])
    _parity(torch, lambda lib, x: lib.F.cross_entropy(x, lib.long(labels), weight=lib.const(weight),
                                                      label_smoothing=smoothing),
            [np.random.default_rng(0).standard_normal((3, 2))], np.float64, rtol=1e-10, atol=0)


def test_empty_batch_mean_is_nan():
    empty = tensor(np.zeros(0))
    for loss in (L.cross_entropy(leaf(np.zeros((0, 3))), tensor(np.zeros(0, dtype=np.int64))),
                 L.cross_entropy(leaf(np.zeros((0, 3))), tensor(np.zeros((0, 3)))),
                 L.mse_loss(leaf(np.zeros(0)), empty), L.l1_loss(leaf(np.zeros(0)), empty),
                 L.binary_cross_entropy_with_logits(leaf(np.zeros(0)), empty)):
        assert np.isnan(loss.item())


def test_cross_entropy_is_stable_for_huge_logits():
    x = leaf([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]])
    loss = F.cross_entropy(x, tensor(np.array([1, 2])), reduction="none")
    # row 0: label logit is 1e4 below the max -> loss 1e4 (exactly, to double precision)
    # row 1: two equal maxima, label on one -> log 2
    np.testing.assert_allclose(loss.numpy(), [1e4, np.log(2)])
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, -1.0, 0.0], [0.0, 0.5, -0.5]], atol=1e-12)
    big = leaf(np.array([[1e4, -1e4]]))
    ls = F.log_softmax(big, 1)
    assert np.isfinite(ls.numpy()).all()
    ls.sum().backward()
    assert np.isfinite(big.grad.numpy()).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_with_logits_is_stable_for_huge_logits(dtype):
    x = tensor(np.array([1e4, -1e4, 1e4, -1e4], dtype=dtype), requires_grad=True)
    t = tensor(np.array([0.0, 1.0, 1.0, 0.0], dtype=dtype))
    loss = L.binary_cross_entropy_with_logits(x, t, reduction="none",
                                              pos_weight=tensor(np.array([2.0], dtype=dtype)))
    # wrong by 1e4 (weighted 2 for the positive) or right: exactly 1e4, 2e4, 0, 0
    np.testing.assert_array_equal(loss.numpy(), np.array([1e4, 2e4, 0.0, 0.0], dtype=dtype))
    loss.sum().backward()
    # ∂/∂x = (1 + (p - 1) t) σ(x) - p t: 1, -2, 0, 0
    np.testing.assert_array_equal(x.grad.numpy(), np.array([1.0, -2.0, 0.0, 0.0], dtype=dtype))


def test_bce_clamps_its_logs_at_minus_100():
    x = leaf([0.0, 1.0, 0.0])
    loss = L.binary_cross_entropy(x, tensor(np.array([1.0, 0.0, 0.0])), reduction="none")
    np.testing.assert_array_equal(loss.numpy(), [100.0, 100.0, 0.0])
    loss.sum().backward()
    # (x - t) / max(x (1 - x), 1e-12): finite where the log is clamped
    np.testing.assert_allclose(x.grad.numpy(), [-1e12, 1e12, 0.0])


def test_float32_losses_stay_float32():
    x = tensor(np.array([[1.0, 2.0, 3.0]], dtype=np.float32), requires_grad=True)
    loss = F.cross_entropy(x, tensor(np.array([1])))
    assert loss.dtype == np.float32
    loss.backward()
    assert x.grad.dtype == np.float32
    target = tensor(np.zeros((1, 3), dtype=np.float32))
    for loss in (L.mse_loss(x, target), L.l1_loss(x, target), L.smooth_l1_loss(x, target),
                 L.huber_loss(x, target), L.binary_cross_entropy_with_logits(x, target),
                 L.binary_cross_entropy(x.sigmoid(), target),
                 L.cross_entropy(x, tensor(np.array([1])), weight=tensor(np.ones(3, np.float32)),
                                 label_smoothing=0.1),
                 L.cross_entropy(x, tensor(np.full((1, 3), 1 / 3, dtype=np.float32)))):
        assert loss.dtype == np.float32


def test_integer_regression_targets_take_the_input_dtype():
    x = tensor(np.array([0.5, 1.5], dtype=np.float32), requires_grad=True)
    loss = L.mse_loss(x, tensor(np.array([0, 2])))  # PyTorch promotes int64 to float32
    assert loss.dtype == np.float32 and loss.item() == pytest.approx(0.25)


def test_mse_loss_broadcasts_with_torchs_warning(torch):
    x = leaf(np.arange(4.0).reshape(4, 1))
    t = tensor(np.arange(3.0))
    with pytest.warns(UserWarning, match=r"mse_loss: Using a target size \(\(3,\)\) that is "
                                         r"different to the input size \(\(4, 1\)\)"):
        loss = L.mse_loss(x, t, reduction="none")
    assert loss.shape == (4, 3)
    np.testing.assert_array_equal(loss.numpy(), (x.numpy() - t.numpy()) ** 2)
    with pytest.warns(UserWarning, match="Using a target size"):
        torch.nn.functional.mse_loss(torch.zeros(4, 1), torch.zeros(3))


def test_deprecated_size_average_and_reduce(torch):
    x, t = leaf([[1.0, 2.0], [3.0, 5.0]]), np.array([0, 1])
    tx, tt = torch.tensor(x.numpy()), torch.tensor(t)
    for size_average, reduce in [(False, None), (None, False), (True, True), (False, True)]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            ours = L.cross_entropy(x, tensor(t), size_average=size_average, reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = torch.nn.functional.cross_entropy(tx, tt, size_average=size_average,
                                                       reduce=reduce)
            module = torch.nn.MSELoss(size_average=size_average, reduce=reduce)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
        with pytest.warns(UserWarning):
            assert nn_loss.MSELoss(size_average=size_average, reduce=reduce).reduction \
                == module.reduction


def test_weight_is_constant_under_no_grad():
    weight = tensor(W5, requires_grad=True)  # an error with grad enabled (PyTorch's rule) ...
    with no_grad():  # ... but not here
        loss = L.cross_entropy(tensor(np.zeros((4, 5))), tensor(LABELS), weight=weight)
    assert loss.item() == pytest.approx(np.log(5))


# ---- errors, each of PyTorch's type ------------------------------------------------------------
def _x(lib, shape=(4, 5), requires_grad=False, fill=0.5):
    return lib.const(np.full(shape, fill)).requires_grad_(requires_grad)


ERRORS = [
    # (id, call(lib), error type, our message)
    ("reduction", lambda lib: lib.F.mse_loss(_x(lib), _x(lib), reduction="avg"),
     ValueError, r"mse_loss: reduction must be one of .*'avg'"),
    ("float class target", lambda lib: lib.F.cross_entropy(_x(lib), lib.const([0.0, 1, 2, 3])),
     RuntimeError, r"cross_entropy: target must hold integer class indices .*float64"),
    ("bool class target", lambda lib: lib.F.nll_loss(_x(lib), lib.boolean([0, 1, 1, 0])),
     RuntimeError, r"nll_loss: target must hold integer class indices .*bool"),
    ("target too large", lambda lib: lib.F.cross_entropy(_x(lib), lib.long([0, 1, 5, 3])),
     IndexError, r"cross_entropy: Target 5 is out of bounds: .*\[0, 5\)"),
    ("negative target", lambda lib: lib.F.nll_loss(_x(lib), lib.long([0, -1, 2, 3])),
     IndexError, r"nll_loss: Target -1 is out of bounds"),
    ("4-d target out of range", lambda lib: lib.F.cross_entropy(
        _x(lib, (2, 5, 3, 2)), lib.long(np.full((2, 3, 2), 9))),
     IndexError, r"cross_entropy: Target 9 is out of bounds"),
    ("unbatched target out of range", lambda lib: lib.F.cross_entropy(_x(lib, (5,)), lib.long(7)),
     IndexError, r"cross_entropy: Target 7 is out of bounds"),
    ("batch size", lambda lib: lib.F.cross_entropy(_x(lib), lib.long([0, 1, 2])),
     ValueError, r"cross_entropy: Expected input batch_size \(4\) to match target batch_size \(3\)"),
    ("3-d target size", lambda lib: lib.F.cross_entropy(_x(lib, (2, 5, 3)), lib.long(np.zeros((2, 4)))),
     RuntimeError, r"cross_entropy: Expected target size \[2, 3\], got \[2, 4\]"),
    ("multi-target", lambda lib: lib.F.nll_loss(_x(lib), lib.long(np.zeros((4, 1)))),
     RuntimeError, r"nll_loss: 0D or 1D target tensor expected, multi-target not supported"),
    ("unbatched target size", lambda lib: lib.F.nll_loss(_x(lib, (5,)), lib.long([1, 2])),
     ValueError, r"nll_loss: For 1D input, 1D target must have size 1, but got target size: 2"),
    ("0-d input", lambda lib: lib.F.nll_loss(_x(lib, ()), lib.long(0)),
     ValueError, r"nll_loss: Expected 1 or more dimensions \(got 0\)"),
    ("weight size", lambda lib: lib.F.cross_entropy(_x(lib), lib.long(LABELS), weight=lib.const(W5[:3])),
     RuntimeError, r"cross_entropy: weight tensor should be defined either for all 5 classes .*\[3\]"),
    ("weight requires grad", lambda lib: lib.F.nll_loss(
        _x(lib), lib.long(LABELS), weight=lib.const(W5).requires_grad_()),
     RuntimeError, r"nll_loss: the loss is not differentiable with respect to weight"),
    ("label_smoothing > 1", lambda lib: lib.F.cross_entropy(_x(lib), lib.long(LABELS),
                                                            label_smoothing=1.5),
     RuntimeError, r"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    ("ignore_index float", lambda lib: lib.F.cross_entropy(_x(lib), lib.long(LABELS), ignore_index=1.5),
     TypeError, r"cross_entropy: ignore_index must be an int, got float \(1.5\)"),
    ("probabilities with ignore_index", lambda lib: lib.F.cross_entropy(_x(lib), _x(lib), ignore_index=1),
     RuntimeError, r"cross_entropy: ignore_index is not supported for floating point target"),
    ("integer probabilities", lambda lib: lib.F.cross_entropy(_x(lib), lib.long(np.zeros((4, 5)))),
     RuntimeError, r"cross_entropy: Expected floating point type for target with class probabilities"),
    ("probabilities weight size", lambda lib: lib.F.cross_entropy(_x(lib), _x(lib), weight=lib.const([1.0])),
     RuntimeError, r"cross_entropy: weight tensor should be defined either for all 5 classes"),
    ("shapes do not broadcast", lambda lib: lib.F.l1_loss(_x(lib, (4, 3)), _x(lib, (2, 3))),
     RuntimeError, r"l1_loss: the size of input \(4, 3\) and the size of target \(2, 3\) do not broadcast"),
    ("negative beta", lambda lib: lib.F.smooth_l1_loss(_x(lib), _x(lib), beta=-1.0),
     RuntimeError, r"smooth_l1_loss: beta must be non-negative, got -1.0"),
    ("zero delta", lambda lib: lib.F.huber_loss(_x(lib), _x(lib), delta=0.0),
     RuntimeError, r"huber_loss: delta must be positive, got 0.0"),
    ("bce shapes", lambda lib: lib.F.binary_cross_entropy(_x(lib, (3, 1)), _x(lib, (3,))),
     ValueError, r"binary_cross_entropy: target has shape \(3,\) but input has shape \(3, 1\)"),
    ("bce input above 1", lambda lib: lib.F.binary_cross_entropy(lib.const([0.5, 1.5]), _x(lib, (2,))),
     RuntimeError, r"binary_cross_entropy: all elements of input should be between 0 and 1"),
    ("bce input nan", lambda lib: lib.F.binary_cross_entropy(lib.const([0.5, np.nan]), _x(lib, (2,))),
     RuntimeError, r"binary_cross_entropy: all elements of input should be between 0 and 1"),
    ("bce target below 0", lambda lib: lib.F.binary_cross_entropy(_x(lib, (2,)), lib.const([0.5, -1])),
     RuntimeError, r"binary_cross_entropy: all elements of target should be between 0 and 1"),
    ("bce integer target", lambda lib: lib.F.binary_cross_entropy(_x(lib, (2,)), lib.long([0, 1])),
     RuntimeError, r"binary_cross_entropy: target must be a floating point tensor .*int64"),
    ("bce weight shape", lambda lib: lib.F.binary_cross_entropy(_x(lib, (2, 3)), _x(lib, (2, 3)),
                                                                weight=lib.const([1.0, 2.0])),
     RuntimeError, r"binary_cross_entropy: weight has shape \(2,\), which does not broadcast to "
                   r"the input's shape \(2, 3\)"),
    ("bce weight requires grad", lambda lib: lib.F.binary_cross_entropy(
        _x(lib, (3,)), _x(lib, (3,)), weight=_x(lib, (3,), requires_grad=True)),
     RuntimeError, r"binary_cross_entropy: the loss is not differentiable with respect to weight"),
    ("logits shapes", lambda lib: lib.F.binary_cross_entropy_with_logits(_x(lib, (3, 1)), _x(lib, (3,))),
     ValueError, r"binary_cross_entropy_with_logits: Target size \(3,\) must be the same as input "
                 r"size \(3, 1\)"),
    ("logits pos_weight shape", lambda lib: lib.F.binary_cross_entropy_with_logits(
        _x(lib, (3,)), _x(lib, (3,)), pos_weight=_x(lib, (2, 3))),
     RuntimeError, r"binary_cross_entropy_with_logits: pos_weight has shape \(2, 3\), which does "
                   r"not broadcast"),
    ("logits pos_weight requires grad", lambda lib: lib.F.binary_cross_entropy_with_logits(
        _x(lib, (3,)), _x(lib, (3,)), pos_weight=_x(lib, (3,), requires_grad=True)).sum().backward(),
     RuntimeError, r"binary_cross_entropy_with_logits: the loss is not differentiable with "
                   r"respect to pos_weight"),
    ("logits integer target", lambda lib: lib.F.binary_cross_entropy_with_logits(
        _x(lib, (2,)), lib.long([0, 1])),
     RuntimeError, r"binary_cross_entropy_with_logits: target must be a floating point tensor"),
]


@pytest.mark.parametrize("call,error,message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_torchs(torch, call, error, message):
    with pytest.raises(error):  # the table itself: PyTorch raises this type for this call
        _run(lambda: call(_theirs(torch, np.float64)))
    with pytest.raises(error, match=message):
        _run(lambda: call(_ours(np.float64)))


@pytest.mark.parametrize("loss", ["mse_loss", "cross_entropy"])
def test_bad_reduction(loss):
    args = (leaf(np.ones((2, 3))), tensor(np.ones((2, 3)) if loss == "mse_loss" else np.array([0, 1])))
    with pytest.raises(ValueError, match=rf"{loss}: reduction must be one of .*'average'"):
        getattr(F, loss)(*args, reduction="average")


def test_log_softmax_dim_out_of_range():
    message = r"log_softmax: dim=2 is out of range .*\[-2, 1\], but got 2"
    with pytest.raises(IndexError, match=message):
        F.log_softmax(leaf(np.ones((2, 3))), 2)


# ---- PyTorch parity of the older ops -----------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_and_softmax_match_torch(torch, rng, dim):
    x = rng.standard_normal((3, 4))
    torch_parity(torch, lambda t: F.log_softmax(t, dim), x,
                 torch_fn=lambda t: torch.nn.functional.log_softmax(t, dim))
    torch_parity(torch, lambda t: F.softmax(t, dim), x,
                 torch_fn=lambda t: torch.nn.functional.softmax(t, dim))


@pytest.mark.parametrize("scale", [1.0, 1e4])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_matches_torch(torch, rng, reduction, scale):
    labels = torch.tensor(LABELS)
    torch_parity(torch, lambda x: F.cross_entropy(x, tensor(LABELS), reduction=reduction),
                 rng.standard_normal((4, 5)) * scale,
                 torch_fn=lambda x: torch.nn.functional.cross_entropy(x, labels, reduction=reduction))


def test_sum_of_squares_matches_torch(torch, rng):
    torch_parity(torch, F.sum_of_squares, rng.standard_normal((2, 3)),
                 torch_fn=lambda x: (x * x).sum())


# ---- the Modules -------------------------------------------------------------------------------
MODULES = [
    # (class name, constructor kwargs(lib), input kind and shape, target(lib))
    ("L1Loss", lambda lib: {}, (N, (4, 3)), lambda lib: lib.const(np.ones((4, 3)))),
    ("MSELoss", lambda lib: {"reduction": "sum"}, (N, (4, 3)), lambda lib: lib.const(np.ones((4, 3)))),
    ("SmoothL1Loss", lambda lib: {"beta": 0.5}, (N, (4, 3)), lambda lib: lib.const(np.ones((4, 3)))),
    ("HuberLoss", lambda lib: {"delta": 2.0, "reduction": "none"}, (N, (4, 3)),
     lambda lib: lib.const(np.ones((4, 3)))),
    ("NLLLoss", lambda lib: {"weight": lib.const(W5), "ignore_index": 4}, (N, (4, 5)),
     lambda lib: lib.long(LABELS)),
    ("CrossEntropyLoss", lambda lib: {"weight": lib.const(W5), "label_smoothing": 0.1,
                                      "ignore_index": 0}, (N, (4, 5)), lambda lib: lib.long(LABELS)),
    ("CrossEntropyLoss", lambda lib: {}, (N, (4, 5)), lambda lib: lib.long(LABELS)),
    ("BCELoss", lambda lib: {"weight": lib.const([1.0, 2.0, 0.5])}, (P, (4, 3)),
     lambda lib: lib.const(np.full((4, 3), 0.25))),
    ("BCEWithLogitsLoss", lambda lib: {"pos_weight": lib.const([1.0, 2.0, 0.5])}, (N, (4, 3)),
     lambda lib: lib.const(np.full((4, 3), 0.25))),
    ("BCEWithLogitsLoss", lambda lib: {"weight": lib.const([[1.0], [2.0], [0.5], [1.0]]),
                                       "pos_weight": lib.const([3.0])}, (N, (4, 3)),
     lambda lib: lib.const(np.full((4, 3), 0.75))),
]


@pytest.mark.parametrize("name,kwargs,input_spec,target", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_modules_match_torch(torch, name, kwargs, input_spec, target):
    """Same value and gradient, same state_dict keys and buffers, same repr, same attributes."""
    rng = np.random.default_rng(3)
    kind, shape = input_spec
    x = rng.standard_normal(shape) if kind == N else rng.uniform(0.05, 0.95, shape)
    theirs_lib, ours_lib = _theirs(torch, np.float64), _ours(np.float64)
    theirs = getattr(torch.nn, name)(**kwargs(theirs_lib))
    ours = getattr(nn_loss, name)(**kwargs(ours_lib))
    _parity(torch, lambda lib, leaf_: (theirs if lib.F is torch.nn.functional else ours)(
        leaf_, target(lib)), [x], np.float64, rtol=1e-10, atol=1e-12)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key], value.numpy())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    for attribute in ("reduction", "ignore_index", "label_smoothing", "beta", "delta"):
        assert getattr(ours, attribute, None) == getattr(theirs, attribute, None), attribute
    assert list(ours.parameters()) == []


def test_module_defaults_match_torch(torch):
    for name in ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
                 "BCELoss", "BCEWithLogitsLoss"):
        ours, theirs = getattr(nn_loss, name)(), getattr(torch.nn, name)()
        for attribute in ("reduction", "ignore_index", "label_smoothing", "beta", "delta",
                          "weight", "pos_weight"):
            assert getattr(ours, attribute, "absent") == getattr(theirs, attribute, "absent")
        assert repr(ours) == repr(theirs) and list(ours.state_dict()) == []


def test_module_weight_buffer_loads_from_state_dict():
    criterion = nn_loss.CrossEntropyLoss(weight=tensor(np.ones(5)))
    criterion.load_state_dict({"weight": W5})
    logits = np.random.default_rng(0).standard_normal((4, 5))
    expected = L.cross_entropy(tensor(logits), tensor(LABELS), weight=tensor(W5))
    assert criterion(tensor(logits), tensor(LABELS)).item() == pytest.approx(expected.item())


def test_module_bad_reduction_fails_on_call_as_torch():
    criterion = nn_loss.MSELoss(reduction="avg")  # PyTorch only complains when it is used
    with pytest.raises(ValueError, match="mse_loss: reduction must be one of"):
        criterion(tensor(np.zeros(2)), tensor(np.zeros(2)))


def test_module_weight_must_be_a_tensor():
    with pytest.raises(TypeError, match="list.*weight|weight.*list"):
        nn_loss.CrossEntropyLoss(weight=[1.0, 2.0])
