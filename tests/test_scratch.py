"""The scratch buffers (tinygrad_pool/memory.py) and the engine's recycling of used-up
gradients into them: reuse may change how fast a step runs, never what it computes, and never
hands out memory that something else still reads."""
import threading

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor
from tinygrad_pool.fast import memory

BIG = (128, 128)  # 128 KiB in float64: above SCRATCH_MIN_BYTES, so it is kept


@pytest.fixture(autouse=True)
def empty_pool():
    """Each test starts (and leaves the others) with no kept buffers on this thread."""
    memory._scratch.__dict__.clear()
    yield
    memory._scratch.__dict__.clear()


def kept() -> list:
    return [a for stack in getattr(memory._scratch, "free", {}).values() for a in stack]


def test_buffers_are_kept_only_for_shapes_an_op_asked_for():
    unasked = np.empty(BIG)
    memory.give_buffer(unasked)
    assert kept() == []  # nothing would take it again: left to malloc
    first = memory.take_buffer(BIG, np.float64)
    memory.give_buffer(first)
    assert memory.take_buffer(BIG, np.float64) is first
    assert memory.take_buffer(BIG, np.float64) is not first  # taken: out of the pool


def test_views_small_and_non_contiguous_arrays_are_never_kept():
    memory.take_buffer(BIG, np.float64)  # ask for the shape
    base = np.empty((256, 128))
    memory.give_buffer(base[:128])  # a view: its memory belongs to base
    memory.give_buffer(np.asfortranarray(np.empty(BIG)))  # a taker expects C order
    memory.give_buffer(np.empty(3))
    assert kept() == []


def test_at_most_a_few_buffers_per_shape():
    memory.take_buffer(BIG, np.float64)
    for _ in range(memory.KEPT_PER_SHAPE + 3):
        memory.give_buffer(np.empty(BIG))
    assert len(kept()) == memory.KEPT_PER_SHAPE


def test_kept_bytes_are_capped_and_the_least_recently_asked_for_shape_goes_first(monkeypatch):
    old, new = BIG, (128, 129)
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", 8 * (128 * 128 + 2 * 128 * 129))  # 1 old + 2 new
    memory.take_buffer(old, np.float64)
    memory.take_buffer(new, np.float64)  # asked for after ``old``
    for shape in (old, old, new, new):
        memory.give_buffer(np.empty(shape))
    shapes = [a.shape for a in kept()]
    assert shapes.count(old) == 1 and shapes.count(new) == 2  # one of the old ones went
    assert memory._scratch.kept_bytes == sum(a.nbytes for a in kept()) <= memory.MAX_KEPT_BYTES
    taken = memory.take_buffer(new, np.float64)
    assert memory._scratch.kept_bytes == sum(a.nbytes for a in kept())
    assert taken.shape == new


def test_each_thread_has_its_own_buffers():
    mine = memory.take_buffer(BIG, np.float64)
    memory.give_buffer(mine)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(memory.take_buffer(BIG, np.float64)))
    thread.start()
    thread.join()
    assert seen[0] is not mine and memory.take_buffer(BIG, np.float64) is mine


def test_zeros_from_a_recycled_buffer_are_zeros():
    dirty = memory.take_buffer(BIG, np.float64)
    dirty.fill(7.0)
    memory.give_buffer(dirty)
    again = memory.zeros(BIG, np.float64)
    assert again is dirty and not again.any()


def test_engine_gives_back_used_gradients_but_never_one_still_held():
    memory.take_buffer(BIG, np.float64)  # ask for the shape, as ReLU's backward does
    x = Tensor(np.linspace(-1, 1, BIG[0] * BIG[1]).reshape(BIG), requires_grad=True)
    hidden = x * 3.0
    hidden.retain_grad()
    seed = np.full(BIG, 0.5)  # the caller's own array
    out = hidden.relu()
    out.backward(seed)
    arrays = kept()
    assert arrays, "the gradient that ReLU received and used up should be back in the pool"
    for held in (seed, x.grad.data, hidden.grad.data):
        assert not any(np.shares_memory(held, a) for a in arrays)
    np.testing.assert_array_equal(hidden.grad.data, np.where(x.data > 0, 0.5, 0.0))
    np.testing.assert_array_equal(x.grad.data, np.where(x.data > 0, 1.5, 0.0))


def _cnn_step(x, w, v):
    """conv → ReLU → overlapping max-pool → linear, forward and backward; the gradients."""
    xt, wt, vt = (Tensor(a, requires_grad=True) for a in (x, w, v))
    h = F.max_pool2d(F.relu(F.conv2d(xt, wt, padding=1)), 3, stride=2)
    (h.reshape(x.shape[0], -1) @ vt).sum().backward()
    return xt.grad.data, wt.grad.data, vt.grad.data


def test_training_steps_on_recycled_buffers_match_steps_on_fresh_memory(rng):
    """Three steps in a row on one thread, buffers recycled from step to step, against each step
    alone on a new thread (an empty pool). The gradients of every step are compared only after
    the last one ran: a buffer handed out while still held would show up as overwritten."""
    shapes = ((16, 3, 24, 24), (8, 3, 3, 3))
    steps = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    v = rng.standard_normal((8 * 11 * 11, 1)).astype(np.float32)
    recycled = [_cnn_step(x, w, v) for x, w in steps]
    assert kept(), "the steps should have recycled buffers"
    for (x, w), grads in zip(steps, recycled):
        fresh = []
        thread = threading.Thread(target=lambda: fresh.append(_cnn_step(x, w, v)))
        thread.start()
        thread.join()
        for ours, reference in zip(grads, fresh[0]):
            np.testing.assert_array_equal(ours, reference)
