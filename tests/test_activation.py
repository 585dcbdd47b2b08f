"""Activations (ops/activation.py, nn/activation.py): each one against torch in float32 and
float64 — forward, backward, and the second derivative through a create_graph backward (with
respect to the input and to the output gradient) — over random shapes; finite differences;
what each op saves; in-place forms; softmax's implicit dim; reprs; errors; erf itself."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tinygrad_pool import autograd, Tensor, tensor
from tinygrad_pool.nn import activation as nn_act
from tinygrad_pool.ops import activation as A

from helpers import check_grad

# name -> (ours, torch's), each a function of the input tensor (torch's takes torch as well).
ACTIVATIONS = {
    "leaky_relu": (lambda x: A.leaky_relu(x), lambda t, x: t.nn.functional.leaky_relu(x)),
    "leaky_relu_0.2": (lambda x: A.leaky_relu(x, 0.2),
                       lambda t, x: t.nn.functional.leaky_relu(x, 0.2)),
    "leaky_relu_neg": (lambda x: A.leaky_relu(x, -1.5),
                       lambda t, x: t.nn.functional.leaky_relu(x, -1.5)),
    "elu": (lambda x: A.elu(x), lambda t, x: t.nn.functional.elu(x)),
    "elu_0.4": (lambda x: A.elu(x, 0.4), lambda t, x: t.nn.functional.elu(x, 0.4)),
    "gelu": (lambda x: A.gelu(x), lambda t, x: t.nn.functional.gelu(x)),
    "gelu_tanh": (lambda x: A.gelu(x, approximate="tanh"),
                  lambda t, x: t.nn.functional.gelu(x, approximate="tanh")),
    "silu": (lambda x: A.silu(x), lambda t, x: t.nn.functional.silu(x)),
    "erf": (lambda x: A.erf(x), lambda t, x: t.erf(x)),
    # The modules (over ops of other files: their reprs and dims are what is tested here)
    "ReLU": (lambda x: nn_act.ReLU()(x), lambda t, x: t.nn.ReLU()(x)),
    "Sigmoid": (lambda x: nn_act.Sigmoid()(x), lambda t, x: t.nn.Sigmoid()(x)),
    "Tanh": (lambda x: nn_act.Tanh()(x), lambda t, x: t.nn.Tanh()(x)),
    "Softmax": (lambda x: nn_act.Softmax(-1)(x), lambda t, x: t.nn.Softmax(-1)(x)),
    "LogSoftmax": (lambda x: nn_act.LogSoftmax(0)(x), lambda t, x: t.nn.LogSoftmax(0)(x)),
    "GELU_module": (lambda x: nn_act.GELU("tanh")(x), lambda t, x: t.nn.GELU("tanh")(x)),
    "ELU_module": (lambda x: nn_act.ELU(2.0)(x), lambda t, x: t.nn.ELU(2.0)(x)),
    "LeakyReLU_module": (lambda x: nn_act.LeakyReLU(0.3)(x), lambda t, x: t.nn.LeakyReLU(0.3)(x)),
    "SiLU_module": (lambda x: nn_act.SiLU()(x), lambda t, x: t.nn.SiLU()(x)),
}
NAMES = sorted(ACTIVATIONS)
TOLERANCES = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}
# float32 second derivatives: our recorded backward of the tanh GELU differentiates 1 - tanh²u
# and the sigmoid's s(1 - s), which cancel where they saturate (|x| ≳ 3): up to ~2e-5 times the
# largest value compared from the float64 value (found by hypothesis at x = -5.1), where torch's
# closed-form double backward stays within ~2e-6. float64 agrees to 1e-10 everywhere. So float32
# second derivatives get an absolute tolerance scaled by the largest value (see assert_parity).
SECOND_ORDER = {np.float32: dict(rtol=2e-5, atol=5e-5), np.float64: TOLERANCES[np.float64]}


def assert_parity(torch, name, x, dtype, seed=0):
    """Forward, gradient and second derivatives of ``name`` at ``x``, ours against torch's."""
    ours_fn, torch_fn = ACTIVATIONS[name]
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    x = x.astype(dtype)
    weights, direction = (rng.standard_normal(x.shape).astype(dtype) for _ in range(2))

    xo, wo = tensor(x, requires_grad=True), tensor(weights, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(weights, requires_grad=True)
    yo, yt = ours_fn(xo), torch_fn(torch, xt)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol, err_msg=f"{name} forward")

    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    assert go.dtype == dtype
    np.testing.assert_allclose(go.numpy(), gt.detach().numpy(), **tol, err_msg=f"{name} backward")

    # Second order: d/dx and d/dw of Σ v · (∂y/∂x)ᵀw, through the recorded backward.
    (go * tensor(direction)).sum().backward()
    (gt * torch.tensor(direction)).sum().backward()
    for ours, theirs, what in ((xo, xt, "d²/dx²"), (wo, wt, "d²/dx dw")):
        expected = np.zeros(x.shape) if theirs.grad is None else theirs.grad.numpy()
        got = np.zeros(x.shape) if ours.grad is None else ours.grad.numpy()
        tolerance = dict(SECOND_ORDER[dtype])
        if dtype == np.float32:  # float32 rounding is relative to the largest terms summed
            tolerance["atol"] *= max(1.0, float(np.abs(expected).max(initial=0.0)))
        np.testing.assert_allclose(got, expected, **tolerance, err_msg=f"{name} {what}")


