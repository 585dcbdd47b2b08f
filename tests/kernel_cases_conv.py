"""Cases for the convolution kernels fast/conv.py replaces (run by tests/test_kernels.py).

Each geometry gives a case of every kernel: conv2d_forward, conv2d_input_grad,
conv2d_weight_grad and conv2d_backward (which gradients it asks for varies). 1×1 kernels, a
7×7 one and one as large as the image; strides, asymmetric padding, padding beyond the
kernel's reach, dilation, groups; float32 and float64 (and int64 forward); an empty batch;
inputs that are views (a convolution's channel-major output, a strided slice, a transposed
weight); NaN and ±inf in x, w and G. The sizes reach each route of fast/conv.py:
im2col in one pass and in two (from a padded copy, and with the padding written into the
rows), several chunks of images, col2im in one bincount, a tap at a time and in two passes,
and ∂L/∂x (and ∂L/∂W) from the columns of G — with its fallbacks for inf and NaN.
tests/test_fast_conv.py checks that these cases take every one of those routes.
"""
import numpy as np

from tinygrad_pool.windows import conv_output_size

_rng = np.random.default_rng(32)


def _channel_major(a):
    """``a``'s values laid out as a convolution's output is: (C, N, H, W) memory seen as NCHW."""
    return np.ascontiguousarray(a.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)


def _strided(a):
    """``a``'s values as every other row and column of a larger array."""
    n, c, h, w = a.shape
    big = np.zeros((n, c, 2 * h, 2 * w), a.dtype)
    big[:, :, ::2, 1::2] = a
    return big[:, :, ::2, 1::2]


def _transposed_weight(a):
    """``a``'s values as the transpose of a (F, C, kw, kh) array."""
    return np.ascontiguousarray(a.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)


def _non_finite(a, where):
    """``a`` with NaN, inf and -inf at a few places (``where`` picks which of them)."""
    a = a.copy()
    a.reshape(-1)[[0, a.size // 2, -1][:where]] = [np.nan, np.inf, -np.inf][:where]
    return a


# (case id, N, C, F, groups, (H, W), (kh, kw), stride, (top, bottom, left, right), dilation,
#  dtype, {which array: how it is laid out or altered})
_GEOMETRIES = [
    ("1x1", 2, 3, 4, 1, (5, 6), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), np.float64, {}),
    ("3x3-pad1", 2, 3, 5, 1, (7, 7), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float32, {}),
    ("stride-uneven-pad", 2, 2, 3, 1, (9, 8), (3, 2), (2, 1), (0, 2, 1, 0), (1, 1), np.float64,
     {"x": _strided}),
    ("dilated-rect-groups2", 2, 4, 2, 2, (10, 9), (2, 3), (1, 2), (1, 1, 2, 2), (2, 1),
     np.float32, {"weight": _transposed_weight}),
    ("groups3", 3, 6, 9, 3, (8, 8), (3, 3), (1, 1), (1, 1, 1, 1), (1, 2), np.float64, {}),
    ("7x7-pad3", 2, 2, 3, 1, (9, 9), (7, 7), (1, 1), (3, 3, 3, 3), (1, 1), np.float64, {}),
    ("kernel-the-size-of-the-image", 1, 2, 2, 1, (5, 4), (5, 4), (1, 1), (0, 0, 0, 0), (1, 1),
     np.float64, {}),
    ("padding-beyond-reach", 2, 2, 3, 1, (6, 6), (3, 3), (1, 1), (3, 0, 0, 3), (1, 1),
     np.float64, {}),
    ("same-odd-padding", 2, 3, 3, 1, (6, 5), (2, 2), (1, 1), (0, 1, 0, 1), (1, 1), np.float32,
     {"grad": _channel_major}),
    ("empty-batch", 0, 3, 4, 1, (5, 5), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float64, {}),
    ("two-passes", 4, 8, 24, 1, (20, 20), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float64,
     {"x": _channel_major}),
    ("two-passes-padding-in-the-rows", 4, 8, 24, 1, (28, 28), (3, 3), (1, 1), (2, 1, 1, 2),
     (1, 1), np.float64, {"x": _channel_major, "grad": _channel_major}),
    ("taps-stride2", 4, 8, 16, 2, (20, 20), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), np.float32,
     {}),
    ("correlation", 4, 16, 8, 1, (16, 16), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float32,
     {"x": _channel_major}),
    ("correlation-dilated-groups2", 3, 8, 4, 2, (12, 11), (3, 2), (1, 1), (2, 1, 0, 1), (2, 1),
     np.float64, {}),
    ("chunks", 9, 8, 24, 1, (32, 32), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float64, {}),
    ("chunks-correlation", 9, 8, 8, 1, (32, 32), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1),
     np.float64, {}),
    ("nan-inf-small", 2, 3, 4, 1, (6, 6), (3, 3), (2, 1), (1, 1, 1, 1), (1, 1), np.float64,
     {"x": lambda a: _non_finite(a, 3), "grad": lambda a: _non_finite(a, 2)}),
    ("nan-inf-two-passes", 4, 8, 24, 1, (20, 20), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1),
     np.float32, {"x": lambda a: _non_finite(a, 3), "weight": lambda a: _non_finite(a, 1),
                  "grad": lambda a: _non_finite(a, 2)}),
    # where the correlation pays: inf in x, NaN in w, each on its own (the fallbacks)
    ("inf-in-x-correlation", 4, 16, 8, 1, (16, 16), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1),
     np.float64, {"x": lambda a: _non_finite(a[:, :, ::-1], 3)}),
    ("nan-in-w-correlation", 4, 16, 8, 1, (16, 16), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1),
     np.float64, {"weight": lambda a: _non_finite(a, 1)}),
]

