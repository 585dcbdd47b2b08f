"""Grad mode (no_grad, enable_grad, inference_mode, set_grad_enabled): context managers,
decorators, nesting, exceptions, recursion, thread-locality; and which dtypes may require grad.

The mode functions are looked up on the package at call time (``tp.enable_grad``), so a missing
one fails the tests that use it and not the whole file. Scenarios written against a ``lib``
argument run unchanged on tinygrad_pool and on torch (which has the same six names), and the
parity tests compare the booleans they log.
"""
import threading

import numpy as np
import pytest

import tinygrad_pool as tp
from tinygrad_pool import Tensor, tensor

WAIT = 10  # seconds: an Event or join that takes longer means a thread is stuck


def modes(lib=None):
    """(grad enabled, inference mode enabled) right now, in the calling thread."""
    lib = lib or tp
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def leaf(n=3) -> Tensor:
    return tensor(np.arange(1.0, n + 1.0), requires_grad=True)


@pytest.fixture(autouse=True)
def grad_mode_is_restored():
    """Every test starts with grad on; a test that leaves it off (a bug) fails and is undone."""
    assert tp.is_grad_enabled() is True
    yield
    if not tp.is_grad_enabled():
        tp.set_grad_enabled(True)
        pytest.fail("the test left grad mode off")


# ---- defaults and context managers ----------------------------------------------------------
def test_grad_is_enabled_and_inference_mode_off_by_default():
    assert modes() == (True, False)


def test_no_grad_context_turns_grad_off_and_restores_it():
    with tp.no_grad():
        assert modes() == (False, False)
    assert modes() == (True, False)


def test_enable_grad_context_inside_no_grad_turns_grad_on_and_restores_off():
    with tp.no_grad():
        with tp.enable_grad():
            assert tp.is_grad_enabled() is True
        assert tp.is_grad_enabled() is False
    assert tp.is_grad_enabled() is True


@pytest.mark.parametrize("mode", [False, True])
def test_set_grad_enabled_context_sets_mode_and_restores_previous(mode):
    with tp.no_grad():
        with tp.set_grad_enabled(mode):
            assert tp.is_grad_enabled() is mode
        assert tp.is_grad_enabled() is False
    with tp.set_grad_enabled(mode):
        assert tp.is_grad_enabled() is mode
    assert tp.is_grad_enabled() is True


def test_set_grad_enabled_plain_call_sets_mode_immediately():
    try:
        tp.set_grad_enabled(False)
        assert tp.is_grad_enabled() is False
        tp.set_grad_enabled(True)
        assert tp.is_grad_enabled() is True
    finally:
        tp.set_grad_enabled(True)


def test_set_grad_enabled_plain_call_inside_a_block_is_undone_on_exit():
    """torch: leaving a block restores the mode from before the block, whatever was set inside."""
    try:
        tp.set_grad_enabled(False)
        with tp.no_grad():
            tp.set_grad_enabled(True)
            assert tp.is_grad_enabled() is True
        assert tp.is_grad_enabled() is False
    finally:
        tp.set_grad_enabled(True)


def test_inference_mode_context_turns_grad_off_and_inference_on_then_restores():
    with tp.inference_mode():
        assert modes() == (False, True)
    assert modes() == (True, False)


def test_inference_mode_false_leaves_default_mode_unchanged():
    with tp.inference_mode(False):
        assert modes() == (True, False)
    with tp.inference_mode(mode=False):
        assert modes() == (True, False)
    assert modes() == (True, False)


def test_inference_mode_false_inside_inference_mode_turns_it_off():
    with tp.inference_mode():
        with tp.inference_mode(False):
            assert modes() == (True, False)
        assert modes() == (False, True)


