"""The second wave of normalizations and distances (ops/normalization.py, nn/normalization.py,
nn/distance.py): group_norm, instance_norm (with running statistics), local_response_norm,
normalize, cosine_similarity and pairwise_distance — against torch in float32 and float64
(forward, every input's gradient, second derivatives through a create_graph backward), over
random shapes; finite differences; modules' reprs, parameters, buffers and modes; torch's errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import autograd, tensor
from tinygrad_pool import nn
import tinygrad_pool.nn.functional as F

from helpers import check_grad

# float32: absolute, relative to the largest gradient compared (and at least to the output
# gradient's, ~1): a standardization's gradient cancels terms of that size
TOLERANCES = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-9, atol=1e-11)}


def assert_parity(torch, ours_fn, torch_fn, arrays, dtype, seed=0, what=""):
    """Forward, every input's gradient and the second derivatives (d/d inputs and d/d the output
    gradient of Σ v · gradients), ours against torch's."""
    tol = TOLERANCES[dtype]
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    ours = [tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = ours_fn(*ours), torch_fn(torch, *theirs)
    assert yo.dtype == dtype and yo.shape == tuple(yt.shape), (what, yo.shape, yt.shape)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol, err_msg=f"{what} forward")
    weights = rng.standard_normal(yo.shape).astype(dtype)
    wo, wt = tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    go = autograd.grad(yo, ours, grad_outputs=[wo], create_graph=True, allow_unused=True)
    gt = torch.autograd.grad(yt, theirs, grad_outputs=[wt], create_graph=True, allow_unused=True)
    for a, b in zip(go, gt):
        scale = max(1.0, float(np.abs(b.detach().numpy()).max(initial=0.0)))
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=tol["rtol"],
                                   atol=tol["atol"] * scale, err_msg=f"{what} backward")
    directions = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    total_o = sum((g * tensor(d)).sum() for g, d in zip(go, directions))
    total_t = sum((g * torch.tensor(d)).sum() for g, d in zip(gt, directions))
    total_o.backward()
    total_t.backward()
    for o, t in zip(ours + [wo], theirs + [wt]):
        expected = np.zeros(o.shape) if t.grad is None else t.grad.numpy(force=True)
        got = np.zeros(o.shape) if o.grad is None else o.grad.numpy()
        scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
        np.testing.assert_allclose(got, expected, rtol=tol["rtol"], atol=tol["atol"] * scale * 5,
                                   err_msg=f"{what} second order")


def normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# name -> (ours, torch's, the input arrays)
CASES = {
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b),
                   lambda t, x, w, b: t.nn.functional.group_norm(x, 2, w, b),
                   [normal((3, 4, 5)), normal(4, 1), normal(4, 2)]),
    "group_norm_plain_4d": (lambda x: F.group_norm(x, 3, eps=1e-3),
                            lambda t, x: t.nn.functional.group_norm(x, 3, eps=1e-3),
                            [normal((2, 6, 3, 2))]),
    "group_norm_2d": (lambda x: F.group_norm(x, 1), lambda t, x: t.nn.functional.group_norm(x, 1),
                      [normal((3, 4))]),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                      lambda t, x, w, b: t.nn.functional.instance_norm(x, weight=w, bias=b),
                      [normal((2, 3, 5)), normal(3, 1), normal(3, 2)]),
    "instance_norm_2d": (lambda x: F.instance_norm(x, eps=1e-2),
                         lambda t, x: t.nn.functional.instance_norm(x, eps=1e-2),
                         [normal((2, 3, 4, 2))]),
    "local_response_norm": (lambda x: F.local_response_norm(x, 3, alpha=0.5, beta=0.6, k=2.0),
                            lambda t, x: t.nn.functional.local_response_norm(x, 3, 0.5, 0.6, 2.0),
                            [normal((2, 5, 4))]),
    "local_response_norm_4d_even": (lambda x: F.local_response_norm(x, 2, alpha=1.0),
                                    lambda t, x: t.nn.functional.local_response_norm(x, 2, 1.0),
                                    [normal((2, 4, 3, 2))]),
    "normalize": (lambda x: F.normalize(x), lambda t, x: t.nn.functional.normalize(x),
                  [normal((3, 4, 2))]),
    "normalize_p1_last": (lambda x: F.normalize(x, p=1.0, dim=-1),
                          lambda t, x: t.nn.functional.normalize(x, p=1.0, dim=-1),
                          [normal((3, 4))]),
    "normalize_p3": (lambda x: F.normalize(x, p=3, dim=0),
                     lambda t, x: t.nn.functional.normalize(x, p=3, dim=0), [normal((3, 4))]),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b),
                          lambda t, a, b: t.nn.functional.cosine_similarity(a, b),
                          [normal((3, 4, 2)), normal((3, 4, 2), 1)]),
    "cosine_similarity_broadcast": (lambda a, b: F.cosine_similarity(a, b, dim=-1),
                                    lambda t, a, b: t.nn.functional.cosine_similarity(a, b, dim=-1),
                                    [normal((3, 4)), normal((1, 4), 1)]),
    "pairwise_distance": (lambda a, b: F.pairwise_distance(a, b),
                          lambda t, a, b: t.nn.functional.pairwise_distance(a, b),
                          [normal((3, 4)), normal((3, 4), 1)]),
    "pairwise_distance_p1_keepdim": (
        lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True),
        lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=1.0, keepdim=True),
        [normal((2, 3, 4)), normal(4, 1)]),
    "pairwise_distance_p3_1d": (lambda a, b: F.pairwise_distance(a, b, p=3.0),
                                lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=3.0),
                                [normal(5), normal(5, 1)]),
    "GroupNorm": (lambda x: nn.GroupNorm(2, 4, dtype=x.dtype)(x),
                  lambda t, x: t.nn.GroupNorm(2, 4, dtype=x.dtype)(x), [normal((2, 4, 3))]),
    "InstanceNorm1d_unbatched": (lambda x: nn.InstanceNorm1d(3)(x),
                                 lambda t, x: t.nn.InstanceNorm1d(3)(x), [normal((3, 5))]),
    "InstanceNorm2d": (lambda x: nn.InstanceNorm2d(3)(x), lambda t, x: t.nn.InstanceNorm2d(3)(x),
                       [normal((2, 3, 2, 3))]),
    "LocalResponseNorm": (lambda x: nn.LocalResponseNorm(2, 0.1)(x),
                          lambda t, x: t.nn.LocalResponseNorm(2, 0.1)(x), [normal((2, 3, 4))]),
    "CosineSimilarity": (lambda a, b: nn.CosineSimilarity(0)(a, b),
                         lambda t, a, b: t.nn.CosineSimilarity(0)(a, b),
                         [normal((3, 4)), normal((3, 4), 1)]),
    "PairwiseDistance": (lambda a, b: nn.PairwiseDistance(1.5)(a, b),
                         lambda t, a, b: t.nn.PairwiseDistance(1.5)(a, b),
                         [normal((3, 4)), normal((3, 4), 1)]),
}
NAMES = sorted(CASES)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_to_second_order(torch, name, dtype):
    ours, theirs, arrays = CASES[name]
    assert_parity(torch, ours, theirs, arrays, dtype, what=name)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name):
    ours, _, arrays = CASES[name]
    check_grad(ours, *arrays)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), groups=st.integers(1, 3), per_group=st.integers(1, 3),
       spatial=st.lists(st.integers(1, 3), max_size=2), affine=st.booleans(),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_group_norm_over_shapes(n, groups, per_group, spatial, affine, seed, double):
    torch = pytest.importorskip("torch")
    channels = groups * per_group
    if per_group * int(np.prod(spatial)) < 3:
        # (one value per group: its variance is 0, x̂ is 0/√ε; two: x̂ is ±1, and the float32
        # second derivative cancels terms far larger than itself)
        spatial = [3] + spatial
    arrays = [normal((n, channels, *spatial), seed)]
    if affine:
        arrays += [normal(channels, seed + 1), normal(channels, seed + 2)]
    assert_parity(torch, lambda x, *wb: F.group_norm(x, groups, *wb),
                  lambda t, x, *wb: t.nn.functional.group_norm(x, groups, *wb), arrays,
                  np.float64 if double else np.float32, seed, what="group_norm")


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), dim=st.integers(-4, 3),
       p=st.sampled_from([1.0, 2.0, 3.0]), seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_normalize_and_cosine_similarity_over_shapes(shape, dim, p, seed, double):
    torch = pytest.importorskip("torch")
    dim = dim % len(shape)
    dtype = np.float64 if double else np.float32
    # (magnitudes from 0.5: near 0, float32's rounding of terms ~ 1/x² that cancel in the
    # second derivative outgrows any fixed tolerance, in torch's and ours alike)
    x, y = (np.sign(v) * (np.abs(v) + 0.5) for v in (normal(tuple(shape), seed),
                                                      normal(tuple(shape), seed + 1)))
    assert_parity(torch, lambda a: F.normalize(a, p, dim),
                  lambda t, a: t.nn.functional.normalize(a, p, dim), [x], dtype, seed,
                  what="normalize")
    assert_parity(torch, lambda a, b: F.cosine_similarity(a, b, dim),
                  lambda t, a, b: t.nn.functional.cosine_similarity(a, b, dim), [x, y], dtype,
                  seed, what="cosine_similarity")
    assert_parity(torch, lambda a, b: F.pairwise_distance(a, b, p),
                  lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p), [x, y], dtype,
                  seed, what="pairwise_distance")


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 6), spatial=st.lists(st.integers(1, 3), min_size=1,
       max_size=2), size=st.integers(1, 7), seed=st.integers(0, 2 ** 16))
