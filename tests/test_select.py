"""gather, scatter_add(_), scatter(_), index_select, masked_fill(_), take_along_dim: against
torch (forward, backward, double backward; float64 and float32), finite differences, torch's
shape and index rules, the index saved for backward, in-place forms, errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinygrad_pool import Tensor, tensor
from tinygrad_pool.ops.select import (gather, index_select, masked_fill, masked_fill_, scatter,
                                      scatter_, scatter_add, scatter_add_, take_along_dim)

from helpers import check_grad, leaf
from test_movement import parity

FIXTURE = HealthCheck.function_scoped_fixture  # (torch: the same module for every example)

# Integer constants, shared by both sides (made into a Tensor or a torch tensor by ``make``).
INDEX = np.array([[0, 2, 2], [1, 0, 0]])  # repeats: gradients must add up
ROWS = np.array([2, 0, 2, 1])
MASK = np.array([[True, False, False, True]])  # broadcasts over rows


# name: (ours(x, *more, make), theirs(T, x, *more, make), input shapes)
SELECTS = {
    "gather_dim1": (lambda x, m: gather(x, 1, m(INDEX)),
                    lambda T, x, m: T.gather(x, 1, m(INDEX)), [(3, 4)]),
    "gather_dim0_index_larger_along_dim": (lambda x, m: gather(x, 0, m(np.tile(INDEX, (2, 1)))),
                                           lambda T, x, m: T.gather(x, 0, m(np.tile(INDEX, (2, 1)))),
                                           [(3, 4)]),
    "gather_negative_dim_3d": (lambda x, m: gather(x, -1, m(INDEX[:, None, :2])),
                               lambda T, x, m: T.gather(x, -1, m(INDEX[:, None, :2])), [(2, 2, 3)]),
    "gather_int32_index": (lambda x, m: gather(x, 1, m(INDEX.astype(np.int32))),
                           lambda T, x, m: T.gather(x, 1, m(INDEX.astype(np.int32))), [(3, 4)]),
    "gather_scalar": (lambda x, m: gather(x, 0, m(np.array([0, 0]))),
                      lambda T, x, m: T.gather(x, 0, m(np.array([0, 0]))), [()]),
    "scatter_add": (lambda x, s, m: scatter_add(x, 1, m(INDEX), s),
                    lambda T, x, s, m: T.scatter_add(x, 1, m(INDEX), s), [(3, 4), (2, 3)]),
    "scatter_add_dim0": (lambda x, s, m: scatter_add(x, 0, m(INDEX), s),
                         lambda T, x, s, m: T.scatter_add(x, 0, m(INDEX), s), [(3, 4), (2, 3)]),
    "scatter_src": (lambda x, s, m: scatter(x, 1, m(np.array([[3, 1], [0, 2]])), s),
                    lambda T, x, s, m: T.scatter(x, 1, m(np.array([[3, 1], [0, 2]])), s),
                    [(3, 4), (2, 2)]),
    "scatter_value": (lambda x, m: scatter(x, 0, m(INDEX), value=-2.0),
                      lambda T, x, m: T.scatter(x, 0, m(INDEX), value=-2.0), [(3, 4)]),
    "scatter_value_positional": (lambda x, m: scatter(x, 1, m(INDEX), 1.5),
                                 lambda T, x, m: T.scatter(x, 1, m(INDEX), 1.5), [(3, 4)]),
    "index_select": (lambda x, m: index_select(x, 0, m(ROWS)),
                     lambda T, x, m: T.index_select(x, 0, m(ROWS)), [(3, 2)]),
    "index_select_last_dim": (lambda x, m: index_select(x, -1, m(ROWS)),
                              lambda T, x, m: T.index_select(x, -1, m(ROWS)), [(2, 2, 3)]),
    "index_select_0d_index": (lambda x, m: index_select(x, 1, m(np.array(1))),
                              lambda T, x, m: T.index_select(x, 1, m(np.array(1))), [(2, 3)]),
    "index_select_scalar": (lambda x, m: index_select(x, 0, m(np.array([0]))),
                            lambda T, x, m: T.index_select(x, 0, m(np.array([0]))), [()]),
    "masked_fill_number": (lambda x, m: masked_fill(x, m(MASK), 0.5),
                           lambda T, x, m: T.masked_fill(x, m(MASK), 0.5), [(3, 4)]),
    "masked_fill_tensor_value": (lambda x, v, m: masked_fill(x, m(MASK), v),
                                 lambda T, x, v, m: T.masked_fill(x, m(MASK), v), [(3, 4), ()]),
    "masked_fill_mask_broadcasts_input": (lambda x, v, m: masked_fill(x, m(MASK[:, None]), v),
                                          lambda T, x, v, m: T.masked_fill(x, m(MASK[:, None]), v),
                                          [(3, 4), ()]),
    "take_along_dim": (lambda x, m: take_along_dim(x, m(np.array([[0], [3], [1]])), 1),
                       lambda T, x, m: T.take_along_dim(x, m(np.array([[0], [3], [1]])), 1),
                       [(3, 4)]),
    "take_along_dim_broadcasts": (lambda x, m: take_along_dim(x, m(INDEX[:, None, :]), 2),
                                  lambda T, x, m: T.take_along_dim(x, m(INDEX[:, None, :]), 2),
                                  [(1, 4, 3)]),
    "take_along_dim_flat": (lambda x, m: take_along_dim(x, m(np.array([11, 0, 5]))),
                            lambda T, x, m: T.take_along_dim(x, m(np.array([11, 0, 5]))), [(3, 4)]),
}


def _arrays(rng, name):
    return [rng.standard_normal(shape) for shape in SELECTS[name][2]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(SELECTS))
def test_selects_match_torch(torch, rng, name, dtype):
    ours, theirs = SELECTS[name][:2]
    parity(torch, lambda *xs: ours(*xs, tensor), lambda *ts: theirs(torch, *ts, torch.tensor),
           *_arrays(rng, name), dtype=dtype)


@pytest.mark.parametrize("name", sorted(SELECTS))
def test_selects_gradcheck(rng, name):
    check_grad(lambda *xs: SELECTS[name][0](*xs, tensor), *_arrays(rng, name))


def test_gather_gradient_adds_repeated_reads():
    x = leaf(np.zeros((2, 3)))
    gather(x, 1, tensor(INDEX)).backward(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 5.0], [11.0, 4.0, 0.0]])


def test_scatter_add_reads_only_the_part_of_src_the_index_covers(torch, rng):
    """src larger than index: the rest of src is unused (gradient 0). torch's forward agrees;
    its backward fails on this case (a gradient of index's shape), ours gives src's shape."""
    x0, src0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    x, src = leaf(x0), leaf(src0)
    out = scatter_add(x, 1, tensor(INDEX), src)
    expected = torch.tensor(x0).scatter_add(1, torch.tensor(INDEX), torch.tensor(src0))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
    out.backward(np.ones((3, 4)))
    np.testing.assert_array_equal(src.grad.numpy(), np.pad(np.ones((2, 3)), ((0, 1), (0, 2))))


def test_masked_fill_on_integers_truncates_the_value_as_torch(torch):
    x, tx = tensor(np.arange(4)), torch.arange(4)
    mask = np.array([True, False, True, False])
    out = masked_fill(x, tensor(mask), 1.7)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), tx.masked_fill(torch.tensor(mask), 1.7).numpy())


# ---- in place ---------------------------------------------------------------------------------
INPLACE = {
    "scatter_add_": (lambda b, s: scatter_add_(b, 1, tensor(INDEX), s),
                     lambda T, b, s: b.scatter_add_(1, T.tensor(INDEX), s)),
    "scatter_": (lambda b, s: scatter_(b, 0, tensor(INDEX), s),
                 lambda T, b, s: b.scatter_(0, T.tensor(INDEX), s)),
    "scatter_value_": (lambda b, s: scatter_(b, 0, tensor(INDEX), value=3.0) * s.sum(),
                       lambda T, b, s: b.scatter_(0, T.tensor(INDEX), value=3.0) * s.sum()),
    "masked_fill_": (lambda b, s: masked_fill_(b, tensor(MASK), s[0, 0]),
                     lambda T, b, s: b.masked_fill_(T.tensor(MASK), s[0, 0])),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_in_place_forms_match_torch(torch, rng, name):
    """base = x * 1 is written in place (x's old value must still get its gradient through the
    write), then used; values, version and gradients as in torch."""
    ours, theirs = INPLACE[name]
    x0, s0, w = rng.standard_normal((3, 4)), rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    x, s = leaf(x0), leaf(s0)
    tx, ts = torch.tensor(x0, requires_grad=True), torch.tensor(s0, requires_grad=True)
    base, tbase = x * 1, tx * 1
    result, tresult = ours(base, s), theirs(torch, tbase, ts)
    assert base._version == tbase._version == 1
    np.testing.assert_allclose(base.numpy(), tbase.detach().numpy(), rtol=1e-12)
    (result * result * tensor(w)).sum().backward()
    (tresult * tresult * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy(), rtol=1e-12)


def test_in_place_forms_return_the_tensor_itself_and_work_without_a_graph():
    x = tensor(np.zeros((3, 4)))
    assert scatter_add_(x, 1, tensor(INDEX), tensor(np.ones((2, 3)))) is x
    assert masked_fill_(x, tensor(MASK), 5.0) is x
    np.testing.assert_array_equal(x.numpy(), [[5, 0, 2, 5], [5, 1, 0, 5], [5, 0, 0, 5]])
    assert x._version == 2 and x.grad_fn is None


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = leaf(np.zeros((3, 4)))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        scatter_add_(x, 1, tensor(INDEX), tensor(np.ones((2, 3))))
    assert x._version == 0


def test_writing_into_the_index_before_backward_is_caught(torch):
    """The index is saved for backward (as torch's gather saves it): a later in-place write
    into it makes backward refuse, instead of sending the gradient to the wrong places."""
    x, index = leaf(np.ones((3, 4))), tensor(INDEX)
    out = gather(x, 1, index)
    index.fill_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    tx, tindex = torch.ones(3, 4, requires_grad=True), torch.tensor(INDEX)
    tout = torch.gather(tx, 1, tindex)
    tindex.fill_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tout.sum().backward()


# ---- hypothesis ------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[FIXTURE])
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), data=st.data())
def test_gather_scatter_index_select_match_torch(torch, shape, data):
    ndim = len(shape)
    dim = data.draw(st.integers(-ndim, ndim - 1), label="dim")
    axis = dim % ndim
    # index no larger than the input in the other dims, any length along dim
    index_shape = tuple(data.draw(st.integers(0 if d != axis else 1, n + (d == axis)),
                                  label=f"index size {d}") for d, n in enumerate(shape))
    rng = np.random.default_rng(ndim)
    index = rng.integers(0, shape[axis], size=index_shape)
    rows = rng.integers(0, shape[axis], size=data.draw(st.integers(0, 4), label="rows"))
    mask = rng.random(shape[data.draw(st.integers(0, ndim), label="mask from dim"):]) < 0.5
    x = rng.standard_normal(shape)
    src = rng.standard_normal(index_shape)
    parity(torch, lambda t: gather(t, dim, tensor(index)),
           lambda t: torch.gather(t, dim, torch.tensor(index)), x)
    parity(torch, lambda t, s: scatter_add(t, dim, tensor(index), s),
           lambda t, s: torch.scatter_add(t, dim, torch.tensor(index), s), x, src)
    parity(torch, lambda t: index_select(t, dim, tensor(rows)),
           lambda t: torch.index_select(t, dim, torch.tensor(rows)), x)
    parity(torch, lambda t, v: masked_fill(t, tensor(mask), v),
           lambda t, v: torch.masked_fill(t, torch.tensor(mask), v), x, np.array(0.5))


# ---- errors ----------------------------------------------------------------------------------
# (ours(x, make), theirs(T, x, make), type, message), x of shape (3, 4)
I64 = np.array([[0, 1], [2, 0]])
ERRORS = [
    (lambda x, m: gather(x, 2, m(I64)), lambda T, x, m: T.gather(x, 2, m(I64)), IndexError,
     r"gather: dim=2 is out of range"),
    (lambda x, m: gather(x, 1, m(I64.astype(float))), lambda T, x, m: T.gather(x, 1, m(I64 * 1.0)),
     RuntimeError, r"gather: expected dtype int32 or int64 for index, got float64"),
    (lambda x, m: gather(x, 1, I64), lambda T, x, m: T.gather(x, 1, I64), TypeError,
     r"gather: index must be a Tensor .*got ndarray"),
    (lambda x, m: gather(x, 1, m(I64[0])), lambda T, x, m: T.gather(x, 1, m(I64[0])), RuntimeError,
     r"gather: index tensor must have the same number of dimensions as input tensor"),
    (lambda x, m: gather(x, 1, m(I64 + 3)), lambda T, x, m: T.gather(x, 1, m(I64 + 3)),
     RuntimeError, r"gather: index 5 is out of bounds for dimension 1 with size 4"),
    (lambda x, m: gather(x, 1, m(I64 - 1)), lambda T, x, m: T.gather(x, 1, m(I64 - 1)),
     RuntimeError, r"gather: index -1 is out of bounds for dimension 1 with size 4"),
    (lambda x, m: gather(x, 1, m(np.zeros((4, 1), int))),
     lambda T, x, m: T.gather(x, 1, m(np.zeros((4, 1), int))), RuntimeError,
     r"gather: size does not match at dimension 0: expected index \[4, 1\] to be no larger than "
     r"input \[3, 4\] apart from dimension 1"),
    (lambda x, m: scatter_add(x, 1, m(I64), m(np.ones((1, 1)))),
     lambda T, x, m: T.scatter_add(x, 1, m(I64), m(np.ones((1, 1)))), RuntimeError,
     r"scatter_add: expected index \[2, 2\] to be no larger than src \[1, 1\]"),
    (lambda x, m: scatter_add(x, 1, m(I64), m(np.ones((2, 2, 1)))),
     lambda T, x, m: T.scatter_add(x, 1, m(I64), m(np.ones((2, 2, 1)))), RuntimeError,
     r"scatter_add: index tensor must have the same number of dimensions as src"),
    (lambda x, m: scatter_add(x, 1, m(I64), m(np.ones((2, 2), np.float32))),
     lambda T, x, m: T.scatter_add(x, 1, m(I64), m(np.ones((2, 2), np.float32))), RuntimeError,
     r"scatter_add: expected input.dtype to be equal to src.dtype \(got float64 and float32\)"),
    (lambda x, m: scatter_add(x, 1, m(I64), 1.0), lambda T, x, m: T.scatter_add(x, 1, m(I64), 1.0),
     TypeError, r"scatter_add: src must be a Tensor, got float"),
    (lambda x, m: scatter(x, 1, m(I64 + 4), 1.0), lambda T, x, m: T.scatter(x, 1, m(I64 + 4), 1.0),
     RuntimeError, r"scatter: index 6 is out of bounds for dimension 1 with size 4"),
    (lambda x, m: scatter(x, 1, m(I64)), lambda T, x, m: T.scatter(x, 1, m(I64)), TypeError,
     r"scatter: give exactly one of src \(a Tensor\) and value \(a number\)"),
    (lambda x, m: index_select(x, 1, m(I64)), lambda T, x, m: T.index_select(x, 1, m(I64)),
     IndexError, r"index_select: index is supposed to be a vector \(0-d or 1-d\), got shape"),
    (lambda x, m: index_select(x, 1, m(np.array([4]))),
     lambda T, x, m: T.index_select(x, 1, m(np.array([4]))), RuntimeError,
     r"index_select: index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x, m: index_select(x, 1, m(np.array([-1]))),
     lambda T, x, m: T.index_select(x, 1, m(np.array([-1]))), RuntimeError,
     r"index_select: index -1 is out of bounds"),
    (lambda x, m: index_select(x, 0, m(np.array([1.0]))),
     lambda T, x, m: T.index_select(x, 0, m(np.array([1.0]))), RuntimeError,
     r"index_select: expected dtype int32 or int64 for index, got float64"),
    (lambda x, m: masked_fill(x, m(np.array([1, 0, 1, 0])), 1.0),
     lambda T, x, m: T.masked_fill(x, m(np.array([1, 0, 1, 0])), 1.0), RuntimeError,
     r"masked_fill: only supports boolean masks, but got mask with dtype int64"),
    (lambda x, m: masked_fill(x, m(MASK), m(np.ones(1))),
     lambda T, x, m: T.masked_fill(x, m(MASK), m(np.ones(1))), RuntimeError,
     r"masked_fill: only supports a 0-dimensional value tensor, but got tensor with 1 dim"),
    (lambda x, m: masked_fill(x, m(np.ones((2, 4), bool)), 1.0),
     lambda T, x, m: T.masked_fill(x, m(np.ones((2, 4), bool)), 1.0), RuntimeError,
     r"masked_fill: the mask's shape \(2, 4\) does not broadcast with the input's \(3, 4\)"),
    (lambda x, m: masked_fill(x, m(MASK), "a"), lambda T, x, m: T.masked_fill(x, m(MASK), "a"),
     TypeError, r"masked_fill: value must be a number or a 0-d Tensor, got str"),
    (lambda x, m: masked_fill_(x, m(np.ones((2, 3, 4), bool)), 1.0),
     lambda T, x, m: x.masked_fill_(m(np.ones((2, 3, 4), bool)), 1.0), RuntimeError,
     r"masked_fill_: the mask's shape \(2, 3, 4\) does not broadcast to the input's \(3, 4\)"),
    (lambda x, m: take_along_dim(x, m(np.array([[[0]]])), 0),
     lambda T, x, m: T.take_along_dim(x, m(np.array([[[0]]])), 0), RuntimeError,
     r"take_along_dim: input and indices should have the same number of dimensions"),
    (lambda x, m: take_along_dim(x, m(np.array([[0, 1]])), 0),
     lambda T, x, m: T.take_along_dim(x, m(np.array([[0, 1]])), 0), RuntimeError,
     r"take_along_dim: input \(3, 4\) and indices \(1, 2\) do not broadcast"),
]


@pytest.mark.parametrize("ours, theirs, error, message", ERRORS, ids=[e[3][:45] for e in ERRORS])
def test_errors_as_torch(torch, ours, theirs, error, message):
    x = tensor(np.ones((3, 4)))
    with pytest.raises(error, match=message):
        ours(x, tensor)
    assert x._version == 0 and np.all(x.numpy() == 1)
    with pytest.raises(error) as raised:
        theirs(torch, torch.ones(3, 4, dtype=torch.float64), torch.tensor)
    assert type(raised.value) is error
