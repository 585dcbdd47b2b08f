"""Empty batches (N = 0) through conv, pooling, unfold/fold and linear, functional and as modules,
forward and backward, with torch's shapes and values: an empty output, zero-sized input
gradients, and the weight and bias gradients that a sum over no samples gives (zeros). A mean
over an empty output is NaN, as in torch. Then the other zero sizes (channels, pixels), accepted
or refused as torch does."""
import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import nn, Tensor, tensor

from helpers import torch_parity

rng = np.random.default_rng(0)
EMPTY = np.zeros((0, 3, 6, 6))
WEIGHT = rng.standard_normal((4, 3, 3, 3))
BIAS = rng.standard_normal(4)
DEPTHWISE = rng.standard_normal((6, 1, 3, 2))
LINEAR = rng.standard_normal((2, 5))


def first(result):
    """The output of an op that may also return its indices."""
    return result[0] if isinstance(result, tuple) else result


# name -> (a call on either framework's functional module F, its arrays: the empty batch first)
CASES = {
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b, padding=1), (EMPTY, WEIGHT, BIAS)),
    "conv2d depthwise": (lambda F, x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), groups=3),
                         (EMPTY, DEPTHWISE)),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 2), (EMPTY,)),
    "max_pool2d padded": (lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (EMPTY,)),
    "max_pool2d indices": (lambda F, x: first(F.max_pool2d(x, (2, 3), return_indices=True)),
                           (EMPTY,)),
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (EMPTY,)),
    "adaptive_avg_pool2d tiling": (lambda F, x: F.adaptive_avg_pool2d(x, 3), (EMPTY,)),
    "adaptive_avg_pool2d": (lambda F, x: F.adaptive_avg_pool2d(x, (4, 5)), (EMPTY,)),
    "adaptive_max_pool2d tiling": (lambda F, x: F.adaptive_max_pool2d(x, 2), (EMPTY,)),
    "adaptive_max_pool2d": (lambda F, x: first(F.adaptive_max_pool2d(x, 4, return_indices=True)),
                            (EMPTY,)),
    "unfold": (lambda F, x: F.unfold(x, (2, 3), padding=1, stride=2), (EMPTY,)),
    "fold": (lambda F, cols: F.fold(cols, (6, 6), 2), (np.zeros((0, 12, 25)),)),
    "linear": (lambda F, x, w, b: F.linear(x, w, b), (np.zeros((0, 5)), LINEAR, BIAS[:2])),
    "linear 3-D": (lambda F, x, w: F.linear(x, w), (np.zeros((2, 0, 5)), LINEAR)),
}


def on(F_ours, F_theirs, call):
    """``call`` as a function of tensors only, for our framework and for torch."""
    return (lambda *tensors: call(F_ours, *tensors)), (lambda *tensors: call(F_theirs, *tensors))


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_empty_batch_flows_forward_and_back_as_in_torch(torch, name):
    call, arrays = CASES[name]
    ours, theirs = on(F, torch.nn.functional, call)
    out, _, leaves, _ = torch_parity(torch, ours, *arrays, torch_fn=theirs)
    assert out.numpy().size == 0
    assert leaves[0].grad is not None and leaves[0].grad.shape == arrays[0].shape
    for leaf in leaves[1:]:  # weights and biases: a sum over no samples
        np.testing.assert_array_equal(leaf.grad.numpy(), np.zeros(leaf.shape))


@pytest.mark.parametrize("name", ["conv2d", "max_pool2d indices", "linear"])
def test_the_mean_loss_of_an_empty_batch_is_nan_and_its_gradients_are_empty_or_zero(torch, name):
    call, arrays = CASES[name]
    leaves = [tensor(a, requires_grad=True) for a in arrays]
    torch_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    loss, torch_loss = call(F, *leaves).mean(), call(torch.nn.functional, *torch_leaves).mean()
    assert np.isnan(loss.item()) and torch.isnan(torch_loss)
    loss.backward()
    torch_loss.backward()
    for leaf, torch_leaf in zip(leaves, torch_leaves):
        np.testing.assert_array_equal(leaf.grad.numpy(), torch_leaf.grad.numpy())


def test_unbatched_empty_channels_in_max_unpool2d_are_an_empty_output(torch):
    x = np.zeros((0, 3, 3))
    out = F.max_unpool2d(tensor(x), tensor(np.zeros(x.shape, np.int64)), 2)
    assert out.shape == tuple(torch.nn.functional.max_unpool2d(
        torch.tensor(x), torch.zeros(x.shape, dtype=torch.int64), 2).shape) == (0, 6, 6)


def test_max_unpool2d_of_an_empty_batch(torch):
    x = tensor(EMPTY, requires_grad=True)
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    out = F.max_unpool2d(pooled, indices, 2)
    t_pooled, t_indices = torch.nn.functional.max_pool2d(torch.tensor(EMPTY), 2, return_indices=True)
    assert out.shape == tuple(torch.nn.functional.max_unpool2d(t_pooled, t_indices, 2).shape)
    out.sum().backward()
    assert x.grad.shape == EMPTY.shape


