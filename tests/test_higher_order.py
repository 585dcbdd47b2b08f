"""Higher-order gradients: tinygrad_pool.autograd.grad with create_graph=True through every op,
third derivatives, the Hessian-vector product of the seed article's network, a gradient penalty
trained with SGD, tinygrad_pool.autograd.functional, and the grad/backward keyword semantics.

Everything runs in float64 and is compared with PyTorch (the ``torch`` fixture) at rtol 1e-9,
atol 1e-11, or with finite differences / closed forms where PyTorch is not needed. The torch side
of each parity check runs first, so a failure inside tinygrad_pool never hides a broken reference.

tinygrad_pool.autograd is imported inside the tests (``_autograd()``): until it exists every test
here fails on its own instead of the whole file failing to collect.
"""
import importlib
from collections import namedtuple
from functools import partial
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor

from helpers import leaf, load_script

RTOL, ATOL = 1e-9, 1e-11


def _autograd():
    """tinygrad_pool.autograd (imported lazily: see the module docstring)."""
    return importlib.import_module("tinygrad_pool.autograd")


def _functional():
    return importlib.import_module("tinygrad_pool.autograd.functional")


def _np(t) -> np.ndarray:
    """A Tensor / torch tensor as a float64 array. force=True: torch returns some zero gradients
    (e.g. abs's second derivative) as a ZeroTensor, which plain .numpy() refuses to convert."""
    if isinstance(t, Tensor):
        return np.asarray(t.numpy())
    return t.detach().numpy(force=True)


def _zeros_if_none(t, shape) -> np.ndarray:
    return np.zeros(shape) if t is None else _np(t)


def _close(got, expected, what, rtol=RTOL, atol=ATOL):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


def _requires_grad(t) -> bool:
    return t is not None and bool(t.requires_grad)


# ---- the two frameworks behind one interface --------------------------------------------------
# Each op below is written once as fn(L, *leaves); L supplies the framework's functional module,
# a constant-tensor constructor and an index-array converter.
OURS = SimpleNamespace(F=F, const=lambda a: tensor(np.array(a, dtype=np.float64)),
                       idx=lambda a: tensor(np.asarray(a)))


def _theirs(torch):
    return SimpleNamespace(F=torch.nn.functional,
                           const=lambda a: torch.tensor(np.array(a, dtype=np.float64)),
                           idx=torch.as_tensor)


def double_backward_parity(torch, fn, *arrays, torch_fn=None, seed=0, grad_output_requires_grad=False,
                           rtol=RTOL, atol=ATOL):
    """out = fn(*leaves); g = grad(out, leaves, grad_outputs=W, create_graph=True) for a fixed random
    W; s = Σ_k (g_k · V_k).sum() for fixed random V_k; second = grad(s, leaves [+ W],
    allow_unused=True). out, every g_k and every second_k are compared with PyTorch doing the same;
    None (or an s that does not require grad) counts as zeros. With grad_output_requires_grad W is
    a leaf too and d s / d W (the grad_output path, J·V) is compared as well."""
    rng = np.random.default_rng(seed)
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    # torch first: the reference must run whatever happens on our side
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = (torch_fn or fn)(*theirs)
    w = rng.standard_normal(tuple(tout.shape))
    vs = [rng.standard_normal(a.shape) for a in arrays]
    tw = torch.tensor(w, requires_grad=grad_output_requires_grad)
    tg = torch.autograd.grad(tout, theirs, grad_outputs=tw, create_graph=True)
    ts = sum((gk * torch.tensor(v)).sum() for gk, v in zip(tg, vs))
    ttargets = theirs + ([tw] if grad_output_requires_grad else [])
    tsecond = (torch.autograd.grad(ts, ttargets, allow_unused=True) if ts.requires_grad
               else [None] * len(ttargets))

    ag = _autograd()
    ours = [leaf(a) for a in arrays]
    out = fn(*ours)
    _close(_np(out), _np(tout), "forward differs from PyTorch", rtol, atol)
    W = tensor(w, requires_grad=grad_output_requires_grad)
    g = ag.grad(out, ours, grad_outputs=W, create_graph=True)
    assert len(g) == len(ours)
    for k, (gk, tgk) in enumerate(zip(g, tg)):
        _close(_zeros_if_none(gk, arrays[k].shape), _np(tgk),
               f"first derivative of input {k} differs from PyTorch", rtol, atol)
    terms = [(gk * tensor(v)).sum() for gk, v in zip(g, vs) if gk is not None]
    s = terms[0]
    for term in terms[1:]:
        s = s + term
    targets = ours + ([W] if grad_output_requires_grad else [])
    second = (ag.grad(s, targets, allow_unused=True) if _requires_grad(s)
              else [None] * len(targets))
    assert len(second) == len(targets)
    names = [f"input {k}" for k in range(len(ours))] + ["grad_output"]
    for name, t, sk, tsk in zip(names, targets, second, tsecond):
        _close(_zeros_if_none(sk, t.shape), _zeros_if_none(tsk, t.shape),
               f"second derivative w.r.t. {name} differs from PyTorch", rtol, atol)
    return out, g, second


# ---- the op table -----------------------------------------------------------------------------
Case = namedtuple("Case", "fn arrays torch_fn", defaults=(None,))


def N(*shape):
    """standard normal"""
    return ("normal", shape)


def P(*shape):
    """positive, in [0.5, 2] (log, sqrt, fractional and negative powers)"""
    return ("positive", shape)


