"""dropout, dropout2d and their modules: statistics of the mask, exact scaling, the same mask in
backward, eval = identity, p = 0 and p = 1, whole channels for dropout2d."""
import warnings

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.dropout import Dropout, Dropout2d
from tinygrad_pool.ops.dropout import dropout, dropout2d

from helpers import check_grad


def _generator(seed=0):
    return np.random.default_rng(seed)


def _nonzero(rng, shape, dtype=np.float32):
    """Values bounded away from 0, so that a zero in the output can only be the mask's."""
    values = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1, 1], size=shape)
    return values.astype(dtype)


# ---- the mask's statistics and the scaling ----------------------------------------------------
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_keeps_a_fraction_one_minus_p(p):
    x = tensor(np.ones(200_000, np.float32))
    kept = (dropout(x, p, generator=_generator(1)).numpy() != 0).mean()
    # binomial standard deviation sqrt(p (1-p) / n) < 0.0012: 0.006 is five of them
    assert abs(kept - (1 - p)) < 0.006


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.7])
def test_dropout_scales_kept_elements_exactly_as_torch(torch, rng, p, dtype):
    x = _nonzero(rng, (50, 40), dtype)
    out = dropout(tensor(x), p, generator=_generator()).numpy()
    kept = out != 0
    assert out.dtype == dtype
    np.testing.assert_array_equal(out[~kept], 0)
    # torch's kept value for the same input: its mask differs, its arithmetic must not
    torch_out = torch.nn.functional.dropout(torch.from_numpy(x), p).numpy()
    torch_kept = torch_out != 0
    both = kept & torch_kept
    assert both.any()
    np.testing.assert_array_equal(out[both], torch_out[both])  # bit for bit
    np.testing.assert_array_equal(out[kept], x[kept] * (dtype(1) / dtype(1 - p)))


def test_dropout_backward_uses_the_forward_mask(rng):
    x = tensor(_nonzero(rng, (30, 20)), requires_grad=True)
    out = dropout(x, 0.4, generator=_generator(3))
    saved = out.grad_fn.saved_for_backward()["mask"]
    kept = out.numpy() != 0
    np.testing.assert_array_equal(saved, kept)  # saved on the node as ``mask``
    weights = rng.standard_normal(x.shape).astype(np.float32)
    out.backward(weights)
    scale = np.float32(1) / np.float32(0.6)
    np.testing.assert_array_equal(x.grad.numpy(), weights * (kept * scale))
    np.testing.assert_array_equal(x.grad.numpy() != 0, kept)


def test_dropout_gradcheck_with_a_fixed_mask(rng):
    # a fresh generator with the same seed per call: the same mask at every evaluation
    check_grad(lambda x: dropout(x, 0.3, generator=_generator(5)), rng.standard_normal((4, 5)))
    check_grad(lambda x: dropout2d(x, 0.5, generator=_generator(5)),
               rng.standard_normal((3, 4, 2, 2)))


def test_dropout_double_backward_is_the_same_mask_again(rng):
    x = tensor(_nonzero(rng, (6, 5), np.float64), requires_grad=True)
    out = dropout(x, 0.5, generator=_generator(2))
    (grad,) = tinygrad_pool.autograd.grad((out * out).sum(), [x], create_graph=True)
    grad.sum().backward()
    kept = out.numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), 2 * kept * 2.0 * 2.0)  # d/dx Σ 2 (m s)² x


def test_dropout_draws_from_the_default_generator():
    x = tensor(np.ones((20, 20), np.float32))
    tinygrad_pool.manual_seed(7)
    first = dropout(x).numpy()
    second = dropout(x).numpy()
    tinygrad_pool.manual_seed(7)
    np.testing.assert_array_equal(dropout(x).numpy(), first)
    assert not np.array_equal(first, second)


# ---- the special cases ------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [dropout, dropout2d])
def test_eval_and_p_zero_return_the_input_itself(rng, fn):
    x = tensor(rng.standard_normal((2, 3, 4, 4)), requires_grad=True)
    assert fn(x, 0.5, training=False) is x
    assert fn(x, 0.0) is x
    assert fn(x, 0.0, inplace=True) is x
    ints = tensor(np.arange(6).reshape(1, 2, 3, 1))
    assert fn(ints, 0.5, training=False) is ints


@pytest.mark.parametrize("fn", [dropout, dropout2d])
def test_p_one_gives_zeros_and_zero_gradient(fn):
    x = tensor(np.array([[[[np.nan, 1.0], [2.0, -3.0]]]]), requires_grad=True)
    out = fn(x, 1.0)
    # x times 0, as torch: zeros, and a NaN stays NaN (torch gives the same)
    np.testing.assert_array_equal(out.numpy(), [[[[np.nan, 0.0], [0.0, -0.0]]]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0)


def test_dropout_of_an_empty_tensor_is_the_tensor():
    x = tensor(np.zeros((0, 3), np.float32))
    assert dropout(x, 0.5) is x


def test_dropout_inplace_writes_into_the_input(rng):
    base = tensor(_nonzero(rng, (8, 9), np.float64), requires_grad=True)
    x = base * 1.0  # not a leaf: in-place is allowed
    before = x.numpy().copy()
    out = dropout(x, 0.5, inplace=True, generator=_generator(4))
    assert out is x and x._version == 1
    kept = x.numpy() != 0
    np.testing.assert_array_equal(x.numpy(), before * kept * 2.0)
    x.sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), kept * 2.0)
    plain = tensor(np.ones((3, 3), np.float32))  # no graph: written in place, version bumped
    dropout(plain, 0.5, inplace=True)
    assert plain._version == 1 and set(np.unique(plain.numpy())) <= {0.0, 2.0}


