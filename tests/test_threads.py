"""Threads sharing one model, and custom Functions whose backward the engine checks.

Thread-safe accumulation: N threads each run forward+backward on ONE shared model (no optimizer
step, no zero_grad); every parameter's ``.grad`` must end up exactly the sum of the N × steps
gradients, computed here one by one in the main thread. Barriers make the threads overlap, and
a short switch interval makes the interpreter hop between them as often as it can.

Custom Functions: a backward that returns the wrong number of gradients, a wrong shape or
something that is not an array raises RuntimeError naming the Function and the input; a
gradient the input broadcasts to is summed down to the input's shape, as in torch.
"""
import re
import sys
import threading

import numpy as np
import pytest

import tinygrad_pool as tp
from tinygrad_pool import Node, nn, Tensor, tensor

from helpers import Cube

WAIT = 30  # seconds: a barrier or join that takes longer means a thread is stuck


@pytest.fixture
def busy_switching():
    """Make CPython switch threads every 10 µs instead of every 5 ms, for the test's duration."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


def run_threads(workers, *barriers) -> None:
    """Start one thread per callable, wait for all, re-raise the first error here. A failing
    worker breaks the barriers so that the others stop waiting for it."""
    errors = []

    def body(work):
        try:
            work()
        except BaseException as error:  # noqa: B902 - handed to the main thread
            errors.append(error)
            for barrier in barriers:
                barrier.abort()

    threads = [threading.Thread(target=body, args=(work,)) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]


def grads(model) -> list:
    """Copies of every parameter's gradient (zeros where backward left None)."""
    return [np.zeros(p.shape) if p.grad is None else np.array(p.grad.numpy())
            for p in model.parameters()]


def clear_grads(model) -> None:
    for p in model.parameters():
        p.grad = None


def serial_sum(model, loss_fn, keys) -> list:
    """Sum over keys of the gradients of loss_fn(model, key), each computed on its own."""
    total = [np.zeros(p.shape) for p in model.parameters()]
    for key in keys:
        clear_grads(model)
        loss_fn(model, key).backward()
        for acc, g in zip(total, grads(model)):
            acc += g
    clear_grads(model)
    return total


def assert_grads_equal(model, expected) -> None:
    for k, (got, want) in enumerate(zip(grads(model), expected)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12,
                                   err_msg=f"parameter {k}: threads lost or doubled gradients")


# ---- a small CNN shared by 8 threads ---------------------------------------------------------
THREADS, STEPS = 8, 50


def conv_model():
    tp.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, dtype=np.float64), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 3, dtype=np.float64))


def conv_loss(model, key):
    """The loss of step key = (thread, step): its own deterministic input and target."""
    rng = np.random.default_rng(key)
    x = tensor(rng.standard_normal((2, 1, 6, 6)))
    target = tensor(rng.standard_normal((2, 3)))
    return ((model(x) - target) ** 2).mean()


def test_serial_sum_is_not_trivial():
    """The reference itself: different steps give different, non-zero gradients."""
    model = conv_model()
    one, two = serial_sum(model, conv_loss, [(0, 0)]), serial_sum(model, conv_loss, [(0, 1)])
    for a, b in zip(one, two):
        assert np.abs(a).sum() > 0 and not np.allclose(a, b)


def test_threads_sharing_a_cnn_accumulate_exactly_the_serial_sum(busy_switching):
    model = conv_model()
    keys = [(t, s) for t in range(THREADS) for s in range(STEPS)]
    expected = serial_sum(model, conv_loss, keys)
    barrier = threading.Barrier(THREADS, timeout=WAIT)

    def worker(thread):
        for step in range(STEPS):
            barrier.wait()  # all threads start each step together: their backwards overlap
            loss = conv_loss(model, (thread, step))
            loss.backward()

    run_threads([lambda t=t: worker(t) for t in range(THREADS)], barrier)
    assert_grads_equal(model, expected)


def test_threads_accumulate_onto_existing_gradients(busy_switching):
    """.grad already set before the threads start: they add to it, they do not replace it."""
    model = conv_model()
    keys = [(t, 1000 + s) for t in range(4) for s in range(10)]
    before = serial_sum(model, conv_loss, [(99, 99)])
    expected = [b + s for b, s in zip(before, serial_sum(model, conv_loss, keys))]
    conv_loss(model, (99, 99)).backward()
    barrier = threading.Barrier(4, timeout=WAIT)

    def worker(thread):
        barrier.wait()
        for step in range(10):
            conv_loss(model, (thread, 1000 + step)).backward()

    run_threads([lambda t=t: worker(t) for t in range(4)], barrier)
    assert_grads_equal(model, expected)


