"""The performance fast paths against the general paths they shortcut, and against PyTorch and
finite differences: a fast path may change how fast, never what."""
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import gradcheck, tensor
from tinygrad_pool.fast import memory
from tinygrad_pool.engine import _FLAGS_OF_TWO, Node, _topological_order
from tinygrad_pool.fast import quiet, views


def _conv_grads(x, w, b, **kw):
    xt, wt, bt = (tensor(a, requires_grad=True) for a in (x, w, b))
    out = F.conv2d(xt, wt, bt, **kw)
    (out * out).sum().backward()
    return out.numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()


def test_conv_scratch_buffers_are_never_shared_between_live_nodes(torch, rng):
    """Two convs of the same shape alive in one graph, twice in a row (the second time from
    recycled buffers), give the gradients of the same computation done one conv at a time."""
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w1, w2 = (rng.standard_normal((3, 3, 3, 3)).astype(np.float32) for _ in range(2))
    for _ in range(2):
        xt, a, b = (tensor(v, requires_grad=True) for v in (x, w1, w2))
        (F.conv2d(xt, a, padding=1) * F.conv2d(xt, b, padding=1)).sum().backward()
        grads = (xt.grad.numpy(), a.grad.numpy(), b.grad.numpy())
    tx, ta, tb = (torch.tensor(v, requires_grad=True) for v in (x, w1, w2))
    tconv = torch.nn.functional.conv2d
    (tconv(tx, ta, padding=1) * tconv(tx, tb, padding=1)).sum().backward()
    for ours, theirs in zip(grads, (tx.grad, ta.grad, tb.grad)):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-4)
        assert ours.dtype == np.float32


def test_conv_gradients_repeat_exactly_from_recycled_buffers_and_after_retain_graph(rng):
    x = rng.standard_normal((2, 2, 5, 5))
    w = rng.standard_normal((4, 2, 3, 3))
    b = rng.standard_normal(4)
    first = _conv_grads(x, w, b, padding=1)
    again = _conv_grads(x, w, b, padding=1)  # columns and gradients in recycled buffers
    for u, v in zip(first, again):
        np.testing.assert_array_equal(u, v)
    wt = tensor(w, requires_grad=True)
    out = F.conv2d(tensor(x), wt, padding=1).sum()
    out.backward(retain_graph=True)
    once = wt.grad.numpy().copy()
    _conv_grads(x, w, b, padding=1)  # another conv of the same shape in between
    out.backward()
    np.testing.assert_allclose(wt.grad.numpy(), 2 * once, rtol=1e-12)
    node = out.grad_fn.parents[0].grad_fn
    assert node.released and node.saved_for_backward() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_keeps_its_dtype(rng, dtype):
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((2, 3, 7, 7), (4, 3, 3, 3), (4,)))
    for value in _conv_grads(x, w, b, padding=1, stride=2):
        assert value.dtype == dtype


def test_conv_gradcheck_after_changes(rng):
    x = tensor(rng.standard_normal((2, 2, 5, 6)), requires_grad=True)
    w = tensor(rng.standard_normal((4, 1, 3, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: F.conv2d(a, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2), [x, w])


def test_engine_walk_orders_a_diamond_and_a_long_chain():
    """The tuple-free topological walk: shared inputs are summed once, long chains don't recurse."""
    x = tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = x * x
    z = (y + x) * (y - x)  # y and x each reach z along two paths
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy() ** 3 - 2 * x.numpy())
    order = _topological_order([z.grad_fn])  # nodes: Functions, and the leaf x itself
    assert len(order) == len({id(node) for node in order}) == 5  # x, Mul, Add, Sub, Mul
    position = {id(node): k for k, node in enumerate(order)}
    for node in order:
        if isinstance(node, Node):
            assert all(position[id(e)] < position[id(node)] for e in node.edges if e is not None)
    chain = x
    for _ in range(5000):
        chain = chain * 1.0
    chain.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy() ** 3 - 2 * x.numpy() + 1)


