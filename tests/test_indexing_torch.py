"""Indexing as PyTorch 2.13 does it: ``x[index]``, ``x[index] = v``, ``x[index] += v`` and their
gradients, for ints, slices, None, ``...``, bools, bool masks, integer tensors, lists (nested),
tuples, ranges and NumPy arrays, in any combination. Torch applies an index's ints (selects),
slices and None first, as a view, and only then its arrays: ``x[1, 0:2, idx]`` is
``x[1][0:2, idx]``, where NumPy would place idx's dims first.

Hypothesis draws index expressions over random shapes and compares every result with torch's;
an expression torch refuses must be refused here with the same exception type. Plain tests pin
the bugs users found (``t[range(n), j] = v`` wrote nothing; NumPy's placement of the dims).
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tinygrad_pool as tg
from tinygrad_pool import tensor

from test_movement import parity

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


# ---- index expressions, drawn once and made for either framework ----------------------------
# A part is a tuple (kind, value, form): kind says what torch does with it, form how it is
# spelled (a Python int or a 0-d tensor; a list, tuple, range, array or tensor of indices ...).
@st.composite
def shapes(draw):
    sizes = st.sampled_from([2, 3, 1, 4, 2, 3, 0])  # (a dim of length 0 now and then)
    return tuple(draw(st.lists(sizes, min_size=0, max_size=4)))


def _broadcastable(draw, shape: tuple, max_leading_ones: int = 0) -> tuple:
    """A shape that broadcasts to ``shape``: some leading dims dropped, some sizes 1 (torch
    also takes leading 1s beyond shape's rank, where a value is written)."""
    drop = draw(st.integers(0, len(shape)))
    kept = tuple(1 if n and draw(st.booleans()) else n for n in shape[drop:])
    return (1,) * draw(st.integers(0, max_leading_ones)) + kept


@st.composite
def index_cases(draw):
    """(shape, parts, spelling): an index torch is meant to accept (nearly always does)."""
    shape = draw(shapes())
    ndim = len(shape)
    # One shape every integer array broadcasts to (masks: their count of True, below).
    common = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    dims_parts, d, masked = [], 0, False
    while d < ndim:
        n = shape[d]
        kind = draw(st.sampled_from(["array", "int", "slice", "full", "mask", "array", "int"]))
        if kind == "int" and n == 0 or kind == "array" and n == 0:
            kind = "slice"
        if kind == "mask" and masked:
            kind = "full"
        width = draw(st.integers(1, min(2, ndim - d))) if kind == "mask" else 1
        dims_parts.append((kind, d, width))
        masked |= kind == "mask"
        d += width
    # ... stands for a run of full slices (possibly none: where it stands between two arrays,
    # torch keeps their dims in place, NumPy would not)
    ellipsis = draw(st.none() | st.integers(0, len(dims_parts)))
    if ellipsis is not None:
        end = ellipsis
        while end < len(dims_parts) and dims_parts[end][0] == "full" and draw(st.booleans()):
            end += 1
        dims_parts[ellipsis:end] = [("...", None, 0)]
    elif draw(st.booleans()):  # trailing full slices may be left out
        while dims_parts and dims_parts[-1][0] == "full":
            dims_parts.pop()
    parts = []
    mask_count = None
    for kind, d, width in dims_parts:
        if kind == "mask":
            mask = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(shape[d:d + width])),
                                          max_size=int(np.prod(shape[d:d + width])))),
                            dtype=bool).reshape(shape[d:d + width])
            mask_count = int(mask.sum())
            # (torch counts a list or array as naming one dim, whatever its shape: beside ...,
            # which then stands for one more dim, a mask of 2 dims is spelled as a tensor)
            forms = ["tensor"] if width > 1 and ellipsis is not None else ["tensor", "list",
                                                                           "ndarray"]
            parts.append(("mask", mask, draw(st.sampled_from(forms))))
        elif kind == "int":
            value = draw(st.integers(-shape[d], shape[d] - 1))
            parts.append(("int", value, draw(st.sampled_from(["py", "py", "np", "tensor"]))))
        elif kind == "slice":
            bound = st.none() | st.integers(-shape[d] - 2, shape[d] + 2)
            parts.append(("slice", slice(draw(bound), draw(bound),
                                         draw(st.sampled_from([None, 1, 2, 3]))), "py"))
        elif kind == "full":
            parts.append(("slice", slice(None), "py"))
        elif kind == "...":
            parts.append(("...", Ellipsis, "py"))
        else:
            parts.append(("array", d, None))  # made below, once the masks' counts are known
    array_shape = common if mask_count is None else (mask_count,)
    for k, (kind, d, _) in enumerate(parts):
        if kind == "array":
            n = shape[d]
            index_shape = _broadcastable(draw, array_shape) or (1,)
            values = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(index_shape)),
                                   max_size=int(np.prod(index_shape))))
            form = draw(st.sampled_from(["tensor", "tensor32", "list", "tuple", "ndarray",
                                         "range"]))
            array = np.array(values, dtype=np.int64).reshape(index_shape)
            if form == "range":  # a range: one dim of consecutive places
                length = index_shape[0]
                if len(index_shape) == 1 and length <= n:
                    array = np.arange(length) + draw(st.integers(-n, n - length))
                else:
                    form = "list"
            parts[k] = ("array", array, form)
    arrays = any(kind in ("array", "mask") for kind, _, _ in parts)
    # Parts that name no dim: None, and bools (a new dim of length 1, kept or not)
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(parts)))
        extra = draw(st.sampled_from(["none", "none", "true", "false", "bool_tensor"]))
        if extra == "none":
            parts.insert(where, ("none", None, "py"))
        else:  # (False selects nothing: beside arrays, whose shapes do not broadcast with 0)
            value = extra == "true" or (extra == "bool_tensor" and draw(st.booleans()))
            parts.insert(where, ("bool", value or arrays, "tensor" if extra == "bool_tensor"
                                 else "py"))
    spelling = "tuple" if len(parts) != 1 else draw(st.sampled_from(["tuple", "single"]))
    if len(parts) > 1 and draw(st.sampled_from(range(8))) == 0:
        spelling = "list"  # torch 2.13 reads a list holding sequences, slices ... as a tuple
    return shape, parts, spelling


