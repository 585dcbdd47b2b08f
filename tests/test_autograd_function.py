"""tinygrad_pool.autograd.Function (torch's custom Function) and the list/tuple/single/dict forms
of autograd.grad and autograd.backward, against PyTorch and finite differences.

Each custom Function is written once, in a factory that takes the base class: the same code
becomes ``tinygrad_pool.autograd.Function`` and ``torch.autograd.Function`` subclasses (the
bodies use only methods both Tensors have), so a parity test runs literally the same op.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tinygrad_pool import autograd, enable_grad, no_grad, Tensor, tensor
from tinygrad_pool.autograd import Function
from tinygrad_pool.autograd.function import once_differentiable

from helpers import check_grad, exp_function, leaf, torch_parity


# ---- the custom Functions, for either framework ------------------------------------------------
def cube_function(base):
    class Cube(base):
        """y = x³, saving its input: dy = 3x² dx (a Tensor-op backward: differentiable again)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x
    return Cube


def scaled_mul_function(base, record=None):
    class ScaledMul(base):
        """out = alpha · x · w with a number alpha: d out = alpha (w dx + x dw)."""

        @staticmethod
        def forward(ctx, x, w, alpha):
            if record is not None:
                record.append(("forward", ctx.needs_input_grad))
            ctx.save_for_backward(x, w)
            ctx.alpha = alpha
            return x * w * alpha

        @staticmethod
        def backward(ctx, grad):
            if record is not None:
                record.append(("backward", ctx.needs_input_grad))
            x, w = ctx.saved_tensors
            return (grad * w * ctx.alpha if ctx.needs_input_grad[0] else None,
                    grad * x * ctx.alpha if ctx.needs_input_grad[1] else None, None)
    return ScaledMul


def split_function(base, received=None, materialize=True):
    class Split(base):
        """(a, b) = (k·x, eˣ), saving x and the output b: dx = k·da + b·db."""

        @staticmethod
        def forward(ctx, x, k):
            ctx.set_materialize_grads(materialize)
            ctx.k = k
            a, b = x * k, x.exp()
            ctx.save_for_backward(x, b)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            if received is not None:
                received.append((grad_a, grad_b))
            x, b = ctx.saved_tensors
            grad = grad_a * ctx.k if grad_a is not None else 0
            return (grad + grad_b * b if grad_b is not None else grad), None
    return Split


def scale_and_frozen_function(base, received):
    class ScaleAndFrozen(base):
        """(2x, 3x), the second marked non-differentiable."""

        @staticmethod
        def forward(ctx, x):
            frozen = x * 3
            ctx.mark_non_differentiable(frozen)
            return x * 2, frozen

        @staticmethod
        def backward(ctx, grad, grad_frozen):
            received.append(grad_frozen)
            return grad * 2
    return ScaleAndFrozen


def double_in_place_function(base):
    class DoubleInPlace(base):
        """x *= 2 in place (mark_dirty): dx_old = 2 dx_new."""

        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return DoubleInPlace


def identity_function(base):
    class Identity(base):
        """Hands its input back as it is."""

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad
    return Identity


def wrong_count_function(base):
    class WrongCount(base):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad  # forward had two arguments
    return WrongCount


Exp, Cube, Split = exp_function(Function), cube_function(Function), split_function(Function)
ScaledMul = scaled_mul_function(Function)


def _both(torch, factory, *args):
    return factory(Function, *args), factory(torch.autograd.Function, *args)


def _torch_error(call):
    with pytest.raises(Exception) as info:
        call()
    return info.value


# ---- one input ---------------------------------------------------------------------------------
def test_one_input_matches_torch_float64(torch, rng):
    ours, theirs = _both(torch, exp_function)
    out, tout, _, _ = torch_parity(torch, ours.apply, rng.standard_normal((3, 4)),
                                   torch_fn=theirs.apply)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__ == "ExpBackward"
    assert out.grad_fn.name == "ExpBackward" and "grad_fn=<ExpBackward>" in repr(out)