def A(*shape, points=(0.0,), margin=0.2):
    """uniform in [-2, 2] but at least ``margin`` away from each of ``points`` (kinks)"""
    return ("away", shape, points, margin)


def make_array(rng, spec) -> np.ndarray:
    kind, shape = spec[0], spec[1]
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "positive":
        return rng.uniform(0.5, 2.0, shape)
    points, margin = spec[2], spec[3]
    x = rng.uniform(-2.0, 2.0, shape)
    while True:
        near = np.zeros(shape, dtype=bool)
        for p in points:
            near |= np.abs(x - p) < margin
        if not near.any():
            return x
        x[near] = rng.uniform(-2.0, 2.0, int(near.sum()))


ROWS = np.array([0, 2, 2, 1, 0])                       # int array with repeats
PAIRS = (np.array([0, 0, 1, 2]), np.array([3, 3, 0, 3]))  # (row, col) pairs with repeats
MASK = np.array([[True, False, True, True], [False, False, True, False],
                 [True, True, False, True]])
ROW_MASK = np.array([True, False, True])
LABELS = np.array([2, 0, 2, 1])
CONV_X, CONV_XG = (2, 3, 7, 7), (2, 4, 7, 6)  # input shapes: plain / for groups=2


def _conv(kwargs):
    return lambda L, x, w, b=None: L.F.conv2d(x, w, b, **kwargs)


def _maxpool(k, s, p, d, ceil):
    return lambda L, x: L.F.max_pool2d(x, k, s, p, d, ceil)


def _avgpool(k, s, p, ceil, count_include_pad):
    return lambda L, x: L.F.avg_pool2d(x, k, s, p, ceil, count_include_pad)


