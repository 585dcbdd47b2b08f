"""optim.lr_scheduler: every schedule's learning rates (and cycled momenta) against torch's over
30 steps with two parameter groups, saving and resuming, and errors for bad arguments."""
import math
import warnings

import numpy as np
import pytest

from tinygrad_pool import nn, optim, Tensor, tensor
from tinygrad_pool.optim import lr_scheduler

STEPS = 30


class Halving:
    """A callable object as lr_lambda: its attributes are what LambdaLR.state_dict saves."""

    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


# (id, optimizer class name, optimizer kwargs, scheduler name, scheduler arguments (a function of
# the module, so that lambdas are the same on both sides))
SCHEDULES = [
    ("step", "SGD", {}, "StepLR", lambda m: dict(step_size=3, gamma=0.5)),
    ("step-default-gamma", "SGD", {}, "StepLR", lambda m: dict(step_size=7)),
    ("multistep", "SGD", {}, "MultiStepLR", lambda m: dict(milestones=[2, 5, 5, 9, 20], gamma=0.3)),
    ("exponential", "SGD", {}, "ExponentialLR", lambda m: dict(gamma=0.9)),
    ("cosine-past-T_max", "SGD", {}, "CosineAnnealingLR", lambda m: dict(T_max=7, eta_min=1e-3)),
    ("cosine", "SGD", {}, "CosineAnnealingLR", lambda m: dict(T_max=30)),
    ("lambda", "SGD", {}, "LambdaLR", lambda m: dict(lr_lambda=lambda e: 0.95 ** e)),
    ("lambdas", "SGD", {}, "LambdaLR", lambda m: dict(lr_lambda=[lambda e: 1 / (e + 1), Halving(4)])),
    ("onecycle", "SGD", dict(momentum=0.9), "OneCycleLR",
     lambda m: dict(max_lr=[0.5, 0.05], total_steps=STEPS)),
    ("onecycle-three-phase-linear", "SGD", dict(momentum=0.9), "OneCycleLR",
     lambda m: dict(max_lr=0.3, epochs=5, steps_per_epoch=6, three_phase=True, pct_start=0.25,
                    anneal_strategy="linear", base_momentum=[0.8, 0.7], max_momentum=0.9)),
    ("onecycle-adam-betas", "Adam", {}, "OneCycleLR",
     lambda m: dict(max_lr=0.01, total_steps=STEPS + 5, div_factor=10.0, final_div_factor=100.0)),
    ("onecycle-no-momentum-cycle", "Adagrad", {}, "OneCycleLR",
     lambda m: dict(max_lr=0.1, total_steps=STEPS, cycle_momentum=False)),
    ("onecycle-rmsprop", "RMSprop", dict(momentum=0.5), "OneCycleLR",
     lambda m: dict(max_lr=0.1, total_steps=STEPS)),
]


def twin_optimizers(torch, name, kwargs):
    """The same two-group optimizer (lr 0.1 and 0.01) over the same parameters, ours and torch's."""
    ours = [nn.Parameter(np.ones((2, 2))), nn.Parameter(np.ones(3))]
    theirs = [torch.nn.Parameter(torch.ones(2, 2, dtype=torch.float64)),
              torch.nn.Parameter(torch.ones(3, dtype=torch.float64))]

    def groups(ps):
        return [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01}]
    return (getattr(optim, name)(groups(ours), lr=0.1, **kwargs),
            getattr(torch.optim, name)(groups(theirs), lr=0.1, **kwargs), ours, theirs)


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum", math.nan) for g in opt.param_groups]


def assert_close(ours, theirs):
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(theirs, dtype=float),
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("opt_name, opt_kwargs, name, make_kwargs",
                         [s[1:] for s in SCHEDULES], ids=[s[0] for s in SCHEDULES])
def test_thirty_steps_match_torch(torch, opt_name, opt_kwargs, name, make_kwargs):
    opt, topt, _, _ = twin_optimizers(torch, opt_name, opt_kwargs)
    sched = getattr(lr_scheduler, name)(opt, **make_kwargs(lr_scheduler))
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **make_kwargs(torch.optim.lr_scheduler))
    assert_close(sched.base_lrs, tsched.base_lrs)
    assert_close([g["initial_lr"] for g in opt.param_groups], [g["initial_lr"] for g in topt.param_groups])
    assert sched.last_epoch == tsched.last_epoch == 0
    seen = []
    for _ in range(STEPS):
        assert_close(sched.get_last_lr(), tsched.get_last_lr())
        assert_close([g["lr"] for g in opt.param_groups], sched.get_last_lr())
        assert_close(momenta(opt), momenta(topt))
        seen.append(tuple(sched.get_last_lr()))
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
    assert sched.last_epoch == tsched.last_epoch == STEPS
    assert len(set(seen)) > 2  # the schedule did move


