"""The second wave of torch.nn.functional's losses and their Modules: kl_div, poisson_nll_loss,
gaussian_nll_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
multi_margin_loss, multilabel_margin_loss, margin_ranking_loss, cosine_embedding_loss,
triplet_margin_loss.

Each loss is written once as ``fn(lib, reduction, *leaves)`` and run on both frameworks: forward
and every leaf's gradient against PyTorch in float64 and float32, double backward against PyTorch
(where PyTorch has one), finite differences in float64, gradients at the kinks, and PyTorch's
error types for bad arguments.
"""
import warnings
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, autograd, enable_grad, tensor

from helpers import check_grad, leaf

REDUCTIONS = ["mean", "sum", "none"]
LABELS = np.array([2, 0, 4, 4])  # for (4, 5) scores
MULTILABELS = np.array([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 4, 2, -1, 3], [0, 1, 2, 3, 4]])
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


def _ours(dtype):
    return SimpleNamespace(F=F, nn=nn, const=lambda a: tensor(np.array(a, dtype=dtype)),
                           long=lambda a: tensor(np.array(a, dtype=np.int64)))


def _theirs(torch, dtype):
    return SimpleNamespace(F=torch.nn.functional, nn=torch.nn,
                           const=lambda a: torch.tensor(np.array(a, dtype=dtype)),
                           long=lambda a: torch.tensor(np.array(a, dtype=np.int64)))


Case = namedtuple("Case", "fn arrays double_backward")
N, P, V = "normal", "positive", "variance"  # N(0, 1)·2; uniform (0.05, 0.95); uniform (0.5, 2)


def case(fn, arrays, double_backward=True):
    return Case(fn, arrays, double_backward)


CASES = {
    "kl_div": case(lambda lib, r, x, t: lib.F.kl_div(x, t, reduction=r), [(N, (4, 3)), (P, (4, 3))]),
    "kl_div_log_target": case(lambda lib, r, x, t: lib.F.kl_div(x, t, reduction=r, log_target=True),
                              [(N, (4, 3)), (N, (4, 3))]),
    "kl_div_broadcast": case(lambda lib, r, x, t: lib.F.kl_div(x, t, reduction=r),
                             [(N, (4, 3)), (P, (3,))]),
    "poisson": case(lambda lib, r, x, t: lib.F.poisson_nll_loss(x, t, reduction=r),
                    [(N, (4, 3)), (V, (4, 3))]),
    "poisson_rate_full": case(lambda lib, r, x, t: lib.F.poisson_nll_loss(
        x, t * 3, log_input=False, full=True, reduction=r), [(V, (4, 3)), (V, (4, 3))]),
    "gaussian": case(lambda lib, r, x, t, v: lib.F.gaussian_nll_loss(x, t, v, reduction=r),
                     [(N, (4, 3)), (N, (4, 3)), (V, (4, 3))]),
    "gaussian_full_last_dim": case(lambda lib, r, x, t, v: lib.F.gaussian_nll_loss(
        x, t, v, full=True, reduction=r), [(N, (4, 3)), (N, (4, 3)), (V, (4,))]),
    "gaussian_heteroscedastic": case(lambda lib, r, x, t, v: lib.F.gaussian_nll_loss(
        x, t, v, reduction=r), [(N, (4, 3)), (N, (4, 3)), (V, (1, 3))]),
    "hinge_embedding": case(lambda lib, r, x: lib.F.hinge_embedding_loss(
        x, lib.const(np.tile(SIGNS, (3, 1)).T), margin=1.5, reduction=r), [(N, (4, 3))]),
    "soft_margin": case(lambda lib, r, x: lib.F.soft_margin_loss(
        x, lib.const(np.tile(SIGNS, (3, 1)).T * [[1.0, 0.5, 2.0]]), reduction=r), [(N, (4, 3))]),
    "multilabel_soft_margin": case(lambda lib, r, x, t: lib.F.multilabel_soft_margin_loss(
        x, t, weight=lib.const([0.5, 2.0, 1.0]), reduction=r), [(N, (4, 3)), (P, (4, 3))]),
    "multi_margin": case(lambda lib, r, x: lib.F.multi_margin_loss(
        x, lib.long(LABELS), reduction=r), [(N, (4, 5))], double_backward=False),
    "multi_margin_p2_weight": case(lambda lib, r, x: lib.F.multi_margin_loss(
        x, lib.long(LABELS), p=2, margin=0.7, weight=lib.const([0.5, 2, 1, 3, 0.25]),
        reduction=r), [(N, (4, 5))], double_backward=False),
    "multi_margin_unbatched": case(lambda lib, r, x: lib.F.multi_margin_loss(
        x, lib.long(3), reduction=r), [(N, (5,))], double_backward=False),
    "multilabel_margin": case(lambda lib, r, x: lib.F.multilabel_margin_loss(
        x, lib.long(MULTILABELS), reduction=r), [(N, (4, 5))], double_backward=False),
    "multilabel_margin_unbatched": case(lambda lib, r, x: lib.F.multilabel_margin_loss(
        x, lib.long(MULTILABELS[0]), reduction=r), [(N, (5,))], double_backward=False),
    "margin_ranking": case(lambda lib, r, a, b: lib.F.margin_ranking_loss(
        a, b, lib.const(SIGNS), margin=0.5, reduction=r), [(N, (4,)), (N, (4,))]),
    "cosine_embedding": case(lambda lib, r, a, b: lib.F.cosine_embedding_loss(
        a, b, lib.const(SIGNS), margin=-0.2, reduction=r), [(N, (4, 3)), (N, (4, 3))]),
    "cosine_embedding_unbatched": case(lambda lib, r, a, b: lib.F.cosine_embedding_loss(
        a, b, lib.const(-1.0), reduction=r), [(N, (3,)), (N, (3,))]),
    "triplet": case(lambda lib, r, a, p, n: lib.F.triplet_margin_loss(a, p, n, margin=2.0,
                                                                      reduction=r),
                    [(N, (4, 3)), (N, (4, 3)), (N, (4, 3))]),
    "triplet_swap_p1": case(lambda lib, r, a, p, n: lib.F.triplet_margin_loss(
        a, p, n, margin=3.0, p=1, swap=True, reduction=r), [(N, (4, 3)), (N, (4, 3)), (N, (4, 3))]),
}
CASE_IDS = [(name, r) for name in CASES for r in REDUCTIONS]
IDS = [f"{n}-{r}" for n, r in CASE_IDS]


