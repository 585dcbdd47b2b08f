"""optim: single steps computed by hand, then SGD and Adam against torch.optim over many steps."""
import math

import numpy as np
import pytest

from tinygrad_pool import Tensor, nn, optim


def param(values, dtype=np.float64):
    return nn.Parameter(np.array(values, dtype=dtype))


def set_grad(p, values):
    p.grad = Tensor(np.array(values, dtype=p.dtype))


# ---- hand-computed steps ------------------------------------------------------------------------
def test_sgd_plain_step():
    p = param([1.0, -2.0])
    set_grad(p, [0.5, 1.0])
    optim.SGD([p], lr=0.1).step()
    np.testing.assert_allclose(p.data, [1.0 - 0.05, -2.0 - 0.1])


def test_sgd_momentum_weight_decay_dampening_by_hand():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.1)
    set_grad(p, [2.0])
    opt.step()  # d = 2 + 0.1·1 = 2.1; first step: buf = d (no dampening); p = 1 - 0.21
    np.testing.assert_allclose(p.data, [0.79])
    set_grad(p, [2.0])
    opt.step()  # d = 2 + 0.079 = 2.079; buf = 0.9·2.1 + 0.5·2.079 = 2.9295; p = 0.79 - 0.29295
    np.testing.assert_allclose(p.data, [0.79 - 0.29295])
    np.testing.assert_allclose(opt.state[id(p)]["momentum_buffer"], [2.9295])


def test_sgd_nesterov_by_hand():
    p = param([0.0])
    opt = optim.SGD([p], lr=1.0, momentum=0.5, nesterov=True)
    set_grad(p, [1.0])
    opt.step()  # buf = 1; d = 1 + 0.5·1 = 1.5
    np.testing.assert_allclose(p.data, [-1.5])
    set_grad(p, [1.0])
    opt.step()  # buf = 0.5 + 1 = 1.5; d = 1 + 0.75 = 1.75
    np.testing.assert_allclose(p.data, [-3.25])


def test_adam_first_step_moves_every_coordinate_by_about_lr():
    p = param([1.0, 1.0, 1.0])
    set_grad(p, [1e-3, 5.0, -300.0])
    optim.Adam([p], lr=0.01).step()
    # m̂ = g and v̂ = g² after bias correction, so the step is lr · g / (|g| + eps).
    expected = 1.0 - 0.01 * np.array([1e-3, 5.0, -300.0]) / (np.abs([1e-3, 5.0, -300.0]) + 1e-8)
    np.testing.assert_allclose(p.data, expected, rtol=1e-12)


def test_adam_two_steps_with_weight_decay_by_hand():
    p = param([2.0])
    opt = optim.Adam([p], lr=0.1, betas=(0.5, 0.75), eps=0.0, weight_decay=0.5)
    set_grad(p, [1.0])
    opt.step()  # g = 1 + 1 = 2; m̂ = 2, v̂ = 4 -> p = 2 - 0.1·2/2 = 1.9
    np.testing.assert_allclose(p.data, [1.9])
    set_grad(p, [1.0])
    opt.step()  # g = 1.95; m = 0.5·1 + 0.5·1.95 = 1.475; v = 0.75·1 + 0.25·3.8025 = 1.700625
    m_hat, v_hat = 1.475 / (1 - 0.25), 1.700625 / (1 - 0.5625)
    np.testing.assert_allclose(p.data, [1.9 - 0.1 * m_hat / math.sqrt(v_hat)])


def test_params_without_grad_are_skipped_and_float32_stays_float32():
    a, b = param([1.0, 2.0], np.float32), param([3.0], np.float32)
    set_grad(a, [1.0, 1.0])
    for opt in (optim.SGD([a, b], lr=0.5, momentum=0.9), optim.Adam([a, b], lr=0.5, weight_decay=0.1)):
        opt.step()
        assert a.dtype == np.float32 and b.dtype == np.float32 and a.grad.dtype == np.float32
        assert b.data.tolist() == [3.0] and id(b) not in opt.state
    assert opt.state[id(a)]["exp_avg"].dtype == np.float32


