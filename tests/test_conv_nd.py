"""conv1d, conv_transpose1d and conv3d (and their nn layers) against PyTorch: forward, every
gradient and the second derivatives in float32 and float64 over drawn geometries, float64
finite differences, reprs, initialisation and torch's error types."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import tinygrad_pool
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, tensor

from helpers import check_grad

TOL = {np.float32: dict(rtol=2e-4, atol=2e-4), np.float64: dict(rtol=1e-9, atol=1e-10)}


def parity(torch, ours_fn, torch_fn, arrays, dtype, seed=0):
    """Forward, the gradient of every input and the second derivatives — of Σ v·(each
    gradient) with respect to every input and to the output's gradient — ours against torch's."""
    rng = np.random.default_rng(seed)
    arrays = [a.astype(dtype) for a in arrays]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours_fn(*ours), torch_fn(*theirs)
    assert out.dtype == dtype and out.shape == tuple(expected.shape)
    scale = max(1.0, float(np.abs(expected.detach().numpy()).max(initial=0)))
    tol = dict(rtol=TOL[dtype]["rtol"], atol=TOL[dtype]["atol"] * scale)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tol)
    weights = rng.standard_normal(out.shape).astype(dtype)
    w_ours, w_theirs = tensor(weights, requires_grad=True), torch.tensor(weights,
                                                                         requires_grad=True)
    grads = autograd.grad(out, ours, grad_outputs=[w_ours], create_graph=True)
    expected_grads = torch.autograd.grad(expected, theirs, grad_outputs=[w_theirs],
                                         create_graph=True)
    second, second_theirs = 0, 0
    for got, want in zip(grads, expected_grads):
        assert got.dtype == dtype and got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **tol)
        direction = rng.standard_normal(got.shape).astype(dtype)
        second = second + (got * tensor(direction)).sum()
        second_theirs = second_theirs + (want * torch.tensor(direction)).sum()
    leaves, leaves_theirs = ours + [w_ours], theirs + [w_theirs]
    got = autograd.grad(second, leaves, allow_unused=True)
    want = torch.autograd.grad(second_theirs, leaves_theirs, allow_unused=True)
    for g, e, leaf in zip(got, want, arrays + [weights]):
        g = np.zeros(leaf.shape) if g is None else g.numpy()
        e = np.zeros(leaf.shape) if e is None else e.numpy()
        np.testing.assert_allclose(g, e, rtol=tol["rtol"], atol=tol["atol"] * 10)


def same_error(torch_call, our_call):
    """torch raises; ours raises an error of that type (our GeometryError is both RuntimeError
    and ValueError)."""
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(type(theirs.value)):
        our_call()


DTYPES = [np.float32, np.float64]


# ---- conv1d ---------------------------------------------------------------------------------------
@st.composite
def conv1d_cases(draw):
    groups = draw(st.integers(1, 2))
    c, f = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k, dilation, length = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 8))
    padding = draw(st.one_of(st.integers(0, 2), st.sampled_from(["same", "valid"])))
    stride = 1 if padding == "same" else draw(st.integers(1, 3))
    wide = length + (2 * padding if isinstance(padding, int) else 0)
    assume(padding == "same" or wide >= dilation * (k - 1) + 1)
    batch = draw(st.sampled_from([None, 1, 2]))
    shape = (c, length) if batch is None else (batch, c, length)
    return shape, (f, c // groups, k), dict(stride=stride, padding=padding, dilation=dilation,
                                            groups=groups), draw(st.booleans())


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
@given(case=conv1d_cases(), seed=st.integers(0, 2 ** 16))
def test_conv1d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, weight_shape, kwargs, bias = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape), rng.standard_normal(weight_shape)]
    if bias:
        arrays.append(rng.standard_normal(weight_shape[0]))
    parity(torch, lambda *a: F.conv1d(*a, **kwargs),
           lambda *a: torch.nn.functional.conv1d(*a, **kwargs), arrays, dtype, seed)


def test_conv1d_finite_differences(rng):
    x, w, b = rng.standard_normal((2, 4, 7)), rng.standard_normal((2, 2, 3)), rng.standard_normal(2)
    check_grad(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
               x, w, b)
    check_grad(lambda x, w: F.conv1d(x, w, padding="same"), x[0, :2], w)


def test_conv1d_is_the_module_function_and_keeps_integers(torch):
    x, w = np.arange(12).reshape(1, 2, 6), np.ones((3, 2, 2), dtype=np.int64)
    got = tinygrad_pool.conv1d(tensor(x), tensor(w), stride=2)
    expected = torch.conv1d(torch.tensor(x), torch.tensor(w), stride=2)
    assert got.dtype == np.int64 and (got.numpy() == expected.numpy()).all()


# ---- conv_transpose1d -----------------------------------------------------------------------------
@st.composite
def conv_transpose1d_cases(draw):
    groups = draw(st.integers(1, 2))
    c, f = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k, stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    length, padding = draw(st.integers(1, 5)), draw(st.integers(0, 2))
    output_padding = draw(st.integers(0, max(stride, dilation) - 1))
    assume((length - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1 >= 1)
    batch = draw(st.sampled_from([None, 1, 2]))
    shape = (c, length) if batch is None else (batch, c, length)
    return shape, (c, f // groups, k), dict(stride=stride, padding=padding, dilation=dilation,
                                            groups=groups, output_padding=output_padding), \
        draw(st.booleans())


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=conv_transpose1d_cases(), seed=st.integers(0, 2 ** 16))
def test_conv_transpose1d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, weight_shape, kwargs, bias = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape), rng.standard_normal(weight_shape)]
    if bias:
        arrays.append(rng.standard_normal(weight_shape[1] * kwargs["groups"]))
    parity(torch, lambda *a: F.conv_transpose1d(*a, **kwargs),
           lambda *a: torch.nn.functional.conv_transpose1d(*a, **kwargs), arrays, dtype, seed)


def test_conv_transpose1d_finite_differences(rng):
    x, w = rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 3, 3))
    check_grad(lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1), x, w)


# ---- conv3d ---------------------------------------------------------------------------------------
@st.composite
def conv3d_cases(draw):
    groups = draw(st.integers(1, 2))
    c, f = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    size = tuple(draw(st.integers(1, 4)) for _ in range(3))
    padding = draw(st.one_of(st.tuples(*[st.integers(0, 1)] * 3), st.integers(0, 1),
                             st.sampled_from(["same", "valid"])))
    stride = 1 if padding == "same" else draw(st.one_of(st.integers(1, 2),
                                                        st.tuples(*[st.integers(1, 2)] * 3)))
    pads = (0, 0, 0) if isinstance(padding, str) else (padding,) * 3 if isinstance(padding, int) \
        else padding
    assume(padding == "same" or all(n + 2 * p >= d * (k - 1) + 1 for n, p, d, k in
                                    zip(size, pads, dilation, kernel)))
    batch = draw(st.sampled_from([None, 1, 2]))
    shape = (c,) + size if batch is None else (batch, c) + size
    return shape, (f, c // groups) + kernel, dict(stride=stride, padding=padding,
                                                  dilation=dilation, groups=groups), \
        draw(st.booleans())


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=conv3d_cases(), seed=st.integers(0, 2 ** 16))
def test_conv3d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, weight_shape, kwargs, bias = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape), rng.standard_normal(weight_shape)]
    if bias:
        arrays.append(rng.standard_normal(weight_shape[0]))
    parity(torch, lambda *a: F.conv3d(*a, **kwargs),
           lambda *a: torch.nn.functional.conv3d(*a, **kwargs), arrays, dtype, seed)


def test_conv3d_finite_differences(rng):
    x, w, b = (rng.standard_normal((2, 2, 3, 4, 3)), rng.standard_normal((2, 1, 2, 2, 2)),
               rng.standard_normal(2))
    check_grad(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2),
                                        groups=2), x, w, b)


def test_conv3d_reference_kernels_are_adjoint(rng):
    """⟨im2col(x), y⟩ = ⟨x, col2im(y)⟩: the two kernels every gradient is built from."""
    from tinygrad_pool.ops.conv3d import col2im_nd, im2col_nd
    x = rng.standard_normal((2, 3, 4, 5, 3))
    geometry = (2, 3, 2), (2, 1, 1), ((1, 0), (1, 2), (0, 1)), (1, 2, 1)
    out = tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, k, s, (lo, hi), d in
                zip(x.shape[2:], *geometry))
    cols = im2col_nd(x, geometry[0], geometry[1], geometry[2], geometry[3], out)
    y = rng.standard_normal(cols.shape)
    back = col2im_nd(y, x.shape[2:], geometry[1], geometry[2], geometry[3])
    assert math.isclose((cols * y).sum(), (x * back).sum(), rel_tol=1e-12)


def test_module_functions_exist_where_torch_has_them(torch):
    for name in ("conv1d", "conv3d", "conv_transpose1d", "max_pool1d", "avg_pool1d", "max_pool3d"):
        assert hasattr(torch, name) and callable(getattr(tinygrad_pool, name)), name


# ---- layers ---------------------------------------------------------------------------------------
LAYERS = [
    ("Conv1d", (3, 4, 3), {}),
    ("Conv1d", (2, 4, (3,)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False)),
    ("Conv1d", (3, 4, 3), dict(padding="same")),
    ("Conv3d", (3, 4, 3), {}),
    ("Conv3d", (2, 4, (1, 2, 3)), dict(padding=1, groups=2, stride=(1, 2, 1))),
    ("Conv3d", (2, 2, 2), dict(padding="valid", dilation=2)),
    ("ConvTranspose1d", (3, 4, 3), dict(output_padding=1, stride=2)),
    ("ConvTranspose1d", (4, 2, 3), dict(padding=1, dilation=2, groups=2, bias=False)),
]


@pytest.mark.parametrize("name, args, kwargs", LAYERS)
def test_layer_repr_parameters_and_forward_match_torch(torch, name, args, kwargs):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    # PyTorch's initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
    fan_in = ours.weight.shape[1] * math.prod(ours.weight.shape[2:])
    for p in ours.parameters():
        assert np.abs(p.numpy()).max() <= 1 / math.sqrt(fan_in) and p.numpy().std() > 0
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            q.copy_(torch.tensor(p.numpy()))
    spatial = 1 if name.endswith("1d") else 3
    x = np.random.default_rng(0).standard_normal((2, args[0]) + (5,) * spatial).astype(np.float32)
    for batch in (x, x[0]):
        np.testing.assert_allclose(ours(tensor(batch)).detach().numpy(),
                                   theirs(torch.tensor(batch)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)


def test_conv_transpose1d_output_size(torch):
    ours, theirs = nn.ConvTranspose1d(3, 4, 3, stride=2), torch.nn.ConvTranspose1d(3, 4, 3, stride=2)
    x = np.zeros((1, 3, 5), np.float32)
    for size in ([11], [12], [1, 4, 12]):
        assert ours(tensor(x), output_size=size).shape == tuple(theirs(torch.tensor(x),
                                                                       output_size=size).shape)
    same_error(lambda: theirs(torch.tensor(x), output_size=[15]),
               lambda: ours(tensor(x), output_size=[15]))


def test_layer_errors_are_torchs(torch):
    for name, args, kwargs in [("Conv1d", (3, 4, 3), dict(groups=2)),
                               ("Conv3d", (3, 4, 3), dict(padding="same", stride=2)),
                               ("Conv1d", (3, 4, 3), dict(padding="full")),
                               ("ConvTranspose1d", (3, 4, 3), dict(groups=2)),
                               ("Conv3d", (3, 4, 3), dict(padding_mode="foo"))]:
        same_error(lambda: getattr(torch.nn, name)(*args, **kwargs),
                   lambda: getattr(nn, name)(*args, **kwargs))
    with pytest.raises(NotImplementedError, match="padding_mode"):  # torch has it; we lack it
        nn.Conv1d(3, 4, 3, padding_mode="reflect")


# ---- errors ---------------------------------------------------------------------------------------
def _bad_conv_calls(torch):
    x1, w1 = np.zeros((2, 3, 5), np.float32), np.zeros((4, 3, 3), np.float32)
    x3, w3 = np.zeros((1, 3, 4, 4, 4), np.float32), np.zeros((2, 3, 2, 2, 2), np.float32)
    return [
        ("conv1d", (np.zeros((3, 5, 5, 5), np.float32), w1), {}),        # wrong rank
        ("conv1d", (np.zeros(5, np.float32), w1), {}),
        ("conv1d", (x1, np.zeros((4, 3, 7), np.float32)), {}),           # kernel > input
        ("conv1d", (x1, np.zeros((4, 1, 3), np.float32)), dict(groups=2)),  # channels vs groups
        ("conv1d", (x1, w1), dict(padding="same", stride=2)),
        ("conv1d", (x1, w1), dict(padding=(1, 1))),
        ("conv1d", (x1, w1), dict(stride=0)),
        ("conv1d", (x1, w1), dict(padding=-1)),
        ("conv1d", (x1, np.zeros((4, 3, 3, 3), np.float32)), {}),
        ("conv3d", (np.zeros((3, 4, 4), np.float32), w3), {}),
        ("conv3d", (x3, np.zeros((2, 3, 5, 2, 2), np.float32)), {}),
        ("conv3d", (x3, np.zeros((3, 1, 2, 2, 2), np.float32)), dict(groups=2)),
        ("conv3d", (x3, w3), dict(padding="same", stride=2)),
        ("conv3d", (x3, w3), dict(stride=(1, 1))),
        ("conv_transpose1d", (np.zeros((3, 5, 5, 5), np.float32), np.zeros((3, 2, 3), np.float32)), {}),
        ("conv_transpose1d", (x1, np.zeros((3, 2, 3), np.float32)), dict(output_padding=1)),
        ("conv_transpose1d", (x1, np.zeros((3, 2, 3), np.float32)), dict(groups=2)),
    ]


def test_bad_geometry_raises_torchs_error_types(torch):
    for name, arrays, kwargs in _bad_conv_calls(torch):
        same_error(lambda: getattr(torch.nn.functional, name)(*map(torch.tensor, arrays), **kwargs),
                   lambda: getattr(F, name)(*map(tensor, arrays), **kwargs))


def test_an_empty_batch_convolves_to_an_empty_batch(torch):
    for name, shape, weight in (("conv1d", (0, 2, 5), (3, 2, 2)),
                                ("conv_transpose1d", (0, 2, 5), (2, 3, 2)),
                                ("conv3d", (0, 2, 3, 3, 3), (3, 2, 2, 2, 2))):
        x, w = tensor(np.zeros(shape), requires_grad=True), tensor(np.ones(weight), requires_grad=True)
        out = getattr(F, name)(x, w)
        assert out.shape == tuple(getattr(torch.nn.functional, name)(
            torch.zeros(shape, dtype=torch.float64), torch.ones(weight, dtype=torch.float64)).shape)
        out.sum().backward()
        assert x.grad.shape == shape and not w.grad.numpy().any()


# ---- one node each, named for what it is --------------------------------------------------------
def _op_nodes(out):
    """The op nodes (not leaves) of the graph that made ``out``, in the engine's order."""
    from tinygrad_pool.engine import _node_of, _topological_order
    return [n for n in _topological_order([_node_of(out)])
            if not isinstance(n, tinygrad_pool.Tensor)]


