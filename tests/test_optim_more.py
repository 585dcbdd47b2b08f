"""optim, the second set: Adadelta, Adamax, NAdam, RAdam and LBFGS. Steps computed by hand, then
against torch.optim (values, state, state_dict, resuming, parameter groups, schedulers, errors,
signatures); LBFGS on Rosenbrock's function, with and without the strong-Wolfe line search,
step by step and closure call by closure call."""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tinygrad_pool import nn, optim, Tensor, tensor
from tinygrad_pool.optim import lr_scheduler, optimizers
from test_optim import (assert_same, assert_same_state, check_state_dict_layout, feed_same_grads,
                        param, run_both, set_grad, train, twin_params)

NEW = ["Adadelta", "Adamax", "NAdam", "RAdam"]


# ---- hand-computed steps ------------------------------------------------------------------------
def test_adadelta_two_steps_by_hand():
    p = param([1.0])
    opt = optim.Adadelta([p], lr=0.5, rho=0.75, eps=1.0)
    set_grad(p, [2.0])
    opt.step()  # v = 0.25·4 = 1; Δ = sqrt(0 + 1)/sqrt(1 + 1)·2 = √2; u = 0.25·2 = 0.5
    np.testing.assert_allclose(p.numpy(), [1.0 - 0.5 * np.sqrt(2.0)], rtol=1e-14)
    np.testing.assert_allclose(opt.state[p]["acc_delta"].numpy(), [0.5], rtol=1e-14)
    set_grad(p, [2.0])
    opt.step()  # v = 0.75 + 1 = 1.75; Δ = sqrt(0.5 + 1)/sqrt(1.75 + 1)·2
    delta = np.sqrt(1.5) / np.sqrt(2.75) * 2
    np.testing.assert_allclose(p.numpy(), [1.0 - 0.5 * np.sqrt(2.0) - 0.5 * delta], rtol=1e-14)
    np.testing.assert_allclose(opt.state[p]["square_avg"].numpy(), [1.75], rtol=1e-14)


def test_adamax_follows_the_decaying_infinity_norm_by_hand():
    p = param([0.0])
    opt = optim.Adamax([p], lr=0.1, betas=(0.5, 0.5), eps=0.0)
    set_grad(p, [-4.0])
    opt.step()  # m = -2, u = max(0, |-4|) = 4; p = 0 - 0.1/(1 - 0.5)·(-2/4) = 0.1
    np.testing.assert_allclose(p.numpy(), [0.1], rtol=1e-14)
    set_grad(p, [1.0])
    opt.step()  # m = -1 + 0.5 = -0.5; u = max(0.5·4, 1) = 2 (the old maximum, decayed)
    np.testing.assert_allclose(opt.state[p]["exp_inf"].numpy(), [2.0])
    np.testing.assert_allclose(p.numpy(), [0.1 - 0.1 / 0.75 * (-0.5 / 2.0)], rtol=1e-14)


def test_nadam_first_step_by_hand():
    p = param([1.0])
    opt = optim.NAdam([p], lr=0.1, eps=0.0, momentum_decay=0.004)
    set_grad(p, [3.0])
    opt.step()
    # m = 0.1·3, v = 0.001·9 -> denom = sqrt(v / 0.001) = 3; Π = μ₁
    mu1, mu2 = (0.9 * (1 - 0.5 * 0.96 ** (t * 0.004)) for t in (1, 2))
    expected = 1.0 - 0.1 * (1 - mu1) / (1 - mu1) * 1.0 - 0.1 * mu2 / (1 - mu1 * mu2) * 0.1
    np.testing.assert_allclose(p.numpy(), [expected], rtol=1e-7)  # Π is a float32, as torch's
    assert opt.state[p]["mu_product"].dtype == np.float32
    np.testing.assert_allclose(float(opt.state[p]["mu_product"]), mu1, rtol=1e-7)


def test_radam_is_momentum_sgd_until_the_variance_is_tractable():
    """A constant gradient: m / (1 - β1ᵗ) = g exactly, so the first five steps (ρₜ <= 5 with
    β2 = 0.999) move by lr·g; from the sixth on the step is lr·r with the rectification r."""
    p = param([0.0])
    opt = optim.RAdam([p], lr=0.1, eps=0.0)
    moves = []
    for _ in range(7):
        set_grad(p, [2.0])
        before = p.numpy().copy()
        opt.step()
        moves.append(float(before[0] - p.numpy()[0]))
    np.testing.assert_allclose(moves[:5], [0.2] * 5, rtol=1e-12)
    rho_inf = 2 / (1 - 0.999) - 1
    for t in (6, 7):
        rho_t = rho_inf - 2 * t * 0.999 ** t / (1 - 0.999 ** t)
        rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        np.testing.assert_allclose(moves[t - 1], 0.1 * rect, rtol=1e-10)  # m̂·sqrt(1-β2ᵗ)/sqrt(v) = 1
    assert moves[5] < 0.01  # the rectified step starts small