def make_index(fw, parts, spelling):
    """The index for framework ``fw`` (torch or tinygrad_pool)."""
    made = []
    for kind, value, form in parts:
        if form == "py":
            made.append(value)
        elif form == "np":
            made.append(np.int64(value))
        elif form == "tensor":
            made.append(fw.tensor(value))
        elif form == "tensor32":
            made.append(fw.tensor(value, dtype=fw.int32))
        elif form == "list":
            made.append(np.asarray(value).tolist())
        elif form == "tuple":
            made.append(tuple(np.asarray(value).tolist()))
        elif form == "ndarray":
            made.append(np.array(value))
        elif form == "range":
            made.append(range(int(value[0]), int(value[0]) + len(value)) if len(value) else range(0))
    if spelling == "single":
        return made[0]
    return list(made) if spelling == "list" else tuple(made)


def outcome(fn):
    """(result, None) or (None, the exception's type)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as error:  # noqa: BLE001  (any refusal: its type is compared)
        return None, type(error)


def same_refusal(ours, theirs) -> bool:
    """Both accept, or both refuse with torch's exception type (ours may be a subclass of it)."""
    return ours is theirs or None not in (ours, theirs) and issubclass(ours, theirs)


def written_twice(torch, shape, index) -> bool:
    """Whether the index names some element more than once (index_put_ is then
    nondeterministic in torch, where the values written there differ)."""
    places = outcome(lambda: torch.arange(int(np.prod(shape))).reshape(shape)[index])[0]
    return places is not None and places.numel() != places.unique().numel()


def value_shape(draw, shape: tuple) -> tuple:
    return _broadcastable(draw, shape, max_leading_ones=1)


