"""The second wave of activations (ops/activation.py, nn/activation.py): glu, prelu (its weight's
gradient too), softmin, tanhshrink, softshrink, hardshrink, threshold and rrelu — each against
torch in float32 and float64 (forward, backward and the second derivatives through a
create_graph backward), over random shapes; finite differences; rrelu's drawn slopes; module
reprs, parameters and init; torch's error types."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor
from tinygrad_pool import nn
import tinygrad_pool.nn.functional as F

from helpers import check_grad

TOLERANCES = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}

# name -> (ours, torch's): functions of a list of input tensors (the first is the input x)
ONE_INPUT = {
    "glu": (lambda x: F.glu(x), lambda t, x: t.nn.functional.glu(x)),
    "glu_dim0": (lambda x: F.glu(x, 0), lambda t, x: t.nn.functional.glu(x, 0)),
    "softmin": (lambda x: F.softmin(x, 1), lambda t, x: t.nn.functional.softmin(x, 1)),
    "softmin_last": (lambda x: F.softmin(x, -1), lambda t, x: t.nn.functional.softmin(x, -1)),
    "tanhshrink": (F.tanhshrink, lambda t, x: t.nn.functional.tanhshrink(x)),
    "softshrink": (F.softshrink, lambda t, x: t.nn.functional.softshrink(x)),
    "softshrink_1.5": (lambda x: F.softshrink(x, 1.5), lambda t, x: t.nn.functional.softshrink(x, 1.5)),
    "hardshrink": (F.hardshrink, lambda t, x: t.nn.functional.hardshrink(x)),
    "hardshrink_-1": (lambda x: F.hardshrink(x, -1.0), lambda t, x: t.nn.functional.hardshrink(x, -1.0)),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0),
                  lambda t, x: t.nn.functional.threshold(x, 0.5, -2.0)),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda t, x: t.nn.functional.rrelu(x, 0.1, 0.3)),
    "GLU": (lambda x: nn.GLU(1)(x), lambda t, x: t.nn.GLU(1)(x)),
    "Softmin": (lambda x: nn.Softmin(0)(x), lambda t, x: t.nn.Softmin(0)(x)),
    "Tanhshrink": (lambda x: nn.Tanhshrink()(x), lambda t, x: t.nn.Tanhshrink()(x)),
    "Softshrink": (lambda x: nn.Softshrink(0.7)(x), lambda t, x: t.nn.Softshrink(0.7)(x)),
    "Hardshrink": (lambda x: nn.Hardshrink(0.7)(x), lambda t, x: t.nn.Hardshrink(0.7)(x)),
    "Threshold": (lambda x: nn.Threshold(-0.5, 3.0)(x), lambda t, x: t.nn.Threshold(-0.5, 3.0)(x)),
    "RReLU_eval": (lambda x: nn.RReLU().eval()(x), lambda t, x: t.nn.RReLU().eval()(x)),
}
NAMES = sorted(ONE_INPUT)


def sample(shape, seed=0, scale=2.0) -> np.ndarray:
    """Normal values, some exact zeros and a few exactly at the kinks ±0.5."""
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape) * scale)
    flat = x.reshape(-1)
    flat[::7] = 0.0
    flat[2::9] = 0.5
    flat[4::13] = -0.5
    return x


def assert_parity(torch, ours_fn, torch_fn, arrays, dtype, seed=0, what="", second=True):
    """Forward, every input's gradient and (``second``) the second derivatives (d/d inputs and
    d/d the output gradient of Σ v · gradients), ours against torch's."""
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = ours_fn(*ours), torch_fn(torch, *theirs)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape), what
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol, err_msg=f"{what} forward")
    weights = rng.standard_normal(yo.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = autograd.grad(yo, ours, grad_outputs=[wo], create_graph=True)
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[wt], create_graph=True)
    for a, b in zip(go, gt):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **tol, err_msg=f"{what} backward")
    if not second:
        return
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    total_o = sum((g * tensor(d)).sum() for g, d in zip(go, directions))
    total_t = sum((g * torch.tensor(d)).sum() for g, d in zip(gt, directions))
    total_o.backward()
    if total_t.requires_grad:
        total_t.backward()
    for o, t in zip(ours + [wo], theirs + [wt]):
        expected = np.zeros(o.shape) if t.grad is None else t.grad.numpy()
        got = np.zeros(o.shape) if o.grad is None else o.grad.numpy()
        tolerance = dict(tol)
        if dtype == np.float32:
            tolerance["atol"] = 5e-5 * max(1.0, float(np.abs(expected).max(initial=0.0)))
        np.testing.assert_allclose(got, expected, **tolerance, err_msg=f"{what} second order")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_to_second_order(torch, name, dtype):
    ours, theirs = ONE_INPUT[name]
    assert_parity(torch, ours, theirs, [sample((4, 6, 2))], dtype, what=name)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NAMES), shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_matches_torch_over_shapes(name, shape, seed, double):
    torch = pytest.importorskip("torch")
    shape = [2 * shape[0], 2 * shape[1]] + shape[2:]  # (even: glu halves dims 0 and last)
    shape[-1] += shape[-1] % 2
    assert_parity(torch, *ONE_INPUT[name], [sample(tuple(shape), seed)],
                  np.float64 if double else np.float32, seed, what=name)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name):
    x = sample((4, 6), seed=3)
    x[np.abs(np.abs(x) - 0.5) < 1e-3] = 0.25  # away from the kinks at ±0.5
    x[np.abs(np.abs(x) - 0.7) < 1e-3] = 0.25
    x[x == 0] = 0.3
    check_grad(ONE_INPUT[name][0], x)