def _arrays(name: str) -> list:
    rng = np.random.default_rng(sum(map(ord, name)))
    make = {N: lambda s: 2 * rng.standard_normal(s), P: lambda s: rng.uniform(0.05, 0.95, s),
            V: lambda s: rng.uniform(0.5, 2.0, s)}
    return [make[kind](shape) for kind, shape in CASES[name].arrays]


def _run(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # kl_div's 'mean' warns (both sides)
        return fn()


def _np(t):
    return t.numpy() if isinstance(t, Tensor) else t.detach().numpy(force=True)


def _parity(torch, fn, arrays, dtype, rtol, atol):
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


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=IDS)
def test_matches_torch_float64(torch, name, reduction):
    fn = CASES[name].fn
    _parity(torch, lambda lib, *xs: fn(lib, reduction, *xs), _arrays(name), np.float64,
            rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=IDS)
def test_matches_torch_float32(torch, name, reduction):
    fn = CASES[name].fn
    _parity(torch, lambda lib, *xs: fn(lib, reduction, *xs), _arrays(name), np.float32,
            rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,reduction", CASE_IDS, ids=IDS)
def test_gradcheck(name, reduction):
    fn = CASES[name].fn
    _run(lambda: check_grad(lambda *xs: fn(_ours(np.float64), reduction, *xs), *_arrays(name)))


def _second(lib, grad, fn, leaves, w, vs):
    """g = ∂(Σ W·fn)/∂leaves with create_graph; then ∂(Σ g·V)/∂(leaves, W)."""
    out = _run(lambda: fn(lib, *leaves))
    W = lib.const(w).requires_grad_(True)
    g = grad(out, leaves, grad_outputs=W, create_graph=True)
    s = sum((gk * lib.const(v)).sum() for gk, v in zip(g, vs))
    second = grad(s, list(leaves) + [W], allow_unused=True)
    return [out] + list(g) + list(second), [tuple(t.shape) for t in [out, *leaves, *leaves, W]]


DOUBLE = [(n, r) for n, r in CASE_IDS if CASES[n].double_backward]


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float64, 1e-8, 1e-10), (np.float32, 1e-4, 1e-5)],
                         ids=["float64", "float32"])
@pytest.mark.parametrize("name,reduction", DOUBLE, ids=[f"{n}-{r}" for n, r in DOUBLE])
def test_double_backward_matches_torch(torch, name, reduction, dtype, rtol, atol):
    fn = CASES[name].fn
    arrays = [a.astype(dtype) for a in _arrays(name)]
    rng = np.random.default_rng(2)
    fn_r = lambda lib, *xs: fn(lib, reduction, *xs)  # noqa: E731
    tleaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    shape = tuple(_run(lambda: fn_r(_theirs(torch, dtype), *tleaves)).shape)
    w = rng.standard_normal(shape)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    expected, shapes = _second(_theirs(torch, dtype), torch.autograd.grad, fn_r, tleaves, w, vs)
    got, _ = _second(_ours(dtype), autograd.grad, fn_r,
                     [tensor(a, requires_grad=True) for a in arrays], w, vs)
    for k, (a, b, s) in enumerate(zip(got, expected, shapes)):
        assert a is None or a.dtype == dtype, f"result {k}: {a.dtype}"
        a = np.zeros(s) if a is None else _np(a)
        b = np.zeros(s) if b is None else _np(b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"result {k}")


@pytest.mark.parametrize("name", ["multi_margin_p2_weight"])
def test_double_backward_by_finite_differences(name):
    """PyTorch has no double backward for multi_margin_loss; ours (the composition's) is checked
    against finite differences of the gradient (p = 1, and multilabel_margin_loss, are piecewise
    linear: their second derivative is 0)."""
    fn = CASES[name].fn
    (x,) = _arrays(name)
    w = np.random.default_rng(4).standard_normal(
        _run(lambda: fn(_ours(np.float64), "none", leaf(x))).shape)

    def gradient(x_):
        with enable_grad():  # (gradcheck evaluates under no_grad)
            return _gradient(x_)

    def _gradient(x_):
        (g,) = autograd.grad(fn(_ours(np.float64), "none", x_), [x_], grad_outputs=tensor(w),
                             create_graph=True)
        return g

    check_grad(gradient, x)


