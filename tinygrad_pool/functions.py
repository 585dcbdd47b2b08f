"""torch's module-level functions — ``torch.exp(x)``, ``torch.cat([a, b])``, ``torch.where(c, a,
b)`` — each one the Tensor method or the op of the same name (nothing is computed here).

``import tinygrad_pool as torch`` then reads like torch: what a function accepts, returns and
raises is what the method does.
"""
import numpy as np

from .ops import activation as _activation, bitwise as _bitwise, division as _division
from .ops import elementwise, join
from .ops import movement as _movement
from .ops import matmul as matmul_ops
from .ops import pool as _pool, pool3d as _pool3d, select as _select
from .ops import math_functions as _math
from .ops.conv import conv1d, conv_transpose1d  # noqa: F401  (torch.conv1d is F.conv1d)
from .ops.conv3d import conv3d, conv_transpose3d  # noqa: F401
from .args import tensor_arg
from .engine import OMITTED, Tensor, numpy_spellings


def _input(op: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(value).__name__}")
    return value


def _unary(name: str):
    def function(input, *args, **kwargs):
        return getattr(_input(name, input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``, as ``torch.{name}``."
    return function


exp, log, sqrt, abs, sigmoid, tanh, relu = map(_unary, ("exp", "log", "sqrt", "abs", "sigmoid",
                                                        "tanh", "relu"))
log1p, rsqrt, sin, cos, sign, floor, ceil, round = map(
    _unary, ("log1p", "rsqrt", "sin", "cos", "sign", "floor", "ceil", "round"))
softmax, log_softmax, clamp, clip = map(_unary, ("softmax", "log_softmax", "clamp", "clamp"))
sum, mean, prod, std, var, norm, logsumexp, cumsum = map(
    _unary, ("sum", "mean", "prod", "std", "var", "norm", "logsumexp", "cumsum"))
amax, amin, argmax, argmin, all, any = map(_unary, ("amax", "amin", "argmax", "argmin", "all",
                                                     "any"))
flatten, reshape, squeeze, unsqueeze, transpose, permute, roll = map(
    _unary, ("flatten", "reshape", "squeeze", "unsqueeze", "transpose", "permute", "roll"))
gather, index_select, masked_fill, narrow, chunk, t = map(
    _unary, ("gather", "index_select", "masked_fill", "narrow", "chunk", "t"))
swapaxes, swapdims, ravel, unbind, tensor_split, hsplit, vsplit, dsplit = map(
    _unary, ("swapaxes", "swapdims", "ravel", "unbind", "tensor_split", "hsplit", "vsplit",
             "dsplit"))


def flip(input, dims) -> Tensor:
    """``input.flip(dims)``; ``dims`` a tuple or list, as torch.flip's (the method takes ints)."""
    return _input("flip", input).flip(_dims("flip", dims))


def tile(input, dims) -> Tensor:
    """``input.tile(dims)``; ``dims`` a tuple or list, as torch.tile's (the method takes ints)."""
    return _input("tile", input).tile(_dims("tile", dims))


def _dims(op: str, dims):
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    return dims
rot90, fliplr, flipud, nonzero, argwhere, count_nonzero, square_ = map(
    _unary, ("rot90", "fliplr", "flipud", "nonzero", "argwhere", "count_nonzero", "square_"))
scatter, scatter_add, take_along_dim, unflatten = map(
    _unary, ("scatter", "scatter_add", "take_along_dim", "unflatten"))
eq, ne, lt, le, gt, ge = map(_unary, ("eq", "ne", "lt", "le", "gt", "ge"))
numel, pow = map(_unary, ("numel", "pow"))
clone, detach, square, logical_not = map(_unary, ("clone", "detach", "square", "logical_not"))
clip.__name__ = clip.__qualname__ = "clip"


@numpy_spellings
def max(input, dim=OMITTED, keepdim: bool = False, *, other=None):
    """``max(input)``: the largest value; ``max(input, dim)``: (values, indices);
    ``max(input, other_tensor)`` or ``max(input, other=...)``: the elementwise maximum, as torch."""
    return _extreme("max", maximum, input, dim, keepdim, other)


@numpy_spellings
def min(input, dim=OMITTED, keepdim: bool = False, *, other=None):
    """As ``max``, for the smallest."""
    return _extreme("min", minimum, input, dim, keepdim, other)


def _extreme(name: str, elementwise, input, dim, keepdim, other):
    if other is not None:
        if dim is not OMITTED:
            raise TypeError(f"{name}(): give either dim or other (the elementwise {name}imum), "
                            f"not both")
        return elementwise(input, other)
    # (the method takes max(a, b) as the elementwise maximum itself)
    return getattr(_input(name, input), name)(dim, keepdim)


def maximum(input, other) -> Tensor:
    return elementwise.maximum(_input("maximum", input), other)


def minimum(input, other) -> Tensor:
    return elementwise.minimum(_input("minimum", input), other)


def where(condition, input=None, other=None) -> Tensor:
    if input is None and other is None:  # torch.where(condition): the indices, as nonzero
        return tuple(Tensor._make(i, None) for i in np.nonzero(
            tensor_arg("where", "condition", condition)._data))
    return elementwise.where(condition, input, other)


@numpy_spellings
def cat(tensors, dim: int = 0) -> Tensor:
    return join.cat(tensors, dim)


concat = concatenate = cat


@numpy_spellings
def stack(tensors, dim: int = 0) -> Tensor:
    return join.stack(tensors, dim)


def hstack(tensors) -> Tensor:
    """cat along dim 1 (dim 0 if the tensors are 1-d), 0-d tensors read as 1-d."""
    return join.directional_stack("hstack", tensors)


def vstack(tensors) -> Tensor:
    """cat along dim 0 of the tensors made at least 2-d (a 1-d one becomes a row)."""
    return join.directional_stack("vstack", tensors)


def row_stack(tensors) -> Tensor:
    return join.directional_stack("row_stack", tensors)


def dstack(tensors) -> Tensor:
    """cat along dim 2 of the tensors made at least 3-d."""
    return join.directional_stack("dstack", tensors)


def column_stack(tensors) -> Tensor:
    """cat along dim 1, each 0-d or 1-d tensor made a column first."""
    return join.directional_stack("column_stack", tensors)


def atleast_1d(*tensors):
    return join.atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    return join.atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    return join.atleast("atleast_3d", 3, tensors)


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """``tensor.split(...)``, as ``torch.split`` (whose arguments have these names)."""
    return _input("split", tensor).split(split_size_or_sections, dim)


def pixel_shuffle(input, upscale_factor: int) -> Tensor:
    return _movement.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:
    return _movement.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups: int) -> Tensor:
    return _movement.channel_shuffle(input, groups)


def matmul(input, other) -> Tensor:
    return matmul_ops.matmul(_input("matmul", input), tensor_arg("matmul", "other", other))


def mm(input, mat2) -> Tensor:
    """A product of two matrices (2-D only, as torch.mm)."""
    return matmul_ops.mm(_input("mm", input), mat2)


def bmm(input, mat2) -> Tensor:
    """Batched matrix products of two 3-D tensors with the same batch size (torch.bmm)."""
    return matmul_ops.bmm(_input("bmm", input), mat2)


def einsum(equation: str, *operands) -> Tensor:
    """Sums of products by subscripts, e.g. ``einsum("bij,bjk->bik", a, b)``, with torch's
    rules: ``...`` for the dims no letter names (broadcast across operands), the implicit output
    without ``->``, a letter twice in one operand for a diagonal (``"ii->i"``), and the sublist
    form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. As in torch, a dimension of size 1
    broadcasts against the same letter's size in the other operands."""
    if isinstance(equation, Tensor):  # the sublist form
        equation, operands = matmul_ops.sublist_equation((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, operand in enumerate(operands):
        if not isinstance(operand, Tensor):
            raise TypeError(f"einsum(): expected Tensor as operand {i}, got "
                            f"{type(operand).__name__}")
    if operands and operands[0].dtype == np.bool_:
        raise NotImplementedError("einsum(): operand 0 is a bool tensor: not implemented for "
                                  "'Bool'")
    for i, operand in enumerate(operands):
        if operand.dtype != operands[0].dtype:
            raise RuntimeError(f"einsum(): operand {i} has dtype {operand.dtype} but operand 0 "
                               f"has {operands[0].dtype}: the operands must have one dtype")
    inputs, output, sizes = matmul_ops.parse_einsum(equation, [o._data for o in operands])
    # Size-1 dimensions broadcast: expanded here, so that Expand's backward sums them again.
    operands = [o if o.shape == full else o.expand(*full) for o, full in
                zip(operands, (tuple(sizes[c] for c in s) for s in inputs))]
    return matmul_ops.Einsum.apply(*operands, inputs=tuple(inputs), output=output)


def _other(op: str, other) -> Tensor:
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type(other).__name__}")
    return other


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise (torch.isclose: same dtypes)."""
    return _input("isclose", input).isclose(other, rtol, atol, equal_nan)


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return _input("allclose", input).allclose(other, rtol, atol, equal_nan)


def equal(input, other) -> bool:
    """True if both have the same shape and the same values (torch.equal)."""
    return _input("equal", input).equal(_other("equal", other))


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool: return _input("is_floating_point", input).is_floating_point()
def positive(input) -> Tensor: return _input("positive", input).positive()
def broadcast_to(input, shape) -> Tensor: return _input("broadcast_to", input).broadcast_to(shape)
def select(input, dim, index) -> Tensor: return _movement.select(input, dim, index)
def take(input, index) -> Tensor: return _movement.take(input, index)
def cross(input, other, dim=None) -> Tensor: return _movement.cross(input, other, dim)


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    return _input("diff", input).diff(n, dim, prepend, append)


# ---- arithmetic with a number first, statistics, diagonals, moved dims, logaddexp
def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha · other; ``input`` may be a number when ``other`` is a tensor, as torch's."""
    if isinstance(input, Tensor):
        return input.add(other, alpha=alpha)
    return (_other("add", other).mul(alpha) if alpha != 1 else _other("add", other)).__radd__(input)


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha · other; ``input`` may be a number when ``other`` is a tensor."""
    if isinstance(input, Tensor):
        return input.sub(other, alpha=alpha)
    return (_other("sub", other).mul(alpha) if alpha != 1 else _other("sub", other)).__rsub__(input)


def mul(input, other) -> Tensor:
    """input · other; ``input`` may be a number when ``other`` is a tensor."""
    if isinstance(input, Tensor):
        return input.mul(other)
    return _other("mul", other).__rmul__(input)


subtract, multiply = sub, mul
negative = _unary("negative")


@numpy_spellings
def std_mean(input, dim=None, *, correction=1, keepdim: bool = False) -> tuple:
    """(std, mean) over ``dim`` (all dims when None), as torch.std_mean."""
    input = _input("std_mean", input)
    return (input.std(dim, keepdim=keepdim, correction=correction),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else
            _keep_all(input.mean(), input, keepdim))


@numpy_spellings
def var_mean(input, dim=None, *, correction=1, keepdim: bool = False) -> tuple:
    """(var, mean) over ``dim`` (all dims when None), as torch.var_mean."""
    input = _input("var_mean", input)
    return (input.var(dim, keepdim=keepdim, correction=correction),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else
            _keep_all(input.mean(), input, keepdim))


def _keep_all(reduced: Tensor, input: Tensor, keepdim: bool) -> Tensor:
    return reduced.reshape(*(1,) * input.ndim) if keepdim else reduced


diagonal, diag, movedim, moveaxis, logaddexp, logaddexp2 = map(
    _unary, ("diagonal", "diag", "movedim", "moveaxis", "logaddexp", "logaddexp2"))


# ---- elementwise math (ops/math_functions.py)
tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh = map(
    _unary, ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = map(
    _unary, ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"))
erf, erfc, exp2, log2, log10, expm1, reciprocal, trunc, fix, frac = map(
    _unary, ("erf", "erfc", "exp2", "log2", "log10", "expm1", "reciprocal", "trunc", "fix",
             "frac"))
atan2, arctan2, copysign, lerp, nan_to_num = map(
    _unary, ("atan2", "arctan2", "copysign", "lerp", "nan_to_num"))
isnan, isinf, isfinite, isposinf, isneginf, signbit = map(
    _unary, ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"))
erfinv, sgn, logit, hypot, sinc, deg2rad, rad2deg, fmax, fmin, heaviside, logical_xor = map(
    _unary, ("erfinv", "sgn", "logit", "hypot", "sinc", "deg2rad", "rad2deg", "fmax", "fmin",
             "heaviside", "logical_xor"))
logit_, xlogy_, sinc_, deg2rad_, rad2deg_, clip_ = map(
    _unary, ("logit_", "xlogy_", "sinc_", "deg2rad_", "rad2deg_", "clip_"))


def xlogy(input, other) -> Tensor:
    """input · log(other), 0 where input is 0; either may be a number (not both)."""
    return _math.xlogy(input, other)


def float_power(input, exponent) -> Tensor:
    """input ** exponent in float64; either may be a number (not both)."""
    return _math.float_power(input, exponent)


# ---- nansum, nanmean, trace, aminmax (ops/reduce.py); products (ops/matmul.py)
nansum, nanmean, trace, aminmax = map(_unary, ("nansum", "nanmean", "trace", "aminmax"))
dot, vdot, inner, outer, ger, mv, kron = map(
    _unary, ("dot", "vdot", "inner", "outer", "ger", "mv", "kron"))
addmm, addmv, addbmm, baddbmm, addmv_ = map(
    _unary, ("addmm", "addmv", "addbmm", "baddbmm", "addmv_"))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M)."""
    return matmul_ops.cdist(x1, x2, p, compute_mode)


# ---- rounded division, remainders, bits (ops/division.py, ops/bitwise.py)
def div(input, other, *, rounding_mode=None) -> Tensor:
    """input / other; rounded towards zero or down with rounding_mode "trunc" or "floor"."""
    return _division.div(input, other, rounding_mode=rounding_mode)


def divide(input, other, *, rounding_mode=None) -> Tensor:
    return _division.div(input, other, rounding_mode=rounding_mode, op="divide")


def true_divide(input, other) -> Tensor:
    return _division.div(input, other, op="true_divide")


def floor_divide(input, other) -> Tensor:
    return _division.floor_divide(input, other)


def remainder(input, other) -> Tensor:
    """input - ⌊input / other⌋ · other, the sign of other (Python's %)."""
    return _division.remainder(input, other)


def fmod(input, other) -> Tensor:
    """input - trunc(input / other) · other, the sign of input (C's fmod)."""
    return _division.fmod(input, other)


absolute = _unary("absolute")


def bitwise_and(input, other) -> Tensor:
    return _bitwise.bitwise("bitwise_and", input, other)


def bitwise_or(input, other) -> Tensor:
    return _bitwise.bitwise("bitwise_or", input, other)


def bitwise_xor(input, other) -> Tensor:
    return _bitwise.bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input, other) -> Tensor:
    return _bitwise.bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input, other) -> Tensor:
    return _bitwise.bitwise("bitwise_right_shift", input, other)


