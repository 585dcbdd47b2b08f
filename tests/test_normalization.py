"""batch_norm, layer_norm and their modules (BatchNorm1d, BatchNorm2d, LayerNorm)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn.module import Module
from tinygrad_pool.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from tinygrad_pool.ops.normalization import Standardize, batch_norm, layer_norm

from helpers import check_grad, leaf, torch_parity

HYPOTHESIS = settings(max_examples=25, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])
BN_SHAPES = [(5, 3), (4, 3, 6), (3, 2, 4, 5)]
F64 = dict(rtol=1e-10, atol=1e-12)


def _torch_f(torch):
    return torch.nn.functional


def _double_backward_parity(torch, fn, torch_fn, arrays, seed=0):
    """grad of Σ (∂(Σ w·fn)/∂inputs)² through create_graph, against torch, in float64."""
    rng = np.random.default_rng(seed)
    ours = [leaf(a) for a in arrays]
    theirs = [torch.tensor(np.array(a, np.float64), requires_grad=True) for a in arrays]
    out, tout = fn(*ours), torch_fn(*theirs)
    weights = rng.standard_normal(out.shape)
    first = tinygrad_grad(((out * out * out) * tensor(weights)).sum(), ours)
    tfirst = torch.autograd.grad((tout ** 3 * torch.tensor(weights)).sum(), theirs, create_graph=True)
    for g, tg in zip(first, tfirst):
        np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), **F64)
    second = sum((g * g).sum() for g in first)
    tsecond = sum((tg * tg).sum() for tg in tfirst)
    second.backward()
    tsecond.backward()
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **F64,
                                   err_msg=f"second-order gradient of input {k}")


def tinygrad_grad(output, inputs):
    from tinygrad_pool import autograd
    return autograd.grad(output, inputs, create_graph=True)


# ---- finite differences -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
def test_batch_norm_training_gradcheck(rng, shape):
    c = shape[1]
    check_grad(lambda x, w, b: batch_norm(x, None, None, w, b, training=True),
               rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c))


@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
def test_batch_norm_eval_gradcheck(rng, shape):
    c = shape[1]
    mean, var = tensor(rng.standard_normal(c)), tensor(rng.random(c) + 0.5)
    check_grad(lambda x, w, b: batch_norm(x, mean, var, w, b, training=False),
               rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c))


@pytest.mark.parametrize("shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)), ((6,), (6,))],
                         ids=str)
def test_layer_norm_gradcheck(rng, shape, normalized):
    check_grad(lambda x, w, b: layer_norm(x, normalized, w, b),
               rng.standard_normal(shape), rng.standard_normal(normalized),
               rng.standard_normal(normalized))
    check_grad(lambda x: layer_norm(x, normalized), rng.standard_normal(shape))


def test_standardize_backward_matches_its_composition_of_tensor_ops(rng):
    # The Function is the fast route; the same math composed from Tensor ops is the reference,
    # for the gradient and for the gradient of the gradient.
    axes, eps = (0, 2), 1e-5

    def composed(x):
        centered = x - x.mean(axis=axes, keepdims=True)
        var = (centered * centered).mean(axis=axes, keepdims=True)
        return centered / (var + eps).sqrt()

    data, weights = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    results = []
    for fn in (lambda x: Standardize.apply(x, axes=axes, eps=eps), composed):
        x = leaf(data)
        y = fn(x)
        (grad,) = tinygrad_grad(((y * y * y) * tensor(weights)).sum(), [x])
        (grad * grad).sum().backward()
        results.append((y.numpy(), grad.numpy(), x.grad.numpy()))
    for ours, reference in zip(*results):
        np.testing.assert_allclose(ours, reference, rtol=1e-10, atol=1e-12)


# ---- parity with torch: functional ------------------------------------------------------------
@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch_float64(torch, rng, shape, training):
    c = shape[1]
    mean, var = rng.standard_normal(c), rng.random(c) + 0.5
    ours_stats = [tensor(mean), tensor(var)]
    theirs_stats = [torch.tensor(mean), torch.tensor(var)]
    torch_parity(torch, lambda x, w, b: batch_norm(x, *ours_stats, w, b, training, 0.3, 1e-3),
                 rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c),
                 torch_fn=lambda x, w, b: _torch_f(torch).batch_norm(x, *theirs_stats, w, b,
                                                                      training, 0.3, 1e-3),
                 **F64)
    for ours, theirs in zip(ours_stats, theirs_stats):  # updated in training, untouched in eval
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **F64)
    if not training:
        np.testing.assert_array_equal(ours_stats[0].numpy(), mean)


@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
def test_batch_norm_without_affine_or_running_stats_matches_torch(torch, rng, shape):
    torch_parity(torch, lambda x: batch_norm(x, None, None, training=True),
                 rng.standard_normal(shape),
                 torch_fn=lambda x: _torch_f(torch).batch_norm(x, None, None, training=True), **F64)


@pytest.mark.parametrize("shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)),
                                              ((2, 3, 4), (2, 3, 4)), ((3, 1), (1,))], ids=str)
def test_layer_norm_matches_torch_float64(torch, rng, shape, normalized):
    torch_parity(torch, lambda x, w, b: layer_norm(x, normalized, w, b, 1e-4),
                 rng.standard_normal(shape), rng.standard_normal(normalized),
                 rng.standard_normal(normalized),
                 torch_fn=lambda x, w, b: _torch_f(torch).layer_norm(x, normalized, w, b, 1e-4),
                 **F64)
    torch_parity(torch, lambda x: layer_norm(x, list(normalized)), rng.standard_normal(shape),
                 torch_fn=lambda x: _torch_f(torch).layer_norm(x, normalized), **F64)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_double_backward_matches_torch(torch, rng, training):
    mean, var = rng.standard_normal(3), rng.random(3) + 0.5
    _double_backward_parity(
        torch,
        lambda x, w, b: batch_norm(x, tensor(mean), tensor(var), w, b, training=training),
        lambda x, w, b: _torch_f(torch).batch_norm(x, torch.tensor(mean), torch.tensor(var), w,
                                                    b, training=training),
        [rng.standard_normal((4, 3, 2, 3)), rng.standard_normal(3), rng.standard_normal(3)])


def test_layer_norm_double_backward_matches_torch(torch, rng):
    _double_backward_parity(
        torch, lambda x, w, b: layer_norm(x, (3, 4), w, b),
        lambda x, w, b: _torch_f(torch).layer_norm(x, (3, 4), w, b),
        [rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))])


@HYPOTHESIS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple),
       training=st.booleans(), momentum=st.floats(0, 1), eps=st.floats(1e-6, 1.0),
       seed=st.integers(0, 2 ** 16))
def test_random_batch_norm_matches_torch(torch, shape, training, momentum, eps, seed):
    if training and np.prod(shape) // shape[1] == 1:
        shape = (shape[0] + 1,) + shape[1:]  # training needs more than one value per channel
    rng = np.random.default_rng(seed)
    c = shape[1]
    mean, var = rng.standard_normal(c), rng.random(c) + 0.1
    ours_stats, theirs_stats = [tensor(mean), tensor(var)], [torch.tensor(mean), torch.tensor(var)]
    torch_parity(torch, lambda x, w, b: batch_norm(x, *ours_stats, w, b, training, momentum, eps),
                 rng.standard_normal(shape) * 3 + 1, rng.standard_normal(c), rng.standard_normal(c),
                 torch_fn=lambda x, w, b: _torch_f(torch).batch_norm(
                     x, *theirs_stats, w, b, training, momentum, eps), seed=seed, **F64)
    for ours, theirs in zip(ours_stats, theirs_stats):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **F64)


@HYPOTHESIS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
       data=st.data(), seed=st.integers(0, 2 ** 16))
def test_random_layer_norm_matches_torch(torch, shape, data, seed):
    k = data.draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - k:]
    rng = np.random.default_rng(seed)
    torch_parity(torch, lambda x, w, b: layer_norm(x, normalized, w, b),
                 rng.standard_normal(shape) * 2 - 1, rng.standard_normal(normalized),
                 rng.standard_normal(normalized),
                 torch_fn=lambda x, w, b: _torch_f(torch).layer_norm(x, normalized, w, b),
                 seed=seed, **F64)


# ---- modules against torch's ------------------------------------------------------------------
def _pair(torch, make, torch_make, dtype):
    """Our module and torch's, with the same (random) weight and bias."""
    ours = make(dtype)
    theirs = torch_make().to(getattr(torch, np.dtype(dtype).name))
    rng = np.random.default_rng(1)
    for name, param in ours.named_parameters():
        param.numpy()[...] = rng.standard_normal(param.shape)
        getattr(theirs, name).data.copy_(torch.from_numpy(param.numpy().copy()))
    return ours, theirs