CASES = {
    # elementwise binary, with broadcasting
    "add_broadcast": Case(lambda L, x, y: x + y, (N(3, 4), N(4))),
    "add_broadcast_both": Case(lambda L, x, y: x + y, (N(2, 1, 3), N(4, 1))),
    "sub_broadcast": Case(lambda L, x, y: x - y, (N(3, 1), N(1, 4))),
    "rsub_scalar": Case(lambda L, x: 1.5 - x, (N(3, 4),)),
    "mul_same": Case(lambda L, x, y: x * y, (N(3, 4), N(3, 4))),
    "mul_broadcast": Case(lambda L, x, y: x * y, (N(2, 3, 1), N(3, 4))),
    "mul_self": Case(lambda L, x: x * x, (N(3, 4),)),
    "mul_scalar": Case(lambda L, x: x * 2.5, (N(3, 4),)),
    "div_broadcast": Case(lambda L, x, y: x / y, (N(3, 4), A(3, 1))),
    "div_same": Case(lambda L, x, y: x / y, (N(2, 3), A(2, 3))),
    "rdiv_scalar": Case(lambda L, x: 2.0 / x, (A(3, 4),)),
    "pow2": Case(lambda L, x: x ** 2, (N(3, 4),)),
    "pow3": Case(lambda L, x: x ** 3, (N(3, 4),)),
    "pow_half": Case(lambda L, x: x ** 0.5, (P(3, 4),)),
    "pow_neg_1.5": Case(lambda L, x: x ** -1.5, (P(3, 4),)),
    # elementwise unary
    "neg": Case(lambda L, x: -x, (N(3, 4),)),
    "exp": Case(lambda L, x: x.exp(), (N(3, 4),)),
    "log": Case(lambda L, x: x.log(), (P(3, 4),)),
    "sqrt": Case(lambda L, x: x.sqrt(), (P(3, 4),)),
    "relu": Case(lambda L, x: x.relu(), (A(3, 4),)),
    "F.relu": Case(lambda L, x: L.F.relu(x), (A(3, 4),)),
    "sigmoid": Case(lambda L, x: x.sigmoid(), (N(3, 4),)),
    "tanh": Case(lambda L, x: x.tanh(), (N(3, 4),)),
    "arctan": Case(lambda L, x: x.arctan(), (N(3, 4),), lambda L, x: x.atan()),
    "abs": Case(lambda L, x: x.abs(), (A(3, 4),)),
    "clamp": Case(lambda L, x: x.clamp(min=-0.5, max=0.5), (A(3, 4, points=(-0.5, 0.5), margin=0.1),)),
    "clamp_min_only": Case(lambda L, x: x.clamp(min=0.3), (A(3, 4, points=(0.3,), margin=0.1),)),
    "clamp_max_only": Case(lambda L, x: x.clamp(max=-0.2), (A(3, 4, points=(-0.2,), margin=0.1),)),
    "clamp_min": Case(lambda L, x: x.clamp_min(0.1), (A(3, 4, points=(0.1,), margin=0.1),)),
    # reductions (random normals: no ties for max)
    "sum_all": Case(lambda L, x: x.sum(), (N(3, 4),)),
    "sum_dim": Case(lambda L, x: x.sum(dim=1), (N(2, 3, 4),)),
    "sum_dim_keepdim": Case(lambda L, x: x.sum(dim=0, keepdim=True), (N(2, 3, 4),)),
    "sum_dims": Case(lambda L, x: x.sum(dim=(0, 2)), (N(2, 3, 4),)),
    "mean_all": Case(lambda L, x: x.mean(), (N(3, 4),)),
    "mean_dim": Case(lambda L, x: x.mean(dim=-1), (N(2, 3, 4),)),
    "mean_dim_keepdim": Case(lambda L, x: x.mean(dim=1, keepdim=True), (N(2, 3, 4),)),
    "max_all": Case(lambda L, x: x.max(), (N(3, 4),)),
    "max_dim": Case(lambda L, x: x.max(dim=1).values, (N(2, 3, 4),)),
    "max_dim_keepdim": Case(lambda L, x: x.max(dim=0, keepdim=True).values, (N(2, 3, 4),)),
    "amax_dims": Case(lambda L, x: x.amax(dim=(0, 2)), (N(2, 3, 4),)),
    # movement
    "reshape": Case(lambda L, x: x.reshape(4, 6) * x.reshape(4, 6), (N(2, 3, 4),)),
    "transpose": Case(lambda L, x: x.transpose(0, 2) ** 2, (N(2, 3, 4),)),
    "permute": Case(lambda L, x: x.permute(2, 0, 1) ** 2, (N(2, 3, 4),)),
    "flatten": Case(lambda L, x: x.flatten(1) ** 2, (N(2, 3, 4),)),
    "flip": Case(lambda L, x: x.flip((0, 2)) * x, (N(2, 3, 4),)),
    "reshape_linear": Case(lambda L, x: x.reshape(6, 4), (N(2, 3, 4),)),
    # indexing
    "index_slices": Case(lambda L, x: x[1:, ::2] ** 2, (N(3, 4),)),
    "index_int": Case(lambda L, x: x[:, 1] ** 3, (N(3, 4),)),
    "index_int_array_repeats": Case(lambda L, x: x[L.idx(ROWS)] ** 2, (N(3, 4),)),
    "index_pairs_repeats": Case(lambda L, x: x[L.idx(PAIRS[0]), L.idx(PAIRS[1])] ** 3, (N(3, 4),)),
    "index_bool_mask": Case(lambda L, x: x[L.idx(MASK)] ** 2, (N(3, 4),)),
    "index_bool_rows": Case(lambda L, x: x[L.idx(ROW_MASK)].exp(), (N(3, 4),)),
    # matmul
    "matmul_1d_1d": Case(lambda L, a, b: a @ b, (N(4), N(4))),
    "matmul_1d_2d": Case(lambda L, a, b: a @ b, (N(4), N(4, 3))),
    "matmul_2d_1d": Case(lambda L, a, b: a @ b, (N(3, 4), N(4))),
    "matmul_2d_2d": Case(lambda L, a, b: a @ b, (N(3, 4), N(4, 5))),
    "matmul_batched_broadcast": Case(lambda L, a, b: a @ b, (N(2, 1, 3, 4), N(3, 4, 5))),
    "matmul_self": Case(lambda L, a: a @ a.transpose(0, 1), (N(3, 4),)),
    # conv2d
    "conv2d": Case(_conv({}), (N(*CONV_X), N(4, 3, 3, 3))),
    "conv2d_bias": Case(_conv({}), (N(*CONV_X), N(4, 3, 3, 3), N(4))),
    "conv2d_stride": Case(_conv({"stride": 2}), (N(*CONV_X), N(4, 3, 3, 3), N(4))),
    "conv2d_padding": Case(_conv({"padding": 1}), (N(*CONV_X), N(4, 3, 3, 3))),
    "conv2d_dilation": Case(_conv({"dilation": 2}), (N(*CONV_X), N(2, 3, 3, 2))),
    "conv2d_groups": Case(_conv({"groups": 2}), (N(*CONV_XG), N(6, 2, 3, 3), N(6))),
    "conv2d_all": Case(_conv({"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}),
                       (N(*CONV_XG), N(4, 2, 2, 3), N(4))),
    "conv2d_squared": Case(lambda L, x, w: L.F.conv2d(x, w, padding=1) ** 2,
                           (N(1, 2, 5, 5), N(3, 2, 3, 3))),
    # max_pool2d (random normals: no ties)
    "max_pool2d": Case(_maxpool(2, 2, 0, 1, False), (N(2, 2, 6, 7),)),
    "max_pool2d_overlap": Case(_maxpool(3, 1, 0, 1, False), (N(2, 2, 6, 7),)),
    "max_pool2d_padding": Case(_maxpool(3, 2, 1, 1, False), (N(2, 2, 6, 7),)),
    "max_pool2d_dilation": Case(_maxpool(2, 1, 0, 2, False), (N(2, 2, 6, 7),)),
    "max_pool2d_ceil": Case(_maxpool(3, 2, 0, 1, True), (N(2, 2, 6, 7),)),
    "max_pool2d_all": Case(_maxpool((2, 3), (2, 1), (1, 1), (1, 2), True), (N(2, 2, 6, 7),)),
    "max_pool2d_of_square": Case(lambda L, x: L.F.max_pool2d(x * x, 3, 1), (N(1, 2, 5, 6),)),
    # avg_pool2d
    "avg_pool2d": Case(_avgpool(2, 2, 0, False, True), (N(2, 2, 6, 7),)),
    "avg_pool2d_overlap": Case(_avgpool(3, 1, 0, False, True), (N(2, 2, 6, 7),)),
    "avg_pool2d_padding": Case(_avgpool(3, 2, 1, False, True), (N(2, 2, 6, 7),)),
    "avg_pool2d_no_count_pad": Case(_avgpool(3, 2, 1, False, False), (N(2, 2, 6, 7),)),
    "avg_pool2d_ceil": Case(_avgpool(3, 2, 0, True, True), (N(2, 2, 6, 7),)),
    "avg_pool2d_ceil_pad_no_count": Case(_avgpool((3, 2), 2, 1, True, False), (N(2, 2, 6, 7),)),
    "avg_pool2d_of_square": Case(lambda L, x: L.F.avg_pool2d(x * x, 2, 1), (N(1, 2, 5, 6),)),
    # layers and losses
    "linear": Case(lambda L, x, w, b: L.F.linear(x, w, b), (N(4, 3), N(5, 3), N(5))),
    "linear_no_bias": Case(lambda L, x, w: L.F.linear(x, w), (N(4, 3), N(5, 3))),
    "linear_3d": Case(lambda L, x, w, b: L.F.linear(x, w, b), (N(2, 4, 3), N(5, 3), N(5))),
    "mse_loss": Case(lambda L, x, t: L.F.mse_loss(x, t), (N(4, 3), N(4, 3))),
    "mse_loss_sum": Case(lambda L, x, t: L.F.mse_loss(x, t, reduction="sum"), (N(4, 3), N(4, 3))),
    "mse_loss_none": Case(lambda L, x, t: L.F.mse_loss(x, t, reduction="none"), (N(4, 3), N(4, 3))),
    "cross_entropy": Case(lambda L, x: L.F.cross_entropy(x, L.idx(LABELS)), (N(4, 3),)),
    "cross_entropy_sum": Case(lambda L, x: L.F.cross_entropy(x, L.idx(LABELS), reduction="sum"),
                              (N(4, 3),)),
    "log_softmax": Case(lambda L, x: L.F.log_softmax(x, dim=-1), (N(4, 5),)),
    "log_softmax_dim0": Case(lambda L, x: L.F.log_softmax(x, dim=0), (N(4, 5),)),
    "log_softmax_method": Case(lambda L, x: x.log_softmax(1), (N(2, 3, 4),)),
    "softmax": Case(lambda L, x: L.F.softmax(x, dim=1), (N(4, 5),)),
    "softmax_method": Case(lambda L, x: x.softmax(0), (N(2, 3, 4),)),
    "sum_of_squares": Case(lambda L, x: L.F.sum_of_squares(x), (N(3, 4),),
                           lambda L, x: (x * x).sum()),
}


def _run_case(torch, rng, name, **kwargs):
    case = CASES[name]
    arrays = [make_array(rng, spec) for spec in case.arrays]
    theirs = _theirs(torch)
    return double_backward_parity(torch, partial(case.fn, OURS), *arrays,
                                  torch_fn=partial(case.torch_fn or case.fn, theirs), **kwargs)


@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_matches_torch(torch, rng, name):
    _run_case(torch, rng, name)


@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_through_grad_output_matches_torch(torch, rng, name):
    """W requires grad too: d(Σ g·V)/dW is the forward-mode product J·V, nonzero even for ops
    whose second derivative w.r.t. the input is zero (relu, abs, clamp, max, max_pool2d)."""
    _run_case(torch, rng, name, grad_output_requires_grad=True)


PIECEWISE_LINEAR = ["relu", "F.relu", "abs", "clamp", "clamp_min", "max_all", "max_dim",
                    "max_pool2d_overlap", "max_pool2d_all"]


@pytest.mark.parametrize("name", PIECEWISE_LINEAR)
def test_piecewise_linear_ops_have_zero_second_derivative(rng, name):
    """Torch-free: the first derivative is piecewise constant, so d(Σ g·V)/dx is 0 (or None)
    while d(Σ g·V)/dW is not."""
    ag = _autograd()
    case = CASES[name]
    x = leaf(make_array(rng, case.arrays[0]))
    out = case.fn(OURS, x)
    W = tensor(rng.standard_normal(out.shape), requires_grad=True)
    (g,) = ag.grad(out, [x], grad_outputs=W, create_graph=True)
    s = (g * tensor(rng.standard_normal(x.shape))).sum()
    dx, dw = ag.grad(s, [x, W], allow_unused=True)
    np.testing.assert_array_equal(_zeros_if_none(dx, x.shape), np.zeros(x.shape))
    assert dw is not None and np.abs(dw.numpy()).max() > 0


# Smooth ops whose Hessian-vector product is checked against central differences of the first
# derivative (computed by plain backward): no torch needed. Only ops that are nonlinear in some
# input: for a linear op (sum, avg_pool2d alone) Σ g·V does not depend on the inputs at all.
SMOOTH = ["div_broadcast", "pow3", "pow_neg_1.5", "exp", "log", "sqrt", "sigmoid", "tanh", "arctan",
          "reshape", "index_pairs_repeats", "matmul_batched_broadcast", "conv2d_all",
          "avg_pool2d_of_square", "linear_3d", "mse_loss", "cross_entropy", "log_softmax",
          "softmax", "sum_of_squares"]


def _first_derivatives(fn, arrays, w):
    xs = [leaf(a) for a in arrays]
    fn(*xs).backward(w)
    return [_zeros_if_none(x.grad, x.shape) for x in xs]


@pytest.mark.parametrize("name", SMOOTH)
def test_double_backward_matches_finite_differences(rng, name):
    """second_k = Σ_j ∂g_j/∂x_k · V_j = d/dh g_k(x + h·V) at h=0 (the Hessian is symmetric)."""
    ag = _autograd()
    case = CASES[name]
    fn = partial(case.fn, OURS)
    arrays = [make_array(rng, spec) for spec in case.arrays]
    xs = [leaf(a) for a in arrays]
    out = fn(*xs)
    w = rng.standard_normal(out.shape)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    g = ag.grad(out, xs, grad_outputs=tensor(w), create_graph=True)
    s = sum(((gk * tensor(v)).sum() for gk, v in zip(g, vs)), tensor(0.0))
    second = ag.grad(s, xs, allow_unused=True)
    h = 1e-5
    plus = _first_derivatives(fn, [a + h * v for a, v in zip(arrays, vs)], w)
    minus = _first_derivatives(fn, [a - h * v for a, v in zip(arrays, vs)], w)
    for k, (sk, p, m) in enumerate(zip(second, plus, minus)):
        np.testing.assert_allclose(_zeros_if_none(sk, arrays[k].shape), (p - m) / (2 * h),
                                   rtol=1e-5, atol=1e-7, err_msg=f"input {k}")


# ---- third derivatives ------------------------------------------------------------------------
def _third(name, x):
    """closed forms of d³/dx³ for the functions below, at x"""
    return {
        "exp": lambda x: np.exp(x),
        "log": lambda x: 2 / x ** 3,
        "tanh": lambda x: (1 - np.tanh(x) ** 2) * (6 * np.tanh(x) ** 2 - 2),
        "sigmoid": lambda x: (lambda y: y * (1 - y) * (1 - 6 * y + 6 * y ** 2))(1 / (1 + np.exp(-x))),
        "arctan": lambda x: (6 * x ** 2 - 2) / (1 + x ** 2) ** 3,
        "cube": lambda x: np.full_like(x, 6.0),
        "sqrt": lambda x: 0.375 * x ** -2.5,
    }[name](x)


ELEMENTWISE = {
    "exp": (lambda x: x.exp(), None),
    "log": (lambda x: x.log(), None),
    "tanh": (lambda x: x.tanh(), None),
    "sigmoid": (lambda x: x.sigmoid(), None),
    "arctan": (lambda x: x.arctan(), lambda x: x.atan()),
    "cube": (lambda x: x ** 3, None),
    "sqrt": (lambda x: x.sqrt(), None),
    "composed": (lambda x: (x.tanh() * x.sigmoid()).exp() + x.arctan() ** 3 - (x ** 0.5).log(),
                 lambda x: (x.tanh() * x.sigmoid()).exp() + x.atan() ** 3 - (x ** 0.5).log()),
}


def _three_derivatives(grad, fn, x):
    """grad of grad of grad of fn(x).sum() (sums of the previous derivative each time)."""
    (g1,) = grad(fn(x).sum(), [x], create_graph=True)
    (g2,) = grad(g1.sum(), [x], create_graph=True)
    (g3,) = grad(g2.sum(), [x])
    return g1, g2, g3


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_third_derivative_matches_torch(torch, rng, name):
    fn, torch_fn = ELEMENTWISE[name]
    x = rng.uniform(0.5, 2.0, (2, 3))
    expected = _three_derivatives(torch.autograd.grad, torch_fn or fn,
                                  torch.tensor(x, requires_grad=True))
    got = _three_derivatives(_autograd().grad, fn, leaf(x))
    for order, (a, b) in enumerate(zip(got, expected), 1):
        _close(_np(a), _np(b), f"derivative of order {order}")


@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "composed"])
def test_third_derivative_matches_closed_form(rng, name):
    x = rng.uniform(0.5, 2.0, (2, 3))
    _, _, g3 = _three_derivatives(_autograd().grad, ELEMENTWISE[name][0], leaf(x))
    _close(g3.numpy(), _third(name, x), "third derivative", rtol=1e-12, atol=1e-12)