# ---- prelu: a second input, the learned slope ------------------------------------------------
PRELU_CASES = [((2, 3, 4), (3,)), ((2, 3, 4), (1,)), ((2, 3), ()), ((5,), (1,)), ((), (1,)),
               ((2, 3, 2, 2), (3,))]


def prelu_torch(t, x, w):
    return t.nn.functional.prelu(x, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape, weight_shape", PRELU_CASES)
def test_prelu_matches_torch_in_input_and_weight(torch, shape, weight_shape, dtype):
    x = sample(shape, seed=1)
    weight = np.random.default_rng(2).uniform(-0.5, 0.8, weight_shape)
    what = f"prelu {shape} {weight_shape}"
    # At x = 0 exactly, torch's first derivatives take the negative side (slope w) but its
    # double backward the positive one (self >= 0): ours differentiates its own backward, so
    # second derivatives are compared away from 0 (see docs/porting.md)
    assert_parity(torch, F.prelu, prelu_torch, [x, weight], dtype, what=what, second=False)
    x[x == 0] = 0.3
    assert_parity(torch, F.prelu, prelu_torch, [x, weight], dtype, what=what)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), per_channel=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_prelu_over_shapes(shape, per_channel, seed):
    torch = pytest.importorskip("torch")
    channels = shape[1] if len(shape) >= 2 and per_channel else 1
    weight = np.random.default_rng(seed).uniform(-1, 1, (channels,))
    x = sample(tuple(shape), seed)
    x[x == 0] = -0.3  # (second derivatives at exactly 0: see above)
    assert_parity(torch, F.prelu, prelu_torch, [x, weight], np.float64, seed, what="prelu")


def test_prelu_finite_differences():
    x = sample((3, 4, 2), seed=5)
    x[x == 0] = 0.4
    check_grad(F.prelu, x, np.array([0.1, -0.3, 0.6, 2.0]))
    check_grad(F.prelu, x, np.array([0.2]))


def test_prelu_module_learns_its_slope_as_torch(torch):
    torch.manual_seed(0)
    ours, theirs = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert repr(ours) == repr(theirs) == "PReLU(num_parameters=3)"
    assert ours.weight.shape == (3,) and ours.weight.dtype == np.float32
    assert [n for n, _ in ours.named_parameters()] == ["weight"]
    np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())
    assert nn.PReLU(dtype=tinygrad_pool.float64).weight.dtype == np.float64
    x = sample((2, 3, 4)).astype(np.float32)
    ours(tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6)
    ours.weight.data.fill_(3.0)
    ours.reset_parameters()
    np.testing.assert_array_equal(ours.weight.numpy(), np.full(3, 0.1, np.float32))
    assert ours.init == 0.1 and ours.num_parameters == 3


# ---- rrelu: random slopes in training ---------------------------------------------------------
def test_rrelu_training_draws_slopes_in_range_from_the_package_generator():
    x = tensor(np.concatenate([-np.ones(2000), np.ones(10), [0.0]]), requires_grad=True)
    tinygrad_pool.manual_seed(7)
    y = F.rrelu(x, 0.2, 0.4, training=True)
    slopes = -y.numpy()[:2000]
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4 and slopes.std() > 0.04
    np.testing.assert_array_equal(y.numpy()[2000:2010], np.ones(10))
    assert y.numpy()[-1] == 0
    y.backward(tensor(np.ones(2011)))
    # the gradient is each element's own slope (1 on the positive side)
    np.testing.assert_array_equal(x.grad.numpy()[:2000], slopes)
    np.testing.assert_array_equal(x.grad.numpy()[2000:2010], np.ones(10))
    tinygrad_pool.manual_seed(7)
    again = F.rrelu(tensor(x.numpy()), 0.2, 0.4, training=True)
    np.testing.assert_array_equal(again.numpy(), y.numpy())  # the same seed, the same slopes


