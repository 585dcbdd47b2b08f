"""nn: Module registration and naming, state_dict round trips and errors, train/eval, PyTorch's
initialisation, and layers whose shapes and outputs match torch.nn when weights are copied."""
import math

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import nn, Tensor, tensor
from tinygrad_pool.nn import init


def small_cnn(generator=None):
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, generator=generator), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(4 * 2 * 2, 3, generator=generator))


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU())
        self.scale = nn.Parameter(np.ones(1))
        self.head = nn.Linear(2 * 2 * 2, 2)
        self.not_a_parameter = tensor(np.zeros(3))  # a plain Tensor is not registered

    def forward(self, x):
        return self.head(self.features(x).flatten(1)) * self.scale


# ---- registration and naming -----------------------------------------------------------------
def test_named_parameters_are_dotted_and_in_registration_order():
    names = [name for name, _ in TwoBranch().named_parameters()]
    assert names == ["scale", "features.0.weight", "features.0.bias", "head.weight", "head.bias"]


def test_parameters_are_the_registered_objects_and_float32():
    model = small_cnn()
    params = list(model.parameters())
    assert params[0] is model[0].weight and params[-1] is model[4].bias
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    assert all(p.dtype == np.float32 for p in params)
    assert [p.shape for p in params] == [(4, 1, 3, 3), (4,), (3, 16), (3,)]


def test_parameter_dtype_rules():
    assert nn.Parameter([1, 2]).dtype == np.float32  # PyTorch's default dtype
    assert nn.Parameter(np.zeros(2)).dtype == np.float64  # a float array keeps its dtype
    assert nn.Parameter(np.zeros(2), requires_grad=False).requires_grad is False
    assert repr(nn.Parameter([1.0])).startswith("Parameter containing:\nTensor(")


def test_children_modules_and_shared_parameters_counted_once():
    model = TwoBranch()
    assert [type(m).__name__ for m in model.children()] == ["Sequential", "Linear"]
    assert [type(m).__name__ for m in model.modules()] == [
        "TwoBranch", "Sequential", "Conv2d", "ReLU", "Linear"]
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, shared)
    assert len(list(twice.parameters())) == 2


def test_reassigning_and_deleting_attributes():
    layer = nn.Linear(2, 3)
    layer.weight = nn.Parameter(np.zeros((3, 2), dtype=np.float32))
    assert next(layer.parameters()) is layer.weight
    layer.bias = None
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match="cannot assign 'ndarray' as parameter 'weight'"):
        layer.weight = np.zeros((3, 2))
    del layer.weight
    assert list(layer.parameters()) == []
    with pytest.raises(AttributeError, match="no attribute 'weight'"):
        layer.weight


def test_assigning_before_super_init_is_a_clear_error():
    class Forgetful(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Forgetful()


def test_sequential_indexing_slicing_and_call():
    model = small_cnn()
    assert len(model) == 5 and isinstance(model[-1], nn.Linear)
    head = model[3:]
    assert isinstance(head, nn.Sequential) and [n for n, _ in head.named_children()] == ["3", "4"]
    with pytest.raises(IndexError):
        model[5]
    x = tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))
    assert model(x).shape == (2, 3)


def test_zero_grad_sets_grads_to_none_and_backward_reaches_every_parameter():
    model = small_cnn()
    x = tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))
    model(x).sum().backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_train_eval_propagate_to_every_submodule():
    model = TwoBranch()
    assert model.training and all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


# ---- state_dict --------------------------------------------------------------------------------
def test_state_dict_is_keyed_by_parameter_names_and_shares_their_memory():
    model = TwoBranch()
    state = model.state_dict()
    assert list(state) == [name for name, _ in model.named_parameters()]
    state["head.bias"].numpy()[...] = 123.0
    assert np.all(model.head.bias.numpy() == 123.0)  # torch's values are the parameters' memory