def sample(shape, seed=0, scale=2.0) -> np.ndarray:
    """Normal values, some exact zeros and a few far in the tails (erf's other branch, and
    where exp would overflow)."""
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    flat = x.reshape(-1)
    flat[::7] = 0.0
    flat[3::11] *= 6.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_to_second_order(torch, name, dtype):
    assert_parity(torch, name, sample((4, 3, 5)), dtype)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(NAMES), shape=st.lists(st.integers(0, 5), min_size=0, max_size=4),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_matches_torch_over_shapes(name, shape, seed, double):
    torch = pytest.importorskip("torch")
    assert_parity(torch, name, sample(tuple(shape), seed), np.float64 if double else np.float32,
                  seed)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("ReLU",)])
def test_gradient_matches_finite_differences(name):
    x = sample((3, 4), seed=1)
    x[np.abs(x) < 1e-3] = 0.5  # away from the kinks of leaky_relu and elu
    check_grad(ACTIVATIONS[name][0], x)


def test_extremes_do_not_overflow_and_infinities_are_torchs(torch):
    finite = np.array([-1e4, -800.0, -40.0, 0.0, 40.0, 800.0, 1e4])
    infinite = np.array([np.inf, -np.inf, np.nan])  # torch: gelu(-inf) = silu(-inf) = nan
    for name in ("elu", "gelu", "gelu_tanh", "silu", "leaky_relu", "erf"):
        ours_fn, torch_fn = ACTIVATIONS[name]
        with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow here
            ours = ours_fn(tensor(finite)).numpy()
        np.testing.assert_allclose(ours, torch_fn(torch, torch.tensor(finite)).numpy(),
                                   rtol=1e-12, atol=1e-300, err_msg=name)
        with np.errstate(invalid="ignore"):
            ours = ours_fn(tensor(infinite)).numpy()
        np.testing.assert_array_equal(ours, torch_fn(torch, torch.tensor(infinite)).numpy(),
                                      err_msg=name)


def test_erf_values_match_the_reference_to_double_precision():
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 1e-300, 2.0, -2.0, 30.0]])
    reference = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(A.erf_values(x), reference, rtol=0, atol=2e-15)
    assert np.isnan(A.erf_values(np.array([np.nan]))[0])
    assert A.erf_values(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]


@pytest.mark.parametrize("fn, torch_name", [
    (lambda x: A.leaky_relu(x, 0.1), "leaky_relu"), (A.elu, "elu"), (A.gelu, "gelu"),
    (lambda x: A.gelu(x, approximate="tanh"), "gelu"), (A.silu, "silu"), (A.erf, "erf")])
def test_each_saves_its_input_and_refuses_a_modified_one_as_torch(torch, fn, torch_name):
    x = tensor(np.linspace(-2, 2, 6), requires_grad=True)
    h = x * 1.0
    y = fn(h)
    saved = y.grad_fn.saved_for_backward()
    assert list(saved) == ["x"] and saved["x"] is h.numpy()
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # torch saves the input too: the same edit is refused there
    xt = torch.linspace(-2, 2, 6, dtype=torch.float64, requires_grad=True)
    ht = xt * 1.0
    yt = getattr(torch.nn.functional, torch_name, None)(ht) if torch_name != "erf" \
        else torch.erf(ht)
    ht.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        yt.sum().backward()


@pytest.mark.parametrize("ours, theirs", [
    (lambda x: nn_act.ReLU(inplace=True)(x), lambda t, x: t.nn.ReLU(inplace=True)(x)),
    (lambda x: A.leaky_relu(x, 0.2, inplace=True),
     lambda t, x: t.nn.functional.leaky_relu(x, 0.2, inplace=True)),
    (lambda x: nn_act.ELU(0.5, inplace=True)(x), lambda t, x: t.nn.ELU(0.5, inplace=True)(x)),
    (lambda x: nn_act.SiLU(inplace=True)(x), lambda t, x: t.nn.SiLU(inplace=True)(x)),
])
def test_inplace_forms_write_into_the_input_and_backpropagate_as_torch(torch, ours, theirs):
    x = sample((3, 4), seed=2)
    xo = tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ho, ht = xo * 2.0, xt * 2.0
    yo, yt = ours(ho), theirs(torch, ht)
    assert yo is ho and ho._version == 1
    np.testing.assert_allclose(ho.numpy(), ht.detach().numpy(), rtol=1e-12, atol=1e-300)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    # A leaf that requires grad cannot be overwritten, in either library
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ours(tensor(x, requires_grad=True))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        theirs(torch, torch.tensor(x, requires_grad=True))