BN_MODULES = [
    ("BatchNorm1d-2d", (8, 3), dict()),
    ("BatchNorm1d-3d", (4, 3, 5), dict()),
    ("BatchNorm2d", (4, 3, 5, 6), dict()),
    ("BatchNorm2d", (4, 3, 5, 6), dict(momentum=None)),
    ("BatchNorm2d", (4, 3, 2, 2), dict(affine=False)),
    ("BatchNorm1d-3d", (4, 3, 5), dict(bias=False, eps=1e-3, momentum=0.5)),
]


@pytest.mark.parametrize("dtype,tolerance", [(np.float32, dict(rtol=1e-5, atol=1e-5)),
                                             (np.float64, F64)], ids=["float32", "float64"])
@pytest.mark.parametrize("kind,shape,kwargs", BN_MODULES, ids=lambda v: str(v))
def test_batch_norm_module_training_steps_match_torch(torch, kind, shape, kwargs, dtype, tolerance):
    ours_cls = BatchNorm2d if kind == "BatchNorm2d" else BatchNorm1d
    ours, theirs = _pair(torch, lambda d: ours_cls(3, dtype=d, **kwargs),
                         lambda: getattr(torch.nn, kind.split("-")[0])(3, **kwargs), dtype)
    rng = np.random.default_rng(2)
    for step in range(4):  # a few SGD steps: outputs, gradients, running stats all follow torch
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(dtype)
        target = rng.standard_normal(shape).astype(dtype)
        ours_x, tx = tensor(x, requires_grad=True), torch.from_numpy(x.copy()).requires_grad_()
        out, tout = ours(ours_x), theirs(tx)
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **tolerance)
        ((out - tensor(target)) ** 2).mean().backward()
        ((tout - torch.from_numpy(target)) ** 2).mean().backward()
        np.testing.assert_allclose(ours_x.grad.numpy(), tx.grad.numpy(), **tolerance)
        for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), **tolerance, err_msg=name)
            p.data -= 0.1 * p.grad.data
            p.grad = None
            with torch.no_grad():
                tp -= 0.1 * tp.grad
            tp.grad = None
        for name, buffer in ours.named_buffers():
            np.testing.assert_allclose(buffer.numpy(), getattr(theirs, name).numpy(), **tolerance,
                                       err_msg=name)
    assert ours.num_batches_tracked.item() == 4 and ours.num_batches_tracked.dtype == np.int64
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype(dtype)
    np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.from_numpy(x)).detach().numpy(),
                               **tolerance)
    assert ours.num_batches_tracked.item() == 4  # eval does not count batches