def test_local_response_norm_over_shapes(n, c, spatial, size, seed):
    torch = pytest.importorskip("torch")
    assert_parity(torch, lambda x: F.local_response_norm(x, size, 0.3, 0.75, 1.0),
                  lambda t, x: t.nn.functional.local_response_norm(x, size, 0.3, 0.75, 1.0),
                  [normal((n, c, *spatial), seed)], np.float64, seed, what="lrn")


def test_zero_vectors_as_torch(torch):
    """The clamp at eps: normalize's gradient through clamp (0 past it... as torch's composition),
    cosine_similarity's norms clamped in value but not in gradient, as torch's."""
    zeros, ones = np.zeros((2, 3)), np.ones((2, 3))
    for ours_fn, torch_fn in ((F.normalize, torch.nn.functional.normalize),
                              (F.cosine_similarity, torch.nn.functional.cosine_similarity)):
        args = [zeros] if ours_fn is F.normalize else [zeros, ones]
        ours = [tensor(a, requires_grad=True) for a in args]
        theirs = [torch.tensor(a, requires_grad=True) for a in args]
        ours_fn(*ours).sum().backward()
        torch_fn(*theirs).sum().backward()
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9)
    np.testing.assert_array_equal(
        F.normalize(tensor(np.float64(2.0)), dim=0).numpy(),
        torch.nn.functional.normalize(torch.tensor(2.0, dtype=torch.float64), dim=0).numpy())


def test_integer_and_mixed_dtypes_as_torch(torch):
    a, b = np.array([1, 2, 4]), np.array([1, 3, 0])
    ours = F.pairwise_distance(tensor(a), tensor(b))
    theirs = torch.nn.functional.pairwise_distance(torch.tensor(a), torch.tensor(b))
    assert ours.dtype == np.float32 and ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    mixed = F.cosine_similarity(tensor(normal((2, 3)).astype(np.float32)), tensor(normal((2, 3))))
    assert mixed.dtype == np.float64
    lrn = F.local_response_norm(tensor(np.arange(24).reshape(2, 4, 3)), 2)
    expected = torch.nn.functional.local_response_norm(torch.arange(24).reshape(2, 4, 3), 2)
    assert lrn.dtype == np.float32
    np.testing.assert_allclose(lrn.numpy(), expected.numpy(), rtol=1e-6)
    empty = tensor(np.zeros((0, 3, 2)))
    assert F.local_response_norm(empty, 2) is empty


def test_instance_norm_running_statistics_as_torch(torch):
    x = normal((4, 3, 5)).astype(np.float32)
    ours = nn.InstanceNorm1d(3, momentum=0.3, affine=True, track_running_stats=True)
    theirs = torch.nn.InstanceNorm1d(3, momentum=0.3, affine=True, track_running_stats=True)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for _ in range(2):
        np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(),
                                   rtol=1e-6, err_msg=name)
    ours.eval(), theirs.eval()  # eval: the running statistics normalize
    np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    # momentum=None: torch passes 0, so the running statistics never move
    frozen = nn.InstanceNorm1d(3, momentum=None, track_running_stats=True)
    frozen(tensor(x))
    np.testing.assert_array_equal(frozen.running_mean.numpy(), np.zeros(3))
    # functional, with use_input_stats=False
    mean, var = tensor(normal(3, 1)), tensor(np.abs(normal(3, 2)) + 0.5)
    np.testing.assert_allclose(
        F.instance_norm(tensor(x.astype(np.float64)), mean, var, use_input_stats=False).numpy(),
        torch.nn.functional.instance_norm(torch.tensor(x.astype(np.float64)),
                                          torch.tensor(mean.numpy()), torch.tensor(var.numpy()),
                                          use_input_stats=False).numpy(), rtol=1e-12)