@pytest.mark.parametrize("name", ["NAdam", "RAdam"])
def test_decoupled_weight_decay_shrinks_the_weight_not_the_gradient(name):
    coupled, decoupled = param([2.0]), param([2.0])
    plain = param([2.0])
    for p, kwargs in ((coupled, dict(weight_decay=0.5)),
                      (decoupled, dict(weight_decay=0.5, decoupled_weight_decay=True)),
                      (plain, dict())):
        set_grad(p, [1.0])
        getattr(optim, name)([p], lr=0.1, **kwargs).step()
    # decoupled: p·(1 - 0.1·0.5) and then the same move as without any decay
    np.testing.assert_allclose(decoupled.numpy() - 2.0 * 0.95, plain.numpy() - 2.0, rtol=1e-12)
    if name == "NAdam":  # L2 in the gradient goes through the adaptive scaling
        assert abs(coupled.numpy()[0] - decoupled.numpy()[0]) > 1e-3
    else:  # RAdam's first step is plain SGD (ρ₁ = 1 <= 5): L2 and decoupled coincide
        np.testing.assert_allclose(coupled.numpy(), decoupled.numpy(), rtol=1e-12)


def test_lbfgs_first_iteration_by_hand():
    p = param([3.0, -1.0])
    opt = optim.LBFGS([p], lr=0.5, max_iter=1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()  # g = 2p = (6, -2), Σ|g| = 8
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert loss.item() == 10.0
    # d = -g, t = min(1, 1/8)·lr; one iteration, and no evaluation after the last one
    np.testing.assert_allclose(p.numpy(), [3.0 - 6.0 / 16, -1.0 + 2.0 / 16], rtol=1e-15)
    assert opt.state[p]["func_evals"] == 1 and opt.state[p]["n_iter"] == 1


def test_lbfgs_with_strong_wolfe_solves_a_convex_quadratic():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    p = param([5.0, 5.0])
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = 0.5 * (p * (tensor(a) @ p)).sum() - (tensor(b) * p).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(p.numpy(), np.linalg.solve(a, b), atol=1e-8)


@pytest.mark.parametrize("name", NEW)
def test_params_without_grad_are_skipped_and_float32_stays_float32(name):
    a, b = param([1.0, 2.0], np.float32), param([3.0], np.float32)
    opt = getattr(optim, name)([a, b], lr=0.5, weight_decay=0.1)
    set_grad(a, [1.0, -1.0])
    opt.step()
    assert a.dtype == np.float32 and b.numpy().tolist() == [3.0] and b not in opt.state
    assert a.numpy().tolist() != [1.0, 2.0]
    assert all(value.dtype == np.float32 for value in opt.state[a].values())


@pytest.mark.parametrize("name", NEW + ["LBFGS"])
def test_a_step_checks_every_gradient_before_changing_anything(name):
    good, bad = param([1.0, 2.0]), param([1.0, 2.0])
    if name == "LBFGS":
        opt = optim.LBFGS([good, bad])

        def closure():
            set_grad(good, [1.0, 1.0])
            bad._grad = tensor([1.0, 1.0, 1.0])  # (see below)
            return tensor(1.0)
        step = lambda: opt.step(closure)  # noqa: E731
    else:
        opt = getattr(optim, name)([{"params": [good]}, {"params": [bad], "lr": 0.5}])
        set_grad(good, [1.0, 1.0])
        # A gradient the .grad setter refuses, written behind its back: the step's own check
        # must still catch it before the first group moves.
        bad._grad = tensor([1.0, 1.0, 1.0])
        step = opt.step
    with pytest.raises(RuntimeError, match=r"shape \[2\] has a gradient of shape \[3\]"):
        step()
    assert good.numpy().tolist() == [1.0, 2.0] and good._version == 0 and len(opt.state) == 0


@pytest.mark.parametrize("name", NEW)
def test_every_step_bumps_the_parameter_version(name):
    p = param([1.0, 2.0])
    opt = getattr(optim, name)([p])
    for expected_above in (0, 1):
        set_grad(p, [0.5, -0.5])
        before = p._version
        opt.step()
        assert p._version > before >= expected_above


def test_lbfgs_bumps_the_parameter_version():
    p = param([1.0, 2.0])
    opt = optim.LBFGS([p], max_iter=3)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    before = p._version
    opt.step(closure)
    assert p._version > before and p.numpy().tolist() != [1.0, 2.0]


# ---- parity with torch.optim over many steps ------------------------------------------------------
SETTINGS = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.1, weight_decay=0.05, maximize=True)),
    ("Adadelta", dict(rho=0.0)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, weight_decay=0.01, maximize=True)),
    ("Adamax", dict(lr=0.05, betas=(0.3, 0.5))),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("NAdam", dict(lr=0.05, betas=(0.5, 0.9), eps=1e-6, momentum_decay=0.0)),
    ("RAdam", dict()),  # ρₜ crosses 5 at step 6: both branches
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.9), maximize=True)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.5))),  # ρ∞ = 3: never rectified
]
SETTING_IDS = [name + ":" + ",".join(f"{a}={b}" for a, b in kw.items()) for name, kw in SETTINGS]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name, kwargs", SETTINGS, ids=SETTING_IDS)
def test_twenty_steps_match_torch(torch, name, kwargs, dtype, rtol):
    opt, topt, ours, theirs = run_both(torch, name, kwargs, dtype)
    assert_same(ours, theirs, rtol)
    assert_same_state(opt, topt, ours, theirs, rtol)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(NEW), lr=st.floats(1e-4, 0.5), weight_decay=st.sampled_from([0.0, 1e-3, 0.2]),
       beta1=st.floats(0.0, 0.99), beta2=st.floats(0.5, 0.9999), flag=st.booleans(),
       maximize=st.booleans(), eps=st.sampled_from([1e-8, 1e-3]))