def test_batch_norm_momentum_none_is_the_cumulative_average(rng):
    bn = BatchNorm1d(2, momentum=None, affine=False, dtype=np.float64)
    batches = [rng.standard_normal((6, 2)) * (k + 1) for k in range(3)]
    for batch in batches:
        bn(tensor(batch))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([b.mean(0) for b in batches], 0))
    np.testing.assert_allclose(bn.running_var.numpy(),
                               np.mean([b.var(0, ddof=1) for b in batches], 0))


def test_batch_norm_without_running_stats_uses_batch_statistics_in_eval(torch, rng):
    bn = BatchNorm2d(3, track_running_stats=False, dtype=np.float64)
    tbn = torch.nn.BatchNorm2d(3, track_running_stats=False).double()
    assert bn.running_mean is None and bn.num_batches_tracked is None
    bn.eval()
    tbn.eval()
    x = rng.standard_normal((2, 3, 4, 4)) * 5 + 2
    out = bn(tensor(x)).numpy()
    np.testing.assert_allclose(out, tbn(torch.from_numpy(x)).detach().numpy(), **F64)
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-12)  # batch statistics


def test_batch_norm_eval_uses_running_stats(rng):
    bn = BatchNorm1d(2, dtype=np.float64).eval()
    bn.running_mean.numpy()[...] = [1.0, -2.0]
    bn.running_var.numpy()[...] = [4.0, 0.25]
    bn.weight.numpy()[...] = [2.0, 1.0]
    bn.bias.numpy()[...] = [0.0, 3.0]
    x = rng.standard_normal((5, 2))
    expected = (x - [1.0, -2.0]) / np.sqrt(np.array([4.0, 0.25]) + 1e-5) * [2.0, 1.0] + [0.0, 3.0]
    np.testing.assert_allclose(bn(tensor(x)).numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(bn.running_mean.numpy(), [1.0, -2.0])


@pytest.mark.parametrize("kwargs", [dict(), dict(affine=False), dict(track_running_stats=False),
                                    dict(bias=False), dict(affine=False, track_running_stats=False)],
                         ids=str)
def test_batch_norm_state_dict_keys_and_repr_match_torch(torch, kwargs):
    for ours, theirs in [(BatchNorm1d(4, **kwargs), torch.nn.BatchNorm1d(4, **kwargs)),
                         (BatchNorm2d(4, momentum=None, **kwargs),
                          torch.nn.BatchNorm2d(4, momentum=None, **kwargs))]:
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert repr(ours) == repr(theirs)
        for name, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[name], value.numpy())
            assert ours.state_dict()[name].dtype == value.numpy().dtype


