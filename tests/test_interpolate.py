"""F.interpolate, nn.Upsample and the deprecated upsample aliases, against torch: every mode's
forward, backward and double backward in float32 and float64, finite differences, errors."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, tensor
from tinygrad_pool.viz.summary import arguments

from helpers import check_grad

TOLERANCES = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
# mode -> the spatial dims it takes
MODES = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3), "linear": (1,),
         "bilinear": (2,), "trilinear": (3,), "bicubic": (2,)}
SCALES = (0.5, 0.6, 0.75, 1.0, 1.3, 1.7, 2.0, 2.5, 3.0)


def assert_parity(torch, x, dtype, seed=0, **kwargs):
    """Forward, gradient and second derivatives of interpolate(x, **kwargs), ours against
    torch's. The op is linear: its gradient does not depend on x, and the second order is the
    derivative of the gradient with respect to the upstream gradient w (the op itself again)."""
    tol, rng = TOLERANCES[dtype], np.random.default_rng(seed)
    x = x.astype(dtype)
    xo, xt = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = F.interpolate(xo, **kwargs), torch.nn.functional.interpolate(xt, **kwargs)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape), (yo.shape, tuple(yt.shape))
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol, err_msg="forward")

    weights, direction = (rng.standard_normal(yo.shape).astype(dtype),
                          rng.standard_normal(x.shape).astype(dtype))
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    (go,) = autograd.grad(yo, [xo], grad_outputs=[wo], create_graph=True)
    (gt,) = torch.autograd.grad(yt, [xt], grad_outputs=[wt], create_graph=True)
    assert go.dtype == dtype
    np.testing.assert_allclose(go.numpy(), gt.detach().numpy(), **tol, err_msg="backward")
    (go * tensor(direction)).sum().backward()
    (gt * torch.tensor(direction)).sum().backward()
    np.testing.assert_allclose(wo.grad.numpy(), wt.grad.numpy(), **tol, err_msg="d²/dx dw")
    assert xo.grad is None or not xo.grad.numpy().any()  # linear: no d²/dx²


def torch_nearest_backward_differs(spatial, scale_factor, mode, kwargs) -> bool:
    """torch 2.13's CPU backward of 1-D and 3-D nearest takes 2-D's shortcuts (an axis that keeps
    its size is copied, one that doubles reads o // 2) where its forward uses 1/scale_factor: its
    gradient is then not its forward's (torch's own gradcheck fails). Ours is the forward's."""
    if mode != "nearest" or len(spatial) == 2 or scale_factor is None \
            or kwargs.get("recompute_scale_factor"):
        return False
    return any(int(n * s) in (n, 2 * n) for n, s in zip(spatial, scale_factor))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(sorted(MODES)), data=st.data(),
       dtype=st.sampled_from([np.float32, np.float64]),
       align_corners=st.booleans(), by_size=st.booleans(), recompute=st.booleans())
