"""F.conv_transpose2d and nn.ConvTranspose2d: the adjoint of conv2d, ⟨conv_transpose(x, w), z⟩ =
⟨x, conv2d(z, w)⟩, against PyTorch over stride, padding, output_padding, groups and dilation
(hypothesis; float64 at 1e-10, float32 at 1e-4), first and second derivatives, finite
differences, unbatched input, the layer (state, initialisation, output_size=), every argument
spoilt in turn against torch's errors (tests/badinput.py), and the fan-in picture."""
import itertools
import math
import re
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn, tensor

from badinput import Case, parameters, problems
from helpers import assert_same_as_a_batch_of_one, check_grad, leaf, torch_parity
from test_adaptive_pool import double_backward_parity

TIGHT = dict(rtol=1e-10, atol=1e-10)  # float64 against PyTorch (sums in another order)
FLOAT32 = dict(rtol=1e-4, atol=1e-4)
HYPOTHESIS = settings(max_examples=40, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def geometries(draw):
    """Shapes and arguments of one conv_transpose2d call, output_padding within its range
    (below stride or dilation, per axis); some make no output at all (torch refuses those)."""
    groups = draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    return dict(
        x_shape=(draw(st.integers(1, 2)), groups * draw(st.integers(1, 2)),
                 draw(st.integers(1, 5)), draw(st.integers(1, 5))),
        w_per_group=draw(st.integers(1, 2)), kernel=kernel, bias=draw(st.booleans()),
        kwargs=dict(stride=stride, padding=(draw(st.integers(0, 2)), draw(st.integers(0, 2))),
                    output_padding=output_padding, groups=groups, dilation=dilation))


def arrays_of(case, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    c_in, c_out = case["x_shape"][1], case["w_per_group"] * case["kwargs"]["groups"]
    arrays = [rng.standard_normal(case["x_shape"]),
              rng.standard_normal((c_in, case["w_per_group"]) + case["kernel"])]
    if case["bias"]:
        arrays.append(rng.standard_normal(c_out))
    return [a.astype(dtype) for a in arrays]


def output_is_empty(case) -> bool:
    """torch's rule: (size - 1)·s - 2p + d·(k - 1) + output_padding + 1 < 1 along an axis."""
    kw = case["kwargs"]
    return any((n - 1) * s - 2 * p + d * (k - 1) + op + 1 < 1 for n, k, s, p, d, op in zip(
        case["x_shape"][2:], case["kernel"], kw["stride"], kw["padding"], kw["dilation"],
        kw["output_padding"]))


# ---- PyTorch parity: forward, backward, double backward ------------------------------------------
@HYPOTHESIS
@given(case=geometries(), seed=st.integers(0, 2 ** 16))
def test_random_geometry_matches_torch_forward_and_backward(torch, case, seed):
    kwargs, arrays = case["kwargs"], arrays_of(case, seed)
    if output_is_empty(case):
        with pytest.raises(RuntimeError, match=r"conv_transpose2d: the output size \(-?\d+, -?\d+\) "
                                               r"is too small"):
            F.conv_transpose2d(*map(tensor, arrays), **kwargs)
        with pytest.raises(RuntimeError, match="Output size is too small"):
            torch.nn.functional.conv_transpose2d(*map(torch.tensor, arrays), **kwargs)
        return
    torch_parity(torch, lambda *t: F.conv_transpose2d(*t, **kwargs), *arrays, seed=seed,
                 torch_fn=lambda *t: torch.nn.functional.conv_transpose2d(*t, **kwargs), **TIGHT)


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=geometries(), seed=st.integers(0, 2 ** 16))
def test_random_geometry_matches_torch_in_float32(torch, case, seed):
    if output_is_empty(case):
        return
    kwargs, arrays = case["kwargs"], arrays_of(case, seed, np.float32)
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.conv_transpose2d(*ours, **kwargs)
    tout = torch.nn.functional.conv_transpose2d(*theirs, **kwargs)
    weights = np.random.default_rng(seed).standard_normal(out.shape).astype(np.float32)
    out.backward(weights)
    tout.backward(torch.tensor(weights))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **FLOAT32)
    for mine, their in zip(ours, theirs):
        assert mine.grad.dtype == np.float32
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), **FLOAT32)


