"""F.pad's reflect, replicate and circular modes and the padding layers, against torch: forward,
backward and double backward in float32 and float64, finite differences, torch's rules on which
dims each mode pads and how wide, errors and reprs."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, tensor
from tinygrad_pool.viz.summary import arguments

from helpers import check_grad

TOLERANCES = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}
MODES = ("reflect", "replicate", "circular")
RANKS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}  # dims padded -> the input ranks a mode takes


def assert_parity(torch, x, pad, mode, dtype, seed=0):
    """Forward, gradient and the derivative of the gradient by the upstream gradient (the op is
    linear: that is the whole second order), ours against torch's."""
    tol, rng = TOLERANCES[dtype], np.random.default_rng(seed)
    x = x.astype(dtype)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = F.pad(xo, pad, mode=mode), torch.nn.functional.pad(xt, pad, mode=mode)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape)
    np.testing.assert_array_equal(yo.numpy(), yt.detach().numpy())  # copies: exact
    weights, direction = (rng.standard_normal(yo.shape).astype(dtype),
                          rng.standard_normal(x.shape).astype(dtype))
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    np.testing.assert_allclose(go.numpy(), gt.detach().numpy(), **tol, err_msg="backward")
    (go * tensor(direction)).sum().backward()
    (gt * torch.tensor(direction)).sum().backward()
    np.testing.assert_allclose(wo.grad.numpy(), wt.grad.numpy(), **tol, err_msg="d²/dx dw")


def widths_for(data, mode, sizes):
    """(left, right) per padded dim, last dim first, within what torch defines: reflect below
    the size, circular at most what cropping leaves, replicate anything; negatives crop (at
    most half the dim on each side, so that something is left)."""
    pad = []
    for n in reversed(sizes):
        crop = -((n - 1) // 2)
        top = {"reflect": n - 1, "replicate": 2 * n + 1, "circular": n}[mode]
        before = data.draw(st.integers(crop, top))
        after = data.draw(st.integers(crop, top if mode != "circular" else n - max(-before, 0)))
        if mode == "circular":  # (wraps at most once around what cropping left)
            before = min(before, n - max(-after, 0))
        pad += [before, after]
    return tuple(pad)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(MODES), dims=st.sampled_from([1, 2, 3]), batched=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), data=st.data())
def test_every_mode_matches_torch(torch, mode, dims, batched, dtype, data):
    rank = RANKS[dims][batched]
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    pad = widths_for(data, mode, shape[rank - dims:])
    x = np.random.default_rng(rank).standard_normal(shape)
    assert_parity(torch, x, pad, mode, dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,pad", [((2, 5), (2, 3)), ((1, 2, 5), (-2, 1)),
                                       ((1, 2, 4, 5), (1, 2, 3, 0)), ((2, 3, 4, 5), (0, 1, 2, -1)),
                                       ((1, 1, 3, 4, 5), (1, 1, 2, 0, -1, 2)),
                                       ((2, 3, 4, 5), (4, 0, 3, 3, 2, 1))])
def test_fixed_cases_and_finite_differences(torch, mode, shape, pad):
    x = np.random.default_rng(8).standard_normal(shape)
    assert_parity(torch, x, pad, mode, np.float64)
    check_grad(lambda t: F.pad(t, pad, mode=mode), x)