def test_inplace_without_grad_just_writes():
    x = tensor(np.array([-2.0, 3.0]))
    assert A.elu(x, inplace=True) is x
    np.testing.assert_allclose(x.numpy(), [math.expm1(-2.0), 3.0])


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("layer", ["Softmax", "LogSoftmax"])
def test_softmax_without_dim_picks_torchs_legacy_dim(torch, layer, ndim):
    x = np.random.default_rng(ndim).standard_normal((2, 3, 4, 5)[:ndim])
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        ours = getattr(nn_act, layer)()(tensor(x))
    with pytest.warns(UserWarning):
        theirs = getattr(torch.nn, layer)()(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_the_implicit_dim_rule():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        dims = [nn_act.implicit_softmax_dim("softmax", ndim) for ndim in range(6)]
    assert dims == [0, 0, 1, 0, 1, 1]


REPRS = [("ReLU", ()), ("ReLU", (True,)), ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)),
         ("ELU", ()), ("ELU", (1,)), ("ELU", (0.5, True)), ("GELU", ()), ("GELU", ("tanh",)),
         ("SiLU", ()), ("SiLU", (True,)), ("Sigmoid", ()), ("Tanh", ()), ("Softmax", ()),
         ("Softmax", (1,)), ("LogSoftmax", (-1,))]


@pytest.mark.parametrize("layer, args", REPRS)
def test_reprs_match_torch(torch, layer, args):
    assert repr(getattr(nn_act, layer)(*args)) == repr(getattr(torch.nn, layer)(*args))


def test_argument_errors_name_the_function_and_the_value():
    x = tensor(np.zeros(3))
    with pytest.raises(RuntimeError,
                       match=r"gelu: approximate must be one of \('none', 'tanh'\), got 'exact'"):
        A.gelu(x, approximate="exact")
    with pytest.raises(RuntimeError, match="approximate"):
        nn_act.GELU("exact")(x)  # torch too accepts it at construction and refuses the call
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number, got str"):
        A.leaky_relu(x, "0.1")
    with pytest.raises(TypeError, match="elu: alpha must be a number"):
        A.elu(x, None)
    for fn, name in ((A.leaky_relu, "leaky_relu"), (A.elu, "elu"), (A.gelu, "gelu"),
                     (A.silu, "silu")):
        with pytest.raises(NotImplementedError, match=f"{name}: input must be a floating-point "
                                                      f"tensor, got dtype int64"):
            fn(tensor(np.arange(3)))
        with pytest.raises(TypeError, match=f"{name}: input must be a Tensor, got str"):
            fn("x")


def test_int_input_errors_are_torchs_type_too(torch):
    with pytest.raises(NotImplementedError):
        torch.nn.functional.elu(torch.arange(3))
    with pytest.raises(RuntimeError):
        torch.nn.functional.gelu(torch.zeros(3), approximate="exact")


@pytest.mark.parametrize("shape", [(3, 4), (16, 16, 8, 8)], ids=["small", "conv-sized"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_relu_gradient_is_torchs_threshold_backward_whatever_arrives(torch, shape, dtype):
    """0 where the output is <= 0 even for an inf or nan gradient (not inf·0 = nan), +0 there
    (not -0 from a negative gradient), the gradient untouched where the output is positive or
    nan; the same for the second derivative. (A small gradient goes through np.where, a large
    one through the bits path of fast/memory.where.)"""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    flat_x, flat_g = x.reshape(-1), grad.reshape(-1)
    flat_x[:8] = [-1.0, -1.0, -1.0, 0.0, -0.0, np.nan, 2.0, 2.0]
    flat_g[:8] = [np.inf, -np.inf, np.nan, -2.0, -3.0, -4.0, np.nan, -np.inf]

    def same(ours, theirs):
        theirs = theirs.detach().numpy()
        np.testing.assert_array_equal(ours, theirs)  # (equal nan)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))

    ours_x = tensor(x, requires_grad=True)
    ours_g = tensor(grad, requires_grad=True)
    (ours_dx,) = autograd.grad(ours_x.relu(), ours_x, ours_g, create_graph=True)
    (ours_dg,) = autograd.grad((ours_dx * 1.5).sum(), ours_g)
    torch_x = torch.tensor(x, requires_grad=True)
    torch_g = torch.tensor(grad, requires_grad=True)
    (torch_dx,) = torch.autograd.grad(torch_x.relu(), torch_x, torch_g, create_graph=True)
    (torch_dg,) = torch.autograd.grad((torch_dx * 1.5).sum(), torch_g)
    same(ours_dx.numpy(), torch_dx)
    same(ours_dg.numpy(), torch_dg)
    plain = tensor(x, requires_grad=True)  # and the plain backward (arrays, the fast path)
    plain.relu().backward(grad)
    same(plain.grad.numpy(), torch_dx)