def test_state_dict_round_trip_into_a_fresh_model():
    rng = np.random.default_rng(1)
    source, target = small_cnn(rng), small_cnn(np.random.default_rng(2))
    assert not np.array_equal(source[0].weight.numpy(), target[0].weight.numpy())
    weight_object = target[0].weight
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert target[0].weight is weight_object  # loaded in place: optimizers keep their references
    for (name, a), (_, b) in zip(source.named_parameters(), target.named_parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    x = tensor(rng.standard_normal((3, 1, 4, 4)).astype(np.float32))
    np.testing.assert_array_equal(source(x).numpy(), target(x).numpy())


def test_load_state_dict_reports_missing_unexpected_and_shape_errors_and_changes_nothing():
    model = small_cnn()
    before = {name: value.numpy().copy() for name, value in model.state_dict().items()}
    state = model.state_dict()
    del state["4.bias"]
    state["5.weight"] = np.zeros(3)
    state["0.weight"] = np.zeros((4, 1, 5, 5))
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert 'Missing key(s) in state_dict: "4.bias"' in message
    assert 'Unexpected key(s) in state_dict: "5.weight"' in message
    assert ("size mismatch for 0.weight: copying a param with shape (4, 1, 5, 5) from "
            "checkpoint, the shape in current model is (4, 1, 3, 3).") in message
    for name, array in model.state_dict().items():
        np.testing.assert_array_equal(array, before[name], err_msg=name)


def test_load_state_dict_non_strict_returns_the_key_lists_but_still_refuses_bad_shapes():
    model = small_cnn()
    state = model.state_dict()
    del state["4.bias"]
    state["extra"] = np.zeros(1)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert missing == ["4.bias"] and unexpected == ["extra"]
    state["4.weight"] = np.zeros((2, 2))
    with pytest.raises(RuntimeError, match=r"size mismatch for 4.weight: copying a param with "
                                           r"shape \(2, 2\) from checkpoint, the shape in "
                                           r"current model is \(3, 16\)"):
        model.load_state_dict(state, strict=False)


def test_load_state_dict_casts_to_the_parameter_dtype():
    layer = nn.Linear(2, 2)
    layer.load_state_dict({"weight": np.ones((2, 2), dtype=np.float64), "bias": tensor([1.0, 2.0])})
    assert layer.weight.dtype == np.float32 and np.all(layer.weight.numpy() == 1)
    np.testing.assert_array_equal(layer.bias.numpy(), [1, 2])


# ---- initialisation ---------------------------------------------------------------------------
@pytest.mark.parametrize("make, fan_in", [
    (lambda g: nn.Linear(50, 30, generator=g), 50),
    (lambda g: nn.Conv2d(6, 8, 3, generator=g), 6 * 9),
    (lambda g: nn.Conv2d(6, 8, (3, 5), groups=2, generator=g), 3 * 15),
])
def test_default_init_is_uniform_within_one_over_sqrt_fan_in(make, fan_in):
    layer = make(np.random.default_rng(0))
    bound = 1 / math.sqrt(fan_in)
    assert np.all(np.abs(layer.bias.numpy()) <= bound)
    assert np.all(np.abs(layer.weight.numpy()) <= bound)
    # Uniform, not squeezed: the extremes come near the bound and the mean near zero.
    assert np.abs(layer.weight.numpy()).max() > 0.9 * bound
    assert abs(layer.weight.numpy().mean()) < 0.1 * bound
    assert layer.weight.numpy().std() == pytest.approx(bound / math.sqrt(3), rel=0.15)


def test_bias_init_reaches_one_over_sqrt_fan_in():
    bias = nn.Linear(4, 2000, generator=np.random.default_rng(0)).bias.numpy()
    assert 0.45 < np.abs(bias).max() <= 0.5 and bias.min() < -0.45  # U(-1/2, 1/2)


def test_manual_seed_and_generator_make_init_reproducible():
    tinygrad_pool.manual_seed(7)
    first = small_cnn().state_dict()
    tinygrad_pool.manual_seed(7)
    again = small_cnn().state_dict()
    other = small_cnn().state_dict()  # the generator moved on: different weights
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    assert not np.array_equal(first["0.weight"], other["0.weight"])
    a = small_cnn(np.random.default_rng(3)).state_dict()
    b = small_cnn(np.random.default_rng(3)).state_dict()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    # seeds as torch takes them: what int() takes, a negative one modulo 2⁶⁴; else refused
    assert np.array_equal(tinygrad_pool.manual_seed(-1).random(3),
                          np.random.default_rng(2 ** 64 - 1).random(3))
    with pytest.raises(ValueError, match="manual_seed: seed must be an int, got 'a'"):
        tinygrad_pool.manual_seed("a")
    with pytest.raises(TypeError, match="manual_seed: seed must be an int, got None"):
        tinygrad_pool.manual_seed(None)


def test_init_functions_fill_in_place_and_keep_dtype():
    t = nn.Parameter(np.empty((4, 5), dtype=np.float32))
    assert init.zeros_(t) is t and np.all(t.numpy() == 0)
    init.uniform_(t, -2, -1, generator=np.random.default_rng(0))
    assert t.dtype == np.float32 and np.all((t.numpy() >= -2) & (t.numpy() <= -1))
    init.kaiming_uniform_(t, a=0, nonlinearity="relu", generator=np.random.default_rng(0))
    assert np.all(np.abs(t.numpy()) <= math.sqrt(2) * math.sqrt(3 / 5))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.kaiming_uniform_(nn.Parameter(np.zeros(3, dtype=np.float32)))


# ---- layers -------------------------------------------------------------------------------------
def test_reprs_match_pytorch():
    assert repr(nn.Conv2d(1, 8, 3)) == "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False)) == (
        "Conv2d(2, 4, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
        "groups=2, bias=False)")
    assert repr(nn.MaxPool2d(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)")
    assert repr(nn.AvgPool2d(3, 1)) == "AvgPool2d(kernel_size=3, stride=1, padding=0)"
    assert repr(nn.Linear(4, 2)) == "Linear(in_features=4, out_features=2, bias=True)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Sequential(nn.ReLU(), nn.Flatten())) == (
        "Sequential(\n  (0): ReLU()\n  (1): Flatten(start_dim=1, end_dim=-1)\n)")


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding must be"):
        nn.Conv2d(3, 4, 3, padding="full")
    with pytest.raises(TypeError, match="not a Module"):
        nn.Sequential(nn.ReLU(), lambda x: x)


