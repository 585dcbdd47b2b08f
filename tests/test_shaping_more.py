"""More of torch's shaping surface: the keyword spellings of the movement and join ops
(``x.reshape(shape=...)``, ``torch.cat(..., axis=1)``...), and unbind, tile, ravel, tensor_split,
rot90, fliplr/flipud, swapdims, square_, nonzero/argwhere/count_nonzero, the new_* constructors,
Tensor.isclose/allclose, and pixel_shuffle/pixel_unshuffle/channel_shuffle (F., torch. and nn.).

Each is run beside torch: values, dtypes and shapes; for the differentiable ones the gradient
and the second derivative through the recorded backward, in float32 and float64, plus float64
finite differences; torch's error types for bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, nn, tensor
import tinygrad_pool.nn.functional as F

from helpers import check_grad

TOLERANCES = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def joined(lib, out):
    """One tensor from an op's output (a tuple of pieces: flattened and concatenated)."""
    if isinstance(out, (tuple, list)):
        return lib.cat([piece.reshape(-1) for piece in out]) if out else lib.zeros(0)
    return out


def assert_parity(torch, fn, x, dtype, seed=0):
    """fn(lib, x) in both frameworks: forward, gradient, and the second-order terms of
    Σ v · (∂y/∂x)ᵀw (d/dx and d/dw) through the recorded backward."""
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    x = np.asarray(x, dtype)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = joined(tinygrad_pool, fn(tinygrad_pool, xo)), joined(torch, fn(torch, xt))
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol)
    weights = rng.standard_normal(yo.shape).astype(dtype)
    direction = rng.standard_normal(x.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    assert go.dtype == dtype
    np.testing.assert_allclose(go.numpy(), gt.detach().numpy(), **tol)
    (go * tensor(direction)).sum().backward()
    (gt * torch.tensor(direction)).sum().backward()
    for ours, theirs in ((xo, xt), (wo, wt)):
        expected = np.zeros(theirs.shape) if theirs.grad is None else theirs.grad.numpy()
        got = np.zeros(theirs.shape) if ours.grad is None else ours.grad.numpy()
        np.testing.assert_allclose(got, expected, **tol)


def sample(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- the differentiable ops, each as the same lambda for both frameworks ----------------------
OPS = {
    "unbind_0": ((3, 4), lambda L, x: x.unbind()),
    "unbind_dim1": ((2, 3, 4), lambda L, x: L.unbind(x, dim=1)),
    "unbind_axis_neg": ((2, 3, 4), lambda L, x: x.unbind(axis=-1)),
    "tile_fewer": ((2, 3), lambda L, x: x.tile(2)),
    "tile_more": ((2, 3), lambda L, x: L.tile(x, (2, 1, 3))),
    "tile_keyword": ((2, 3), lambda L, x: x.tile(dims=(2, 2))),
    "ravel": ((2, 3, 4), lambda L, x: x.ravel()),
    "ravel_transposed": ((3, 4), lambda L, x: L.ravel(x.t())),
    "tensor_split_sections": ((7, 3), lambda L, x: x.tensor_split(3)),
    "tensor_split_indices": ((2, 9), lambda L, x: L.tensor_split(x, [2, -3, 20], dim=1)),
    "tensor_split_tensor": ((8,), lambda L, x: x.tensor_split(L.tensor([1, 5]))),
    "tensor_split_kw": ((2, 9), lambda L, x: x.tensor_split(sections=4, axis=1)),
    "rot90": ((3, 4), lambda L, x: x.rot90()),
    "rot90_k2": ((2, 3, 4), lambda L, x: L.rot90(x, 2, (1, 2))),
    "rot90_k3": ((2, 3, 4), lambda L, x: x.rot90(k=3, dims=[2, 0])),
    "rot90_neg": ((2, 3, 4), lambda L, x: x.rot90(-1, (-1, 0))),
    "rot90_k0": ((3, 4), lambda L, x: x.rot90(4)),
    "fliplr": ((3, 4, 2), lambda L, x: x.fliplr()),
    "flipud": ((3, 4), lambda L, x: L.flipud(x)),
    "flip_varargs": ((2, 3, 4), lambda L, x: x.flip(0, 2)),
    "flip_keyword": ((2, 3, 4), lambda L, x: L.flip(input=x, dims=[1])),
    "swapdims": ((2, 3, 4), lambda L, x: x.swapdims(0, 2)),
    "torch_swapaxes": ((2, 3, 4), lambda L, x: L.swapaxes(x, axis0=1, axis1=2)),
    "reshape_shape": ((2, 3, 4), lambda L, x: x.reshape(shape=(6, 4))),
    "torch_reshape_shape": ((2, 3, 4), lambda L, x: L.reshape(input=x, shape=[4, -1])),
    "view_size": ((2, 3, 4), lambda L, x: x.view(size=(6, 4))),
    "squeeze_axis": ((1, 3, 1), lambda L, x: x.squeeze(axis=0)),
    "squeeze_axes": ((1, 3, 1), lambda L, x: L.squeeze(x, axis=(0, 2))),
    "unsqueeze_axis": ((2, 3), lambda L, x: x.unsqueeze(axis=-1)),
    "expand_size": ((1, 3), lambda L, x: x.expand(size=(2, 4, 3))),
    "permute_dims": ((2, 3, 4), lambda L, x: x.permute(dims=(2, 0, 1))),
    "torch_permute_dims": ((2, 3, 4), lambda L, x: L.permute(x, dims=[1, 2, 0])),
    "repeat_keyword": ((2, 3), lambda L, x: x.repeat(repeats=(2, 1, 2))),
    "narrow_axis": ((4, 3), lambda L, x: x.narrow(axis=0, start=1, length=2)),
    "chunk_axis": ((2, 5), lambda L, x: x.chunk(2, axis=1)),
    "torch_split_names": ((5, 2), lambda L, x: L.split(tensor=x, split_size_or_sections=[2, 3])),
    "cat_axis": ((2, 3), lambda L, x: L.cat([x, x * 2], axis=1)),
    "concat_axis": ((2, 3), lambda L, x: L.concat([x, x], axis=-1)),
    "concatenate_axis": ((2, 3), lambda L, x: L.concatenate(tensors=[x, x], axis=0)),
    "stack_axis": ((2, 3), lambda L, x: L.stack([x, x * 3], axis=2)),
    "gather_axis": ((3, 4), lambda L, x: x.gather(axis=1, index=L.tensor([[0, 3], [1, 1], [2, 0]]))),
    "index_select_axis": ((3, 4), lambda L, x: L.index_select(x, axis=0, index=L.tensor([2, 0]))),
    "square_": ((2, 3), lambda L, x: (x * 1).square_()),
    "pixel_shuffle": ((2, 8, 2, 3), lambda L, x: L.nn.functional.pixel_shuffle(x, 2)),
    "pixel_shuffle_unbatched": ((9, 2, 2), lambda L, x: L.pixel_shuffle(x, upscale_factor=3)),
    "pixel_shuffle_5d": ((2, 1, 4, 1, 2), lambda L, x: L.nn.functional.pixel_shuffle(x, 2)),
    "pixel_unshuffle": ((1, 2, 4, 6), lambda L, x: L.nn.functional.pixel_unshuffle(x, 2)),
    "pixel_unshuffle_unbatched": ((2, 3, 6), lambda L, x: L.pixel_unshuffle(x, 3)),
    "channel_shuffle": ((2, 6, 3), lambda L, x: L.nn.functional.channel_shuffle(x, 3)),
    "channel_shuffle_4d": ((1, 4, 2, 2), lambda L, x: L.channel_shuffle(x, groups=2)),
    "pixel_round_trip": ((1, 2, 4, 4), lambda L, x: L.nn.functional.pixel_shuffle(
        L.nn.functional.pixel_unshuffle(x, 2) * 3, 2)),
    "hstack": ((2, 3), lambda L, x: L.hstack([x, x[:, :1] * 2])),
    "hstack_1d": ((3,), lambda L, x: L.hstack((x, x[0], x * 2))),
    "vstack": ((3,), lambda L, x: L.vstack([x, x.reshape(1, 3) * 2])),
    "row_stack": ((2, 3), lambda L, x: L.row_stack([x, x])),
    "dstack": ((2, 3), lambda L, x: L.dstack([x, x * 2])),
    "column_stack": ((3,), lambda L, x: L.column_stack([x, x.reshape(3, 1) * 2, x])),
    "atleast_3d": ((2, 3), lambda L, x: L.atleast_3d(x, x[0], x[0, 0])),
    "atleast_2d": ((3,), lambda L, x: L.atleast_2d([x, x[0]])),
    "atleast_1d": ((3,), lambda L, x: L.atleast_1d(x[1])),
    "hsplit": ((2, 4), lambda L, x: x.hsplit(2)),
    "hsplit_1d": ((5,), lambda L, x: L.hsplit(x, [1, 3])),
    "vsplit": ((4, 2), lambda L, x: x.vsplit([1, 3])),
    "dsplit": ((1, 2, 6), lambda L, x: L.dsplit(x, 3)),
    "scatter_axis": ((2, 3), lambda L, x: L.zeros(2, 3, dtype=x.dtype).scatter(
        axis=1, index=L.tensor([[2, 0], [1, 2]]), src=x[:, :2])),
    "scatter_add_axis": ((2, 3), lambda L, x: x.scatter_add(
        axis=0, index=L.tensor([[1, 0, 1]]), src=x[:1] * 2) * x),
    "take_along_dim_axis": ((2, 3), lambda L, x: L.take_along_dim(
        x, L.tensor([[2], [0]]), axis=1)),
    "repeat_interleave_axis": ((2, 3), lambda L, x: L.repeat_interleave(x, 2, axis=0)),
    "repeat_interleave_axis_method": ((2, 3), lambda L, x: x.repeat_interleave(
        L.tensor([1, 0, 2]), axis=-1)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPS))
def test_forward_backward_and_double_backward_match_torch(torch, name, dtype):
    shape, fn = OPS[name]
    assert_parity(torch, fn, sample(shape), dtype)


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradient_matches_finite_differences(name):
    shape, fn = OPS[name]
    def weighted(x):  # a weighting that tells every output element apart
        out = joined(tinygrad_pool, fn(tinygrad_pool, x))
        return (out * tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape))).sum()
    check_grad(weighted, sample(shape))