def test_every_mode_matches_torch(torch, mode, data, dtype, align_corners, by_size, recompute):
    dims = data.draw(st.sampled_from(MODES[mode]))
    spatial = tuple(data.draw(st.lists(st.integers(1, 7), min_size=dims, max_size=dims)))
    kwargs = {"mode": mode}
    if mode not in ("nearest", "nearest-exact", "area"):
        kwargs["align_corners"] = align_corners
    scale_factor = None
    if by_size:
        kwargs["size"] = tuple(data.draw(st.lists(st.integers(1, 9), min_size=dims, max_size=dims)))
    else:
        scale_factor = tuple(data.draw(st.lists(st.sampled_from(SCALES), min_size=dims,
                                                max_size=dims)))
        if any(int(n * s) < 1 for n, s in zip(spatial, scale_factor)):
            return
        kwargs["scale_factor"], kwargs["recompute_scale_factor"] = scale_factor, recompute or None
    x = np.random.default_rng(dims).standard_normal((2, 3) + spatial)
    if torch_nearest_backward_differs(spatial, scale_factor, mode, kwargs):
        xo = tensor(x.astype(dtype))
        np.testing.assert_allclose(F.interpolate(xo, **kwargs).numpy(),
                                   torch.nn.functional.interpolate(torch.tensor(x.astype(dtype)),
                                                                   **kwargs).numpy())
        return
    assert_parity(torch, x, dtype, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [
    dict(scale_factor=1.7, mode="nearest"), dict(scale_factor=0.6, mode="nearest"),
    dict(scale_factor=1.7, mode="bilinear"), dict(scale_factor=0.6, mode="bilinear"),
    dict(scale_factor=1.7, mode="bilinear", align_corners=True),
    dict(scale_factor=0.6, mode="bilinear", align_corners=True),
    dict(scale_factor=(1.3, 2.5), mode="bicubic"), dict(size=(3, 11), mode="bicubic",
                                                       align_corners=True),
    dict(scale_factor=1.7, mode="nearest-exact"), dict(size=(4, 6), mode="area"),
    dict(scale_factor=2.0, mode="bilinear", recompute_scale_factor=True),
])
def test_fractional_scales_and_downsampling_follow_torchs_index_rules(torch, kwargs, dtype):
    """1/scale_factor, not in/out, picks the cells (1.7 and 0.6: the two differ)."""
    x = np.random.default_rng(1).standard_normal((2, 2, 9, 7))
    assert_parity(torch, x, dtype, **kwargs)


def test_scale_factor_and_size_read_different_cells(torch):
    """The test above can fail: 1/1.7 and in/out = 5/8 pick different cells."""
    x = tensor(np.arange(5.0).reshape(1, 1, 5))
    by_scale = F.interpolate(x, scale_factor=1.7).numpy()
    by_size = F.interpolate(x, size=8).numpy()
    assert by_scale.shape == by_size.shape and not np.array_equal(by_scale, by_size)
    assert by_scale.ravel().tolist() == [0, 0, 1, 1, 2, 2, 3, 4]  # ⌊o / 1.7⌋


def test_the_torch_1d_nearest_backward_difference_is_torchs(torch):
    """Where torch's nearest gradient differs from ours, torch's own gradcheck fails and ours is
    the transpose of the forward both share."""
    x = np.random.default_rng(2).standard_normal((1, 1, 3))
    op = lambda t: torch.nn.functional.interpolate(t, scale_factor=1.3)  # noqa: E731 (3 -> 3)
    with pytest.raises(Exception, match="Jacobian mismatch"):
        torch.autograd.gradcheck(op, torch.tensor(x, requires_grad=True))
    check_grad(lambda t: F.interpolate(t, scale_factor=1.3), x)
    assert F.interpolate(tensor(x), scale_factor=1.3).numpy().ravel().tolist() == \
        op(torch.tensor(x)).numpy().ravel().tolist()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(["bilinear", "bicubic"]), align_corners=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), by_size=st.booleans(),
       spatial=st.tuples(st.integers(1, 9), st.integers(1, 9)), data=st.data())
def test_antialias_matches_torch(torch, mode, align_corners, dtype, by_size, spatial, data):
    """antialias=True: every input cell under the stretched filter is blended in. Left out: an
    output of width 1 (torch 2.13's forward then repeats one value down the column) and, for the
    gradient, an axis a scale_factor leaves at its size (torch's forward copies it, its
    backward does not)."""
    kwargs = dict(mode=mode, align_corners=align_corners, antialias=True)
    if by_size:
        kwargs["size"] = data.draw(st.tuples(st.integers(1, 12), st.integers(2, 12)))
        out = kwargs["size"]
    else:
        kwargs["scale_factor"] = data.draw(st.tuples(*[st.sampled_from(SCALES)] * 2))
        out = tuple(int(n * s) for n, s in zip(spatial, kwargs["scale_factor"]))
        if min(out) < 1 or out[1] == 1:
            return
        if any(o == n for o, n in zip(out, spatial)) and kwargs["scale_factor"] != (1.0, 1.0):
            x = np.random.default_rng(0).standard_normal((1, 2) + spatial).astype(dtype)
            np.testing.assert_allclose(
                F.interpolate(tensor(x), **kwargs).numpy(),
                torch.nn.functional.interpolate(torch.tensor(x), **kwargs).numpy(),
                **TOLERANCES[dtype])
            return
    assert_parity(torch, np.random.default_rng(0).standard_normal((1, 2) + spatial), dtype,
                  **kwargs)