# ---- a tiny Linear layer, many tiny steps: the most contention per unit of work -------------
def linear_loss(model, key):
    rng = np.random.default_rng(key)
    return (model(tensor(rng.standard_normal((1, 3)))) ** 2).sum()


def test_threads_sharing_a_tiny_linear_accumulate_exactly_the_serial_sum(busy_switching):
    tp.manual_seed(1)
    model = nn.Linear(3, 2, dtype=np.float64)
    threads, steps = 8, 250
    expected = serial_sum(model, linear_loss, [(t, s) for t in range(threads)
                                               for s in range(steps)])
    barrier = threading.Barrier(threads, timeout=WAIT)

    def worker(thread):
        barrier.wait()
        for step in range(steps):
            linear_loss(model, (thread, step)).backward()

    run_threads([lambda t=t: worker(t) for t in range(threads)], barrier)
    assert_grads_equal(model, expected)


def test_threads_sharing_one_leaf_tensor_accumulate_exactly(busy_switching):
    """No module: one leaf used by every thread, gradients of different magnitudes."""
    w = tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    threads, steps = 8, 200
    barrier = threading.Barrier(threads, timeout=WAIT)

    def worker(thread):
        barrier.wait()
        for step in range(steps):
            (w * float(thread + 1) + float(step)).sum().backward()  # d/dw = thread + 1

    run_threads([lambda t=t: worker(t) for t in range(threads)], barrier)
    expected = steps * sum(t + 1 for t in range(threads))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(5, float(expected)))


def test_threads_sharing_a_wide_linear_accumulate_exactly_the_serial_sum(busy_switching):
    """Parameters of thousands of elements: NumPy releases the GIL inside large additions, so
    two unguarded accumulations into one .grad can really run at the same time."""
    tp.manual_seed(2)
    model = nn.Linear(256, 64, dtype=np.float64)
    threads, steps = 8, 20

    def loss_fn(m, key):
        rng = np.random.default_rng(key)
        return (m(tensor(rng.standard_normal((4, 256)))) ** 2).sum()

    expected = serial_sum(model, loss_fn, [(t, s) for t in range(threads) for s in range(steps)])
    barrier = threading.Barrier(threads, timeout=WAIT)

    def worker(thread):
        for step in range(steps):
            barrier.wait()
            loss_fn(model, (thread, step)).backward()

    run_threads([lambda t=t: worker(t) for t in range(threads)], barrier)
    assert_grads_equal(model, expected)


def test_threads_racing_for_the_first_gradient_all_land(busy_switching):
    """Round after round .grad starts as None and every thread's backward arrives together:
    the first accumulation (None -> gradient) must not let one thread overwrite another."""
    w = tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    threads, rounds = 8, 1000
    mismatches = []

    def check_and_reset():  # run by one thread once all have passed the barrier
        got = None if w.grad is None else w.grad.numpy().copy()
        if got is None or not np.array_equal(got, np.full(5, threads * (threads + 1) / 2)):
            mismatches.append(got)
        w.grad = None

    barrier = threading.Barrier(threads, action=check_and_reset, timeout=WAIT)
    start = threading.Barrier(threads, timeout=WAIT)

    def worker(thread):
        for _ in range(rounds):
            start.wait()
            (w * float(thread + 1)).sum().backward()  # d/dw = thread + 1
            barrier.wait()

    run_threads([lambda t=t: worker(t) for t in range(threads)], start, barrier)
    assert mismatches == [], f"{len(mismatches)} of {rounds} rounds lost a gradient"


# ---- one thread in no_grad must not drop another thread's gradients -------------------------
def test_no_grad_in_one_thread_does_not_drop_another_threads_gradients(busy_switching):
    """Lock-step: in every round the no_grad thread is inside its block while the other
    thread builds its graph and runs backward."""
    model = conv_model()
    rounds = 20
    expected = serial_sum(model, conv_loss, [(7, r) for r in range(rounds)])
    barrier = threading.Barrier(2, timeout=WAIT)
    recorded = []

    def inference_thread():
        x = tensor(np.ones((1, 1, 6, 6)))
        for _ in range(rounds):
            with tp.no_grad():
                barrier.wait()  # now inside no_grad
                model(x)
                barrier.wait()  # the training thread has finished its step

    def training_thread():
        for r in range(rounds):
            barrier.wait()  # the other thread is inside no_grad now
            loss = conv_loss(model, (7, r))
            recorded.append(loss.grad_fn is not None)
            loss.backward()
            barrier.wait()

    run_threads([inference_thread, training_thread], barrier)
    assert recorded == [True] * rounds
    assert_grads_equal(model, expected)