def test_rrelu_training_second_derivative_is_the_slope_in_the_output_gradient():
    x = tensor(sample((3, 4)), requires_grad=True)
    w = tensor(np.ones((3, 4)), requires_grad=True)
    y = F.rrelu(x, training=True)
    (g,) = autograd.grad(y, [x], grad_outputs=[w], create_graph=True)
    g.sum().backward()
    slopes = np.where(x.numpy() > 0, 1.0, y.numpy() / np.where(x.numpy() == 0, 1, x.numpy()))
    nonzero = x.numpy() != 0
    np.testing.assert_allclose(w.grad.numpy()[nonzero], slopes[nonzero])
    assert x.grad is None or not x.grad.numpy().any()


def test_rrelu_module_trains_randomly_and_evaluates_at_the_mean_slope(torch):
    module = nn.RReLU(0.1, 0.3)
    assert repr(module) == repr(torch.nn.RReLU(0.1, 0.3)) == "RReLU(lower=0.1, upper=0.3)"
    assert repr(nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    x = tensor(-np.ones(500))
    trained = module(x).numpy()
    assert len(np.unique(trained)) > 1
    np.testing.assert_allclose(module.eval()(x).numpy(), np.full(500, -0.2))


def test_rrelu_in_place(torch):
    x = tensor(sample((3, 4)))
    y = F.rrelu(x, inplace=True)
    assert y is x
    np.testing.assert_allclose(x.numpy(), torch.nn.functional.rrelu(
        torch.tensor(sample((3, 4)))).numpy(), rtol=1e-12)
    z = tensor(sample((3, 4)))
    F.rrelu_(z, training=True)
    assert (z.numpy() <= np.maximum(sample((3, 4)), 0)).all()


# ---- threshold: integers, in place, NaN --------------------------------------------------------
def test_threshold_on_integers_nan_and_in_place_as_torch(torch):
    ints = np.array([1, 2, 3, -4])
    ours = F.threshold(tensor(ints), 1.5, 7.9)
    theirs = torch.nn.functional.threshold(torch.tensor(ints), 1.5, 7.9)
    assert ours.dtype == np.int64 and ours.numpy().tolist() == theirs.tolist()
    special = np.array([np.nan, 2.0, 0.5, -np.inf])
    np.testing.assert_array_equal(
        F.threshold(tensor(special), 0.5, 9.0).numpy(),
        torch.nn.functional.threshold(torch.tensor(special), 0.5, 9.0).numpy())
    x = tensor(np.array([0.1, 0.9]))
    assert F.threshold_(x, 0.5, 0.0) is x and x.numpy().tolist() == [0.0, 0.9]
    module = nn.Threshold(0.1, 20)
    assert repr(module) == repr(torch.nn.Threshold(0.1, 20))
    assert repr(nn.Threshold(1, 2, True)) == repr(torch.nn.Threshold(1, 2, True))


def test_shrinks_keep_nan_and_signs_as_torch(torch):
    special = np.array([np.nan, -0.5, 0.5, -0.2, 0.7, -np.inf, np.inf])
    for name in ("softshrink", "hardshrink", "tanhshrink"):
        ours = getattr(F, name)(tensor(special)).numpy()
        theirs = getattr(torch.nn.functional, name)(torch.tensor(special)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=1e-15, err_msg=name)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs), err_msg=name)


def test_integer_inputs_as_torch(torch):
    ints = np.array([-2, 1, 3, 0])
    tanh = F.tanhshrink(tensor(ints))
    assert tanh.dtype == np.float32
    np.testing.assert_allclose(tanh.numpy(), torch.nn.functional.tanhshrink(
        torch.tensor(ints)).numpy(), rtol=1e-6)
    for fn in (F.softshrink, F.hardshrink, F.glu, F.rrelu, lambda x: F.softmin(x, 0),
               lambda x: F.prelu(x, tensor(np.array([1])))):
        with pytest.raises(NotImplementedError):
            fn(tensor(ints))


def test_softmin_dtype_and_implicit_dim(torch):
    x = sample((2, 3, 4)).astype(np.float32)
    ours = F.softmin(tensor(x), 1, dtype=tinygrad_pool.float64)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours.numpy(), torch.nn.functional.softmin(
        torch.tensor(x), 1, dtype=torch.float64).numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        implicit = F.softmin(tensor(x))
    with pytest.warns(UserWarning):
        expected = torch.nn.functional.softmin(torch.tensor(x))
    np.testing.assert_allclose(implicit.numpy(), expected.numpy(), rtol=1e-6)