@pytest.mark.parametrize("mode,dims", [(m, d) for m, ds in MODES.items() for d in ds])
def test_finite_differences(mode, dims):
    shape = (1, 2) + (4, 3, 5)[:dims]
    x = np.random.default_rng(3).standard_normal(shape)
    extra = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": dims == 2}
    check_grad(lambda t: F.interpolate(t, scale_factor=1.5 if mode != "area" else 0.5, mode=mode,
                                       **extra), x)
    check_grad(lambda t: F.interpolate(t, size=(3, 7, 2)[:dims], mode=mode, **extra), x)
    if mode in ("bilinear", "bicubic"):
        check_grad(lambda t: F.interpolate(t, size=(2, 7), mode=mode, antialias=True, **extra), x)


def test_double_backward_is_the_op_again():
    """The gradient of interpolate's backward with respect to the upstream gradient is the
    forward itself: Σ dir · Aᵀ w differentiated by w is A dir."""
    rng = np.random.default_rng(4)
    x = tensor(rng.standard_normal((1, 1, 4, 5)), requires_grad=True)
    y = F.interpolate(x, scale_factor=1.7, mode="bicubic")
    w = tensor(rng.standard_normal(y.shape), requires_grad=True)
    (g,) = autograd.grad(y, [x], grad_outputs=[w], create_graph=True)
    direction = rng.standard_normal(x.shape)
    (g * tensor(direction)).sum().backward()
    expected = F.interpolate(tensor(direction), scale_factor=1.7, mode="bicubic").numpy()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_uint8_nearest_and_an_empty_batch(torch):
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    ours = F.interpolate(tensor(x), scale_factor=1.7, mode="nearest")
    assert ours.dtype == np.uint8
    np.testing.assert_array_equal(ours.numpy(), torch.nn.functional.interpolate(
        torch.tensor(x), scale_factor=1.7).numpy())
    assert F.interpolate(tensor(np.zeros((0, 2, 3, 3))), scale_factor=2).shape == (0, 2, 6, 6)


def test_inf_stays_in_the_cells_that_copy_it(torch):
    x = np.zeros((1, 1, 2, 2))
    x[0, 0, 0, 0] = np.inf
    for mode in ("nearest", "bilinear"):
        ours = F.interpolate(tensor(x), scale_factor=2, mode=mode).numpy()
        theirs = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=2, mode=mode).numpy()
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))