# ---- keyword forms: the same answer as torch, and torch's error for a doubled argument ------
def both(torch, expression, shape=(2, 3, 4)):
    """``expression`` (a lambda of the library and an arange tensor) in both frameworks: the
    result, or the error type."""
    results = []
    for lib in (tinygrad_pool, torch):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        try:
            results.append(expression(lib, x))
        except Exception as error:  # noqa: BLE001 (the type is what is compared)
            results.append(type(error))
    return results


REFUSED_BOTH_WAYS = {
    "reshape_twice": lambda L, x: x.reshape((6, 4), shape=(6, 4)),
    "reshape_int_keyword": lambda L, x: x.reshape(shape=24),
    "view_twice": lambda L, x: x.view((6, 4), size=(6, 4)),
    "squeeze_dim_and_axis": lambda L, x: x.squeeze(dim=0, axis=0),
    "squeeze_positional_and_axis": lambda L, x: x.squeeze(0, axis=0),
    "unsqueeze_twice": lambda L, x: x.unsqueeze(0, dim=0),
    "expand_twice": lambda L, x: x.expand(2, 3, 4, size=(2, 3, 4)),
    "permute_twice": lambda L, x: x.permute(2, 0, 1, dims=(2, 0, 1)),
    "permute_int_keyword": lambda L, x: x.permute(dims=2),
    "repeat_twice": lambda L, x: x.repeat(1, 2, 1, repeats=(1, 2, 1)),
    "flip_int_keyword": lambda L, x: x.flip(dims=0),
    "torch_flip_int": lambda L, x: L.flip(x, 0),
    "torch_tile_int": lambda L, x: L.tile(x, 2),
    "flip_nothing": lambda L, x: x.flip(),
    "cat_dim_and_axis": lambda L, x: L.cat([x, x], dim=1, axis=1),
    "stack_positional_and_axis": lambda L, x: L.stack([x, x], 1, axis=1),
    "gather_twice": lambda L, x: x.gather(0, axis=0, index=L.zeros(1, 3, 4, dtype=L.int64)),
    "narrow_twice": lambda L, x: x.narrow(0, axis=0, start=0, length=1),
    "unbind_twice": lambda L, x: x.unbind(0, axis=0),
    "count_nonzero_twice": lambda L, x: x.count_nonzero(0, dim=0),
    "nonzero_positional": lambda L, x: x.nonzero(True),
}


