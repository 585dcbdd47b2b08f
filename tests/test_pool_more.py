"""The 1-D and 3-D adaptive pools, lp_pool1d/2d and max_unpool1d/3d (and their Modules) against
PyTorch: forward, indices, backward in float32 and float64, double backward (float64), float64
finite differences, random geometries by hypothesis, unbatched input, NaN and zero windows,
the graph node each op makes, module reprs, and PyTorch's errors.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool.autograd as autograd
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import tensor
from tinygrad_pool.gradient_check import gradcheck_report

from helpers import check_grad
from test_adaptive_pool import double_backward_parity

HYPOTHESIS = settings(max_examples=25, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def assert_parity(torch, fn, torch_fn, x, dtype, seed=0, equal_nan=False):
    """fn(x) against torch_fn(x) in ``dtype``: the output (and the indices, when a pair comes
    back), then the gradient for a random output weighting."""
    tol = TOLERANCE[dtype]
    x = np.asarray(x, dtype=dtype)
    ours, theirs = tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = fn(ours), torch_fn(theirs)
    if isinstance(tout, tuple):
        (out, indices), (tout, tindices) = out, tout
        assert indices.dtype == np.int64
        np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    assert out.shape == tuple(tout.shape) and out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), equal_nan=equal_nan, **tol)
    weights = np.random.default_rng(seed).standard_normal(out.shape).astype(dtype)
    out.backward(tensor(weights))
    tout.backward(torch.tensor(weights))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), equal_nan=equal_nan,
                               err_msg="gradient differs from PyTorch", **tol)


def assert_double_backward_parity_float32(torch, fn, torch_fn, x, seed=0):
    """test_adaptive_pool's double_backward_parity (float64) in float32: g = ∂⟨fn(x), W⟩/∂x
    recorded, then ∂⟨g, V⟩/∂x and ∂⟨g, V⟩/∂W, against torch's."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, np.float32)
    tx = torch.tensor(x, requires_grad=True)
    tout = torch_fn(tx)
    w = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    v = rng.standard_normal(x.shape).astype(np.float32)
    tw = torch.tensor(w, requires_grad=True)
    (tg,) = torch.autograd.grad(tout, [tx], grad_outputs=tw, create_graph=True)
    tsecond = torch.autograd.grad((tg * torch.tensor(v)).sum(), [tx, tw], allow_unused=True)
    ours, ow = tensor(x.copy(), requires_grad=True), tensor(w, requires_grad=True)
    (g,) = autograd.grad(fn(ours), [ours], grad_outputs=ow, create_graph=True)
    second = autograd.grad((g * tensor(v)).sum(), [ours, ow], allow_unused=True)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-5, atol=1e-5)
    for got, expected in zip(second, tsecond):
        expected = np.zeros(got.shape) if expected is None else expected.numpy()
        got = np.zeros(expected.shape) if got is None else got.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


# ---- adaptive pooling, 1-D and 3-D ------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["avg", "max"])
@HYPOTHESIS
@given(batch=st.sampled_from([None, 0, 1, 2]), channels=st.integers(1, 3),
       length=st.integers(1, 9), out=st.integers(1, 10), seed=st.integers(0, 99))
def test_adaptive_pool1d_matches_torch(torch, dtype, kind, batch, channels, length, out, seed):
    shape = (channels, length) if batch is None else (batch, channels, length)
    x = np.random.default_rng(seed).standard_normal(shape)
    kwargs = {"return_indices": True} if kind == "max" else {}
    name = f"adaptive_{kind}_pool1d"
    size = out if seed % 2 else (out,)  # an int or a 1-tuple
    assert_parity(torch, lambda t: getattr(F, name)(t, size, **kwargs),
                  lambda t: getattr(torch.nn.functional, name)(t, size, **kwargs), x, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["avg", "max"])
@HYPOTHESIS
@given(batch=st.sampled_from([None, 0, 1, 2]), size=st.tuples(*[st.integers(1, 5)] * 3),
       out=st.tuples(*[st.one_of(st.none(), st.integers(1, 6))] * 3), seed=st.integers(0, 99))