# ---- decorators -----------------------------------------------------------------------------
# name -> (decorator factory, (grad, inference) inside the decorated function when called with
# grad on, and the same when called inside no_grad)
DECORATORS = {
    "no_grad_bare": (lambda: tp.no_grad, (False, False), (False, False)),
    "no_grad_called": (lambda: tp.no_grad(), (False, False), (False, False)),
    "enable_grad_bare": (lambda: tp.enable_grad, (True, False), (True, False)),
    "enable_grad_called": (lambda: tp.enable_grad(), (True, False), (True, False)),
    "inference_mode_bare": (lambda: tp.inference_mode, (False, True), (False, True)),
    "inference_mode_called": (lambda: tp.inference_mode(), (False, True), (False, True)),
    "set_grad_enabled_false": (lambda: tp.set_grad_enabled(False), (False, False), (False, False)),
    "set_grad_enabled_true": (lambda: tp.set_grad_enabled(True), (True, False), (True, False)),
}


@pytest.mark.parametrize("name", DECORATORS)
def test_decorator_sets_mode_inside_and_restores_after(name):
    factory, inside, inside_no_grad = DECORATORS[name]

    @factory()
    def observe():
        return modes()

    assert modes() == (True, False)  # decorating changes nothing by itself
    assert observe() == inside
    assert modes() == (True, False)
    with tp.no_grad():
        assert observe() == inside_no_grad
        assert modes() == (False, False)


@pytest.mark.parametrize("name", DECORATORS)
def test_decorator_keeps_name_doc_arguments_and_return_value(name):
    factory = DECORATORS[name][0]

    def scaled_sum(a, b, *, scale=1):
        """Add, then scale."""
        return (a + b) * scale

    decorated = factory()(scaled_sum)
    assert decorated.__name__ == "scaled_sum"
    assert decorated.__doc__ == "Add, then scale."
    assert decorated(2, 3, scale=4) == 20


@pytest.mark.parametrize("name", DECORATORS)
def test_decorated_function_restores_mode_after_an_exception(name):
    factory = DECORATORS[name][0]

    @factory()
    def fail():
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        fail()
    assert modes() == (True, False)
    with tp.no_grad():
        with pytest.raises(KeyError):
            fail()
        assert modes() == (False, False)


def test_set_grad_enabled_decorator_does_not_change_mode_at_definition_inside_no_grad():
    with tp.no_grad():
        @tp.set_grad_enabled(True)
        def observe():
            return tp.is_grad_enabled()

        assert tp.is_grad_enabled() is False
        assert observe() is True
        assert tp.is_grad_enabled() is False


def test_no_grad_decorates_a_method():
    class Model:
        def __init__(self):
            self.w = leaf()

        @tp.no_grad
        def predict(self, x):
            return self.w * x

    y = Model().predict(2.0)
    assert y.grad_fn is None and y.requires_grad is False
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0])


# ---- nesting, exceptions, recursion ---------------------------------------------------------
def nested_scenario(lib) -> list:
    """Deep nesting of every manager; logs (grad, inference) at each point."""
    log = [modes(lib)]
    with lib.no_grad():
        log.append(modes(lib))
        with lib.enable_grad():
            log.append(modes(lib))
            with lib.no_grad():
                log.append(modes(lib))
                with lib.set_grad_enabled(True):
                    log.append(modes(lib))
                    with lib.inference_mode():
                        log.append(modes(lib))
                        with lib.inference_mode(False):
                            log.append(modes(lib))
                        log.append(modes(lib))
                    log.append(modes(lib))
                log.append(modes(lib))
            log.append(modes(lib))
        log.append(modes(lib))
    log.append(modes(lib))
    return log


NESTED_EXPECTED = [(True, False), (False, False), (True, False), (False, False), (True, False),
                   (False, True), (True, False), (False, True), (True, False), (False, False),
                   (True, False), (False, False), (True, False)]


def test_nested_managers_restore_each_level():
    assert nested_scenario(tp) == NESTED_EXPECTED


def test_nested_managers_match_torch(torch):
    assert nested_scenario(torch) == NESTED_EXPECTED
    assert nested_scenario(tp) == nested_scenario(torch)