def test_batch_norm_running_stats_are_written_in_place_with_a_version_bump(rng):
    bn = BatchNorm2d(3)
    mean, var, count = bn.running_mean, bn.running_var, bn.num_batches_tracked
    versions = (mean._version, var._version, count._version)
    bn(tensor(rng.standard_normal((2, 3, 2, 2)).astype(np.float32)))
    assert bn.running_mean is mean and bn.running_var is var and bn.num_batches_tracked is count
    assert (mean._version, var._version, count._version) > versions
    assert all(new > old for new, old in zip((mean._version, var._version, count._version),
                                             versions))
    assert mean.grad_fn is None and not mean.requires_grad  # no graph through the update


def test_batch_norm_reset_running_stats_and_parameters(rng):
    bn = BatchNorm1d(3)
    for _ in range(2):
        bn(tensor(rng.standard_normal((4, 3)).astype(np.float32)))
    bn.weight.numpy()[...] = 5
    bn.reset_running_stats()
    np.testing.assert_array_equal(bn.running_mean.numpy(), 0)
    np.testing.assert_array_equal(bn.running_var.numpy(), 1)
    assert bn.num_batches_tracked.item() == 0
    np.testing.assert_array_equal(bn.weight.numpy(), 5)  # parameters untouched
    bn(tensor(rng.standard_normal((4, 3)).astype(np.float32)))
    bn.reset_parameters()
    np.testing.assert_array_equal(bn.weight.numpy(), 1)
    np.testing.assert_array_equal(bn.bias.numpy(), 0)
    np.testing.assert_array_equal(bn.running_mean.numpy(), 0)
    assert bn.weight.dtype == np.float32 and bn.running_var.dtype == np.float32