def test_random_options_match_torch(name, lr, weight_decay, beta1, beta2, flag, maximize, eps):
    torch = pytest.importorskip("torch")
    kwargs = dict(lr=lr, weight_decay=weight_decay, maximize=maximize, eps=eps)
    if name == "Adadelta":
        kwargs.update(rho=beta2)
    else:
        kwargs.update(betas=(beta1, beta2))
    if name in ("NAdam", "RAdam"):
        kwargs.update(decoupled_weight_decay=flag)
    if name == "NAdam":
        kwargs.update(momentum_decay=beta1 / 10)
    opt, topt, ours, theirs = run_both(torch, name, kwargs, np.float64, steps=8)
    assert_same(ours, theirs, 1e-10)
    assert_same_state(opt, topt, ours, theirs, 1e-10)


@pytest.mark.parametrize("name", NEW)
def test_a_linear_regression_trains_as_torchs(torch, name):
    """Gradients from autograd (both frameworks), 20 steps, two groups with different rates."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 3))
    y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
    w0, b0 = rng.standard_normal((3, 1)), np.zeros(1)
    w, b = nn.Parameter(w0.copy()), nn.Parameter(b0.copy())
    tw, tb = torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0))
    opt = getattr(optim, name)([{"params": [w]}, {"params": [b], "lr": 0.3}], lr=0.1)
    topt = getattr(torch.optim, name)([{"params": [tw]}, {"params": [tb], "lr": 0.3}], lr=0.1)
    losses, tlosses = [], []
    for _ in range(20):
        opt.zero_grad()
        topt.zero_grad()
        loss = ((tensor(x) @ w + b - tensor(y)) ** 2).mean()
        tloss = ((torch.tensor(x) @ tw + tb - torch.tensor(y)) ** 2).mean()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        losses.append(loss.item())
        tlosses.append(tloss.item())
    np.testing.assert_allclose(losses, tlosses, rtol=1e-10)
    assert_same([w, b], [tw, tb], 1e-10)
    assert losses[-1] < losses[0]


def test_repr_defaults_and_signatures_are_torchs(torch):
    for name in NEW + ["LBFGS"]:
        ours, theirs = twin_params(torch, np.float64)
        opt, topt = getattr(optim, name)(ours), getattr(torch.optim, name)(theirs)
        assert repr(opt) == repr(topt)
        assert opt.defaults == topt.defaults
        mine = inspect.signature(getattr(optim, name).__init__).parameters.values()
        torchs = inspect.signature(getattr(torch.optim, name).__init__).parameters.values()
        assert [(q.name, q.kind, q.default) for q in mine] == \
            [(q.name, q.kind, q.default) for q in torchs], name
    for name, kwargs in SETTINGS:
        ours, theirs = twin_params(torch, np.float64)
        groups = lambda ps: [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.5}]  # noqa: E731
        assert repr(getattr(optim, name)(groups(ours), **kwargs)) == \
            repr(getattr(torch.optim, name)(groups(theirs), **kwargs))


# ---- parameter groups ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", NEW)
def test_add_param_group_and_changed_rates_match_torch(torch, name):
    ours, theirs = twin_params(torch, np.float64)
    opt, topt = getattr(optim, name)(ours[:1], lr=0.1), getattr(torch.optim, name)(theirs[:1], lr=0.1)
    rng = np.random.default_rng(0)
    for step in range(8):
        if step == 3:
            opt.add_param_group({"params": ours[1:], "lr": 0.01})
            topt.add_param_group({"params": theirs[1:], "lr": 0.01})
        if step == 5:  # a rate changed by hand takes effect at the next step
            opt.param_groups[0]["lr"] = topt.param_groups[0]["lr"] = 0.02
        feed_same_grads(torch, ours, theirs, rng, step)
        opt.step()
        topt.step()
    assert_same(ours, theirs, 1e-12)
    assert_same_state(opt, topt, ours, theirs, 1e-12)
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]


# ---- state_dict and resuming ---------------------------------------------------------------------
def test_state_dict_has_torchs_layout(torch):
    check_state_dict_layout(torch, SETTINGS)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name, kwargs", SETTINGS, ids=SETTING_IDS)
def test_five_steps_saved_and_resumed_match_torch(torch, name, kwargs, dtype, rtol):
    """Two groups; 5 steps, state_dict, a new optimizer loads it, 5 more steps: as torch doing
    the same, and as 10 steps in one go (bit for bit, but for NAdam: loading casts its float32
    mu_product to a float64 parameter's dtype, as torch's load_state_dict does)."""
    def groups(ps):
        return [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.02}]

    ours, theirs = twin_params(torch, dtype)
    opt = getattr(optim, name)(groups(ours), **kwargs)
    topt = getattr(torch.optim, name)(groups(theirs), **kwargs)
    train(torch, opt, ours, (theirs, topt), np.random.default_rng(5), 5)
    resumed = getattr(optim, name)(groups(ours), lr=1.0)  # options come back from the state dict
    tresumed = getattr(torch.optim, name)(groups(theirs), lr=1.0)
    resumed.load_state_dict(opt.state_dict())
    tresumed.load_state_dict(topt.state_dict())
    train(torch, resumed, ours, (theirs, tresumed), np.random.default_rng(6), 5, start=5)
    assert_same(ours, theirs, rtol)
    assert_same_state(resumed, tresumed, ours, theirs, rtol)
    assert [g["lr"] for g in resumed.param_groups] == [g["lr"] for g in opt.param_groups]

    straight, tstraight = twin_params(torch, dtype)
    opt2 = getattr(optim, name)(groups(straight), **kwargs)
    topt2 = getattr(torch.optim, name)(groups(tstraight), **kwargs)
    train(torch, opt2, straight, (tstraight, topt2), np.random.default_rng(5), 5)
    train(torch, opt2, straight, (tstraight, topt2), np.random.default_rng(6), 5, start=5)
    for p, q in zip(ours, straight):
        if name == "NAdam" and dtype == np.float64:
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-9)
        else:
            np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_nadam_mu_product_is_cast_on_load_as_torch_does(torch):
    for dtype in (np.float64, np.float32):
        ours, theirs = twin_params(torch, dtype)
        opt, topt = optim.NAdam(ours), torch.optim.NAdam(theirs)
        train(torch, opt, ours, (theirs, topt), np.random.default_rng(0), 2)
        loaded, tloaded = optim.NAdam(ours), torch.optim.NAdam(theirs)
        loaded.load_state_dict(opt.state_dict())
        tloaded.load_state_dict(topt.state_dict())
        assert loaded.state[ours[0]]["mu_product"].dtype == dtype
        assert str(tloaded.state[theirs[0]]["mu_product"].dtype) == "torch." + np.dtype(dtype).name
        assert loaded.state[ours[0]]["step"].dtype == np.float32


def test_load_state_dict_checks_shapes_before_changing_anything():
    a, b = param([1.0]), param([1.0, 2.0])
    source = optim.NAdam([a, b])
    set_grad(a, [1.0])
    set_grad(b, [1.0, 1.0])
    source.step()
    swapped = optim.NAdam([param([1.0, 2.0]), param([1.0])], lr=0.5)
    with pytest.raises(ValueError, match=r"NAdam.load_state_dict: state 'exp_avg' has shape \[1\] but "
                                         r"its parameter has shape \[2\]"):
        swapped.load_state_dict(source.state_dict())
    assert len(swapped.state) == 0 and swapped.param_groups[0]["lr"] == 0.5


# ---- learning-rate schedulers ----------------------------------------------------------------------
@pytest.mark.parametrize("name", NEW)
def test_step_lr_drives_the_new_optimizers_as_torchs(torch, name):
    ours, theirs = twin_params(torch, np.float64)
    opt, topt = getattr(optim, name)(ours, lr=0.5), getattr(torch.optim, name)(theirs, lr=0.5)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.5)
    rng = np.random.default_rng(2)
    for epoch in range(7):
        feed_same_grads(torch, ours, theirs, rng, epoch)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == tsched.get_last_lr()
    assert opt.param_groups[0]["lr"] == 0.5 * 0.5 ** 3
    assert_same(ours, theirs, 1e-10)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
def test_one_cycle_lr_cycles_their_beta1_as_torchs(torch, name):
    ours, theirs = twin_params(torch, np.float64)
    opt, topt = getattr(optim, name)(ours), getattr(torch.optim, name)(theirs)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.1, total_steps=10)
    rng = np.random.default_rng(4)
    for step in range(9):
        feed_same_grads(torch, ours, theirs, rng, step)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert opt.param_groups[0]["betas"] == pytest.approx(topt.param_groups[0]["betas"], rel=1e-12)
        assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-12)
    assert_same(ours, theirs, 1e-10)


# ---- LBFGS against torch -------------------------------------------------------------------------
ROSENBROCK_START = [-1.2, 1.0]  # the classic start, far round the valley from (1, 1)
ROSENBROCK_4D = [-1.5, 2.0, 0.5, -0.3]  # (it ends in the local minimum near (-1, 1, 1, 1))


def rosenbrock(x):
    """Σ (1 - xᵢ)² + 100 (xᵢ₊₁ - xᵢ²)²: a curved valley, the classic line-search test."""
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def counted_closure(opt, loss_fn, params, calls):
    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = loss_fn(*params)
        loss.backward()
        return loss
    return closure


def lbfgs_pair(torch, start, dtype, **kwargs):
    """Our LBFGS and torch's on the same starting vector, with closures counting their calls."""
    p = nn.Parameter(np.array(start, dtype=dtype))
    tp = torch.nn.Parameter(torch.tensor(np.array(start, dtype=dtype)))
    opt, topt = optim.LBFGS([p], **kwargs), torch.optim.LBFGS([tp], **kwargs)
    calls, tcalls = [], []
    return (p, opt, counted_closure(opt, rosenbrock, [p], calls), calls,
            tp, topt, counted_closure(topt, rosenbrock, [tp], tcalls), tcalls)