@pytest.mark.parametrize("name", sorted(REFUSED_BOTH_WAYS))
def test_doubled_or_wrong_keyword_arguments_raise_torchs_type_error(torch, name):
    ours, theirs = both(torch, REFUSED_BOTH_WAYS[name])
    assert theirs is TypeError and ours is TypeError


def test_keyword_spellings_are_in_the_signatures():
    """Positional sizes, or torch's keyword for the whole sequence; NumPy's axis= goes through
    ``numpy_spellings`` and leaves the signature torch's (``__wrapped__``)."""
    import inspect
    Tensor = tinygrad_pool.Tensor
    assert str(inspect.signature(Tensor.reshape)) == "(self, *sizes, shape=None)"
    assert str(inspect.signature(Tensor.permute)) == "(self, *order, dims=None)"
    assert list(inspect.signature(Tensor.squeeze).parameters) == ["self", "dim"]
    assert list(inspect.signature(tinygrad_pool.cat).parameters) == ["tensors", "dim"]
    assert list(inspect.signature(Tensor.tensor_split).parameters) == [
        "self", "indices_or_sections", "dim"]


# ---- views where torch returns views ----------------------------------------------------------
@pytest.mark.parametrize("split", [
    lambda x: x.unbind(1),
    lambda x: x.tensor_split(2, dim=1),
    lambda x: x.tensor_split([1], dim=1),
    lambda x: (x.ravel(),),
])
def test_pieces_are_views_that_write_through(split):
    x = tinygrad_pool.zeros(2, 3)
    version = x._version
    for piece in split(x):
        piece.add_(1)
    assert x._version > version
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 3)))