def test_zero_grad_sets_none_or_zeros():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    set_grad(p, [3.0])
    opt.zero_grad(set_to_none=False)
    assert p.grad.data.tolist() == [0.0]
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_carry_their_own_hyperparameters():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    set_grad(a, [1.0])
    set_grad(b, [1.0])
    opt.step()
    assert a.data.tolist() == [0.9] and b.data.tolist() == [0.0]
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]


def test_training_a_linear_layer_reduces_the_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.3
    model = nn.Linear(3, 1, generator=rng)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(200):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(Tensor(x)), Tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(model.weight.data, [[1.0, -2.0, 0.5]], atol=1e-3)
    np.testing.assert_allclose(model.bias.data, [0.3], atol=1e-3)


@pytest.mark.parametrize("make, message", [
    (lambda p: optim.SGD(p, lr=-0.1), "invalid lr"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-1), "invalid momentum"),
    (lambda p: optim.SGD(p, lr=0.1, weight_decay=-1), "invalid weight_decay"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
    (lambda p: optim.Adam(p, lr=float("nan")), "invalid lr"),
    (lambda p: optim.Adam(p, betas=(0.9, 1.0)), "invalid betas"),
    (lambda p: optim.Adam(p, eps=-1e-8), "invalid eps"),
    (lambda p: optim.Adam(p, weight_decay=-1), "invalid weight_decay"),
    (lambda p: optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda p: optim.SGD([Tensor([1.0])], lr=0.1), "requires_grad=True"),
    (lambda p: optim.SGD(p + p, lr=0.1), "more than one parameter group"),
    (lambda p: optim.SGD([{"params": p, "betas": (0.9, 0.9)}], lr=0.1), "unknown hyperparameter"),
])
def test_invalid_arguments_are_clear_errors(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make([param([1.0])])


def test_a_single_tensor_instead_of_a_list_is_refused():
    with pytest.raises(TypeError, match="wrap it in a list"):
        optim.SGD(param([1.0]), lr=0.1)


# ---- parity with torch.optim -----------------------------------------------------------------------
def run_both(torch, ours_cls, theirs_cls, kwargs, dtype, steps=6):
    """The same two parameters and the same gradient sequence through both optimizers."""
    rng = np.random.default_rng(0)
    initial = [rng.standard_normal((3, 4)), rng.standard_normal((5,))]
    ours = [nn.Parameter(a.astype(dtype)) for a in initial]
    theirs = [torch.nn.Parameter(torch.tensor(a.astype(dtype))) for a in initial]
    opt, topt = ours_cls(ours, **kwargs), theirs_cls(theirs, **kwargs)
    for step in range(steps):
        for p, tp in zip(ours, theirs):
            grad = rng.standard_normal(p.shape).astype(dtype)
            if step == 2 and p.ndim == 1:
                p.grad, tp.grad = None, None  # a step without a gradient leaves it untouched
            else:
                p.grad, tp.grad = Tensor(grad), torch.tensor(grad)
        opt.step()
        topt.step()
    return ours, theirs


SGD_SETTINGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, momentum=0.9, weight_decay=0.01),
    dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True),
]
ADAM_SETTINGS = [
    dict(lr=1e-3),
    dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, weight_decay=0.05, amsgrad=True),
]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("kwargs", SGD_SETTINGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sgd_matches_torch(torch, kwargs, dtype, rtol):
    ours, theirs = run_both(torch, optim.SGD, torch.optim.SGD, kwargs, dtype)
    for p, tp in zip(ours, theirs):
        assert p.dtype == dtype
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("kwargs", ADAM_SETTINGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_adam_matches_torch(torch, kwargs, dtype, rtol):
    ours, theirs = run_both(torch, optim.Adam, torch.optim.Adam, kwargs, dtype)
    for p, tp in zip(ours, theirs):
        assert p.dtype == dtype
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=rtol, atol=rtol)