@pytest.mark.parametrize("factory", [exp_function, cube_function])
def test_one_input_matches_torch_float32(torch, rng, factory):
    ours, theirs = _both(torch, factory)
    data = rng.standard_normal((5,)).astype(np.float32)
    x, tx = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, ty = ours.apply(x), theirs.apply(tx)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("factory", [exp_function, cube_function])
def test_one_input_gradcheck(rng, factory):
    check_grad(factory(Function).apply, rng.standard_normal((2, 3)))


def test_forward_runs_under_no_grad_and_gets_the_arguments_as_given():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, label):
            from tinygrad_pool import is_grad_enabled
            seen.append((is_grad_enabled(), x, label))
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None

    x = leaf([1.0, 2.0])
    y = Probe.apply(x, "a label")
    grad_enabled, given, label = seen[0]
    assert grad_enabled is False and given is x and label == "a label"
    assert y.grad_fn is not None and y.requires_grad  # recorded after forward all the same


# ---- two inputs and a number -------------------------------------------------------------------
def test_two_inputs_and_a_number_match_torch(torch, rng):
    ours, theirs = _both(torch, scaled_mul_function)
    torch_parity(torch, lambda x, w: ours.apply(x, w, 2.5), rng.standard_normal((3, 2)),
                 rng.standard_normal((3, 2)), torch_fn=lambda x, w: theirs.apply(x, w, 2.5))


def test_two_inputs_and_a_number_gradcheck(rng):
    check_grad(lambda x, w: ScaledMul.apply(x, w, -1.5), rng.standard_normal(4),
               rng.standard_normal(4))


@pytest.mark.parametrize("x_requires, w_requires", [(True, True), (True, False), (False, True)])
def test_needs_input_grad_matches_torch(torch, x_requires, w_requires):
    ours_record, torch_record = [], []
    ours = scaled_mul_function(Function, ours_record)
    theirs = scaled_mul_function(torch.autograd.Function, torch_record)
    a, b = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    x, w = tensor(a, requires_grad=x_requires), tensor(b, requires_grad=w_requires)
    tx, tw = (torch.tensor(a, requires_grad=x_requires),
              torch.tensor(b, requires_grad=w_requires))
    ours.apply(x, w, 3.0).sum().backward()
    theirs.apply(tx, tw, 3.0).sum().backward()
    assert ours_record == torch_record
    assert ours_record[0] == ("forward", (x_requires, w_requires, False))
    for t, tt in ((x, tx), (w, tw)):
        assert (t.grad is None) == (tt.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy())


def test_needs_input_grad_ignores_grad_mode_and_nothing_is_recorded_under_no_grad(torch):
    record, torch_record = [], []
    ours = scaled_mul_function(Function, record)
    theirs = scaled_mul_function(torch.autograd.Function, torch_record)
    with no_grad():
        y = ours.apply(leaf([1.0]), leaf([2.0]), 1.0)
    with torch.no_grad():
        ty = theirs.apply(torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True), 1.0)
    assert record == torch_record == [("forward", (True, True, False))]
    assert y.grad_fn is None and not y.requires_grad and not ty.requires_grad


def test_keyword_arguments_bind_to_forward_parameters_as_in_torch(torch):
    ours, theirs = _both(torch, scaled_mul_function)
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    tx, tw = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0], requires_grad=True)
    y = ours.apply(x, w=w, alpha=2.0)
    ty = theirs.apply(tx, w=tw, alpha=2.0)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


