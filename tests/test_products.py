"""Vector and matrix products beyond matmul (ops/matmul.py): dot, vdot, inner, outer/ger, mv,
kron, addmm, addmv, addbmm, baddbmm and cdist — compositions of matmul, products and norms.

Each against torch in float32 and float64: forward, gradients and the second derivative
through a create_graph backward (cdist: torch has none, so ours is checked against finite
differences instead); hypothesis over shapes; float64 finite differences; torch's gradients
where cdist's distances are 0 or tie; integer dtypes; beta = 0 ignoring a NaN input; torch's
errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor

from helpers import check_grad
from test_math_functions import DTYPES, TOLERANCES, assert_parity, compare

# name -> (function of the tensors (ours or torch's: the same spelling), the operands' shapes)
PRODUCTS = {
    "dot": (lambda a, b: a.dot(b), [(5,), (5,)]),
    "vdot": (lambda a, b: tinygrad_pool.vdot(a, b) if isinstance(a, tinygrad_pool.Tensor)
             else a.vdot(b), [(4,), (4,)]),
    "inner": (lambda a, b: a.inner(b), [(2, 3, 4), (5, 4)]),
    "inner_0d": (lambda a, b: a.inner(b), [(), (3, 2)]),
    "outer": (lambda a, b: a.outer(b), [(3,), (4,)]),
    "ger": (lambda a, b: a.ger(b), [(2,), (5,)]),
    "mv": (lambda a, b: a.mv(b), [(3, 4), (4,)]),
    "kron": (lambda a, b: a.kron(b), [(2, 3), (2, 1, 2)]),
    "kron_1d": (lambda a, b: a.kron(b), [(3,), (2,)]),
    "addmm": (lambda c, a, b: c.addmm(a, b), [(3, 4), (3, 2), (2, 4)]),
    "addmm_scaled": (lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=-2), [(4,), (3, 2), (2, 4)]),
    "addmm_beta0": (lambda c, a, b: c.addmm(a, b, beta=0), [(3, 1), (3, 2), (2, 4)]),
    "addmv": (lambda c, a, b: c.addmv(a, b, alpha=3), [(3,), (3, 4), (4,)]),
    "addbmm": (lambda c, a, b: c.addbmm(a, b, beta=2), [(3, 4), (5, 3, 2), (5, 2, 4)]),
    "baddbmm": (lambda c, a, b: c.baddbmm(a, b, alpha=0.5), [(1, 4), (5, 3, 2), (5, 2, 4)]),
}


def operands(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


@DTYPES
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_match_torch_to_second_order(torch, name, dtype):
    fn, shapes = PRODUCTS[name]
    assert_parity(torch, fn, fn, operands(shapes, 0), dtype)


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_product_gradients_match_finite_differences(name):
    fn, shapes = PRODUCTS[name]
    check_grad(fn, *operands(shapes, 1))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 4), k=st.integers(0, 4), m=st.integers(0, 4), b=st.integers(1, 3),
       seed=st.integers(0, 2 ** 16), double=st.booleans(), beta=st.sampled_from([0, 1, 0.5]),
       alpha=st.sampled_from([1, -1.5]))
def test_products_match_torch_over_shapes(n, k, m, b, seed, double, beta, alpha):
    torch = pytest.importorskip("torch")
    dtype = np.float64 if double else np.float32
    cases = [
        (lambda c, x, y: c.addmm(x, y, beta=beta, alpha=alpha), [(m,), (n, k), (k, m)]),
        (lambda c, x, y: c.baddbmm(x, y, beta=beta, alpha=alpha), [(n, 1), (b, n, k), (b, k, m)]),
        (lambda c, x, y: c.addbmm(x, y, beta=beta, alpha=alpha), [(n, m), (b, n, k), (b, k, m)]),
        (lambda x, y: x.inner(y), [(b, n, k), (m, k)]),
        (lambda x, y: x.kron(y), [(n, k), (b, m)]),
    ]
    for fn, shapes in cases:
        assert_parity(torch, fn, fn, operands(shapes, seed), dtype, seed)


def test_addmm_with_beta_0_ignores_a_nan_input_and_gives_it_gradient_0(torch):
    c = np.full((2, 2), np.nan)
    a, b = np.eye(2), np.arange(4.0).reshape(2, 2)
    ours = [tensor(v, requires_grad=True) for v in (c, a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (c, a, b)]
    yo = tinygrad_pool.addmm(*ours, beta=0, alpha=2)
    yt = torch.addmm(*theirs, beta=0, alpha=2)
    compare(yo.numpy(), yt.detach().numpy(), dict(rtol=0, atol=0), "forward")
    yo.sum().backward()
    yt.sum().backward()
    for o, t in zip(ours, theirs):
        compare(o.grad.numpy(), t.grad.numpy(), dict(rtol=0, atol=0), "gradient")


def test_integer_products_and_dtypes(torch):
    i = [1, 2, 0]
    assert tinygrad_pool.dot(tensor(i), tensor(i)).item() == 5
    assert tinygrad_pool.vdot(tensor(i), tensor(i)).dtype == np.int64
    assert tinygrad_pool.mv(tensor([i]), tensor(i)).tolist() == [5]
    pairs = [(tinygrad_pool.outer(tensor(i), tensor([1.0, 2.0])),
              torch.outer(torch.tensor(i), torch.tensor([1.0, 2.0]))),
             (tinygrad_pool.kron(tensor([[1, 2]]), tensor([1, 2, 3])),
              torch.kron(torch.tensor([[1, 2]]), torch.tensor([1, 2, 3]))),
             (tinygrad_pool.kron(tensor([True, False]), tensor([True])),
              torch.kron(torch.tensor([True, False]), torch.tensor([True]))),
             (tinygrad_pool.kron(tensor(2.0), tensor([1.0, 2.0])),
              torch.kron(torch.tensor(2.0), torch.tensor([1.0, 2.0]))),
             (tinygrad_pool.addmm(tensor([1, 2]), tensor([[1, 2]]), tensor([[1, 0], [2, 1]]),
                                  beta=2, alpha=3),
              torch.addmm(torch.tensor([1, 2]), torch.tensor([[1, 2]]),
                          torch.tensor([[1, 0], [2, 1]]), beta=2, alpha=3))]
    for ours, theirs in pairs:
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call, error", [
    (lambda: tinygrad_pool.dot(tensor([[1.0]]), tensor([1.0])), RuntimeError),
    (lambda: tinygrad_pool.dot(tensor([1.0]), tensor([1.0, 2.0])), RuntimeError),
    (lambda: tinygrad_pool.dot(tensor([1.0]), tensor([1.0], dtype=tinygrad_pool.float64)),
     RuntimeError),
    (lambda: tinygrad_pool.dot(tensor([True]), tensor([True])), NotImplementedError),
    (lambda: tinygrad_pool.dot(tensor([1.0]), [1.0]), TypeError),
    (lambda: tinygrad_pool.outer(tensor([[1.0]]), tensor([1.0])), RuntimeError),
    (lambda: tinygrad_pool.inner(tensor([[1.0, 2.0]]), tensor([1.0, 2.0, 3.0])), RuntimeError),
    (lambda: tinygrad_pool.inner(tensor([1, 2]), tensor([1.0, 2.0])), RuntimeError),
    (lambda: tinygrad_pool.mv(tensor([[1.0]]), tensor([[1.0]])), RuntimeError),
    (lambda: tinygrad_pool.mv(tensor([[1.0, 2.0]]), tensor([1.0])), RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([1.0]), tensor([1.0, 2.0]), tensor([[1.0], [2.0]])),
     RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([1.0]), tensor([[1.0, 2.0]]), tensor([[1.0, 2.0]])),
     RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([1]), tensor([[1.0, 2.0]]), tensor([[1.0], [2.0]])),
     RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([[1.0, 1.0]]), tensor([[1.0, 2.0]]),
                                 tensor([[1.0], [2.0]])), RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([1.0]), tensor([[1.0]]), tensor([[1.0]]), beta=1j),
     RuntimeError),
    (lambda: tinygrad_pool.addmm(tensor([1.0]), tensor([[1.0]]), tensor([[1.0]]), alpha=None),
     TypeError),
    (lambda: tinygrad_pool.baddbmm(tensor([1.0]), tensor([[[1.0]]]), tensor([[1.0, 2.0]])),
     RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([[1, 2]]), tensor([[1, 2]])), RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([1.0, 2.0]), tensor([1.0, 2.0])), RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([[1.0]]), tensor([[1.0]]), p=-1), RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([[1.0]]), tensor([[1.0]]), p=float("nan")), RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([[1.0, 2.0]]), tensor([[1.0, 2.0, 3.0]])), RuntimeError),
    (lambda: tinygrad_pool.cdist(tensor([[1.0]]), tensor([[1.0]]), compute_mode="x"), ValueError),
    (lambda: tinygrad_pool.cdist(tensor(np.zeros((2, 1, 1))), tensor(np.zeros((3, 1, 1)))),
     RuntimeError),
])
def test_errors_are_torchs_types(call, error):
    with pytest.raises(error):
        call()


# ---- cdist ---------------------------------------------------------------------------------
P_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, np.inf]


def points_with_ties(shape, seed) -> np.ndarray:
    """Rounded points: coinciding rows (distance 0), zero differences and tied coordinates."""
    return np.round(np.random.default_rng(seed).standard_normal(shape) * 1.5)


@DTYPES
@pytest.mark.parametrize("p", P_VALUES)
def test_cdist_matches_torch_where_points_coincide_and_tie(torch, p, dtype):
    """torch's _cdist_backward: 0 where a distance is 0 (and, for p < 1, where a difference
    is), and for p = inf the whole gradient to every coordinate at the maximum."""
    x1, x2 = points_with_ties((2, 5, 3), 0), points_with_ties((1, 4, 3), 1)
    x1[0, 0] = x2[0, 1]  # coinciding points
    ours = [tensor(v.astype(dtype), requires_grad=True) for v in (x1, x2)]
    theirs = [torch.tensor(v.astype(dtype), requires_grad=True) for v in (x1, x2)]
    yo = tinygrad_pool.cdist(*ours, p=p)
    yt = torch.cdist(*theirs, p=p)
    compare(yo.numpy(), yt.detach().numpy(), TOLERANCES[dtype], "forward")
    weights = np.random.default_rng(2).standard_normal(yo.shape).astype(dtype)
    go = autograd.grad(yo, ours, grad_outputs=[tensor(weights)])
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[torch.tensor(weights)])
    for o, t in zip(go, gt):
        compare(o.numpy(), t.numpy(), TOLERANCES[dtype], f"gradient, p={p}")


@settings(max_examples=25, deadline=None)
@given(p=st.sampled_from(P_VALUES), rows=st.integers(1, 30), columns=st.integers(1, 4),
       m=st.integers(0, 3), seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_cdist_matches_torch_over_shapes(p, rows, columns, m, seed, double):
    """Up to 30 rows: past 25 torch's p = 2 switches to its matmul formula (values within
    rounding of the norms of the differences)."""
    torch = pytest.importorskip("torch")
    dtype = np.float64 if double else np.float32
    rng = np.random.default_rng(seed)
    x1, x2 = rng.standard_normal((rows, m)), rng.standard_normal((columns, m))
    ours = [tensor(v.astype(dtype), requires_grad=True) for v in (x1, x2)]
    theirs = [torch.tensor(v.astype(dtype), requires_grad=True) for v in (x1, x2)]
    yo, yt = tinygrad_pool.cdist(*ours, p=p), torch.cdist(*theirs, p=p)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    compare(yo.numpy(), yt.detach().numpy(), tol, "forward")
    if not yt.requires_grad:  # (torch: no columns, no graph)
        return
    go = autograd.grad(yo.sum(), ours, allow_unused=True)
    gt = torch.autograd.grad(yt.sum(), theirs, allow_unused=True)
    for o, t, v in zip(go, gt, (x1, x2)):
        compare(np.zeros(v.shape) if o is None else o.numpy(),
                np.zeros(v.shape) if t is None else t.numpy(), tol, "gradient")


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_cdist_gradients_and_second_derivatives_match_finite_differences(p):
    """torch has no second derivative of cdist; ours differentiates its gradient, checked
    here against finite differences of that gradient (points apart: no kink nearby)."""
    x1 = np.random.default_rng(3).standard_normal((3, 2))
    x2 = np.random.default_rng(4).standard_normal((2, 2, 2))
    check_grad(lambda a, b: tinygrad_pool.cdist(a, b, p=p), x1, x2)
    weights = tensor(np.random.default_rng(5).standard_normal((2, 3, 2)))
    direction = np.random.default_rng(6).standard_normal((3, 2))

    def projected_gradient(a, b, create_graph=False):
        """Σ direction · ∂(Σ weights · cdist)/∂x1"""
        a, b = (tensor(v, requires_grad=True) if not isinstance(v, tinygrad_pool.Tensor) else v
                for v in (a, b))
        (grad_a,) = autograd.grad(tinygrad_pool.cdist(a, b, p=p), [a], grad_outputs=[weights],
                                  create_graph=create_graph)
        return (grad_a * tensor(direction)).sum()
    leaves = [tensor(x1, requires_grad=True), tensor(x2, requires_grad=True)]
    second = autograd.grad(projected_gradient(*leaves, create_graph=True), leaves)
    for k, (value, got) in enumerate(zip((x1, x2), second)):
        numeric = np.zeros(value.shape)
        for index in np.ndindex(value.shape):
            step = np.zeros(value.shape)
            step[index] = 1e-6
            moved = [v + step if j == k else v for j, v in enumerate((x1, x2))]
            back = [v - step if j == k else v for j, v in enumerate((x1, x2))]
            numeric[index] = (projected_gradient(*moved).item() -
                              projected_gradient(*back).item()) / 2e-6
        np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-5, atol=1e-6)


@DTYPES
@pytest.mark.parametrize("name, shapes", [
    ("addmm_", [(3, 4), (3, 2), (2, 4)]), ("addmv_", [(3,), (3, 4), (4,)]),
    ("addbmm_", [(3, 4), (5, 3, 2), (5, 2, 4)]), ("baddbmm_", [(5, 3, 4), (5, 3, 2), (5, 2, 4)])])
def test_in_place_forms_match_torch_and_bump_the_version(torch, name, shapes, dtype):
    arrays = [a.astype(dtype) for a in operands(shapes, 4)]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    # a leaf's product (a non-leaf that requires grad): the gradient goes through the write
    target, their_target = ours[0] * 1, theirs[0] * 1
    version = target._version
    assert getattr(target, name)(*ours[1:], beta=0.5, alpha=2) is target
    assert target._version == version + 1
    getattr(their_target, name)(*theirs[1:], beta=0.5, alpha=2)
    compare(target.detach().numpy(), their_target.detach().numpy(), TOLERANCES[dtype], name)
    (target * target).sum().backward()
    (their_target * their_target).sum().backward()
    for o, t in zip(ours, theirs):
        compare(o.grad.numpy(), t.grad.numpy(), TOLERANCES[dtype], f"{name} gradient")


def test_module_level_addmv_writes_into_input(torch):
    c, mat, vec = operands([(3,), (3, 4), (4,)], 5)
    ours, theirs = tensor(c), torch.tensor(c)
    assert tinygrad_pool.addmv_(ours, tensor(mat), tensor(vec), beta=2) is ours
    torch.addmv_(theirs, torch.tensor(mat), torch.tensor(vec), beta=2)
    compare(ours.numpy(), theirs.numpy(), TOLERANCES[np.float64], "addmv_")


def test_cdist_column_mismatch_names_the_function_and_the_shapes():
    import tinygrad_pool
    with pytest.raises(RuntimeError, match=r"cdist: .*X1: 4 X2: 5 \(shapes \(3, 4\) and \(3, 5\)\)"):
        tinygrad_pool.cdist(tinygrad_pool.randn(3, 4), tinygrad_pool.randn(3, 5))