def exception_scenario(lib) -> list:
    """An exception raised three levels deep and caught at each level in turn."""
    log = []
    with lib.no_grad():
        try:
            with lib.enable_grad():
                try:
                    with lib.set_grad_enabled(False):
                        with lib.inference_mode():
                            raise ValueError("deep")
                except ValueError:
                    log.append(modes(lib))
                    raise
        except ValueError:
            log.append(modes(lib))
        log.append(modes(lib))
    log.append(modes(lib))
    return log


def test_exception_inside_nested_blocks_restores_each_level():
    assert exception_scenario(tp) == [(True, False), (False, False), (False, False), (True, False)]


def test_exception_scenario_matches_torch(torch):
    assert exception_scenario(tp) == exception_scenario(torch)


def test_exception_escaping_every_block_restores_grad_on():
    with pytest.raises(ZeroDivisionError):
        with tp.no_grad():
            with tp.enable_grad():
                with tp.no_grad():
                    1 / 0
    assert modes() == (True, False)


def recursion_scenario(lib) -> list:
    """A function decorated with no_grad() that recurses through an enable_grad block, called
    from inside no_grad: each call's exit must restore its own caller's mode."""
    log = []

    @lib.no_grad()
    def recurse(depth):
        log.append(lib.is_grad_enabled())
        if depth:
            with lib.enable_grad():
                log.append(lib.is_grad_enabled())
                recurse(depth - 1)
                log.append(lib.is_grad_enabled())
        log.append(lib.is_grad_enabled())

    with lib.no_grad():
        recurse(3)
        log.append(lib.is_grad_enabled())
    log.append(lib.is_grad_enabled())
    return log


RECURSION_EXPECTED = [False, True, False, True, False, True, False, False, True, False,
                      True, False, True, False, False, True]


def test_recursive_decorated_function_restores_each_callers_mode():
    assert recursion_scenario(tp) == RECURSION_EXPECTED


def test_recursive_decorated_function_matches_torch(torch):
    assert recursion_scenario(torch) == RECURSION_EXPECTED


def test_recursive_enable_grad_decorator_restores_no_grad_at_each_level():
    seen = []

    @tp.enable_grad
    def recurse(depth):
        seen.append(tp.is_grad_enabled())
        if depth:
            with tp.no_grad():
                recurse(depth - 1)
                seen.append(tp.is_grad_enabled())

    recurse(3)
    assert seen == [True, True, True, True, False, False, False]
    assert tp.is_grad_enabled() is True


def test_recursion_that_raises_at_the_bottom_restores_mode():
    @tp.no_grad()
    def recurse(depth):
        if depth == 0:
            raise RuntimeError("bottom")
        with tp.enable_grad():
            recurse(depth - 1)

    with pytest.raises(RuntimeError, match="bottom"):
        recurse(5)
    assert modes() == (True, False)


# ---- what ops record ------------------------------------------------------------------------
def test_ops_inside_no_grad_record_no_grad_fn():
    x = leaf()
    w = tensor(np.ones((3, 2)), requires_grad=True)
    with tp.no_grad():
        outputs = [x * 2, x + x, x.exp(), (x @ w).sum(), x[1:], x.reshape(3, 1)]
    for y in outputs:
        assert y.grad_fn is None
        assert y.requires_grad is False
        assert y.is_leaf


def test_ops_inside_inference_mode_record_no_grad_fn():
    x = leaf()
    with tp.inference_mode():
        y = (x * x).sum()
    assert y.grad_fn is None and y.requires_grad is False


def test_set_grad_enabled_false_call_stops_recording():
    x = leaf()
    try:
        tp.set_grad_enabled(False)
        y = x * 3
    finally:
        tp.set_grad_enabled(True)
    assert y.grad_fn is None and y.requires_grad is False
    assert (x * 3).grad_fn is not None