# (input shape, weight shape, keyword arguments): output_padding below and above padding (above:
# the output's last rows lie past every window), dilation carrying output_padding at stride 1,
# groups, and two larger cases that take conv2d's other kernels (fast/conv.py: by_correlation,
# col2im_in_two_passes; the small ones take col2im_small)
CONFIGS = [
    ((2, 2, 4, 5), (2, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 2, 3, 3), (2, 2, 2, 3), dict(stride=(3, 2), padding=(0, 1), output_padding=(2, 1))),
    ((1, 2, 4, 4), (2, 1, 3, 3), dict(stride=1, padding=0, output_padding=1, dilation=2)),
    ((2, 4, 3, 4), (4, 1, 3, 2), dict(stride=2, padding=(1, 0), groups=2, dilation=(1, 2))),
    ((3, 8, 9, 9), (8, 6, 3, 3), dict(stride=1, padding=1)),
    ((2, 16, 16, 16), (16, 4, 3, 3), dict(stride=1, padding=1)),
]
IDS = [f"{x}-{w}-{kw}" for x, w, kw in CONFIGS]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_double_backward_matches_torch(torch, rng, x_shape, w_shape, kwargs):
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * kwargs.get("groups", 1))
    # x·x, w·w and b·b: a second derivative in each alone, not only the cross terms
    double_backward_parity(torch, lambda x, w, b: F.conv_transpose2d(x * x, w * w, b * b, **kwargs),
                           lambda x, w, b: torch.nn.functional.conv_transpose2d(
                               x * x, w * w, b * b, **kwargs), x, w, b, **TIGHT)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS[:4], ids=IDS[:4])
def test_finite_differences(rng, x_shape, w_shape, kwargs):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              rng.standard_normal(w_shape[1] * kwargs.get("groups", 1))]
    check_grad(lambda x, w, b: F.conv_transpose2d(x, w, b, **kwargs), *arrays)


def test_finite_differences_of_the_gradient(rng):
    # the backward's own derivative (conv2d and its weight gradient), through create_graph
    x, w = rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 2, 3, 3))
    z = tensor(rng.standard_normal((1, 2, 6, 6)))  # the output's shape

    def gradient_norm(x, w):
        with tinygrad_pool.enable_grad():  # (gradcheck evaluates its perturbations without)
            out = F.conv_transpose2d(x * x, w, stride=2, padding=1, output_padding=1)
            gx, gw = tinygrad_pool.autograd.grad((out * z).sum(), [x, w], create_graph=True)
            return (gx * gx).sum() + (gw * gw).sum()
    check_grad(gradient_norm, x, w)


# ---- the math ------------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_it_is_the_adjoint_of_conv2d(rng, x_shape, w_shape, kwargs):
    # ⟨conv_transpose(x, w), z⟩ = ⟨x, conv2d(z, w)⟩ for every z of the output's shape
    conv_kwargs = {k: v for k, v in kwargs.items() if k != "output_padding"}
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    up = F.conv_transpose2d(tensor(x), tensor(w), **kwargs).numpy()
    z = rng.standard_normal(up.shape)
    down = F.conv2d(tensor(z), tensor(w), **conv_kwargs).numpy()
    # conv2d takes the output's shape back to the input's (output_padding at or above the
    # stride, allowed by dilation, leaves it windows more: those of no input pixel)
    assert down.shape[:2] == x.shape[:2] and down.shape[2:] >= x.shape[2:]
    assert (down.shape == x.shape) == (kwargs.get("output_padding", 0) < kwargs["stride"])
    down = down[:, :, :x.shape[2], :x.shape[3]]
    assert np.sum(up * z) == pytest.approx(np.sum(x * down), rel=1e-12)