# ---- kinks, zeros, extremes --------------------------------------------------------------------
def _grads(lib, fn, arrays, dtype=np.float64):
    leaves = [lib.const(a).requires_grad_(True) for a in arrays]
    out = _run(lambda: fn(lib, *leaves))
    out.sum().backward()
    return [_np(out)] + [_np(t.grad) for t in leaves]


KINKS = {
    # margin - x_y + x_i = 0 for one class: torch counts only a positive margin
    "multi_margin": (lambda lib, x: lib.F.multi_margin_loss(x, lib.long([0]), reduction="sum"),
                     [np.array([[1.0, 0.0, 0.5]])]),
    "multi_margin_p2": (lambda lib, x: lib.F.multi_margin_loss(x, lib.long([0]), p=2,
                                                               reduction="sum"),
                        [np.array([[1.0, 0.0, 0.5]])]),
    "multilabel_margin": (lambda lib, x: lib.F.multilabel_margin_loss(
        x, lib.long([[0, -1, 2]]), reduction="sum"), [np.array([[1.0, 0.0, 0.5]])]),
    # margin - x = 0 with target -1: torch's clamp_min passes the gradient at the bound
    "hinge_embedding": (lambda lib, x: lib.F.hinge_embedding_loss(
        x, lib.const([-1.0, 1.0, 0.5]), reduction="sum"), [np.array([1.0, 0.0, 2.0])]),
    "margin_ranking": (lambda lib, a, b: lib.F.margin_ranking_loss(
        a, b, lib.const([1.0, 1.0]), margin=1.0, reduction="sum"),
                       [np.array([1.0, 0.0]), np.array([0.0, 0.0])]),
    "cosine_embedding": (lambda lib, a, b: lib.F.cosine_embedding_loss(
        a, b, lib.const([-1.0]), margin=1.0, reduction="sum"),
                         [np.array([[1.0, 2.0]]), np.array([[2.0, 4.0]])]),
    "triplet": (lambda lib, a, p, n: lib.F.triplet_margin_loss(a, p, n, margin=1.0, eps=0.0,
                                                               reduction="sum"),
                [np.array([[0.0, 0.0]]), np.array([[3.0, 0.0]]), np.array([[0.0, 4.0]])]),
    "triplet_swap_tie": (lambda lib, a, p, n: lib.F.triplet_margin_loss(
        a, p, n, margin=5.0, swap=True, reduction="sum"),
                         [np.array([[0.0, 0.0]]), np.array([[2.0, 0.0]]), np.array([[1.0, 3.0]])]),
    # a target of 0: xlogy's 0, not nan (the gradient to the target is nan there, as torch's)
    "kl_div_zero_target": (lambda lib, x, t: lib.F.kl_div(x, t, reduction="sum"),
                           [np.array([0.3, -1.0]), np.array([0.0, 0.5])]),
    "poisson_full_small_target": (lambda lib, x: lib.F.poisson_nll_loss(
        x, lib.const([0.0, 1.0, 2.5]), full=True, reduction="sum"), [np.array([0.1, -0.2, 1.0])]),
    "gaussian_var_clamped": (lambda lib, x, v: lib.F.gaussian_nll_loss(
        x, lib.const([0.0, 1.0]), v, eps=0.1, reduction="sum"),
                             [np.array([0.5, 0.2]), np.array([0.01, 2.0])]),
    "soft_margin_overflow": (lambda lib, x: lib.F.soft_margin_loss(
        x, lib.const([1.0, -1.0, 1.0]), reduction="sum"), [np.array([-1000.0, 1000.0, 1000.0])]),
}


