"""Shape ops: reshape/view, transpose, .T, permute, flatten, flip, indexing; squeeze,
unsqueeze, unflatten, view_as/reshape_as/expand_as, t, mT, repeat, narrow, roll, contiguous,
pad. ``parity`` (forward, backward and double backward against torch, float64 and float32) is
shared with test_join and test_select."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinygrad_pool import autograd, Tensor, tensor
from tinygrad_pool.ops import movement as V
from tinygrad_pool.ops import padding

from helpers import check_grad, leaf, torch_parity

TOLERANCE = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-6)}
TORCH_DTYPE = {np.float64: "float64", np.float32: "float32"}


def parity(torch, ours, theirs, *arrays, dtype=np.float64, seed=0):
    """``ours`` on tinygrad_pool leaves and ``theirs`` on torch leaves (both made from
    ``arrays`` in ``dtype``): the outputs (values, shape, dtype), the first derivatives of
    L = Σ w·out² taken with create_graph, and the second derivatives of Σ v·dL/dx must agree.
    L is quadratic so that the second pass runs every op's backward on Tensors (a linear L
    would give zero second derivatives whatever the ops did). Returns (out, torch_out)."""
    tol = TOLERANCE[dtype]
    rng = np.random.default_rng(seed)
    xs = [tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    ts = [torch.tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    out, tout = ours(*xs), theirs(*ts)
    assert tuple(out.shape) == tuple(tout.shape), (out.shape, tuple(tout.shape))
    assert out.dtype.name == str(tout.dtype).removeprefix("torch."), (out.dtype, tout.dtype)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **tol, err_msg="forward")
    w = rng.standard_normal(out.shape).astype(dtype)
    grads = autograd.grad((out * out * tensor(w)).sum(), xs, create_graph=True)
    tgrads = torch.autograd.grad((tout * tout * torch.tensor(w)).sum(), ts, create_graph=True)
    for k, (g, tg) in enumerate(zip(grads, tgrads)):
        np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), **tol,
                                   err_msg=f"first derivative of input {k}")
    vs = [rng.standard_normal(a.shape).astype(dtype) for a in xs]
    second = sum((g * tensor(v)).sum() for g, v in zip(grads, vs))
    tsecond = sum((g * torch.tensor(v)).sum() for g, v in zip(tgrads, vs))
    # (an output with no elements leaves nothing to differentiate twice: zeros on both sides)
    if second.requires_grad:
        second.backward()
    if tsecond.requires_grad:
        tsecond.backward()
    for k, (x, t) in enumerate(zip(xs, ts)):
        np.testing.assert_allclose(np.zeros(x.shape) if x.grad is None else x.grad.numpy(),
                                   np.zeros(x.shape) if t.grad is None else t.grad.numpy(),
                                   **tol, err_msg=f"second derivative of input {k}")
    return out, tout

# Written so that the same lambda runs on both frameworks.
MOVES = {
    "reshape_varargs": lambda x: x.reshape(4, 6),
    "reshape_tuple": lambda x: x.reshape((3, 8)),
    "reshape_minus_one": lambda x: x.reshape(-1, 2),
    "reshape_flat": lambda x: x.reshape(-1),
    "view": lambda x: x.view(6, 4),
    "transpose_01": lambda x: x.transpose(0, 1),
    "transpose_neg": lambda x: x.transpose(-1, 0),
    "permute_varargs": lambda x: x.permute(2, 0, 1),
    "permute_tuple": lambda x: x.permute((1, 2, 0)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_0_1": lambda x: x.flatten(0, 1),
    "flip_0": lambda x: x.flip((0,)),
    "flip_12": lambda x: x.flip((1, 2)),
    "flip_neg": lambda x: x.flip((-1,)),
    "int_index": lambda x: x[1],
    "slice": lambda x: x[:, 1:3],
    "step_slice": lambda x: x[..., ::2],
    "negative_index": lambda x: x[-1, -2],
    "mixed": lambda x: x[0, :, 1:],
    "chain": lambda x: x.permute(1, 0, 2).reshape(3, -1).flip((1,))[1:],
}


# ---- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_gradcheck(rng, name):
    check_grad(MOVES[name], rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("index", [
    [0, 0, 2],
    np.array([[1, 1], [0, 2]]),
    ([0, 0, 1], [2, 2, 3]),
    (slice(None), [3, 3, 0]),
    np.array([True, False, True]),
], ids=["list_repeats", "array_2d", "pairs_repeats", "slice_then_list", "bool_mask"])
def test_advanced_indexing_gradcheck(rng, index):
    check_grad(lambda x: x[index] * 2, rng.standard_normal((3, 4)))


def test_tensor_transpose_T_and_flatten_gradcheck(rng):
    check_grad(lambda x: x.transpose(), rng.standard_normal((2, 3, 4)))
    check_grad(lambda x: x.T, rng.standard_normal((2, 3)))
    check_grad(lambda x: x.flatten(1, 2), rng.standard_normal((2, 3, 4)))


# ---- semantics ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_forward_matches_numpy(rng, name):
    x = rng.standard_normal((2, 3, 4))
    np_moves = {
        "reshape_varargs": x.reshape(4, 6), "reshape_tuple": x.reshape(3, 8),
        "reshape_minus_one": x.reshape(-1, 2), "reshape_flat": x.reshape(-1),
        "view": x.reshape(6, 4), "transpose_01": x.swapaxes(0, 1),
        "transpose_neg": x.swapaxes(-1, 0), "permute_varargs": x.transpose(2, 0, 1),
        "permute_tuple": x.transpose(1, 2, 0), "flatten": x.ravel(), "flatten_1": x.reshape(2, 12),
        "flatten_0_1": x.reshape(6, 4), "flip_0": x[::-1], "flip_12": x[:, ::-1, ::-1],
        "flip_neg": x[..., ::-1], "int_index": x[1], "slice": x[:, 1:3],
        "step_slice": x[..., ::2], "negative_index": x[-1, -2], "mixed": x[0, :, 1:],
        "chain": x.transpose(1, 0, 2).reshape(3, -1)[:, ::-1][1:],
    }
    out = MOVES[name](tensor(x))
    np.testing.assert_array_equal(out.numpy(), np_moves[name])


def test_transpose_swaps_two_dims_and_without_args_reverses():
    x = tensor(np.zeros((2, 3, 4)))
    assert x.transpose(0, 2).shape == (4, 3, 2)
    assert x.transpose(1, 2).shape == (2, 4, 3)
    assert x.transpose().shape == (4, 3, 2)
    assert x.T.shape == (4, 3, 2)


def test_repeated_indices_add_their_gradients():
    # x[[0, 0, 2]] reads x[0] twice: its gradient is the sum of both reads (by hand)
    x = leaf([10.0, 20.0, 30.0])
    x[[0, 0, 2]].backward(np.array([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 5.0])
    y = leaf(np.zeros((2, 2)))
    y[[1, 1, 1], [0, 0, 1]].sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 0.0], [2.0, 1.0]])


def test_index_with_a_tensor():
    x = leaf([1.0, 2.0, 3.0])
    y = x[tensor([2, 2])]
    np.testing.assert_array_equal(y.numpy(), [3.0, 3.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 2.0])


def test_slice_gradient_lands_in_place():
    x = leaf(np.zeros((3, 3)))
    x[1:, ::2].backward(np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0], [1, 0, 2], [3, 0, 4]])


def test_reshape_gradient_has_input_shape():
    x = leaf(np.arange(6.0))
    x.reshape(2, 3).backward(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0))


# ---- errors (torch's types: RuntimeError for shapes, IndexError for dims) ---------------------
@pytest.mark.parametrize("shape", [(4, 2), (-1, 4), (-1, -1), (2, -3)], ids=str)
def test_reshape_size_mismatch(shape):
    with pytest.raises(RuntimeError, match=r"reshape: .*(\(2, 3\)|-1)"):
        leaf(np.ones((2, 3))).reshape(*shape)


def test_transpose_errors():
    x = leaf(np.ones((2, 3)))
    with pytest.raises(IndexError, match=r"transpose: dim1=2 is out of range for the input"
                                         r".*\[-2, 1\]"):
        x.transpose(0, 2)
    with pytest.raises(TypeError, match="transpose"):
        x.transpose(0)


def test_permute_errors():
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"permute: dims \(0, 0, 1\) are not a permutation"):
        x.permute(0, 0, 1)
    with pytest.raises(RuntimeError, match=r"permute: dims \(0, 1\) must name each of the input's 3"):
        x.permute(0, 1)
    with pytest.raises(IndexError, match="permute: dims=3 is out of range"):
        x.permute(0, 1, 3)


def test_flatten_and_flip_errors():
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"flatten: start_dim 2 comes after end_dim 1.*\(2, 3, 4\)"):
        x.flatten(2, 1)
    with pytest.raises(IndexError, match="flip: dims=3 is out of range"):
        x.flip((3,))
    with pytest.raises(RuntimeError, match=r"flip: dim 1 appears multiple times .*\(1, -2\)"):
        V.flip(x, (1, -2))
    with pytest.raises(TypeError, match=r"flip: dims must be an int or a tuple of ints, got float \(1.0\)"):
        V.flip(x, 1.0)


def test_expand_errors():
    x = leaf(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"expand: size \(3,\) gives 1 size, fewer than the input's 2 dims"):
        x.expand(3)
    with pytest.raises(RuntimeError, match=r"expand: the expanded size 4 in size \(2, 4\) must match .* 3"):
        x.expand(2, 4)


def test_index_out_of_range_names_the_shape():
    with pytest.raises(IndexError, match=r"index: .*\(2, 3\)"):
        leaf(np.ones((2, 3)))[5]


# ---- PyTorch parity -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement_matches_torch(torch, rng, name):
    torch_parity(torch, MOVES[name], rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("index", [
    [0, 0, 2],
    ([0, 0, 1], [2, 2, 3]),
    (slice(None), [3, 3, 0]),
], ids=["list_repeats", "pairs_repeats", "slice_then_list"])
def test_advanced_indexing_matches_torch(torch, rng, index):
    torch_parity(torch, lambda x: x[index], rng.standard_normal((3, 4)))


# ---- squeeze, unsqueeze, unflatten, *_as, t, mT, repeat, narrow, roll, pad ------------------
# name: (ours, theirs(torch, x), input shape); the shape is (2, 1, 3, 1) when not given.
NEW_MOVES = {
    "squeeze_all": (V.squeeze, lambda T, x: x.squeeze()),
    "squeeze_dim": (lambda x: V.squeeze(x, 1), lambda T, x: x.squeeze(1)),
    "squeeze_negative_dim": (lambda x: V.squeeze(x, -1), lambda T, x: x.squeeze(-1)),
    "squeeze_tuple": (lambda x: V.squeeze(x, (1, 3)), lambda T, x: x.squeeze((1, 3))),
    "squeeze_size_3_dim_stays": (lambda x: V.squeeze(x, 2), lambda T, x: x.squeeze(2)),
    "unsqueeze_0": (lambda x: V.unsqueeze(x, 0), lambda T, x: x.unsqueeze(0)),
    "unsqueeze_end": (lambda x: V.unsqueeze(x, -1), lambda T, x: x.unsqueeze(-1)),
    "unsqueeze_middle": (lambda x: V.unsqueeze(x, 2), lambda T, x: x.unsqueeze(2)),
    "unflatten": (lambda x: V.unflatten(x, 1, (2, -1)), lambda T, x: x.unflatten(1, (2, -1)),
                  (3, 6, 2)),
    "unflatten_last": (lambda x: V.unflatten(x, -1, [1, 2, 1]),
                       lambda T, x: x.unflatten(-1, [1, 2, 1]), (3, 2)),
    "view_as": (lambda x: V.view_as(x, tensor(np.zeros((3, 2)))),
                lambda T, x: x.view_as(T.zeros(3, 2))),
    "reshape_as_transposed": (lambda x: V.reshape_as(V.t(x), tensor(np.zeros(6))),
                              lambda T, x: x.t().reshape_as(T.zeros(6)), (2, 3)),
    "expand_as": (lambda x: V.expand_as(x, tensor(np.zeros((4, 2, 5, 3, 2)))),
                  lambda T, x: x.expand_as(T.zeros(4, 2, 5, 3, 2))),
    "t_matrix": (V.t, lambda T, x: x.t(), (2, 3)),
    "t_vector": (V.t, lambda T, x: x.t(), (3,)),
    "mT": (V.matrix_transpose, lambda T, x: x.mT, (2, 3, 4)),
    "repeat_same_dims": (lambda x: V.repeat(x, 2, 1, 3), lambda T, x: x.repeat(2, 1, 3),
                         (2, 3, 1)),
    "repeat_new_dims": (lambda x: V.repeat(x, (3, 1, 2)), lambda T, x: x.repeat((3, 1, 2)),
                        (2, 3)),
    "repeat_zero": (lambda x: V.repeat(x, 0, 2), lambda T, x: x.repeat(0, 2), (2, 3)),
    "narrow": (lambda x: V.narrow(x, 1, 1, 2), lambda T, x: x.narrow(1, 1, 2), (2, 4, 3)),
    "narrow_negative_start": (lambda x: V.narrow(x, -1, -2, 2),
                              lambda T, x: x.narrow(-1, -2, 2), (2, 4, 3)),
    "roll_flat": (lambda x: V.roll(x, 5), lambda T, x: x.roll(5), (2, 4, 3)),
    "roll_dims": (lambda x: V.roll(x, (1, -2), (0, 2)), lambda T, x: x.roll((1, -2), (0, 2)),
                  (2, 4, 3)),
    "roll_same_dim_twice": (lambda x: V.roll(x, (1, 2), (1, 1)),
                            lambda T, x: x.roll((1, 2), (1, 1)), (2, 4, 3)),
    "contiguous_copy": (lambda x: V.contiguous(V.t(x)), lambda T, x: x.t().contiguous(), (2, 3)),
    "pad_last": (lambda x: padding.pad(x, (1, 2)), lambda T, x: T.nn.functional.pad(x, (1, 2)),
                 (2, 4, 3)),
    "pad_two_dims_value": (lambda x: padding.pad(x, (0, 1, 2, 0), value=-1.5),
                           lambda T, x: T.nn.functional.pad(x, (0, 1, 2, 0), value=-1.5),
                           (2, 4, 3)),
    "pad_crop": (lambda x: padding.pad(x, (-1, 0, 1, -2)),
                 lambda T, x: T.nn.functional.pad(x, (-1, 0, 1, -2)), (2, 4, 3)),
    "pad_crop_everything": (lambda x: padding.pad(x, (-1, 2, -2, -2)),
                            lambda T, x: T.nn.functional.pad(x, (-1, 2, -2, -2)), (2, 4, 3)),
    "pad_all_dims": (lambda x: padding.pad(x, [1, 1, 0, 2, 3, 0]),
                     lambda T, x: T.nn.functional.pad(x, [1, 1, 0, 2, 3, 0]), (2, 4, 3)),
}


def _input(rng, name):
    entry = NEW_MOVES[name]
    return rng.standard_normal(entry[2] if len(entry) > 2 else (2, 1, 3, 1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(NEW_MOVES))
def test_new_moves_match_torch(torch, rng, name, dtype):
    ours, theirs = NEW_MOVES[name][:2]
    parity(torch, ours, lambda x: theirs(torch, x), _input(rng, name), dtype=dtype)


@pytest.mark.parametrize("name", sorted(NEW_MOVES))
def test_new_moves_gradcheck(rng, name):
    check_grad(NEW_MOVES[name][0], _input(rng, name))


def test_contiguous_returns_the_tensor_itself_when_it_already_is():
    x = leaf(np.ones((2, 3)))
    assert V.contiguous(x) is x
    y = V.contiguous(V.t(x))
    assert y is not x and y.numpy().flags.c_contiguous and y.grad_fn is not None


def test_pad_always_makes_a_new_tensor_and_truncates_values_for_integers(torch):
    x = tensor(np.arange(6).reshape(2, 3))
    out = padding.pad(x, (1, 1), value=1.7)
    expected = torch.nn.functional.pad(torch.arange(6).reshape(2, 3), (1, 1), value=1.7)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    same = padding.pad(x, ())
    assert same is not x and not np.shares_memory(same.numpy(), x.numpy())


# ---- views: shared memory and version, in-place writes reach the base -----------------------
# name: (ours, theirs(torch, base)) on a (3, 1, 4) base
VIEWS = {
    "squeeze": (lambda b: V.squeeze(b, 1), lambda T, b: b.squeeze(1)),
    "unsqueeze": (lambda b: V.unsqueeze(b, 0), lambda T, b: b.unsqueeze(0)),
    "unflatten": (lambda b: V.unflatten(b, 2, (2, 2)), lambda T, b: b.unflatten(2, (2, 2))),
    "t_of_2d": (lambda b: V.t(b[0]), lambda T, b: b[0].t()),
    "mT": (V.matrix_transpose, lambda T, b: b.mT),
    "narrow": (lambda b: V.narrow(b, 2, 1, 2), lambda T, b: b.narrow(2, 1, 2)),
    "view_as": (lambda b: V.view_as(b, tensor(np.zeros((3, 4)))),
                lambda T, b: b.view_as(T.zeros(3, 4))),
    "int_tensor_index": (lambda b: b[tensor(np.array(2))], lambda T, b: b[T.tensor(2)]),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version_and_writes_reach_the_base(torch, rng, name):
    """x (leaf) -> base = x * 1 -> view -> view.mul_(2) -> (base * w).sum(): base changed where
    the view lies, its version moved with the view's, and the gradient of x matches torch's."""
    ours, theirs = VIEWS[name]
    x0, w = rng.standard_normal((3, 1, 4)), rng.standard_normal((3, 1, 4))
    x, tx = leaf(x0), torch.tensor(x0, requires_grad=True)
    base, tbase = x * 1, tx * 1
    view, tview = ours(base), theirs(torch, tbase)
    assert np.shares_memory(view.numpy(), base.numpy())
    before = base._version
    view.mul_(2)
    tview.mul_(2)
    assert base._version == view._version == before + 1
    np.testing.assert_array_equal(base.numpy(), tbase.detach().numpy())
    (base * tensor(w)).sum().backward()
    (tbase * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_base_writes_show_in_the_views():
    base = tensor(np.zeros((2, 3)))
    view = V.narrow(base, 1, 1, 2)
    base.fill_(4.0)
    np.testing.assert_array_equal(view.numpy(), np.full((2, 2), 4.0))
    assert view._version == base._version == 1


def test_copies_do_not_share_memory():
    x = tensor(np.zeros((2, 3)))
    for out in (V.repeat(x, 1, 1), V.roll(x, 1), padding.pad(x, (0, 0)), V.contiguous(V.t(x))):
        assert not np.shares_memory(out.numpy(), x.numpy())


# ---- hypothesis: shapes and arguments vary ---------------------------------------------------
shapes = st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple)
FIXTURE = HealthCheck.function_scoped_fixture  # (torch: the same module for every example)


@settings(max_examples=25, deadline=None, suppress_health_check=[FIXTURE])
@given(shape=shapes, data=st.data())
def test_squeeze_unsqueeze_narrow_roll_match_torch(torch, shape, data):
    ndim = len(shape)
    dim = data.draw(st.integers(-ndim, ndim - 1), label="dim")
    at = data.draw(st.integers(-ndim - 1, ndim), label="unsqueeze at")
    start = data.draw(st.integers(-shape[dim], shape[dim] - 1), label="start")
    length = data.draw(st.integers(0, shape[dim] - start % shape[dim]), label="length")
    shift = data.draw(st.integers(-5, 5), label="shift")
    x = np.random.default_rng(ndim).standard_normal(shape)
    parity(torch, lambda t: V.squeeze(t, dim), lambda t: t.squeeze(dim), x)
    parity(torch, lambda t: V.unsqueeze(t, at), lambda t: t.unsqueeze(at), x)
    parity(torch, lambda t: V.narrow(t, dim, start, length), lambda t: t.narrow(dim, start, length), x)
    parity(torch, lambda t: V.roll(t, shift, dim), lambda t: t.roll(shift, dim), x)


@settings(max_examples=25, deadline=None, suppress_health_check=[FIXTURE])
@given(shape=shapes, data=st.data())
def test_repeat_and_pad_match_torch(torch, shape, data):
    ndim = len(shape)
    repeats = data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim + 2), label="repeats")
    pairs = data.draw(st.integers(0, ndim), label="padded dims")
    widths = data.draw(st.lists(st.integers(-2, 2), min_size=2 * pairs, max_size=2 * pairs),
                       label="pad")
    x = np.random.default_rng(ndim).standard_normal(shape)
    parity(torch, lambda t: V.repeat(t, repeats), lambda t: t.repeat(repeats), x)
    # cropping more than a dim holds is an error (tested below): only valid widths here
    padded = reversed(shape[ndim - pairs:])
    kept = [n - max(-widths[2 * k], 0) - max(-widths[2 * k + 1], 0) for k, n in enumerate(padded)]
    if min(kept, default=0) >= 0:
        parity(torch, lambda t: padding.pad(t, widths), lambda t: torch.nn.functional.pad(t, widths), x)


# ---- errors of the new ops: torch's type, and a message naming the op and the value ---------
NEW_ERRORS = [
    (lambda x: V.squeeze(x, 3), IndexError, r"squeeze: dim=3 is out of range"),
    (lambda x: V.squeeze(x, (0, -3)), RuntimeError, r"squeeze: dim 0 appears multiple times"),
    (lambda x: V.unsqueeze(x, 4), IndexError, r"unsqueeze: dim=4 .*\[-4, 3\]"),
    (lambda x: V.unsqueeze(x, True), TypeError, r"unsqueeze: dim must be an int, got bool"),
    (lambda x: V.unflatten(x, 1, (2, 2)), RuntimeError, r"unflatten: provided sizes \[2, 2\] .*\(3\)"),
    (lambda x: V.unflatten(x, 1, (-1, -1)), RuntimeError, r"unflatten: .*at most one -1"),
    (lambda x: V.unflatten(x, 1, ()), RuntimeError, r"unflatten: sizes must be non-empty"),
    (lambda x: V.unflatten(x, 1, (3.0,)), TypeError, r"unflatten: sizes must be a tuple of ints"),
    (lambda x: V.view_as(x, np.zeros(24)), TypeError, r"view_as: other must be a Tensor, got ndarray"),
    (lambda x: V.reshape_as(x, tensor(np.zeros(5))), RuntimeError, r"reshape_as: other's shape \(5,\)"),
    (lambda x: V.expand_as(x, tensor(np.zeros((3, 3, 4)))), RuntimeError, r"expand_as: the expanded size 3 in other's shape"),
    (lambda x: V.t(x), RuntimeError, r"t: expects a tensor with <= 2 dimensions, but input is 3D"),
    (lambda x: V.matrix_transpose(x[0, 0]), RuntimeError, r"mT: .*Got 1-D tensor"),
    (lambda x: V.repeat(x, 2, 2), RuntimeError, r"repeat: the number of repeats \(2, 2\) can not be"),
    (lambda x: V.repeat(x, 1, -1, 1), RuntimeError, r"repeat: repeats \(1, -1, 1\) must be non-neg"),
    (lambda x: V.repeat(x), TypeError, r"repeat: missing the repeats"),
    (lambda x: V.repeat(x, 1, 2.0, 1), TypeError, r"repeat: repeats must be a tuple of ints"),
    (lambda x: V.narrow(x, 1, 2, 2), RuntimeError, r"narrow: start \(2\) \+ length \(2\) exceeds"),
    (lambda x: V.narrow(x, 1, 4, 0), IndexError, r"narrow: start out of range .*\[-3, 3\].* 4"),
    (lambda x: V.narrow(x, 1, 0, -1), RuntimeError, r"narrow: length must be non-negative, got -1"),
    (lambda x: V.narrow(x, 1, 0.5, 1), TypeError, r"narrow: start and length must be ints"),
    (lambda x: V.narrow(x[0, 0, 0], 0, 0, 1), RuntimeError, r"narrow: .*0-dim"),
    (lambda x: V.roll(x, (1, 2)), RuntimeError, r"roll: shifts and dimensions must align"),
    (lambda x: V.roll(x, (1,), (0, 1)), RuntimeError, r"roll: shifts and dimensions must align"),
    (lambda x: V.roll(x, (), ()), RuntimeError, r"roll: `shifts` required"),
    (lambda x: V.roll(x, 1.5), TypeError, r"roll: shifts must be an int"),
    (lambda x: V.roll(x, 1, 5), IndexError, r"roll: dims=5 is out of range"),
    (lambda x: padding.pad(x, (1,)), RuntimeError, r"pad: padding length must be divisible by 2"),
    (lambda x: padding.pad(x, (1,) * 8), RuntimeError, r"pad: padding length should be .* 8 .* 3"),
    (lambda x: padding.pad(x, (-3, -2)), RuntimeError, r"pad: pad=\(-3, -2\) crops 5 elements from dim 2"),
    (lambda x: padding.pad(x, (1.5, 1)), TypeError, r"pad: pad must be a tuple of ints"),
    (lambda x: padding.pad(x, 1), TypeError, r"pad: pad must be a tuple of ints, got int"),
    (lambda x: padding.pad(x, (4, 1), mode="reflect"), RuntimeError, r"pad: .*reflect"),
    (lambda x: padding.pad(x, (1, 1), mode="wrap"), NotImplementedError, r"pad: mode must be one of"),
    (lambda x: padding.pad(x, (1, 1), value="a"), TypeError, r"pad: value must be a number, got str"),
]


@pytest.mark.parametrize("fn, error, message", NEW_ERRORS, ids=[m for _, _, m in NEW_ERRORS])
def test_new_op_errors(fn, error, message):
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(error, match=message):
        fn(x)
    assert x.grad is None and x._version == 0


TORCH_ERRORS = NEW_ERRORS


@pytest.mark.parametrize("fn, error", [e[:2] for e in TORCH_ERRORS],
                         ids=[m for _, _, m in TORCH_ERRORS])
def test_new_op_errors_have_torchs_type(torch, fn, error):
    """The same call made in torch raises the same type of error."""
    with pytest.raises(error) as raised:
        _torch_call(torch, fn)
    assert type(raised.value) is error


def _torch_call(torch, fn):
    """fn again, with V's functions swapped for torch's (the lambdas above call V.name(x, ...))."""
    import types
    swapped = types.SimpleNamespace(
        squeeze=torch.squeeze, unsqueeze=torch.unsqueeze, unflatten=torch.unflatten,
        view_as=lambda x, o: x.view_as(o), reshape_as=lambda x, o: x.reshape_as(o),
        expand_as=lambda x, o: x.expand_as(o), t=torch.t, matrix_transpose=lambda x: x.mT,
        repeat=lambda x, *r: x.repeat(*r), narrow=torch.narrow, roll=torch.roll,
        pad=torch.nn.functional.pad)
    globals_ = dict(fn.__globals__, V=swapped, padding=swapped, tensor=lambda a: torch.tensor(a))
    types.FunctionType(fn.__code__, globals_)(torch.ones(2, 3, 4, dtype=torch.float64))


# ---- indexing by tensors: reads and writes as in torch ---------------------------------------
# Indices built from arrays by ``make`` (Tensor for us, torch.tensor for torch), on a (3, 4, 2)
# input.
def _tensor_indices(make):
    rows, cols = make(np.array([2, 0, 2])), make(np.array([[1], [3]]))
    mask_rows = make(np.array([True, False, True]))
    mask_2d = make(np.array([[True, False, False, True]] * 3))
    return {
        "int64": rows,
        "int64_2d_with_slice": (slice(None), cols),
        "pair_broadcast": (rows[:2].reshape(2, 1), cols.reshape(1, 2)),
        "bool_rows": mask_rows,
        "bool_2d": mask_2d,
        "bool_then_slice": (mask_rows, slice(1, 3)),
        "none_ellipsis_int": (None, Ellipsis, make(np.array([1, 1]))),
        "slice_none_bool": (slice(0, 2), None, make(np.array([True, True, False, False]))),
        "zero_d_int": make(np.array(1)),
        "zero_d_int_and_list": (make(np.array(-1)), [0, 0, 3]),
        "ellipsis_int32": (Ellipsis, make(np.array([1, 0], dtype=np.int32))),
    }


INDEX_NAMES = sorted(_tensor_indices(np.asarray))


@pytest.mark.parametrize("name", INDEX_NAMES)
def test_tensor_index_reads_match_torch(torch, rng, name):
    ours, theirs = _tensor_indices(tensor)[name], _tensor_indices(torch.tensor)[name]
    parity(torch, lambda x: x[ours], lambda x: x[theirs], rng.standard_normal((3, 4, 2)))
    parity(torch, lambda x: x[ours], lambda x: x[theirs], rng.standard_normal((3, 4, 2)),
           dtype=np.float32)


@pytest.mark.parametrize("name", INDEX_NAMES)
def test_tensor_index_writes_match_torch(torch, rng, name):
    """base[index] = value (a value requiring grad, broadcast to the indexed shape): the new
    base and the gradients of x and of value as in torch."""
    ours, theirs = _tensor_indices(tensor)[name], _tensor_indices(torch.tensor)[name]
    x0 = rng.standard_normal((3, 4, 2))
    shape = tuple(torch.zeros(3, 4, 2)[theirs].shape)
    v0 = rng.standard_normal(shape[-1:])  # broadcast along all but the last indexed dim
    w = rng.standard_normal((3, 4, 2))
    x, v = leaf(x0), leaf(v0)
    tx, tv = torch.tensor(x0, requires_grad=True), torch.tensor(v0, requires_grad=True)
    base, tbase = x * 1, tx * 1
    base[ours] = v
    tbase[theirs] = tv
    np.testing.assert_array_equal(base.numpy(), tbase.detach().numpy())
    (base * tensor(w)).sum().backward()
    (tbase * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy(), rtol=1e-12)


def test_bool_mask_write_of_a_number_matches_torch(torch, rng):
    x0 = rng.standard_normal((3, 4))
    x, tx = tensor(x0), torch.tensor(x0)
    x[x > 0] = 0.0
    tx[tx > 0] = 0.0
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_index_by_a_0d_int_tensor_is_a_view_as_torchs_select():
    x = tensor(np.arange(6.0).reshape(2, 3))
    row = x[tensor(np.array(1))]
    assert np.shares_memory(row.numpy(), x.numpy())
    row.fill_(0.0)
    np.testing.assert_array_equal(x.numpy(), [[0, 1, 2], [0, 0, 0]])


def test_index_errors_as_torch():
    x = tensor(np.zeros((3, 4)))
    with pytest.raises(IndexError, match="index: tensors used as indices must be long, int, "
                                         "byte or bool tensors, got one of dtype float64"):
        x[tensor(np.array([1.0]))]
    with pytest.raises(ValueError, match=r"index: step must be greater than zero, got slice"):
        x[::-1]
    with pytest.raises(IndexError, match=r"index: .*\(3, 4\)"):
        x[tensor(np.array([True, False]))]
    with pytest.raises(IndexError, match=r"index: .*\(3, 4\)"):
        x[tensor(np.array([5]))]
    with pytest.raises(IndexError, match=r"index: index 5 is out of bounds.*\(3, 4\)"):
        x[tensor(np.array([5]))] = 1.0
    with pytest.raises(RuntimeError, match=r"index: shape mismatch.*value shape \(3, 3\)"):
        x[tensor(np.array([0, 1]))] = tensor(np.ones((3, 3)))
    assert x._version == 0


def test_view_refuses_what_its_strides_cannot_express_as_torch(torch):
    """view shares memory or fails (torch's RuntimeError); reshape copies where it must."""
    import tinygrad_pool as tg
    for make in (lambda fw: fw.arange(6.0).reshape(2, 3).t(),
                 lambda fw: fw.arange(3.0).reshape(3, 1).expand(3, 2)):
        ours, theirs = make(tg), make(torch)
        with pytest.raises(RuntimeError):
            theirs.view(6)
        with pytest.raises(RuntimeError, match=r"view: .*Use \.reshape"):
            ours.view(6)
        np.testing.assert_array_equal(ours.reshape(6).numpy(), theirs.reshape(6).numpy())
    x = tg.arange(6.0)
    assert np.shares_memory(x.view(2, 3).numpy(), x.numpy()) and x.view(3, -1).shape == (3, 2)


def test_a_bool_index_writes_through_as_torch(torch, rng):
    """``x[True] = row`` writes every row (a 0-d mask: NumPy's copy, not a view)."""
    x, row = rng.standard_normal((3, 4)), rng.standard_normal(4)
    ours, theirs = tensor(x.copy()), torch.tensor(x)
    ours[True], theirs[True] = tensor(row), torch.tensor(row)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours[True].shape == tuple(theirs[True].shape) == (1, 3, 4)