def test_by_hand():
    # a 2×2 image of 1, 2, 3, 4 and a 2×2 kernel of ones at stride 2: each pixel becomes a
    # 2×2 block; at stride 1 the blocks overlap and add up; bias on every output pixel
    x = tensor(np.arange(1.0, 5).reshape(1, 1, 2, 2))
    ones = tensor(np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(F.conv_transpose2d(x, ones, stride=2).numpy()[0, 0],
                                  [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    np.testing.assert_array_equal(F.conv_transpose2d(x, ones, tensor([0.5])).numpy()[0, 0],
                                  [[1.5, 3.5, 2.5], [4.5, 10.5, 6.5], [3.5, 7.5, 4.5]])
    # output_padding past padding: one more row and column, zero but for the bias
    out = F.conv_transpose2d(x, ones, tensor([0.5]), stride=2, output_padding=1).numpy()[0, 0]
    assert out.shape == (5, 5) and np.all(out[4] == 0.5) and np.all(out[:, 4] == 0.5)


def test_unbatched_is_a_batch_of_one(torch, rng):
    x, w, b = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 3, 2)), rng.standard_normal(6)
    kwargs = dict(stride=2, padding=1, output_padding=1, groups=2)
    single, batch = leaf(x), leaf(x[None])
    out = F.conv_transpose2d(single, tensor(w), tensor(b), **kwargs)
    batch_out = F.conv_transpose2d(batch, tensor(w), tensor(b), **kwargs)
    assert out.shape == batch_out.shape[1:] == (6, 6, 9)
    assert_same_as_a_batch_of_one(out, batch_out, single, batch, rng)
    torch_parity(torch, lambda *t: F.conv_transpose2d(*t, **kwargs), x, w, b,
                 torch_fn=lambda *t: torch.nn.functional.conv_transpose2d(*t, **kwargs), **TIGHT)


def test_an_empty_batch_flows_forward_and_back(torch):
    x, w = leaf(np.ones((0, 4, 3, 3))), leaf(np.ones((4, 2, 3, 3)))
    out = F.conv_transpose2d(x, w, stride=2)
    theirs = torch.nn.functional.conv_transpose2d(torch.ones(0, 4, 3, 3), torch.ones(4, 2, 3, 3),
                                                  stride=2)
    assert out.shape == tuple(theirs.shape) == (0, 2, 7, 7)
    out.sum().backward()
    assert x.grad.shape == x.shape and np.all(w.grad.numpy() == 0)


def test_integers_compute_as_in_torch_and_the_rest_is_refused(torch, rng):
    x, w, b = rng.integers(-5, 5, (2, 4, 3, 3)), rng.integers(-3, 3, (4, 2, 3, 3)), rng.integers(-3, 3, 2)
    ours = F.conv_transpose2d(tensor(x), tensor(w), tensor(b), stride=2, padding=1, output_padding=1)
    theirs = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                                  stride=2, padding=1, output_padding=1)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for dtype, name in ((np.int32, "Int"), (np.uint8, "Byte"), (bool, "Bool")):
        with pytest.raises(NotImplementedError, match=f"conv_transpose2d.*not implemented for '{name}'"):
            F.conv_transpose2d(tensor(x.astype(dtype)), tensor(w.astype(dtype)))
        with pytest.raises(NotImplementedError):
            torch.nn.functional.conv_transpose2d(torch.tensor(x.astype(dtype)),
                                                 torch.tensor(w.astype(dtype)))


def test_a_bias_of_another_dtype_is_cast_as_torch_casts_it(torch, rng):
    # torch adds a bias of any dtype that casts to the output's (the input's): the output keeps
    # the input's dtype, the bias's gradient its own; a float bias on an int64 output is refused
    x, w, b = rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3)
    ours = [tensor(x, requires_grad=True), tensor(w, requires_grad=True),
            tensor(b.astype(np.float32), requires_grad=True)]
    theirs = [torch.tensor(a.numpy(), requires_grad=True) for a in ours]
    out = F.conv_transpose2d(*ours, stride=2)
    tout = torch.nn.functional.conv_transpose2d(*theirs, stride=2)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-7)
    out.backward(np.ones(out.shape))
    tout.backward(torch.ones(tout.shape, dtype=torch.float64))
    assert ours[2].grad.dtype == np.float32
    np.testing.assert_allclose(ours[2].grad.numpy(), theirs[2].grad.numpy())
    for bias in (np.array([1, 0, 2]), np.array([True, False, True])):  # onto floats: fine
        np.testing.assert_allclose(F.conv_transpose2d(tensor(x), tensor(w), tensor(bias)).numpy(),
                                   torch.nn.functional.conv_transpose2d(
                                       torch.tensor(x), torch.tensor(w), torch.tensor(bias)).numpy())
    xi, wi = tensor(x.astype(np.int64)), tensor(w.astype(np.int64))
    with pytest.raises(RuntimeError, match="conv_transpose2d: bias has dtype float64, which cannot "
                                           "be cast to the output's dtype int64"):
        F.conv_transpose2d(xi, wi, tensor(b))
    with pytest.raises(RuntimeError):
        torch.nn.functional.conv_transpose2d(torch.tensor(xi.numpy()), torch.tensor(wi.numpy()),
                                             torch.tensor(b))


