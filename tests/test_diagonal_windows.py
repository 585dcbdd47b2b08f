"""diagonal, diag, Tensor.unfold (sliding windows along one dim) and movedim against torch:
values, views (writes show through, versions shared), gradients and second derivatives in
float32 and float64, float64 finite differences, hypothesis over shapes and arguments, and
torch's errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad

TOLERANCES = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def assert_parity(torch, fn, x, dtype, seed=0):
    """Forward, gradient and second derivative (d/dx and d/dw of Σ v·(∂y/∂x)ᵀw) of fn(lib, x)."""
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    x = x.astype(dtype)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = fn(tinygrad_pool, xo), fn(torch, xt)
    assert yo.shape == tuple(yt.shape) and yo.dtype == dtype
    np.testing.assert_array_equal(yo.detach().numpy(), yt.detach().numpy())
    w = rng.standard_normal(yo.shape).astype(dtype)
    wo, wt = tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), **tol)
    v = rng.standard_normal(x.shape).astype(dtype)
    (go * tensor(v)).sum().backward()
    (gt * torch.tensor(v)).sum().backward()
    np.testing.assert_allclose(wo.grad.numpy(), wt.grad.numpy(), **tol)
    assert xo.grad is None and xt.grad is None  # (linear: no second derivative in x)


CASES = {
    "diagonal": lambda lib, x: lib.diagonal(x),
    "diagonal_offset": lambda lib, x: x.diagonal(1, 0, 2),
    "diagonal_below": lambda lib, x: x.diagonal(-2, -1, 1),
    "diagonal_empty": lambda lib, x: x.diagonal(9),
    "diag_of_vector": lambda lib, x: lib.diag(x[0, 0], 2),
    "diag_of_matrix": lambda lib, x: lib.diag(x[1], -1),
    "unfold": lambda lib, x: x.unfold(2, 2, 1),
    "unfold_step": lambda lib, x: x.unfold(-1, 2, 3),
    "unfold_zero_size": lambda lib, x: x.unfold(1, 0, 2),
    "movedim": lambda lib, x: lib.movedim(x, (0, 2), (2, 0)),
    "moveaxis": lambda lib, x: x.moveaxis(-1, 0),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(torch, rng, name, dtype):
    assert_parity(torch, CASES[name], rng.standard_normal((2, 3, 5)), dtype)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_windows_and_diagonals_of_any_shape(shape, data):
    torch = pytest.importorskip("torch")  # (not the fixture: hypothesis reruns the body)
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    ndim = len(shape)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 4))
    assert_parity(torch, lambda lib, t: t.unfold(dim, size, step), x, np.float64)
    if ndim >= 2:
        dim1, dim2 = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=2, max_size=2,
                                        unique_by=lambda d: d % ndim))
        offset = data.draw(st.integers(-5, 5))
        assert_parity(torch, lambda lib, t: t.diagonal(offset, dim1, dim2), x, np.float64)
    source = data.draw(st.permutations(range(ndim)))
    assert_parity(torch, lambda lib, t: t.movedim(tuple(range(ndim)), tuple(source)), x,
                  np.float64)


@pytest.mark.parametrize("name", ["diagonal_offset", "diag_of_vector", "unfold", "unfold_step"])
def test_finite_differences(rng, name):
    check_grad(lambda x: (CASES[name](tinygrad_pool, x) ** 2).sum(),
               rng.standard_normal((2, 3, 5)))


@pytest.mark.parametrize("make_view", [lambda x: x.diagonal(), lambda x: x.unfold(1, 2, 2),
                                       lambda x: x.movedim(0, 1)])
def test_views_share_memory_and_version_as_torch(torch, make_view):
    for lib in (torch, tinygrad_pool):
        x = lib.zeros(3, 4)
        view = make_view(x)
        before = x._version
        view.add_(1)
        assert x._version == before + 1
        expected = make_view(torch.zeros(3, 4)).add_(1)
        assert float(x.sum()) == float(expected.numel())


def test_write_into_diagonal_is_differentiated_as_torch(torch, rng):
    """``y.diagonal().mul_(2)`` on a non-leaf: the gradient of the diagonal doubles."""
    a = rng.standard_normal((3, 3))
    grads = []
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * 1
        y.diagonal().mul_(2)
        (y * lib.tensor(a)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads)


@pytest.mark.parametrize("call, error", [
    (lambda lib, x: x.unfold(0, 9, 3), RuntimeError),
    (lambda lib, x: x.unfold(3, 2, 1), IndexError),
    (lambda lib, x: x.unfold(0, 1, 0), RuntimeError),
    (lambda lib, x: x.unfold(0, 1, -1), RuntimeError),
    (lambda lib, x: x.diagonal(0, 1, 1), RuntimeError),
    (lambda lib, x: x.diagonal(0, 0, 3), IndexError),
    (lambda lib, x: lib.diag(x), RuntimeError),
    (lambda lib, x: x.movedim((0, 1), (0,)), RuntimeError),
    (lambda lib, x: x.movedim((0, 0), (0, 1)), RuntimeError),
    (lambda lib, x: x.movedim(3, 0), IndexError),
])
def test_errors_as_torch(torch, call, error):
    for lib in (torch, tinygrad_pool):
        with pytest.raises(error):
            call(lib, lib.zeros(2, 3, 4))


def test_unfold_error_names_the_method_and_the_shape():
    message = r"unfold: maximum size .* is 4 but size is 5 \(input shape \(2, 3, 4\)\)"
    with pytest.raises(RuntimeError, match=message):
        tinygrad_pool.zeros(2, 3, 4).unfold(2, 5, 1)