def test_dropout_inplace_on_a_leaf_that_requires_grad_is_refused():
    x = tensor(np.ones(4, np.float32), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        dropout(x, 0.5, inplace=True)
    np.testing.assert_array_equal(x.numpy(), 1)


# ---- dropout2d: whole channels ----------------------------------------------------------------
def test_dropout2d_zeroes_whole_channels(rng):
    x = tensor(_nonzero(rng, (40, 50, 3, 4)), requires_grad=True)
    p = 0.3
    out = dropout2d(x, p, generator=_generator(6))
    kept = out.numpy() != 0
    per_channel = kept.reshape(40, 50, -1)
    assert (per_channel.all(axis=2) | ~per_channel.any(axis=2)).all()  # all or nothing
    channel_kept = per_channel[..., 0]
    assert abs(channel_kept.mean() - (1 - p)) < 0.05  # 2000 channels: sd ~ 0.01
    scale = np.float32(1) / np.float32(1 - p)
    np.testing.assert_array_equal(out.numpy(), x.numpy() * (kept * scale))
    assert out.grad_fn.saved_for_backward()["mask"].shape == (40, 50, 1, 1)
    out.backward(np.ones(x.shape, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), kept * scale)


def test_dropout2d_warns_as_torch_for_3d_input_and_drops_along_channels(torch):
    x = tensor(np.ones((6, 30, 5), np.float32))
    with pytest.warns(UserWarning) as ours:
        out = dropout2d(x, 0.5, generator=_generator(8))
    with pytest.warns(UserWarning) as theirs:
        torch.nn.functional.dropout2d(torch.ones(6, 30, 5), 0.5)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert "assuming that channel-wise 1D dropout" in str(ours[0].message)
    kept = out.numpy() != 0
    assert (kept.all(axis=2) | ~kept.any(axis=2)).all()  # (N, C, L): whole rows of L
    assert 0 < kept.mean() < 1


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4, 5, 6)], ids=str)
def test_dropout2d_warns_as_torch_for_other_ranks(torch, shape):
    with pytest.warns(UserWarning) as ours:
        dropout2d(tensor(np.ones(shape, np.float32)), 0.5)
    with pytest.warns(UserWarning) as theirs:
        torch.nn.functional.dropout2d(torch.ones(shape), 0.5)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_dropout2d_of_1d_input_fails_in_training_only():
    x = tensor(np.ones(3, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"at least 2 dimensions.*\(3,\)"):
            dropout2d(x, 0.5)
        assert dropout2d(x, 0.5, training=False) is x


def test_dropout2d_4d_input_does_not_warn(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dropout2d(tensor(np.ones((2, 3, 4, 4), np.float32)), 0.5)


# ---- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [dropout, dropout2d])
@pytest.mark.parametrize("p,error,message", [
    (-0.1, ValueError, "dropout probability has to be between 0 and 1, but got -0.1"),
    (1.5, ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    (float("nan"), RuntimeError, "between 0 and 1, but got nan"),
    ("0.5", TypeError, "p must be a number, got str"),
])
def test_bad_p_is_refused(fn, p, error, message):
    x = tensor(np.ones((2, 3, 4, 4), np.float32))
    with pytest.raises(error, match=message):
        fn(x, p)
    with pytest.raises(error, match=message):
        fn(x, p, training=False)  # checked in eval too, as torch


def test_dropout_of_integers_in_training_is_refused():
    with pytest.raises(RuntimeError, match="floating-point.*int64"):
        dropout(tensor(np.arange(4)), 0.5)


# ---- modules ----------------------------------------------------------------------------------
@pytest.mark.parametrize("module", [Dropout, Dropout2d])
def test_modules_drop_in_training_and_pass_through_in_eval(module):
    layer = module(0.5, generator=_generator(9))
    x = tensor(np.ones((4, 8, 3, 3), np.float32))
    out = layer(x)
    assert 0 < (out.numpy() == 0).mean() < 1 and set(np.unique(out.numpy())) == {0.0, 2.0}
    layer.eval()
    assert layer(x) is x
    layer.train()
    assert layer(x) is not x


def test_module_inplace(rng):
    base = tensor(np.ones((5, 5), np.float32), requires_grad=True)
    x = base * 1
    assert Dropout(0.5, inplace=True)(x) is x and x._version == 1


@pytest.mark.parametrize("args", [(), (0.2,), (0.2, True), (0,)], ids=str)
def test_module_repr_matches_torch(torch, args):
    assert repr(Dropout(*args)) == repr(torch.nn.Dropout(*args))
    assert repr(Dropout2d(*args)) == repr(torch.nn.Dropout2d(*args))


@pytest.mark.parametrize("module", [Dropout, Dropout2d])
def test_module_rejects_bad_p(module):
    with pytest.raises(ValueError, match="between 0 and 1, but got 2"):
        module(2)


def test_modules_have_no_state():
    assert list(Dropout().state_dict()) == [] and list(Dropout2d().parameters()) == []