@pytest.mark.parametrize("call, message", [
    (lambda F, x, w: F.apply(x, w, beta=1.0), "forward() got an unexpected keyword argument 'beta'"),
    (lambda F, x, w: F.apply(x, w, x=x), "forward() got multiple values for argument 'x'"),
    (lambda F, x, w: F.apply(x, alpha=1.0), "forward() missing required argument: 'w' (position 1)"),
])
def test_keyword_argument_errors_match_torch(torch, call, message):
    ours, theirs = _both(torch, scaled_mul_function)
    x = leaf([1.0])
    with pytest.raises(TypeError) as info:
        call(ours, x, x)
    assert str(info.value) == message
    tx = torch.ones(1, requires_grad=True)
    error = _torch_error(lambda: call(theirs, tx, tx))
    assert type(error) is TypeError and str(error) == message


# ---- two outputs -------------------------------------------------------------------------------
def test_two_outputs_both_used_match_torch(torch, rng):
    ours, theirs = _both(torch, split_function)

    def combine(F):
        def fn(x):
            a, b = F.apply(x, 1.5)
            return a * b + b
        return fn
    out, tout, _, _ = torch_parity(torch, combine(ours), rng.standard_normal((2, 3)),
                                   torch_fn=combine(theirs))


def test_two_outputs_share_the_class_name_and_lead_to_one_node(torch):
    a, b = Split.apply(leaf([1.0]), 2.0)
    ta, tb = split_function(torch.autograd.Function).apply(
        torch.ones(1, requires_grad=True), 2.0)
    assert a.grad_fn.name == b.grad_fn.name == type(ta.grad_fn).__name__ == "SplitBackward"
    assert ta.grad_fn is tb.grad_fn
    # (here each output has a node of its own, both leading to the one Function node)
    assert a.grad_fn.edges[0] is b.grad_fn.edges[0]


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("use", ["a", "b"])
def test_an_unused_output_gets_zeros_or_none_as_in_torch(torch, materialize, use):
    ours_received, torch_received = [], []
    ours = split_function(Function, ours_received, materialize)
    theirs = split_function(torch.autograd.Function, torch_received, materialize)
    data = np.array([0.5, -1.0, 2.0])
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    outputs, toutputs = ours.apply(x, 3.0), theirs.apply(tx, 3.0)
    pick = "ab".index(use)
    (outputs[pick] * outputs[pick]).sum().backward()
    (toutputs[pick] * toutputs[pick]).sum().backward()
    for got, expected in zip(ours_received[0], torch_received[0]):
        assert (got is None) == (expected is None)
        if got is not None:
            np.testing.assert_allclose(got.numpy(), expected.numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_two_outputs_gradcheck(rng):
    def fn(x):
        a, b = Split.apply(x, -0.7)
        return a * b
    check_grad(fn, rng.standard_normal((3, 2)))


def test_two_outputs_float32_match_torch(torch, rng):
    ours, theirs = _both(torch, split_function)
    data = rng.standard_normal(6).astype(np.float32)
    x, tx = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    a, b = ours.apply(x, 2.0)
    ta, tb = theirs.apply(tx, 2.0)
    (a * b).sum().backward()
    (ta * tb).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       k=st.floats(-3, 3, allow_nan=False), weight_a=st.floats(-2, 2), weight_b=st.floats(-2, 2),
       seed=st.integers(0, 2 ** 16))
