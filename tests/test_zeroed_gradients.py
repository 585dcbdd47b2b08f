"""Gradients that an op zeroes where its local derivative is 0 (masked_fill, where, clamp,
maximum/minimum, relu and friends, scatter_reduce without include_self, hardswish, max()/min()/
median() of all elements, embedding's padding_idx, nll_loss's other classes and ignore_index,
cumprod after a zero): an inf or nan arriving there gives exactly 0, as torch's backward
*selects* (where) rather than multiplying by a mask (inf · 0 = nan). Ops whose torch backward
multiplies (dropout, x * 0, amax's even split, cumprod under create_graph) keep their nan: each
case is compared with torch, for upstream gradients inf, -inf and nan, float32 and float64,
first order and through a recorded (create_graph) backward."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

FIXTURE = HealthCheck.function_scoped_fixture  # (torch: the same module for every example)

X = np.array([-5.0, -0.5, 0.0, 0.5, 2.0, 8.0])  # both sides of every kink used below
INDEX = np.array([0, 0, 2, 2, 0])
SRC = np.array([5.0, 0.0, -1.0, 2.0, 4.0])  # one lone 0 at place 0: prod's special case


# name: fn(lib, x) -> output; every one has places whose local derivative is 0
CASES = {
    "masked_fill": lambda L, x: x.masked_fill(x > 0.1, 3.0),
    "masked_fill_minus_inf": lambda L, x: x.masked_fill(x > 0.1, -math.inf),
    "masked_fill_mask_broadcasts_x": lambda L, x: x[:3].masked_fill(
        L.tensor([[True], [False]]), 1.0),
    "where": lambda L, x: L.where(x > 0.1, x, 0.0),
    "where_other": lambda L, x: L.where(x > 0.1, 1.0, x),
    "clamp": lambda L, x: x.clamp(-1, 1),
    "clamp_min": lambda L, x: x.clamp(min=0.1),
    "clamp_max": lambda L, x: x.clamp(max=0.1),
    "clamp_tensor_bounds": lambda L, x: x.clamp(L.full_like(x, -1), L.full_like(x, 1)),
    "maximum": lambda L, x: L.maximum(x, L.zeros_like(x)),  # a tie at 0: half each
    "minimum": lambda L, x: L.minimum(x, L.zeros_like(x)),
    "relu": lambda L, x: L.relu(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardsigmoid": lambda L, x: L.nn.functional.hardsigmoid(x),
    "tril": lambda L, x: x.reshape(2, 3).tril(),
    "triu": lambda L, x: x.reshape(2, 3).triu(1),
    "masked_select": lambda L, x: x.masked_select(x > 0.1),
    "scatter": lambda L, x: x.scatter(0, L.tensor([0, 1]), L.zeros(2, dtype=x.dtype)),
    "max_dim": lambda L, x: x.reshape(2, 3).max(1)[0],
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x.reshape(1, 1, 6), 2),
    "hardswish": lambda L, x: L.nn.functional.hardswish(x),  # (slope 0 at -5, below -3)
    # torch's evenly_distribute_backward: the maxima share, the others get 0
    "max_all": lambda L, x: x.max(),
    "min_all": lambda L, x: x.min(),
    "max_all_tied": lambda L, x: L.cat([x, x[-2:]]).max(),
    "median_all": lambda L, x: x.median(),
    "nanmedian_all": lambda L, x: x.nanmedian(),
    "median_all_tied": lambda L, x: L.cat([x, x[:3]]).median(),
    # only the padding row's places are left out (the row read twice gets both, inf + inf)
    "embedding_padding_idx": lambda L, x: L.nn.functional.embedding(
        L.tensor([0, 1, 0, 2, 1]), x.reshape(3, 2), padding_idx=0),
    "embedding_padding_idx_scaled": lambda L, x: L.nn.functional.embedding(
        L.tensor([[0, 1], [1, 2]]), x.reshape(3, 2), padding_idx=2, scale_grad_by_freq=True),
    # nll_loss: each target's class only (the other classes get 0), none where ignored
    "nll_loss": lambda L, x: L.nn.functional.nll_loss(x.reshape(2, 3), L.tensor([0, 2]),
                                                      reduction="none"),
    "nll_loss_mean": lambda L, x: L.nn.functional.nll_loss(x.reshape(2, 3), L.tensor([1, 2])),
    "nll_loss_ignore_index": lambda L, x: L.nn.functional.nll_loss(
        x.reshape(2, 3), L.tensor([0, 2]), ignore_index=0, reduction="none"),
    "nll_loss_ignore_index_mean_weighted": lambda L, x: L.nn.functional.nll_loss(
        x.reshape(2, 3), L.tensor([0, 2]), L.tensor([1.0, 2.0, 3.0], dtype=x.dtype),
        ignore_index=0),
    "nll_loss_all_ignored": lambda L, x: L.nn.functional.nll_loss(  # (0 / 0 total weight)
        x.reshape(2, 3), L.tensor([1, 1]), ignore_index=1),
    "nll_loss_2d_sum": lambda L, x: L.nn.functional.nll_loss(
        x.reshape(1, 3, 2), L.tensor([[2, -100]]), reduction="sum"),
    "nll_loss_unbatched": lambda L, x: L.nn.functional.nll_loss(x, L.tensor(4)),
    "cross_entropy_ignore_index": lambda L, x: L.nn.functional.cross_entropy(
        x.reshape(3, 2), L.tensor([0, 1, 1]), ignore_index=1, reduction="sum"),
    "cross_entropy_ignore_index_smoothed": lambda L, x: L.nn.functional.cross_entropy(
        x.reshape(2, 3), L.tensor([0, 2]), ignore_index=0, label_smoothing=0.2,
        reduction="none"),
    # cumprod's first-order gradient, torch's: 0 after the first zero, the sum before it
    # stops at the zero (x here: -5, -0.5, 0, ...)
    "cumprod": lambda L, x: x.cumprod(0),
    "cumprod_two_zeros": lambda L, x: (x * (x != 0.5)).reshape(2, 3).flip(1).cumprod(1),
    "floor": lambda L, x: x.floor(),  # (a zero gradient everywhere, whatever arrives)
    # torch multiplies here: nan stays nan
    "abs": lambda L, x: x.abs(),  # (sign(0) · inf)
    "dropout_all": lambda L, x: L.nn.functional.dropout(x, 1.0),
    "times_zero": lambda L, x: x * 0,
    "amax": lambda L, x: x.reshape(2, 3).amax(1),
}


def _check(torch, fn, dtype, bad, x=X):
    """x.grad of fn at x with every upstream gradient ``bad``, ours and torch's."""
    grads = []
    for lib in (tinygrad_pool, torch):
        xs = lib.tensor(x.astype(dtype), requires_grad=True)
        y = fn(lib, xs)
        y.backward(lib.full_like(y, bad))
        grads.append(xs.grad.numpy())
    ours, theirs = grads
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, theirs)  # (nan equals nan here; 0 must be 0)
    return ours


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_inf_and_nan_upstream_gradients_as_torch(torch, name, dtype, bad):
    _check(torch, CASES[name], dtype, bad)


