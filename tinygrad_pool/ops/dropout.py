"""Dropout: during training, zero each element (dropout) or each whole channel (dropout2d) with
probability p, and scale what is kept by 1 / (1 - p) so that the expected value is unchanged.

As in PyTorch: p = 0, ``training=False`` or an empty input return the input itself; p = 1 gives
zeros (the input times 0, so a NaN stays NaN); ``inplace=True`` writes the result into the input.
The mask is drawn from ``generator`` (a NumPy Generator), else the package's default generator
(``tinygrad_pool.manual_seed`` makes it repeatable).
"""

from ..random import default_generator
from ..engine import Node, Tensor
from ..args import check_flag, check_number, tensor_arg, warn


class Dropout(Node):
    """y = x · mask / (1 - p), mask ~ Bernoulli(1 - p);  ∂L/∂x = g · mask / (1 - p)

    The mask is drawn once, in forward, with ``mask_shape`` (the input's shape, or (N, C, 1, …)
    for whole channels, which then broadcasts), and saved as ``mask`` (as torch saves it):
    backward lets the gradient through exactly where forward let the input through.
    """

    def forward(ctx, x, p, mask_shape, generator):
        # Bernoulli(1 - p): a uniform draw in [0, 1) falls below 1 - p with probability 1 - p
        # (always for p = 0, never for p = 1).
        mask = generator.random(mask_shape) < 1 - p
        ctx.save_for_backward(mask=mask)
        # The kept elements' factor, a number computed in the input's dtype as torch does
        # (1 / (1 - p)); p = 1 keeps nothing, and multiplies by 0 rather than by 0 · ∞.
        ctx.scale = x.dtype.type(0) if p == 1 else x.dtype.type(1) / x.dtype.type(1 - p)
        return x * (mask * ctx.scale)

    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * (mask * ctx.scale)


def _check_p(op: str, p) -> float:
    p = check_number(op, "p", p)  # (a bool is a number to torch: p=True drops everything)
    if p != p:  # NaN passes torch's range check in Python; its kernel refuses it: RuntimeError
        raise RuntimeError(f"{op}: argument p: dropout probability has to be between 0 and 1, "
                           f"but got {p}")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"{op}: argument p: dropout probability has to be between 0 and 1, "
                         f"but got {p}")
    return p


def _dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool, channel_axes: int,
             generator, node=None) -> Tensor:
    training, inplace = check_flag(op, "training", training), check_flag(op, "inplace", inplace)
    if p == 0 or not training or input.numel() == 0:
        return input  # PyTorch returns the input tensor itself
    if input.dtype.kind != "f":
        raise RuntimeError(f"{op}: input must be a floating-point tensor in training mode (the "
                           f"kept elements are scaled by 1 / (1 - p)), got dtype {input.dtype}; "
                           f"convert it with input.float()")
    mask_shape = input.shape
    if channel_axes:  # 2: a batch (N, C, ...); 1: one sample (C, ...)
        if input.ndim < channel_axes:
            raise RuntimeError(f"{op}: feature dropout requires at least 2 dimensions in the "
                               f"input (N, C, ...), got shape {input.shape}")
        # One draw per channel, broadcast over the rest: whole channels kept or zeroed.
        mask_shape = input.shape[:channel_axes] + (1,) * (input.ndim - channel_axes)
    node = Dropout if node is None or p == 1 else node  # (p = 1: zeros, alpha dropout's too)
    generator = default_generator() if generator is None else generator
    if inplace:
        return input._inplace(node, p=p, mask_shape=mask_shape, generator=generator)
    return node.apply(input, p=p, mask_shape=mask_shape, generator=generator)


def dropout(input, p=0.5, training=True, inplace=False, *, generator=None) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    p = _check_p("dropout", p)
    input = tensor_arg("dropout", "input", input)
    return _dropout("dropout", input, p, training, inplace, 0, generator)


def dropout2d(input, p=0.5, training=True, inplace=False, *, generator=None) -> Tensor:
    """Zero each whole channel of an (N, C, H, W) input with probability p, and scale the rest
    by 1 / (1 - p) (training only). Like PyTorch, a 3-D input is taken as (N, C, L) — channel
    dropout over its last axis — with PyTorch's warning, and other ranks are deprecated."""
    op = "dropout2d"
    p = _check_p(op, p)
    input = tensor_arg(op, "input", input)
    if input.ndim not in (3, 4):
        warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
    if input.ndim == 3:
        warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.")
    return _dropout(op, input, p, training, inplace, 2, generator)