LAYERS = [
    ("Conv2d", dict(in_channels=3, out_channels=4, kernel_size=3)),
    ("Conv2d", dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=2, padding=1,
                    dilation=(1, 2), groups=2)),
    ("Conv2d", dict(in_channels=3, out_channels=2, kernel_size=3, padding="same", bias=False)),
    ("MaxPool2d", dict(kernel_size=2)),
    ("MaxPool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("AvgPool2d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("ReLU", {}),
    ("Flatten", {}),
    ("Flatten", dict(start_dim=2)),
]


@pytest.mark.parametrize("name, kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LAYERS)])
def test_layers_match_torch_with_copied_weights(torch, name, kwargs):
    channels = kwargs.get("in_channels", 4)
    x = np.random.default_rng(0).standard_normal((2, channels, 9, 8)).astype(np.float32)
    ours = getattr(nn, name)(**kwargs)
    theirs = getattr(torch.nn, name)(**kwargs)
    with torch.no_grad():  # ours -> torch, so the comparison also checks our shapes
        for param_name, param in ours.named_parameters():
            assert tuple(getattr(theirs, param_name).shape) == param.shape
            getattr(theirs, param_name).copy_(torch.from_numpy(param.numpy()))
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    out = ours(tensor(x))
    expected = theirs(torch.from_numpy(x)).detach().numpy()
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    if name not in ("ReLU", "Flatten"):
        assert repr(ours) == repr(theirs)


def test_linear_matches_torch_forward_and_backward(torch):
    ours, theirs = nn.Linear(5, 3), torch.nn.Linear(5, 3)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    out, expected = ours(tensor(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert repr(ours) == repr(theirs)


def test_torch_state_dict_loads_into_our_model(torch):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 3))
    ours = small_cnn()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


# ---- nn.utils ---------------------------------------------------------------------------------
from tinygrad_pool.nn import utils  # noqa: E402


def _params_with_grads(torch, dtypes, seed=0, scale=1.0):
    """The same parameters (with .grad set) in both libraries; one has no gradient."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (5,), (2, 2, 2)][:len(dtypes)] + [(2,)]
    ours, theirs = [], []
    for k, shape in enumerate(shapes):
        dtype = dtypes[k] if k < len(dtypes) else np.float32
        value = rng.standard_normal(shape).astype(dtype)
        p, q = nn.Parameter(value), torch.nn.Parameter(torch.tensor(value))
        if k < len(dtypes):  # the last parameter has no gradient: it is skipped
            grad = (rng.standard_normal(shape) * scale).astype(dtype)
            p.grad, q.grad = tensor(grad), torch.tensor(grad)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 3.0, 0.5, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])  # clipping, and a scale clamped to 1
@pytest.mark.parametrize("dtypes", [(np.float32,) * 3, (np.float64,) * 3,
                                    (np.float32, np.float64, np.float32)])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm, dtypes):
    ours, theirs = _params_with_grads(torch, dtypes)
    total = utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, Tensor) and total.shape == () and not total.requires_grad
    assert total.dtype == np.dtype(str(expected.dtype).replace("torch.", ""))
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        if q.grad is None:
            assert p.grad is None
        else:
            assert p.grad.dtype == p.dtype
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_edge_cases_match_torch(torch):
    ours, theirs = _params_with_grads(torch, (np.float64,))
    total = utils.clip_grad_norm_(ours[0], 0.1)  # a single tensor, as torch accepts
    assert total.item() == pytest.approx(torch.nn.utils.clip_grad_norm_(theirs[0], 0.1).item())
    empty = utils.clip_grad_norm_([nn.Parameter(np.zeros(2))], 1.0)  # no gradients at all
    assert empty.item() == torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(
        torch.zeros(2))], 1.0).item() == 0.0
    ours, theirs = _params_with_grads(torch, (np.float32, np.float32))
    ours[0].grad.numpy()[0, 0] = theirs[0].grad[0, 0] = float("nan")
    before = ours[1].grad.numpy().copy()
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(ours[1].grad.numpy(), before)  # refused before any scaling
    with pytest.raises(RuntimeError, match="is non-finite"):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    utils.clip_grad_norm_(ours, 1.0)  # without the check: NaN everywhere, as torch
    torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    assert np.isnan(ours[1].grad.numpy()).all() and torch.isnan(theirs[1].grad).all()
    with pytest.raises(TypeError, match="clip_grad_norm_: max_norm must be a number, got str"):
        utils.clip_grad_norm_(ours, "big")
    with pytest.raises(TypeError, match="parameters must be Tensors, got a ndarray"):
        utils.clip_grad_norm_([np.zeros(2)], 1.0)


def test_clip_grad_norm_bumps_the_gradients_versions_and_keeps_them(torch):
    ours, _ = _params_with_grads(torch, (np.float32,), scale=10.0)
    grad = ours[0].grad
    utils.clip_grad_norm_(ours, 1.0)
    assert ours[0].grad is grad and grad._version == 1  # scaled in place


@pytest.mark.parametrize("clip_value", [0.3, 2.0])
def test_clip_grad_value_matches_torch(torch, clip_value):
    ours, theirs = _params_with_grads(torch, (np.float32, np.float64))
    assert utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours, theirs):
        if q.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    with pytest.raises(TypeError, match="clip_value must be a number"):
        utils.clip_grad_value_(ours, None)


@pytest.mark.parametrize("dtypes", [(np.float64,) * 3, (np.float32, np.float64, np.float32)])
def test_parameters_to_vector_matches_torch_and_is_differentiable(torch, dtypes):
    ours, theirs = _params_with_grads(torch, dtypes)
    for p, q in zip(ours, theirs):
        p.grad = q.grad = None
    v, tv = utils.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    assert v.dtype == np.dtype(str(tv.dtype).replace("torch.", ""))
    np.testing.assert_array_equal(v.numpy(), tv.detach().numpy())
    weights = np.random.default_rng(5).standard_normal(v.shape)
    (v * v * tensor(weights)).sum().backward()
    (tv * tv * torch.tensor(weights)).sum().backward()
    for p, q in zip(ours, theirs):
        assert p.grad.dtype == p.dtype
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    # twice differentiable: the backward is indexing and reshapes
    from tinygrad_pool import autograd
    p = nn.Parameter(np.arange(3.0))
    (g,) = autograd.grad((utils.parameters_to_vector([p]) ** 3).sum(), [p], create_graph=True)
    (h,) = autograd.grad(g.sum(), [p])
    np.testing.assert_allclose(h.numpy(), 6 * np.arange(3.0))
    with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
        utils.parameters_to_vector([])


def test_vector_to_parameters_matches_torch(torch):
    ours, theirs = _params_with_grads(torch, (np.float32, np.float32))
    n = sum(p.numel() for p in ours)
    vec = np.arange(n + 2, dtype=np.float64)  # longer than needed: the rest is ignored (torch)
    v, tv = tensor(vec), torch.tensor(vec)
    param_objects = list(ours)
    utils.vector_to_parameters(v, ours)
    torch.nn.utils.vector_to_parameters(tv, theirs)
    for p, q, obj in zip(ours, theirs, param_objects):
        assert p is obj and p.dtype == np.float64 and str(q.dtype) == "torch.float64"
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy())
        assert np.shares_memory(p.numpy(), v.numpy())  # views of the vector, as torch's
    with pytest.raises(TypeError, match="expected a Tensor, but got: list"):
        utils.vector_to_parameters([1.0], ours)
    with pytest.raises(RuntimeError, match=r"shape '\[3, 4\]' is invalid for input of size 2"):
        utils.vector_to_parameters(tensor(np.zeros(2)), ours)
    held = ours[0].numpy()
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 1"):
        utils.vector_to_parameters(tensor(np.zeros(13)), ours)  # the first fits, not the second
    assert ours[0].numpy() is held  # nothing changed