def test_batch_norm_in_a_model_trains_and_loads_state(rng):
    class Net(Module):
        def __init__(self):
            super().__init__()
            self.bn = BatchNorm1d(3)

        def forward(self, x):
            return self.bn(x)

    net, copy = Net(), Net()
    net(tensor(rng.standard_normal((5, 3)).astype(np.float32)))
    copy.load_state_dict(net.state_dict())
    assert copy.bn.num_batches_tracked.item() == 1
    np.testing.assert_array_equal(copy.bn.running_var.numpy(), net.bn.running_var.numpy())


@pytest.mark.parametrize("shape,normalized,kwargs", [((4, 5), 5, dict()),
                                                     ((2, 3, 4), [3, 4], dict(eps=1e-3)),
                                                     ((2, 3, 4), (4,), dict(bias=False)),
                                                     ((2, 3, 4), (3, 4),
                                                      dict(elementwise_affine=False))], ids=str)
@pytest.mark.parametrize("dtype,tolerance", [(np.float32, dict(rtol=1e-5, atol=1e-5)),
                                             (np.float64, F64)], ids=["float32", "float64"])
def test_layer_norm_module_matches_torch(torch, shape, normalized, kwargs, dtype, tolerance):
    ours, theirs = _pair(torch, lambda d: LayerNorm(normalized, dtype=d, **kwargs),
                         lambda: torch.nn.LayerNorm(normalized, **kwargs), dtype)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    tx = torch.from_numpy(x.copy()).requires_grad_()
    ours_x = tensor(x, requires_grad=True)
    out, tout = ours(ours_x), theirs(tx)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **tolerance)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), tx.grad.numpy(), **tolerance)
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), **tolerance, err_msg=name)


def test_layer_norm_initialises_weight_one_bias_zero():
    ln = LayerNorm((2, 3))
    assert ln.normalized_shape == (2, 3)
    np.testing.assert_array_equal(ln.weight.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(ln.bias.numpy(), np.zeros((2, 3)))
    assert ln.weight.dtype == np.float32
    ln.weight.numpy()[...] = 3
    ln.reset_parameters()
    np.testing.assert_array_equal(ln.weight.numpy(), 1)


# ---- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("module,shape,message", [
    (BatchNorm2d, (2, 3, 4), "expected 4D input (got 3D input)"),
    (BatchNorm2d, (2, 3), "expected 4D input (got 2D input)"),
    (BatchNorm1d, (2, 3, 4, 5), "expected 2D or 3D input (got 4D input)"),
    (BatchNorm1d, (3,), "expected 2D or 3D input (got 1D input)"),
], ids=str)
def test_batch_norm_module_rejects_wrong_rank_before_any_change(module, shape, message):
    bn = module(3)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bn(tensor(np.ones(shape, np.float32)))
    assert bn.num_batches_tracked.item() == 0


def test_batch_norm_training_needs_more_than_one_value_per_channel():
    bn = BatchNorm1d(3)
    version = bn.running_mean._version
    with pytest.raises(ValueError, match=r"more than 1 value per channel.*\[1, 3\]"):
        bn(tensor(np.ones((1, 3), np.float32)))
    assert bn.num_batches_tracked.item() == 0  # nothing changed
    assert bn.running_mean._version == version
    bn.eval()
    assert bn(tensor(np.ones((1, 3), np.float32))).shape == (1, 3)  # eval: fine


