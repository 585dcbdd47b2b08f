"""einsum's fuller forms against torch: ``...`` (broadcast, in the implicit output and in an
explicit one), a letter repeated within one operand (a diagonal), and the sublist form —
values, gradients and second derivatives in float32 and float64, finite differences, and
torch's error types. (The letters-only cases are in tests/test_torch_api.py.)"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool as tg

from helpers import check_grad

TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


def compare(ours, theirs, dtype, what: str, shape) -> None:
    expected = np.zeros(shape) if theirs is None else theirs.detach().numpy()
    got = np.zeros(shape) if ours is None else ours.detach().numpy()
    tol = dict(TOL[dtype])
    tol["atol"] *= max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, **tol, err_msg=what)


def parity(torch, equation, shapes, dtype=np.float64, second=True, seed=0):
    """einsum(equation) on operands of these shapes, ours against torch's: the result, each
    operand's gradient, and the derivatives of Σ direction · gradient (second order)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = tg.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert yo.dtype == dtype and tuple(yo.shape) == tuple(yt.shape), (yo.shape, yt.shape)
    compare(yo, yt, dtype, "forward", yo.shape)
    weights = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    wo, wt = tg.tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = tg.autograd.grad(yo, ours, wo, create_graph=True)
    gt = torch.autograd.grad(yt, theirs, wt, create_graph=True)
    for k, (a, b) in enumerate(zip(go, gt)):
        compare(a, b, dtype, f"gradient of operand {k}", shapes[k])
    if not second:
        return
    directions = [rng.standard_normal(s).astype(dtype) for s in shapes]
    so = sum((g * tg.tensor(d)).sum() for g, d in zip(go, directions))
    st_ = sum((g * torch.tensor(d)).sum() for g, d in zip(gt, directions))
    ho = tg.autograd.grad(so, ours + [wo], allow_unused=True)
    ht = torch.autograd.grad(st_, theirs + [wt], allow_unused=True)
    for k, (a, b) in enumerate(zip(ho, ht)):
        compare(a, b, dtype, f"second derivative {k}", (list(shapes) + [weights.shape])[k])


CASES = [
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,jk", [(2, 3, 4), (4, 5)]),           # implicit: the ellipsis first, then i, k
    ("...j,j...", [(2, 3, 4), (4, 2, 3)]),
    ("i...,i...->...", [(2, 3, 1), (2, 1, 4)]),   # the ellipsis dims broadcast
    ("i...->...i", [(2, 3, 4)]),
    ("...->", [(2, 3, 4)]),
    ("...", [(2, 3, 4)]),
    ("ij...", [(2, 3, 4)]),
    ("...i,...i", [(3, 4), (2, 3, 4)]),           # ellipses of different lengths, right-aligned
    ("i...->i", [(2, 3, 4)]),                     # ellipsis summed away
    ("ij->...ij", [(2, 3)]),                      # an empty ellipsis
    ("i...j,j->i", [(2, 3, 4), (4,)]),
    ("ba...,...->ab", [(2, 3, 1), (1,)]),
    ("i...j, j...->i...", [(2, 3, 4), (4, 3)]),
    ("ii->i", [(3, 3)]),                          # diagonals
    ("ii", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("ii,i->i", [(3, 3), (1,)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("iii->", [(2, 2, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("bii,bjj->bij", [(2, 3, 3), (2, 4, 4)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_torch_to_second_order(torch, equation, shapes, dtype):
    parity(torch, equation, shapes, dtype)


@pytest.mark.parametrize("equation, shapes", [c for c in CASES if "1" not in str(c[1])],
                         ids=[c[0] for c in CASES if "1" not in str(c[1])])
def test_einsum_gradient_by_finite_differences(equation, shapes):
    rng = np.random.default_rng(1)
    check_grad(lambda *ops: (tg.einsum(equation, *ops) ** 2).sum(),
               *[rng.standard_normal(s) for s in shapes])


def test_einsum_sublist_form_matches_torch(torch):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    for sublists in (([0, 1, 2], [2, 3], [0, 1, 3]), ([0, 1, 2], [2, 3]),
                     ([Ellipsis, 1, 2], [2, 3], [Ellipsis, 1, 3]), ([Ellipsis, 51], [51, 0]),
                     ([27, 0, 1], [1, 2])):  # implicit output: in the ints' order
        ours = tg.einsum(tg.tensor(a), sublists[0], tg.tensor(b), *sublists[1:])
        theirs = torch.einsum(torch.tensor(a), sublists[0], torch.tensor(b), *sublists[1:])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call, error", [
    (lambda m: m.einsum("..i->i", m.ones(2, 3)), RuntimeError),
    (lambda m: m.einsum("...i...->i", m.ones(2, 3)), RuntimeError),
    (lambda m: m.einsum("i...->....", m.ones(2, 3)), RuntimeError),
    (lambda m: m.einsum("ijkl...", m.ones(2, 3, 4)), RuntimeError),
    (lambda m: m.einsum("...i,...i->", m.ones(3, 4), m.ones(2, 2, 4)), RuntimeError),
    (lambda m: m.einsum("ii->i", m.ones(3, 4)), RuntimeError),
    (lambda m: m.einsum("ii->i", m.ones(1, 3)), RuntimeError),
    (lambda m: m.einsum("i->ii", m.ones(3)), RuntimeError),
    (lambda m: m.einsum(m.ones(2, 3), [0, 52]), ValueError),
])
def test_einsum_errors_match_torch(torch, call, error):
    with pytest.raises(error):
        call(tg)
    with pytest.raises(error):
        call(torch)


@settings(max_examples=30, deadline=None)
@given(batch=st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.booleans()), max_size=3),
       sizes=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
       form=st.sampled_from(["...ij,...jk->...ik", "...ij,...jk", "...ij,...jk->ik",
                             "i...j,j...k->...ki", "...ii,...i->...i"]),
       cut=st.integers(0, 3))
def test_einsum_ellipsis_over_broadcast_shapes_matches_torch(batch, sizes, form, cut):
    torch = pytest.importorskip("torch")
    # each operand's ellipsis: the batch dims (right-aligned), some of them 1 or left out
    first = tuple(1 if one else n for n, one, _ in batch)
    second = tuple(1 if one else n for n, _, one in batch)[min(cut, len(batch)):]
    i, j, k = sizes
    if form.startswith("...ij"):
        shapes = [first + (i, j), second + (j, k)]
    elif form.startswith("...ii"):
        shapes = [first + (i, i), second + (i,)]
    else:
        shapes = [(i,) + first + (j,), (j,) + second + (k,)]
    parity(torch, form, shapes, second=False)