def test_two_outputs_random_shapes_match_torch(shape, k, weight_a, weight_b, seed):
    torch = pytest.importorskip("torch")
    theirs = split_function(torch.autograd.Function)
    data = np.random.default_rng(seed).standard_normal(shape)
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    a, b = Split.apply(x, k)
    ta, tb = theirs.apply(tx, k)
    (a * weight_a + b * weight_b).sum().backward()
    (ta * weight_a + tb * weight_b).sum().backward()
    np.testing.assert_allclose(a.numpy(), ta.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_gradients_with_respect_to_outputs_of_several_match_torch(torch):
    ours, theirs = _both(torch, split_function)
    data = np.array([0.2, -0.4])
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    a, b = ours.apply(x, 2.0)
    ta, tb = theirs.apply(tx, 2.0)
    _close(autograd.grad((a * b).sum(), [a, b, x]),
           torch.autograd.grad((ta * tb).sum(), [ta, tb, tx]))
    a, b = ours.apply(x, 2.0)
    ta, tb = theirs.apply(tx, 2.0)
    b.retain_grad()
    tb.retain_grad()
    (a * b).sum().backward()
    (ta * tb).sum().backward()
    _close((b.grad, x.grad), (tb.grad, tx.grad))


def test_non_tensor_outputs_pass_through(torch):
    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5

        @staticmethod
        def backward(ctx, grad, grad_count):
            assert grad_count is None  # (torch passes None for a non-Tensor output too)
            return grad * 2

    x = leaf([1.0, 2.0])
    y, count = WithCount.apply(x)
    assert count == 5 and y.grad_fn.name == "WithCountBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ---- mark_non_differentiable -------------------------------------------------------------------
def test_mark_non_differentiable_matches_torch(torch):
    ours_received, torch_received = [], []
    ours = scale_and_frozen_function(Function, ours_received)
    theirs = scale_and_frozen_function(torch.autograd.Function, torch_received)
    data = np.array([1.0, -2.0])
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    (y, frozen), (ty, tfrozen) = ours.apply(x), theirs.apply(tx)
    assert not frozen.requires_grad and frozen.grad_fn is None and not tfrozen.requires_grad
    assert y.requires_grad and y.grad_fn.name == "ScaleAndFrozenBackward"
    np.testing.assert_allclose(frozen.numpy(), tfrozen.numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(ours_received[0].numpy(), torch_received[0].numpy())  # zeros


def test_integer_outputs_are_not_differentiable(torch):
    class Rounded(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, tensor(np.rint(x.numpy()).astype(np.int64))

        @staticmethod
        def backward(ctx, grad, grad_rounded):
            assert grad_rounded.dtype == np.int64 and not grad_rounded.numpy().any()
            return grad * 2

    x = leaf([1.4, 2.6])
    y, rounded = Rounded.apply(x)
    assert not rounded.requires_grad and y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ---- saved tensors -----------------------------------------------------------------------------
def _in_place_error(torch_module, factory, modify):
    F = factory(Function if torch_module is None else torch_module.autograd.Function)
    if torch_module is None:
        base = leaf([0.5, 1.0])
    else:
        base = torch_module.tensor([0.5, 1.0], dtype=torch_module.float64, requires_grad=True)
    x = base * 1  # a non-leaf: it may be written in place
    y = F.apply(x)
    modify(x, y)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    return str(info.value)


@pytest.mark.parametrize("factory, modify", [
    (cube_function, lambda x, y: x.mul_(2)),  # a saved input
    (exp_function, lambda x, y: y.add_(1)),  # a saved output
])
def test_saved_tensor_modified_in_place_raises_as_in_torch(torch, factory, modify):
    ours = _in_place_error(None, factory, modify)
    theirs = _in_place_error(torch, factory, modify)
    phrase = "one of the variables needed for gradient computation has been modified by an inplace"
    assert phrase in ours and phrase in theirs
    assert "is at version 1; expected version 0 instead" in ours


def test_saved_output_of_several_modified_in_place_raises():
    x = leaf([0.5, 1.0]) * 1
    a, b = Split.apply(x, 2.0)
    b.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (a + b).sum().backward()


def test_saved_input_written_before_the_call_is_not_an_error():
    base = leaf([0.5, 1.0])
    x = base * 1
    x.add_(1)  # at version 1 already when Cube saves it: only later writes count
    Cube.apply(x).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), 3 * np.array([1.5, 2.0]) ** 2)


def test_saved_tensors_come_back_as_torch_gives_them(torch):
    seen = {}

    class Saves(Function):
        @staticmethod
        def forward(ctx, x):
            tmp = x * 5
            y = x * 2
            ctx.save_for_backward(x, None, tmp, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            seen["saved"] = ctx.saved_tensors
            return grad * 2

    x = leaf([1.0, 2.0])
    y = Saves.apply(x)
    y.sum().backward()
    saved_x, nothing, tmp, saved_y = seen["saved"]
    assert saved_x is x and nothing is None  # (torch: the input itself)
    assert not tmp.requires_grad and tmp.grad_fn is None  # an intermediate: a constant
    np.testing.assert_allclose(tmp.numpy(), [5.0, 10.0])
    assert saved_y.grad_fn is y.grad_fn  # an output: made by the node, as in torch
    np.testing.assert_allclose(saved_y.numpy(), y.numpy())


def test_saved_tensors_are_freed_by_backward_and_kept_by_retain_graph():
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    y.sum().backward(retain_graph=True)
    assert len(y.grad_fn.saved_tensors) == 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_save_for_backward_of_a_non_tensor_raises_torch_error(torch):
    ours, theirs = [], []
    for base, out in ((Function, ours), (torch.autograd.Function, theirs)):
        class SavesNumber(base):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad
        out.append(SavesNumber)
    with pytest.raises(TypeError) as info:
        ours[0].apply(leaf([1.0]))
    error = _torch_error(lambda: theirs[0].apply(torch.ones(1, requires_grad=True)))
    assert str(info.value) == str(error) == ("save_for_backward can only save variables, but "
                                             "argument 1 is of type int")


# ---- what backward returns ---------------------------------------------------------------------
def test_wrong_number_of_gradients_raises_torch_error(torch):
    ours, theirs = _both(torch, wrong_count_function)
    with pytest.raises(RuntimeError) as info:
        ours.apply(leaf([1.0, 2.0]), 2.0).sum().backward()
    error = _torch_error(
        lambda: theirs.apply(torch.ones(2, requires_grad=True), 2.0).sum().backward())
    assert str(info.value) == str(error) == ("function WrongCountBackward returned an incorrect "
                                             "number of gradients (expected 2, got 1)")


def _returning(gradients):
    class Returns(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return gradients(grad)
    return Returns


def test_extra_trailing_none_gradients_are_accepted_as_in_torch():
    x = leaf([1.0, 2.0])
    _returning(lambda g: (g * 2, None, None)).apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("gradients, message", [
    (lambda g: (g, None, g), "returned an incorrect number of gradients (expected 2, got 3)"),
    (lambda g: [g, None], "returned an incorrect number of gradients (expected 2, got 1)"),
    (lambda g: (g, g), "returned a gradient different than None at position 2, but the "
                       "corresponding forward input was not a Variable"),
    (lambda g: (3.0, None), "expected Variable or None (got float)"),
    (lambda g: (tensor(np.ones(5)), None), "returned an invalid gradient at index 0 - got [5] "
                                           "but expected shape compatible with [2]"),
    (lambda g: (g.sum(), None), "returned an invalid gradient at index 0 - got [] but expected "
                                "shape compatible with [2]"),
])
def test_bad_gradients_raise_torch_errors(gradients, message):
    with pytest.raises(RuntimeError) as info:
        _returning(gradients).apply(leaf([1.0, 2.0]), 2.0).sum().backward()
    assert message in str(info.value) and "ReturnsBackward" in str(info.value)


def test_a_gradient_for_an_input_that_needs_none_is_not_checked_as_in_torch(torch):
    # torch's engine validates only the gradients it passes on: a constant input's is dropped
    class Theirs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, torch.ones(7)
    tx = torch.ones(2, requires_grad=True)
    Theirs.apply(tx, torch.ones(2)).sum().backward()
    x = leaf([1.0, 2.0])
    _returning(lambda g: (g, tensor(np.ones(7)))).apply(x, tensor(np.ones(2))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="invalid gradient at index 1 - got \\[7\\]"):
        _returning(lambda g: (g, tensor(np.ones(7)))).apply(x, leaf([1.0, 1.0])).sum().backward()


def test_a_broadcast_gradient_is_summed_down_and_cast_as_in_torch():
    x = tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    _returning(lambda g: (tensor(np.ones((3, 2))), None)).apply(x, 2.0).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


# ---- double backward ---------------------------------------------------------------------------
@pytest.mark.parametrize("factory", [cube_function, exp_function])
def test_double_backward_matches_torch(torch, rng, factory):
    ours, theirs = _both(torch, factory)
    data, weights = rng.standard_normal(4), rng.standard_normal(4)
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    (g,) = autograd.grad(ours.apply(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(theirs.apply(tx).sum(), tx, create_graph=True)
    assert g.grad_fn is not None
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy())
    (h,) = autograd.grad((g * tensor(weights)).sum(), x)
    (th,) = torch.autograd.grad((tg * torch.tensor(weights)).sum(), tx)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)


def test_double_backward_through_a_saved_output_of_several_matches_torch(torch, rng):
    ours, theirs = _both(torch, split_function)
    data = rng.standard_normal(3)
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    a, b = ours.apply(x, 2.0)
    ta, tb = theirs.apply(tx, 2.0)
    (g,) = autograd.grad((a * b).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad((ta * tb).sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy())
    (h,) = autograd.grad((g * g).sum(), x)
    (th,) = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)


def test_double_backward_matches_finite_differences(rng):
    def first_derivative(x):
        with enable_grad():  # (gradcheck evaluates fn under no_grad for the differences)
            (g,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        return g
    check_grad(first_derivative, rng.standard_normal(3))


def test_once_differentiable_backward_cannot_be_differentiated_again():
    seen = []

    class OnceCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            from tinygrad_pool import is_grad_enabled
            seen.append(is_grad_enabled())
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    x = leaf([1.0, 2.0])
    (g,) = autograd.grad(OnceCube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    assert seen == [False]  # it ran under no_grad although create_graph=True
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


# ---- inputs returned or written in place -------------------------------------------------------
def test_an_input_returned_as_is_becomes_a_new_output_on_the_same_memory(torch):
    ours, theirs = _both(torch, identity_function)
    x = leaf([1.0, 2.0])
    y = ours.apply(x)
    ty = theirs.apply(torch.ones(2, requires_grad=True))
    assert y is not x and x.grad_fn is None and y.grad_fn.name == "IdentityBackward"
    assert np.shares_memory(y.numpy(), x.numpy()) and type(ty.grad_fn).__name__ == "IdentityBackward"
    (y * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_mark_dirty_matches_torch(torch):
    ours, theirs = _both(torch, double_in_place_function)
    data = np.array([1.0, -2.0])
    x, tx = leaf(data), torch.tensor(data, requires_grad=True)
    z, tz = x * 1, tx * 1
    w, tw = ours.apply(z), theirs.apply(tz)
    assert w is z and tw is tz
    assert z.grad_fn.name == type(tz.grad_fn).__name__ == "DoubleInPlaceBackward"
    assert z._version == tz._version == 2
    np.testing.assert_allclose(z.numpy(), tz.detach().numpy())
    (w * w).sum().backward()
    (tw * tw).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_mark_dirty_on_a_leaf_that_requires_grad_raises(torch):
    ours, theirs = _both(torch, double_in_place_function)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ours.apply(leaf([1.0]))
    error = _torch_error(lambda: theirs.apply(torch.ones(1, requires_grad=True)))
    assert "a leaf Variable that requires grad" in str(error)


def test_mark_dirty_of_an_input_not_returned_raises():
    class Forgets(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not "
                                           "returned"):
        Forgets.apply(leaf([1.0]) * 1)


# ---- torch 2's setup_context form ---------------------------------------------------------------
def test_setup_context_form_matches_torch(torch, rng):
    def factory(base):
        class Square(base):
            @staticmethod
            def forward(x, k):
                return x * x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.save_for_backward(x)
                ctx.k = k

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 2 * ctx.k * x, None
        return Square
    ours, theirs = _both(torch, factory)
    torch_parity(torch, lambda x: ours.apply(x, 1.5), rng.standard_normal(5),
                 torch_fn=lambda x: theirs.apply(x, 1.5))


def test_a_function_without_backward_raises():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward"):
        NoBackward.apply(leaf([1.0])).sum().backward()


# ---- autograd.grad and autograd.backward: one tensor, sequences, dicts --------------------------
def _pair(torch, data=(1.0, -2.0, 0.5), other=(0.3, 0.7, -1.1)):
    x, w = leaf(data), leaf(other)
    tx, tw = (torch.tensor(data, dtype=torch.float64, requires_grad=True),
              torch.tensor(other, dtype=torch.float64, requires_grad=True))
    return x, w, tx, tw


def _close(ours, theirs):
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        ours, theirs = list(ours.values()), list(theirs.values())
    assert isinstance(ours, tuple if isinstance(theirs, tuple) else list)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.detach().numpy())


@pytest.mark.parametrize("form", ["single", "tuple", "list", "generator", "dict", "two outputs",
                                  "grad_outputs", "grad_outputs with None"])
def test_grad_argument_forms_match_torch(torch, form):
    x, w, tx, tw = _pair(torch)

    def call(grad, x, w, tensor):
        y, z = (x * w).sum(), (x * x).sum()
        if form == "single":
            return grad(y, x)
        if form == "tuple":
            return grad(y, (x, w))
        if form == "list":
            return grad([y], [x, w])
        if form == "generator":
            return grad(y, (t for t in [w, x]))
        if form == "dict":
            return grad(y, {"x": x, "w": w})
        if form == "two outputs":
            return grad((y, z), [x])
        if form == "grad_outputs":
            return grad(x * w, x, tensor([1.0, 2.0, 3.0]))
        return grad([y, z], x, [None, tensor(3.0)])
    _close(call(autograd.grad, x, w, lambda v: tensor(np.array(v))),
           call(torch.autograd.grad, tx, tw, lambda v: torch.tensor(v, dtype=torch.float64)))


def test_grad_materialize_grads_matches_torch(torch):
    x, w, tx, tw = _pair(torch)
    ours = autograd.grad((x * x).sum(), [x, w], materialize_grads=True)
    theirs = torch.autograd.grad((tx * tx).sum(), [tx, tw], materialize_grads=True)
    _close(ours, theirs)
    with pytest.raises(ValueError, match="Expected allow_unused to be True"):
        autograd.grad((x * x).sum(), [x, w], materialize_grads=True, allow_unused=False)


GRAD_ERRORS = {  # torch's message for each misuse of grad
    "`inputs` argument to `grad()` cannot be empty.":
        lambda grad, x, w, T: grad((x * w).sum(), []),
    "got 2 tensors and 1 gradients":
        lambda grad, x, w, T: grad([(x * w).sum(), x.sum()], x, [T(1.0)]),
    "One of the differentiated Tensors does not require grad":
        lambda grad, x, w, T: grad((x * w).sum(), [x, T(1.0)]),
    "element 0 of tensors does not require grad and does not have a grad_fn":
        lambda grad, x, w, T: grad(T(1.0), [x]),
    "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
    "allow_unused=True if this is the desired behavior.":
        lambda grad, x, w, T: grad((x * x).sum(), [x, w]),
    "Mismatch in shape: grad_output[0] has a shape of":
        lambda grad, x, w, T: grad((x * w).sum(), x, T([1.0, 2.0])),
}


@pytest.mark.parametrize("torch_message, call", GRAD_ERRORS.items())
def test_grad_errors_match_torch(torch, torch_message, call):
    x, w, tx, tw = _pair(torch)
    with pytest.raises(RuntimeError) as info:
        call(autograd.grad, x, w, lambda v: tensor(np.array(v)))
    error = _torch_error(lambda: call(torch.autograd.grad, tx, tw,
                                      lambda v: torch.tensor(v, dtype=torch.float64)))
    assert type(error) is RuntimeError and str(error).startswith(torch_message)
    assert torch_message in str(info.value)


@pytest.mark.parametrize("bad", [3.0, "x", [1.0]])
def test_grad_and_backward_reject_non_tensors_with_type_error(torch, bad):
    x, w, tx, tw = _pair(torch)
    with pytest.raises(TypeError, match="grad: outputs"):
        autograd.grad(bad, x)
    with pytest.raises(TypeError, match="grad: inputs"):
        autograd.grad((x * w).sum(), bad)
    with pytest.raises(TypeError, match="backward: tensors"):
        autograd.backward(bad)
    if isinstance(bad, float):  # (torch fails on the others with an AssertionError)
        with pytest.raises(TypeError):
            torch.autograd.grad(bad, tx)


@pytest.mark.parametrize("form", ["single", "list", "tuple", "grad_tensors single",
                                  "grad_tensors list", "inputs single", "inputs list",
                                  "inputs non-leaf", "empty"])
def test_backward_argument_forms_match_torch(torch, form):
    x, w, tx, tw = _pair(torch)

    def call(backward, x, w, tensor):
        y, z = (x * w).sum(), (x * x).sum()
        m = x * 2
        if form == "single":
            backward(y)
        elif form == "list":
            backward([y, z])
        elif form == "tuple":
            backward((y, x * 3), (None, tensor([1.0, 0.0, -1.0])))
        elif form == "grad_tensors single":
            backward(x * w, tensor([1.0, 2.0, 3.0]))
        elif form == "grad_tensors list":
            backward([y, z], [tensor(2.0), tensor(-1.0)])
        elif form == "inputs single":
            backward([y, z], inputs=w)
        elif form == "inputs list":
            backward(y, inputs=[x])
        elif form == "inputs non-leaf":
            backward((m * m).sum(), inputs=[m])
            return m.grad
        else:
            backward([])
        return [x.grad, w.grad]
    ours = call(autograd.backward, x, w, lambda v: tensor(np.array(v)))
    theirs = call(torch.autograd.backward, tx, tw, lambda v: torch.tensor(v, dtype=torch.float64))
    if isinstance(theirs, list):
        _close(ours, theirs)
    else:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


BACKWARD_ERRORS = {  # torch's message for each misuse of backward
    "`inputs` argument to `backward()` cannot be empty.":
        lambda backward, x, w, T: backward((x * w).sum(), inputs=[]),
    "got 2 tensors and 1 gradients":
        lambda backward, x, w, T: backward([(x * w).sum(), x.sum()], [T(1.0)]),
    "can't retain_grad on Tensor that has requires_grad=False":
        lambda backward, x, w, T: backward((x * w).sum(), inputs=[T([1.0])]),
    "element 0 of tensors does not require grad and does not have a grad_fn":
        lambda backward, x, w, T: backward(T(1.0)),
}


@pytest.mark.parametrize("torch_message, call", BACKWARD_ERRORS.items())
def test_backward_errors_match_torch(torch, torch_message, call):
    x, w, tx, tw = _pair(torch)
    with pytest.raises(RuntimeError) as info:
        call(autograd.backward, x, w, lambda v: tensor(np.array(v)))
    error = _torch_error(lambda: call(torch.autograd.backward, tx, tw,
                                      lambda v: torch.tensor(v, dtype=torch.float64)))
    assert type(error) is RuntimeError and str(error).startswith(torch_message)
    assert torch_message in str(info.value)
    assert x.grad is None and w.grad is None  # refused before anything changed


def test_backward_grad_variables_is_the_deprecated_grad_tensors():
    x = leaf([1.0, 2.0])
    with pytest.warns(FutureWarning, match="grad_variables"):
        autograd.backward(x * 3, grad_variables=tensor(np.array([1.0, -1.0])))
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -3.0])