def test_adaptive_pool3d_matches_torch(torch, dtype, kind, batch, size, out, seed):
    shape = (2,) + size if batch is None else (batch, 2) + size
    x = np.random.default_rng(seed).standard_normal(shape)
    kwargs = {"return_indices": True} if kind == "max" else {}
    name = f"adaptive_{kind}_pool3d"
    output_size = out[0] if (seed % 3 == 0 and out[0] is not None) else out  # an int too
    assert_parity(torch, lambda t: getattr(F, name)(t, output_size, **kwargs),
                  lambda t: getattr(torch.nn.functional, name)(t, output_size, **kwargs),
                  x, dtype)


ADAPTIVE = [("adaptive_avg_pool1d", (2, 3, 7), 3), ("adaptive_max_pool1d", (2, 3, 7), 3),
            ("adaptive_avg_pool1d", (3, 5), 4), ("adaptive_max_pool1d", (3, 5), 7),
            ("adaptive_avg_pool3d", (2, 2, 3, 5, 4), (2, None, 3)),
            ("adaptive_max_pool3d", (2, 2, 3, 5, 4), (2, 3, 3)),
            ("adaptive_avg_pool3d", (2, 4, 3, 5), 2), ("adaptive_max_pool3d", (2, 4, 3, 5), 3)]


@pytest.mark.parametrize("name, shape, size", ADAPTIVE)
def test_adaptive_double_backward_matches_torch(torch, rng, name, shape, size):
    x = rng.standard_normal(shape)
    double_backward_parity(torch, lambda t: getattr(F, name)(t * t, size),
                           lambda t: getattr(torch.nn.functional, name)(t * t, size), x)


@pytest.mark.parametrize("name, shape, size", ADAPTIVE)
def test_adaptive_double_backward_matches_torch_float32(torch, rng, name, shape, size):
    assert_double_backward_parity_float32(
        torch, lambda t: getattr(F, name)(t * t, size),
        lambda t: getattr(torch.nn.functional, name)(t * t, size), rng.standard_normal(shape))


@pytest.mark.parametrize("name, shape, size", ADAPTIVE)
def test_adaptive_gradcheck(rng, name, shape, size):
    check_grad(lambda t: getattr(F, name)(t, size), rng.standard_normal(shape))


@pytest.mark.parametrize("name, node", [("adaptive_avg_pool1d", "AdaptiveAvgPool1d"),
                                        ("adaptive_max_pool1d", "AdaptiveMaxPool1d"),
                                        ("adaptive_avg_pool3d", "AdaptiveAvgPool3d"),
                                        ("adaptive_max_pool3d", "AdaptiveMaxPool3d"),
                                        ("lp_pool1d", "AvgPool1d"), ("lp_pool2d", "AvgPool2d")])
def test_each_op_is_its_own_node(rng, name, node):
    shape = {"1": (2, 3, 8), "2": (2, 3, 4, 4), "3": (2, 3, 4, 4, 4)}[name[-2]]
    x = tensor(rng.standard_normal(shape), requires_grad=True)
    out = getattr(F, name)(x, 2, 2) if name.startswith("lp") else getattr(F, name)(x, 2)
    seen, stack = set(), [out.grad_fn]
    while stack:  # every node of the graph
        fn = stack.pop()
        if fn is not None and id(fn) not in seen:
            seen.add(id(fn))
            stack.extend(f for f, _ in fn.next_functions)
            if type(fn).__name__ == node:
                return
    pytest.fail(f"{name} made no {node} node")


def test_adaptive_max_ties_and_nans_follow_torch(torch):
    x = np.array([[[1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan, 0.0]]])
    assert_parity(torch, lambda t: F.adaptive_max_pool1d(t, 3, True),
                  lambda t: torch.nn.functional.adaptive_max_pool1d(t, 3, True), x, np.float64,
                  equal_nan=True)
    volume = np.zeros((1, 1, 3, 3, 3))
    volume[0, 0, 1, 2, 0] = volume[0, 0, 2, 1, 1] = np.nan
    assert_parity(torch, lambda t: F.adaptive_max_pool3d(t, 2, True),
                  lambda t: torch.nn.functional.adaptive_max_pool3d(t, 2, True), volume,
                  np.float64, equal_nan=True)