def assert_same_value(torch, ours, theirs, rtol, atol, where):
    """One LBFGS state value against torch's: Tensors (dtype, shape, values), lists item by
    item, Python numbers by type and value, None as None."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, Tensor), where
        assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", "")), where
        assert ours.shape == tuple(theirs.shape), where
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_value(torch, a, b, rtol, atol, f"{where}[{index}]")
    elif theirs is None:
        assert ours is None, where
    else:
        assert type(ours) is type(theirs), (where, ours, theirs)
        assert ours == pytest.approx(theirs, rel=rtol, abs=atol), where


def assert_same_lbfgs_state(torch, opt, topt, rtol, atol):
    state = opt.state[opt.param_groups[0]["params"][0]]
    tstate = topt.state[topt.param_groups[0]["params"][0]]
    assert list(state) == list(tstate)
    for key, value in tstate.items():
        assert_same_value(torch, state[key], value, rtol, atol, key)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("lr, max_iter, history_size", [(1, 20, 100), (0.1, 20, 100), (0.5, 5, 3),
                                                      (1, 4, 2), (1, 1, 100)])
def test_lbfgs_on_rosenbrock_follows_torchs_trajectory(torch, monkeypatch, line_search_fn, lr,
                                                       max_iter, history_size):
    """float64, step by step: the same points, losses, closure calls, func_evals and n_iter;
    then the whole state, key by key and value by value."""
    calls_of = {"extrapolate": 0, "zoom": 0}
    cubic = optimizers._cubic_interpolate

    def counting_cubic(*args, bounds=None):
        calls_of["extrapolate" if bounds is not None else "zoom"] += 1
        return cubic(*args, bounds=bounds)
    monkeypatch.setattr(optimizers, "_cubic_interpolate", counting_cubic)

    p, opt, closure, calls, tp, topt, tclosure, tcalls = lbfgs_pair(
        torch, ROSENBROCK_START, np.float64, lr=lr, max_iter=max_iter, history_size=history_size,
        line_search_fn=line_search_fn)
    for step in range(6):
        loss, tloss = opt.step(closure), topt.step(tclosure)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-9, atol=1e-12)
        assert len(calls) == len(tcalls), step
        state, tstate = opt.state[p], topt.state[tp]
        assert (state["func_evals"], state["n_iter"]) == (tstate["func_evals"], tstate["n_iter"])
        assert state["func_evals"] == len(calls)
        if step == 1:  # still far from the minimum, where the history is all well-conditioned
            assert_same_lbfgs_state(torch, opt, topt, rtol=1e-8, atol=1e-12)
    # Near the minimum the newest pairs are tiny differences of nearly equal numbers: the same
    # state, to the digits that rounding leaves.
    assert_same_lbfgs_state(torch, opt, topt, rtol=1e-4, atol=1e-7)
    # (max_iter=1 leaves max_eval = 1: the line search may only try its first step, and keeps
    # t = 0 when that goes uphill, as torch's does.)
    if max_iter > 1:
        assert rosenbrock(p).item() < rosenbrock(tensor(np.array(ROSENBROCK_START))).item()
    if max_iter == 20 and (line_search_fn or lr == 1):  # down the valley to the minimum
        np.testing.assert_allclose(p.numpy(), [1.0, 1.0], atol=1e-4)
    if line_search_fn is not None and lr == 0.1:  # the line search's two phases both ran
        assert calls_of["extrapolate"] > 0 and calls_of["zoom"] > 0
    if max_iter > 1 or line_search_fn is None:
        assert len(opt.state[p]["old_dirs"]) > 0


def himmelblau(x):
    """(x² + y - 11)² + (x + y² - 7)²: four minima, a maximum and saddles between them."""
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def wavy(x):
    """Σ 3 sin(xᵢ) + 0.1 xᵢ²: ripples on a bowl, many local minima."""
    return (x.sin() * 3).sum() + 0.1 * (x * x).sum()


# Found by searching random starts for line searches that reach the rare branches of torch's
# strong-Wolfe search: an interpolated point too near the bracket's end twice in a row
# (moved 10% inside), a try that is no lower than the previous one while bracketing, a
# line search cut short by max_eval.
RARE_BRANCHES = [
    (wavy, [1.6, 2.7], dict(lr=5.0, max_iter=5, history_size=3)),
    (rosenbrock, [-2.0, 2.7], dict(lr=2.0, max_iter=10, history_size=7)),
    (himmelblau, [0.0, 2.1], dict(lr=1.0, max_iter=4, history_size=4)),
    (himmelblau, [-2.0, -0.3], dict(lr=0.05, max_iter=10, history_size=3)),
]


@pytest.mark.parametrize("fn, start, kwargs", RARE_BRANCHES,
                         ids=[f"{fn.__name__}{start}" for fn, start, _ in RARE_BRANCHES])
def test_lbfgs_strong_wolfe_rare_branches_follow_torch(torch, fn, start, kwargs):
    p = nn.Parameter(np.array(start))
    tp = torch.nn.Parameter(torch.tensor(np.array(start)))
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe", **kwargs)
    topt = torch.optim.LBFGS([tp], line_search_fn="strong_wolfe", **kwargs)
    calls, tcalls = [], []
    closure, tclosure = counted_closure(opt, fn, [p], calls), counted_closure(topt, fn, [tp], tcalls)
    for _ in range(3):
        opt.step(closure)
        topt.step(tclosure)
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-9, atol=1e-12)
        assert len(calls) == len(tcalls) == opt.state[p]["func_evals"]
    assert_same_lbfgs_state(torch, opt, topt, rtol=1e-6, atol=1e-9)


def test_lbfgs_history_is_limited_to_history_size(torch):
    p, opt, closure, _, tp, topt, tclosure, _ = lbfgs_pair(torch, ROSENBROCK_4D, np.float64,
                                                           history_size=3, max_iter=10)
    opt.step(closure)
    topt.step(tclosure)
    assert len(opt.state[p]["old_dirs"]) == len(opt.state[p]["ro"]) == 3
    assert len(opt.state[p]["al"]) == 3
    assert_same_lbfgs_state(torch, opt, topt, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_float32_least_squares_matches_torch(torch, line_search_fn):
    """Several parameters (one frozen: its gradient counts as zeros), float32, a few steps."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((30, 4)).astype(np.float32) * np.array([1, 3, 0.3, 2], np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.3).astype(np.float32)
    w0, b0, f0 = (rng.standard_normal((4, 1)).astype(np.float32), np.zeros(1, np.float32),
                  np.ones(1, np.float32))
    ours = [nn.Parameter(a.copy()) for a in (w0, b0, f0)]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in (w0, b0, f0)]
    ours[2].requires_grad = False
    theirs[2].requires_grad_(False)
    opt = optim.LBFGS(ours, lr=0.8, max_iter=3, line_search_fn=line_search_fn)
    topt = torch.optim.LBFGS(theirs, lr=0.8, max_iter=3, line_search_fn=line_search_fn)
    loss_fn = lambda w, b, f: ((tensor(x) @ w + b * f - tensor(y)) ** 2).mean()  # noqa: E731
    tloss_fn = lambda w, b, f: ((torch.tensor(x) @ w + b * f - torch.tensor(y)) ** 2).mean()  # noqa: E731
    calls, tcalls = [], []
    closure = counted_closure(opt, loss_fn, ours, calls)
    tclosure = counted_closure(topt, tloss_fn, theirs, tcalls)
    for _ in range(3):
        opt.step(closure)
        topt.step(tclosure)
        assert_same(ours, theirs, 1e-4)
        assert len(calls) == len(tcalls)
    assert ours[2].numpy().tolist() == [1.0]
    assert_same_lbfgs_state(torch, opt, topt, rtol=1e-3, atol=1e-4)
    assert opt.state[ours[0]]["d"].shape == (6,)  # 4 + 1 + 1 values, flattened