# ---- bad arguments: torch's error types, messages naming the function, argument and value -------
ERRORS = [  # (input shape, weight shape, keyword arguments, our message)
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(stride=2, output_padding=2),
     r"output_padding must be smaller than either stride or dilation along each axis, got "
     r"output_padding=\(2, 2\), stride=\(2, 2\), dilation=\(1, 1\)"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(stride=(2, 1), output_padding=(0, 1)),
     r"output_padding must be smaller .*output_padding=\(0, 1\), stride=\(2, 1\)"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(output_padding=-1), "output_padding must be at least 0, got -1"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(padding=4), r"the output size \(-1, -1\) is too small"),
    ((1, 3, 5, 5), (4, 2, 3, 3), {}, r"input has 3 channels but weight expects 4 .*\(4, 2, 3, 3\)"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(groups=3), r"weight's in_channels, 4, is not divisible by groups=3"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(groups=0), "groups must be at least 1, got 0"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(stride=0), "stride must be at least 1, got 0"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(dilation=(1, 2, 3)), r"dilation must be an int or a pair"),
    ((1, 4, 5, 5), (4, 2, 3, 3), dict(padding=-1), "padding must be at least 0, got -1"),
    ((1, 4, 0, 5), (4, 2, 3, 3), {}, r"non-zero height and width .*\[1, 4, 0, 5\]"),
    ((1, 4, 5, 5), (4, 0, 3, 3), {}, r"weight must be non-empty.*\(4, 0, 3, 3\)"),
    ((1, 4, 5, 5), (4, 2, 0, 3), {}, r"weight must be non-empty.*\(4, 2, 0, 3\)"),
    ((5, 5), (4, 2, 3, 3), {}, r"Expected 3D \(unbatched\) or 4D \(batched\) input to "
     r"conv_transpose2d, but got input of size: \[5, 5\]"),
    ((1, 4, 5, 5), (4, 2, 3), {}, r"weight must be 4-D"),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", ERRORS,
                         ids=[f"{e[0]}-{e[1]}-{e[2]}" for e in ERRORS])
def test_geometry_errors_are_torchs_runtime_errors(torch, x_shape, w_shape, kwargs, message):
    x, w = leaf(np.ones(x_shape)), leaf(np.ones(w_shape))
    with pytest.raises(RuntimeError, match=message):
        F.conv_transpose2d(x, w, **kwargs)
    with pytest.raises(RuntimeError):
        torch.nn.functional.conv_transpose2d(torch.ones(x_shape, dtype=torch.float64),
                                             torch.ones(w_shape, dtype=torch.float64), **kwargs)
    assert x.grad is None and w.grad is None