@pytest.mark.parametrize("name", ["max_all", "min_all", "median_all", "nanmedian_all"])
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_nan_extreme_of_all_elements_goes_to_the_nans(torch, name, bad):
    """Where max()/min()/median() is NaN the NaNs share the gradient and the numbers get 0
    (nanmedian: the median of the numbers, which alone gets it)."""
    ours = _check(torch, CASES[name], np.float64, bad, x=np.array([1.0, np.nan, 2.0, np.nan]))
    assert (ours[[0, 2]] == 0).sum() >= 1


def test_masked_fill_minus_inf_then_square_has_zero_gradient(torch):
    """The report that started this: torch gives 0 at the filled place, not nan (the upstream
    gradient there is 2(y + 1) = -inf)."""
    grads = []
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(np.array([0.5, -1.0], np.float32), requires_grad=True)
        y = x.masked_fill((x > 0.1).detach(), -math.inf)
        ((y + 1) ** 2).mean().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], [0.0, 0.0])
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_masked_fill_tensor_value_gradient(torch, bad):
    """A 0-d tensor value gets the sum of the gradient at the places it fills only."""
    grads = []
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(X, requires_grad=True)
        value = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = x.masked_fill(x > 0.1, value)
        upstream = lib.tensor(np.where(X > 0.1, 1.0, bad))  # the bad values where x is kept
        y.backward(upstream)
        grads.append((x.grad.numpy(), value.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
    assert grads[0][1] == 3.0


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_scatter_reduce_inf_and_nan_upstream_as_torch(torch, reduce, include_self, bad):
    """Without include_self the places written give x no gradient (0, not inf · 0); prod's
    gradient for src chooses between its lone-zero and ordinary formulas."""
    grads = []
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(np.array([1.0, -2.0, 3.0, 0.5]), requires_grad=True)
        src = lib.tensor(SRC, requires_grad=True)
        y = x.scatter_reduce(0, lib.tensor(INDEX), src, reduce, include_self=include_self)
        y.backward(lib.full_like(y, bad))
        grads.append((x.grad.numpy(), src.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["masked_fill", "where", "clamp", "maximum", "minimum",
                                  "clamp_tensor_bounds", "masked_fill_mask_broadcasts_x",
                                  "hardswish", "max_all_tied", "median_all_tied",
                                  "embedding_padding_idx", "nll_loss_ignore_index",
                                  "nll_loss_ignore_index_mean_weighted", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_recorded_backward_zeroes_too_and_differentiates_again(torch, name, dtype):
    """Under create_graph the backward runs on Tensors (Where.call records a node): the
    gradient still has 0 where an inf arrives, and a second derivative through it (here with
    respect to the upstream gradient) matches torch's. (cumprod: under create_graph torch
    multiplies, nan after a zero, and so does this.)"""
    fn = CASES[name]
    upstream = np.where(np.arange(12) % 2 == 0, math.inf, 1.5)
    results = []
    for lib, grad in ((tinygrad_pool, autograd.grad), (torch, torch.autograd.grad)):
        x = lib.tensor(X.astype(dtype), requires_grad=True)
        y = fn(lib, x)
        w = lib.tensor(upstream[:y.numel()].reshape(tuple(y.shape)).astype(dtype),
                       requires_grad=True)
        (g,) = grad(y, [x], grad_outputs=[w], create_graph=True)
        first = g.detach().numpy().copy()
        # d/dw of Σ g · v, where g is finite: it is v where x passes, 0 elsewhere
        finite = lib.tensor(np.isfinite(first))
        (g.masked_fill(~finite, 0.0) * 2).sum().backward()
        results.append((first, w.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


@settings(max_examples=30, deadline=None, suppress_health_check=[FIXTURE])
@given(values=st.lists(st.sampled_from([-3.0, -1.0, -0.25, 0.0, 0.25, 1.0, 3.0]),
                       min_size=1, max_size=8),
       upstream=st.lists(st.sampled_from([math.inf, -math.inf, math.nan, 1.0, -2.0]),
                         min_size=8, max_size=8),
       name=st.sampled_from(["masked_fill", "where", "clamp", "maximum", "minimum", "relu",
                             "hardtanh", "masked_fill_minus_inf", "clamp_max", "hardswish",
                             "max_all", "min_all", "median_all", "nanmedian_all", "cumprod"]))
def test_mixed_upstream_gradients_as_torch(torch, values, upstream, name):
    """Any mix of finite, inf and nan upstream gradients, on inputs with ties and kinks."""
    x = np.array(values)
    grads = []
    for lib in (tinygrad_pool, torch):
        xs = lib.tensor(x, requires_grad=True)
        y = CASES[name](lib, xs)
        y.backward(lib.tensor(np.array(upstream[:y.numel()]).reshape(tuple(y.shape))))
        grads.append(xs.grad.numpy())
    np.testing.assert_array_equal(*grads)


@settings(max_examples=30, deadline=None, suppress_health_check=[FIXTURE])
@given(data=st.data(), rows=st.integers(1, 3), cols=st.integers(1, 6),
       double=st.booleans())
def test_cumprod_and_nll_loss_mixed_upstream_as_torch(torch, data, rows, cols, double):
    """cumprod along either dim of inputs with zeros (none, one, several per row), and
    nll_loss with some targets ignored, under any mix of finite, inf and nan upstream
    gradients."""
    dtype = np.float64 if double else np.float32
    size = rows * cols
    x = np.array(data.draw(st.lists(st.sampled_from([-2.0, -1.0, 0.0, 0.5, 3.0]),
                                    min_size=size, max_size=size))).reshape(rows, cols)
    upstream = st.sampled_from([math.inf, -math.inf, math.nan, 1.0, -2.0])
    dim = data.draw(st.integers(0, 1))
    targets = np.array(data.draw(st.lists(st.integers(0, cols - 1), min_size=rows,
                                          max_size=rows)))
    ignore_index = data.draw(st.integers(0, cols - 1))
    reduction = data.draw(st.sampled_from(["none", "mean", "sum"]))
    g_cumprod = np.array(data.draw(st.lists(upstream, min_size=size,
                                            max_size=size))).reshape(rows, cols)
    g_nll = np.array(data.draw(st.lists(upstream, min_size=rows, max_size=rows)))
    grads = []
    for lib in (tinygrad_pool, torch):
        xs = lib.tensor(x.astype(dtype), requires_grad=True)
        y = xs.cumprod(dim)
        y.backward(lib.tensor(g_cumprod.astype(dtype)))
        logits = lib.tensor(x.astype(dtype), requires_grad=True)
        loss = lib.nn.functional.nll_loss(logits, lib.tensor(targets), ignore_index=ignore_index,
                                          reduction=reduction)
        loss.backward(lib.tensor(g_nll.astype(dtype)) if reduction == "none"
                      else lib.tensor(g_nll[0].astype(dtype)))
        grads.append((xs.grad.numpy(), logits.grad.numpy()))
    for ours, theirs in zip(*grads):
        assert ours.dtype == dtype
        np.testing.assert_array_equal(ours, theirs)


def test_finite_gradients_unchanged(torch):
    """The selecting backward gives the ordinary gradients where everything is finite
    (float64 finite differences agree)."""
    from helpers import check_grad
    x = np.array([-1.3, -0.4, 0.6, 2.2])
    check_grad(lambda t: t.masked_fill(tensor(x > 0), 0.7) * t, x)
    check_grad(lambda t: t.clamp(-1, 1) * t, x)
    check_grad(lambda t: tinygrad_pool.maximum(t, tensor(np.zeros(4))) * t, x)
    check_grad(lambda t: tinygrad_pool.nn.functional.hardswish(t * 3) * t, x)
    check_grad(lambda t: (t * tensor(np.array([1.0, 0.0, 1.0, 1.0]))).cumprod(0) * t, x)
    # (the padding row, constant here: by definition it gets no gradient)
    check_grad(lambda t: tinygrad_pool.nn.functional.embedding(
        tensor(np.array([0, 2, 1, 2, 0])), tinygrad_pool.cat([t, tensor(np.ones(2))]).reshape(3, 2),
        padding_idx=2) ** 2, x)
