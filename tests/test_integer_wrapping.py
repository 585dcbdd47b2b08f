"""Python integers too big for an integer tensor's dtype, against torch: the arithmetic
operators (+ - * // % & | ^, comparisons, their reflected and in-place forms, add/sub with
alpha) wrap the number around into the dtype (``int8 + 300`` adds 44); true division takes it
as a float (``int8 / 300`` divides by 300); the functions that take a number as a value (where,
clamp, pow, masked_fill) refuse it with torch's RuntimeError (an unsigned dtype takes down to
-max, wrapped: uint8's -1 is 255); beyond 64 bits every one is an OverflowError."""
import math
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool as tg
from tinygrad_pool.ops.elementwise import wrapped

FIXTURE = HealthCheck.function_scoped_fixture  # (torch: the same module for every example)

DTYPES = ["int8", "uint8", "int16", "int32", "int64"]

# name: fn(lib, tensor, number)
BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
    "number + t": lambda t, n: n + t, "number - t": lambda t, n: n - t,
    "number * t": lambda t, n: n * t, "number / t": lambda t, n: n / t,
    "number // t": lambda t, n: n // t, "number % t": lambda t, n: n % t,
    "number & t": lambda t, n: n & t, "number < t": lambda t, n: n < t,
    "number ** t": lambda t, n: n ** t,  # (the base is an operand: it wraps)
    "add alpha": lambda t, n: t.add(n, alpha=3), "sub alpha": lambda t, n: t.sub(n, alpha=-2),
    "div floor": lambda t, n: t.div(n, rounding_mode="floor"),
    "div trunc": lambda t, n: t.div(n, rounding_mode="trunc"),
    "fmod": lambda t, n: t.fmod(n), "remainder": lambda t, n: t.remainder(n),
    "eq": lambda t, n: t.eq(n), "lt": lambda t, n: t.lt(n),
    "bitwise_xor": lambda t, n: t.bitwise_xor(n),
}
INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "//=": operator.ifloordiv,
    "%=": operator.imod, "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor,
    "add_": lambda t, n: t.add_(n), "sub_": lambda t, n: t.sub_(n), "mul_": lambda t, n: t.mul_(n),
    "fmod_": lambda t, n: t.fmod_(n),
}
VALUES = {
    "where": lambda L, t, n: L.where(t > 2, t, n),
    "clamp max": lambda L, t, n: t.clamp(max=n),
    "clamp min": lambda L, t, n: t.clamp(min=n),
    "pow": lambda L, t, n: t ** n,
    "masked_fill": lambda L, t, n: t.masked_fill(t > 2, n),
    "pow_": lambda L, t, n: t.clone().pow_(n),
    "clamp_": lambda L, t, n: t.clone().clamp_(max=n),
    "clamp_min_": lambda L, t, n: t.clone().clamp_min_(n),
    "masked_fill_": lambda L, t, n: t.clone().masked_fill_(t > 2, n),
}

VALUES_OF = [44, 1, 3, 120, 0, 7]  # fits every dtype (uint8 too)
NUMBERS = [300, -300, 255, 256, -1, -129, 2 ** 31 + 5, 2 ** 63 - 3, -2 ** 63, 2 ** 63 + 7,
           2 ** 64 - 1]


def scaled_beyond_64_bits(name: str, number: int) -> bool:
    """add/sub with alpha whose product with the number leaves 64 bits: torch wraps the product
    in the dtype, ours refuses it (OverflowError) — a known difference, left out here."""
    return "alpha" in name and not -2 ** 63 <= number * 3 < 2 ** 64


def run(lib, fn, dtype, number, data=VALUES_OF):
    """fn's result (values, dtype name), or the type of error it raised."""
    t = lib.tensor(data, dtype=getattr(lib, dtype))
    try:
        out = fn(t, number)
    except Exception as error:  # noqa: BLE001 (the type is compared)
        return type(error).__name__
    return out.tolist(), str(out.dtype).removeprefix("torch.")


def assert_as_torch(torch, fn, dtype, number):
    ours, theirs = run(tg, fn, dtype, number), run(torch, fn, dtype, number)
    if isinstance(theirs, str) and theirs == "RuntimeError" and ours == "RuntimeError":
        return  # (an integer division by a number that wraps to 0: torch's ZeroDivisionError)
    if isinstance(theirs, tuple) and theirs[1] == "float32":  # true division: rounding
        assert isinstance(ours, tuple) and ours[1] == "float32"
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
        return
    assert ours == theirs


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_operators_wrap_numbers_as_torch(torch, name, dtype):
    for number in NUMBERS:
        if not scaled_beyond_64_bits(name, number):
            assert_as_torch(torch, BINARY[name], dtype, number)


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_forms_wrap_numbers_as_torch(torch, name, dtype):
    fn = INPLACE[name]
    for number in NUMBERS:
        assert_as_torch(torch, lambda t, n: fn(t.clone(), n), dtype, number)