def test_bias_and_types_are_checked_before_anything_is_recorded(torch):
    x, w = leaf(np.ones((1, 4, 5, 5))), leaf(np.ones((4, 2, 3, 3)))
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: bias must have shape \(4,\).*"
                                           r"groups=2, got \(2,\)"):
        F.conv_transpose2d(x, w, leaf(np.ones(2)), groups=2)
    with pytest.raises(TypeError, match="conv_transpose2d: weight must be a Tensor, got ndarray"):
        F.conv_transpose2d(x, np.ones((4, 2, 3, 3)))
    with pytest.raises(TypeError, match=r"conv_transpose2d: stride must be an int or a pair of "
                                        r"ints, got 1.5"):
        F.conv_transpose2d(x, w, stride=1.5)
    with pytest.raises(TypeError, match=r"conv_transpose2d: padding must be an int or a pair of "
                                        r"ints, got 'same'"):
        F.conv_transpose2d(x, w, padding="same")
    with pytest.raises(RuntimeError, match="conv_transpose2d: weight has dtype float32 but input "
                                           "has dtype float64"):
        F.conv_transpose2d(x, tensor(np.ones((4, 2, 3, 3), np.float32)))
    y = F.conv_transpose2d(x, w)  # the inputs are untouched and still usable
    y.sum().backward()
    assert w.grad.shape == w.shape and x.grad.numpy()[0, 0, 2, 2] == 2 * 9  # 2 filters of 9 ones


IMAGES = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
WEIGHT = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)


def functional(*positional, **keywords):
    params = [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in keywords.items()]
    return Case(lambda fw, F, *args, **kwargs: F.conv_transpose2d(*args, **kwargs), params)


def layer(*positional, input=IMAGES, output_size=None, **keywords):
    """``nn.ConvTranspose2d`` from the spoilt arguments, with the same weights in both
    frameworks, called on ``input``; compared by its output and its state's shapes."""
    def call(fw, F, *args, **kwargs):
        module = fw.nn.ConvTranspose2d(*args, **kwargs)
        values = {name: np.cos(np.arange(p.numel())).reshape(tuple(p.shape)).astype(np.float32)
                  for name, p in module.named_parameters()}
        if fw is not tinygrad_pool:
            values = {name: fw.tensor(v) for name, v in values.items()}
        module.load_state_dict(values)
        x = tinygrad_pool.tensor(input) if fw is tinygrad_pool else fw.tensor(input)
        shapes = tuple(np.asarray(tuple(v.shape)) for v in module.state_dict().values())
        return (module(x, output_size=output_size),) + shapes
    params = [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in keywords.items()]
    return Case(call, params)


def forward_input(*args, **kwargs):
    def call(fw, F, input):
        module = fw.nn.ConvTranspose2d(*args, **kwargs)
        return module(input)
    return Case(call, [("input", IMAGES, False)], deterministic=False)


TABLE = {  # name -> (the names a message may carry, the case)
    "conv_transpose2d": ("conv_transpose2d", functional(
        ("input", IMAGES), ("weight", WEIGHT), bias=np.zeros(3, np.float32), stride=2, padding=1,
        output_padding=1, groups=1, dilation=1)),
    "conv_transpose2d grouped": ("conv_transpose2d", functional(
        ("input", IMAGES), ("weight", WEIGHT[:, :1].repeat(2, axis=1)), bias=np.ones(4, np.float32),
        stride=(2, 1), padding=(1, 0), output_padding=(0, 1), groups=2, dilation=(1, 2))),
    "conv_transpose2d unbatched": ("conv_transpose2d", functional(
        ("input", IMAGES[0]), ("weight", WEIGHT), bias=np.zeros(3, np.float32), stride=(1, 3),
        padding=(2, 0))),
    "ConvTranspose2d": (("ConvTranspose2d", "conv_transpose2d"), layer(
        ("in_channels", 4), ("out_channels", 6), ("kernel_size", 3), stride=2, padding=1,
        output_padding=1, groups=2, bias=True, dilation=1, padding_mode="zeros")),
    "ConvTranspose2d input": (("ConvTranspose2d", "conv_transpose2d"),
                              forward_input(4, 6, 3, stride=2, padding=1, output_padding=1)),
}
NOT_BOOL = ("str", "None", "negative", "zero", "float", "nan", "inf", "list3", "tuple3", "complex")
FLAG = ("a flag must be a bool; torch's constructor only tests its truthiness, so 'no' would "
        "mean True (as Conv2d's table)")
SIZE = ("a size must be an int, a bool refused; torch builds a layer from True as 1, or, from "
        "2.5, fails by accident (as Conv2d's table)")