def test_third_derivative_of_composition_matches_finite_differences(rng):
    """Elementwise, so perturbing every element at once differentiates each g2_i by its own x_i."""
    fn = ELEMENTWISE["composed"][0]
    grad = _autograd().grad
    x, h = rng.uniform(0.5, 2.0, (2, 3)), 1e-5
    _, _, g3 = _three_derivatives(grad, fn, leaf(x))
    g2 = [_three_derivatives(grad, fn, leaf(x + d))[1].numpy() for d in (h, -h)]
    np.testing.assert_allclose(g3.numpy(), (g2[0] - g2[1]) / (2 * h), rtol=1e-6, atol=1e-8)


# ---- the seed article's network: Hessian-vector product ---------------------------------------


article = load_script("examples/article_network.py")
ARTICLE_EXAMPLES = [article.EXAMPLE_1, article.EXAMPLE_2]
ARTICLE_IDS = ["example1", "example2"]


def _article_loss_ours(example):
    """Σ over the two images of the article's cost, at its initial weights (PyTorch's tie rule)."""
    net = article.ArticleNetwork(*example.initial_weights(), example.activation, ties="first")
    costs = [net.cost(image, target) for image, target in zip(article.IMAGES, example.targets())]
    return costs[0] + costs[1], net.parameters()