@settings(max_examples=40, deadline=None, suppress_health_check=[FIXTURE])
@given(dtype=st.sampled_from(DTYPES),
       number=st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1), st.integers(-70000, 70000)),
       data=st.lists(st.integers(0, 127), min_size=1, max_size=5),
       name=st.sampled_from(sorted(BINARY) + sorted(INPLACE)))
def test_drawn_numbers_and_dtypes_as_torch(torch, dtype, number, data, name):
    if scaled_beyond_64_bits(name, number):
        return
    fn = BINARY.get(name) or (lambda t, n: INPLACE[name](t.clone(), n))
    ours, theirs = run(tg, fn, dtype, number, data), run(torch, fn, dtype, number, data)
    if isinstance(theirs, tuple) and theirs[1] == "float32":
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", list(VALUES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_that_do_not_fit_are_refused_as_torch(torch, name, dtype):
    """where, clamp, pow and masked_fill take the number as a value of the dtype: too big is
    torch's RuntimeError (an unsigned dtype takes a negative down to -max, wrapped)."""
    fn = VALUES[name]
    for number in [300, -300, 255, -1, -200, 2 ** 40, 2]:
        if name.startswith("pow") and number < 0:
            continue  # (integers to negative powers: an error of its own)
        ours = run(tg, lambda t, n: fn(tg, t, n), dtype, number)
        theirs = run(torch, lambda t, n: fn(torch, t, n), dtype, number)
        assert ours == theirs, (number, ours, theirs)


@pytest.mark.parametrize("name", ["masked_fill", "masked_fill_"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_float_values_must_lie_in_the_range(torch, name, dtype):
    """A float value has no slack below an unsigned dtype (uint8 refuses -1.0) nor past the
    largest integer (int8 refuses 127.5); in range it is truncated."""
    fn = VALUES[name]
    for number in [127.5, 127.0, -128.5, -128.0, -1.0, -0.5, 255.0, 255.5, 2.7, math.nan,
                   math.inf, 2.0 ** 63, 1e19, -2.0 ** 63]:
        ours = run(tg, lambda t, n: fn(tg, t, n), dtype, number)
        theirs = run(torch, lambda t, n: fn(torch, t, n), dtype, number)
        assert ours == theirs, (number, ours, theirs)


@pytest.mark.parametrize("number", [2 ** 64, -2 ** 63 - 1, 2 ** 70])
def test_numbers_beyond_64_bits_are_overflow_errors(torch, number):
    for name in ["+", "*", "/", "//", "&", "<", "number - t"]:
        for lib in (tg, torch):
            with pytest.raises(OverflowError):
                BINARY[name](lib.tensor([1, 2], dtype=lib.int8), number)
    for lib in (tg, torch):
        with pytest.raises(OverflowError):
            lib.tensor([1, 2], dtype=lib.int16).add_(number)
        with pytest.raises(OverflowError):
            lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int8), number)


def test_the_messages_name_the_op_and_value():
    t = tg.tensor([1, 2], dtype=tg.int8)
    with pytest.raises(RuntimeError, match=r"where: other=300 cannot be converted to type int8"):
        tg.where(t > 1, t, 300)
    with pytest.raises(RuntimeError, match=r"masked_fill: value=-129 .* -128 to 127"):
        t.masked_fill(t > 1, -129)
    with pytest.raises(OverflowError, match=str(2 ** 64)):
        t + 2 ** 64


def test_wrapped_keeps_the_lowest_bits():
    assert wrapped(300, np.dtype(np.int8)) == 44 and wrapped(-5, np.dtype(np.uint8)) == 251
    assert wrapped(2 ** 63, np.dtype(np.int64)) == -2 ** 63
    assert wrapped(2 ** 64 - 1, np.dtype(np.int32)) == -1
    assert wrapped(np.int64(-300), np.dtype(np.int16)) == -300


def test_float_tensors_and_bools_are_not_wrapped(torch):
    """A float tensor takes the number as a float; a bool tensor's result is int64."""
    for fn in (lambda L: L.tensor([1.5, -2.0]) + 300, lambda L: L.tensor([True, False]) * 300,
               lambda L: L.tensor([1, 2], dtype=L.int8) * 2.5):
        ours, theirs = fn(tg), fn(torch)
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) in str(theirs.dtype)
