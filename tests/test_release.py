"""What a backward without retain_graph=True frees: the saved buffers, and the values of large
intermediates that nothing but the graph held (as PyTorch frees them), while the graph keeps
its shape, each intermediate's shape, dtype, name and node, for the pictures."""
import gc
import sys
import weakref

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, autograd
from tinygrad_pool.fast import memory
from tinygrad_pool.tensor import ReleasedValue

LARGE = (4, 8, 32, 32)  # 128 KiB of float32: past memory.SCRATCH_MIN_BYTES
assert np.prod(LARGE) * 4 >= memory.SCRATCH_MIN_BYTES


def conv_relu_pool(rng, shape=LARGE):
    """x → conv → ReLU → max-pool → sum, with the conv output (ReLU's input, which ReLU does not
    save) and the ReLU output returned beside the loss."""
    x = Tensor(rng.standard_normal(shape).astype(np.float32))
    w = Tensor(rng.standard_normal((shape[1], shape[1], 3, 3)).astype(np.float32) * 0.1,
               requires_grad=True)
    conv = F.conv2d(x, w, padding=1)
    relu = conv.relu()
    loss = F.max_pool2d(relu, 2).sum()
    return x, w, conv, relu, loss


def test_a_large_intermediate_nobody_holds_is_freed_by_backward(rng):
    x, w, conv, relu, loss = conv_relu_pool(rng)
    conv_array, relu_array = weakref.ref(conv.data), weakref.ref(relu.data)
    conv, relu = weakref.ref(conv), weakref.ref(relu)
    gc.collect()
    assert conv() is not None and relu() is not None  # the graph holds them until backward
    loss.backward()
    assert conv() is None and relu() is None  # the tensors are gone ...
    if memory._CAN_COUNT_REFERENCES:  # ... and their memory (back in the pool, or to malloc)
        assert conv_array() is None or sys.getrefcount(conv_array()) <= 2
        assert relu_array() is None or sys.getrefcount(relu_array()) <= 2
    pool_node = loss.grad_fn.parents[0].grad_fn
    stand_in = pool_node.parents[0]
    assert type(stand_in) is ReleasedValue and stand_in.value_freed
    # The graph keeps its shape: each stand-in says what the tensor was and which node made it.
    assert stand_in.shape == LARGE and stand_in.dtype == np.float32
    assert stand_in.grad_fn.name == "ReLU" and stand_in.grad_fn.parents[0].grad_fn.name == "Conv2d"
    assert not stand_in.data.any() and stand_in.data.strides == (0, 0, 0, 0)  # no memory of its own
    assert stand_in.grad is None


def test_a_tensor_the_user_holds_keeps_its_value_in_the_graph(rng):
    x, w, conv, relu, loss = conv_relu_pool(rng)
    conv.retain_grad()
    loss.backward()
    stand_in = relu.grad_fn.parents[0]
    assert type(stand_in) is ReleasedValue and not stand_in.value_freed
    assert stand_in.data is conv.data and stand_in.grad is conv.grad
    del conv
    gc.collect()
    assert stand_in.value_freed and stand_in.grad is None  # now nobody holds it


def test_the_values_are_freed_during_backward_not_only_after(rng):
    """Each intermediate goes as soon as the last op it fed has run backward: when the conv's
    backward runs, its output (ReLU's input) is already gone."""
    seen = {}

    class Spy(autograd.Function):  # identity; its backward looks at what is still alive
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, grad):
            gc.collect()
            seen["conv"], seen["relu"] = conv_ref(), relu_ref()
            return grad

    x = Tensor(rng.standard_normal((2, 4, 64, 64)).astype(np.float32), requires_grad=True)
    first = Spy.apply(x * 2)  # the spy runs last in backward: after ReLU and the scale
    conv, relu = first * 3, None
    relu = conv.relu()
    conv_ref, relu_ref = weakref.ref(conv), weakref.ref(relu)
    loss = (relu * relu).sum()
    del conv, relu
    loss.backward()
    assert seen == {"conv": None, "relu": None}
    assert x.grad is not None


def test_an_intermediate_used_twice_has_one_stand_in(rng):
    x = Tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    shared = x * 2
    loss = (shared.relu() + shared.sigmoid()).sum()
    relu_node = loss.grad_fn.parents[0].grad_fn.parents[0].grad_fn
    sigmoid_node = loss.grad_fn.parents[0].grad_fn.parents[1].grad_fn
    del shared
    loss.backward()
    assert relu_node.parents[0] is sigmoid_node.parents[0]
    assert relu_node.parents[0].value_freed


@pytest.mark.parametrize("how", ["retain_graph", "small"])
def test_what_stays_in_the_graph(rng, how):
    shape = (2, 3) if how == "small" else LARGE
    x = Tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    y = x * 2
    z = y.relu()
    node_z = z.grad_fn
    y_array = y.data
    del y
    z.sum().backward(retain_graph=how == "retain_graph")
    # A retained graph, a small intermediate: kept as themselves, values and all.
    assert type(node_z.parents[0]) is Tensor and node_z.parents[0].data is y_array


def test_leaves_and_constants_stay_whatever_their_size(rng):
    x = Tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    c = Tensor(rng.standard_normal(LARGE).astype(np.float32))
    y = x * c
    node = y.grad_fn
    y.relu().sum().backward()
    assert node.parents[0] is x and node.parents[1] is c


def test_gradients_through_released_graphs_are_unchanged(rng):
    """Freeing values changes no number: two training steps on the same weights, one keeping
    every intermediate alive (held by the test), the same gradients to the bit."""
    results = []
    for hold in (False, True):
        x, w, conv, relu, loss = conv_relu_pool(np.random.default_rng(7))
        held = [conv, relu] if hold else []
        del conv, relu
        loss.backward()
        results.append(w.grad.data.copy())
        del held
    np.testing.assert_array_equal(results[0], results[1])


def test_a_second_backward_through_a_released_graph_still_says_so(rng):
    *_, loss = conv_relu_pool(rng)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