# ---- hypothesis: every index against torch --------------------------------------------------
@SETTINGS
@given(case=index_cases(), seed=st.integers(0, 2 ** 16))
def test_read_and_its_gradient_match_torch(torch, case, seed):
    shape, parts, spelling = case
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(shape)
    tx = torch.tensor(x0, requires_grad=True)
    theirs, refused = outcome(lambda: tx[make_index(torch, parts, spelling)])
    x = tensor(x0, requires_grad=True)
    ours, our_refusal = outcome(lambda: x[make_index(tg, parts, spelling)])
    assert same_refusal(our_refusal, refused), (parts, spelling, our_refusal, refused)
    assume(refused is None)
    assert ours.shape == tuple(theirs.shape), (parts, spelling)
    np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
    w = rng.standard_normal(ours.shape)
    (ours * tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@SETTINGS
@given(case=index_cases(), data=st.data())
def test_write_and_inplace_add_match_torch(torch, case, data):
    """``t[index] = v`` (a number, or a tensor that broadcasts) and ``t[index] += v``."""
    shape, parts, spelling = case
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x0 = rng.standard_normal(shape)
    target = outcome(lambda: torch.tensor(x0)[make_index(torch, parts, spelling)])[0]
    assume(target is not None)
    index_t, index_o = make_index(torch, parts, spelling), make_index(tg, parts, spelling)
    twice = written_twice(torch, shape, index_t)
    v0 = rng.standard_normal(value_shape(data.draw, tuple(target.shape)))
    if twice:  # the same value at every place: the order of the writes does not matter
        v0 = np.full(v0.shape, 0.75)
    for value_t, value_o in ((2.5, 2.5), (torch.tensor(v0), tensor(v0))):
        for op in ("=", "+="):
            t, ours = torch.tensor(x0), tensor(x0)
            if op == "=":
                _, refused = outcome(lambda: t.__setitem__(index_t, value_t))
                _, our_refusal = outcome(lambda: ours.__setitem__(index_o, value_o))
            else:
                def add(fw_t, index, value):
                    fw_t[index] += value
                _, refused = outcome(lambda: add(t, index_t, value_t))
                _, our_refusal = outcome(lambda: add(ours, index_o, value_o))
            assert same_refusal(our_refusal, refused), (parts, spelling, op, our_refusal, refused)
            np.testing.assert_array_equal(ours.numpy(), t.numpy(), err_msg=f"{parts} {op}")


@SETTINGS
@given(case=index_cases(), data=st.data())
def test_gradients_through_a_write_match_torch(torch, case, data):
    """``y = x * 1; y[index] = v`` (and ``+= v``): x gets no gradient at the written places (or
    all of it, for +=), v the gradient of the places it was written to, summed over its
    broadcast. (The gradients are torch's even where a place is written twice.)"""
    shape, parts, spelling = case
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x0 = rng.standard_normal(shape)
    target = outcome(lambda: torch.tensor(x0)[make_index(torch, parts, spelling)])[0]
    assume(target is not None)
    v0 = rng.standard_normal(value_shape(data.draw, tuple(target.shape)))
    w = rng.standard_normal(shape)

    def write(y, index, v, op):
        if op == "=":
            y[index] = v
        else:
            y[index] += v
    for op in ("=", "+="):
        grads, refusals = [], []
        for fw in (torch, tg):
            x, v = fw.tensor(x0, requires_grad=True), fw.tensor(v0, requires_grad=True)
            y = x * 1
            refusals.append(outcome(lambda: write(y, make_index(fw, parts, spelling), v, op))[1])
            if refusals[-1] is None:
                (y * fw.tensor(w)).sum().backward()
                grads.append([x.grad.numpy(), np.zeros(v0.shape) if v.grad is None
                              else v.grad.numpy()])
        assert same_refusal(*refusals[::-1]), (parts, spelling, op, refusals)
        if refusals[0] is None:
            np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-12, atol=1e-12)


