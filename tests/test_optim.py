"""optim: single steps computed by hand, then every optimizer against torch.optim over many
steps (values, state, state_dict, repr, errors), parameter groups and resuming from a state_dict."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tinygrad_pool import nn, optim, Tensor, tensor

SHAPES = [(3, 4), (5,)]


def param(values, dtype=np.float64):
    return nn.Parameter(np.array(values, dtype=dtype))


def set_grad(p, values):
    p.grad = tensor(np.array(values, dtype=p.dtype))


# ---- hand-computed steps ------------------------------------------------------------------------
def test_sgd_plain_step():
    p = param([1.0, -2.0])
    set_grad(p, [0.5, 1.0])
    optim.SGD([p], lr=0.1).step()
    np.testing.assert_allclose(p.numpy(), [1.0 - 0.05, -2.0 - 0.1])


def test_sgd_momentum_weight_decay_dampening_by_hand():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.1)
    set_grad(p, [2.0])
    opt.step()  # d = 2 + 0.1·1 = 2.1; first step: buf = d (no dampening); p = 1 - 0.21
    np.testing.assert_allclose(p.numpy(), [0.79])
    set_grad(p, [2.0])
    opt.step()  # d = 2 + 0.079 = 2.079; buf = 0.9·2.1 + 0.5·2.079 = 2.9295; p = 0.79 - 0.29295
    np.testing.assert_allclose(p.numpy(), [0.79 - 0.29295])
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), [2.9295])


def test_sgd_nesterov_and_maximize_by_hand():
    p = param([0.0])
    opt = optim.SGD([p], lr=1.0, momentum=0.5, nesterov=True)
    set_grad(p, [1.0])
    opt.step()  # buf = 1; d = 1 + 0.5·1 = 1.5
    np.testing.assert_allclose(p.numpy(), [-1.5])
    set_grad(p, [1.0])
    opt.step()  # buf = 0.5 + 1 = 1.5; d = 1 + 0.75 = 1.75
    np.testing.assert_allclose(p.numpy(), [-3.25])
    q = param([0.0])
    set_grad(q, [2.0])
    optim.SGD([q], lr=0.5, maximize=True).step()  # ascent: q = 0 + 0.5·2
    np.testing.assert_allclose(q.numpy(), [1.0])


def test_adam_first_step_moves_every_coordinate_by_about_lr():
    p = param([1.0, 1.0, 1.0])
    set_grad(p, [1e-3, 5.0, -300.0])
    optim.Adam([p], lr=0.01).step()
    # m̂ = g and v̂ = g² after bias correction, so the step is lr · g / (|g| + eps).
    expected = 1.0 - 0.01 * np.array([1e-3, 5.0, -300.0]) / (np.abs([1e-3, 5.0, -300.0]) + 1e-8)
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12)


def test_adam_two_steps_with_weight_decay_by_hand():
    p = param([2.0])
    opt = optim.Adam([p], lr=0.1, betas=(0.5, 0.75), eps=0.0, weight_decay=0.5)
    set_grad(p, [1.0])
    opt.step()  # g = 1 + 1 = 2; m̂ = 2, v̂ = 4 -> p = 2 - 0.1·2/2 = 1.9
    np.testing.assert_allclose(p.numpy(), [1.9])
    set_grad(p, [1.0])
    opt.step()  # g = 1.95; m = 0.5·1 + 0.5·1.95 = 1.475; v = 0.75·1 + 0.25·3.8025 = 1.700625
    m_hat, v_hat = 1.475 / (1 - 0.25), 1.700625 / (1 - 0.5625)
    np.testing.assert_allclose(p.numpy(), [1.9 - 0.1 * m_hat / math.sqrt(v_hat)])
    assert float(opt.state[p]["step"]) == 2.0 and opt.state[p]["step"].dtype == np.float32


def test_adamw_decays_the_weight_not_the_gradient_by_hand():
    p = param([2.0])
    set_grad(p, [1.0])
    optim.AdamW([p], lr=0.1, eps=0.0, weight_decay=0.5).step()
    # p = 2·(1 - 0.1·0.5) = 1.9, then the Adam step of g = 1 (m̂/sqrt(v̂) = 1): 1.9 - 0.1
    np.testing.assert_allclose(p.numpy(), [1.8])


def test_rmsprop_and_adagrad_first_step_by_hand():
    p = param([1.0])
    set_grad(p, [2.0])
    optim.RMSprop([p], lr=0.1, alpha=0.75, eps=0.0).step()  # v = 0.25·4 = 1; p = 1 - 0.1·2/1
    np.testing.assert_allclose(p.numpy(), [0.8])
    q = param([1.0])
    opt = optim.Adagrad([q], lr=0.1, lr_decay=1.0, initial_accumulator_value=5.0, eps=0.0)
    set_grad(q, [2.0])
    opt.step()  # sum = 5 + 4 = 9; q = 1 - 0.1·2/3
    np.testing.assert_allclose(q.numpy(), [1.0 - 0.2 / 3])
    set_grad(q, [0.0])
    opt.step()  # a zero gradient: no move, sum unchanged; the decayed rate is 0.1/2
    np.testing.assert_allclose(opt.state[q]["sum"].numpy(), [9.0])
    assert float(opt.state[q]["step"]) == 2.0


def test_params_without_grad_are_skipped_and_float32_stays_float32():
    a, b = param([1.0, 2.0], np.float32), param([3.0], np.float32)
    set_grad(a, [1.0, 1.0])
    for opt in (optim.SGD([a, b], lr=0.5, momentum=0.9), optim.Adam([a, b], lr=0.5, weight_decay=0.1),
                optim.RMSprop([a, b], momentum=0.5, centered=True)):
        opt.step()
        assert a.dtype == np.float32 and b.dtype == np.float32 and a.grad.dtype == np.float32
        assert b.numpy().tolist() == [3.0] and b not in opt.state
    assert opt.state[a]["square_avg"].dtype == np.float32


def test_zero_grad_sets_none_or_zeros():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    set_grad(p, [3.0])
    opt.zero_grad(set_to_none=False)
    assert p.grad.numpy().tolist() == [0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_with_a_closure_returns_its_loss():
    p = param([3.0])
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert loss.item() == 9.0
    np.testing.assert_allclose(p.numpy(), [3.0 - 0.25 * 6.0])


def test_a_step_checks_every_gradient_before_changing_anything():
    good, bad = param([1.0, 2.0]), param([1.0, 2.0])
    opt = optim.Adam([{"params": [good]}, {"params": [bad], "lr": 0.5}])
    set_grad(good, [1.0, 1.0])
    set_grad(bad, [1.0, 1.0])
    bad.grad.data = tensor([1.0, 1.0, 1.0])  # (.grad = refuses it; through .data, as in torch)
    with pytest.raises(RuntimeError, match=r"shape \[2\] has a gradient of shape \[3\]"):
        opt.step()
    assert good.numpy().tolist() == [1.0, 2.0] and good._version == 0 and len(opt.state) == 0


@pytest.mark.parametrize("make", [lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: optim.Adam(p), lambda p: optim.AdamW(p),
                                  lambda p: optim.RMSprop(p, centered=True),
                                  lambda p: optim.Adagrad(p)])
def test_every_step_bumps_the_parameter_version(make):
    p = param([1.0, 2.0])
    opt = make([p])
    for expected_above in (0, 1):
        set_grad(p, [0.5, -0.5])
        before = p._version
        opt.step()
        assert p._version > before >= expected_above


def test_training_a_linear_layer_reduces_the_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.3
    model = nn.Linear(3, 1, generator=rng)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(200):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(tensor(x)), tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(model.weight.numpy(), [[1.0, -2.0, 0.5]], atol=1e-3)
    np.testing.assert_allclose(model.bias.numpy(), [0.3], atol=1e-3)


# ---- parity with torch.optim -----------------------------------------------------------------------
def twin_params(torch, dtype, seed=0):
    """The same starting values as our Parameters and as torch Parameters."""
    rng = np.random.default_rng(seed)
    initial = [rng.standard_normal(shape) for shape in SHAPES]
    return ([nn.Parameter(a.astype(dtype)) for a in initial],
            [torch.nn.Parameter(torch.tensor(a.astype(dtype))) for a in initial])


def feed_same_grads(torch, ours, theirs, rng, step):
    """A fresh random gradient for each parameter; at step 2 the 1-d one has none (skipped)."""
    for p, tp in zip(ours, theirs):
        if step == 2 and p.ndim == 1:
            p.grad, tp.grad = None, None
        else:
            grad = rng.standard_normal(p.shape).astype(p.dtype)
            p.grad, tp.grad = tensor(grad), torch.tensor(grad)


def assert_same(ours, theirs, rtol):
    for p, tp in zip(ours, theirs):
        assert p.dtype == np.dtype(str(tp.dtype).replace("torch.", ""))
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=rtol, atol=rtol)


def assert_same_state(opt, topt, ours, theirs, rtol):
    """Per parameter, the same state keys as torch and the same values."""
    for p, tp in zip(ours, theirs):
        assert list(opt.state.get(p, {})) == list(topt.state.get(tp, {}))
        for key, value in opt.state.get(p, {}).items():
            np.testing.assert_allclose(value.numpy(), topt.state[tp][key].numpy(), rtol=rtol, atol=rtol,
                                       err_msg=key)
            assert value.dtype == np.dtype(str(topt.state[tp][key].dtype).replace("torch.", ""))


def run_both(torch, name, kwargs, dtype, steps=20):
    ours, theirs = twin_params(torch, dtype)
    opt, topt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(1)
    for step in range(steps):
        feed_same_grads(torch, ours, theirs, rng, step)
        opt.step()
        topt.step()
    return opt, topt, ours, theirs


SETTINGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.05, betas=(0.3, 0.5))),  # β1 < 0.5: torch's lerp takes its other branch
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("RMSprop", dict(lr=0.001, momentum=0.5, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.05, eps=1e-3, maximize=True)),
]
SETTING_IDS = [name + ":" + ",".join(f"{a}={b}" for a, b in kw.items()) for name, kw in SETTINGS]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name, kwargs", SETTINGS, ids=SETTING_IDS)
def test_twenty_steps_match_torch(torch, name, kwargs, dtype, rtol):
    opt, topt, ours, theirs = run_both(torch, name, kwargs, dtype)
    assert_same(ours, theirs, rtol)
    assert_same_state(opt, topt, ours, theirs, rtol)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]),
       lr=st.floats(1e-4, 0.5), weight_decay=st.sampled_from([0.0, 1e-3, 0.2]),
       momentum=st.sampled_from([0.0, 0.5, 0.95]), beta1=st.floats(0.0, 0.99),
       beta2=st.floats(0.5, 0.9999), flag=st.booleans(), maximize=st.booleans())
def test_random_options_match_torch(name, lr, weight_decay, momentum, beta1, beta2, flag, maximize):
    torch = pytest.importorskip("torch")
    kwargs = dict(lr=lr, weight_decay=weight_decay, maximize=maximize)
    if name == "SGD":
        kwargs.update(momentum=momentum, nesterov=flag and momentum > 0)
    elif name in ("Adam", "AdamW"):
        kwargs.update(betas=(beta1, beta2), amsgrad=flag)
    elif name == "RMSprop":
        kwargs.update(momentum=momentum, alpha=beta2, centered=flag)
    else:
        kwargs.update(lr_decay=beta1 if flag else 0.0)
    opt, topt, ours, theirs = run_both(torch, name, kwargs, np.float64, steps=8)
    assert_same(ours, theirs, 1e-10)
    assert_same_state(opt, topt, ours, theirs, 1e-10)


def test_repr_is_torchs(torch):
    for name, kwargs in SETTINGS:
        ours, theirs = twin_params(torch, np.float64)
        opt = getattr(optim, name)([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.5}], **kwargs)
        topt = getattr(torch.optim, name)([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.5}],
                                          **kwargs)
        assert repr(opt) == repr(topt)


# ---- parameter groups ----------------------------------------------------------------------------
def test_param_groups_carry_their_own_options_and_fill_in_the_defaults(torch):
    ours, theirs = twin_params(torch, np.float64)
    groups = lambda ps: [{"params": [ps[0]], "momentum": 0.5, "nesterov": True},  # noqa: E731
                         {"params": [ps[1]], "lr": 0.3, "name": "bias"}]  # an extra key is kept
    opt, topt = optim.SGD(groups(ours), lr=0.1), torch.optim.SGD(groups(theirs), lr=0.1)
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]
    rng = np.random.default_rng(0)
    for step in range(6):
        feed_same_grads(torch, ours, theirs, rng, step)
        if step == 3:  # a learning rate changed by hand takes effect at the next step
            opt.param_groups[0]["lr"] = topt.param_groups[0]["lr"] = 0.02
        opt.step()
        topt.step()
    assert_same(ours, theirs, 1e-12)


def test_the_dict_passed_becomes_the_group(torch):
    p = param([1.0])
    group = {"params": p}
    opt = optim.Adam([group], lr=0.5)
    assert opt.param_groups[0] is group and group["params"] == [p] and group["lr"] == 0.5


def test_add_param_group_mid_training_matches_torch(torch):
    for name in ("Adam", "Adagrad", "RMSprop"):
        ours, theirs = twin_params(torch, np.float64)
        opt, topt = getattr(optim, name)(ours[:1], lr=0.1), getattr(torch.optim, name)(theirs[:1], lr=0.1)
        rng = np.random.default_rng(0)
        for step in range(6):
            if step == 3:
                opt.add_param_group({"params": ours[1:], "lr": 0.01})
                topt.add_param_group({"params": theirs[1:], "lr": 0.01})
            feed_same_grads(torch, ours, theirs, rng, step)
            opt.step()
            topt.step()
        assert_same(ours, theirs, 1e-12)
        assert_same_state(opt, topt, ours, theirs, 1e-12)


def test_named_parameters_give_param_names(torch):
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="cannot add param group without names"):
        opt.add_param_group({"params": [param([1.0])]})


def test_frozen_parameters_are_accepted_as_torch_does():
    frozen = nn.Parameter(np.ones(2))
    frozen.requires_grad = False
    opt = optim.SGD([frozen], lr=0.1)  # torch allows it: such a parameter simply never moves
    opt.step()
    assert frozen.numpy().tolist() == [1.0, 1.0]


def test_a_duplicate_inside_one_group_warns_as_torch():
    p = param([1.0])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)


# ---- errors: torch's type and message ---------------------------------------------------------------
BAD_CALLS = [
    ("SGD", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("SGD", dict(lr=0.1, momentum=-1), "Invalid momentum value: -1"),
    ("SGD", dict(lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
    ("SGD", dict(lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", dict(momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
    ("Adam", dict(lr=float("nan")), "Invalid learning rate: nan"),
    ("Adam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("Adam", dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0: -0.1"),
    ("Adam", dict(betas=(0, 0.9)), "betas must be either both floats or both Tensors"),
    ("Adam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("AdamW", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("RMSprop", dict(alpha=-0.5), "Invalid alpha value: -0.5"),
    ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    ("Adagrad", dict(eps=-1), "Invalid epsilon value: -1"),
]


@pytest.mark.parametrize("name, kwargs, message", BAD_CALLS, ids=[m for _, _, m in BAD_CALLS])
def test_invalid_options_raise_torchs_error(torch, name, kwargs, message):
    ours, theirs = twin_params(torch, np.float64)
    with pytest.raises(ValueError, match=message) as torch_error:
        getattr(torch.optim, name)(theirs, **kwargs)
    with pytest.raises(ValueError, match=message) as our_error:
        getattr(optim, name)(ours, **kwargs)
    assert str(torch_error.value) in str(our_error.value)
    assert name in str(our_error.value)  # and ours says who complained


def test_an_invalid_option_in_a_group_is_refused_before_it_is_added():
    opt = optim.SGD([param([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        opt.add_param_group({"params": [param([2.0])], "lr": -1})
    assert len(opt.param_groups) == 1


def test_a_non_number_option_is_a_type_error():
    with pytest.raises(TypeError, match="SGD: lr must be a real number, got str"):
        optim.SGD([param([1.0])], lr="0.1")


@pytest.mark.parametrize("make, error, message", [
    (lambda p, O: O.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda p, O: O.SGD(p[0], lr=0.1), TypeError, "should be an iterable of Tensors or dicts"),
    (lambda p, O: O.SGD([1.0], lr=0.1), TypeError, "optimizer can only optimize Tensors"),
    (lambda p, O: O.SGD([p[0] * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda p, O: O.SGD([{"params": {p[0]}}], lr=0.1), TypeError, "ordered collections"),
    (lambda p, O: O.SGD([{"params": [p[0]]}, {"params": p}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda p, O: O.SGD([p[0]], lr=0.1).add_param_group([p[1]]), TypeError,
     "param_group must be a dict"),
], ids=["empty", "a tensor", "a float", "non-leaf", "a set", "in two groups", "group not a dict"])
def test_invalid_parameters_raise_torchs_error(torch, make, error, message):
    ours, theirs = twin_params(torch, np.float64)
    with pytest.raises(error, match=message):
        make(theirs, torch.optim)
    with pytest.raises(error, match=message):
        make(ours, optim)


def test_unsupported_implementation_flags_are_clear():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam([param([1.0])], differentiable=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.SGD([param([1.0])], fused=True, foreach=True)
    optim.Adam([param([1.0])], foreach=False, fused=None, capturable=False)  # accepted, no effect


# ---- state_dict and resuming ---------------------------------------------------------------------
def train(torch, opt, ours, theirs_and_topt, rng, steps, start=0):
    for step in range(start, start + steps):
        theirs, topt = theirs_and_topt
        feed_same_grads(torch, ours, theirs, rng, step)
        opt.step()
        topt.step()


def test_state_dict_has_torchs_layout(torch):
    check_state_dict_layout(torch, SETTINGS)


def check_state_dict_layout(torch, settings):
    """After three steps of each setting, our state_dict is torch's: the same groups, the same
    state keys in the same order, the same values (tests/test_optim_more.py reuses it)."""
    for name, kwargs in settings:
        opt, topt, ours, theirs = run_both(torch, name, kwargs, np.float64, steps=3)
        sd, tsd = opt.state_dict(), topt.state_dict()
        assert sd["param_groups"] == tsd["param_groups"]
        assert list(sd["state"]) == list(tsd["state"])
        for index, entry in sd["state"].items():
            assert list(entry) == list(tsd["state"][index])
            for key, value in entry.items():
                assert isinstance(value, Tensor)
                np.testing.assert_allclose(value.numpy(), tsd["state"][index][key].numpy(), rtol=1e-12)
        # As torch's, the saved state is the live state (references, not copies).
        assert all(sd["state"][i] is opt.state[p] for i, p in enumerate(ours) if p in opt.state)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name, kwargs", [s for s in SETTINGS if s[1]],
                         ids=[i for s, i in zip(SETTINGS, SETTING_IDS) if s[1]])
def test_five_steps_saved_and_resumed_equal_ten_uninterrupted(torch, name, kwargs, dtype, rtol):
    """Two groups; 5 steps, state_dict, a new optimizer loads it, 5 more steps — the same numbers
    as 10 steps in one go, and as torch doing the same."""
    def groups(ps):
        return [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.02}]

    ours, theirs = twin_params(torch, dtype)
    opt = getattr(optim, name)(groups(ours), **kwargs)
    topt = getattr(torch.optim, name)(groups(theirs), **kwargs)
    train(torch, opt, ours, (theirs, topt), np.random.default_rng(5), 5)
    sd, tsd = opt.state_dict(), topt.state_dict()
    resumed = getattr(optim, name)(groups(ours), lr=1.0)  # options come back from the state dict
    tresumed = getattr(torch.optim, name)(groups(theirs), lr=1.0)
    resumed.load_state_dict(sd)
    tresumed.load_state_dict(tsd)
    train(torch, resumed, ours, (theirs, tresumed), np.random.default_rng(6), 5, start=5)

    straight, tstraight = twin_params(torch, dtype)
    opt2 = getattr(optim, name)(groups(straight), **kwargs)
    topt2 = getattr(torch.optim, name)(groups(tstraight), **kwargs)
    train(torch, opt2, straight, (tstraight, topt2), np.random.default_rng(5), 5)
    train(torch, opt2, straight, (tstraight, topt2), np.random.default_rng(6), 5, start=5)
    for p, q in zip(ours, straight):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    assert_same(ours, theirs, rtol)
    assert_same_state(resumed, tresumed, ours, theirs, rtol)
    assert [g["lr"] for g in resumed.param_groups] == [g["lr"] for g in opt.param_groups]


def test_load_state_dict_copies_and_casts_to_the_parameter_dtype():
    p64 = param(np.ones(3))
    opt = optim.Adam([p64])
    set_grad(p64, [1.0, 2.0, 3.0])
    opt.step()
    p32 = param(np.ones(3), np.float32)
    other = optim.Adam([p32])
    other.load_state_dict(opt.state_dict())
    state = other.state[p32]
    assert state["exp_avg"].dtype == np.float32 and state["step"].dtype == np.float32
    assert state["exp_avg"] is not opt.state[p64]["exp_avg"]
    np.testing.assert_allclose(state["exp_avg_sq"].numpy(), opt.state[p64]["exp_avg_sq"].numpy(), rtol=1e-6)


def test_load_state_dict_errors_change_nothing():
    a, b = param([1.0]), param([1.0, 2.0])
    source = optim.SGD([a, b], lr=0.1, momentum=0.9)
    set_grad(a, [1.0])
    set_grad(b, [1.0, 1.0])
    source.step()
    sd = source.state_dict()
    two_groups = optim.SGD([{"params": [param([1.0])]}, {"params": [param([1.0, 2.0])]}], lr=0.5)
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        two_groups.load_state_dict(sd)
    one_param = optim.SGD([param([1.0])], lr=0.5)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        one_param.load_state_dict(sd)
    swapped = optim.SGD([param([1.0, 2.0]), param([1.0])], lr=0.5)
    with pytest.raises(ValueError, match=r"state 'momentum_buffer' has shape \[1\] but its parameter "
                                         r"has shape \[2\]"):
        swapped.load_state_dict(sd)
    for opt in (two_groups, one_param, swapped):
        assert len(opt.state) == 0 and all(g["lr"] == 0.5 for g in opt.param_groups)
    with pytest.raises(KeyError, match="no 'param_groups' entry"):
        swapped.load_state_dict({"state": {}})