ALLOWED = {name: {} for name in TABLE}
ALLOWED["ConvTranspose2d"].update({f"bias={spoilt}": FLAG for spoilt in NOT_BOOL})
ALLOWED["ConvTranspose2d"].update({f"{size}={spoilt}": SIZE
                                   for size in ("in_channels", "out_channels", "groups",
                                                "kernel_size")
                                   for spoilt in ("bool", "float", "nan", "inf")})
ALLOWED["conv_transpose2d"].update({f"bias={spoilt}": (
    "torch's refusal of a bias of another dtype comes from its oneDNN kernel, which it picks for "
    "a batch of float32 images; its own kernel (one image, float64, int64, other geometries: "
    "the other two cases here) adds such a bias, cast to the output's dtype, and so do we")
    for spoilt in ("int_tensor", "bool_tensor", "float64_tensor")})


@pytest.mark.parametrize("name, parameter", parameters({n: c for n, (_, c) in TABLE.items()}))
def test_spoilt_argument_as_torch(torch, name, parameter):
    names, case = TABLE[name]
    found = problems(name, names, case, parameter, ALLOWED[name])
    assert not found, "\n".join(found)


# ---- the layer -----------------------------------------------------------------------------------
def test_layer_state_repr_and_output_match_torch(torch, rng):
    settings_ = [dict(), dict(stride=2, padding=1, output_padding=1, groups=2, bias=False,
                              dilation=2), dict(kernel_size=(3, 2), stride=(2, 3), padding=(0, 1))]
    for options in settings_:
        kernel = options.pop("kernel_size", 3)
        ours = nn.ConvTranspose2d(4, 6, kernel, dtype=np.float64, **options)
        theirs = torch.nn.ConvTranspose2d(4, 6, kernel, dtype=torch.float64, **options)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [tuple(v.shape) for v in ours.state_dict().values()] == \
            [tuple(v.shape) for v in theirs.state_dict().values()]
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        x = rng.standard_normal((2, 4, 5, 4))
        torch_parity(torch, ours, x, torch_fn=theirs, **TIGHT)  # the parameters' gradients too
        for mine, their in zip(ours.parameters(), theirs.parameters()):
            np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), **TIGHT)
    assert nn.ConvTranspose2d(4, 6, 3).weight.dtype == np.float32
    assert nn.ConvTranspose2d(4, 6, 3, dtype=np.float64).bias.dtype == np.float64


@pytest.mark.parametrize("in_channels, out_channels, kernel_size, groups",
                         [(16, 24, 3, 1), (6, 40, (3, 5), 2)])
def test_default_init_is_torchs_uniform_over_its_fan_in(torch, in_channels, out_channels,
                                                        kernel_size, groups):
    # weight (in, out/groups, kh, kw): torch's fan-in reads dim 1, so out/groups · kh · kw
    ours = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, groups=groups,
                              generator=np.random.default_rng(0))
    theirs = torch.nn.ConvTranspose2d(in_channels, out_channels, kernel_size, groups=groups)
    fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(theirs.weight)
    assert fan_in == ours.weight.shape[1] * ours.weight.shape[2] * ours.weight.shape[3]
    bound = 1 / math.sqrt(fan_in)
    for values in (ours.weight.numpy(), ours.bias.numpy()):
        assert np.all(np.abs(values) <= bound)
    weight = ours.weight.numpy()
    # uniform over the whole range, as torch's: extremes near the bound, mean 0, std b/√3
    assert np.abs(weight).max() > 0.95 * bound and abs(weight.mean()) < 0.05 * bound
    assert weight.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    assert weight.std() == pytest.approx(theirs.weight.detach().numpy().std(), rel=0.1)
    assert np.abs(ours.bias.numpy()).max() > 0.5 * bound