def test_cosine_matches_torch_far_past_T_max_and_with_an_lr_changed_from_outside(torch):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=3, eta_min=0.002)
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=3, eta_min=0.002)
    for step in range(40):
        if step == 17:  # the recursive form follows a rate set by hand
            opt.param_groups[1]["lr"] = topt.param_groups[1]["lr"] = 0.5
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert_close(sched.get_last_lr(), tsched.get_last_lr())


def test_the_deprecated_epoch_argument_uses_the_closed_form_as_torch(torch):
    for name, kwargs in (("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[2, 4])),
                         ("ExponentialLR", dict(gamma=0.5)), ("CosineAnnealingLR", dict(T_max=5)),
                         ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e)))):
        opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
        sched = getattr(lr_scheduler, name)(opt, **kwargs)
        tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
        opt.step()
        topt.step()
        for epoch in (4, 7, 2):
            with pytest.warns(UserWarning, match="epoch parameter"):
                sched.step(epoch)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tsched.step(epoch)
            assert sched.last_epoch == epoch
            assert_close(sched.get_last_lr(), tsched.get_last_lr())


REDUCE_SETTINGS = [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.05, threshold_mode="abs"),
    dict(patience=1, cooldown=3, min_lr=[0.02, 1e-3], factor=0.3),
    dict(mode="max", patience=0, threshold_mode="rel", min_lr=0.004, eps=1e-3),
]


@pytest.mark.parametrize("kwargs", REDUCE_SETTINGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_reduce_on_plateau_matches_torch(torch, kwargs):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    sched = lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    # Improves, stalls, improves a little, stalls: with every setting the rate drops somewhere.
    metrics = [1.0, 0.8, 0.7] + [0.7] * 14 + [0.69, 0.6] + [0.6, 0.61, 0.59] * 7
    for step, metric in enumerate(metrics):
        value = tensor(np.array(metric)) if step % 2 else metric  # a 0-d Tensor works too
        sched.step(value)
        tsched.step(metric)
        assert_close(sched.get_last_lr(), tsched.get_last_lr())
        assert (sched.best, sched.num_bad_epochs, sched.cooldown_counter, sched.last_epoch) == \
            (tsched.best, tsched.num_bad_epochs, tsched.cooldown_counter, tsched.last_epoch)
    assert sched.get_last_lr() != [0.1, 0.01]


# ---- saving and resuming -------------------------------------------------------------------------
RESUMABLE = [s for s in SCHEDULES if s[0] in ("step", "multistep", "cosine-past-T_max", "lambdas",
                                              "onecycle", "onecycle-adam-betas")]


def setup(framework, params, opt_name, opt_kwargs, name, make_kwargs):
    """An optimizer (two groups, lr 0.1 and 0.01) of ``framework`` (tinygrad_pool or torch) over
    ``params``, and the scheduler on it."""
    opt = getattr(framework.optim, opt_name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.01}],
                                             lr=0.1, **opt_kwargs)
    module = framework.optim.lr_scheduler
    return opt, getattr(module, name)(opt, **make_kwargs(module))


def train(opt, sched, params, as_tensor, seed, steps=5):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        for p in params:
            p.grad = as_tensor(rng.standard_normal(tuple(p.shape)))
        opt.step()
        sched.step()


@pytest.mark.parametrize("opt_name, opt_kwargs, name, make_kwargs",
                         [s[1:] for s in RESUMABLE], ids=[s[0] for s in RESUMABLE])
