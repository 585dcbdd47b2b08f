"""cat, stack, chunk, split: against torch (forward, backward, double backward; float64 and
float32), finite differences, torch's dtype promotion, chunk sizes and views, errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinygrad_pool import Tensor, tensor
from tinygrad_pool.ops.join import cat, chunk, split, stack

from helpers import check_grad, leaf
from test_movement import parity

FIXTURE = HealthCheck.function_scoped_fixture  # (torch: the same module for every example)

# name: (ours, theirs(torch, *tensors), input shapes)
JOINS = {
    "cat_dim0": (lambda a, b: cat([a, b]), lambda T, a, b: T.cat([a, b]), [(2, 3), (4, 3)]),
    "cat_dim1_tuple": (lambda a, b, c: cat((a, b, c), 1), lambda T, a, b, c: T.cat((a, b, c), 1),
                       [(2, 1, 4), (2, 3, 4), (2, 2, 4)]),
    "cat_negative_dim": (lambda a, b: cat([a, b], dim=-1), lambda T, a, b: T.cat([a, b], dim=-1),
                         [(2, 3, 1), (2, 3, 2)]),
    "cat_one": (lambda a: cat([a]), lambda T, a: T.cat([a]), [(2, 3)]),
    "cat_same_tensor_twice": (lambda a: cat([a, a * 2, a], 1), lambda T, a: T.cat([a, a * 2, a], 1),
                              [(2, 3)]),
    "cat_empty_piece": (lambda a, b: cat([a, b], 1), lambda T, a, b: T.cat([a, b], 1),
                        [(2, 0), (2, 3)]),
    "cat_legacy_empty_1d": (lambda a, b: cat([a, b], 1), lambda T, a, b: T.cat([a, b], 1),
                            [(2, 3), (0,)]),
    "stack_dim0": (lambda a, b: stack([a, b]), lambda T, a, b: T.stack([a, b]), [(2, 3), (2, 3)]),
    "stack_last": (lambda a, b, c: stack((a, b, c), -1), lambda T, a, b, c: T.stack((a, b, c), -1),
                   [(2, 3)] * 3),
    "stack_middle": (lambda a, b: stack([a, b], 1), lambda T, a, b: T.stack([a, b], 1),
                     [(2, 3), (2, 3)]),
    "stack_scalars": (lambda a, b: stack([a, b]), lambda T, a, b: T.stack([a, b]), [(), ()]),
    "chunk_cat": (lambda a: cat(chunk(a, 3, 1)[::-1], 1),
                  lambda T, a: T.cat(T.chunk(a, 3, 1)[::-1], 1), [(2, 7)]),
    "chunk_pieces_used_apart": (lambda a: chunk(a, 2)[0] * chunk(a, 2)[1] ** 2,
                                lambda T, a: T.chunk(a, 2)[0] * T.chunk(a, 2)[1] ** 2, [(4, 3)]),
    "split_size": (lambda a: stack(split(a, 2, -1)[:2], 0),
                   lambda T, a: T.stack(T.split(a, 2, -1)[:2], 0), [(3, 5)]),
    "split_sections": (lambda a: cat(split(a, [1, 0, 3], 0)[::-1]) ** 2,
                       lambda T, a: T.cat(T.split(a, [1, 0, 3], 0)[::-1]) ** 2, [(4, 2)]),
}


def _arrays(rng, name):
    return [rng.standard_normal(shape) for shape in JOINS[name][2]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(JOINS))
def test_joins_match_torch(torch, rng, name, dtype):
    ours, theirs = JOINS[name][:2]
    parity(torch, ours, lambda *ts: theirs(torch, *ts), *_arrays(rng, name), dtype=dtype)


@pytest.mark.parametrize("name", sorted(JOINS))
def test_joins_gradcheck(rng, name):
    check_grad(JOINS[name][0], *_arrays(rng, name))


def test_cat_gradient_is_each_inputs_slice():
    a, b = leaf(np.zeros((2, 1))), leaf(np.zeros((2, 2)))
    cat([a, b], 1).backward(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    np.testing.assert_array_equal(a.grad.numpy(), [[1.0], [4.0]])
    np.testing.assert_array_equal(b.grad.numpy(), [[2.0, 3.0], [5.0, 6.0]])


# ---- dtypes: torch's promotion (the higher kind wins; NumPy would widen int64 + float32) -----
@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("int32", "float16"), ("bool", "int32"),
                                    ("int64", "int32"), ("float32", "float64"), ("uint8", "int8"),
                                    ("bool", "bool")], ids=str)
def test_cat_and_stack_promote_as_torch(torch, dtypes):
    ours = [tensor(np.ones(2, dtype=d)) for d in dtypes]
    theirs = [torch.ones(2, dtype=getattr(torch, d)) for d in dtypes]
    assert str(cat(ours).dtype) == str(torch.cat(theirs).dtype).removeprefix("torch.")
    assert str(stack(ours).dtype) == str(torch.stack(theirs).dtype).removeprefix("torch.")


def test_mixed_precision_cat_gives_each_input_a_gradient_of_its_own_dtype(torch, rng):
    a0, b0 = rng.standard_normal(3), rng.standard_normal(2)
    a = tensor(a0.astype(np.float32), requires_grad=True)
    b = tensor(b0, requires_grad=True)
    out = cat([a, b])
    assert out.dtype == np.float64
    (out * out).sum().backward()
    ta = torch.tensor(a0.astype(np.float32), requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    (torch.cat([ta, tb]) ** 2).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


def test_cat_of_integers_needs_no_graph():
    out = cat([tensor(np.array([1, 2])), tensor(np.array([3]))])
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3])
    assert out.dtype == np.int64 and out.grad_fn is None


# ---- chunk and split: torch's sizes, views of the input --------------------------------------
@pytest.mark.parametrize("size", range(0, 11))
def test_chunk_and_split_sizes_match_torch(torch, size):
    x, tx = tensor(np.zeros((2, size))), torch.zeros(2, size)
    for chunks in range(1, 7):
        assert [p.shape for p in chunk(x, chunks, 1)] == [p.shape for p in tx.chunk(chunks, 1)]
    for split_size in range(1 if size else 0, size + 2):
        assert [p.shape for p in split(x, split_size, 1)] == \
            [p.shape for p in tx.split(split_size, 1)]


def test_chunk_can_give_fewer_pieces_than_asked():
    assert [p.shape[0] for p in chunk(tensor(np.zeros(6)), 4)] == [2, 2, 2]
    assert [p.shape[0] for p in chunk(tensor(np.zeros(5)), 4)] == [2, 2, 1]
    assert [p.shape[0] for p in chunk(tensor(np.zeros(0)), 3)] == [0, 0, 0]


def test_pieces_are_views_sharing_memory_and_version(torch, rng):
    x0 = rng.standard_normal((5, 2))
    x, tx = tensor(x0), torch.tensor(x0)
    pieces, tpieces = split(x, [2, 3]), tx.split([2, 3])
    assert type(pieces) is tuple and all(np.shares_memory(p.numpy(), x.numpy()) for p in pieces)
    pieces[1].mul_(3)
    tpieces[1].mul_(3)
    assert x._version == pieces[0]._version == pieces[1]._version == tx._version == 1
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_writing_into_a_piece_is_differentiated():
    """(torch refuses in-place writes into split's outputs while recording a graph; here the
    write is recorded like one into any view — a superset: torch code never does it.)"""
    x = leaf(np.arange(4.0))
    base = x * 1
    chunk(base, 2)[1].mul_(3)
    (base * base).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(4.0) * [1, 1, 9, 9])


# ---- hypothesis ------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[FIXTURE])
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
       lengths=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_cat_stack_split_match_torch(torch, shape, lengths, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    where = data.draw(st.integers(-len(shape) - 1, len(shape)), label="stack dim")
    rng = np.random.default_rng(len(lengths))
    axis = dim % len(shape)
    pieces = [rng.standard_normal(shape[:axis] + (n,) + shape[axis + 1:]) for n in lengths]
    parity(torch, lambda *ts: cat(ts, dim), lambda *ts: torch.cat(ts, dim), *pieces)
    parity(torch, lambda t: stack([t, t * t, t], where),
           lambda t: torch.stack([t, t * t, t], where), pieces[0])
    joined = rng.standard_normal(shape[:axis] + (sum(lengths),) + shape[axis + 1:])
    parity(torch, lambda t: cat(split(t, lengths, dim)[::-1], dim),
           lambda t: torch.cat(torch.split(t, lengths, dim)[::-1], dim), joined)
    size = data.draw(st.integers(1, 4), label="split size")
    parity(torch, lambda t: stack([p.sum() for p in split(t, size, dim)]),
           lambda t: torch.stack([p.sum() for p in torch.split(t, size, dim)]), joined)


# ---- errors ----------------------------------------------------------------------------------
# (ours, theirs(torch), type, message); the inputs are a (2, 3) x and a (2, 4) y
ERRORS = [
    (lambda x, y: cat([]), lambda T, x, y: T.cat([]), ValueError,
     r"cat: expected a non-empty list of Tensors"),
    (lambda x, y: cat(x), lambda T, x, y: T.cat(x), TypeError,
     r"cat: tensors must be a list or tuple of Tensors, got Tensor"),
    (lambda x, y: cat([x, 1]), lambda T, x, y: T.cat([x, 1]), TypeError,
     r"cat: expected a Tensor as element 1 of tensors, got int"),
    (lambda x, y: cat([x, y]), lambda T, x, y: T.cat([x, y]), RuntimeError,
     r"cat: sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
     r"for tensor number 1"),
    (lambda x, y: cat([x, y], 2), lambda T, x, y: T.cat([x, y], 2), IndexError,
     r"cat: dim=2 is out of range"),
    (lambda x, y: cat([x, x[0]], 1), lambda T, x, y: T.cat([x, x[0]], 1), RuntimeError,
     r"cat: tensors must have same number of dimensions: got 2 and 1"),
    (lambda x, y: cat([x[0, 0], x[0, 1]]), lambda T, x, y: T.cat([x[0, 0], x[0, 1]]), RuntimeError,
     r"cat: zero-dimensional tensor \(at position 0\) cannot be concatenated"),
    (lambda x, y: stack([]), lambda T, x, y: T.stack([]), RuntimeError,
     r"stack: expects a non-empty list"),
    (lambda x, y: stack([x, y]), lambda T, x, y: T.stack([x, y]), RuntimeError,
     r"stack: expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[2, 4\] at "
     r"entry 1"),
    (lambda x, y: stack([x, x], 3), lambda T, x, y: T.stack([x, x], 3), IndexError,
     r"stack: dim=3 is out of range.*\[-3, 2\]"),
    (lambda x, y: chunk(x, 0), lambda T, x, y: x.chunk(0), RuntimeError,
     r"chunk: expects `chunks` to be greater than 0, got: 0"),
    (lambda x, y: chunk(x, 2.0), lambda T, x, y: x.chunk(2.0), TypeError,
     r"chunk: chunks must be an int, got float"),
    (lambda x, y: chunk(x[0, 0], 2), lambda T, x, y: x[0, 0].chunk(2), RuntimeError,
     r"chunk: expects at least a 1-dimensional tensor"),
    (lambda x, y: chunk(x, 2, 2), lambda T, x, y: x.chunk(2, 2), IndexError,
     r"chunk: dim=2 is out of range"),
    (lambda x, y: split(x, 0, 1), lambda T, x, y: x.split(0, 1), RuntimeError,
     r"split: split_size_or_sections can only be 0 if the input's size at dimension 1 is 0, but it is 3"),
    (lambda x, y: split(x, -1), lambda T, x, y: x.split(-1), RuntimeError,
     r"split: split_size_or_sections must be non-negative, but got -1"),
    (lambda x, y: split(x, [1, 1], 1), lambda T, x, y: x.split([1, 1], 1), RuntimeError,
     r"split: split_size_or_sections \[1, 1\] must sum exactly to 3"),
    (lambda x, y: split(x, [4, -1], 1), lambda T, x, y: x.split([4, -1], 1), RuntimeError,
     r"split: .*non-negative entries, but got \[4, -1\]"),
    (lambda x, y: split(x, [1.5, 1.5], 1), lambda T, x, y: x.split([1.5, 1.5], 1), TypeError,
     r"split: split_size_or_sections must be an int or a tuple of ints"),
    (lambda x, y: split(x, 1.5), lambda T, x, y: x.split(1.5), TypeError,
     r"split: split_size_or_sections must be an int or a list of ints, got float"),
    (lambda x, y: split(x[0, 0], 1), lambda T, x, y: x[0, 0].split(1), RuntimeError,
     r"split: expects at least a 1-dimensional tensor"),
]


@pytest.mark.parametrize("ours, theirs, error, message", ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_errors_as_torch(torch, ours, theirs, error, message):
    x, y = leaf(np.ones((2, 3))), leaf(np.ones((2, 4)))
    with pytest.raises(error, match=message):
        ours(x, y)
    with pytest.raises(error) as raised:
        theirs(torch, torch.ones(2, 3), torch.ones(2, 4))
    assert type(raised.value) is error