def test_output_size_picks_the_output_padding_as_torch(torch, rng):
    ours = nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1, dtype=np.float64)
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1, dtype=torch.float64)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((2, 2, 4, 5))
    for size in [(10, 13), (12, 13), [11, 14], (2, 3, 12, 15), torch.Size([10, 15])]:
        torch_parity(torch, lambda t: ours(t, output_size=size), x,
                     torch_fn=lambda t: theirs(t, output_size=list(size)), **TIGHT)
    single = ours(tensor(x[0]), output_size=(3, 11, 14))  # unbatched: (C, H, W) or (H, W)
    assert single.shape == (3, 11, 14)
    np.testing.assert_allclose(single.numpy(), ours(tensor(x[:1]), output_size=(11, 14)).numpy()[0])
    for size, message in [((9, 13), r"ConvTranspose2d: requested an output_size of \(9, 13\), "
                                    r"but valid sizes range from \(10, 13\) to \(12, 15\) "
                                    r"\(for an input of size \(4, 5\)\)"),
                          ((10, 16), r"valid sizes range from \(10, 13\) to \(12, 15\)"),
                          ((10,), r"ConvTranspose2d: for 4D input, output_size must have 2 or 4 "
                                  r"elements, got 1"),
                          ((2, 3, 10), "must have 2 or 4 elements, got 3")]:
        with pytest.raises(ValueError, match=message):
            ours(tensor(x), output_size=size)
        with pytest.raises(ValueError):
            theirs(torch.tensor(x), output_size=list(size))
    with pytest.raises(TypeError, match="ConvTranspose2d: output_size must be a sequence of ints"):
        ours(tensor(x), output_size=(10.5, 13))


def test_layer_arguments_are_checked_with_torchs_types():
    with pytest.raises(ValueError, match="ConvTranspose2d: padding_mode must be 'zeros'.*'reflect'"):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match=r"in_channels \(3\) and out_channels \(4\) must both be "
                                         r"divisible by groups \(2\)"):
        nn.ConvTranspose2d(3, 4, 3, groups=2)
    with pytest.raises(RuntimeError, match="ConvTranspose2d: output_padding must be at least 0"):
        nn.ConvTranspose2d(2, 2, 3, output_padding=-1)
    layer = nn.ConvTranspose2d(2, 2, 3, output_padding=1)  # torch too: an output_size overrides it
    with pytest.raises(RuntimeError, match="conv_transpose2d: output_padding must be smaller"):
        layer(tensor(np.ones((1, 2, 4, 4), np.float32)))
    assert layer(tensor(np.ones((1, 2, 4, 4), np.float32)), output_size=(6, 6)).shape == (1, 2, 6, 6)


# ---- the fan-in picture: the cells it lights are the dependence the engine's backward shows ----
@pytest.fixture
def fan_in():
    """viz.fan_in, or a skip without the graphviz package (the rest of the file runs)."""
    pytest.importorskip("graphviz")
    from tinygrad_pool.viz import fan_in
    return fan_in


PICTURE_GEOMETRIES = [dict(stride=1, padding=0), dict(stride=2, padding=1, output_padding=1),
                      dict(stride=2, padding=0, output_padding=1, dilation=2),
                      dict(stride=(3, 2), padding=(1, 0), dilation=(2, 1), groups=2)]


def cells(shape):
    return list(itertools.product(*map(range, shape)))