def test_enable_grad_inside_no_grad_records_again_and_backward_works():
    x = leaf()
    with tp.no_grad():
        ignored = x * 2
        with tp.enable_grad():
            y = (x * x).sum()
    assert ignored.grad_fn is None
    assert y.grad_fn is not None and y.requires_grad is True
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_enable_grad_decorated_function_records_when_called_inside_no_grad():
    @tp.enable_grad
    def square_sum(t):
        return (t * t).sum()

    x = leaf()
    with tp.no_grad():
        y = square_sum(x)
    assert y.grad_fn is not None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_no_grad_output_is_a_constant_in_a_later_graph():
    x = leaf()
    with tp.no_grad():
        c = x * 5
    (c * x).sum().backward()  # d/dx (c * x) with c constant = c
    np.testing.assert_allclose(x.grad.numpy(), 5 * x.numpy())


def test_backward_inside_no_grad_still_computes_gradients():
    """torch: backward of a graph built earlier works inside no_grad."""
    x = leaf()
    s = (x * x).sum()
    with tp.no_grad():
        s.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def recording_scenario(lib, make) -> list:
    """(requires_grad, has grad_fn) of an op's output under each mode."""
    x = make()
    log = []

    def record(y):
        log.append((bool(y.requires_grad), y.grad_fn is not None))

    record(x * 2)
    with lib.no_grad():
        record(x * 2)
        with lib.enable_grad():
            record(x * 2)
        with lib.set_grad_enabled(True):
            record(x * 2)
    with lib.set_grad_enabled(False):
        record(x * 2)
    with lib.inference_mode():
        record(x * 2)
    return log


def test_recording_under_each_mode_matches_torch(torch):
    ours = recording_scenario(tp, leaf)
    theirs = recording_scenario(
        torch, lambda: torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True))
    assert theirs == [(True, True), (False, False), (True, True), (True, True), (False, False),
                      (False, False)]
    assert ours == theirs


# ---- threads --------------------------------------------------------------------------------
def run_thread(target, *unblock):
    """Run target in a new thread. If it raises, set the Events / abort the Barriers in
    ``unblock`` (so that nobody waits for it) and keep the error for ``finish``."""
    errors = []

    def body():
        try:
            target()
        except BaseException as error:  # noqa: B902 - handed to the main thread
            errors.append(error)
            for waitable in unblock:
                waitable.abort() if isinstance(waitable, threading.Barrier) else waitable.set()

    thread = threading.Thread(target=body)
    thread.start()
    return thread, errors


def finish(thread, errors) -> None:
    thread.join(WAIT)
    assert not thread.is_alive(), "the thread did not finish"
    if errors:
        real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
        raise (real or errors)[0]


def test_no_grad_in_another_thread_does_not_change_this_threads_mode():
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with tp.no_grad():
            inside.set()
            assert release.wait(WAIT)
            seen["worker"] = modes()
        seen["worker_after"] = modes()

    thread, errors = run_thread(worker, inside)
    try:
        assert inside.wait(WAIT)
        main_modes = modes()  # the worker is inside no_grad right now
        x = leaf()
        y = x * 2
    finally:
        release.set()
        finish(thread, errors)
    assert main_modes == (True, False)
    assert y.grad_fn is not None and y.requires_grad
    assert seen == {"worker": (False, False), "worker_after": (True, False)}


def test_no_grad_in_this_thread_does_not_change_another_threads_mode():
    inside, observed = threading.Event(), threading.Event()
    seen = {}

    def worker():
        assert inside.wait(WAIT)  # the main thread is inside no_grad now
        seen["modes"] = modes()
        y = leaf() * 2
        seen["recorded"] = y.grad_fn is not None
        observed.set()

    thread, errors = run_thread(worker, observed)
    try:
        with tp.no_grad():
            inside.set()
            assert observed.wait(WAIT)
            assert tp.is_grad_enabled() is False
    finally:
        inside.set()
        finish(thread, errors)
    assert seen == {"modes": (True, False), "recorded": True}