def test_ravel_of_a_transposed_matrix_is_a_copy():
    x = tinygrad_pool.zeros(3, 2)
    flat = x.t().ravel()
    flat.add_(1)
    assert not x.numpy().any()


@pytest.mark.parametrize("make", [
    lambda L, x: x.rot90(0),
    lambda L, x: L.nn.functional.pixel_shuffle(x.reshape(1, 1, 2, 3), 1),
    lambda L, x: L.nn.functional.channel_shuffle(x.reshape(1, 2, 3), 1),
    lambda L, x: x.fliplr(),
])
def test_rot90_and_shuffles_return_copies(torch, make):
    for lib in (tinygrad_pool, torch):
        x = lib.zeros(2, 3)
        make(lib, x).add_(1)
        assert not x.numpy().any()


# ---- tensor_split, tile, rot90 over many shapes (hypothesis) ---------------------------------
@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 9), sections=st.integers(1, 6),
       indices=st.lists(st.integers(-12, 12), max_size=4), by_indices=st.booleans())
def test_tensor_split_pieces_match_torch(size, sections, indices, by_indices):
    import torch
    split = indices if by_indices else sections
    ours = tinygrad_pool.arange(size * 2).reshape(2, size).tensor_split(split, 1)
    theirs = torch.arange(size * 2).reshape(2, size).tensor_split(split, 1)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=4), k=st.integers(-5, 5),
       data=st.data())
def test_rot90_matches_torch(shape, k, data):
    import torch
    ndim = len(shape)
    first = data.draw(st.integers(-ndim, ndim - 1))
    second = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != first % ndim))
    x = np.arange(int(np.prod(shape))).reshape(shape)
    ours = tinygrad_pool.tensor(x).rot90(k, (first, second))
    theirs = torch.tensor(x).rot90(k, (first, second))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3),
       dims=st.lists(st.integers(0, 3), max_size=4))
def test_tile_matches_torch(shape, dims):
    import torch
    x = np.arange(int(np.prod(shape))).reshape(shape)
    ours = tinygrad_pool.tensor(x).tile(tuple(dims))
    theirs = torch.tensor(x).tile(tuple(dims))
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@settings(max_examples=30, deadline=None)
@given(batch=st.lists(st.integers(0, 2), max_size=2), channels=st.integers(1, 2),
       r=st.integers(1, 3), height=st.integers(1, 3), width=st.integers(1, 3),
       groups=st.integers(1, 3))