def test_optimizer_and_scheduler_resume_from_their_state_dicts(torch, opt_name, opt_kwargs, name,
                                                               make_kwargs):
    """5 steps, save both state dicts, a new optimizer and scheduler load them, 5 more steps:
    the same parameters and rates as 10 steps in one go, and as torch doing the same."""
    import tinygrad_pool
    case = (opt_name, opt_kwargs, name, make_kwargs)
    params = [nn.Parameter(np.ones((2, 2))), nn.Parameter(np.ones(3))]
    tparams = [torch.nn.Parameter(torch.ones(2, 2, dtype=torch.float64)),
               torch.nn.Parameter(torch.ones(3, dtype=torch.float64))]
    finished = []
    for framework, ps, as_tensor in ((tinygrad_pool, params, tensor), (torch, tparams, torch.tensor)):
        opt, sched = setup(framework, ps, *case)
        train(opt, sched, ps, as_tensor, seed=0)
        saved = opt.state_dict(), sched.state_dict()
        opt, sched = setup(framework, ps, *case)  # a new run over the trained parameters
        opt.load_state_dict(saved[0])
        sched.load_state_dict(saved[1])
        assert sched.last_epoch == 5
        train(opt, sched, ps, as_tensor, seed=1)
        finished.append((opt, sched))
    (opt, sched), (topt, tsched) = finished

    straight = [nn.Parameter(np.ones((2, 2))), nn.Parameter(np.ones(3))]
    straight_opt, straight_sched = setup(tinygrad_pool, straight, *case)
    train(straight_opt, straight_sched, straight, tensor, seed=0)
    train(straight_opt, straight_sched, straight, tensor, seed=1)
    for p, q, tp in zip(params, straight, tparams):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-10)
    assert sched.get_last_lr() == straight_sched.get_last_lr()
    assert momenta(opt) == momenta(straight_opt)
    assert_close(sched.get_last_lr(), tsched.get_last_lr())
    assert_close(momenta(opt), momenta(topt))
    for group, tgroup in zip(opt.state_dict()["param_groups"], topt.state_dict()["param_groups"]):
        assert group.keys() == tgroup.keys()
        assert_close(group["lr"], tgroup["lr"])


def test_state_dict_holds_the_attributes_and_lambda_state(torch):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    sched = lr_scheduler.LambdaLR(opt, [lambda e: 1.0, Halving(3)])
    tsched = torch.optim.lr_scheduler.LambdaLR(topt, [lambda e: 1.0, Halving(3)])
    state, tstate = sched.state_dict(), tsched.state_dict()
    assert state["lr_lambdas"] == tstate["lr_lambdas"] == [None, {"every": 3}]
    for key in ("base_lrs", "last_epoch", "_step_count", "_last_lr"):
        assert state[key] == tstate[key], key
    assert "optimizer" not in state
    other = lr_scheduler.LambdaLR(opt, [lambda e: 1.0, Halving(10)])
    state["lr_lambdas"][1] = {"every": 5}
    other.load_state_dict(state)
    assert other.lr_lambdas[1].every == 5 and "lr_lambdas" in state


def test_a_second_scheduler_keeps_the_first_initial_lr(torch):
    opt, _, _, _ = twin_optimizers(torch, "SGD", {})
    first = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    first.step()
    second = lr_scheduler.StepLR(opt, step_size=2)  # initial_lr is only set where missing
    assert first.base_lrs == second.base_lrs == [0.1, 0.01]
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert second.get_last_lr() == [0.05, 0.005]  # and the current rates are kept


# ---- warnings and errors ---------------------------------------------------------------------------
def test_stepping_the_scheduler_before_the_optimizer_warns_as_torch(torch):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    for o, module in ((topt, torch.optim.lr_scheduler), (opt, lr_scheduler)):
        sched = module.StepLR(o, step_size=2)
        with pytest.warns(UserWarning, match=r"`lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()
    opt2, _, _, _ = twin_optimizers(torch, "Adam", {})
    sched = lr_scheduler.StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_stepping_one_cycle_past_total_steps_raises_and_changes_nothing(torch):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", dict(momentum=0.9))
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=4)
    tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.1, total_steps=4)
    opt.step()
    topt.step()
    for _ in range(4):
        sched.step()
        tsched.step()
    before = (sched.last_epoch, list(sched.get_last_lr()), momenta(opt))
    message = "Tried to step 5 times. The specified number of total steps is 4"
    with pytest.raises(ValueError, match=message):
        tsched.step()
    with pytest.raises(ValueError, match=message):
        sched.step()
    assert (sched.last_epoch, sched.get_last_lr(), momenta(opt)) == before