@pytest.mark.parametrize("name", list(KINKS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kinks_and_extremes_match_torch(torch, name, dtype):
    fn, arrays = KINKS[name]
    arrays = [a.astype(dtype) for a in arrays]
    got = _grads(_ours(dtype), fn, arrays)  # (and no RuntimeWarning: setup.cfg makes it an error)
    expected = _grads(_theirs(torch, dtype), fn, arrays)
    for k, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"result {k}")


def test_kl_div_target_zero_is_zero_not_nan():
    x = leaf([0.5, -2.0])
    loss = F.kl_div(x, tensor(np.zeros(2)), reduction="none")
    assert np.array_equal(loss.numpy(), [0.0, 0.0])
    loss.sum().backward()
    assert np.array_equal(x.grad.numpy(), [0.0, 0.0])


# ---- reductions, warnings, legacy arguments ------------------------------------------------------
def test_kl_div_reductions(torch):
    x, t = np.random.default_rng(0).standard_normal((3, 4)), np.random.default_rng(1).uniform(
        size=(3, 4))
    for reduction in ["batchmean", "sum", "none"]:
        ours = F.kl_div(tensor(x), tensor(t), reduction=reduction)
        theirs = torch.nn.functional.kl_div(torch.tensor(x), torch.tensor(t), reduction=reduction)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    ours = F.kl_div(tensor(np.float64(-1.0)), tensor(np.float64(0.5)), reduction="batchmean")
    assert ours.shape == () and np.isclose(ours.item(), 0.5 * np.log(0.5) + 0.5)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(tensor(x), tensor(t))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(tensor(x), tensor(t), reduction="batchmean")


LEGACY = [
    ("kl_div", lambda lib, **kw: lib.F.kl_div(lib.const([[0.1, -0.5]]), lib.const([[0.3, 0.7]]),
                                              **kw)),
    ("poisson_nll_loss", lambda lib, **kw: lib.F.poisson_nll_loss(
        lib.const([[0.1, -0.5]]), lib.const([[1.0, 2.0]]), **kw)),
    ("hinge_embedding_loss", lambda lib, **kw: lib.F.hinge_embedding_loss(
        lib.const([[0.1, -0.5]]), lib.const([[1.0, -1.0]]), **kw)),
    ("soft_margin_loss", lambda lib, **kw: lib.F.soft_margin_loss(
        lib.const([[0.1, -0.5]]), lib.const([[1.0, -1.0]]), **kw)),
    ("multilabel_soft_margin_loss", lambda lib, **kw: lib.F.multilabel_soft_margin_loss(
        lib.const([[0.1, -0.5]]), lib.const([[1.0, 0.0]]), **kw)),
    ("multi_margin_loss", lambda lib, **kw: lib.F.multi_margin_loss(
        lib.const([[0.1, -0.5], [2.0, 1.0]]), lib.long([1, 0]), **kw)),
    ("multilabel_margin_loss", lambda lib, **kw: lib.F.multilabel_margin_loss(
        lib.const([[0.1, -0.5], [2.0, 1.0]]), lib.long([[1, -1], [0, 1]]), **kw)),
    ("margin_ranking_loss", lambda lib, **kw: lib.F.margin_ranking_loss(
        lib.const([0.1, -0.5]), lib.const([0.3, 0.2]), lib.const([1.0, -1.0]), **kw)),
    ("cosine_embedding_loss", lambda lib, **kw: lib.F.cosine_embedding_loss(
        lib.const([[0.1, -0.5]]), lib.const([[0.3, 0.2]]), lib.const([-1.0]), **kw)),
    ("triplet_margin_loss", lambda lib, **kw: lib.F.triplet_margin_loss(
        lib.const([[0.1, -0.5]]), lib.const([[0.3, 0.2]]), lib.const([[1.0, -1.0]]), **kw)),
]


@pytest.mark.parametrize("name,fn", LEGACY, ids=[n for n, _ in LEGACY])
def test_deprecated_size_average_and_reduce(torch, name, fn):
    for size_average, reduce in [(False, None), (None, False), (True, True), (False, True)]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            ours = fn(_ours(np.float64), size_average=size_average, reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = fn(_theirs(torch, np.float64), size_average=size_average, reduce=reduce)
        np.testing.assert_allclose(ours.numpy(), _np(theirs), rtol=1e-12)


@pytest.mark.parametrize("name,fn", LEGACY, ids=[n for n, _ in LEGACY])
def test_bad_reduction_is_a_value_error(torch, name, fn):
    with pytest.raises(ValueError):
        fn(_theirs(torch, np.float64), reduction="average")
    with pytest.raises(ValueError, match="average"):
        fn(_ours(np.float64), reduction="average")


def test_gaussian_bad_reduction_is_a_value_error():
    with pytest.raises(ValueError, match="average is not valid"):
        F.gaussian_nll_loss(tensor([1.0]), tensor([1.0]), tensor([1.0]), reduction="average")


# ---- errors ------------------------------------------------------------------------------------
def _x(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


ERRORS = [  # (name, fn(lib)); the error type is torch's, read from torch itself
    ("kl_div integer target", lambda lib: lib.F.kl_div(lib.const(_x(3, 4)),
                                                       lib.long(np.ones((3, 4))))),
    ("kl_div integer input", lambda lib: lib.F.kl_div(lib.long(np.ones((3, 4))),
                                                      lib.const(_x(3, 4)))),
    ("kl_div shapes", lambda lib: lib.F.kl_div(lib.const(_x(3, 4)), lib.const(_x(5)))),
    ("poisson shapes", lambda lib: lib.F.poisson_nll_loss(lib.const(_x(3, 4)), lib.const(_x(5)))),
    ("gaussian var size", lambda lib: lib.F.gaussian_nll_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(np.ones(2)))),
    ("gaussian var two dims differ", lambda lib: lib.F.gaussian_nll_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(np.ones((1, 1))))),
    ("gaussian negative var", lambda lib: lib.F.gaussian_nll_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(-np.ones((3, 4))))),
    ("gaussian negative float var", lambda lib: lib.F.gaussian_nll_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), -1.0)),
    ("hinge shapes", lambda lib: lib.F.hinge_embedding_loss(lib.const(_x(3, 4)),
                                                            lib.const(_x(5)))),
    ("soft_margin shapes", lambda lib: lib.F.soft_margin_loss(lib.const(_x(3, 4)),
                                                              lib.const(_x(5)))),
    ("multi_margin p", lambda lib: lib.F.multi_margin_loss(lib.const(_x(3, 4)),
                                                           lib.long([0, 1, 2]), p=3)),
    ("multi_margin out of range", lambda lib: lib.F.multi_margin_loss(lib.const(_x(3, 4)),
                                                                      lib.long([0, 1, 4]))),
    ("multi_margin negative", lambda lib: lib.F.multi_margin_loss(lib.const(_x(3, 4)),
                                                                  lib.long([0, 1, -1]))),
    ("multi_margin int32 target", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.long([0, 1, 2]).int())),
    ("multi_margin float target", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.const([0.0, 1.0, 2.0]))),
    ("multi_margin target size", lambda lib: lib.F.multi_margin_loss(lib.const(_x(3, 4)),
                                                                     lib.long([0, 1]))),
    ("multi_margin 3-d", lambda lib: lib.F.multi_margin_loss(lib.const(_x(2, 3, 4)),
                                                             lib.long([0, 1]))),
    ("multi_margin weight size", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.long([0, 1, 2]), weight=lib.const(np.ones(3)))),
    ("multi_margin weight 2-d", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.long([0, 1, 2]), weight=lib.const(np.ones((4, 1))))),
    ("multi_margin weight dtype", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.long([0, 1, 2]), weight=lib.const(np.ones(4)).double())),
    ("multi_margin integer input", lambda lib: lib.F.multi_margin_loss(
        lib.long(np.ones((3, 4))), lib.long([0, 1, 2]))),
    ("multilabel_margin int32", lambda lib: lib.F.multilabel_margin_loss(
        lib.const(_x(3, 4)), lib.long(np.zeros((3, 4))).int())),
    ("multilabel_margin size", lambda lib: lib.F.multilabel_margin_loss(
        lib.const(_x(3, 4)), lib.long(np.zeros((2, 4))))),
    ("multilabel_margin range", lambda lib: lib.F.multilabel_margin_loss(
        lib.const(_x(3, 4)), lib.long(np.full((3, 4), 4)))),
    ("multilabel_margin below -1", lambda lib: lib.F.multilabel_margin_loss(
        lib.const(_x(3, 4)), lib.long(np.full((3, 4), -2)))),
    ("multilabel_margin 3-d", lambda lib: lib.F.multilabel_margin_loss(
        lib.const(_x(2, 3, 4)), lib.long(np.zeros((2, 3, 4))))),
    ("margin_ranking dims", lambda lib: lib.F.margin_ranking_loss(
        lib.const(_x(3)), lib.const(_x(3, 1)), lib.const(_x(3)))),
    ("margin_ranking shapes", lambda lib: lib.F.margin_ranking_loss(
        lib.const(_x(3)), lib.const(_x(4)), lib.const(_x(3)))),
    ("cosine 2-d target", lambda lib: lib.F.cosine_embedding_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(np.ones((1, 3))))),
    ("cosine 1-d target 1-d inputs", lambda lib: lib.F.cosine_embedding_loss(
        lib.const(_x(4)), lib.const(_x(4)), lib.const(np.ones(1)))),
    ("cosine 0-d target 2-d inputs", lambda lib: lib.F.cosine_embedding_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(1.0))),
    ("cosine shapes", lambda lib: lib.F.cosine_embedding_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 5)), lib.const(np.ones(3)))),
    ("cosine target size", lambda lib: lib.F.cosine_embedding_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(np.ones(2)))),
    ("triplet dims", lambda lib: lib.F.triplet_margin_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(_x(4)))),
    ("triplet shapes", lambda lib: lib.F.triplet_margin_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(_x(3, 5)))),
    ("triplet margin", lambda lib: lib.F.triplet_margin_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(_x(3, 4)), margin=0)),
    ("soft_margin target requires grad", lambda lib: lib.F.soft_margin_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)).requires_grad_(True))),
    ("multi_margin weight requires grad", lambda lib: lib.F.multi_margin_loss(
        lib.const(_x(3, 4)), lib.long([0, 1, 2]), weight=lib.const(np.ones(4)).requires_grad_(True))),
    ("triplet p", lambda lib: lib.F.triplet_margin_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(_x(3, 4)), p="a")),
    ("hinge margin", lambda lib: lib.F.hinge_embedding_loss(lib.const(_x(3)), lib.const(_x(3)),
                                                            margin="a")),
    ("kl_div log_target", lambda lib: lib.F.kl_div(lib.const(_x(3)), lib.const(_x(3)),
                                                   log_target=1)),
    ("gaussian int var", lambda lib: lib.F.gaussian_nll_loss(lib.const(_x(3)), lib.const(_x(3)),
                                                             1)),
    ("gaussian 0-d var", lambda lib: lib.F.gaussian_nll_loss(
        lib.const(_x(3, 4)), lib.const(_x(3, 4)), lib.const(1.0))),
    ("multilabel_soft_margin 0-d", lambda lib: lib.F.multilabel_soft_margin_loss(
        lib.const(0.2), lib.const(0.3))),
    ("TripletMarginLoss margin", lambda lib: lib.nn.TripletMarginLoss(margin=-1.0)),
    ("MultiMarginLoss p", lambda lib: lib.nn.MultiMarginLoss(p=3)),
    ("MultiMarginLoss weight", lambda lib: lib.nn.MultiMarginLoss(weight=lib.const(np.ones((2, 2))))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_errors_match_torch(torch, name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            fn(_theirs(torch, np.float32))
        with pytest.raises(type(theirs.value)):
            fn(_ours(np.float32))


# ---- shapes, dtypes, empty ---------------------------------------------------------------------
SHAPES = [
    lambda lib: lib.F.multi_margin_loss(lib.const([0.3, -1.0, 2.0]), lib.long([2]),
                                        reduction="none"),
    lambda lib: lib.F.multi_margin_loss(lib.const(2.0), lib.long(0), reduction="none"),
    lambda lib: lib.F.multilabel_margin_loss(lib.const(2.0), lib.long(0), reduction="none"),
    lambda lib: lib.F.multilabel_margin_loss(lib.const(np.zeros((0, 3))),
                                             lib.long(np.zeros((0, 3))), reduction="none"),
    lambda lib: lib.F.multilabel_soft_margin_loss(lib.const(_x(2, 3, 4)),
                                                  lib.const(np.ones((2, 3, 4))), reduction="none"),
    lambda lib: lib.F.multilabel_soft_margin_loss(lib.const(_x(4)), lib.const(np.ones(4)),
                                                  reduction="none"),
    lambda lib: lib.F.triplet_margin_loss(lib.const(_x(4)), lib.const(_x(4)) + 1,
                                          lib.const(_x(4)) - 1, reduction="none"),
    lambda lib: lib.F.triplet_margin_loss(lib.const(_x(2, 3, 4)), lib.const(_x(2, 3, 4)) * 2,
                                          lib.const(_x(2, 3, 4)) + 1, reduction="none"),
    lambda lib: lib.F.triplet_margin_loss(lib.const(_x(3, 4)), lib.const(_x(3, 4)) * 2,
                                          lib.const(_x(1, 4)) + 1, p=0.5, reduction="none"),
    lambda lib: lib.F.cosine_embedding_loss(lib.const(_x(3, 4)), lib.const(_x(1, 4)),
                                            lib.long([1, -1, 1]), reduction="none"),
    lambda lib: lib.F.cosine_embedding_loss(lib.const(_x(3, 4)), lib.const(_x(3, 4)) + 1,
                                            lib.const([1.0, -1.0, 0.5]), reduction="none"),
    lambda lib: lib.F.hinge_embedding_loss(lib.const(_x(3, 4)), lib.long([1, -1, 1, 0])),
    lambda lib: lib.F.hinge_embedding_loss(lib.const(_x(3, 4)).double(), lib.long([1, -1, 1, 0])),
    lambda lib: lib.F.soft_margin_loss(lib.const(_x(3, 4)), lib.long([1, -1, 1, 1])),
    lambda lib: lib.F.margin_ranking_loss(lib.const(_x(3)), lib.const(_x(1)),
                                          lib.long([1, -1, 1])),
    lambda lib: lib.F.poisson_nll_loss(lib.const(_x(3, 4)), lib.long(np.ones((3, 4)))),
    lambda lib: lib.F.poisson_nll_loss(lib.const(_x(3, 4)), lib.const(_x(4)).abs(), full=True),
    lambda lib: lib.F.gaussian_nll_loss(lib.const(_x(3, 4)), lib.const(_x(3, 4)), 0.5),
    lambda lib: lib.F.kl_div(lib.const(_x(3, 4)), lib.const(_x(3, 4)).double().exp(),
                             reduction="sum"),
    lambda lib: lib.F.kl_div(lib.const(np.zeros((0, 3))), lib.const(np.zeros((0, 3))),
                             reduction="batchmean"),
    lambda lib: lib.F.soft_margin_loss(lib.const(np.zeros((0, 3))), lib.const(np.zeros((0, 3)))),
    lambda lib: lib.F.gaussian_nll_loss(lib.const(_x(4)), lib.const(_x(4)), lib.const(2.0)),
    lambda lib: lib.F.gaussian_nll_loss(lib.const(_x(3, 4)), lib.const(_x(4)),
                                        lib.const(np.full((3, 4), np.nan))),
    lambda lib: lib.F.kl_div(lib.const(0.2), lib.const(0.3), reduction="batchmean"),
]


@pytest.mark.parametrize("k", range(len(SHAPES)))
def test_shapes_dtypes_and_empty_match_torch(torch, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = SHAPES[k](_theirs(torch, np.float32))
        ours = SHAPES[k](_ours(np.float32))
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
    np.testing.assert_allclose(ours.numpy(), _np(theirs), rtol=1e-5, atol=1e-6)


# ---- hypothesis: the class losses on varied shapes ----------------------------------------------
@settings(max_examples=30, deadline=None)
@given(batch=st.integers(0, 4), classes=st.integers(1, 5), seed=st.integers(0, 2**16),
       p=st.sampled_from([1, 2]), margin=st.sampled_from([0.0, 0.5, 1.0]),
       reduction=st.sampled_from(REDUCTIONS))
def test_class_margin_losses_hypothesis(batch, classes, seed, p, margin, reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, classes))
    labels = rng.integers(0, classes, batch)
    listed = rng.integers(-1, classes, (batch, classes))
    weight = rng.uniform(0.1, 2.0, classes)
    for fn in (lambda lib, x_: lib.F.multi_margin_loss(x_, lib.long(labels), p=p, margin=margin,
                                                       weight=lib.const(weight),
                                                       reduction=reduction),
               lambda lib, x_: lib.F.multilabel_margin_loss(x_, lib.long(listed),
                                                            reduction=reduction)):
        tx = torch.tensor(x, requires_grad=True)
        ox = leaf(x)
        theirs, ours = fn(_theirs(torch, np.float64), tx), fn(_ours(np.float64), ox)
        if batch == 0 and reduction != "none":  # torch's kernel: uninitialised memory
            assert np.isnan(ours.item()) if reduction == "mean" else ours.item() == 0
            continue
        np.testing.assert_allclose(ours.numpy(), _np(theirs), rtol=1e-10, atol=1e-12)
        if batch:
            theirs.sum().backward()
            ours.sum().backward()
            np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---- modules -------------------------------------------------------------------------------------
MODULES = [
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, (N, N), ()),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-6}, (V, V), ()),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3}, (N, N, V), ()),
    ("HingeEmbeddingLoss", {"margin": 2.0}, (N,), ("signs",)),
    ("SoftMarginLoss", {"reduction": "sum"}, (N,), ("signs",)),
    ("MultiLabelSoftMarginLoss", {"weight": [0.5, 1.0, 2.0]}, (N, P), ()),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": [0.5, 1.0, 2.0]}, (N,), ("labels",)),
    ("MultiLabelMarginLoss", {}, (N,), ("multilabels",)),
    ("MarginRankingLoss", {"margin": 0.3}, (N, N), ("signs",)),
    ("CosineEmbeddingLoss", {"margin": 0.1, "reduction": "none"}, (N, N), ("signs_1d",)),
    ("TripletMarginLoss", {"margin": 2.0, "p": 1.0, "swap": True}, (N, N, N), ()),
]
TARGETS = {"signs": lambda lib: lib.const([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]]),
           "labels": lambda lib: lib.long([2, 0]),
           "multilabels": lambda lib: lib.long([[2, 0, -1], [1, -1, 0]]),
           "signs_1d": lambda lib: lib.const([1.0, -1.0])}


