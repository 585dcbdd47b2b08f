"""dropout1d, dropout3d, alpha_dropout, feature_alpha_dropout and their Modules: whole channels,
the mask's statistics (fixed seeds; the mask is the package generator's, not torch's), torch's
exact scale and shift, the same mask in backward (and double backward), torch's rank rules,
warnings and errors, the eval / p = 0 / p = 1 / empty edge cases, inplace, and reprs."""
import warnings

import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.autograd as autograd
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import tensor

from helpers import check_grad

ALPHA = 1.7580993408473766  # torch's, in ATen's Dropout.cpp
CHANNEL_DROPOUTS = [("dropout1d", (8, 30, 5)), ("dropout1d", (30, 5)),
                    ("dropout3d", (4, 30, 2, 3, 2)), ("dropout3d", (30, 2, 3, 2)),
                    ("feature_alpha_dropout", (8, 30, 5)), ("feature_alpha_dropout", (8, 30, 2, 3))]
ALL = ["dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


def _generator(seed=0):
    return np.random.default_rng(seed)


def _shape_for(name):
    return {"dropout1d": (4, 6, 5), "dropout3d": (2, 3, 2, 3, 2)}.get(name, (4, 6, 5))


# ---- whole channels, and the fraction kept ------------------------------------------------------
@pytest.mark.parametrize("name, shape", CHANNEL_DROPOUTS, ids=str)
def test_channels_are_kept_or_dropped_whole(name, shape):
    x = tensor(np.ones(shape, np.float32))
    out = getattr(F, name)(x, 0.5, True, generator=_generator(3)).numpy()
    batched = len(shape) == {"dropout1d": 3, "dropout3d": 5}.get(name, len(shape))
    channel = out.reshape(shape[:2] + (-1,)) if batched else out.reshape(shape[:1] + (-1,))
    assert (channel == channel[..., :1]).all()  # one value per channel
    assert len(np.unique(channel[..., 0])) == 2  # some kept, some dropped


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_the_fraction_dropped_is_p(name, p):
    shape = {"dropout1d": (400, 500, 1), "dropout3d": (400, 500, 1, 1, 1)}.get(name, (400, 500))
    x = tensor(np.full(shape, 3.0, np.float32))
    out = getattr(F, name)(x, p, True, generator=_generator(1)).numpy()
    dropped = (out == out.min()).mean() if "alpha" in name else (out == 0).mean()
    # binomial standard deviation sqrt(p (1-p) / 200000) < 0.0012: 0.006 is five of them
    assert abs(dropped - p) < 0.006


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.7])
@pytest.mark.parametrize("name", ["dropout1d", "dropout3d"])
def test_kept_channels_scale_exactly_as_torch(torch, rng, name, p, dtype):
    shape = {"dropout1d": (4, 20, 5), "dropout3d": (4, 20, 2, 2, 2)}[name]
    x = rng.uniform(0.5, 2.0, shape).astype(dtype)
    out = getattr(F, name)(tensor(x), p, True, generator=_generator()).numpy()
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), p, True).numpy()
    both = (out != 0) & (theirs != 0)
    assert out.dtype == dtype and both.any()
    # its mask differs, its arithmetic must not: x · (1 / (1 - p)) in the dtype, bit for bit
    np.testing.assert_array_equal(out[both], theirs[both])
    np.testing.assert_array_equal(out[out != 0], x[out != 0] * (dtype(1) / dtype(1 - p)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_values_are_torch_s(torch, name, p, dtype):
    """For a constant input the output takes torch's two values exactly: x·a + α·a·p where kept,
    -α·a·(1 - p) where dropped."""
    x = np.full((40, 50, 2), 1.25, dtype)
    ours = np.unique(getattr(F, name)(tensor(x), p, True, generator=_generator()).numpy())
    theirs = np.unique(getattr(torch.nn.functional, name)(torch.tensor(x), p, True).numpy())
    np.testing.assert_array_equal(ours, theirs)
    a = 1 / np.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
    np.testing.assert_allclose(ours, sorted([-ALPHA * a * (1 - p), 1.25 * a + ALPHA * a * p]),
                               rtol=1e-6)
    assert ours.dtype == dtype


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_keeps_mean_and_variance_of_a_standard_normal(p):
    x = tensor(_generator(5).standard_normal(400_000))
    out = F.alpha_dropout(x, p, True, generator=_generator(6)).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01


# ---- gradients: the same mask, once and twice -------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_backward_passes_the_gradient_where_forward_kept(rng, name):
    x = tensor(rng.uniform(0.5, 2.0, _shape_for(name)), requires_grad=True)
    p = 0.4
    out = getattr(F, name)(x, p, True, generator=_generator(2))
    out.backward(tensor(np.ones(x.shape)))
    if "alpha" in name:
        a = 1 / np.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
        kept = out.detach().numpy() != out.detach().numpy().min()
        np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0), rtol=1e-14)
    else:
        kept = out.detach().numpy() != 0
        np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / (1 - p), 0.0), rtol=1e-14)
    assert 0 < kept.mean() < 1


