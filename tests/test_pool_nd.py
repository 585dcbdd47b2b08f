"""max_pool1d, avg_pool1d, max_pool3d and avg_pool3d (and their nn layers) against PyTorch:
forward, gradient and second derivatives in float32 and float64 over drawn geometries, float64
finite differences, ties, NaN, return_indices, reprs and torch's error types."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import tinygrad_pool
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import tensor

from helpers import check_grad
from test_conv_nd import parity, same_error

DTYPES = [np.float32, np.float64]
SETTINGS = dict(max_examples=20, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _fits(size, k, s, p, d, ceil_mode) -> bool:
    """At least one window, each reading a cell of the input (a dilated window over padding
    alone, where torch returns -inf, is refused here as by max_pool2d: docs/porting.md)."""
    span = size + 2 * p - d * (k - 1) - 1
    if span < 0:
        return False
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    taps = (np.arange(out) * s - p)[:, None] + np.arange(k) * d
    return bool(((taps >= 0) & (taps < size)).any(axis=1).all())


@st.composite
def pool_cases(draw, axes, dilation=True, ceil=True):
    def per_axis(low, high):
        return draw(st.one_of(st.integers(low, high), st.tuples(*[st.integers(low, high)] * axes)))
    as_tuple = (lambda v: v if isinstance(v, tuple) else (v,) * axes)
    kernel = per_axis(1, 3)
    stride = draw(st.one_of(st.none(), st.integers(1, 3)))
    padding = draw(st.integers(0, 1))
    dil = draw(st.integers(1, 2)) if dilation else 1
    ceil_mode = draw(st.booleans()) if ceil else False
    size = tuple(draw(st.integers(1, 6 if axes == 1 else 4)) for _ in range(axes))
    ks = as_tuple(kernel)
    strides = ks if stride is None else (stride,) * axes
    assume(all(padding <= k // 2 for k in ks))
    assume(all(_fits(n, k, s, padding, dil, ceil_mode) for n, k, s in zip(size, ks, strides)))
    batch = draw(st.sampled_from([None, 1, 2]))
    channels = draw(st.integers(1, 2))
    shape = (channels,) + size if batch is None else (batch, channels) + size
    kwargs = dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode)
    if dilation:
        kwargs["dilation"] = dil
    return shape, kwargs


def _distinct(rng, shape):
    """Values all different (no ties), so both libraries route to the same cell."""
    return rng.permutation(np.prod(shape, dtype=int)).reshape(shape) / 7.0 - 1


@pytest.mark.parametrize("dtype", DTYPES)
@settings(**SETTINGS)
@given(case=pool_cases(1), seed=st.integers(0, 2 ** 16))
def test_max_pool1d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, kwargs = case
    x = _distinct(np.random.default_rng(seed), shape)
    parity(torch, lambda x: F.max_pool1d(x, **kwargs),
           lambda x: torch.nn.functional.max_pool1d(x, **kwargs), [x], dtype, seed)
    _, indices = F.max_pool1d(tensor(x), return_indices=True, **kwargs)
    _, expected = torch.nn.functional.max_pool1d(torch.tensor(x), return_indices=True, **kwargs)
    assert indices.dtype == np.int64 and (indices.numpy() == expected.numpy()).all()


@pytest.mark.parametrize("dtype", DTYPES)
@settings(**SETTINGS)
@given(case=pool_cases(1, dilation=False), include=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_avg_pool1d_matches_torch_to_second_order(torch, dtype, case, include, seed):
    shape, kwargs = case
    x = np.random.default_rng(seed).standard_normal(shape)
    parity(torch, lambda x: F.avg_pool1d(x, count_include_pad=include, **kwargs),
           lambda x: torch.nn.functional.avg_pool1d(x, count_include_pad=include, **kwargs),
           [x], dtype, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(**SETTINGS)
@given(case=pool_cases(3), seed=st.integers(0, 2 ** 16))
def test_max_pool3d_matches_torch_to_second_order(torch, dtype, case, seed):
    shape, kwargs = case
    x = _distinct(np.random.default_rng(seed), shape)
    parity(torch, lambda x: F.max_pool3d(x, **kwargs),
           lambda x: torch.nn.functional.max_pool3d(x, **kwargs), [x], dtype, seed)
    _, indices = F.max_pool3d(tensor(x), return_indices=True, **kwargs)
    _, expected = torch.nn.functional.max_pool3d(torch.tensor(x), return_indices=True, **kwargs)
    assert indices.dtype == np.int64 and (indices.numpy() == expected.numpy()).all()


@pytest.mark.parametrize("dtype", DTYPES)
@settings(**SETTINGS)
@given(case=pool_cases(3, dilation=False), include=st.booleans(),
       divisor=st.sampled_from([None, 1, 5]), seed=st.integers(0, 2 ** 16))
def test_avg_pool3d_matches_torch_to_second_order(torch, dtype, case, include, divisor, seed):
    shape, kwargs = case
    kernel = kwargs["kernel_size"]
    assume(all(n >= k for n, k in zip(shape[-3:], kernel if isinstance(kernel, tuple) else
                                      (kernel,) * 3)))  # (torch's avg_pool3d asks it)
    x = np.random.default_rng(seed).standard_normal(shape)
    parity(torch, lambda x: F.avg_pool3d(x, count_include_pad=include, divisor_override=divisor,
                                         **kwargs),
           lambda x: torch.nn.functional.avg_pool3d(x, count_include_pad=include,
                                                    divisor_override=divisor, **kwargs),
           [x], dtype, seed)


def test_finite_differences(rng):
    x1, x3 = rng.standard_normal((2, 2, 7)), rng.standard_normal((1, 2, 4, 3, 5))
    check_grad(lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), x1)
    check_grad(lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), x1)
    check_grad(lambda x: F.max_pool3d(x, (2, 2, 3), (1, 2, 2), 1, dilation=(1, 1, 2)), x3)
    check_grad(lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True), x3)
    check_grad(lambda x: F.avg_pool3d(x, 2, divisor_override=3), x3)


# ---- ties and NaN ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axes", [1, 3])
def test_ties_route_to_the_first_maximum_and_nan_wins(torch, axes):
    ours_fn, torch_fn = (F.max_pool1d, torch.nn.functional.max_pool1d) if axes == 1 else \
        (F.max_pool3d, torch.nn.functional.max_pool3d)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (2, 2) + (5,) * axes).astype(np.float64)  # many ties
    x.reshape(-1)[[3, 11, 17]] = np.nan
    kwargs = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    ours, theirs = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (out, indices), (expected, expected_indices) = (
        ours_fn(ours, return_indices=True, **kwargs), torch_fn(theirs, return_indices=True, **kwargs))
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())  # NaN too
    np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    weights = rng.standard_normal(out.shape)
    out.backward(tensor(weights))
    expected.backward(torch.tensor(weights))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_integer_inputs_follow_torch(torch):
    x = np.arange(-20, 20).reshape(1, 5, 2, 2, 2)
    got = F.avg_pool3d(tensor(x), 2, 1, ceil_mode=True)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), torch.nn.functional.avg_pool3d(
        torch.tensor(x), 2, 1, ceil_mode=True).numpy())
    np.testing.assert_array_equal(F.max_pool3d(tensor(x), 2).numpy(),
                                  torch.nn.functional.max_pool3d(torch.tensor(x), 2).numpy())
    np.testing.assert_array_equal(F.avg_pool1d(tensor(x[0, 0, 0]), 2).numpy(),
                                  torch.nn.functional.avg_pool1d(torch.tensor(x[0, 0, 0]), 2).numpy())
    same_error(lambda: torch.nn.functional.max_pool1d(torch.tensor(x[0, 0, 0]), 2),
               lambda: F.max_pool1d(tensor(x[0, 0, 0]), 2))


def test_module_functions(torch):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4, 5))
    for name, args in [("max_pool1d", (x[0, 0], 2)), ("avg_pool1d", (x[0, 0], 3, 1, 1, True, False)),
                       ("max_pool3d", (x, 2, 1, 1, 1, True))]:
        np.testing.assert_allclose(getattr(tinygrad_pool, name)(tensor(args[0]), *args[1:]).numpy(),
                                   getattr(torch, name)(torch.tensor(args[0]), *args[1:]).numpy())


# ---- layers ---------------------------------------------------------------------------------------
LAYERS = [
    ("MaxPool1d", (2,), {}), ("MaxPool1d", ((2,),), dict(stride=1, return_indices=True)),
    ("MaxPool1d", (3, 2, 1, 2, False, True), {}),
    ("AvgPool1d", (2,), {}), ("AvgPool1d", (3, 1, 1, True, False), {}),
    ("MaxPool3d", (2,), {}), ("MaxPool3d", ((2, 1, 2),), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    ("AvgPool3d", (2,), {}), ("AvgPool3d", (3, 2, 1, True, False, 4), {}),
]


@pytest.mark.parametrize("name, args, kwargs", LAYERS)
def test_layer_repr_and_forward_match_torch(torch, name, args, kwargs):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    spatial = 1 if name.endswith("1d") else 3
    x = np.random.default_rng(0).standard_normal((2, 2) + (5,) * spatial)
    for batch in (x, x[0]):
        got, expected = ours(tensor(batch)), theirs(torch.tensor(batch))
        if isinstance(expected, tuple):
            np.testing.assert_array_equal(got[1].numpy(), expected[1].numpy())
            got, expected = got[0], expected[0]
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


# ---- errors ---------------------------------------------------------------------------------------
BAD_POOLS = [
    ("max_pool1d", (5,), (2,), {}), ("max_pool1d", (1, 2, 5, 5), (2,), {}),  # wrong rank
    ("max_pool1d", (2, 3, 5), (2,), dict(padding=2)),                       # padding > k/2
    ("max_pool1d", (2, 3, 5), (7,), {}),                                     # kernel > input
    ("max_pool1d", (2, 3, 5), ((2, 2),), {}),
    ("avg_pool1d", (5,), (2,), {}), ("avg_pool1d", (1, 2, 5, 5), (2,), {}),
    ("avg_pool1d", (2, 3, 5), (2,), dict(padding=2)), ("avg_pool1d", (2, 3, 5), (7,), {}),
    ("avg_pool1d", (2, 3, 5), ((2, 2),), {}),
    ("max_pool3d", (3, 4, 4), (2,), {}), ("max_pool3d", (1, 4, 4, 4), (2,), dict(padding=2)),
    ("max_pool3d", (1, 4, 4, 4), (5,), {}), ("max_pool3d", (1, 4, 4, 4), ((2, 2),), {}),
    ("avg_pool3d", (3, 4, 4), (2,), {}), ("avg_pool3d", (1, 4, 4, 4), (2,), dict(padding=2)),
    ("avg_pool3d", (1, 4, 4, 4), (5,), {}), ("avg_pool3d", (1, 4, 4, 4), (2,), dict(divisor_override=0)),
    ("max_pool3d", (1, 4, 4, 4), (2,), dict(ceil_mode="yes")),
    ("avg_pool3d", (1, 3, 3, 1), (2,), dict(padding=1)),  # torch's: each axis ≥ the kernel
]


@pytest.mark.parametrize("name, shape, args, kwargs", BAD_POOLS)
def test_bad_geometry_raises_torchs_error_type(torch, name, shape, args, kwargs):
    x = np.zeros(shape, np.float32)
    same_error(lambda: getattr(torch.nn.functional, name)(torch.tensor(x), *args, **kwargs),
               lambda: getattr(F, name)(tensor(x), *args, **kwargs))


@pytest.mark.parametrize("include", [True, False])
def test_ceil_mode_windows_hanging_past_the_padding(torch, include):
    """The last window of ceil_mode may hang past the padding: those cells never count."""
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 5, 4))
    for kwargs in (dict(kernel_size=2, stride=3), dict(kernel_size=(3, 2, 2), stride=(2, 3, 3),
                                                       padding=(1, 1, 0))):
        parity(torch, lambda x: F.avg_pool3d(x, ceil_mode=True, count_include_pad=include, **kwargs),
               lambda x: torch.nn.functional.avg_pool3d(x, ceil_mode=True,
                                                        count_include_pad=include, **kwargs),
               [x], np.float64)
    parity(torch, lambda x: F.avg_pool1d(x, 2, 3, ceil_mode=True, count_include_pad=include),
           lambda x: torch.nn.functional.avg_pool1d(x, 2, 3, ceil_mode=True,
                                                    count_include_pad=include), [x[0, :, 0]],
           np.float64)


def test_an_empty_batch_pools_to_an_empty_batch(torch):
    for name, shape in (("max_pool1d", (0, 2, 5)), ("avg_pool1d", (0, 2, 5)),
                        ("max_pool3d", (0, 2, 3, 3, 3)), ("avg_pool3d", (0, 2, 3, 3, 3))):
        x = tensor(np.zeros(shape), requires_grad=True)
        out = getattr(F, name)(x, 2)
        assert out.shape == tuple(getattr(torch.nn.functional, name)(torch.zeros(shape), 2).shape)
        out.sum().backward()
        assert x.grad.shape == shape


def test_a_max_pool3d_tie_is_reported_as_a_kink():
    from tinygrad_pool.gradient_check import gradcheck_report
    data = np.zeros((1, 1, 2, 2, 2))
    data[0, 0, 0, 1, 0] = data[0, 0, 1, 0, 1] = 2.0  # both in the one 2×2×2 window
    report = gradcheck_report(lambda t: F.max_pool3d(t, 2), [tensor(data, requires_grad=True)])
    reasons = [k.reason for k in report.kinks if k.index == (0, 0, 1, 0, 1)]
    assert report.passed and reasons
    assert "tie between voxel (0, 1, 0) and voxel (1, 0, 1) of MaxPool3d window (0, 0, 0, 0, 0)" \
        in reasons[0] and "first, voxel (0, 1, 0)" in reasons[0]


# ---- one node each, named for what it is --------------------------------------------------------
@pytest.mark.parametrize("name, kwargs, node, shown", [
    ("max_pool1d", dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True),
     "MaxPool1d", ["kernel_size=3", "stride=2", "padding=1", "dilation=2", "ceil_mode=True"]),
    ("avg_pool1d", dict(kernel_size=2, count_include_pad=False), "AvgPool1d",
     ["kernel_size=2", "stride=2", "padding=0", "ceil_mode=False", "count_include_pad=False"]),
])
def test_a_1d_pool_is_one_node_with_its_1d_arguments(rng, name, kwargs, node, shown):
    from tinygrad_pool.viz.summary import arguments
    from test_conv_nd import _op_nodes
    x = tensor(rng.standard_normal((2, 3, 9)), requires_grad=True)
    out = getattr(F, name)(x, **kwargs)
    [op] = _op_nodes(out)
    assert op.name == node and [e.variable for e, _ in op.next_functions] == [x]
    assert arguments(op.attrs, op) == shown
    assert op.saved_for_backward()["x"] is x._data  # the user's own 3-D input
    if node == "MaxPool1d":  # ... and the indices along L, torch's
        _, indices = F.max_pool1d(x, return_indices=True, **kwargs)
        np.testing.assert_array_equal(op.saved_for_backward()["argmax"], indices.numpy())


def test_the_picture_of_a_1d_network_names_its_1d_ops_and_marks_the_pools_choices():
    """Conv1d → ReLU → MaxPool1d → Flatten → Linear drawn: one node per op, each named for what
    it is, and the cells max pooling chose outlined on its input, as for max_pool2d."""
    pytest.importorskip("graphviz")
    from tinygrad_pool import draw_graph
    tinygrad_pool.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2), nn.Flatten(),
                          nn.Linear(12, 2))
    x = tinygrad_pool.Tensor(np.random.default_rng(0).standard_normal((2, 2, 8)), name="x")
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    dot = draw_graph(loss, show_values=True, show_saved=True)
    titles = [t for line in dot.body for t in re.findall(r"<B>([^<]*)</B>", line)]
    for op in ("Conv1d", "ReLU", "MaxPool1d", "Linear"):
        assert titles.count(op) == 1, (op, titles)
    assert not {"Conv2d", "MaxPool2d", "Unsqueeze", "Squeeze"} & set(titles)
    assert "blue = window max (argmax, as saved by MaxPool1d)" in dot.source
    assert "argmax: 2×3×4 int" in dot.source  # what it saved: the indices along L


def test_the_cells_max_pool1d_chose_are_marked_on_its_input():
    pytest.importorskip("graphviz")
    from test_graph import highlighted, node_of, nodes
    from tinygrad_pool import draw_graph
    from tinygrad_pool.viz.graph import STYLE
    # two channels, drawn as a 2×8 grid; windows of 2, a tie (3, 3) in the first channel
    values = np.array([[1.0, 9.0, 8.0, 2.0, 3.0, 3.0, 0.0, 7.0], [5, 4, 0, 6, 2, 1, 8, 9]])
    a = tinygrad_pool.Tensor(values.reshape(1, 2, 8), requires_grad=True, dtype=np.float64,
                             name="a")
    loss = (F.max_pool1d(a, 2) * tensor(np.arange(1.0, 9.0).reshape(1, 2, 4))).sum()
    loss.backward(retain_graph=True)
    label = nodes(dot := draw_graph(loss, show_values=True))[node_of(dot, "a")]
    chosen = {1, 2, 4, 7, 8, 11, 12, 15}  # each window's first maximum
    assert highlighted(label, "value", STYLE["argmax"]) == chosen
    assert highlighted(label, "value", STYLE["tie"]) == {5}
    assert highlighted(label, "grad", STYLE["argmax"]) == chosen


def test_save_graph_renders_a_1d_network(tmp_path):
    pytest.importorskip("graphviz")
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` not installed")
    from tinygrad_pool import save_graph
    model = nn.Sequential(nn.Conv1d(1, 2, 3), nn.ReLU(), nn.MaxPool1d(2), nn.Flatten(),
                          nn.Linear(4, 1))
    loss = model(tensor(np.ones((1, 1, 6), np.float32))).sum()
    loss.backward(retain_graph=True)
    path = save_graph(loss, tmp_path / "net.svg", show_values=True)
    assert "MaxPool1d" in path.read_text() and "Conv1d" in path.read_text()


@pytest.mark.parametrize("name", ["max_pool1d", "avg_pool1d"])
@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 8)])
def test_writing_the_pooled_input_in_place_is_refused_at_backward(torch, name, shape):
    """As torch: the node saved the input itself, and checks its version."""
    x_data = np.random.default_rng(0).standard_normal(shape)
    for lib, functional in ((torch, torch.nn.functional), (tinygrad_pool, F)):
        x = lib.tensor(x_data, requires_grad=True)
        used = x * 1
        out = getattr(functional, name)(used, 2)
        used.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_a_max_pool1d_tie_is_reported_as_a_kink():
    from tinygrad_pool.gradient_check import gradcheck_report
    data = np.array([[[0.5, 2.0, 2.0, -1.0, 3.0, 1.0]]])  # a tie in the window (1, 2, 3)
    report = gradcheck_report(lambda t: F.max_pool1d(t, 3), [tensor(data, requires_grad=True)])
    reasons = [k.reason for k in report.kinks if k.index == (0, 0, 2)]
    assert report.passed and reasons
    assert ("tie between window cell 1 (position 1) and window cell 2 (position 2) of MaxPool1d "
            "window (0, 0, 0)") in reasons[0] and "first, position 1" in reasons[0]


def test_pool_errors_name_the_1d_function_not_the_2d_one(torch):
    extra = [("max_pool1d", (2, 0, 5), (2,), {}), ("avg_pool1d", (2, 3, 0), (2,), {}),
             ("max_pool1d", (2, 3, 5), (0,), {}), ("avg_pool1d", (2, 3, 5), (2,), dict(stride=0)),
             ("max_pool1d", (2, 3, 5), (2,), dict(ceil_mode="yes"))]
    for name, shape, args, kwargs in BAD_POOLS + extra:
        if not name.endswith("1d"):
            continue
        x = np.zeros(shape, np.float32)
        same_error(lambda: getattr(torch.nn.functional, name)(torch.tensor(x), *args, **kwargs),
                   lambda: getattr(F, name)(tensor(x), *args, **kwargs))
        with pytest.raises(Exception) as raised:
            getattr(F, name)(tensor(x), *args, **kwargs)
        assert name in str(raised.value) and "2d" not in str(raised.value), str(raised.value)
    with pytest.raises(NotImplementedError, match="avg_pool1d"):
        F.avg_pool1d(tensor(np.zeros((2, 3, 5), bool)), 2)


def test_fan_in_declines_1d_pools_with_a_clear_error():
    pytest.importorskip("graphviz")
    from tinygrad_pool.viz import fan_in
    x = tensor(np.arange(12.0).reshape(1, 2, 6), requires_grad=True)
    for out in (F.max_pool1d(x, 2), F.avg_pool1d(x, 2)):
        with pytest.raises(ValueError, match=f"max_pool2d.*made by {out.grad_fn.name}"):
            fan_in(out, output_cell=(0, 0, 1))