@pytest.mark.parametrize("name, weight, kwargs, node, shown", [
    ("conv1d", (4, 3, 3), dict(stride=2, padding=1, dilation=2), "Conv1d",
     ["stride=2", "padding=1", "dilation=2", "groups=1"]),
    ("conv1d", (4, 3, 2), dict(padding="same"), "Conv1d",
     ["stride=1", "padding=(0, 1)", "dilation=1", "groups=1"]),  # (left, right): the odd one right
    ("conv_transpose1d", (3, 2, 3), dict(stride=2, output_padding=1), "ConvTranspose1d",
     ["stride=2", "padding=0", "output_padding=1", "dilation=1", "groups=1"]),
])
def test_a_1d_convolution_is_one_node_with_its_1d_arguments(rng, name, weight, kwargs, node, shown):
    from tinygrad_pool.viz.summary import arguments
    x = tensor(rng.standard_normal((2, 3, 8)), requires_grad=True)
    w = tensor(rng.standard_normal(weight), requires_grad=True)
    b = tensor(np.zeros(2 if node == "ConvTranspose1d" else 4))
    out = getattr(F, name)(x, w, b, **kwargs)
    [op] = _op_nodes(out)
    assert op.name == node and out.grad_fn is op
    # its edges go straight to x and w (no reshape between), none to the constant bias
    assert [type(e).__name__ for e, _ in op.next_functions] == ["AccumulateGrad"] * 2 + ["NoneType"]
    assert [e.variable for e, _ in op.next_functions[:2]] == [x, w]
    assert arguments(op.attrs, op) == shown
    # what it saved is the user's own 3-D input and weight (so in-place writes to them are seen)
    assert op.saved_for_backward()["x"] is x._data and op.saved_for_backward()["weight"] is w._data


