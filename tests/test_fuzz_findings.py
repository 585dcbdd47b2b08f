"""What the parity fuzz (tests/test_fuzz.py) found, pinned down: torch's warnings and messages
for var/std, the extremes and norm of empty tensors, norm's second derivative at 0, reshape and
permute without sizes, an empty list index, smooth_l1/huber at |input - target| = beta."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_pool
import tinygrad_pool.nn.functional as F


# ---- test_reduce.py ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dim, correction, warns", [
    ((0,), None, 1, True), ((1,), None, 1, True), ((3,), 0, 3, True), ((3,), 0, 2.5, False),
    ((0, 3), 1, 1, True),  # an empty output: torch counts N = 0
    ((0, 3), 0, -1, False), ((3, 4), (), 3, False), ((3, 4), 0, 3, True), ((), 0, 1, True)])
def test_var_warns_where_torch_does(shape, dim, correction, warns):
    for op in ("var", "std"):
        seen = []
        for module in (torch, tinygrad_pool):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = getattr(module.zeros(shape, dtype=module.float64), op)(dim, correction=correction)
            seen.append([(w.category, str(w.message).split(" (")[0]) for w in caught])
            assert all(w.filename == __file__ for w in caught)  # the user's line, as torch's
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected_shape = torch.zeros(shape).var(dim, correction=correction).shape
            assert out.shape == expected_shape
        assert seen[0] == seen[1] and bool(seen[1]) == warns
        assert not warns or seen[1][0][1].startswith(f"{op}(): degrees of freedom is <= 0")


def test_var_of_nothing_is_nan_without_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        x = tinygrad_pool.zeros(0, dtype=tinygrad_pool.float64, requires_grad=True)
        out = x.var(correction=-1)  # torch: nan, whatever the correction
        assert math.isnan(out.item())
        out.backward()
        assert x.grad.shape == (0,)


@pytest.mark.parametrize("name", ["amax", "amin", "argmax", "argmin", "max", "min"])
def test_extremes_over_an_empty_dim_are_index_errors(name):
    x = tinygrad_pool.zeros(0, 3)
    with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 0 to have non-zero size"):
        getattr(x, name)(0)
    result = getattr(x, name)(1)  # another dim of an empty tensor: an empty result
    assert (result.values if name in ("max", "min") else result).shape == (0,)


@pytest.mark.parametrize("p", [-1, -0.5, math.inf, -math.inf])
def test_norm_without_identity_over_nothing_is_a_runtime_error(p):
    with pytest.raises(RuntimeError, match=rf"cannot compute the {p:g} norm on the dimension 0"):
        tinygrad_pool.zeros(0, 3).norm(p, 0)
    with pytest.raises(RuntimeError, match=rf"cannot compute the {p:g} norm on an empty tensor"):
        tinygrad_pool.zeros(0, 3).norm(p)
    assert tinygrad_pool.zeros(0, 3).norm(p, 1).shape == (0,)  # other dims: an empty result


def test_norm_second_derivative_at_zero_is_nan_as_torch():
    for p in ("fro", 2, 3, 0.5):
        results = []
        for module in (torch, tinygrad_pool):
            x = module.zeros(3, dtype=module.float64, requires_grad=True)
            g, = module.autograd.grad(x.norm(p), x, create_graph=True)
            results.append(module.autograd.grad(g.sum(), x, allow_unused=True)[0])
        assert (results[0] is None) == (results[1] is None)
        if results[0] is not None:
            np.testing.assert_array_equal(results[1].numpy(), results[0].numpy())


# ---- test_movement.py --------------------------------------------------------------------------
def test_reshape_permute_view_expand_need_their_sizes():
    x = tinygrad_pool.tensor(1.0)
    for call, name in ((x.reshape, "shape"), (x.view, "shape"), (x.expand, "size"),
                       (x.permute, "dims")):
        with pytest.raises(TypeError, match=f'missing 1 required positional arguments: "{name}"'):
            call()
        assert call(()).shape == ()  # the 0-d spelling
    assert x.reshape_as(tinygrad_pool.tensor(2.0)).shape == ()


def test_an_empty_list_index_selects_nothing():
    x = tinygrad_pool.ones(3, 2, requires_grad=True)
    assert x[[]].shape == (0, 2) and x[:, []].shape == (3, 0) and x[[]].dtype == x.dtype
    x[[]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 2)))


# ---- test_loss.py ------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["smooth_l1_loss", "huber_loss"])
def test_smooth_l1_at_beta_takes_torchs_branches(loss):
    inf, nan = math.inf, math.nan
    values = [1.0, -1.0, 0.5, -3.0, 0.0, nan, inf, -inf]
    results = []
    for module, functional in ((torch, torch.nn.functional), (tinygrad_pool, F)):
        x = module.tensor(values, dtype=module.float64, requires_grad=True)
        out = getattr(functional, loss)(x, module.zeros(len(values), dtype=module.float64),
                                        reduction="sum")
        g, = module.autograd.grad(out, x, create_graph=True)
        h, = module.autograd.grad(g.sum(), x)
        results.append([np.asarray(t.detach().numpy() if module is torch else t.numpy())
                         for t in (g, h)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_array_equal(ours, theirs)