def _article_loss_torch(torch, example):
    """The same network rebuilt from torch ops on the same arrays."""
    TF = torch.nn.functional
    w1, w2 = (torch.tensor(w, requires_grad=True) for w in example.initial_weights())
    loss = 0
    for image, target in zip(article.IMAGES, example.targets()):
        x = torch.tensor(image).reshape(1, 1, 6, 6)
        layer = TF.conv2d(x, w1.flip((0, 1)).reshape(1, 1, 3, 3))
        if example.activation:
            layer = layer.relu()
        out = TF.max_pool2d(layer, 2).reshape(1, 4) @ w2
        if example.activation:
            out = out.atan()
        loss = loss + 0.5 * ((out - float(target)) ** 2).sum()
    return loss, [w1, w2]


def _hvp(grad, loss, weights, vs, const):
    g = grad(loss, weights, create_graph=True)
    s = (g[0] * const(vs[0])).sum() + (g[1] * const(vs[1])).sum()
    return g, grad(s, weights)


@pytest.mark.parametrize("example", ARTICLE_EXAMPLES, ids=ARTICLE_IDS)
def test_article_network_hessian_vector_product_matches_torch(torch, rng, example):
    tloss, tweights = _article_loss_torch(torch, example)
    vs = [rng.standard_normal(w.shape) for w in tweights]
    tg, thvp = _hvp(torch.autograd.grad, tloss, tweights, vs, torch.tensor)
    loss, weights = _article_loss_ours(example)
    _close(loss.item(), tloss.item(), "loss")
    g, hvp = _hvp(_autograd().grad, loss, weights, vs, tensor)
    for name, a, b in zip(["dW1", "dW2"], g, tg):
        _close(_np(a), _np(b), name)
    for name, a, b in zip(["(H v)_W1", "(H v)_W2"], hvp, thvp):
        _close(_np(a), _np(b), name)
    assert np.abs(_np(thvp[0])).max() > 0  # the product is not trivially zero