@pytest.mark.parametrize("name", ALL)
def test_gradcheck_with_a_fixed_mask(rng, name):
    # a fresh generator of the same seed on every call: the same mask for every evaluation
    check_grad(lambda t: getattr(F, name)(t, 0.3, True, generator=_generator(4)),
               rng.standard_normal(_shape_for(name)))


@pytest.mark.parametrize("name", ALL)
def test_double_backward_is_the_mask_again(rng, name):
    """out is linear in x: ∂²/∂x² = 0, and ∂(grad · v)/∂w = mask · scale · v."""
    x = tensor(rng.standard_normal(_shape_for(name)), requires_grad=True)
    out = getattr(F, name)(x * x, 0.5, True, generator=_generator(7))
    w = tensor(rng.standard_normal(out.shape), requires_grad=True)
    (g,) = autograd.grad(out, [x], grad_outputs=w, create_graph=True)
    v = rng.standard_normal(x.shape)
    dx, dw = autograd.grad((g * tensor(v)).sum(), [x, w])
    first_order = g.detach().numpy() / (2 * x.detach().numpy() * w.detach().numpy())  # mask·scale
    np.testing.assert_allclose(dw.numpy(), first_order * 2 * x.detach().numpy() * v, rtol=1e-12)
    np.testing.assert_allclose(dx.numpy(), first_order * 2 * w.detach().numpy() * v, rtol=1e-12)


# ---- edge cases, as torch's ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_eval_p_zero_and_empty_return_the_input_itself(rng, name):
    x = tensor(rng.standard_normal(_shape_for(name)))
    assert getattr(F, name)(x, 0.5, False) is x
    assert getattr(F, name)(x, 0.0, True) is x
    empty = tensor(np.ones((0,) + _shape_for(name)[1:]))
    assert getattr(F, name)(empty, 0.5, True) is empty


def test_alpha_dropouts_default_to_eval_as_torch_s(rng):
    x = tensor(rng.standard_normal((3, 4)))
    assert F.alpha_dropout(x) is x and F.feature_alpha_dropout(x) is x


@pytest.mark.parametrize("name", ALL)
def test_p_one_gives_zeros_and_keeps_nans(torch, name):
    x = np.ones(_shape_for(name))
    x.flat[0] = np.nan
    ours = getattr(F, name)(tensor(x), 1.0, True).numpy()
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), 1.0, True).numpy()
    np.testing.assert_array_equal(ours, theirs)  # (NaN · 0 is NaN, as torch's)


@pytest.mark.parametrize("shape", [(4,), (1, 2, 3, 4)], ids=str)
def test_dropout1d_refuses_other_ranks_even_in_eval(torch, shape):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.dropout1d(torch.ones(shape), training=False)
    with pytest.raises(RuntimeError) as ours:
        F.dropout1d(tensor(np.ones(shape)), training=False)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(4,), (5, 4), (30, 4, 5), (2, 2, 2, 2, 2, 2)], ids=str)
def test_dropout3d_warns_as_torch_and_takes_axis_0_as_channels(torch, shape):
    with pytest.warns(UserWarning) as ours:
        out = F.dropout3d(tensor(np.ones(shape, np.float32)), 0.5, generator=_generator(9))
    with pytest.warns(UserWarning) as theirs:
        torch.nn.functional.dropout3d(torch.ones(shape), 0.5)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    per_channel = out.numpy().reshape(shape[0], -1)
    if len(shape) > 1:  # (one unbatched sample: a 1-D input drops elements)
        assert (per_channel == per_channel[:, :1]).all()