def test_shuffles_match_torch(batch, channels, r, height, width, groups):
    import torch
    shape = (*batch, channels * r * r, height, width)
    x = np.arange(int(np.prod(shape))).reshape(shape)
    pairs = [(F.pixel_shuffle(tensor(x), r), torch.nn.functional.pixel_shuffle(torch.tensor(x), r))]
    if x.size:  # (torch 2.13's pixel_unshuffle returns an empty input's shape unchanged)
        pairs.append((F.pixel_unshuffle(tensor(x).reshape(*batch, channels, height * r, width * r), r),
                      torch.nn.functional.pixel_unshuffle(
                          torch.tensor(x).reshape(*batch, channels, height * r, width * r), r)))
    if len(shape) > 2:
        grouped = np.arange(2 * channels * groups * height).reshape(2, channels * groups, height)
        pairs.append((F.channel_shuffle(tensor(grouped), groups),
                      torch.nn.functional.channel_shuffle(torch.tensor(grouped), groups)))
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- nonzero, argwhere, count_nonzero -------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), dtype=st.sampled_from(["float32", "int64",
                                                                             "bool"]),
       data=st.data())
def test_nonzero_argwhere_count_nonzero_match_torch(shape, dtype, data):
    import torch
    x = data.draw(st.lists(st.integers(0, 2), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    x = np.array(x).reshape(shape).astype(dtype)
    ours, theirs = tinygrad_pool.tensor(x), torch.tensor(x)
    for a, b in ((ours.nonzero(), theirs.nonzero()), (ours.argwhere(), theirs.argwhere()),
                 (tinygrad_pool.argwhere(ours), torch.argwhere(theirs)),
                 (ours.count_nonzero(), theirs.count_nonzero())):
        assert a.dtype == np.int64 and a.shape == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    a, b = ours.nonzero(as_tuple=True), tinygrad_pool.nonzero(ours, as_tuple=True)
    c = theirs.nonzero(as_tuple=True)
    assert len(a) == len(b) == len(c)
    for p, q, r in zip(a, b, c):
        np.testing.assert_array_equal(p.numpy(), r.numpy())
        np.testing.assert_array_equal(q.numpy(), r.numpy())
    ndim = max(len(shape), 1)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    np.testing.assert_array_equal(ours.count_nonzero(dim).numpy(),
                                  theirs.count_nonzero(dim).numpy())
    np.testing.assert_array_equal(tinygrad_pool.count_nonzero(ours, axis=dim).numpy(),
                                  torch.count_nonzero(theirs, dim=dim).numpy())
    np.testing.assert_array_equal(ours.count_nonzero(dim=()).numpy(),
                                  theirs.count_nonzero(dim=()).numpy())
    if len(shape) >= 2:
        np.testing.assert_array_equal(ours.count_nonzero(dim=(0, -1)).numpy(),
                                      theirs.count_nonzero(dim=(0, -1)).numpy())


def test_nonzero_has_no_gradient():
    x = tensor([1.0, 0.0, 2.0], requires_grad=True)
    assert not x.nonzero().requires_grad and not x.count_nonzero().requires_grad


# ---- new_*, square_, isclose/allclose --------------------------------------------------------
NEW = {
    "zeros_varargs": lambda L, x: x.new_zeros(2, 3),
    "zeros_tuple": lambda L, x: x.new_zeros((2, 3)),
    "zeros_keyword": lambda L, x: x.new_zeros(size=[2, 3], dtype=L.int32),
    "ones": lambda L, x: x.new_ones(4),
    "ones_dtype": lambda L, x: x.new_ones((2,), dtype=L.float64),
    "empty_shape": lambda L, x: x.new_empty(2, 3).zero_(),
    "full": lambda L, x: x.new_full((2,), 3),
    "full_keyword": lambda L, x: x.new_full(size=(2, 1), fill_value=-1.5),
    "full_truncates": lambda L, x: x.long().new_full((2,), 3.5),
    "tensor": lambda L, x: x.new_tensor([1, 2]),
    "tensor_int": lambda L, x: x.long().new_tensor([1.5, 2.7]),
    "tensor_dtype": lambda L, x: x.new_tensor(data=[[1, 2]], dtype=L.int64),
}


@pytest.mark.parametrize("name", sorted(NEW))
def test_new_constructors_match_torch(torch, name):
    ours, theirs = both(torch, NEW[name])
    assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
    assert ours.shape == tuple(theirs.shape) and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_new_constructors_requires_grad_and_errors(torch):
    x = tinygrad_pool.zeros(2)
    assert x.new_zeros(2, requires_grad=True).requires_grad
    assert x.new_tensor([1.0], requires_grad=True).requires_grad
    with pytest.warns(UserWarning, match="detach"):
        copy = x.new_tensor(tensor([1.0, 2.0], requires_grad=True))
    assert not copy.requires_grad and copy.grad_fn is None
    with pytest.raises(TypeError):
        x.new_zeros((2,), size=(2,))
    with pytest.raises(RuntimeError):
        x.new_ones(-1)
    with pytest.raises(RuntimeError):  # an integer tensor cannot require grad, as torch
        x.new_zeros(2, dtype=tinygrad_pool.int64, requires_grad=True)
    with pytest.raises(RuntimeError):
        torch.zeros(2).new_zeros(2, dtype=torch.int64, requires_grad=True)


@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_square_inplace_matches_torch(torch, dtype):
    x = np.array([[-2, 0, 3]]).astype(dtype)
    ours, theirs = tensor(x), torch.tensor(x)
    if dtype == "bool":
        with pytest.raises(RuntimeError):
            theirs.square_()
        with pytest.raises(RuntimeError):
            ours.square_()
        assert ours.numpy().tolist() == x.tolist()  # refused before any change
        return
    assert ours.square_() is ours
    theirs.square_()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(tinygrad_pool.square_(tensor(x)).numpy(), theirs.numpy())


def test_isclose_allclose_methods_match_torch(torch):
    a = np.array([1.0, np.nan, 2.0, 3.0], np.float32)
    b = np.array([1.0 + 1e-6, np.nan, 2.1, 3.0], np.float32)
    for kwargs in ({}, dict(equal_nan=True), dict(rtol=0.1, atol=0.0)):
        np.testing.assert_array_equal(tensor(a).isclose(tensor(b), **kwargs).numpy(),
                                      torch.tensor(a).isclose(torch.tensor(b), **kwargs).numpy())
        assert tensor(a).allclose(tensor(b), **kwargs) == \
            torch.tensor(a).allclose(torch.tensor(b), **kwargs)
    with pytest.raises(RuntimeError):  # different dtypes, as torch
        tensor(a).isclose(tensor(a.astype(np.float64)))
    with pytest.raises(TypeError):
        tensor(a).allclose(a)


# ---- modules -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, argument, shape", [
    ("PixelShuffle", 2, (2, 8, 3, 3)), ("PixelUnshuffle", 2, (1, 2, 4, 6)),
    ("ChannelShuffle", 3, (2, 6, 2, 2))])
