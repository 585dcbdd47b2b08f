"""How long the graph keeps a large intermediate (64 KiB and up, made by an op): only while
backward needs it, as PyTorch does — an input its op did not save not at all, one it saved
until backward releases the node — while the graph keeps its shape, each intermediate's shape,
dtype, name and node, for the pictures; and a tensor the user holds keeps its value there."""
import gc
import sys
import weakref

import numpy as np
import pytest

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import autograd, Tensor, tensor
from tinygrad_pool.fast import memory
from tinygrad_pool.engine import ReleasedValue

LARGE = (4, 8, 32, 32)  # 128 KiB of float32: past memory.SCRATCH_MIN_BYTES
assert np.prod(LARGE) * 4 >= memory.SCRATCH_MIN_BYTES


def conv_relu_pool(rng, shape=LARGE):
    """x → conv → ReLU → max-pool → sum. ReLU does not save its input (the conv output), it
    saves its output, which max-pool saves too."""
    x = tensor(rng.standard_normal(shape).astype(np.float32))
    w = tensor(rng.standard_normal((shape[1], shape[1], 3, 3)).astype(np.float32) * 0.1,
               requires_grad=True)
    conv = F.conv2d(x, w, padding=1)
    relu = conv.relu()
    loss = F.max_pool2d(relu, 2).sum()
    return x, w, conv, relu, loss


def _gone(array_ref) -> bool:
    """The array is dead (its memory, if the pool's, is free to be reused)."""
    return array_ref() is None


def test_an_input_its_op_did_not_save_is_freed_once_nobody_holds_it(rng):
    x, w, conv, relu, loss = conv_relu_pool(rng)
    conv_array, relu_array = weakref.ref(conv.numpy()), weakref.ref(relu.numpy())
    conv, relu = weakref.ref(conv), weakref.ref(relu)
    gc.collect()
    assert conv() is None and _gone(conv_array)  # ReLU did not save it: gone before backward
    assert relu() is not None  # ReLU and max-pool saved it: the graph holds it ...
    loss.backward()
    assert relu() is None and _gone(relu_array)  # ... until backward has used it
    relu_node = loss.grad_fn.parents[0].grad_fn.parents[0].grad_fn
    stand_in = relu_node.parents[0]
    assert type(stand_in) is ReleasedValue and stand_in.value_freed
    # The graph keeps its shape: each stand-in says what the tensor was and which node made it.
    assert stand_in.shape == LARGE and stand_in.dtype == np.float32
    assert stand_in.grad_fn.name == "Conv2d" and relu_node.name == "ReLU"
    assert not stand_in.numpy().any() and stand_in.numpy().strides == (0, 0, 0, 0)  # no memory of its own
    assert stand_in.grad is None


def test_a_tensor_the_user_holds_keeps_its_value_in_the_graph(rng):
    x, w, conv, relu, loss = conv_relu_pool(rng)
    conv.retain_grad()
    stand_in = relu.grad_fn.parents[0]
    assert type(stand_in) is ReleasedValue and not stand_in.value_freed
    assert stand_in.numpy() is conv.numpy() and stand_in.name is None
    loss.backward()
    assert stand_in.numpy() is conv.numpy() and stand_in.grad is conv.grad
    del conv
    gc.collect()
    assert stand_in.value_freed and stand_in.grad is None  # now nobody holds it


def test_saved_values_are_freed_during_backward_not_only_after(rng):
    """Each saved intermediate goes as soon as the last op that saved it has run backward:
    when the spy's backward runs (last), the ReLU output that Mul saved is already gone."""
    seen = {}

    class Spy(autograd.Function):  # identity; its backward looks at what is still alive
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, grad):
            gc.collect()
            seen["relu"] = relu_ref()
            return grad

    x = tensor(rng.standard_normal((2, 4, 64, 64)).astype(np.float32), requires_grad=True)
    relu = (Spy.apply(x * 2) * 3).relu()
    relu_ref = weakref.ref(relu)
    loss = (relu * relu).sum()  # Mul saves both inputs: the ReLU output
    del relu
    gc.collect()
    assert relu_ref() is not None  # saved: held until backward
    loss.backward()
    assert seen == {"relu": None}
    assert x.grad is not None