def bitwise_not(input) -> Tensor:
    return _bitwise.bitwise_not(input)


# ---- the activations torch has at module level
def selu(input):
    """``F.selu(input)``, as ``torch.selu`` (which has no ``inplace``)."""
    return _activation.selu(input)


def selu_(input):
    """``F.selu_(input)``: selu written into ``input``, as ``torch.selu_``."""
    return _activation.selu_(input)


def celu(input, alpha: float = 1.0):
    """``F.celu(input, alpha)``, as ``torch.celu`` (which has no ``inplace``)."""
    return _activation.celu(input, alpha)


def celu_(input, alpha: float = 1.0):
    """``F.celu_(input, alpha)``: celu written into ``input``, as ``torch.celu_``."""
    return _activation.celu_(input, alpha)


# ---- 1-D and 3-D convolution and pooling (torch's module-level names)
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``F.max_pool1d`` without ``return_indices``, as ``torch.max_pool1d``."""
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """``F.avg_pool1d``, as ``torch.avg_pool1d``."""
    return _pool.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``F.max_pool3d`` without ``return_indices``, as ``torch.max_pool3d``."""
    return _pool3d.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


# ---- order and running extremes (ops/sort.py, ops/cumulative.py)
sort, argsort, msort, topk, kthvalue, median, nanmedian = map(
    _unary, ("sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian"))