# which gradients conv2d_backward is asked for, case by case in turn
_NEEDS = [(True, True), (True, False), (False, True), (True, True, True)]


def _out_hw(hw, kernel, stride, padding, dilation):
    return tuple(conv_output_size("case", size, k, s, lo, hi, d, axis) for size, k, s, lo, hi, d, axis
                 in zip(hw, kernel, stride, padding[::2], padding[1::2], dilation, ("h", "w")))


def _build(case, with_bias):
    name, n, c, f, groups, hw, kernel, stride, padding, dilation, dtype, alter = case
    out_hw = _out_hw(hw, kernel, stride, padding, dilation)
    arrays = {"x": _rng.standard_normal((n, c) + hw),
              "weight": _rng.standard_normal((f, c // groups) + kernel) / np.prod(kernel),
              "grad": _rng.standard_normal((n, f) + out_hw)}
    arrays = {k: alter.get(k, lambda a: a)(v.astype(dtype)) for k, v in arrays.items()}
    bias = _rng.standard_normal(f).astype(dtype) if with_bias else None
    geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups,
                    out_hw=out_hw)
    return arrays["x"], arrays["weight"], bias, arrays["grad"], hw, kernel, geometry


CASES = {"conv2d_forward": [], "conv2d_input_grad": [], "conv2d_weight_grad": [],
         "conv2d_backward": []}
for _k, _case in enumerate(_GEOMETRIES):
    _x, _w, _b, _g, _hw, _kernel, _geometry = _build(_case, with_bias=_k % 2 == 0)
    _name = _case[0]
    CASES["conv2d_forward"].append((_name, (_x, _w, _b), _geometry))
    CASES["conv2d_input_grad"].append((_name, (_g, _w, _hw), _geometry))
    CASES["conv2d_weight_grad"].append((_name, (_x, _g, _kernel), _geometry))
    CASES["conv2d_backward"].append((_name, (_g, _x, _w, _NEEDS[_k % len(_NEEDS)]), _geometry))
# integers convolve exactly
_ints = _rng.integers(-3, 4, (2, 3, 6, 5)), _rng.integers(-3, 4, (4, 3, 3, 3)), np.arange(4)
CASES["conv2d_forward"].append(("int64", _ints, dict(
    stride=(1, 2), padding=(1, 0, 2, 1), dilation=(1, 1), groups=1,
    out_hw=_out_hw((6, 5), (3, 3), (1, 2), (1, 0, 2, 1), (1, 1)))))