BAD = [
    (dict(), ValueError, "either size or scale_factor"),
    (dict(size=3, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (dict(size=3, align_corners=True), ValueError, "align_corners option can only be set"),
    (dict(size=3, mode="area", align_corners=False), ValueError, "align_corners option"),
    (dict(size=(3,), mode="bilinear"), ValueError, "same number of spatial dimensions"),
    (dict(scale_factor=(2, 3, 4)), ValueError, "same number of spatial dimensions"),
    (dict(size=3, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D"),
    (dict(size=3, mode="trilinear"), NotImplementedError, "trilinear mode needs 5D"),
    (dict(size=3, mode="bogus"), NotImplementedError, "Only 3D, 4D and 5D input"),
    (dict(size=0), RuntimeError, "Input and output sizes should be greater than 0"),
    (dict(scale_factor=0.1), RuntimeError, "Input and output sizes should be greater than 0"),
    (dict(size=-1), RuntimeError, "greater than 0"),
    (dict(size=(3.0, 2)), TypeError, "expected size to be one of int"),
    (dict(size=3, recompute_scale_factor=True), ValueError, "recompute_scale_factor is not"),
    (dict(scale_factor=2, antialias=True), ValueError, "Anti-alias option is restricted"),
    (dict(scale_factor=2, mode="lanczos"), ValueError, "Lanczos mode requires antialias=True"),
    (dict(scale_factor=2, mode="lanczos", antialias=True, align_corners=True), ValueError,
     "Lanczos mode does not support align_corners=True"),
    (dict(scale_factor=2, mode="bilinear", align_corners=1), TypeError, "align_corners"),
]


@pytest.mark.parametrize("kwargs,error,match", BAD)
def test_bad_arguments_raise_torchs_error_types(torch, kwargs, error, match):
    x = np.random.default_rng(5).standard_normal((1, 2, 4, 5)).astype(np.float32)
    with pytest.raises(error, match=match):
        F.interpolate(tensor(x), **kwargs)
    with pytest.raises(error):
        torch.nn.functional.interpolate(torch.tensor(x), **kwargs)


def test_bad_inputs(torch):
    for shape, kwargs, error in [((1, 2, 3), dict(size=3, mode="bilinear"), NotImplementedError),
                                 ((1, 2, 3), dict(size=3, mode="bicubic"), NotImplementedError),
                                 ((5,), dict(size=3), NotImplementedError),
                                 ((1, 0, 3, 3), dict(scale_factor=2), RuntimeError),
                                 ((1, 2, 0, 3), dict(scale_factor=2), RuntimeError)]:
        with pytest.raises(error):
            F.interpolate(tensor(np.zeros(shape, dtype=np.float32)), **kwargs)
        with pytest.raises(error):
            torch.nn.functional.interpolate(torch.zeros(shape), **kwargs)
    with pytest.raises(NotImplementedError, match="int64"):
        F.interpolate(tensor(np.zeros((1, 1, 2, 2), dtype=np.int64)), scale_factor=2,
                      mode="bilinear")
    with pytest.raises(NotImplementedError, match="docs/porting.md"):
        F.interpolate(tensor(np.zeros((1, 1, 2, 2))), scale_factor=2, mode="lanczos",
                      antialias=True)
    with pytest.raises(TypeError):
        F.interpolate(np.zeros((1, 1, 2, 2)), scale_factor=2)


# ---- modules and aliases ------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.Upsample(scale_factor=2), lambda m: m.Upsample(size=(3, 4), mode="bilinear"),
    lambda m: m.Upsample(scale_factor=(2, 3)), lambda m: m.Upsample(size=5, mode="linear"),
    lambda m: m.Upsample(scale_factor=1.5, mode="bicubic", align_corners=True),
    lambda m: m.UpsamplingNearest2d(scale_factor=2), lambda m: m.UpsamplingBilinear2d(size=3),
])
def test_modules_match_torchs_repr_and_output(torch, make):
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert (ours.size, ours.scale_factor, ours.mode, ours.align_corners) == (
        theirs.size, theirs.scale_factor, theirs.mode, theirs.align_corners)
    x = np.random.default_rng(6).standard_normal((1, 2, 5) if theirs.mode == "linear"
                                                  else (1, 2, 4, 5))
    np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [("upsample", dict(scale_factor=2, mode="bilinear")),
                                         ("upsample_nearest", dict(scale_factor=2)),
                                         ("upsample_bilinear", dict(size=(5, 3)))])
def test_deprecated_aliases_warn_as_torch_and_compute_the_same(torch, name, kwargs):
    x = np.random.default_rng(7).standard_normal((1, 1, 3, 4))
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated") as ours:
        out = getattr(F, name)(tensor(x), **kwargs)
    assert ours[0].filename == __file__  # pointed at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_the_graph_names_the_mode_and_size():
    x = tensor(np.ones((1, 1, 3, 3)), requires_grad=True)
    fn = F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True).grad_fn
    assert fn.name == "Interpolate"
    assert arguments(fn.attrs, fn) == ["mode='bilinear'", "size=(4, 4)",
                                       "scale_factor=(1.5, 1.5)", "align_corners=True"]
    assert arguments(F.interpolate(x, size=5).grad_fn.attrs, F.interpolate(x, size=5).grad_fn) \
        == ["mode='nearest'", "size=(5, 5)"]