@pytest.mark.parametrize("call,error,message", [
    (lambda x, s: batch_norm(x, s(4), s(3), training=True), RuntimeError,
     r"running_mean to have shape \[3\].*shape \[4\]"),
    (lambda x, s: batch_norm(x, s(3), s(3), weight=s(4)), RuntimeError, r"weight.*shape \[4\]"),
    (lambda x, s: batch_norm(x, s(3), None, training=True), ValueError, "both be None"),
    (lambda x, s: batch_norm(x, None, None), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda x, s: batch_norm(x, s(3), None), RuntimeError, "running_var must be defined"),
    (lambda x, s: batch_norm(x, None, None, training=True, eps=0), ValueError,
     "eps must be positive during training, but got 0"),
    (lambda x, s: batch_norm(x, s(3), s(3), eps=-1.0), ValueError, "non-negative, but got -1"),
    (lambda x, s: batch_norm(x, None, None, training=True, momentum=None), TypeError,
     "momentum must be a number, got NoneType"),
    (lambda x, s: batch_norm(x[0], s(3), s(3)), RuntimeError, "at least 2 dimensions"),
    (lambda x, s: batch_norm(x, tensor(np.zeros(3, np.float64)), s(3)), RuntimeError,
     "running_mean has dtype float64 but input has dtype float32"),
    (lambda x, s: batch_norm(tensor(np.ones((2, 3), np.int64)), None, None, training=True),
     NotImplementedError, "floating-point.*int64"),
    (lambda x, s: batch_norm(x, None, None, training=True, eps="1"), TypeError, "eps"),
])
def test_batch_norm_errors(call, error, message):
    x = tensor(np.ones((2, 3), np.float32))

    def stats(n):
        return tensor(np.zeros(n, np.float32))

    with pytest.raises(error, match=message):
        call(x, stats)


def test_batch_norm_error_leaves_running_stats_alone():
    mean, var = tensor(np.zeros(3, np.float32)), tensor(np.ones(3, np.float32))
    with pytest.raises(RuntimeError):
        batch_norm(tensor(np.ones((2, 3), np.float32)), mean, var,
                   weight=tensor(np.ones(4, np.float32)), training=True)
    assert mean._version == 0 and var._version == 0


@pytest.mark.parametrize("call,error,message", [
    (lambda x: layer_norm(x, (4,)), RuntimeError,
     r"normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of size "
     r"\[2, 3\]"),
    (lambda x: layer_norm(x, (2, 2, 3)), RuntimeError, r"\[\*, 2, 2, 3\]"),
    (lambda x: layer_norm(x, 3), TypeError, "normalized_shape must be a tuple.*int 3"),
    (lambda x: layer_norm(x, [3.0]), TypeError, "normalized_shape must be a tuple"),
    (lambda x: layer_norm(x, ()), RuntimeError, "at least 1-dimensional"),
    (lambda x: layer_norm(x, (3,), tensor(np.ones(4, np.float32))), RuntimeError,
     r"weight to have shape \[3\] \(normalized_shape\), but got weight of shape \[4\]"),
    (lambda x: layer_norm(x, (3,), None, tensor(np.ones(2, np.float32))), RuntimeError,
     r"bias to have shape \[3\]"),
    (lambda x: layer_norm(x, (3,), tensor(np.ones(3))), RuntimeError, "mixed dtype"),
    (lambda x: layer_norm(tensor(np.ones((2, 3), np.int64)), (3,)), NotImplementedError,
     "int64"),
])
def test_layer_norm_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(tensor(np.ones((2, 3), np.float32)))


def test_layer_norm_module_rejects_a_float_shape():
    with pytest.raises(TypeError, match="normalized_shape must be an int or a tuple"):
        LayerNorm(3.0)
    with pytest.raises(TypeError, match=r"normalized_shape must be an int or a tuple.*\[3.5\]"):
        LayerNorm([3.5])


def test_batch_norm_module_rejects_bad_arguments():
    with pytest.raises(TypeError, match="num_features"):
        BatchNorm1d(2.5)
    with pytest.raises(TypeError, match="momentum must be a float or None"):
        BatchNorm1d(2, momentum="0.1")


def test_no_warnings_in_ordinary_use(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BatchNorm2d(2)(tensor(rng.standard_normal((2, 2, 3, 3)).astype(np.float32)))
        LayerNorm(3)(tensor(rng.standard_normal((2, 3)).astype(np.float32)))