def test_leaf_gradient_is_adopted_only_when_nothing_else_holds_it():
    """The engine keeps a leaf's first gradient without a copy only when it is the sole owner."""
    from tinygrad_pool import Node
    x = tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel()[[5, 7, 13, 15]], 1)
    assert x.grad.numpy().sum() == 4 and x.grad.numpy().flags.writeable

    a, b = tensor(np.ones(3), requires_grad=True), tensor(np.ones(3), requires_grad=True)
    (a + b).sum().backward()  # Add hands one array to both inputs
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.numpy()[0] = 7
    assert b.grad.numpy()[0] == 1

    seed = np.ones(3)
    c = tensor(np.ones(3), requires_grad=True)
    c.backward(seed)  # the caller's own array
    seed[0] = 5
    assert c.grad.numpy()[0] == 1

    class Saved(Node):
        def forward(ctx, x):
            ctx.grad_to_return = np.full(x.shape, 2.0)
            return x.copy()

        def backward(ctx, grad):
            return ctx.grad_to_return  # also held by the node while the graph is retained

    d = tensor(np.ones(3), requires_grad=True)
    out = Saved.apply(d)
    out.backward(np.ones(3), retain_graph=True)
    assert not np.shares_memory(d.grad.numpy(), out.grad_fn.grad_to_return)
    out.backward(np.ones(3))
    np.testing.assert_array_equal(d.grad.numpy(), 4.0)


# Counted in a fresh interpreter: other threads of this one (pytest-xdist's) allocate too.
_COUNT_OBJECTS_PER_OP = """
import gc
import numpy as np
from tinygrad_pool import tensor
x = tensor(np.ones(16, np.float32), requires_grad=True)
scale, shift = tensor(np.full(16, 0.9, np.float32)), tensor(np.zeros(16, np.float32))
y = x * scale
gc.collect()
gc.disable()
before = len(gc.get_objects())
for i in range(300):
    y = y * scale if i % 3 == 0 else (y + shift if i % 3 == 1 else y.tanh())
print((len(gc.get_objects()) - before) / 300)
"""


def test_a_recorded_elementwise_op_keeps_four_objects_for_the_garbage_collector():
    """A long chain keeps every node until backward, and CPython's collector walks them all
    again and again while the graph grows (measured: see benchmarks/README.md). Each of mul,
    add and tanh keeps its node, its inputs tuple, its edges tuple and its output Tensor: its
    flags are shared constant tuples, and equal shapes keep no shape tuples (only a broadcast
    needs them, to sum its gradient back)."""
    done = subprocess.run([sys.executable, "-c", _COUNT_OBJECTS_PER_OP], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) <= 4
    x = tensor(np.ones(16, np.float32), requires_grad=True)
    scale, shift = tensor(np.full(16, 0.9, np.float32)), tensor(np.zeros(16, np.float32))
    y = x * scale
    for i in range(300):
        y = y * scale if i % 3 == 0 else (y + shift if i % 3 == 1 else y.tanh())
    add = y.grad_fn.parents[0].grad_fn  # (the last op is tanh, the one before it the add)
    assert add.needs_input_grad is _FLAGS_OF_TWO[True][False] and add.a_shape is None
    broadcast = (y + tensor(np.ones((3, 1), np.float32))).grad_fn
    assert (broadcast.a_shape, broadcast.b_shape) == ((16,), (3, 1))


@pytest.mark.parametrize("shape,target", [
    ((), (3, 2)), ((1,), (4,)), ((3, 1), (2, 3, 5)), ((1, 4), (3, 4)), ((2, 3), (2, 3)),
    ((0, 1), (2, 0, 3)), ((1, 1), (1, 1))])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_broadcast_view_equals_numpys_broadcast_to(rng, shape, target, layout):
    """views.broadcast_to is np.broadcast_to: the same values and strides, read-only, over the
    same memory (a non-contiguous input goes to NumPy itself)."""
    x = rng.standard_normal(shape[::-1]).T if layout == "transposed" else rng.standard_normal(shape)
    ours, numpys = views.broadcast_to(x, target), np.broadcast_to(x, target)
    np.testing.assert_array_equal(ours, numpys)
    assert ours.shape == numpys.shape and ours.strides == numpys.strides
    assert not ours.flags.writeable and np.shares_memory(ours, x) == (x.size > 0)