@pytest.mark.parametrize("example", ARTICLE_EXAMPLES, ids=ARTICLE_IDS)
def test_article_network_hessian_vector_product_matches_finite_differences(rng, example):
    """H v ≈ (∇L(w + h v) − ∇L(w − h v)) / 2h, the gradients from plain backward. Tied max-pool
    windows come from identical image patches, so they stay tied under the perturbation."""
    loss, weights = _article_loss_ours(example)
    vs = [rng.standard_normal(w.shape) for w in weights]
    _, hvp = _hvp(_autograd().grad, loss, weights, vs, tensor)
    w1, w2 = example.initial_weights()
    h, grads = 1e-6, []
    for sign in (1, -1):
        net = article.ArticleNetwork(w1 + sign * h * vs[0], w2 + sign * h * vs[1],
                                     example.activation, ties="first")
        costs = [net.cost(image, target) for image, target in zip(article.IMAGES, example.targets())]
        (costs[0] + costs[1]).backward()
        grads.append([p.grad.numpy() for p in net.parameters()])
    for k in range(2):
        np.testing.assert_allclose(hvp[k].numpy(), (grads[0][k] - grads[1][k]) / (2 * h),
                                   rtol=1e-5, atol=1e-6)


# ---- gradient penalty, trained ----------------------------------------------------------------
def _penalty_setup(rng):
    return dict(x=rng.standard_normal((4, 1, 8, 8)), y=np.array([0, 2, 1, 2]),
                conv_w=rng.standard_normal((3, 1, 3, 3)) * 0.5, conv_b=rng.standard_normal(3) * 0.1,
                lin_w=rng.standard_normal((3, 27)) * 0.3, lin_b=rng.standard_normal(3) * 0.1)


def _penalty_net(TF, x, conv_w, conv_b, lin_w, lin_b):
    h = TF.max_pool2d(TF.conv2d(x, conv_w, conv_b).relu(), 2)
    return TF.linear(h.flatten(1), lin_w, lin_b)


def _penalty_train(TF, grad, make_leaf, optimizer, setup, labels, lam=0.5, steps=3):
    """SGD steps on cross_entropy(out, y) + λ‖∂ out.sum() / ∂ input‖²; (loss, weights) per step."""
    names = ["conv_w", "conv_b", "lin_w", "lin_b"]
    params = [make_leaf(setup[n]) for n in names]
    opt = optimizer(params, lr=0.1)
    history = []
    for _ in range(steps):
        x = make_leaf(setup["x"])
        out = _penalty_net(TF, x, *params)
        (gx,) = grad(out.sum(), [x], create_graph=True)
        loss = TF.cross_entropy(out, labels) + lam * (gx * gx).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append((loss.item(), [_np(p).copy() for p in params]))
    return history


def test_gradient_penalty_training_matches_torch(torch, rng):
    setup = _penalty_setup(rng)
    theirs = _penalty_train(torch.nn.functional, torch.autograd.grad,
                            lambda a: torch.tensor(a, requires_grad=True), torch.optim.SGD, setup,
                            torch.as_tensor(setup["y"]))
    assert theirs[0][0] != theirs[-1][0]  # the penalty run actually moves
    ours = _penalty_train(F, _autograd().grad, leaf, tinygrad_pool.optim.SGD, setup,
                          tinygrad_pool.tensor(setup["y"]))
    for step, ((loss, weights), (tloss, tweights)) in enumerate(zip(ours, theirs)):
        _close(loss, tloss, f"loss at step {step}")
        for name, w, tw in zip(["conv_w", "conv_b", "lin_w", "lin_b"], weights, tweights):
            _close(w, tw, f"{name} after step {step}")


# ---- tinygrad_pool.autograd.functional --------------------------------------------------------
C34 = np.random.default_rng(7).standard_normal((3, 4))


def f_vector(L, x):
    """R^4 -> R^3"""
    return (L.const(C34) @ x).tanh() * x[:3].exp()


def f_scalar(L, x):
    """R^4 -> R"""
    return ((L.const(C34) @ x).sigmoid() ** 2).sum() + (x ** 3).sum()


def f_pair_matrix(L, x, y):
    """(2, 3), (3, 2) -> (2, 2)"""
    return (x @ y).tanh() + x.sum(dim=1, keepdim=True) * y.sum(dim=0, keepdim=True)