def test_module_parameters_and_reprs_as_torch(torch):
    for make in (lambda m: m.GroupNorm(2, 4), lambda m: m.GroupNorm(3, 6, eps=1e-3, affine=False),
                 lambda m: m.GroupNorm(1, 2, bias=False), lambda m: m.InstanceNorm1d(3),
                 lambda m: m.InstanceNorm2d(4, affine=True), lambda m: m.InstanceNorm2d(
                     2, track_running_stats=True, momentum=0.2), lambda m: m.LocalResponseNorm(3),
                 lambda m: m.LocalResponseNorm(2, 1e-3, 0.5, 2.0), lambda m: m.CosineSimilarity(),
                 lambda m: m.CosineSimilarity(0, 1e-6), lambda m: m.PairwiseDistance(),
                 lambda m: m.PairwiseDistance(1.0, 1e-3, True)):
        ours, theirs = make(nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    assert nn.PairwiseDistance(3.0).norm == torch.nn.PairwiseDistance(3.0).norm == 3.0
    assert nn.GroupNorm(2, 4, dtype=tinygrad_pool.float64).weight.dtype == np.float64


def test_instance_norm_module_channel_check_as_torch(torch):
    with pytest.raises(ValueError, match="match num_features"):
        nn.InstanceNorm1d(3, affine=True)(tensor(normal((2, 4, 5))))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(tensor(normal((2, 4, 5))))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(tensor(normal((2, 3, 5, 3))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unbatched = nn.InstanceNorm2d(3)(tensor(normal((3, 4, 2))))
    assert unbatched.shape == (3, 4, 2)


def test_errors_are_torchs(torch):
    x, tx = tensor(normal((2, 4, 3))), torch.tensor(normal((2, 4, 3)))
    cases = [
        (lambda m, a: m.group_norm(a, 3), RuntimeError),
        (lambda m, a: m.group_norm(a, 2, a.new_ones(3)), RuntimeError),
        (lambda m, a: m.group_norm(a[0, 0], 2), RuntimeError),
        (lambda m, a: m.group_norm(a.long(), 2), NotImplementedError),
        (lambda m, a: m.instance_norm(a[:, :, :1]), ValueError),
        (lambda m, a: m.instance_norm(a[0]), ValueError),
        (lambda m, a: m.instance_norm(a, use_input_stats=False), RuntimeError),
        (lambda m, a: m.local_response_norm(a[0], 2), ValueError),
        (lambda m, a: m.local_response_norm(a, 0), RuntimeError),
        (lambda m, a: m.normalize(a, dim=3), IndexError),
        (lambda m, a: m.normalize(a.long()), RuntimeError),
        (lambda m, a: m.cosine_similarity(a, a[:, :2]), RuntimeError),
        (lambda m, a: m.cosine_similarity(a.long(), a.long()), RuntimeError),
    ]
    for k, (fn, error) in enumerate(cases):
        with pytest.raises(error):
            fn(torch.nn.functional, tx)
        with pytest.raises(error):
            fn(F, x)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(2, 3)
    with pytest.raises(ValueError):
        torch.nn.GroupNorm(2, 3)


def test_empty_batches_as_torch(torch):
    empty = np.zeros((0, 4, 3))
    TF = torch.nn.functional
    for ours_fn, torch_fn in ((lambda x: F.group_norm(x, 2), lambda x: TF.group_norm(x, 2)),
                              (F.instance_norm, TF.instance_norm), (F.normalize, TF.normalize),
                              (lambda x: F.cosine_similarity(x, x),
                               lambda x: TF.cosine_similarity(x, x)),
                              (lambda x: F.pairwise_distance(x, x),
                               lambda x: TF.pairwise_distance(x, x))):
        x = tensor(empty, requires_grad=True)
        out = ours_fn(x)
        assert out.shape == tuple(torch_fn(torch.tensor(empty)).shape)
        out.sum().backward()
        assert x.grad.shape == empty.shape
