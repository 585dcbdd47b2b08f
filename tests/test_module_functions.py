"""torch's module-level arithmetic (add, sub, mul with a number first, alpha), std_mean and
var_mean, the reductions' ``dtype=``, and logaddexp/logaddexp2 — against torch: values, dtypes,
gradients and second derivatives, finite differences, and the errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad


def _same(ours, theirs, **tol):
    assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)


ARITHMETIC = {
    "add": lambda lib, x: lib.add(x, x * 2, alpha=3),
    "add_number_first": lambda lib, x: lib.add(2, x, alpha=3),
    "sub": lambda lib, x: lib.sub(x, 1.5, alpha=2),
    "sub_number_first": lambda lib, x: lib.sub(2, x),
    "subtract": lambda lib, x: lib.subtract(x, x.exp(), alpha=0.5),
    "mul_number_first": lambda lib, x: lib.mul(3, x),
    "multiply": lambda lib, x: lib.multiply(x, x),
    "negative": lambda lib, x: lib.negative(x),
    "std_mean": lambda lib, x: lib.stack(lib.std_mean(x, 1, keepdim=True), 0),
    "var_mean_all": lambda lib, x: lib.stack(lib.var_mean(x, correction=0), 0),
    "std_mean_dims": lambda lib, x: lib.stack(lib.std_mean(x, (0, 1)), 0),
    "sum_dtype": lambda lib, x: x.sum(1, dtype=lib.float64),
    "mean_dtype": lambda lib, x: x.mean(dtype=lib.float64),
    "prod_dtype": lambda lib, x: x.prod(0, dtype=lib.float64),
    "cumsum_dtype": lambda lib, x: x.cumsum(1, dtype=lib.float64),
    "logaddexp": lambda lib, x: lib.logaddexp(x, x.flip(0) * 3),
    "logaddexp2": lambda lib, x: x.logaddexp2(x[:1] * 2),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_matches_torch(torch, rng, name, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    x = rng.standard_normal((3, 4)).astype(dtype)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ARITHMETIC[name](tinygrad_pool, xo), ARITHMETIC[name](torch, xt)
    _same(yo, yt, **tol)
    w = rng.standard_normal(yo.shape)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[tensor(w.astype(yo.dtype))], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[torch.tensor(w).to(yt.dtype)],
                                create_graph=True)
    _same(go, gt, **tol)
    if gt.requires_grad:  # a second derivative in torch: the same here
        (so,) = autograd.grad((go * go).sum(), [xo])
        (st_,) = torch.autograd.grad((gt * gt).sum(), [xt])
        _same(so, st_, rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)


@pytest.mark.parametrize("name", ["std_mean", "var_mean_all", "logaddexp", "logaddexp2",
                                  "add_number_first"])
def test_finite_differences(rng, name):
    check_grad(lambda x: (ARITHMETIC[name](tinygrad_pool, x) ** 2).sum(),
               rng.standard_normal((3, 4)))


@settings(max_examples=30, deadline=None)
@given(a=st.lists(st.sampled_from([-np.inf, np.inf, np.nan, 0.0, -1e308, 1e308, -3.0, 2.5, 700.0]),
                  min_size=1, max_size=6), data=st.data())
def test_logaddexp_at_extremes(a, data):
    torch = pytest.importorskip("torch")  # (not the fixture: hypothesis reruns the body)
    b = data.draw(st.permutations(a))
    for fn in ("logaddexp", "logaddexp2"):
        xo, yo = tensor(np.array(a), requires_grad=True), tensor(np.array(b), requires_grad=True)
        xt, yt = (torch.tensor(np.array(v), requires_grad=True) for v in (a, b))
        zo, zt = getattr(tinygrad_pool, fn)(xo, yo), getattr(torch, fn)(xt, yt)
        np.testing.assert_allclose(zo.numpy(), zt.detach().numpy(), rtol=1e-13)
        zo.sum().backward()
        zt.sum().backward()
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(yo.grad.numpy(), yt.grad.numpy(), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("dtype_name", ["int8", "int16", "float64", "float32"])
def test_integer_reductions_keep_the_asked_dtype(torch, dtype_name):
    x = np.array([[1, 2, 3], [4, 5, 100]], np.int32)
    for method, args in (("sum", (1,)), ("prod", (1,)), ("cumsum", (1,))):
        ours = getattr(tensor(x), method)(*args, dtype=getattr(tinygrad_pool, dtype_name))
        theirs = getattr(torch.tensor(x), method)(*args, dtype=getattr(torch, dtype_name))
        _same(ours, theirs)


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.logaddexp(lib.tensor([1, 2]), lib.tensor([1, 2])), RuntimeError),
    (lambda lib: lib.logaddexp(lib.tensor([1.0]), 2.0), TypeError),
    (lambda lib: lib.std_mean(lib.tensor([1, 2])), RuntimeError),
    (lambda lib: lib.add(lib.tensor([1.0]), "a"), TypeError),
])
def test_errors_as_torch(torch, call, error):
    for lib in (torch, tinygrad_pool):
        with pytest.raises(error):
            call(lib)


@pytest.mark.parametrize("name", ["std_mean", "var_mean", "nansum", "nanmean"])
def test_numpy_axis_spelling_as_torch(torch, rng, name):
    """torch takes axis= (and keepdims=) for dim= on these too (tinygrad's test_std_mean)."""
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ours = getattr(tinygrad_pool, name)(tensor(x), axis=(0, 2), keepdims=True)
    theirs = getattr(torch, name)(torch.tensor(x), axis=(0, 2), keepdims=True)
    for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (ours, theirs))):
        _same(a, b, rtol=1e-5, atol=1e-6)