def f_pair_scalar(L, x, y):
    return ((x @ y).tanh() ** 2).sum() + (x * x).sum() * y.sum()


def _compare_nested(got, expected, what):
    """Tensors, or (nested) tuples of them, compared element by element."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{what}: {type(got)}"
        for k, (a, b) in enumerate(zip(got, expected)):
            _compare_nested(a, b, f"{what}[{k}]")
    else:
        assert isinstance(got, Tensor), f"{what}: expected a Tensor, got {type(got)}"
        _close(_np(got), _np(expected), what)


def _functional_inputs(torch, rng, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    return ([tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


FUNCTIONAL = {
    # name: (function, input shapes, tuple of inputs?)
    "vector_single": (f_vector, [(4,)], False),
    "scalar_single": (f_scalar, [(4,)], False),
    "matrix_pair": (f_pair_matrix, [(2, 3), (3, 2)], True),
    "scalar_pair": (f_pair_scalar, [(2, 3), (3, 2)], True),
}


def _pack(xs, as_tuple):
    return tuple(xs) if as_tuple else xs[0]


@pytest.mark.parametrize("operation,name",
                         [("jacobian", name) for name in FUNCTIONAL]
                         + [("hessian", name) for name in ("scalar_single", "scalar_pair")])
def test_functional_jacobian_and_hessian_match_torch(torch, rng, operation, name):
    fn, shapes, as_tuple = FUNCTIONAL[name]
    ours, theirs = _functional_inputs(torch, rng, shapes)
    expected = getattr(torch.autograd.functional, operation)(partial(fn, _theirs(torch)),
                                                             _pack(theirs, as_tuple))
    got = getattr(_functional(), operation)(partial(fn, OURS), _pack(ours, as_tuple))
    _compare_nested(got, expected, operation)


@pytest.mark.parametrize("name", ["scalar_single", "scalar_pair"])
def test_functional_hvp_matches_torch(torch, rng, name):
    fn, shapes, as_tuple = FUNCTIONAL[name]
    ours, theirs = _functional_inputs(torch, rng, shapes)
    v = [rng.standard_normal(s) for s in shapes]
    expected = torch.autograd.functional.hvp(partial(fn, _theirs(torch)), _pack(theirs, as_tuple),
                                             _pack([torch.tensor(a) for a in v], as_tuple))
    got = _functional().hvp(partial(fn, OURS), _pack(ours, as_tuple), _pack([tensor(a) for a in v],
                                                                            as_tuple))
    assert isinstance(got, tuple) and len(got) == 2
    _compare_nested(got[0], expected[0], "func_output")
    _compare_nested(got[1], expected[1], "hvp")


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional_vjp_matches_torch(torch, rng, name):
    fn, shapes, as_tuple = FUNCTIONAL[name]
    ours, theirs = _functional_inputs(torch, rng, shapes)
    out_shape = tuple(fn(_theirs(torch), *theirs).shape)
    v = rng.standard_normal(out_shape)
    expected = torch.autograd.functional.vjp(partial(fn, _theirs(torch)), _pack(theirs, as_tuple),
                                             torch.tensor(v))
    got = _functional().vjp(partial(fn, OURS), _pack(ours, as_tuple), tensor(v))
    assert isinstance(got, tuple) and len(got) == 2
    _compare_nested(got[0], expected[0], "func_output")
    _compare_nested(got[1], expected[1], "vjp")


def test_functional_hessian_is_the_jacobian_of_the_gradient(rng):
    """Torch-free: hessian(f, x) for f(x) = Σ x_i³ + (Σ x_i)² is diag(6x) + 2."""
    x = rng.standard_normal(4)
    got = _functional().hessian(lambda t: (t ** 3).sum() + t.sum() ** 2, tensor(x))
    _close(got.numpy(), np.diag(6 * x) + 2.0, "hessian")


def test_functional_jacobian_create_graph_is_differentiable(torch, rng):
    """jacobian(..., create_graph=True) of an input that requires grad can be differentiated again."""
    x, c = rng.standard_normal(4), rng.standard_normal((3, 4))
    tx = torch.tensor(x, requires_grad=True)
    tj = torch.autograd.functional.jacobian(partial(f_vector, _theirs(torch)), tx, create_graph=True)
    (tgrad,) = torch.autograd.grad((tj * torch.tensor(c)).sum(), [tx])
    ox = leaf(x)
    j = _functional().jacobian(partial(f_vector, OURS), ox, create_graph=True)
    assert j.requires_grad
    (grad,) = _autograd().grad((j * tensor(c)).sum(), [ox])
    _close(_np(j), _np(tj), "jacobian")
    _close(_np(grad), _np(tgrad), "gradient of the jacobian")


# ---- grad / backward semantics (expected values checked in PyTorch 2.x) ------------------------
def test_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = _autograd().grad((x ** 2).sum(), [x])
    assert x.grad is None
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])


def test_grad_leaves_an_existing_dot_grad_unchanged():
    x = leaf([1.0, 2.0, 3.0])
    (x ** 2).sum().backward()
    before = x.grad
    _autograd().grad((x ** 3).sum(), [x])
    assert x.grad is before
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_grad_accepts_a_single_tensor_input():
    x = leaf([1.0, 2.0])
    got = _autograd().grad((x * x).sum(), x)
    assert isinstance(got, tuple) and len(got) == 1
    np.testing.assert_allclose(got[0].numpy(), [2.0, 4.0])


def test_grad_unused_input_raises():
    x, unused = leaf([1.0, 2.0]), leaf([3.0])
    with pytest.raises(RuntimeError):
        _autograd().grad((x * x).sum(), [x, unused])


def test_grad_unused_input_with_allow_unused_is_none():
    x, unused = leaf([1.0, 2.0]), leaf([3.0])
    gx, gu = _autograd().grad((x * x).sum(), [x, unused], allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])


def test_grad_without_create_graph_returns_tensors_without_grad_fn():
    x = leaf([0.5, 1.5])
    (g,) = _autograd().grad((x ** 3).sum(), [x])
    assert g.grad_fn is None and not g.requires_grad
    np.testing.assert_allclose(g.numpy(), [0.75, 6.75])


def test_grad_with_create_graph_returns_tensors_with_grad_fn():
    x = leaf([0.5, 1.5])
    (g,) = _autograd().grad((x ** 3).sum(), [x], create_graph=True)
    assert g.grad_fn is not None and g.requires_grad


def test_grad_of_several_outputs_sums_their_contributions():
    x = leaf([1.0, 2.0])
    (g,) = _autograd().grad([(x ** 2).sum(), x * 3], [x],
                            grad_outputs=[tensor(1.0), tensor(np.array([1.0, 10.0]))])
    np.testing.assert_allclose(g.numpy(), [2.0 + 3.0, 4.0 + 30.0])


def test_grad_through_a_freed_graph_raises():
    x = leaf([0.5, 1.5])
    y = x.exp().sum()
    _autograd().grad(y, [x])
    with pytest.raises(RuntimeError):
        _autograd().grad(y, [x])


def test_grad_with_retain_graph_can_run_twice():
    x = leaf([0.5, 1.5])
    y = x.exp().sum()
    (a,) = _autograd().grad(y, [x], retain_graph=True)
    (b,) = _autograd().grad(y, [x])
    np.testing.assert_allclose(a.numpy(), np.exp([0.5, 1.5]))
    np.testing.assert_allclose(b.numpy(), a.numpy())


def test_grad_create_graph_retains_the_graph_by_default():
    x = leaf([0.5, 1.5])
    y = x.exp().sum()
    _autograd().grad(y, [x], create_graph=True)
    (again,) = _autograd().grad(y, [x])  # retain_graph defaulted to create_graph=True
    np.testing.assert_allclose(again.numpy(), np.exp([0.5, 1.5]))


def test_backward_create_graph_leaves_grad_with_grad_fn():
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_backward_of_grad_after_zeroing_gives_second_derivative():
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])  # d/dx Σ 3x² = 6x


def test_backward_of_grad_without_zeroing_accumulates():
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    x.grad.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 6.0, 12.0 + 12.0])  # 3x² + 6x


def test_backward_retain_graph_defaults_to_create_graph():
    x = leaf([0.5, 1.5])
    y = x.exp().sum()
    y.backward(create_graph=True)
    y.backward()  # the graph is still there
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, 1.5]))


def test_backward_twice_without_retain_graph_raises():
    x = leaf([0.5, 1.5])
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()


def test_backward_inputs_accumulates_only_into_the_listed_leaves():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_autograd_backward_with_grad_tensors_and_inputs():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    _autograd().backward([x * w], grad_tensors=[tensor(np.array([1.0, -1.0]))], inputs=[x])
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -4.0])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")  # torch's leak note
def test_backward_create_graph_then_grad_of_grad_norm_matches_torch(torch, rng):
    """The usual gradient-penalty idiom through .backward(create_graph=True) and .grad."""
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (tx @ tw).tanh().sum().backward(create_graph=True, inputs=[tx])
    (tx.grad ** 2).sum().backward(inputs=[tw])
    x, w = leaf(a), leaf(b)
    (x @ w).tanh().sum().backward(create_graph=True, inputs=[x])
    _close(x.grad.numpy(), _np(tx.grad), "x.grad")
    (x.grad ** 2).sum().backward(inputs=[w])
    _close(w.grad.numpy(), _np(tw.grad), "w.grad")


# ---- hypothesis -------------------------------------------------------------------------------
HYPOTHESIS = settings(max_examples=30, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@HYPOTHESIS
@given(n=st.integers(1, 4), k=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_random_dense_layer_double_backward_matches_torch(torch, n, k, m, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, k)), rng.standard_normal((k, m)), rng.standard_normal(m)]
    double_backward_parity(torch, lambda x, w, b: ((x @ w + b).tanh() ** 2).sum(), *arrays, seed=seed)


@HYPOTHESIS
@given(size=st.tuples(st.integers(4, 8), st.integers(4, 8)), kernel=st.integers(1, 3),
       stride=st.integers(1, 2), padding=st.integers(0, 1), pool=st.integers(2, 3),
       pool_stride=st.integers(1, 2), ceil_mode=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_random_conv_pool_double_backward_matches_torch(torch, size, kernel, stride, padding, pool,
                                                        pool_stride, ceil_mode, seed):
    conv_hw = [(s + 2 * padding - kernel) // stride + 1 for s in size]
    assume(min(conv_hw) >= pool)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((2, 2) + size), rng.standard_normal((3, 2, kernel, kernel)),
              rng.standard_normal(3)]

    def net(TF, x, w, b):
        return TF.max_pool2d(TF.conv2d(x, w, b, stride=stride, padding=padding).tanh(), pool,
                             pool_stride, 0, 1, ceil_mode)

    double_backward_parity(torch, partial(net, F), *arrays, torch_fn=partial(net, torch.nn.functional),
                           seed=seed, grad_output_requires_grad=True)