def test_lbfgs_returns_at_once_from_an_optimum_as_torch(torch):
    p, opt, closure, calls, tp, topt, tclosure, tcalls = lbfgs_pair(torch, [1.0, 1.0, 1.0], np.float64)
    assert opt.step(closure).item() == 0.0
    topt.step(tclosure)
    assert len(calls) == len(tcalls) == 1 and p.numpy().tolist() == [1.0, 1.0, 1.0]
    assert opt.state[p] == {"func_evals": 1, "n_iter": 0} == dict(topt.state[tp])


def test_lbfgs_max_eval_limits_the_closure_calls(torch):
    p, opt, closure, calls, tp, topt, tclosure, tcalls = lbfgs_pair(
        torch, ROSENBROCK_4D, np.float64, max_iter=50, max_eval=7, line_search_fn="strong_wolfe")
    opt.step(closure)
    topt.step(tclosure)
    assert len(calls) == len(tcalls) and opt.state[p]["func_evals"] == topt.state[tp]["func_evals"]
    assert len(calls) <= 7 + 25  # the last line search may run past max_eval, as torch's does
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_saved_and_resumed_continues_identically(torch, line_search_fn):
    p, opt, closure, _, tp, topt, tclosure, _ = lbfgs_pair(
        torch, ROSENBROCK_4D, np.float64, max_iter=4, history_size=5, line_search_fn=line_search_fn)
    for _ in range(3):
        opt.step(closure)
        topt.step(tclosure)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == [0]
    assert sd["param_groups"] == tsd["param_groups"]
    resumed, tresumed = optim.LBFGS([p], lr=0.1), torch.optim.LBFGS([tp], lr=0.1)
    resumed.load_state_dict(sd)
    tresumed.load_state_dict(tsd)
    assert resumed.state[p]["d"] is not opt.state[p]["d"]  # a copy
    assert_same_lbfgs_state(torch, resumed, tresumed, rtol=1e-8, atol=1e-12)
    calls = []
    closure2 = counted_closure(resumed, rosenbrock, [p], calls)
    tclosure2 = counted_closure(tresumed, rosenbrock, [tp], [])
    for _ in range(3):
        resumed.step(closure2)
        tresumed.step(tclosure2)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-9)
    assert_same_lbfgs_state(torch, resumed, tresumed, rtol=1e-6, atol=1e-9)

    straight = nn.Parameter(np.array(ROSENBROCK_4D))
    opt2 = optim.LBFGS([straight], max_iter=4, history_size=5, line_search_fn=line_search_fn)
    closure3 = counted_closure(opt2, rosenbrock, [straight], [])
    for _ in range(6):
        opt2.step(closure3)
    np.testing.assert_array_equal(p.numpy(), straight.numpy())
    assert resumed.state[p]["func_evals"] == opt2.state[straight]["func_evals"]