mode, quantile, nanquantile = map(_unary, ("mode", "quantile", "nanquantile"))
cumprod, cummax, cummin, logcumsumexp = map(
    _unary, ("cumprod", "cummax", "cummin", "logcumsumexp"))


# ---- triangles, masks, repeats, grids (ops/select.py)
scatter_reduce = _unary("scatter_reduce")
index_add, index_copy, index_fill, masked_scatter, addcmul, addcdiv = map(
    _unary, ("index_add", "index_copy", "index_fill", "masked_scatter", "addcmul", "addcdiv"))
unique, unique_consecutive, bincount, histc = map(
    _unary, ("unique", "unique_consecutive", "bincount", "histc"))
bernoulli = _unary("bernoulli")


def tril(input, diagonal: int = 0) -> Tensor:
    return _select.tril(input, diagonal)


def triu(input, diagonal: int = 0) -> Tensor:
    return _select.triu(input, diagonal)


def masked_select(input, mask) -> Tensor:
    return _select.masked_select(input, mask)


@numpy_spellings
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    return _select.repeat_interleave(input, repeats, dim, output_size=output_size)


def meshgrid(*tensors, indexing=None) -> tuple:
    return _select.meshgrid(*tensors, indexing=indexing)


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "np", "join", "elementwise", "matmul_ops", "check_flag", "check_number", "tensor_arg", "Tensor", "OMITTED",
    "numpy_spellings")]
