"""Rounded division and remainders (ops/division.py) against torch: ``//``, ``%``, ``fmod``,
``div(rounding_mode=...)``, their reflected and in-place forms, values and dtypes over
integers of both signs and floats with zeros; gradients to second order; torch's errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool as tg
from helpers import check_grad

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]

# (ours, torch's) for each spelling, on (a, b): tensors or numbers
OPS = {
    "//": lambda m, a, b: a // b,
    "%": lambda m, a, b: a % b,
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "div": lambda m, a, b: m.div(a, b),
    "div trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "divide floor": lambda m, a, b: m.divide(a, b, rounding_mode="floor"),
    "true_divide": lambda m, a, b: m.true_divide(a, b),
    "Tensor.div": lambda m, a, b: a.div(b) if isinstance(a, m.Tensor) else m.div(a, b),
    "Tensor.div floor": lambda m, a, b: (a.div(b, rounding_mode="floor") if isinstance(a, m.Tensor)
                                         else m.div(a, b, rounding_mode="floor")),
    "Tensor.remainder": lambda m, a, b: a.remainder(b) if isinstance(a, m.Tensor) else b.__rmod__(a),
}
NUMBER_FIRST = [name for name in OPS if name != "fmod"]  # torch.fmod(5, t) is a TypeError


def assert_same(ours, theirs):
    """Same dtype, shape and values (NaNs in the same places, zeros with the same sign)."""
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    expected = theirs.detach().numpy()
    got = ours.detach().numpy()
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    if got.dtype.kind == "f":  # (a NaN's sign is no value's)
        np.testing.assert_array_equal(np.signbit(got) & ~np.isnan(got),
                                      np.signbit(expected) & ~np.isnan(expected))


def both(torch, fn, *values):
    """fn on our tensors and on torch's, made from the same arrays (numbers pass as they are)."""
    ours = [tg.tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    theirs = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    return fn(tg, *ours), fn(torch, *theirs)


def shapes_that_broadcast():
    return st.sampled_from([((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (5,)),
                            ((2, 1, 3), (3,)), ((0, 3), (1, 3))])


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(INT_DTYPES), shapes=shapes_that_broadcast(),
       name=st.sampled_from(list(OPS)), seed=st.integers(0, 2 ** 16))
def test_integers_match_torch(dtype, shapes, name, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -1000), min(info.max, 1000), shapes[0], endpoint=True).astype(dtype)
    b = rng.integers(max(info.min, -9), 10, shapes[1], endpoint=True).astype(dtype)
    b[b == 0] = 3  # (division by 0 is an error for integers: see below)
    assert_same(*both(torch, OPS[name], a, b))


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64"]), shapes=shapes_that_broadcast(),
       name=st.sampled_from(list(OPS)), seed=st.integers(0, 2 ** 16))
def test_floats_with_zeros_and_infinities_match_torch(dtype, shapes, name, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5])
    a, b = (np.where(rng.random(s) < 0.3, rng.choice(specials, s), rng.standard_normal(s) * 10)
            .astype(dtype) for s in shapes)
    assert_same(*both(torch, OPS[name], a, b))


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("number", [3, -3, 300, 2.5, -0.5, True])
def test_numbers_on_either_side_promote_as_torch(torch, name, number):
    for values in (np.array([-7, 7, -8, 9, 1]), np.array([-7.5, 7.0, -0.0, 9.25, 1.0], np.float32),
                   np.array([-7, 7, -8, 9, 1], np.int8)):
        assert_same(*both(torch, OPS[name], values, number))
        if name in NUMBER_FIRST:
            assert_same(*both(torch, OPS[name], number, values))


@pytest.mark.parametrize("name", list(OPS))
def test_promotion_between_tensors_matches_torch(torch, name):
    cases = [(np.array([5, 250], np.uint8), np.array([3, -4], np.int8)),
             (np.array([5, -6], np.int32), np.array([2.5, -4.0])),
             (np.array([5, -6], np.int64), np.array(2.5)),  # a 0-d float decides the kind
             (np.array([5.0, -6.0], np.float32), np.array(2.0)),  # not the width
             (np.array([True, False]), np.array([3, -4]))]
    for a, b in cases:
        assert_same(*both(torch, OPS[name], a, b))