# ---- modules ------------------------------------------------------------------------------------
def test_modules_take_an_empty_batch_forward_and_back(torch):
    """A LeNet-like stack: conv, pool, flatten, linear, on an empty batch. The parameters'
    gradients are zeros (a sum over no samples), as torch's."""
    def network(nn_, seed_weights):  # (the weights: tensors of that framework)
        conv, linear = nn_.Conv2d(3, 4, 3, padding=1), nn_.Linear(4 * 3 * 3, 5)
        for parameter, value in zip([conv.weight, conv.bias, linear.weight, linear.bias],
                                    seed_weights):
            parameter.data[...] = value
        return [conv, nn_.MaxPool2d(2), nn_.Flatten(), linear]

    values = [rng.standard_normal(shape).astype(np.float32)
              for shape in [(4, 3, 3, 3), (4,), (5, 36), (5,)]]
    ours, theirs = network(nn, [tensor(v) for v in values]), network(torch.nn, [torch.tensor(v) for v in values])
    x, tx = tensor(EMPTY.astype(np.float32), requires_grad=True), \
        torch.tensor(EMPTY.astype(np.float32), requires_grad=True)
    for layer, torch_layer in zip(ours, theirs):
        x, tx = layer(x), torch_layer(tx)
        assert x.shape == tuple(tx.shape)
    loss, torch_loss = x.sum(), tx.sum()
    assert loss.item() == torch_loss.item() == 0.0
    loss.backward()
    torch_loss.backward()
    for layer, torch_layer in zip(ours, theirs):
        for (name, p), tp in zip(layer.named_parameters(), torch_layer.parameters()):
            np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy(), err_msg=name)
            assert not p.grad.numpy().any()


# ---- other zero sizes ---------------------------------------------------------------------------
ZERO_SIZES = [(2, 0, 6, 6), (2, 3, 0, 6), (2, 3, 6, 0), (0, 0, 6, 6), (0, 6, 6), (3, 0, 6)]
ZERO_SIZE_CALLS = {  # name -> a call on F, an input and int64 indices of its shape
    "max_pool2d": lambda F, x, indices: F.max_pool2d(x, 2),
    "avg_pool2d": lambda F, x, indices: F.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda F, x, indices: F.adaptive_avg_pool2d(x, 3),
    "adaptive_max_pool2d": lambda F, x, indices: F.adaptive_max_pool2d(x, 3),
    "unfold": lambda F, x, indices: F.unfold(x, 2),
    "max_unpool2d": lambda F, x, indices: F.max_unpool2d(x, indices, 2),
}
# torch refuses zero channels in adaptive_max_pool2d for a batch but not for one image: we
# refuse both (tests/test_bad_inputs_conv_pool.py's ALLOWED says so too)
REFUSED_HERE = {("adaptive_max_pool2d", (0, 6, 6))}


@pytest.mark.parametrize("shape", ZERO_SIZES, ids=str)
@pytest.mark.parametrize("name", sorted(ZERO_SIZE_CALLS))
def test_zero_channels_or_pixels_accepted_or_refused_as_torch(torch, name, shape):
    call = ZERO_SIZE_CALLS[name]
    x, indices = np.zeros(shape, np.float32), np.zeros(shape, np.int64)
    try:
        expected = first(call(torch.nn.functional, torch.tensor(x), torch.tensor(indices))).shape
    except RuntimeError:
        expected = None
    if expected is None or (name, shape) in REFUSED_HERE:
        with pytest.raises(RuntimeError, match=name):
            call(F, tensor(x), tensor(indices))
    else:
        assert first(call(F, tensor(x), tensor(indices))).shape == tuple(expected)


def test_conv2d_with_zero_channels_is_the_bias_alone(torch):
    """No input channel: every output is the bias (a sum over no terms, plus b), and the weight
    gradient is empty. torch returns a (2, 0, 4, 4) tensor here instead, dropping its 4 filters
    (pytorch/pytorch#56998: empty channels are not supported there yet); we give the answer
    the definition gives."""
    x, w = tensor(np.zeros((2, 0, 6, 6)), requires_grad=True), \
        tensor(np.zeros((4, 0, 3, 3)), requires_grad=True)
    b = tensor(BIAS, requires_grad=True)
    out = F.conv2d(x, w, b)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(BIAS[:, None, None], (2, 4, 4, 4)))
    out.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 2 * 4 * 4.0))


def test_conv2d_refuses_an_input_smaller_than_its_kernel_even_when_empty(torch):
    x = np.zeros((2, 3, 0, 6))
    with pytest.raises(RuntimeError):
        torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(WEIGHT))
    with pytest.raises(RuntimeError, match="conv2d: kernel 3 .* larger than the padded input"):
        F.conv2d(tensor(x), tensor(WEIGHT))