def test_shuffle_modules_match_torch(torch, name, argument, shape):
    ours, theirs = getattr(nn, name)(argument), getattr(torch.nn, name)(argument)
    assert repr(ours) == repr(theirs)
    x = sample(shape).astype(np.float32)
    np.testing.assert_array_equal(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    assert not list(ours.parameters())


def test_shuffle_modules_check_their_argument_when_called():
    layer = nn.PixelShuffle(0)  # accepted when built, as torch's
    with pytest.raises(RuntimeError, match="positive upscale_factor"):
        layer(tinygrad_pool.zeros(1, 4, 2, 2))
    with pytest.raises(TypeError):
        nn.ChannelShuffle(2.0)(tinygrad_pool.zeros(1, 4, 2, 2))


# ---- torch's errors ----------------------------------------------------------------------------
ERRORS = {
    "hsplit_0d": lambda L: L.hsplit(L.tensor(1.0), 1),
    "hsplit_indivisible": lambda L: L.zeros(2, 3).hsplit(2),
    "hsplit_zero": lambda L: L.zeros(2, 4).hsplit(0),
    "vsplit_1d": lambda L: L.zeros(4).vsplit(2),
    "dsplit_2d": lambda L: L.dsplit(L.zeros(2, 4), 2),
    "vstack_sizes": lambda L: L.vstack([L.zeros(3), L.zeros(2)]),
    "hstack_tensor": lambda L: L.hstack(L.zeros(3)),
    "hstack_empty": lambda L: L.hstack([]),
    "unbind_0d": lambda L: L.tensor(3.0).unbind(),
    "unbind_dim": lambda L: L.zeros(2, 3).unbind(2),
    "tensor_split_0d": lambda L: L.tensor(3.0).tensor_split(2),
    "tensor_split_zero_sections": lambda L: L.zeros(4).tensor_split(0),
    "tensor_split_float": lambda L: L.zeros(4).tensor_split(2.0),
    "tensor_split_2d_tensor": lambda L: L.zeros(4).tensor_split(L.tensor([[1]])),
    "tensor_split_float_tensor": lambda L: L.zeros(4).tensor_split(L.tensor([1.0])),
    "tensor_split_dim": lambda L: L.zeros(4).tensor_split(2, dim=1),
    "rot90_1d": lambda L: L.zeros(4).rot90(),
    "rot90_one_dim": lambda L: L.zeros(2, 3).rot90(1, (0,)),
    "rot90_same_dims": lambda L: L.zeros(2, 3).rot90(1, (1, -1)),
    "rot90_dim_range": lambda L: L.zeros(2, 3).rot90(1, (0, 2)),
    "rot90_float_k": lambda L: L.zeros(2, 3).rot90(1.5),
    "fliplr_1d": lambda L: L.zeros(3).fliplr(),
    "flipud_0d": lambda L: L.tensor(1.0).flipud(),
    "tile_negative": lambda L: L.zeros(2).tile(-1),
    "count_nonzero_repeated": lambda L: L.zeros(2, 2).count_nonzero(dim=(0, -2)),
    "count_nonzero_range": lambda L: L.zeros(2, 2).count_nonzero(2),
    "pixel_shuffle_2d": lambda L: L.nn.functional.pixel_shuffle(L.zeros(4, 2), 2),
    "pixel_shuffle_channels": lambda L: L.nn.functional.pixel_shuffle(L.zeros(7, 2, 3), 2),
    "pixel_shuffle_zero": lambda L: L.nn.functional.pixel_shuffle(L.zeros(4, 2, 3), 0),
    "pixel_shuffle_float": lambda L: L.nn.functional.pixel_shuffle(L.zeros(4, 2, 3), 2.0),
    "pixel_unshuffle_height": lambda L: L.nn.functional.pixel_unshuffle(L.zeros(1, 5, 6), 2),
    "pixel_unshuffle_width": lambda L: L.nn.functional.pixel_unshuffle(L.zeros(1, 4, 5), 2),
    "pixel_unshuffle_negative": lambda L: L.nn.functional.pixel_unshuffle(L.zeros(1, 4, 4), -1),
    "channel_shuffle_2d": lambda L: L.nn.functional.channel_shuffle(L.zeros(1, 6), 2),
    "channel_shuffle_groups": lambda L: L.nn.functional.channel_shuffle(L.zeros(1, 6, 1), 4),
    "channel_shuffle_zero": lambda L: L.nn.functional.channel_shuffle(L.zeros(1, 6, 1), 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_types(torch, name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](tinygrad_pool)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)
    message = str(ours.value)
    assert name.split("_")[0] in message or "Dimension" in message or "dim" in message or \
        "cat" in message, message


def test_integer_inputs_keep_their_dtype(torch):
    x = np.arange(16).reshape(1, 4, 2, 2)
    for fn in (lambda L, t: L.nn.functional.pixel_shuffle(t, 2), lambda L, t: t.rot90(),
               lambda L, t: t.tile(2), lambda L, t: L.channel_shuffle(t, 2),
               lambda L, t: t.tensor_split(2, dim=1)[0], lambda L, t: t.unbind(1)[0]):
        ours, theirs = fn(tinygrad_pool, tensor(x)), fn(torch, torch.tensor(x))
        assert ours.dtype == np.int64 and str(theirs.dtype) == "torch.int64"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("split, expected", [
    (lambda y: y.unbind(0), [[3, 3, 3], [1, 1, 1]]),
    (lambda y: y.tensor_split(2, 1), [[3, 3, 1], [3, 3, 1]])])
def test_writing_into_a_piece_is_differentiated(split, expected):
    """(torch refuses the write while recording; here the gradient is that of the write)"""
    x = tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 1
    split(y)[0].mul_(3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)
