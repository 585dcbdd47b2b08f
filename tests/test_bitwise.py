"""Bitwise ops (ops/bitwise.py) against torch: ``& | ^ ~ << >>``, the ``bitwise_*`` methods and
functions, reflected and in-place forms, over integers of every width and both signs and over
bools; torch's promotion, shifts out of range, and its errors for floats and bool shifts."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool as tg

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]

OPS = {
    "&": lambda m, a, b: a & b,
    "|": lambda m, a, b: a | b,
    "^": lambda m, a, b: a ^ b,
    "<<": lambda m, a, b: a << b,
    ">>": lambda m, a, b: a >> b,
    "bitwise_and": lambda m, a, b: m.bitwise_and(a, b),
    "bitwise_or": lambda m, a, b: m.bitwise_or(a, b),
    "bitwise_xor": lambda m, a, b: m.bitwise_xor(a, b),
    "bitwise_left_shift": lambda m, a, b: m.bitwise_left_shift(a, b),
    "bitwise_right_shift": lambda m, a, b: m.bitwise_right_shift(a, b),
    "method and": lambda m, a, b: a.bitwise_and(b) if isinstance(a, (m.Tensor,)) else b.bitwise_and(a),
    "method right_shift": lambda m, a, b: (a.bitwise_right_shift(b) if isinstance(a, m.Tensor)
                                           else m.bitwise_right_shift(a, b)),
}
SHIFTS = {"<<", ">>", "bitwise_left_shift", "bitwise_right_shift", "method right_shift"}


def assert_same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def both(torch, fn, *values):
    ours = [tg.tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    theirs = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    return fn(tg, *ours), fn(torch, *theirs)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(INT_DTYPES), other=st.sampled_from(INT_DTYPES),
       shapes=st.sampled_from([((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (5,)), ((0, 2), (2,))]),
       name=st.sampled_from(list(OPS)), seed=st.integers(0, 2 ** 16))
def test_integers_match_torch(dtype, other, shapes, name, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    a = rng.integers(low, high, shapes[0], endpoint=True).astype(dtype)
    if name in SHIFTS:  # amounts in range and out of it (negative, the width and more)
        b = rng.integers(max(np.iinfo(other).min, -3), 70, shapes[1]).astype(other)
    else:
        b = rng.integers(np.iinfo(other).min, np.iinfo(other).max, shapes[1], endpoint=True).astype(other)
    assert_same(*both(torch, OPS[name], a, b))


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("number", [0, 3, -5, 65, True])
def test_numbers_on_either_side_promote_as_torch(torch, name, number):
    for values in (np.array([-7, 7, 12, -1, 0]), np.array([-7, 7, 12, -1, 0], np.int8),
                   np.array([1, 200, 7, 128, 0], np.uint8)):
        assert_same(*both(torch, OPS[name], values, number))
        assert_same(*both(torch, OPS[name], number, values))


@pytest.mark.parametrize("name", [n for n in OPS if n not in SHIFTS])
def test_bools_stay_bools_and_mix_with_integers_as_torch(torch, name):
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert_same(*both(torch, OPS[name], a, b))
    assert_same(*both(torch, OPS[name], a, True))
    assert_same(*both(torch, OPS[name], a, 3))  # bool and int: int64
    assert_same(*both(torch, OPS[name], a, np.array(3, np.int8)))  # a 0-d int decides the kind


def test_invert_and_bitwise_not_match_torch(torch):
    for values in (np.array([-7, 0, 12, -1]), np.array([-128, 127, 0], np.int8),
                   np.array([0, 255, 7], np.uint8), np.array([True, False])):
        assert_same(*both(torch, lambda m, t: ~t, values))
        assert_same(*both(torch, lambda m, t: m.bitwise_not(t), values))
        assert_same(*both(torch, lambda m, t: t.bitwise_not(), values))


def test_shift_edges_follow_torch(torch):
    values = np.array([-128, 127, -1, 5], np.int8)
    amounts = np.array([8, 100, -3, -128], np.int8)
    for name in SHIFTS:
        assert_same(*both(torch, OPS[name], values, amounts))
    unsigned, shifts = np.array([1, 255, 7, 128, 200], np.uint8), np.array([8, 8, 9, 7, 200], np.uint8)
    for name in SHIFTS:
        assert_same(*both(torch, OPS[name], unsigned, shifts))
    assert (tg.tensor([2 ** 62]) << 1).item() == -2 ** 63  # wraps
    assert (tg.tensor([-7]) >> 64).item() == -1 and (tg.tensor([7]) >> -1).item() == 0


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kernel", [("&", "bitwise_and_cpu"), ("|", "bitwise_or_cpu"),
                                          ("^", "bitwise_xor_cpu"), ("<<", "lshift_cpu"),
                                          (">>", "rshift_cpu")])
def test_floats_are_not_implemented_as_torch(torch, name, kernel):
    for m in (torch, tg):
        for a, b in ((m.tensor([1.0]), m.tensor([1.0])), (m.tensor([1]), 1.5),
                     (m.tensor([1], dtype=m.float64), 1), (m.tensor([1]), m.tensor(2.0))):
            kind = "Double" if a.dtype == m.float64 else "Float"
            with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for '{kind}'"):
                OPS[name](m, a, b)


def test_not_of_floats_and_shifts_of_bools_are_torchs_errors(torch):
    for m in (torch, tg):
        with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
            ~m.tensor([1.0])
        with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
            m.bitwise_not(m.tensor([1.0]))
        for shift, kernel in ((lambda a, b: a << b, "lshift_cpu"), (lambda a, b: a >> b, "rshift_cpu")):
            with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
                shift(m.tensor([True]), m.tensor([False]))
        with pytest.raises(TypeError):
            m.bitwise_not(5)


def test_operands_that_are_no_tensor_or_number_are_type_errors(torch):
    for m in (torch, tg):
        x = m.tensor([5, 6])
        for call in (lambda: x & "a", lambda: None | x, lambda: x.bitwise_and("a"),
                     lambda: m.bitwise_xor(x, [1]), lambda: x << None):
            with pytest.raises(TypeError):
                call()
    with pytest.raises(TypeError, match="unsupported operand type"):
        tg.tensor([5]) ^ "a"


def test_shapes_that_do_not_broadcast_are_refused(torch):
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.tensor([1, 2, 3]) & m.tensor([1, 2])
    with pytest.raises(RuntimeError, match="bitwise_and.*broadcast"):
        tg.tensor([1, 2, 3]) & tg.tensor([1.0, 2.0])  # (the shapes first, as torch)


# ---- in place -------------------------------------------------------------------------------
def augmented(symbol):
    def run(x, b):
        if symbol == "&=":
            x &= b
        elif symbol == "|=":
            x |= b
        elif symbol == "^=":
            x ^= b
        elif symbol == "<<=":
            x <<= b
        else:
            x >>= b
        return x
    return run


INPLACE = {"bitwise_and_": lambda x, b: x.bitwise_and_(b),
           "bitwise_or_": lambda x, b: x.bitwise_or_(b),
           "bitwise_xor_": lambda x, b: x.bitwise_xor_(b),
           "bitwise_left_shift_": lambda x, b: x.bitwise_left_shift_(b),
           "bitwise_right_shift_": lambda x, b: x.bitwise_right_shift_(b),
           **{symbol: augmented(symbol) for symbol in ("&=", "|=", "^=", "<<=", ">>=")}}


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("values, other", [(np.array([-7, 7, 12]), 3),
                                           (np.array([-7, 7, 12], np.int8), np.array([1, 2, 9])),
                                           (np.array([5, 200, 7], np.uint8), True)])
def test_in_place_matches_torch_and_bumps_the_version(torch, name, values, other):
    results = []
    for m in (tg, torch):
        x = m.tensor(values)
        b = m.tensor(other) if isinstance(other, np.ndarray) else other
        version = x._version
        assert INPLACE[name](x, b) is x and x._version == version + 1
        results.append(x)
    assert_same(*results)


def test_bitwise_not_in_place_and_on_a_view(torch):
    results = []
    for m in (tg, torch):
        x = m.tensor([[1, -2], [3, 4]])
        row = x[0]
        assert row.bitwise_not_() is row
        assert x._version == 1
        y = m.tensor([True, False])
        y &= m.tensor([True, True])
        results.append((x, y))
    for ours, theirs in zip(*results):
        assert_same(ours, theirs)


def test_in_place_refuses_a_result_that_does_not_fit(torch):
    for m in (tg, torch):
        flags = m.tensor([True, False])
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            flags.bitwise_and_(3)  # an int64 result into a bool tensor
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            flags &= m.tensor(3)
        with pytest.raises(RuntimeError):
            m.tensor([1, 2]).bitwise_or_(m.ones(3, 2, dtype=m.int64))  # does not fit the shape
        with pytest.raises(NotImplementedError):
            m.tensor([1.0]).bitwise_xor_(1)
        assert flags.tolist() == [True, False] and flags._version == 0