# ---- what torch refuses ---------------------------------------------------------------------
REFUSED = {
    "float": lambda fw: 1.5,
    "float_in_tuple": lambda fw: (0, 1.5),
    "numpy_bool": lambda fw: np.True_,
    "float_tensor": lambda fw: fw.tensor([0.0, 1.0]),
    "0d_float_tensor": lambda fw: fw.tensor(1.0),
    "int8_tensor": lambda fw: fw.tensor([0, 1], dtype=fw.int8),
    "int16_tensor": lambda fw: fw.tensor([0, 1], dtype=fw.int16),
    "negative_step": lambda fw: slice(None, None, -1),
    "zero_step": lambda fw: (0, slice(None, None, 0)),
    "too_many": lambda fw: (0, 0, 0),
    "too_many_with_an_array": lambda fw: (0, [0], 0, 0),
    "int_out_of_range": lambda fw: (3, [0]),
    "array_out_of_range": lambda fw: [0, 5],
    "array_below_range": lambda fw: (slice(None), [-5]),
    "mask_of_another_shape": lambda fw: fw.tensor([True, False]),
    "mask_of_another_shape_later": lambda fw: (0, fw.tensor([True, False])),
    "arrays_that_do_not_broadcast": lambda fw: ([0, 1], [0, 1, 2]),
    "false_beside_an_array": lambda fw: (False, [0, 1]),
    "str": lambda fw: "a",
    "dict": lambda fw: {},
    "none_in_an_index_list": lambda fw: (0, [None]),
    "slice_in_an_index_list": lambda fw: (0, [slice(None)]),
    "ragged_index_list": lambda fw: (0, [[0, 1], [2]]),
    "2d_list_mask_after_ellipsis": lambda fw: (Ellipsis, [[True, False, True, False]] * 3),
    "long_tensor_in_an_index_list": lambda fw: (0, [fw.tensor([0, 1]), fw.tensor([1, 2])]),
    "ellipses_that_leave_too_few_dims": lambda fw: (Ellipsis, 0, Ellipsis, 1),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_torch_refuses_is_refused_with_its_exception(torch, name):
    x0 = np.arange(24.0).reshape(2, 3, 4) if "ellips" in name else np.arange(12.0).reshape(3, 4)
    _, refused = outcome(lambda: torch.tensor(x0)[REFUSED[name](torch)])
    assert refused is not None, f"torch accepts {name}"
    x = tensor(x0)
    _, ours = outcome(lambda: x[REFUSED[name](tg)])
    assert same_refusal(ours, refused), (ours, refused)
    # ... and a write with it changes nothing
    for value in (1.0, tensor(1.0)):
        _, ours = outcome(lambda: x.__setitem__(REFUSED[name](tg), value))
        assert ours is not None and issubclass(ours, Exception)
    np.testing.assert_array_equal(x.numpy(), x0)
    assert x._version == 0


def test_a_message_names_the_index_and_what_is_wrong():
    x = tensor(np.zeros((3, 4)))
    with pytest.raises(IndexError, match=r"index: .*valid indices \(got float\)"):
        x[1.5]
    with pytest.raises(IndexError, match=r"index: too many indices for tensor of dimension 2"):
        x[0, [0], 0, 0]
    with pytest.raises(IndexError, match=r"index: tensors used as indices must be long, int, "
                                         r"byte or bool tensors, got one of dtype int8"):
        x[tensor([0], dtype=tg.int8)]
    with pytest.raises(RuntimeError, match=r"index: Index put requires the source and "
                                           r"destination dtypes match, got float64 .* int64"):
        x[[0, 1]] = tensor([1, 2])


# ---- the bugs users found ---------------------------------------------------------------------
def test_write_at_a_range_and_a_column_writes_as_torch(torch):
    """``t[range(n), j] = v`` wrote into a copy (range was no advanced index): nothing changed."""
    x0 = np.arange(12.0).reshape(3, 4)
    j = [2, 0, 1]
    for write in (lambda t, fw: t.__setitem__((range(3), fw.tensor(j)), -1.0),
                  lambda t, fw: t.__setitem__(range(3), -1.0),
                  lambda t, fw: t.__setitem__((range(1, 3), 1), -1.0)):
        ours, theirs = tensor(x0), torch.tensor(x0)
        write(ours, tg)
        write(theirs, torch)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert not np.array_equal(ours.numpy(), x0)
        assert ours._version == theirs._version == 1


def test_inplace_add_at_a_range_adds_as_torch(torch):
    x0 = np.arange(12.0).reshape(3, 4)
    ours, theirs = tensor(x0), torch.tensor(x0)
    ours[range(1, 3), 1] += 10.0
    theirs[range(1, 3), 1] += 10.0
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.numpy()[1, 1] == x0[1, 1] + 10 and ours.numpy()[2, 1] == x0[2, 1] + 10
    ours[(0, 2), :2] += tensor([1.0, 2.0])  # a tuple inside the index: an index tensor
    theirs[(0, 2), :2] += torch.tensor([1.0, 2.0])
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_forward_forward_overlay_of_labels_matches_torch(torch, rng):
    """The forward-forward pattern: a copy of the batch with each row's label place set to the
    batch's largest value; gradients reach x through the copy and through max()."""
    x0, y = rng.standard_normal((5, 10)), np.array([3, 0, 9, 3, 1])
    results = []
    for fw in (torch, tg):
        x = fw.tensor(x0, requires_grad=True)
        x_ = x.clone()
        x_[range(x0.shape[0]), fw.tensor(y)] = x.max()
        (x_ * fw.tensor(np.arange(50.0).reshape(5, 10))).sum().backward()
        results.append((x_.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert (results[1][0][range(5), y] == x0.max()).all()


def test_an_int_selects_before_the_arrays_as_torch(torch, rng):
    """``x[1, 0:2, idx]`` is ``x[1][0:2, idx]`` (shape (2, 3)); NumPy's rule, which counts the
    int as an array apart from idx, gives (3, 2)."""
    x0, idx = rng.standard_normal((2, 4, 5)), [0, 2, 4]
    x = tensor(x0)
    out = x[1, 0:2, tensor(idx)]
    assert out.shape == (2, 3) and x0[1, 0:2, idx].shape == (3, 2)
    np.testing.assert_array_equal(out.numpy(), x0[1][0:2, idx])
    np.testing.assert_array_equal(out.numpy(), torch.tensor(x0)[1, 0:2, torch.tensor(idx)].numpy())
    # the gradient, a write and an in-place add follow the same layout
    for index in ((1, slice(0, 2), idx), (-1, slice(None), [[0], [3]])):
        parity(torch, lambda t: t[index], lambda t: t[index], x0)
        value = rng.standard_normal(torch.tensor(x0)[index].shape)
        ours, theirs = tensor(x0), torch.tensor(x0)
        ours[index] = tensor(value)
        theirs[index] = torch.tensor(value)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        ours[index] += tensor(value)
        theirs[index] += torch.tensor(value)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("index, shape", [
    ((slice(None), [0, 1], Ellipsis, [0, 1]), (3, 2)),  # ... of no dims: the arrays stay together
    (([0, 1], None, [0, 1]), (2, 1, 5)),  # None apart: the arrays' dims first
    (([0, 1], slice(None), None, [1, 2]), (2, 4, 1)),
    ((None, True, [0, 1]), (1, 2, 4, 5)),  # a bool: a new dim, indexed at [0]
    ((True, True), (1, 3, 4, 5)),
    ((Ellipsis, 0, Ellipsis), (3, 4)),  # several ...: each stands for the dims not named
    ((Ellipsis, [0, 1], Ellipsis), (3, 4, 2)),
    ((slice(None), Ellipsis, [0, 1], Ellipsis, [0, 1]), (3, 2)),
    ((0, Ellipsis, [1, 2]), (4, 2)),
    (([[0, 1], [1, 2]],), (2, 2, 4, 5)),  # a nested list in a tuple: one index tensor
    (([0, 1], 2, [[1], [3]]), (2, 2)),  # an int between arrays: selected first, arrays adjacent
])
def test_placement_of_the_dims_with_none_ellipsis_and_bools_as_torch(torch, rng, index, shape):
    x0 = rng.standard_normal((3, 4, 5))
    out, tout = parity(torch, lambda t: t[index], lambda t: t[index], x0)
    assert out.shape == shape


def test_a_list_of_sequences_is_a_tuple_with_torchs_warning(torch):
    x0 = np.arange(12.0).reshape(3, 4)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        out = tensor(x0)[[[0, 1], [1, 2]]]
    with pytest.warns(UserWarning):
        expected = torch.tensor(x0)[[[0, 1], [1, 2]]]
    np.testing.assert_array_equal(out.numpy(), expected.numpy())  # x[[0, 1], [1, 2]]
    assert out.shape == (2,)
    # 32 entries or more, or only numbers: one index tensor
    many = [[0, 1]] * 32
    np.testing.assert_array_equal(tensor(x0)[many].numpy(), torch.tensor(x0)[many].numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(tensor(x0)[[2, 0.7, True]].numpy(),
                                      torch.tensor(x0)[[2, 0.7, True]].numpy())


def test_uint8_masks_warn_and_select_as_torch(torch):
    x0 = np.arange(12.0).reshape(3, 4)
    mask = np.array([1, 0, 1], dtype=np.uint8)
    with pytest.warns(UserWarning, match="uint8"):
        out = tensor(x0)[tensor(mask)]
    with pytest.warns(UserWarning):
        expected = torch.tensor(x0)[torch.tensor(mask)]
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_bool_shortcuts_of_a_write_as_torch(torch):
    """``t[False] = v`` writes nothing (not even a version); ``t[True] = v`` writes all, as a
    copy (v's dtype may differ); in a tuple, False checks v's shape."""
    x0 = np.arange(12.0).reshape(3, 4)
    ours, theirs = tensor(x0), torch.tensor(x0)
    ours[False] = tensor(np.ones(7))
    theirs[False] = torch.ones(7)
    assert ours._version == theirs._version == 0
    ours[True] = tensor(5)
    theirs[True] = torch.tensor(5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(RuntimeError):
        theirs[(False,)] = torch.ones(7)
    with pytest.raises(RuntimeError):
        ours[(False,)] = tensor(np.ones(7))


def test_index_put_dtype_rule_and_masked_fill_exception_as_torch(torch):
    """An advanced write takes a tensor of the input's dtype (torch's index_put_), except one
    element through a single bool mask (torch's masked_fill); a number is always converted."""
    x0 = np.arange(12.0).reshape(3, 4)
    mask = x0 > 5
    cases = [((lambda fw: [0, 1]), lambda fw: fw.tensor([7, 8, 9, 10])),
             ((lambda fw: fw.tensor(mask)), lambda fw: fw.tensor(7)),
             ((lambda fw: (0, fw.tensor(mask[0]))), lambda fw: fw.tensor([7])),
             ((lambda fw: (fw.tensor(mask[:, 3]), fw.tensor(mask[1]))), lambda fw: fw.tensor(7)),
             ((lambda fw: [0, 1]), lambda fw: 7),
             ((lambda fw: 0), lambda fw: fw.tensor([7, 8, 9, 10]))]
    for index, value in cases:
        ours, theirs = tensor(x0), torch.tensor(x0)
        _, refused = outcome(lambda: theirs.__setitem__(index(torch), value(torch)))
        _, our_refusal = outcome(lambda: ours.__setitem__(index(tg), value(tg)))
        assert same_refusal(our_refusal, refused), (our_refusal, refused)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # a write into an integer tensor converts a number as torch does
    ours, theirs = tensor(np.arange(4)), torch.arange(4)
    ours[[0, 1]], theirs[[0, 1]] = 2.7, 2.7
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_value_with_leading_ones_is_written_as_torch(torch):
    x0 = np.zeros((3, 4))
    for index in ([0, 1], (slice(None), [1, 2])):
        shape = (1, 1) + tuple(torch.tensor(x0)[index].shape)
        value = np.arange(float(np.prod(shape))).reshape(shape)
        results = []
        for fw in (torch, tg):
            x, v = fw.tensor(x0, requires_grad=True), fw.tensor(value, requires_grad=True)
            y = x * 1
            y[index] = v
            (y * fw.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
            results.append((y.detach().numpy(), x.grad.numpy(), v.grad.numpy()))
        for ours, theirs in zip(results[1], results[0]):
            np.testing.assert_array_equal(ours, theirs)


def test_double_backward_of_a_two_step_index_and_write(torch, rng):
    """Index, its adjoint IndexScatter and IndexPut differentiate again in two steps."""
    x0, v0 = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 2))
    index = (1, slice(None), [0, 3])
    parity(torch, lambda t: t[index] * t[index], lambda t: t[index] * t[index], x0)

    def write(x, v):
        y = x * x
        y[index] = v * v
        return y
    parity(torch, write, write, x0, v0)


def test_a_multi_ellipsis_index_is_a_view(torch):
    """Without arrays, several ... still index basically: a view, writes reach the base."""
    ours, theirs = tensor(np.zeros((2, 3, 4))), torch.zeros(2, 3, 4)
    view = ours[..., 1, ...]  # (each ... stands for 2 - 1 dims: the 1 selects along dim 2)
    assert np.shares_memory(view.numpy(), ours.numpy())
    assert view.shape == tuple(theirs[..., 1, ...].shape) == (2, 3)
    ours[..., 1, ...] = 1.0
    theirs[..., 1, ...] = 1.0
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_repeated_places_last_write_wins_as_numpy_and_torch_on_the_cpu(torch):
    """(torch documents index_put_ with repeated places as undefined; on the CPU and this small
    it writes in order, as NumPy does.)"""
    ours, theirs = tensor(np.zeros(5)), torch.zeros(5, dtype=torch.float64)
    ours[[0, 0, 0, 1, 1]] = tensor(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    theirs[[0, 0, 0, 1, 1]] = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_inplace_add_through_an_index_of_a_0d_tensor_counts_its_gradient_once(torch):
    """``y[...] += v`` on a 0-d y: the base's gradient outside the view is zero (a backward got
    a 0-d gradient as a NumPy scalar, and writing into the copy of a scalar wrote nowhere)."""
    results = []
    for fw in (torch, tg):
        x, v = fw.tensor(1.0, requires_grad=True), fw.tensor(1.0, requires_grad=True)
        y = x * 1
        y[...] += v
        (y * 2).backward()
        results.append((x.grad.item(), v.grad.item()))
    assert results[1] == results[0] == (2.0, 2.0)