def test_each_output_cell_copies_the_cell_the_mode_names():
    x = tensor(np.arange(5.0).reshape(1, 1, 5))
    assert F.pad(x, (3, 2), mode="reflect").numpy().ravel().tolist() == [3, 2, 1, 0, 1, 2, 3, 4, 3, 2]
    assert F.pad(x, (3, 2), mode="replicate").numpy().ravel().tolist() == [0, 0, 0, 0, 1, 2, 3, 4, 4, 4]
    assert F.pad(x, (3, 2), mode="circular").numpy().ravel().tolist() == [2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    # circular crops first, then wraps around what is left (as torch)
    assert F.pad(x, (1, -2), mode="circular").numpy().ravel().tolist() == [2, 0, 1, 2]


def test_backward_adds_every_copy_into_its_source():
    x = tensor(np.zeros((1, 1, 3)), requires_grad=True)
    F.pad(x, (2, 2), mode="replicate").sum().backward()
    assert x.grad.numpy().ravel().tolist() == [3, 1, 3]
    x.grad = None
    F.pad(x, (2, 2), mode="reflect").sum().backward()
    assert x.grad.numpy().ravel().tolist() == [2, 3, 2]  # c b [a b c] b a


def test_integer_inputs_and_the_graph_label(torch):
    x = np.arange(12).reshape(1, 3, 4)
    for mode in MODES:
        np.testing.assert_array_equal(F.pad(tensor(x), (1, 2), mode=mode).numpy(),
                                      torch.nn.functional.pad(torch.tensor(x), (1, 2), mode=mode).numpy())
    fn = F.pad(tensor(np.ones((1, 2, 3, 3)), requires_grad=True), (1, 1, 2, 0), mode="reflect").grad_fn
    assert arguments(fn.attrs, fn) == ["pad=(1, 1, 2, 0)", "mode='reflect'"]


BAD = [
    ((5,), (1, 1), "reflect", NotImplementedError, "Padding size 2 is not supported for 1D"),
    ((1, 2, 4, 5), (1, 1), "replicate", NotImplementedError, "not supported for 4D"),
    ((1, 1, 3, 4, 5), (1, 1, 1, 1), "circular", NotImplementedError, "not supported for 5D"),
    ((1, 1, 1, 3, 4, 5), (1,) * 6, "reflect", NotImplementedError, "not supported for 6D"),
    ((1, 2, 5), (5, 1), "reflect", RuntimeError, "Padding size should be less than"),
    ((1, 2, 5), (6, 1), "circular", RuntimeError, "wrapping around more than once"),
    ((1, 2, 5), (-3, -2), "reflect", RuntimeError, "too small"),
    ((1, 2, 5), (-3, -3), "circular", RuntimeError, "empty dimension"),
    ((1, 2, 4, 2), (2, 2, -3, -2), "replicate", RuntimeError, "negative dimension"),
    ((1, 2, 5), (1, 1), "reflect", RuntimeError, "doesn't take in value"),
    ((5,), (1, 1), "replicate", RuntimeError, "doesn't take in value"),  # before the rank
    ((2, 5), (1,) * 6, "reflect", RuntimeError, "less than or equal to two times"),
    ((1, 2, 5), (1,), "reflect", RuntimeError, "divisible by 2"),
    ((1, 0, 5), (1, 1), "replicate", RuntimeError, "non-zero dimensions"),
    ((1, 2, 5), (1, 1), "bogus", NotImplementedError, "mode"),
]


@pytest.mark.parametrize("shape,pad,mode,error,match", BAD)
def test_bad_arguments_raise_torchs_error_types(torch, shape, pad, mode, error, match):
    value = 1.0 if "value" in match else None  # (any value but 0 is refused by these modes)
    x = np.zeros(shape, dtype=np.float32)
    with pytest.raises(error, match=match):
        F.pad(tensor(x), pad, mode=mode, value=value)
    with pytest.raises(error):
        torch.nn.functional.pad(torch.tensor(x), pad, mode=mode, value=value)
    with pytest.raises(TypeError):
        F.pad(tensor(x), pad, mode=3)


# ---- the padding layers -------------------------------------------------------------------------
LAYERS = [(name, dims) for dims in (1, 2, 3) for name in
          (f"ZeroPad{dims}d", f"ConstantPad{dims}d", f"ReflectionPad{dims}d",
           f"ReplicationPad{dims}d", f"CircularPad{dims}d")]


@pytest.mark.parametrize("name,dims", LAYERS)
def test_layers_match_torchs_repr_and_output(torch, name, dims):
    for padding in (1, (1, 2) * dims):
        args = (padding, 3.5) if name.startswith("Constant") else (padding,)
        ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(ours) == repr(theirs) and ours.padding == theirs.padding
        x = np.random.default_rng(9).standard_normal((2, 3) + (4, 5, 6)[:dims])
        np.testing.assert_array_equal(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())


def test_circular_layers_check_the_rank_as_torch(torch):
    x = np.zeros((1, 1, 1, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.CircularPad1d(1)(tensor(x))
    with pytest.raises(ValueError):
        torch.nn.CircularPad1d(1)(torch.tensor(x))


@pytest.mark.parametrize("shape,pad,mode", [((0, 2, 3), (1, 1), "reflect"),
                                            ((0, 2, 3, 4), (1, 1, 1, 1), "replicate"),
                                            ((0, 4), (1, 1), "circular"),
                                            ((0, 5), (1, 1), "reflect"), ((2, 0), (1, 1), "replicate")])
def test_empty_inputs_as_torch(torch, shape, pad, mode):
    """A batched input may have no images; an unbatched one, and the channels, may not be empty
    for reflect and replicate."""
    try:
        expected = tuple(torch.nn.functional.pad(torch.zeros(shape), pad, mode=mode).shape)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="non-zero dimensions"):
            F.pad(tensor(np.zeros(shape)), pad, mode=mode)
        return
    x = tensor(np.zeros(shape), requires_grad=True)
    out = F.pad(x, pad, mode=mode)
    assert out.shape == expected
    out.sum().backward()
    assert x.grad.shape == shape