def test_wrapping_and_negative_operands_follow_torch(torch):
    lowest = np.array([np.iinfo(np.int64).min, -7, 7], np.int64)
    minus_one = np.array([-1, -2, -2], np.int64)
    for name in OPS:
        if name != "div trunc":  # (torch's trunc division of INT64_MIN by -1 dies of SIGFPE)
            assert_same(*both(torch, OPS[name], lowest, minus_one))
    # ours wraps, as its floor division does
    assert tg.div(tg.tensor(lowest), tg.tensor(minus_one), rounding_mode="trunc").tolist() == \
        [np.iinfo(np.int64).min, 3, -3]
    assert (tg.tensor([-7]) // 2).item() == -4 and (tg.tensor([-7]) % 2).item() == 1
    assert tg.div(tg.tensor([-7]), 2, rounding_mode="trunc").item() == -3
    assert tg.fmod(tg.tensor([-7]), 2).item() == -1


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in OPS if n not in ("div", "true_divide", "Tensor.div")])
def test_integer_division_by_zero_is_torchs_error(torch, name):
    for m in (torch, tg):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            OPS[name](m, m.tensor([5, 6]), m.tensor([1, 0]))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            OPS[name](m, m.tensor([5, 6]), 0)
    # true division of integers is float division: inf, nan
    assert_same(*both(torch, OPS["div"], np.array([1, 0, -1]), 0))


def test_integer_division_by_zero_in_place_changes_nothing():
    x = tg.tensor([5, 6])
    for call in (lambda: x.floor_divide_(0), lambda: x.remainder_(tg.tensor([1, 0])),
                 lambda: x.fmod_(0), lambda: x.div_(0, rounding_mode="trunc")):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            call()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x //= 0
    assert x.tolist() == [5, 6] and x._version == 0


@pytest.mark.parametrize("name, kernel", [("//", "div_floor_cpu"), ("%", "remainder_cpu"),
                                          ("fmod", "fmod_cpu"), ("div trunc", "div_trunc_cpu")])
def test_bool_operands_are_not_implemented_as_torch(torch, name, kernel):
    for m in (torch, tg):
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
            OPS[name](m, m.tensor([True, False]), m.tensor([True, True]))
    assert_same(*both(torch, OPS[name], np.array([True, False]), 2))  # bool and int: int64


def test_rounding_mode_errors_are_torchs(torch):
    for m in (torch, tg):
        x = m.tensor([1.0])
        with pytest.raises(RuntimeError, match="but found 'round'"):
            m.div(x, 2, rounding_mode="round")
        with pytest.raises(RuntimeError, match="but found 'round'"):
            x.div_(2, rounding_mode="round")
        with pytest.raises(TypeError):
            m.div(x, 2, rounding_mode=1)
        with pytest.raises(TypeError):
            x.div(2, "floor")  # keyword only
        with pytest.raises(TypeError):
            m.true_divide(x, 2, rounding_mode="floor")


def test_operands_that_are_no_tensor_or_number_are_type_errors(torch):
    for m in (torch, tg):
        x = m.tensor([5, 6])
        for call in (lambda: x // "a", lambda: None % x, lambda: x.remainder("a"),
                     lambda: m.fmod(x, [1]), lambda: m.fmod(5, x), lambda: m.floor_divide(x, None),
                     lambda: m.div(x, "a", rounding_mode="floor")):
            with pytest.raises(TypeError):
                call()
    with pytest.raises(TypeError, match="unsupported operand type"):
        tg.tensor([5]) % "a"


def test_shapes_that_do_not_broadcast_are_refused():
    with pytest.raises(RuntimeError, match="remainder.*broadcast"):
        tg.tensor([1, 2, 3]) % tg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="floor_divide.*broadcast"):
        tg.tensor([1.0, 2.0, 3.0]) // tg.tensor([1.0, 2.0])