# ---- modules ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.GLU(), lambda m: m.GLU(dim=0), lambda m: m.Softmin(), lambda m: m.Softmin(1),
    lambda m: m.Tanhshrink(), lambda m: m.Softshrink(), lambda m: m.Softshrink(1.25),
    lambda m: m.Hardshrink(), lambda m: m.Hardshrink(2), lambda m: m.Threshold(0.5, -1.0),
    lambda m: m.RReLU(), lambda m: m.PReLU(), lambda m: m.PReLU(4, -0.5)])
def test_module_reprs_are_torchs(torch, make):
    assert repr(make(nn)) == repr(make(torch.nn))


# ---- errors -----------------------------------------------------------------------------------
def test_errors_are_torchs(torch):
    x = tensor(np.zeros((2, 3)))
    tx = torch.zeros(2, 3, dtype=torch.float64)
    cases = [
        (lambda m, a: m.glu(a, 1), RuntimeError),  # odd halving dim
        (lambda m, a: m.glu(a, 2), IndexError),
        (lambda m, a: m.softshrink(a, -1.0), RuntimeError),
        (lambda m, a: m.rrelu(a, 0.5, 0.1), RuntimeError),
        (lambda m, a: m.rrelu(a, 0.5, 0.1, training=True), RuntimeError),
    ]
    for fn, error in cases:
        with pytest.raises(error):
            fn(torch.nn.functional, tx)
        with pytest.raises(error):
            fn(F, x)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(tensor(np.float64(1.0)))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        F.prelu(x, tensor(np.ones(2)))
    with pytest.raises(RuntimeError, match="scalar or 1D"):
        F.prelu(x, tensor(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match="Type promoting"):
        F.prelu(x, tensor(np.ones(3, np.float32)))
    with pytest.raises(NotImplementedError):
        F.threshold(tensor(np.array([True])), 0, 1)
    with pytest.raises(RuntimeError, match="Mismatch"):
        torch.nn.functional.prelu(tx, torch.ones(2, dtype=torch.float64))


def test_threshold_truncates_toward_zero_and_checks_overflow_on_integers_as_torch(torch):
    ints = np.array([0, 1, -1, 2])
    for threshold, value in ((-0.5, 7), (1.9, 7.9), (0.5, -3)):
        ours = F.threshold(tensor(ints), threshold, value).numpy()
        theirs = torch.nn.functional.threshold(torch.tensor(ints), threshold, value).numpy()
        np.testing.assert_array_equal(ours, theirs)
    for fn in (lambda m, x: m.threshold(x, 0.5, 1e40), lambda m, x: m.threshold(x, 1e40, 1.0),
               lambda m, x: m.hardshrink(x, 1e40)):
        with pytest.raises(RuntimeError, match="without overflow"):
            fn(torch.nn.functional, torch.ones(2))
        with pytest.raises(RuntimeError, match="without overflow"):
            fn(F, tensor(np.ones(2, np.float32)))
    with pytest.raises(RuntimeError, match="without overflow"):
        F.threshold(tensor(np.ones(2, np.int8)), 0.5, 300)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.nn.functional.threshold(torch.ones(2, dtype=torch.int8), 0.5, 300)
    inf = F.threshold(tensor(np.array([1.0, 0.0], np.float32)), 0.5, float("inf")).numpy()
    assert inf.tolist() == [1.0, float("inf")]


@pytest.mark.parametrize("fn, at, name", [
    (F.softshrink, 0.5, "Softshrink"), (F.hardshrink, -0.5, "Hardshrink"),
    (lambda x: F.threshold(x, 0.5, 0.5), 0.5, "Threshold"),
    (lambda x: F.prelu(x, tensor(np.array([0.2]))), 0.0, "PReLU"),
    (lambda x: F.rrelu(x, training=True), 0.0, "RReLU")])
def test_gradcheck_at_a_kink_names_the_op(fn, at, name):
    x = tensor(np.array([at, 1.7, -1.3]), requires_grad=True)
    tinygrad_pool.manual_seed(0)  # (rrelu: the same slopes for every evaluation)

    def seeded(v):
        tinygrad_pool.manual_seed(0)
        return fn(v)
    with pytest.warns(UserWarning, match=f"{name}'s input"):
        assert tinygrad_pool.autograd.gradcheck(seeded, [x])


def test_prelu_in_anomaly_mode_with_a_weight_per_channel():
    x = tensor(sample((2, 3, 2)), requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly"), tinygrad_pool.autograd.detect_anomaly():
        F.prelu(x, tensor(np.array([0.1, 0.2, 0.3]))).sum().backward()
    assert x.grad.shape == (2, 3, 2)