def test_free_running_no_grad_thread_does_not_drop_gradients(busy_switching):
    """Not lock-step: one thread toggles no_grad as fast as it can while three train."""
    model = conv_model()
    steps, trainers = 25, 3
    expected = serial_sum(model, conv_loss, [(t, s) for t in range(trainers)
                                             for s in range(steps)])
    done = threading.Event()
    barrier = threading.Barrier(trainers + 1, timeout=WAIT)

    def toggler():
        x = tensor(np.ones((1, 1, 6, 6)))
        barrier.wait()
        while not done.is_set():
            with tp.no_grad():
                model(x)

    def trainer(thread):
        barrier.wait()
        for step in range(steps):
            conv_loss(model, (thread, step)).backward()

    def trainers_then_stop():
        try:
            run_threads([lambda t=t: trainer(t) for t in range(trainers)], barrier)
        finally:
            done.set()

    run_threads([toggler, trainers_then_stop], barrier)
    assert_grads_equal(model, expected)


# ---- custom Functions ----------------------------------------------------------------------
class ScaledProduct(Node):
    """scale · a · b, with an attribute: a correct two-input custom Function."""

    def forward(ctx, a, b, *, scale):
        ctx.save_for_backward(a=a, b=b)
        ctx.scale = scale
        return scale * a * b

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return ctx.scale * b * grad, ctx.scale * a * grad


def two_leaves(shape=(2, 3)):
    rng = np.random.default_rng(5)
    return (tensor(rng.standard_normal(shape), requires_grad=True),
            tensor(rng.standard_normal(shape), requires_grad=True))


def test_correct_custom_function_passes_gradcheck():
    x = tensor(np.random.default_rng(3).standard_normal((2, 3)), requires_grad=True)
    assert tp.gradcheck(lambda t: Cube.apply(t), [x]) is True


def test_correct_two_input_custom_function_with_attribute_passes_gradcheck():
    a, b = two_leaves()
    assert tp.gradcheck(lambda p, q: ScaledProduct.apply(p, q, scale=2.5), [a, b]) is True


def test_custom_function_gradient_matches_formula():
    x = tensor(np.array([-2.0, 0.5, 3.0]), requires_grad=True)
    y = Cube.apply(x)
    np.testing.assert_allclose(y.numpy(), x.numpy() ** 3)
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)


def test_custom_function_under_no_grad_records_nothing():
    x = tensor(np.ones(3), requires_grad=True)
    with tp.no_grad():
        y = Cube.apply(x)
    assert y.grad_fn is None and y.requires_grad is False


def test_custom_function_may_return_none_for_an_input():
    class FirstOnly(Node):
        def forward(ctx, a, b):
            return a * b

        def backward(ctx, grad):
            return grad, None

    a, b = two_leaves()
    FirstOnly.apply(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))
    assert b.grad is None


def names_index(message, index) -> bool:
    """Whether the message points at input ``index`` ("index 1", torch's word, or "input 1")."""
    return re.search(rf"\b(index|input) {index}\b", message) is not None


def backward_error(fn_class, *inputs) -> str:
    """The RuntimeError message that backward through fn_class raises."""
    out = fn_class.apply(*inputs)
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    return str(info.value)


class TooFewAsTuple(Node):
    def forward(ctx, a, b):
        return a * b

    def backward(ctx, grad):
        return (grad,)


class TooFewAsArray(Node):
    def forward(ctx, a, b):
        return a * b

    def backward(ctx, grad):
        return grad  # a bare array for a two-input Function


class TooMany(Node):
    def forward(ctx, a):
        return 2 * a

    def backward(ctx, grad):
        return 2 * grad, 2 * grad


@pytest.mark.parametrize("fn_class", [TooFewAsTuple, TooFewAsArray])
def test_too_few_gradients_raise_naming_the_function(fn_class):
    message = backward_error(fn_class, *two_leaves())
    assert fn_class.__name__ in message
    assert "expected 2, got 1" in message


def test_too_few_gradients_raise_even_if_the_missing_input_needs_no_grad():
    """torch counts inputs, not inputs that require grad."""
    a, _ = two_leaves()
    message = backward_error(TooFewAsTuple, a, tensor(np.ones((2, 3))))
    assert "TooFewAsTuple" in message and "expected 2, got 1" in message