def picture_case(rng, geometry):
    groups = geometry.get("groups", 1)
    return rng.standard_normal((1, 2, 3, 4)), rng.standard_normal((2, 4 // groups, 3, 2))


@pytest.mark.parametrize("geometry", PICTURE_GEOMETRIES, ids=str)
def test_fan_in_output_cell_lights_the_inputs_and_weights_it_depends_on(rng, fan_in, geometry):
    x, w = picture_case(rng, geometry)
    out = F.conv_transpose2d(tensor(x), tensor(w, requires_grad=True), **geometry)
    taps = (2 // geometry.get("groups", 1)) * 3 * 2  # input channels of its group × kernel taps
    for cell in cells(out.shape):
        xt, wt = leaf(x), leaf(w)
        one_hot = np.zeros(out.shape)
        one_hot[cell] = 1.0
        F.conv_transpose2d(xt, wt, **geometry).backward(one_hot)
        picture = fan_in(out, output_cell=cell)
        assert {link.input for link in picture.links} == set(zip(*np.nonzero(xt.grad.numpy())))
        assert {link.weight for link in picture.links} == set(zip(*np.nonzero(wt.grad.numpy())))
        assert all(link.output == cell and link.derivative == w[link.weight] for link in picture.links)
        assert len(picture.links) + len(picture.padding) == taps  # each tap: an input cell, or none


@pytest.mark.parametrize("geometry", PICTURE_GEOMETRIES, ids=str)
def test_fan_in_input_cell_lights_every_output_it_is_spread_onto(rng, fan_in, geometry):
    x, w = picture_case(rng, geometry)
    out = F.conv_transpose2d(tensor(x, requires_grad=True), tensor(w), **geometry)
    for cell in cells(x.shape):
        one_hot = np.zeros(x.shape)
        one_hot[cell] = 1.0
        response = F.conv_transpose2d(tensor(one_hot), tensor(w), **geometry).numpy()  # linear
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links} == set(zip(*np.nonzero(response)))
        assert all(response[link.output] == w[link.weight] for link in picture.links)


@pytest.mark.parametrize("geometry", PICTURE_GEOMETRIES[1:], ids=str)
def test_fan_in_terms_sum_to_the_engines_gradients(rng, fan_in, geometry):
    x, w = picture_case(rng, geometry)
    xt = (tensor(x, requires_grad=True) * 1.0).retain_grad()
    wt = tensor(w, requires_grad=True)
    out = F.conv_transpose2d(xt, wt, **geometry).retain_grad()
    (((out - tensor(rng.standard_normal(out.shape))) ** 2).sum() * 0.5).backward()
    g = out.grad.numpy()
    for cell in cells(x.shape):
        picture = fan_in(out, input_cell=cell)
        assert picture.input_gradient == pytest.approx(xt.grad.numpy()[cell], abs=1e-12)
    input_grad, weight_grad = np.zeros(x.shape), np.zeros(w.shape)
    for cell in cells(out.shape):
        for link in fan_in(out, output_cell=cell).links:  # where one output's gradient goes
            input_grad[link.input] += link.gradient
            weight_grad[link.weight] += link.weight_gradient
            assert link.gradient == g[cell] * w[link.weight]
            assert link.weight_gradient == g[cell] * x[link.input]
    np.testing.assert_allclose(input_grad, xt.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weight_grad, wt.grad.numpy(), rtol=0, atol=1e-12)


def test_fan_in_picture_shows_the_output_and_says_what_it_shows(fan_in):
    x = tensor(np.arange(1.0, 5).reshape(1, 1, 2, 2), requires_grad=True)
    out = F.conv_transpose2d(x, tensor(np.ones((1, 1, 2, 2))), stride=2, output_padding=1)
    picture = fan_in(out, output_cell=(2, 3))  # the block of pixel (1, 1), tap (0, 1)
    assert [(link.input, link.weight) for link in picture.links] == [((0, 0, 1, 1), (0, 0, 0, 1))]
    assert picture.summary.startswith("output[0, 0, 2, 3] = Σ weight · input over the 1 yellow "
                                      "input cell spread onto it (each tagged with its weight); 3 "
                                      "weight taps meet no input cell")
    assert all(line in picture.source for line in textwrap.wrap(picture.summary, 100))
    overlapping = fan_in(F.conv_transpose2d(x, tensor(np.ones((1, 1, 2, 2)))), output_cell=(1, 1))
    assert ">10.000<" in overlapping.source  # the output plane, recomputed: 1 + 2 + 3 + 4
    edge = fan_in(out, output_cell=(4, 4))  # output_padding's row: no input reaches it
    assert edge.links == () and len(edge.padding) == 4
    spread = fan_in(out, input_cell=(0, 1), grad_output=np.ones(out.shape))
    assert spread.summary.startswith("input[0, 0, 0, 1] is spread onto 4 outputs (yellow)")
    assert spread.input_gradient == 4.0 and "one term for each output it is spread onto" in \
        re.sub(r"<[^>]+>", "", spread.source)
    unbatched = F.conv_transpose2d(x[0], tensor(np.ones((1, 1, 2, 2))), stride=2)
    assert fan_in(unbatched, output_cell=(0, 2, 3)).links[0].input == (0, 0, 1, 1)