def test_an_op_of_three_inputs_holds_only_its_large_unsaved_ones_weakly(rng):
    x = tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    small = tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True) * 2
    big = x * 2
    out = tp.cat([big.reshape(-1), small, x.reshape(-1)])  # cat saves no input values
    node = out.grad_fn
    assert type(node.parents[0]) is ReleasedValue and node.parents[1] is small
    del big
    assert node.parents[0].value_freed
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(LARGE, 3, np.float32))


def test_an_intermediate_used_twice_has_one_stand_in(rng):
    x = tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    shared = x * 2
    loss = (shared.relu() + shared.sigmoid()).sum()  # neither saves its input
    relu_node = loss.grad_fn.parents[0].grad_fn.parents[0].grad_fn
    sigmoid_node = loss.grad_fn.parents[0].grad_fn.parents[1].grad_fn
    assert relu_node.parents[0] is sigmoid_node.parents[0]
    assert not relu_node.parents[0].value_freed
    del shared
    assert relu_node.parents[0].value_freed
    loss.backward()
    assert relu_node.parents[0] is sigmoid_node.parents[0]


@pytest.mark.parametrize("how", ["retain_graph", "small"])
def test_what_stays_in_the_graph(rng, how):
    shape = (2, 3) if how == "small" else LARGE
    x = tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    y = x * 2
    z = y * y  # Mul saves its inputs
    node_z = z.grad_fn
    y_array = y.numpy()
    del y
    z.sum().backward(retain_graph=how == "retain_graph")
    # A retained graph, a small intermediate: kept as themselves, values and all.
    assert type(node_z.parents[0]) is Tensor and node_z.parents[0].numpy() is y_array
    if how == "small":  # ... a small one whatever the op saved
        y = x * 2
        node = y.relu().grad_fn
        del y
        assert type(node.parents[0]) is Tensor


def test_leaves_and_constants_stay_whatever_their_size(rng):
    x = tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    c = tensor(rng.standard_normal(LARGE).astype(np.float32))
    y = (x + 1) + c  # Add saves nothing
    node = y.grad_fn
    y.relu().sum().backward()
    assert node.parents[1] is c and type(node.parents[0]) is ReleasedValue
    assert node.parents[0].grad_fn.parents[0] is x


def test_an_in_place_write_replaces_the_stand_in_of_its_old_self(rng):
    """y.relu_() on a large intermediate: the ReLU node's input is y's old self, a stand-in
    that points at the node that made y before (walking .parents never loops back)."""
    x = tensor(rng.standard_normal(LARGE).astype(np.float32), requires_grad=True)
    y = x * 2
    mul_node = y.grad_fn
    y.relu_()
    assert y.grad_fn.name == "ReLU" and y.grad_fn.parents[0].grad_fn is mul_node
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(x.numpy() > 0, 2, 0).astype(np.float32))


def test_gradients_are_the_same_whatever_the_user_holds(rng):
    """Freeing values changes no number: the same step with every intermediate held by the test
    and with none held gives the same gradients, to the bit."""
    results = []
    for hold in (False, True):
        x, w, conv, relu, loss = conv_relu_pool(np.random.default_rng(7))
        held = [conv, relu] if hold else []
        del conv, relu
        loss.backward()
        results.append(w.grad.numpy().copy())
        del held
    np.testing.assert_array_equal(results[0], results[1])


def test_second_order_gradients_through_freed_inputs(rng, torch):
    """create_graph=True differentiates the backward itself; the inputs held weakly (conv's
    output into ReLU, freed) are not needed for it, and torch agrees on the numbers."""
    x = rng.standard_normal((2, 8, 32, 32))
    w = rng.standard_normal((8, 8, 3, 3)) * 0.1
    ours_x, ours_w = tensor(x, requires_grad=True), tensor(w, requires_grad=True)
    out = F.conv2d(ours_x, ours_w, padding=1).relu()
    loss = (out * out).sum()
    (gw,) = autograd.grad(loss, [ours_w], create_graph=True)
    (gw * gw).sum().backward()
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tout = torch.nn.functional.conv2d(tx, tw, padding=1).relu()
    (tgw,) = torch.autograd.grad((tout * tout).sum(), [tw], create_graph=True)
    (tgw * tgw).sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours_w.grad.numpy(), tw.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_a_second_backward_through_a_released_graph_still_says_so(rng):
    *_, loss = conv_relu_pool(rng)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
