"""The other dropouts, on dropout.py's machinery (its Dropout node, its checks and its
``_dropout``): channel dropout of sequences and volumes (dropout1d, dropout3d), and SELU's alpha
dropout of elements or channels (alpha_dropout, feature_alpha_dropout), whose dropped elements
become SELU's saturation value and whose output keeps a standard normal input's mean and
variance. PyTorch's rank rules, warnings and edge cases; the masks come from ``generator``, else
the package's default generator.
"""
from ..engine import Tensor
from ..args import tensor_arg, warn
from .dropout import Dropout, _check_p, _dropout

ALPHA = 1.7580993408473766  # SELU's α·λ: SELU's output as x → -∞, where dropout sets its inputs


class AlphaDropout(Dropout):
    """y = a · (x · mask + α · (mask - 1)) + α·a·p,  a = ((α²p + 1)(1 - p))^(-1/2),
    mask ~ Bernoulli(1 - p);  ∂L/∂x = g · a · mask

    A dropped element becomes -α·a·(1 - p); a and the shift restore zero mean and unit variance
    for a standard normal input, as torch's. The mask is saved as ``mask``; backward is
    Dropout's, with the scale a.
    """

    def forward(ctx, x, p, mask_shape, generator):
        mask = generator.random(mask_shape) < 1 - p
        ctx.save_for_backward(mask=mask)
        a = 1 / ((ALPHA * ALPHA * p + 1) * (1 - p)) ** 0.5
        # in the input's dtype, in torch's order: x · (mask · a) + ((mask - 1) · α·a + α·a·p)
        ctx.scale = x.dtype.type(a)
        shift = (mask - x.dtype.type(1)) * x.dtype.type(ALPHA * a) + x.dtype.type(ALPHA * a * p)
        return x * (mask * ctx.scale) + shift


def dropout1d(input, p=0.5, training=True, inplace=False, *, generator=None) -> Tensor:
    """Zero each whole channel of an (N, C, L) input, or of one (C, L) sample, with probability
    p, and scale the rest by 1 / (1 - p) (training only); other ranks are torch's RuntimeError."""
    op = "dropout1d"
    p = _check_p(op, p)
    input = tensor_arg(op, "input", input)
    if input.ndim not in (2, 3):  # (checked in eval mode too, as torch's)
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout(op, input, p, training, inplace, input.ndim - 1, generator)


def dropout3d(input, p=0.5, training=True, inplace=False, *, generator=None) -> Tensor:
    """Zero each whole channel of an (N, C, D, H, W) input, or of one (C, D, H, W) sample, with
    probability p, and scale the rest by 1 / (1 - p) (training only). Like PyTorch, any other
    rank warns (deprecated) and is taken as one unbatched sample, its channels on axis 0."""
    op = "dropout3d"
    p = _check_p(op, p)
    input = tensor_arg(op, "input", input)
    if input.ndim not in (4, 5):
        warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated "
             "and will result in an error in a future release. To retain the behavior "
             "and silence this warning, please use dropout instead. Note that dropout3d "
             "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
             "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).")
    return _dropout(op, input, p, training, inplace, 2 if input.ndim == 5 else 1, generator)


def alpha_dropout(input, p=0.5, training=False, inplace=False, *, generator=None) -> Tensor:
    """Set each element to SELU's saturation value with probability p and rescale everything so
    that a standard normal input keeps zero mean and unit variance (training only; torch's
    default is ``training=False``)."""
    op = "alpha_dropout"
    p = _check_p(op, p)
    input = tensor_arg(op, "input", input)
    return _dropout(op, input, p, training, inplace, 0, generator, AlphaDropout)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False, *,
                          generator=None) -> Tensor:
    """Alpha dropout of whole channels: one draw per (sample, channel) of an (N, C, ...) input
    (training only; torch's default is ``training=False``)."""
    op = "feature_alpha_dropout"
    p = _check_p(op, p)
    input = tensor_arg(op, "input", input)
    return _dropout(op, input, p, training, inplace, 2, generator, AlphaDropout)