BAD_SCHEDULERS = [
    ("not an optimizer", lambda m, o: m.StepLR("sgd", step_size=1), TypeError, "str is not an Optimizer"),
    ("lambda count", lambda m, o: m.LambdaLR(o, [lambda e: 1.0]), ValueError,
     "Expected 2 lr_lambdas, but got 1"),
    ("plateau factor", lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), ValueError,
     "Factor should be < 1.0."),
    ("plateau mode", lambda m, o: m.ReduceLROnPlateau(o, mode="lowest"), ValueError,
     "mode lowest is unknown!"),
    ("plateau threshold mode", lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="pct"), ValueError,
     "threshold mode pct is unknown!"),
    ("plateau min_lr count", lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError,
     "expected 2 min_lrs, got 1"),
    ("onecycle no length", lambda m, o: m.OneCycleLR(o, max_lr=0.1), ValueError,
     r"You must define either total_steps OR \(epochs AND steps_per_epoch\)"),
    ("onecycle total_steps", lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError,
     "Expected positive integer total_steps, but got 0"),
    ("onecycle epochs", lambda m, o: m.OneCycleLR(o, 0.1, epochs=2.5, steps_per_epoch=3), ValueError,
     "Expected positive integer epochs, but got 2.5"),
    ("onecycle steps_per_epoch", lambda m, o: m.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-3),
     ValueError, "Expected positive integer steps_per_epoch, but got -3"),
    ("onecycle pct_start", lambda m, o: m.OneCycleLR(o, 0.1, total_steps=9, pct_start=1.5), ValueError,
     "Expected float between 0 and 1 pct_start, but got 1.5"),
    ("onecycle anneal", lambda m, o: m.OneCycleLR(o, 0.1, total_steps=9, anneal_strategy="exp"),
     ValueError, "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    ("onecycle max_lr count", lambda m, o: m.OneCycleLR(o, [0.1, 0.2, 0.3], total_steps=9), ValueError,
     "max_lr must have the same length as optimizer.param_groups. max_lr has 3 values, "
     "param_groups has 2."),
]


@pytest.mark.parametrize("make, error, message", [b[1:] for b in BAD_SCHEDULERS],
                         ids=[b[0] for b in BAD_SCHEDULERS])
def test_bad_arguments_raise_torchs_errors(torch, make, error, message):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    with pytest.raises(error, match=message):
        make(torch.optim.lr_scheduler, topt)
    with pytest.raises(error, match=message):
        make(lr_scheduler, opt)
    # Nothing was written into the groups on the way to the error.
    assert all(set(g) == set(opt.defaults) | {"params"} for g in opt.param_groups)


def test_cycling_momentum_needs_an_optimizer_with_one(torch):
    opt, topt, _, _ = twin_optimizers(torch, "Adagrad", {})
    message = "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
    for module, o in ((torch.optim.lr_scheduler, topt), (lr_scheduler, opt)):
        with pytest.raises(ValueError, match=message):
            module.OneCycleLR(o, max_lr=0.1, total_steps=5)
    assert "initial_lr" not in opt.param_groups[0]  # refused before any group was touched


@pytest.mark.parametrize("make, message", [
    (lambda o: lr_scheduler.StepLR(o, step_size=0), "StepLR: step_size must be > 0, got 0"),
    (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=0), "CosineAnnealingLR: T_max must be > 0"),
])
def test_periods_that_would_divide_by_zero_are_refused_up_front(make, message):
    # (torch accepts them and fails with ZeroDivisionError at the first step)
    opt = optim.SGD([nn.Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match=message):
        make(opt)


def test_a_non_callable_lr_lambda_is_a_type_error():
    opt = optim.SGD([nn.Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(TypeError, match="LambdaLR: lr_lambda must be a function of the epoch"):
        lr_scheduler.LambdaLR(opt, 0.5)


def test_resuming_with_last_epoch_needs_initial_lr(torch):
    opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
    for module, o in ((torch.optim.lr_scheduler, topt), (lr_scheduler, opt)):
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
            module.StepLR(o, step_size=2, last_epoch=3)


def test_resuming_with_last_epoch_matches_torch(torch):
    for name, kwargs in (("StepLR", dict(step_size=2)), ("ExponentialLR", dict(gamma=0.5)),
                         ("CosineAnnealingLR", dict(T_max=6))):
        opt, topt, _, _ = twin_optimizers(torch, "SGD", {})
        for o in (opt, topt):
            for g in o.param_groups:
                g["initial_lr"] = 1.0
        sched = getattr(lr_scheduler, name)(opt, last_epoch=3, **kwargs)
        tsched = getattr(torch.optim.lr_scheduler, name)(topt, last_epoch=3, **kwargs)
        opt.step()
        topt.step()
        for _ in range(5):
            assert_close(sched.get_last_lr(), tsched.get_last_lr())
            sched.step()
            tsched.step()
        assert sched.last_epoch == tsched.last_epoch


def test_old_base_class_name_works_for_custom_schedulers():
    class Halve(lr_scheduler._LRScheduler):
        def get_lr(self):
            return [base / 2 ** self.last_epoch for base in self.base_lrs]
    opt = optim.SGD([nn.Parameter(np.ones(2))], lr=0.8)
    sched = Halve(opt)
    opt.step()
    sched.step()
    sched.step()
    assert sched.get_last_lr() == [0.2] and math.isclose(opt.param_groups[0]["lr"], 0.2)