def test_too_many_gradients_raise_naming_the_function():
    message = backward_error(TooMany, two_leaves()[0])
    assert "TooMany" in message
    assert "expected 1, got 2" in message


def wrong_shape_function(index, shape):
    """A two-input Function whose backward hands input ``index`` a gradient of ``shape``."""
    def backward(ctx, grad):
        out = [grad, grad]
        out[index] = np.ones(shape)
        return tuple(out)

    return type(f"WrongShapeAt{index}", (Node,),
                {"forward": lambda ctx, a, b: a * b, "backward": backward})


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("shape", [(3,), (4, 3), (1, 3), (3, 2), (2, 3, 1), ()],
                         ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_gradient_of_wrong_shape_raises_naming_function_and_index(index, shape):
    """Input shape (2, 3) does not broadcast to any of these shapes: torch rejects each one."""
    fn_class = wrong_shape_function(index, shape)
    message = backward_error(fn_class, *two_leaves())
    assert fn_class.__name__ in message
    assert names_index(message, index), message


def test_wrong_shape_rules_match_torch(torch):
    """torch rejects the same gradient shapes for an input of shape (2, 3)."""
    for shape in [(3,), (4, 3), (1, 3), (3, 2), (2, 3, 1), ()]:
        class Bad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad, shape=shape):
                return torch.ones(shape, dtype=grad.dtype)

        x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
            Bad.apply(x).sum().backward()


class Repeat4(Node):
    """4 · x, with a backward that returns the gradient of each of 4 stacked copies."""

    def forward(ctx, x):
        return 4 * x

    def backward(ctx, grad):
        return np.stack([grad] * 4)  # shape (4,) + x.shape: x broadcasts to it


class ExpandRows(Node):
    """(1, 3) -> (2, 3) by repeating the row; backward hands back the (2, 3) gradient as is."""

    def forward(ctx, x):
        return np.broadcast_to(x, (2, 3)).copy()

    def backward(ctx, grad):
        return grad


def test_broadcastable_gradient_with_extra_leading_dims_is_summed():
    x = tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    weights = np.random.default_rng(8).standard_normal((2, 3))
    Repeat4.apply(x).backward(weights)
    assert x.grad.shape == (2, 3)
    np.testing.assert_allclose(x.grad.numpy(), 4 * weights)
    assert tp.gradcheck(lambda t: Repeat4.apply(t), [tensor(x.numpy().copy(), requires_grad=True)])


def test_broadcastable_gradient_over_a_size_one_dim_is_summed():
    x = tensor(np.array([[1.0, 2.0, 3.0]]), requires_grad=True)
    weights = np.arange(6.0).reshape(2, 3)
    ExpandRows.apply(x).backward(weights)
    assert x.grad.shape == (1, 3)
    np.testing.assert_allclose(x.grad.numpy(), [[3.0, 5.0, 7.0]])  # torch gives the same
    assert tp.gradcheck(lambda t: ExpandRows.apply(t), [tensor(x.numpy().copy(), requires_grad=True)])


def test_broadcastable_gradients_match_torch(torch):
    class TorchExpandRows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.expand(2, 3).clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    class TorchRepeat4(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 4 * x

        @staticmethod
        def backward(ctx, grad):
            return torch.stack([grad] * 4)

    weights = np.arange(6.0).reshape(2, 3)
    for ours, theirs, shape in [(ExpandRows, TorchExpandRows, (1, 3)),
                                (Repeat4, TorchRepeat4, (2, 3))]:
        data = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        x, tx = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        ours.apply(x).backward(weights)
        theirs.apply(tx).backward(torch.tensor(weights))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def not_an_array_function(index, value):
    def backward(ctx, grad):
        out = [grad, grad]
        out[index] = value
        return tuple(out)

    return type(f"NotAnArrayAt{index}", (Node,),
                {"forward": lambda ctx, a, b: a * b, "backward": backward})


NOT_ARRAYS = {
    "list": [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
    "string": "gradient",
    "dict": {"grad": 1.0},
}


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("kind", NOT_ARRAYS)
def test_gradient_that_is_not_an_array_raises_naming_function_and_index(kind, index):
    fn_class = not_an_array_function(index, NOT_ARRAYS[kind])
    message = backward_error(fn_class, *two_leaves())
    assert fn_class.__name__ in message
    assert names_index(message, index), message


def test_torch_also_rejects_a_list_gradient(torch):
    """torch raises RuntimeError too (its message names neither Function nor index)."""
    class ListGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]

    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="got list"):
        ListGrad.apply(x).sum().backward()