def test_lbfgs_load_state_dict_checks_the_flat_length():
    p = nn.Parameter(np.array(ROSENBROCK_4D))
    opt = optim.LBFGS([p], max_iter=3)
    opt.step(counted_closure(opt, rosenbrock, [p], []))
    other = optim.LBFGS([nn.Parameter(np.ones((3, 1)))])
    with pytest.raises(ValueError, match=r"LBFGS.load_state_dict: state 'd' has shape \[4\] but this "
                                         r"optimizer expects shape \[3\]"):
        other.load_state_dict(opt.state_dict())
    assert len(other.state) == 0


def test_a_scheduler_drives_lbfgs_as_torchs(torch):
    p, opt, closure, calls, tp, topt, tclosure, tcalls = lbfgs_pair(torch, ROSENBROCK_4D, np.float64,
                                                                    lr=0.5, max_iter=3)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.7)
    tsched = torch.optim.lr_scheduler.ExponentialLR(topt, gamma=0.7)
    for _ in range(4):
        opt.step(closure)
        topt.step(tclosure)
        sched.step()
        tsched.step()
    assert opt.param_groups[0]["lr"] == topt.param_groups[0]["lr"] == pytest.approx(0.5 * 0.7 ** 4)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-10)
    assert len(calls) == len(tcalls)