# ---- power-average pooling ----------------------------------------------------------------------
NORMS = [1, 2, 3, 1.5, 0.5, float("inf"), -float("inf")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@HYPOTHESIS
@given(norm=st.sampled_from(NORMS), kernel=st.integers(1, 3), stride=st.sampled_from([None, 1, 2]),
       ceil_mode=st.booleans(), length=st.integers(3, 9), batched=st.booleans(),
       positive=st.booleans(), seed=st.integers(0, 99))
def test_lp_pool1d_matches_torch(torch, dtype, norm, kernel, stride, ceil_mode, length, batched,
                                 positive, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3, length) if batched else (3, length))
    x = np.abs(x) + 0.1 if positive else x
    assert_parity(torch, lambda t: F.lp_pool1d(t, norm, kernel, stride, ceil_mode),
                  lambda t: torch.nn.functional.lp_pool1d(t, norm, kernel, stride, ceil_mode),
                  x, dtype, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@HYPOTHESIS
@given(norm=st.sampled_from(NORMS), kernel=st.sampled_from([1, 2, (2, 3), (3, 1)]),
       stride=st.sampled_from([None, 1, 2, (1, 2)]), ceil_mode=st.booleans(),
       size=st.tuples(st.integers(3, 7), st.integers(3, 7)), batched=st.booleans(),
       positive=st.booleans(), seed=st.integers(0, 99))
def test_lp_pool2d_matches_torch(torch, dtype, norm, kernel, stride, ceil_mode, size, batched,
                                 positive, seed):
    x = np.random.default_rng(seed).standard_normal(((2, 2) if batched else (2,)) + size)
    x = np.abs(x) + 0.1 if positive else x
    assert_parity(torch, lambda t: F.lp_pool2d(t, norm, kernel, stride, ceil_mode),
                  lambda t: torch.nn.functional.lp_pool2d(t, norm, kernel, stride, ceil_mode),
                  x, dtype, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm", [1, 2, 3, 1.5, 0.5, float("inf")])
def test_lp_pool_at_zero_windows_matches_torch(torch, dtype, norm):
    """A window of zeros (the sum's power 1/p has an infinite slope there) and windows whose
    sum of powers is negative: torch's values, zeros, infs and NaNs, forward and backward."""
    x = np.array([[[0.0, 0.0, 1.0, -2.0, 0.0, 0.5, -1.0, 1.0]]])
    assert_parity(torch, lambda t: F.lp_pool1d(t, norm, 2),
                  lambda t: torch.nn.functional.lp_pool1d(t, norm, 2), x, dtype, equal_nan=True)
    plane = np.zeros((1, 1, 4, 4))
    plane[0, 0, 2:, 2:] = [[1.0, -1.0], [0.5, 2.0]]
    assert_parity(torch, lambda t: F.lp_pool2d(t, norm, 2),
                  lambda t: torch.nn.functional.lp_pool2d(t, norm, 2), plane, dtype,
                  equal_nan=True)


@pytest.mark.parametrize("norm", [2, 3, 1.5])
def test_lp_pool_double_backward_matches_torch(torch, rng, norm):
    x = np.abs(rng.standard_normal((2, 2, 5, 6))) + 0.1
    double_backward_parity(torch, lambda t: F.lp_pool2d(t, norm, (2, 3), 1),
                           lambda t: torch.nn.functional.lp_pool2d(t, norm, (2, 3), 1), x,
                           rtol=1e-10, atol=1e-12)
    double_backward_parity(torch, lambda t: F.lp_pool1d(t, norm, 3, 2, True),
                           lambda t: torch.nn.functional.lp_pool1d(t, norm, 3, 2, True),
                           x[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("norm", [2, 3, 1.5])
def test_lp_pool_double_backward_matches_torch_float32(torch, rng, norm):
    x = np.abs(rng.standard_normal((2, 2, 5, 6))) + 0.1
    assert_double_backward_parity_float32(
        torch, lambda t: F.lp_pool2d(t, norm, (2, 3), 1),
        lambda t: torch.nn.functional.lp_pool2d(t, norm, (2, 3), 1), x)
    assert_double_backward_parity_float32(
        torch, lambda t: F.lp_pool1d(t, norm, 3, 2, True),
        lambda t: torch.nn.functional.lp_pool1d(t, norm, 3, 2, True), x[0])


@pytest.mark.parametrize("norm", [1, 2, 3, 1.5])
def test_lp_pool_gradcheck(rng, norm):
    x = np.abs(rng.standard_normal((2, 2, 4, 5))) + 0.2
    check_grad(lambda t: F.lp_pool2d(t, norm, 2, 1), x)
    check_grad(lambda t: F.lp_pool1d(t, norm, 2, 1, True), x[0])


def test_lp_pool_by_hand():
    x = tensor(np.array([[[3.0, 4.0, 1.0, 1.0]]]))
    np.testing.assert_allclose(F.lp_pool1d(x, 2, 2).numpy(), [[[5.0, 2 ** 0.5]]])
    np.testing.assert_allclose(F.lp_pool1d(x, 1, 2).numpy(), [[[7.0, 2.0]]])
    np.testing.assert_allclose(F.lp_pool2d(x.reshape(1, 1, 2, 2), 2, 2).numpy(),
                               [[[[27 ** 0.5]]]])


# ---- max unpooling, 1-D and 3-D ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@HYPOTHESIS
@given(kernel=st.integers(1, 3), stride=st.sampled_from([None, 1, 2, 3]), padding=st.integers(0, 1),
       length=st.integers(3, 9), batched=st.booleans(), grow=st.booleans(),
       seed=st.integers(0, 99))
def test_max_unpool1d_matches_torch(torch, dtype, kernel, stride, padding, length, batched, grow,
                                    seed):
    padding = min(padding, kernel // 2)
    x = torch.tensor(np.random.default_rng(seed).standard_normal(
        (2, 2, length) if batched else (2, length)))
    values, indices = torch.nn.functional.max_pool1d(x, kernel, stride, padding,
                                                     return_indices=True)
    step = kernel if stride is None else stride
    size = (values.shape[-1] - 1) * step - 2 * padding + kernel
    output_size = (size + step - 1,) if grow and step > 1 else None
    ours_indices = tensor(indices.numpy())
    try:  # (with padding, a pooled index may lie past the unpooled length: torch refuses it)
        torch.nn.functional.max_unpool1d(values, indices, kernel, stride, padding, output_size)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="invalid max index"):
            F.max_unpool1d(tensor(values.numpy()), ours_indices, kernel, stride, padding,
                           output_size)
        return
    assert_parity(torch, lambda t: F.max_unpool1d(t, ours_indices, kernel, stride, padding,
                                                  output_size),
                  lambda t: torch.nn.functional.max_unpool1d(t, indices, kernel, stride, padding,
                                                             output_size),
                  values.numpy(), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@HYPOTHESIS
@given(kernel=st.sampled_from([1, 2, (2, 1, 3)]), stride=st.sampled_from([None, 1, 2, (1, 2, 2)]),
       size=st.tuples(*[st.integers(3, 5)] * 3), batched=st.booleans(), grow=st.booleans(),
       seed=st.integers(0, 99))
def test_max_unpool3d_matches_torch(torch, dtype, kernel, stride, size, batched, grow, seed):
    x = torch.tensor(np.random.default_rng(seed).standard_normal(
        ((2, 2) if batched else (2,)) + size))
    values, indices = torch.nn.functional.max_pool3d(x, kernel, stride, return_indices=True)
    kernels = (kernel,) * 3 if isinstance(kernel, int) else kernel
    steps = kernels if stride is None else (stride,) * 3 if isinstance(stride, int) else stride
    default = [(n - 1) * s + k for n, s, k in zip(values.shape[-3:], steps, kernels)]
    output_size = [n + s - 1 for n, s in zip(default, steps)] if grow else None
    ours_indices = tensor(indices.numpy())
    try:  # (a stride past the kernel skips voxels: an index may lie past the unpooled volume)
        torch.nn.functional.max_unpool3d(values, indices, kernel, stride, 0, output_size)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="invalid max index"):
            F.max_unpool3d(tensor(values.numpy()), ours_indices, kernel, stride, 0, output_size)
        return
    assert_parity(torch, lambda t: F.max_unpool3d(t, ours_indices, kernel, stride, 0,
                                                  output_size),
                  lambda t: torch.nn.functional.max_unpool3d(t, indices, kernel, stride, 0,
                                                             output_size),
                  values.numpy(), dtype)


def _pooled(torch, rng, dims):
    """(values, indices) of a max pool with stride 1 (so that indices repeat), as numpy."""
    x = torch.tensor(rng.standard_normal((2, 2) + (5,) * dims))
    pool = getattr(torch.nn.functional, f"max_pool{dims}d")
    values, indices = pool(x, 2, 1, return_indices=True)
    return values.numpy(), indices


@pytest.mark.parametrize("dims", [1, 3])
def test_max_unpool_double_backward_and_gradcheck(torch, rng, dims):
    values, indices = _pooled(torch, rng, dims)
    name = f"max_unpool{dims}d"
    ours_indices = tensor(indices.numpy())
    double_backward_parity(torch, lambda t: getattr(F, name)(t * t, ours_indices, 2, 1),
                           lambda t: getattr(torch.nn.functional, name)(t * t, indices, 2, 1),
                           values)
    assert_double_backward_parity_float32(
        torch, lambda t: getattr(F, name)(t * t, ours_indices, 2, 1),
        lambda t: getattr(torch.nn.functional, name)(t * t, indices, 2, 1), values)
    # (finite differences see a repeated index's last write alone, where torch's rule, the
    # gather, pays every value that names it: check them on a pool whose indices are distinct)
    values, indices = getattr(torch.nn.functional, f"max_pool{dims}d")(
        torch.tensor(rng.standard_normal((2, 2) + (4,) * dims)), 2, return_indices=True)
    distinct = tensor(indices.numpy())
    check_grad(lambda t: getattr(F, name)(t, distinct, 2), values.numpy())


# ---- the Modules --------------------------------------------------------------------------------
def test_module_reprs_are_torch_s(torch):
    for build in ["AdaptiveAvgPool1d(3)", "AdaptiveMaxPool1d(3, True)",
                  "AdaptiveAvgPool3d((2, None, 3))", "AdaptiveMaxPool3d(2, return_indices=True)",
                  "LPPool1d(2, 3)", "LPPool2d(2.5, (2, 3), 1, True)", "MaxUnpool1d(2)",
                  "MaxUnpool1d(3, 2, 1)", "MaxUnpool3d(2)", "MaxUnpool3d((2, 1, 3), 1, 0)"]:
        assert repr(eval(f"nn.{build}")) == repr(eval(f"torch.nn.{build}")), build


@pytest.mark.parametrize("build, shape", [
    ("AdaptiveAvgPool1d(3)", (2, 3, 7)), ("AdaptiveMaxPool1d(4, True)", (3, 7)),
    ("AdaptiveAvgPool3d((2, None, 3))", (2, 2, 3, 4, 5)),
    ("AdaptiveMaxPool3d(2, True)", (2, 3, 4, 5)),
    ("LPPool1d(2, 3)", (2, 3, 7)), ("LPPool2d(3, (2, 3), 1, True)", (2, 3, 5, 6))])
def test_modules_compute_what_torch_s_do(torch, rng, build, shape):
    x = np.abs(rng.standard_normal(shape))
    assert_parity(torch, eval(f"nn.{build}"), eval(f"torch.nn.{build}"), x, np.float64)


@pytest.mark.parametrize("dims", [1, 3])
def test_max_unpool_modules_invert_the_pools(torch, rng, dims):
    values, indices = _pooled(torch, rng, dims)
    ours = getattr(nn, f"MaxUnpool{dims}d")(2, 1)(tensor(values), tensor(indices.numpy()))
    theirs = getattr(torch.nn, f"MaxUnpool{dims}d")(2, 1)(torch.tensor(values), indices)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- errors, as torch's --------------------------------------------------------------------------
ERRORS = [
    "F.adaptive_avg_pool1d(X3, (3, 4))", "F.adaptive_avg_pool1d(X3, None)",
    "F.adaptive_max_pool1d(X3, (None,))", "F.adaptive_avg_pool1d(X3, 2.5)",
    "F.adaptive_max_pool1d(ONE, 3)", "F.adaptive_avg_pool1d(X4, 3)",
    "F.adaptive_max_pool1d(EMPTY_C1, 3)", "F.adaptive_avg_pool1d(EMPTY_L1, 3)",
    "F.adaptive_avg_pool1d(X3, -1)", "F.adaptive_max_pool1d(INT3, 2)",
    "F.adaptive_avg_pool3d(X5, (2, 3))", "F.adaptive_max_pool3d(X5, None)",
    "F.adaptive_avg_pool3d(X5, -1)", "F.adaptive_max_pool3d(EMPTY_C3, 2)",
    "F.adaptive_avg_pool3d(EMPTY_C3, 2)", "F.adaptive_avg_pool3d(X3, 2)",
    "F.adaptive_max_pool3d(INT5, 2)", "F.adaptive_avg_pool3d(X5, (2, 2.0, 2))",
    "F.adaptive_max_pool3d(X5, 'ab')",
    "F.max_unpool1d(V1, I1, 2, output_size=(11,))", "F.max_unpool1d(V1, I1, 2, output_size=(2, 9))",
    "F.max_unpool1d(V1, I1.int(), 2)", "F.max_unpool1d(V1, I1[:, :, :3], 2)",
    "F.max_unpool1d(V1, I1 + 8, 2)", "F.max_unpool1d(V1.long(), I1, 2)",
    "F.max_unpool1d(V1[0, 0], I1[0, 0], 2)",
    "F.max_unpool3d(V3, I3, 2, output_size=(5, 4))",
    "F.max_unpool3d(V3, I3, 2, output_size=(6, 4, 7))",
    "F.max_unpool3d(V3, I3.int(), 2)", "F.max_unpool3d(V3, I3 + 100, 2)",
    "F.max_unpool3d(V3.long(), I3, 2)", "F.max_unpool3d(V3[0, 0], I3[0, 0], 2)",
    "F.max_unpool3d(V3, I3[:, :, :1], 2)", "F.max_unpool3d(V3, I3, 2, 0)",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_are_torch_s(torch, call):
    def operands(lib):
        rng = np.random.default_rng(0)
        x3, x5 = rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 4, 5, 6))
        v1, i1 = torch.nn.functional.max_pool1d(torch.tensor(rng.standard_normal((2, 3, 8))), 2,
                                                return_indices=True)
        v3, i3 = torch.nn.functional.max_pool3d(torch.tensor(rng.standard_normal((2, 3, 4, 4, 6))),
                                                2, return_indices=True)
        arrays = dict(X3=x3, X4=rng.standard_normal((1, 2, 3, 7)), X5=x5, ONE=np.ones(7),
                      EMPTY_C1=np.ones((2, 0, 7)), EMPTY_L1=np.ones((2, 2, 0)),
                      EMPTY_C3=np.ones((2, 0, 4, 5, 6)), INT3=np.ones((2, 3, 4), np.int64),
                      INT5=np.ones((2, 3, 4, 5, 6), np.int64), V1=v1.numpy(), I1=i1.numpy(),
                      V3=v3.numpy(), I3=i3.numpy())
        make = tensor if lib is None else lib.tensor
        return {name: make(a) for name, a in arrays.items()}

    with pytest.raises(Exception) as theirs:
        eval(call, dict(operands(torch), F=torch.nn.functional))
    with pytest.raises(Exception) as ours:
        eval(call, dict(operands(None), F=F))
    # torch's error type (a RuntimeError of ours may also be a ValueError: GeometryError)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


@pytest.mark.parametrize("call", ["F.adaptive_avg_pool1d(EMPTY_C, 3)",
                                  "F.adaptive_max_pool1d(EMPTY_N, 3)",
                                  "F.adaptive_max_pool3d(EMPTY_N3, 2)",
                                  "F.adaptive_avg_pool3d(X, 0)",
                                  "F.adaptive_max_pool3d(X, (0, 2, 2))[1]",
                                  "F.adaptive_max_pool3d(X, 0)", "F.adaptive_max_pool1d(Y, 0)",
                                  "F.adaptive_avg_pool3d(X, (2, 0, 1))"])
def test_empty_inputs_torch_takes(torch, call):
    arrays = dict(EMPTY_C=np.ones((2, 0, 7)), EMPTY_N=np.ones((0, 2, 7)),
                  EMPTY_N3=np.ones((0, 2, 4, 5, 6)), X=np.ones((2, 3, 4, 5, 6)),
                  Y=np.ones((2, 3, 5)))
    ours = eval(call, dict({k: tensor(a) for k, a in arrays.items()}, F=F))
    theirs = eval(call, dict({k: torch.tensor(a) for k, a in arrays.items()},
                             F=torch.nn.functional))
    assert ours.shape == tuple(theirs.shape)


@pytest.mark.parametrize("name, shape, size, node, cell", [
    ("adaptive_max_pool1d", (1, 1, 6), 2, "AdaptiveMaxPool1d", "position 1"),
    ("adaptive_max_pool3d", (1, 1, 2, 2, 2), 1, "AdaptiveMaxPool3d", "voxel (0, 1, 1)")])
def test_gradcheck_names_a_tie_as_a_kink_of_the_node(name, shape, size, node, cell):
    x = tensor(np.ones(shape), requires_grad=True)  # every window all ties
    report = gradcheck_report(lambda t: getattr(F, name)(t, size), [x])
    assert not report.failures and report.kinks
    assert f"{node} window" in str(report) and "PyTorch's rule" in str(report)
    assert cell in str(report)