@pytest.mark.parametrize("shape,target", [((3,), (4,)), ((2, 3), (3,)), ((1,), (-1,))])
def test_broadcast_view_refuses_what_numpy_refuses(shape, target):
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(shape), target)
    with pytest.raises(ValueError):
        views.broadcast_to(np.ones(shape), target)


# ---- quiet: np.errstate(all="ignore") by NumPy's context variable ------------------------------
def _divide_by_zero():
    return np.array([1.0]) / np.array([0.0])


def test_quiet_silences_what_np_errstate_would_and_restores_the_settings_after():
    with np.errstate(all="raise"):
        before = np.geterr()
        with quiet.quiet():
            assert np.geterr() == {"divide": "ignore", "over": "ignore", "under": "ignore",
                                   "invalid": "ignore"}
            assert _divide_by_zero()[0] == np.inf  # raised outside
            assert np.isnan(np.array([np.inf]) - np.array([np.inf]))[0]
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            _divide_by_zero()


def test_quiet_nests_and_restores_on_an_exception():
    before = np.geterr()
    with pytest.raises(KeyError):
        with quiet.quiet():
            with np.errstate(divide="raise"):
                with quiet.quiet():
                    _divide_by_zero()
                with pytest.raises(FloatingPointError):
                    _divide_by_zero()
            raise KeyError("out")
    assert np.geterr() == before


def test_quiet_keeps_the_users_buffer_size_and_leaves_other_threads_alone():
    import threading
    size, entered, seen = np.getbufsize(), threading.Event(), {}

    def other_thread():  # already running when the main thread goes quiet
        entered.wait()
        seen["thread"] = np.geterr()["divide"]

    thread = threading.Thread(target=other_thread)
    thread.start()
    try:
        np.setbufsize(16384)
        with quiet.quiet():
            seen["bufsize"] = np.getbufsize()
            entered.set()
            thread.join()
    finally:
        np.setbufsize(size)
    assert seen == {"bufsize": 16384, "thread": "warn"}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("zero_side", ["a", "b"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_masked_where_equals_np_where_bit_for_bit(rng, dtype, zero_side, layout):
    """memory.where's bits path (a large float array and a +0) against np.where itself: the
    same bits everywhere, inf, nan, -0 and negative numbers included."""
    values = rng.standard_normal((8, 16, 32, 32)).astype(dtype)
    if layout == "transposed":
        values = values.transpose(1, 0, 2, 3)  # a conv's memory order
    flat = values.reshape(-1)  # (a copy when transposed: values is set below)
    flat[:6] = [np.inf, -np.inf, np.nan, -0.0, -2.0, 3.0]
    values[...] = flat.reshape(values.shape)
    condition = rng.random(values.shape) < 0.5
    condition.reshape(-1)[:6] = [False, False, False, True, False, True]
    zero = np.zeros((), dtype)
    a, b = (zero, values) if zero_side == "a" else (values, zero)
    assert values.nbytes >= memory.SCRATCH_MIN_BYTES  # the bits path, not np.where
    got = memory.where(condition, a, b)
    want = np.where(condition, a, b)
    bits = np.dtype(f"u{values.dtype.itemsize}")
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(bits), np.ascontiguousarray(want).view(bits))


@pytest.mark.parametrize("case", ["small", "minus zero", "wider zero", "integers", "broadcast"])
def test_masked_where_leaves_other_cases_to_np_where(rng, case):
    values = rng.standard_normal((64, 64)).astype(np.float32)
    condition = rng.random(values.shape) < 0.5
    zero = np.zeros((), np.float32)
    if case == "small":
        values, condition = values[:2], condition[:2]
    elif case == "minus zero":
        zero = np.array(-0.0, np.float32)  # np.where gives -0 where masked: the bits path cannot
    elif case == "wider zero":
        zero = np.zeros((), np.float64)  # the result is float64
    elif case == "integers":
        values = (values * 10).astype(np.int32)
    else:
        condition = condition[:1]  # broadcast over the rows
    got = memory.where(condition, values, zero)
    want = np.where(condition, values, zero)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