@pytest.mark.parametrize("name,kwargs,kinds,extra", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(torch, name, kwargs, kinds, extra):
    rng = np.random.default_rng(3)
    make = {N: lambda: rng.standard_normal((2, 3)), P: lambda: rng.uniform(0.05, 0.95, (2, 3)),
            V: lambda: rng.uniform(0.5, 2.0, (2, 3))}
    arrays = [make[kind]() for kind in kinds]

    def build(lib):
        return getattr(lib.nn, name)(**{k: lib.const(v) if k == "weight" else v
                                        for k, v in kwargs.items()})

    theirs, ours = build(_theirs(torch, np.float64)), build(_ours(np.float64))
    _parity(torch, lambda lib, *xs: (theirs if lib.nn is torch.nn else ours)(
        *xs, *(TARGETS[e](lib) for e in extra)), arrays, np.float64, rtol=1e-10, atol=1e-12)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    public = {k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"}
    for attribute, value in public.items():
        assert getattr(ours, attribute) == value, attribute


NAMES = ["KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
         "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
         "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss"]


@pytest.mark.parametrize("name", NAMES)
def test_module_defaults_and_signatures_match_torch(torch, name):
    import inspect
    ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == []
    public = {k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"}
    for attribute, value in public.items():
        assert getattr(ours, attribute) == value and type(getattr(ours, attribute)) is type(value)
    assert list(inspect.signature(type(ours)).parameters) == list(
        inspect.signature(type(theirs)).parameters)
    function = {"KLDivLoss": "kl_div", "PoissonNLLLoss": "poisson_nll_loss",
                "GaussianNLLLoss": "gaussian_nll_loss", "HingeEmbeddingLoss":
                "hinge_embedding_loss", "SoftMarginLoss": "soft_margin_loss",
                "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss",
                "MultiMarginLoss": "multi_margin_loss", "MultiLabelMarginLoss":
                "multilabel_margin_loss", "MarginRankingLoss": "margin_ranking_loss",
                "CosineEmbeddingLoss": "cosine_embedding_loss",
                "TripletMarginLoss": "triplet_margin_loss"}[name]
    ours_sig = inspect.signature(getattr(F, function))
    theirs_sig = inspect.signature(getattr(torch.nn.functional, function))
    assert [(p.name, p.default) for p in ours_sig.parameters.values()] == [
        (p.name, p.default) for p in theirs_sig.parameters.values()]


def test_module_legacy_arguments_set_reduction():
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert nn.MarginRankingLoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert nn.KLDivLoss(reduce=False).reduction == "none"


# ---- dtype promotion: mixed float widths, integer and bool tensors -------------------------------
_R = np.random.default_rng(5)
_XS, _PS = _R.standard_normal((3, 4)), _R.uniform(0.1, 0.9, (3, 4))
DTYPE_CASES = {
    "kl_div": lambda L, c, d1, d2: L.kl_div(c(_XS, d1), c(_PS, d2), reduction="sum"),
    "kl_div_log_target": lambda L, c, d1, d2: L.kl_div(c(_XS, d1), c(_PS, d2), log_target=True,
                                                       reduction="sum"),
    "poisson": lambda L, c, d1, d2: L.poisson_nll_loss(c(_XS, d1), c(_PS, d2)),
    "poisson_full": lambda L, c, d1, d2: L.poisson_nll_loss(c(_PS, d1), c(_PS * 3, d2),
                                                            log_input=False, full=True),
    "gaussian": lambda L, c, d1, d2: L.gaussian_nll_loss(c(_XS, d1), c(_PS, d2), c(_PS, d2)),
    "gaussian_float_var": lambda L, c, d1, d2: L.gaussian_nll_loss(c(_XS, d1), c(_PS, d2), 0.5),
    "hinge": lambda L, c, d1, d2: L.hinge_embedding_loss(c(_XS, d1), c(np.sign(_XS), d2)),
    "soft_margin": lambda L, c, d1, d2: L.soft_margin_loss(c(_XS, d1), c(np.sign(_XS), d2)),
    "multilabel_soft_margin": lambda L, c, d1, d2: L.multilabel_soft_margin_loss(
        c(_XS, d1), c(_PS, d2)),
    "multilabel_soft_margin_weight": lambda L, c, d1, d2: L.multilabel_soft_margin_loss(
        c(_XS, d1), c(_PS, d1), weight=c(_PS[0], d2)),
    "multi_margin_weight": lambda L, c, d1, d2: L.multi_margin_loss(
        c(_XS, d1), c(np.array([0, 2, 3]), np.int64), weight=c(_PS[0], d2)),
    "margin_ranking": lambda L, c, d1, d2: L.margin_ranking_loss(
        c(_XS[0], d1), c(_XS[1], d2), c(np.sign(_XS[2]), d2)),
    "cosine_embedding": lambda L, c, d1, d2: L.cosine_embedding_loss(
        c(_XS, d1), c(_PS, d2), c(np.array([1.0, -1.0, 1.0]), d2)),
    "triplet_swap": lambda L, c, d1, d2: L.triplet_margin_loss(c(_XS, d1), c(_PS, d2),
                                                               c(_XS * 2, d2), swap=True),
}
DTYPE_PAIRS = [(np.float32, np.float64), (np.float64, np.float32), (np.float32, np.int64),
               (np.int64, np.float32), (np.int64, np.int64), (np.float32, np.bool_)]
DTYPE_IDS = [(n, a, b) for n in DTYPE_CASES for a, b in DTYPE_PAIRS]


@pytest.mark.parametrize("name,d1,d2", DTYPE_IDS,
                         ids=[f"{n}-{a.__name__}-{b.__name__}" for n, a, b in DTYPE_IDS])
def test_dtypes_match_torch(torch, name, d1, d2):
    """The result's dtype and value, or the error type, as torch's."""
    def run(L, c):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return DTYPE_CASES[name](L, c, d1, d2)
            except Exception as error:  # noqa: BLE001 (compared with torch's below)
                return error

    theirs = run(torch.nn.functional, lambda a, d: torch.tensor(np.asarray(a).astype(d)))
    ours = run(F, lambda a, d: tensor(np.asarray(a).astype(d)))
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        return
    assert not isinstance(ours, Exception), ours
    assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
    np.testing.assert_allclose(ours.numpy(), _np(theirs), rtol=2e-6, atol=1e-6)


# ---- hypothesis: the distance and regression losses on varied shapes ---------------------------
@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 4), features=st.integers(1, 4), seed=st.integers(0, 2**16),
       unbatched=st.booleans(), p=st.sampled_from([1.0, 2.0, 3.0]), swap=st.booleans(),
       var_shape=st.sampled_from(["same", "last dim dropped", "one dim 1"]),
       reduction=st.sampled_from(REDUCTIONS))
def test_shaped_losses_hypothesis(batch, features, seed, unbatched, p, swap, var_shape,
                                  reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    shape = (features,) if unbatched else (batch, features)
    a, b, c = (rng.standard_normal(shape) for _ in range(3))
    signs = rng.choice([-1.0, 1.0], shape[:-1])
    var = rng.uniform(0.2, 2.0, {"same": shape, "last dim dropped": shape[:-1],
                                 "one dim 1": shape[:-1] + (1,)}[var_shape])
    fns = [  # (fn, how many of a, b, c it takes)
        (lambda lib, x, y, z: lib.F.triplet_margin_loss(x, y, z, margin=1.5, p=p, swap=swap,
                                                        reduction=reduction), 3),
        (lambda lib, x, y: lib.F.cosine_embedding_loss(x, y, lib.const(signs), margin=0.2,
                                                       reduction=reduction), 2),
        (lambda lib, x, y: lib.F.gaussian_nll_loss(x, y, lib.const(var), reduction=reduction), 2),
        (lambda lib, x, y: lib.F.kl_div(x, y.exp(), reduction=reduction), 2),
        (lambda lib, x, y: lib.F.poisson_nll_loss(x, y.exp(), full=True, reduction=reduction), 2),
        (lambda lib, x, y: lib.F.multilabel_soft_margin_loss(x, y.sigmoid(), reduction=reduction),
         2),
    ]
    for fn, n in fns:
        # (rtol 1e-7: with one feature cos is ±1 up to the 1e-12, and its gradient is a
        # difference of nearly equal terms, summed in another order than torch's)
        _run(lambda: _parity(torch, fn, [a, b, c][:n], np.float64, rtol=1e-7, atol=1e-10))