# ---- errors: torch's type and message ---------------------------------------------------------------
BAD_CALLS = [
    ("Adadelta", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(rho=-0.1), "Invalid rho value: -0.1"),
    ("Adadelta", dict(eps=-1e-6), "Invalid epsilon value: -1e-06"),
    ("Adadelta", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adamax", dict(lr=float("nan")), "Invalid learning rate: nan"),
    ("Adamax", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ("NAdam", dict(betas=(0.9, 1.5)), "Invalid beta parameter at index 1: 1.5"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("NAdam", dict(weight_decay=-1, momentum_decay=-1), "Invalid weight_decay value: -1"),
    ("RAdam", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("RAdam", dict(betas=(-0.5, 0.9)), "Invalid beta parameter at index 0: -0.5"),
    ("RAdam", dict(eps=-1, betas=(2.0, 0.9)), "Invalid epsilon value: -1"),  # torch's order
    ("LBFGS", dict(lr=-1), "Invalid learning rate: -1"),
]


@pytest.mark.parametrize("name, kwargs, message", BAD_CALLS, ids=[m for _, _, m in BAD_CALLS])
def test_invalid_options_raise_torchs_error(torch, name, kwargs, message):
    ours, theirs = twin_params(torch, np.float64)
    with pytest.raises(ValueError, match=message) as torch_error:
        getattr(torch.optim, name)(theirs, **kwargs)
    with pytest.raises(ValueError, match=message) as our_error:
        getattr(optim, name)(ours, **kwargs)
    assert str(torch_error.value) in str(our_error.value)
    assert name in str(our_error.value)


@pytest.mark.parametrize("name", NEW)
def test_an_invalid_option_in_a_group_is_refused_before_it_is_added(name):
    opt = getattr(optim, name)([param([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        opt.add_param_group({"params": [param([2.0])], "lr": -1})
    with pytest.raises(ValueError, match="Invalid weight_decay value: -2"):
        opt.add_param_group({"params": [param([2.0])], "weight_decay": -2})
    assert len(opt.param_groups) == 1


@pytest.mark.parametrize("make, error, message", [
    (lambda: optim.Adamax([param([1.0])], betas=0.9), TypeError, "Adamax: betas must be a pair"),
    (lambda: optim.NAdam([param([1.0])], betas=(0.9,)), ValueError, "NAdam: betas must be a pair"),
    (lambda: optim.RAdam([param([1.0])], lr="0.1"), TypeError, "RAdam: lr must be a real number"),
    (lambda: optim.Adadelta([param([1.0])], rho=None), TypeError, "Adadelta: rho must be a real number"),
    (lambda: optim.NAdam([param([1.0])], differentiable=True), NotImplementedError, "differentiable=True"),
    (lambda: optim.LBFGS([param([1.0])], max_iter=2.5), TypeError, "LBFGS: max_iter must be an integer"),
    (lambda: optim.LBFGS([param([1.0])], history_size=0), ValueError,
     "LBFGS: history_size must be at least 1, got 0"),
    (lambda: optim.LBFGS([param([1.0])], tolerance_grad="x"), TypeError,
     "LBFGS: tolerance_grad must be a real number"),
], ids=["betas a float", "betas of one", "lr a string", "rho None", "differentiable", "max_iter 2.5",
        "history 0", "tolerance a string"])
def test_other_bad_options_are_clear(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_implementation_flags_are_accepted_and_recorded(torch):
    p = [param([1.0])]
    for name in NEW:
        opt = getattr(optim, name)(p, foreach=False, capturable=False)
        assert opt.param_groups[0]["foreach"] is False and opt.param_groups[0]["capturable"] is False
    with pytest.raises(TypeError):  # no fused= in torch's signatures of these either
        torch.optim.Adamax([torch.nn.Parameter(torch.ones(1))], fused=True)
    with pytest.raises(TypeError):
        optim.Adamax(p, fused=True)


def test_lbfgs_refuses_a_second_parameter_group(torch):
    ours, theirs = twin_params(torch, np.float64)
    message = r"LBFGS doesn't support per-parameter options \(parameter groups\)"
    with pytest.raises(ValueError, match=message):
        torch.optim.LBFGS([{"params": theirs[:1]}, {"params": theirs[1:]}])
    with pytest.raises(ValueError, match=message):
        optim.LBFGS([{"params": ours[:1]}, {"params": ours[1:]}])
    opt = optim.LBFGS(ours[:1])
    with pytest.raises(ValueError, match=message):  # torch fails only at the next step
        opt.add_param_group({"params": ours[1:]})
    assert len(opt.param_groups) == 1


def test_lbfgs_needs_a_closure_as_torch(torch):
    ours, theirs = twin_params(torch, np.float64)
    opt, topt = optim.LBFGS(ours), torch.optim.LBFGS(theirs)
    message = r"LBFGS.step\(\) missing 1 required positional argument: 'closure'"
    with pytest.raises(TypeError, match=message):
        topt.step()
    with pytest.raises(TypeError, match=message):
        opt.step()
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        topt.step(None)
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        opt.step(None)
    assert len(opt.state) == 0


def test_lbfgs_unknown_line_search_is_torchs_runtime_error(torch):
    ours, theirs = twin_params(torch, np.float64)
    topt = torch.optim.LBFGS(theirs, line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):  # torch: at step
        topt.step(counted_closure(topt, lambda a, b: (a * a).sum() + (b * b).sum(), theirs, []))
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):  # here: at once
        optim.LBFGS(ours, line_search_fn="armijo")
    opt = optim.LBFGS(ours)
    opt.param_groups[0]["line_search_fn"] = "armijo"
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(counted_closure(opt, lambda a, b: (a * a).sum() + (b * b).sum(), ours, []))
    assert len(opt.state) == 0