def test_dropout3d_of_a_scalar_fails_in_training_only(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            torch.nn.functional.dropout3d(torch.tensor(1.0))
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            F.dropout3d(tensor(1.0))
        x = tensor(1.0)
        assert F.dropout3d(x, training=False) is x


def test_feature_alpha_dropout_needs_two_dimensions_in_training(torch):
    with pytest.raises(RuntimeError):
        torch.nn.functional.feature_alpha_dropout(torch.ones(3), 0.5, True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(tensor(np.ones(3)), 0.5, True)


def test_4d_and_5d_inputs_to_dropout3d_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout3d(tensor(np.ones((2, 3, 2, 2, 2))), 0.5)
        F.dropout3d(tensor(np.ones((3, 2, 2, 2))), 0.5)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("call", ["p=-0.1", "p=1.5", "p=float('nan')", "p=0.5, training=1"])
def test_bad_arguments_raise_torch_s_errors(torch, name, call):
    shape = _shape_for(name)
    with pytest.raises(Exception) as theirs:
        eval(f"fn(x, {call})", dict(fn=getattr(torch.nn.functional, name),
                                    x=torch.ones(shape)))
    with pytest.raises(Exception) as ours:
        eval(f"fn(x, {call})", dict(fn=getattr(F, name), x=tensor(np.ones(shape))))
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


@pytest.mark.parametrize("name", ALL)
def test_integers_are_refused_in_training_and_passed_in_eval(torch, name):
    x = tensor(np.ones(_shape_for(name), np.int64))
    with pytest.raises(RuntimeError):
        getattr(torch.nn.functional, name)(torch.ones(_shape_for(name), dtype=torch.int64), 0.5,
                                           True)
    with pytest.raises(RuntimeError, match="floating-point"):
        getattr(F, name)(x, 0.5, True)
    assert getattr(F, name)(x, 0.5, False) is x


@pytest.mark.parametrize("name", ALL)
def test_inplace_writes_into_the_input(rng, name):
    x = tensor(rng.uniform(0.5, 2.0, _shape_for(name)))
    out = getattr(F, name)(x, 0.5, True, inplace=True, generator=_generator(1))
    assert out is x
    again = getattr(F, name)(tensor(x.numpy()), 0.0, True)
    np.testing.assert_array_equal(again.numpy(), x.numpy())
    assert (x.numpy() == x.numpy().min()).any()  # something was dropped


@pytest.mark.parametrize("name", ALL)
def test_draws_come_from_the_package_generator(name):
    x = tensor(np.ones(_shape_for(name)))
    tinygrad_pool.manual_seed(11)
    first = getattr(F, name)(x, 0.5, True).numpy()
    tinygrad_pool.manual_seed(11)
    np.testing.assert_array_equal(getattr(F, name)(x, 0.5, True).numpy(), first)


# ---- the Modules --------------------------------------------------------------------------------
@pytest.mark.parametrize("build", ["Dropout1d()", "Dropout3d(0.2, True)", "AlphaDropout()",
                                   "FeatureAlphaDropout(0)", "AlphaDropout(p=0.25, inplace=True)"])
def test_module_reprs_are_torch_s(torch, build):
    assert repr(eval(f"nn.{build}")) == repr(eval(f"torch.nn.{build}"))


@pytest.mark.parametrize("module, name", [("Dropout1d", "dropout1d"), ("Dropout3d", "dropout3d"),
                                          ("AlphaDropout", "alpha_dropout"),
                                          ("FeatureAlphaDropout", "feature_alpha_dropout")])
def test_modules_drop_in_training_and_pass_through_in_eval(rng, module, name):
    x = tensor(rng.uniform(0.5, 2.0, _shape_for(name)))
    layer = getattr(nn, module)(0.5, generator=_generator(3))
    out = layer(x).numpy()
    np.testing.assert_array_equal(out, getattr(F, name)(x, 0.5, True,
                                                       generator=_generator(3)).numpy())
    assert layer.eval()(x) is x


@pytest.mark.parametrize("module", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_modules_ignore_inplace_as_torch_s(torch, module):
    x = tensor(np.ones((4, 5, 3)))
    out = getattr(nn, module)(0.5, inplace=True)(x)
    assert out is not x and (x.numpy() == 1).all()
    tx = torch.ones(4, 5, 3)
    assert getattr(torch.nn, module)(0.5, inplace=True)(tx) is not tx


@pytest.mark.parametrize("module", ["Dropout1d", "Dropout3d", "AlphaDropout",
                                    "FeatureAlphaDropout"])
def test_modules_refuse_bad_p(torch, module):
    with pytest.raises(ValueError):
        getattr(torch.nn, module)(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(nn, module)(1.5)