def test_set_grad_enabled_call_in_a_thread_leaves_other_threads_alone():
    switched, checked = threading.Event(), threading.Event()
    seen = {}

    def worker():
        tp.set_grad_enabled(False)  # never restored: the thread simply ends
        switched.set()
        assert checked.wait(WAIT)
        seen["worker"] = tp.is_grad_enabled()

    thread, errors = run_thread(worker, switched)
    try:
        assert switched.wait(WAIT)
        seen["main"] = tp.is_grad_enabled()
    finally:
        checked.set()
        finish(thread, errors)
    assert seen == {"worker": False, "main": True}
    assert tp.is_grad_enabled() is True


def test_two_threads_in_opposite_modes_record_by_their_own_mode():
    barrier = threading.Barrier(2, timeout=WAIT)
    results = {}

    def worker(name, manager):
        x = leaf()
        with manager():
            barrier.wait()  # both threads are inside their block now
            for step in range(50):
                y = x * float(step)
                results.setdefault(name, set()).add(y.grad_fn is not None)
            barrier.wait()

    threads = [run_thread(lambda: worker("off", lambda: tp.no_grad()), barrier),
               run_thread(lambda: worker("on", lambda: tp.enable_grad()), barrier)]
    for thread, _ in threads:
        thread.join(WAIT)
    assert not threads[1][0].is_alive(), "the thread did not finish"
    finish(threads[0][0], threads[0][1] + threads[1][1])  # the real error before BrokenBarrier
    assert results == {"off": {False}, "on": {True}}


def new_thread_modes(lib, manager) -> tuple:
    """(grad, inference) seen by a thread started from inside ``manager``."""
    seen = []
    with manager(lib):
        thread, errors = run_thread(lambda: seen.append(modes(lib)))
        finish(thread, errors)
    return seen[0]


SPAWNING_MODES = {
    "no_grad": lambda lib: lib.no_grad(),
    "set_grad_enabled_false": lambda lib: lib.set_grad_enabled(False),
    "inference_mode": lambda lib: lib.inference_mode(),
}


@pytest.mark.parametrize("name", SPAWNING_MODES)
def test_new_thread_starts_with_grad_enabled_and_no_inference_mode(name):
    assert new_thread_modes(tp, SPAWNING_MODES[name]) == (True, False)


@pytest.mark.parametrize("name", SPAWNING_MODES)
def test_new_thread_modes_match_torch(torch, name):
    assert new_thread_modes(torch, SPAWNING_MODES[name]) == (True, False)
    assert new_thread_modes(tp, SPAWNING_MODES[name]) == new_thread_modes(
        torch, SPAWNING_MODES[name])


def test_new_thread_records_graph_while_spawner_is_in_no_grad():
    seen = []

    def worker():
        x = leaf()
        y = (x * x).sum()
        y.backward()
        seen.append((y.grad_fn is not None, x.grad.numpy().tolist()))

    with tp.no_grad():
        thread, errors = run_thread(worker)
        finish(thread, errors)
    assert seen == [(True, [2.0, 4.0, 6.0])]


# ---- dtype rules ----------------------------------------------------------------------------
NOT_FLOATING = [np.int64, np.int32, np.bool_]
FLOATING = [np.float16, np.float32, np.float64]
DTYPE_MESSAGE = "(?i)only Tensors of floating point dtype can require gradients"


def construct(dtype):
    return tensor(np.zeros(3, dtype=dtype), requires_grad=True)


def set_attribute(dtype):
    t = tensor(np.zeros(3, dtype=dtype))
    t.requires_grad = True
    return t


def call_method(dtype):
    t = tensor(np.zeros(3, dtype=dtype))
    return t.requires_grad_()


WAYS = {"constructor": construct, "attribute": set_attribute, "requires_grad_": call_method}