# ---- gradients ------------------------------------------------------------------------------
def away_from_jumps(rng, shape, b):
    """Values whose quotient by b is at least 0.1 from an integer (the remainders jump there)."""
    q = rng.integers(-4, 5, shape) + rng.uniform(0.1, 0.9, shape)
    return q * b


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["remainder", "fmod", "%"])
def test_remainders_match_torch_to_second_order(torch, name, dtype):
    rng = np.random.default_rng(3)
    b = (rng.uniform(0.5, 2.0, (1, 4)) * rng.choice([-1, 1], (1, 4))).astype(dtype)
    a = away_from_jumps(rng, (3, 4), b).astype(dtype)[:, :1] * np.ones((1, 1), dtype)
    a = np.concatenate([a, -a, np.zeros((1, 1), dtype)]).astype(dtype)  # (7, 1): both signs, 0
    weights = rng.standard_normal((7, 4)).astype(dtype)
    results = []
    for m in (tg, torch):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        w = m.tensor(weights, requires_grad=True)
        out = OPS[name](m, x, y)
        gx, gy = m.autograd.grad(out, (x, y), grad_outputs=w, create_graph=True)
        # second order: through -w · q(x, y) (q's derivative 0) and d/dw
        second = m.autograd.grad((gy * gy).sum() + (gx * gx).sum(), (x, y, w), allow_unused=True)
        results.append((out, gx, gy, second))
    (out, gx, gy, second), (tout, tgx, tgy, tsecond) = results
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for ours, theirs in ((out, tout), (gx, tgx), (gy, tgy)):
        assert ours.dtype == dtype
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)
    for ours, theirs in zip(second, tsecond):
        expected = 0 if theirs is None else theirs.numpy()
        np.testing.assert_allclose(ours.numpy(), np.broadcast_to(expected, ours.shape), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounding_division_passes_back_zeros_as_torch(torch, mode, dtype):
    a = np.array([[-7.5], [3.0], [0.25]], dtype)
    b = np.array([[2.0, -1.5]], dtype)
    grads = []
    for m in (tg, torch):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        out = m.div(x, y, rounding_mode=mode)
        assert out.requires_grad
        out.sum().backward()
        grads.append((x.grad, y.grad))
    for ours, theirs in zip(*grads):
        assert ours is not None and ours.dtype == dtype
        assert_same(ours, theirs)


def test_torch_gives_floor_divide_and_number_remainder_no_derivative(torch):
    for m in (tg, torch):
        x = m.tensor([1.5, -2.5], requires_grad=True)
        for out in (x // 2, m.floor_divide(x, 2), 5.0 % x, m.remainder(5.0, x)):
            assert out.requires_grad  # recorded, as torch: backward refuses
            with pytest.raises(RuntimeError, match="derivative for aten::"):
                out.sum().backward()
        (x % 2).sum().backward()  # a number on the right is fine: d/dx = 1
        assert x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", ["remainder", "fmod"])
@pytest.mark.parametrize("written", ["input", "other"])
@pytest.mark.parametrize("needs", ["input", "other"])
def test_what_is_saved_is_torchs(torch, name, written, needs):
    """Both operands are saved only for other's gradient: writing into one in place between
    forward and backward is refused then, and only then, as in torch."""
    outcomes = []
    for m in (tg, torch):
        leaves = {k: m.tensor([5.5, 3.0], requires_grad=(k == needs)) for k in ("input", "other")}
        used = {k: v * 1 for k, v in leaves.items()}
        out = getattr(m, name)(used["input"], used["other"])
        with m.no_grad():
            used[written].add_(1)
        try:
            out.sum().backward()
            outcomes.append("ran")
        except RuntimeError:
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1] == ("refused" if needs == "other" else "ran")


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_gradient_matches_finite_differences_away_from_jumps(name):
    rng = np.random.default_rng(7)
    b = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    a = away_from_jumps(rng, (3, 4), b)
    check_grad(lambda x, y: getattr(tg, name)(x, y) * 1.5, a, b)
    check_grad(lambda x, y: getattr(tg, name)(x, y[0]), a, b[:1])  # broadcast other


def test_int_tensors_mixed_with_grad_tensors_promote_and_differentiate(torch):
    grads = []
    for m in (tg, torch):
        y = m.tensor([2.5, -1.5], requires_grad=True)
        out = m.remainder(m.tensor([7, -7]), y)
        assert out.dtype == m.float32
        out.sum().backward()
        grads.append(y.grad)
    assert_same(*grads)


# ---- in place -------------------------------------------------------------------------------
INPLACE = {
    "floor_divide_": lambda x, b: x.floor_divide_(b),
    "remainder_": lambda x, b: x.remainder_(b),
    "fmod_": lambda x, b: x.fmod_(b),
    "div_ trunc": lambda x, b: x.div_(b, rounding_mode="trunc"),
    "divide_ floor": lambda x, b: x.divide_(b, rounding_mode="floor"),
    "true_divide_": lambda x, b: x.true_divide_(b),
}


def augmented(op):
    def run(x, b):
        if op == "//=":
            x //= b
        else:
            x %= b
        return x
    return run


INPLACE["//="], INPLACE["%="] = augmented("//="), augmented("%=")


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("values, other", [(np.array([-7.5, 7.0, 3.25]), 2.0),
                                           (np.array([-7.5, 7.0, 3.25], np.float32), np.array([2.0, -1.5, 0.5])),
                                           (np.array([-7, 7, 9]), 2),
                                           (np.array([-7, 7, 9], np.int8), np.array([2, -3, 4]))])
def test_in_place_matches_torch_and_bumps_the_version(torch, name, values, other):
    results = []
    for m in (tg, torch):
        x = m.tensor(values)
        b = m.tensor(other) if isinstance(other, np.ndarray) else other
        version = x._version
        try:
            result = INPLACE[name](x, b)
        except RuntimeError as error:
            results.append(type(error))
            continue
        assert result is x and x._version == version + 1
        results.append(x)
    if isinstance(results[1], type):  # torch refuses (an integer result of true division)
        assert results[0] is results[1]
        return
    assert_same(*results)


@pytest.mark.parametrize("name", list(INPLACE))
def test_in_place_refuses_a_result_that_does_not_fit(torch, name):
    for m in (tg, torch):
        x = m.tensor([7, -7])
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            INPLACE[name](x, 2.5)  # a float result into an int tensor
        assert x.tolist() == [7, -7] and x._version == 0
        with pytest.raises(RuntimeError):
            INPLACE[name](m.tensor([7.0, -7.0]), m.ones(3, 2))  # a shape that does not fit


def test_in_place_on_a_leaf_that_requires_grad_is_refused_and_on_others_recorded(torch):
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tg.tensor([1.5], requires_grad=True).remainder_(1.0)
    grads = []
    for m in (tg, torch):
        x, y = (m.tensor([5.5, -3.25], requires_grad=True), m.tensor([2.0, 1.5], requires_grad=True))
        z = x * 1
        z.remainder_(y)
        z.fmod_(1.25)
        (z * z).sum().backward()
        grads.append((x.grad, y.grad))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


# ---- abs ------------------------------------------------------------------------------------
def test_builtin_abs_and_absolute_are_abs(torch):
    values = np.array([-1.5, 0.0, 2.0], np.float32)
    for fn in (abs, lambda t: t.absolute(), lambda t: tg.absolute(t) if isinstance(t, tg.Tensor)
               else torch.absolute(t)):
        assert_same(*both(torch, lambda m, t: fn(t), values))
    assert_same(*both(torch, lambda m, t: abs(t), np.array([-3, 4], np.int8)))
    x = tg.tensor(values, requires_grad=True)
    abs(x).sum().backward()
    assert x.grad.tolist() == [-1.0, 0.0, 1.0]
    y = tg.tensor([-2.0, 3.0])
    assert y.absolute_() is y and y.tolist() == [2.0, 3.0] and y._version == 1
    with pytest.raises(NotImplementedError, match="Bool"):
        abs(tg.tensor([True]))