def test_the_graph_picture_shows_conv1d_and_no_2d_op(rng):
    from tinygrad_pool import draw_graph
    x = tensor(rng.standard_normal((1, 2, 6)), requires_grad=True)
    w = tensor(rng.standard_normal((3, 2, 3)), requires_grad=True)
    up = tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    source = draw_graph(F.conv_transpose1d(F.conv1d(x, w, padding=1), up, stride=2).sum(),
                        show_saved=True).source
    assert "<B>Conv1d</B>" in source and "<B>ConvTranspose1d</B>" in source
    for hidden in ("Conv2d", "ConvTranspose2d", "Unsqueeze", "Squeeze", "Reshape"):
        assert hidden not in source, hidden
    assert "x: 1×2×6 float64" in source and "weight: 3×2×3 float64" in source


@pytest.mark.parametrize("name, weight", [("conv1d", (4, 3, 3)), ("conv_transpose1d", (3, 2, 3))])
@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 8)])
@pytest.mark.parametrize("written", ["input", "weight"])
def test_writing_a_saved_input_in_place_is_refused_at_backward(torch, name, weight, shape, written):
    """As torch: the node saved the input and the weight themselves, and checks their versions."""
    rng = np.random.default_rng(0)
    arrays = rng.standard_normal(shape), rng.standard_normal(weight)
    for lib, functional in ((torch, torch.nn.functional), (tinygrad_pool, F)):
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        x_used, w_used = x * 1, w * 1
        out = getattr(functional, name)(x_used, w_used)
        (x_used if written == "input" else w_used).add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_errors_name_the_1d_function_not_the_2d_one(torch):
    extra = [("conv1d", (np.zeros((2, 3, 5), np.float32), np.zeros((4, 3, 3))), {}),  # dtypes
             ("conv1d", (np.zeros((2, 3, 5)), np.zeros((4, 3, 3)), np.zeros(3)), {}),  # bias
             ("conv1d", (np.zeros((2, 3, 5)), np.zeros((0, 3, 3))), {}),  # no filter
             ("conv1d", (np.zeros((2, 3, 0)), np.zeros((4, 3, 3))), dict(padding=2)),
             ("conv1d", (np.zeros((2, 3, 5), bool), np.zeros((4, 3, 3), bool)), {}),
             ("conv_transpose1d", (np.zeros((2, 3, 5)), np.zeros((3, 2, 3)), np.zeros(3)), {}),
             ("conv_transpose1d", (np.zeros((2, 3, 5), np.int32),
                                   np.zeros((3, 2, 3), np.int32)), {}),
             ("conv_transpose1d", (np.zeros((2, 3, 1)), np.zeros((3, 2, 3))), dict(padding=2)),
             ("conv_transpose1d", (np.zeros((2, 3, 0)), np.zeros((3, 2, 3))), {}),
             ("conv_transpose1d", (np.zeros((2, 3, 5)), np.zeros((3, 2, 0))), {})]
    for name, arrays, kwargs in _bad_conv_calls(torch) + extra:
        if name == "conv3d":
            continue
        same_error(lambda: getattr(torch.nn.functional, name)(*map(torch.tensor, arrays), **kwargs),
                   lambda: getattr(F, name)(*map(tensor, arrays), **kwargs))
        with pytest.raises(Exception) as raised:
            getattr(F, name)(*map(tensor, arrays), **kwargs)
        assert name in str(raised.value) and "2d" not in str(raised.value), str(raised.value)


def test_a_zero_length_input_convolves_only_in_an_empty_batch(torch):
    for name, weight, padding in (("conv1d", (4, 3, 3), 2), ("conv_transpose1d", (3, 4, 3), 0)):
        got = getattr(F, name)(tensor(np.zeros((0, 3, 0))), tensor(np.ones(weight)),
                               padding=padding)
        assert got.shape == tuple(getattr(torch.nn.functional, name)(
            torch.zeros(0, 3, 0), torch.ones(weight), padding=padding).shape) == (0, 4, 2)


def test_fan_in_declines_1d_ops_with_a_clear_error(rng):
    """fan_in draws H×W planes: a 1-D node declares no cells to draw, so fan_in says what it
    draws instead of failing inside."""
    pytest.importorskip("graphviz")
    from tinygrad_pool.viz import fan_in
    x = tensor(rng.standard_normal((1, 2, 6)), requires_grad=True)
    for out in (F.conv1d(x, tensor(np.ones((3, 2, 3)))),
                F.conv_transpose1d(x, tensor(np.ones((2, 1, 3))))):
        with pytest.raises(ValueError, match=f"conv2d.*made by {out.grad_fn.name}"):
            fan_in(out, output_cell=(0, 0, 1))