@pytest.mark.parametrize("dtype", NOT_FLOATING, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("way", WAYS)
def test_non_floating_tensor_cannot_require_grad(way, dtype):
    with pytest.raises(RuntimeError, match=DTYPE_MESSAGE):
        WAYS[way](dtype)


@pytest.mark.parametrize("dtype", NOT_FLOATING, ids=lambda d: np.dtype(d).name)
def test_failed_requires_grad_leaves_the_flag_off(dtype):
    t = tensor(np.zeros(3, dtype=dtype))
    with pytest.raises(RuntimeError):
        t.requires_grad = True
    with pytest.raises(RuntimeError):
        t.requires_grad_()
    assert t.requires_grad is False


@pytest.mark.parametrize("dtype", NOT_FLOATING, ids=lambda d: np.dtype(d).name)
def test_non_floating_tensor_may_set_requires_grad_false(dtype):
    t = tensor(np.zeros(3, dtype=dtype), requires_grad=False)
    t.requires_grad = False
    assert t.requires_grad_(False) is t
    assert t.requires_grad is False


@pytest.mark.parametrize("dtype", FLOATING, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("way", WAYS)
def test_floating_tensor_can_require_grad(way, dtype):
    t = WAYS[way](dtype)
    assert t.requires_grad is True
    assert t.is_leaf and t.dtype == dtype


@pytest.mark.parametrize("way", WAYS)
def test_requires_grad_rules_match_torch(torch, way):
    torch_dtypes = {np.int64: torch.int64, np.int32: torch.int32, np.bool_: torch.bool,
                    np.float16: torch.float16, np.float32: torch.float32,
                    np.float64: torch.float64}
    torch_ways = {
        "constructor": lambda d: torch.zeros(3, dtype=d, requires_grad=True),
        "attribute": lambda d: setattr(torch.zeros(3, dtype=d), "requires_grad", True),
        "requires_grad_": lambda d: torch.zeros(3, dtype=d).requires_grad_(),
    }

    def raises(fn, dtype) -> bool:
        try:
            fn(dtype)
        except RuntimeError:
            return True
        return False

    for dtype, torch_dtype in torch_dtypes.items():
        theirs = raises(torch_ways[way], torch_dtype)
        assert theirs is (dtype in NOT_FLOATING)
        assert raises(WAYS[way], dtype) is theirs, np.dtype(dtype).name


def test_requires_grad__returns_self_and_turns_grad_on():
    t = tensor(np.ones(3))
    assert t.requires_grad_() is t
    assert t.requires_grad is True
    (t * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [2.0, 2.0, 2.0])


def test_requires_grad__false_turns_grad_off_on_a_leaf():
    t = leaf()
    assert t.requires_grad_(False) is t
    assert t.requires_grad is False
    y = t * 2
    assert y.grad_fn is None and y.requires_grad is False


def test_setting_requires_grad_attribute_false_on_a_leaf():
    t = leaf()
    t.requires_grad = False
    assert t.requires_grad is False and (t * 2).grad_fn is None


def test_requires_grad_false_on_a_non_leaf_raises():
    y = leaf() * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert y.requires_grad is True and y.grad_fn is not None


def test_requires_grad_true_on_a_non_leaf_is_allowed():
    """torch accepts it: the tensor already requires grad."""
    y = leaf() * 2
    assert y.requires_grad_(True) is y
    y.requires_grad = True
    assert y.requires_grad is True and y.grad_fn is not None


def test_non_leaf_rules_match_torch(torch):
    y = torch.ones(3, dtype=torch.float64, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    assert y.requires_grad_(True) is y
    ours = leaf() * 2
    with pytest.raises(RuntimeError, match="leaf"):
        ours.requires_grad = False
    assert ours.requires_grad_(True) is ours


def test_decorator_wraps_like_torch(torch):
    """functools.wraps, as torch: name, doc and __wrapped__ point to the original."""
    def original():
        """Doc."""

    for lib in (torch, tp):
        wrapped = lib.no_grad()(original)
        assert (wrapped.__name__, wrapped.__doc__) == ("original", "Doc.")
        assert wrapped.__wrapped__ is original
