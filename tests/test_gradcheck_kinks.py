"""Kink-aware gradcheck: at points where fn is not differentiable it reports, per element, the
left and right derivatives, backward's value and which op chose it — and still fails on a
genuinely wrong backward, at a kink or not.

Every number is checked by hand: L = Σ R · fn(x) for the report's output weighting R, so a
one-sided derivative is a sum of the weights of the outputs the element moves on that side."""
import warnings

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Node, gradcheck, GradcheckError, Tensor, tensor
from tinygrad_pool.gradient_check import (Failure, GradcheckReport, Kink, NondifferentiablePointWarning,
                                     gradcheck_report)

from helpers import leaf

TOL = 1e-6  # finite differences of piecewise-linear functions are exact up to rounding


def kinks_by_index(report) -> dict:
    return {(k.input, k.index): k for k in report.kinks}


def assert_kink(kink, left, right, backward):
    assert (kink.left, kink.right, kink.backward) == pytest.approx((left, right, backward), abs=TOL)


def no_warning(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


class MyReLU(Node):
    """relu written by a user: correct, but this check has no kink rule for it"""

    def forward(ctx, x):
        ctx.x = x
        return np.maximum(x, 0)

    def backward(ctx, grad):
        return grad * (ctx.x > 0)


class ReLUTwiceTooSteep(Node):
    """relu whose backward doubles the gradient where x ≥ 0: wrong, and at 0 outside [0, R]"""

    def forward(ctx, x):
        ctx.x = x
        return np.maximum(x, 0)

    def backward(ctx, grad):
        return 2 * grad * (ctx.x >= 0)


class TripleWithDoubleBackward(Node):
    """3x whose backward says 6: wrong everywhere"""

    def forward(ctx, x):
        return 3 * x

    def backward(ctx, grad):
        return 6 * grad


# ---- elementwise kinks ------------------------------------------------------------------------
def test_relu_at_zero_passes_with_the_kink_reported():
    x = leaf([0.0, 1.5, -2.0])
    report = gradcheck_report(lambda t: t.relu(), [x])
    R = report.output_weights
    assert report.passed and report.failures == []
    [kink] = report.kinks
    assert (kink.input, kink.index) == (0, (0,))
    assert_kink(kink, left=0.0, right=R[0], backward=0.0)  # relu'(0) = 0, as torch
    assert kink.numeric == pytest.approx(R[0] / 2, abs=TOL) and not kink.central_agrees
    assert "ReLU's input (0,) is 0, its kink" in kink.reason and "relu'(0) = 0" in kink.reason
    with pytest.warns(NondifferentiablePointWarning, match=r"input 0 element \(0,\): ReLU") as seen:
        assert gradcheck(lambda t: t.relu(), [x]) is True
    assert len(seen) == 1 and issubclass(NondifferentiablePointWarning, UserWarning)
    assert f"left derivative 0, right derivative {R[0]:.6g}; backward gave 0" in str(seen[0].message)


def test_torch_gradcheck_fails_at_relu_zero_where_ours_passes_with_a_report(torch):
    """An intentional difference: torch reports a Jacobian mismatch; we explain the kink."""
    tx = torch.tensor([0.0, 1.5, -2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):  # (torch's GradcheckError)
        torch.autograd.gradcheck(torch.relu, (tx,))
    torch.relu(tx).backward(torch.ones(3, dtype=torch.float64))
    x = leaf([0.0, 1.5, -2.0])
    with pytest.warns(NondifferentiablePointWarning):
        assert gradcheck(lambda t: t.relu(), [x])
    report = gradcheck_report(lambda t: t.relu(), [x])
    # both engines choose relu'(0) = 0: our backward equals torch's for the same weighting
    np.testing.assert_allclose(report.analytical[0], tx.grad.numpy() * report.output_weights)


def test_abs_at_zero_is_a_kink_the_central_difference_agrees_with():
    x = leaf([0.0, -1.0])
    report = no_warning(lambda: gradcheck_report(lambda t: t.abs(), [x]))
    R = report.output_weights
    [kink] = report.kinks
    assert kink.index == (0,) and kink.central_agrees  # sign(0) = 0 = the average of ∓R
    assert_kink(kink, left=-R[0], right=R[0], backward=0.0)
    assert "Abs's input (0,) is 0" in kink.reason and "sign(0) = 0" in kink.reason
    assert no_warning(lambda: gradcheck(lambda t: t.abs(), [x]))  # nothing needed excusing


def test_clamp_at_both_bounds():
    x = leaf([-1.0, 0.5, 1.0])
    report = gradcheck_report(lambda t: t.clamp(-1.0, 1.0), [x])
    R = report.output_weights
    kinks = kinks_by_index(report)
    assert sorted(kinks) == [(0, (0,)), (0, (2,))] and report.passed
    # the bounds pass the gradient (slope 1 there), as torch: the inner side's derivative
    assert_kink(kinks[0, (0,)], left=0.0, right=R[0], backward=R[0])
    assert_kink(kinks[0, (2,)], left=R[2], right=0.0, backward=R[2])
    assert "Clamp's input (0,) is -1, its kink" in kinks[0, (0,)].reason
    assert "Clamp's input (2,) is 1, its kink" in kinks[0, (2,)].reason


def test_a_point_within_the_step_of_the_kink():
    x = leaf([1e-7])  # 0 lies between x - ε and x + ε
    report = gradcheck_report(lambda t: t.relu(), [x])
    R = report.output_weights
    [kink] = report.kinks
    assert_kink(kink, left=0.1 * R[0], right=R[0], backward=R[0])  # (1e-7 - 0) / 1e-6 = 0.1
    assert "within the step of its kink at 0" in kink.reason


def test_maximum_with_a_tie():
    a, b = leaf([1.0, 2.0]), leaf([1.0, 3.0])
    report = no_warning(lambda: gradcheck_report(lambda p, q: p.maximum(q), [a, b]))
    R = report.output_weights
    kinks = kinks_by_index(report)
    assert sorted(kinks) == [(0, (0,)), (1, (0,))]
    for kink in kinks.values():  # each side half, as torch: the central difference exactly
        assert_kink(kink, left=0.0, right=R[0], backward=R[0] / 2)
        assert kink.central_agrees
        assert "Maximum's inputs tie at (0,) (a = b = 1)" in kink.reason and "half" in kink.reason


def test_max_reduction_tie_is_split():
    x = leaf([[1.0, 2.0], [2.0, 0.0]])
    report = gradcheck_report(lambda t: t.max(), [x])
    R = float(report.output_weights)
    kinks = kinks_by_index(report)
    assert sorted(kinks) == [(0, (0, 1)), (0, (1, 0))]
    for kink in kinks.values():
        assert_kink(kink, left=0.0, right=R, backward=R / 2)
        assert "tie between element (0, 1) and element (1, 0)" in kink.reason
        assert "equally among the 2" in kink.reason


def test_max_along_a_dim_gives_the_first():
    x = leaf([[2.0, 2.0], [0.0, 1.0]])
    report = gradcheck_report(lambda t: t.max(1)[0], [x])
    R = report.output_weights
    kinks = kinks_by_index(report)
    assert_kink(kinks[0, (0, 0)], left=0.0, right=R[0], backward=R[0])
    assert_kink(kinks[0, (0, 1)], left=0.0, right=R[0], backward=0.0)
    assert "selected index 0 (the first" in kinks[0, (0, 1)].reason


# ---- max pooling ------------------------------------------------------------------------------
TIED = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # one window, its max 1 at cells (0,1) and (1,0)


@pytest.mark.parametrize("ties, first, second", [("first", 1, 0), ("split", 0.5, 0.5),
                                                 ("all", 1, 1)])
def test_max_pool_tie_reports_the_rule_and_the_chosen_cell(ties, first, second):
    x = leaf(TIED)
    report = gradcheck_report(lambda t: F.max_pool2d(t, 2, ties=ties), [x])
    R = float(report.output_weights.reshape(-1)[0])
    kinks = kinks_by_index(report)
    assert sorted(kinks) == [(0, (0, 0, 0, 1)), (0, (0, 0, 1, 0))] and report.passed
    assert_kink(kinks[0, (0, 0, 0, 1)], left=0.0, right=R, backward=first * R)
    assert_kink(kinks[0, (0, 0, 1, 0)], left=0.0, right=R, backward=second * R)
    reason = kinks[0, (0, 0, 0, 1)].reason
    assert reason.startswith("tie between window cell (0, 1) (pixel (0, 1)) and window cell (1, 0) "
                             "(pixel (1, 0)) of MaxPool2d window (0, 0, 0, 0); ")
    if ties == "first":  # the chosen cell is the argmax the op saved
        _, argmax = F.max_pool2d(tensor(TIED), 2, return_indices=True)
        assert int(argmax.numpy().reshape(-1)[0]) == 1  # flat pixel 1 = (0, 1)
        assert "ties='first' chose window cell (0, 1) (pixel (0, 1))" in reason
    elif ties == "split":
        assert "1/2 of the gradient" in reason
    else:
        assert "not a subgradient" in reason


def test_max_pool_overlapping_windows_one_pixel_max_of_several():
    # 3×3, kernel 2, stride 1: the centre is in all four windows. It ties with pixel (0, 0) in
    # window (0, 0) and alone is the max of the other three.
    data = np.array([[5.0, 1.0, 2.0], [3.0, 5.0, 0.5], [0.25, 4.0, 1.5]]).reshape(1, 1, 3, 3)
    report = gradcheck_report(lambda t: F.max_pool2d(t, 2, stride=1), [leaf(data)])
    R = report.output_weights.reshape(4)  # windows (0,0), (0,1), (1,0), (1,1)
    kinks = kinks_by_index(report)
    assert sorted(kinks) == [(0, (0, 0, 0, 0)), (0, (0, 0, 1, 1))] and report.passed
    # down, the centre loses window (0, 0) only; up, it wins all four. torch's first is (0, 0)
    assert_kink(kinks[0, (0, 0, 1, 1)], left=R[1:].sum(), right=R.sum(), backward=R[1:].sum())
    assert_kink(kinks[0, (0, 0, 0, 0)], left=0.0, right=R[0], backward=R[0])
    assert "of MaxPool2d window (0, 0, 0, 0); ties='first' chose window cell (0, 0) (pixel (0, 0))" \
        in kinks[0, (0, 0, 1, 1)].reason


def test_adaptive_max_pool_tie_names_the_pixels():
    data = np.zeros((1, 1, 3, 3))
    data[0, 0, 0, 1] = data[0, 0, 1, 0] = 2.0  # both in window (0, 0) of a 2×2 adaptive pool
    report = gradcheck_report(lambda t: F.adaptive_max_pool2d(t, 2), [leaf(data)])
    reasons = [k.reason for k in report.kinks if k.index == (0, 0, 1, 0)]
    assert report.passed and reasons
    assert "tie between pixel (0, 1) and pixel (1, 0) of AdaptiveMaxPool2d window (0, 0, 0, 0)" \
        in reasons[0] and "first, pixel (0, 1)" in reasons[0]


# ---- genuine failures -------------------------------------------------------------------------
def test_a_wrong_backward_still_fails_naming_the_element():
    with pytest.raises(GradcheckError, match=r"input 0 \(shape \(3,\)\) element \(\d,\): backward "
                                             r"gives .* but finite differences give"):
        gradcheck(TripleWithDoubleBackward.apply, [leaf([0.5, -1.0, 2.0])])
    report = gradcheck_report(TripleWithDoubleBackward.apply, [leaf([0.5, -1.0, 2.0])])
    R = report.output_weights
    assert report.kinks == [] and not report.passed
    assert [f.index for f in report.failures] == [(0,), (1,), (2,)]
    for f, r in zip(report.failures, R):
        assert (f.backward, f.numeric, f.reason) == (pytest.approx(6 * r), pytest.approx(3 * r), "")


def test_a_wrong_backward_at_a_kink_fails():
    x = leaf([0.0, 1.0])
    report = gradcheck_report(ReLUTwiceTooSteep.apply, [x])
    R = report.output_weights
    assert report.kinks == [] and {f.index for f in report.failures} == {(0,), (1,)}
    at_kink = next(f for f in report.failures if f.index == (0,))
    assert (at_kink.left, at_kink.right, at_kink.backward) == pytest.approx((0.0, R[0], 2 * R[0]))
    assert "ReLUTwiceTooSteep" in at_kink.reason  # a user Function: no rule, but named
    assert "outside [left, right]" in str(at_kink)
    with pytest.raises(GradcheckError, match="2 of 2 elements differ"):
        gradcheck(ReLUTwiceTooSteep.apply, [x])


def test_a_kink_inside_a_user_function_gets_the_generic_reason():
    x = leaf([0.0, 2.0])
    report = gradcheck_report(MyReLU.apply, [x])
    [kink] = report.kinks
    assert_kink(kink, left=0.0, right=report.output_weights[0], backward=0.0)
    assert kink.reason.startswith("left and right derivatives differ, so fn is not differentiable here")
    assert "MyReLU" in kink.reason
    with pytest.warns(NondifferentiablePointWarning, match="MyReLU"):
        gradcheck(MyReLU.apply, [x])


def test_every_op_the_element_moves_that_declares_no_kink_is_named():
    """An op says where its kinks are (kinks.py); of those that say nothing, the check cannot
    tell which is at a kink, so it names each one the element moves — the user's, and ours."""
    report = gradcheck_report(lambda t: (MyReLU.apply(t) * 2).sum(), [leaf([0.0, 2.0])])
    [kink] = report.kinks
    assert kink.reason.endswith("it goes through MyReLU, Mul, Sum, Functions this check has no "
                                "kink rule for")
    report = gradcheck_report(lambda t: (t * 2).relu().sum(), [leaf([0.0, 2.0])])
    assert [k.reason for k in report.kinks] == ["ReLU's input (0,) is 0, its kink: backward takes "
                                                "relu'(0) = 0, as PyTorch"]


def test_a_graph_that_changes_with_the_element_is_explained():
    def fn(t):  # Python control flow on the value: a different op either side of 0
        return t * 2 if float(t.numpy()[0]) > 0 else -t
    report = gradcheck_report(fn, [leaf([0.0])])
    [kink] = report.kinks
    R = report.output_weights
    assert_kink(kink, left=-R[0], right=2 * R[0], backward=-R[0])
    assert "records a different graph at x - eps and at x + eps" in kink.reason


# ---- the report and the warning ---------------------------------------------------------------
def test_report_structure_and_inputs_left_alone():
    data = np.array([0.0, 1.0, -1.0])
    x = leaf(data)
    x.grad = tensor(np.full(3, 7.0))
    report = gradcheck_report(lambda t: t.relu() * 3, [x], seed=4)
    assert isinstance(report, GradcheckReport) and report.passed
    np.testing.assert_array_equal(report.output_weights,
                                  np.random.default_rng(4).standard_normal(3))
    R = report.output_weights
    np.testing.assert_allclose(report.analytical[0], [0.0, 3 * R[1], 0.0])
    np.testing.assert_allclose(report.numerical[0], [1.5 * R[0], 3 * R[1], 0.0], atol=TOL)
    [kink] = report.kinks
    assert isinstance(kink, Kink) and kink.index == (0,)
    assert str(kink).startswith("input 0 element (0,): ReLU's input (0,) is 0")
    assert "0 failures, 1 kink" in str(report)
    np.testing.assert_array_equal(x.numpy(), data)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 7.0))  # .grad untouched
    failing = gradcheck_report(TripleWithDoubleBackward.apply, [leaf([1.0])])
    assert isinstance(failing.failures[0], Failure) and "FAILED" in str(failing)


def test_the_warning_lists_a_few_kinks_and_counts_the_rest():
    with pytest.warns(NondifferentiablePointWarning) as seen:
        gradcheck(lambda t: t.relu(), [leaf(np.zeros(8))])
    message = str(seen[0].message)
    assert "not differentiable at 8 elements" in message
    assert message.count("ReLU's input") == 5 and "... and 3 more" in message


def test_smooth_functions_report_no_kinks(rng):
    inputs = [leaf(rng.standard_normal((2, 3))), leaf(np.abs(rng.standard_normal(3)) + 0.5)]
    report = no_warning(lambda: gradcheck_report(lambda a, b: (a / b).tanh() * a.exp(), inputs))
    assert report.passed and report.kinks == []


def test_bad_arguments_name_gradcheck_report():
    with pytest.raises(TypeError, match="gradcheck_report: fn must be callable, got int"):
        gradcheck_report(3, [leaf([1.0])])
    with pytest.raises(ValueError, match="gradcheck_report: eps must be a positive finite step"):
        gradcheck_report(lambda t: t, [leaf([1.0])], eps=0.0)
    with pytest.raises(ValueError, match="gradcheck_report: no input has requires_grad"):
        gradcheck_report(lambda t: t, [tensor([1.0])])
