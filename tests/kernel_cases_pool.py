"""Cases for the pooling kernels fast/pool.py replaces (run by tests/test_kernels.py).

Integer-valued inputs, so that windows tie; NaN (several in one window: the last wins), -inf
and an integer type's least value (a window of them ties with its padding); overlapping
windows, padding, dilation, ceil_mode's overhang; float32, float64 and integers; and inputs
that are views (a transpose, a strided slice), not contiguous copies. The sizes reach each path
of fast/pool.py's max: small tiled inputs (``max_pool_tiles``), the general tap views, and
inputs large enough for the phase split (``PHASE_SPLIT_MIN_SIZE``).
"""
import numpy as np

from tinygrad_pool.ops.pool import max_pool_argmax
from tinygrad_pool.windows import pool_output_size

_rng = np.random.default_rng(32)


def _ties(shape, dtype):
    """Values in {-2, ..., 2}: nearly every window holds equal maxima."""
    return _rng.integers(-2, 3, shape).astype(dtype)


def _with_nan(x):
    """NaNs, two of them in one window, and a block of -inf."""
    x = x.copy()
    x[0, 0, 0, 0] = x[0, 0, 0, 1] = np.nan
    x[-1, -1, 1:3, 1:3] = np.nan
    x[0, -1, :3, :3] = -np.inf
    return x


def _out_hw(hw, kernel, stride, padding, dilation, ceil_mode=False):
    return tuple(pool_output_size("case", size, k, s, p, d, ceil_mode, axis)
                 for size, k, s, p, d, axis in zip(hw, kernel, stride, padding, dilation,
                                                   ("height", "width")))


# (case id, x, kernel, stride, padding, dilation, ceil_mode)
_GEOMETRIES = [
    ("tiles-2x2", _ties((2, 3, 8, 8), np.float32), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ("tiles-3x2-uneven", _ties((2, 2, 7, 9), np.float64), (3, 2), (3, 2), (0, 0), (1, 1), False),
    ("overlap-3x3-s2", _ties((2, 3, 9, 9), np.float32), (3, 3), (2, 2), (0, 0), (1, 1), False),
    ("overlap-3x3-s1-pad", _ties((2, 2, 6, 5), np.float64), (3, 3), (1, 1), (1, 1), (1, 1), False),
    ("dilated", _ties((2, 2, 9, 10), np.float32), (2, 3), (1, 2), (1, 1), (2, 2), False),
    ("ceil-overhang", _ties((2, 2, 9, 9), np.float64), (2, 2), (2, 2), (0, 0), (1, 1), True),
    ("ceil-pad", _ties((1, 2, 10, 7), np.float32), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ("wider-than-the-plane", _ties((2, 3, 3, 2), np.float32), (3, 3), (1, 1), (1, 1), (1, 1),
     False),
    ("nan-and-inf", _with_nan(_ties((2, 3, 8, 8), np.float64)), (3, 3), (2, 2), (1, 1), (1, 1),
     False),
    ("nan-tiles", _with_nan(_ties((2, 3, 6, 6), np.float32)), (2, 2), (2, 2), (0, 0), (1, 1),
     False),
    ("int32", _ties((2, 2, 7, 7), np.int32), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ("int64-least-value-pad", np.full((1, 2, 5, 4), np.iinfo(np.int64).min), (3, 3), (1, 1),
     (1, 1), (1, 1), False),
    ("minus-inf-pad", np.full((1, 2, 5, 4), -np.inf, np.float32), (3, 3), (1, 1), (1, 1), (1, 1),
     False),
    ("transposed-view", _ties((2, 3, 9, 8), np.float32).transpose(0, 1, 3, 2), (3, 3), (2, 2),
     (1, 1), (1, 1), False),
    ("strided-view", _ties((2, 3, 12, 16), np.float64)[:, :, ::2, 1::2], (2, 3), (2, 1), (1, 1),
     (1, 1), False),
    ("empty-batch", np.zeros((0, 3, 6, 6), np.float32), (2, 2), (2, 2), (0, 0), (1, 1), False),
    # large enough for the phase split (stride > 1, no dilation, sizes divisible by the stride)
    ("phase-split-2x2", _with_nan(_ties((4, 8, 32, 32), np.float32)), (2, 2), (2, 2), (0, 0),
     (1, 1), False),
    ("phase-split-3x3-s2-pad", _ties((4, 8, 30, 30), np.float64), (3, 3), (2, 2), (1, 1), (1, 1),
     False),
    ("phase-split-ceil", _ties((4, 8, 33, 33), np.float32), (2, 2), (2, 2), (0, 0), (1, 1), True),
]

_MAX_POOL = []
_ROUTE = []
_SUMS = []
_SPREAD = []
for _case, _x, _k, _s, _p, _d, _ceil in _GEOMETRIES:
    _hw = _out_hw(_x.shape[2:], _k, _s, _p, _d, _ceil)
    _MAX_POOL.append((_case, (_x, _k, _s, _p, _d, _hw), {}))
    if _x.dtype.kind != "f":
        continue
    _argmax = max_pool_argmax.reference(np.ascontiguousarray(_x), _k, _s, _p, _d, _hw)[1]
    _grad = _rng.standard_normal(_x.shape[:2] + _hw).astype(_x.dtype)
    _ROUTE.append((_case, (_grad, _argmax, _x.shape), {}))
    if _d == (1, 1):  # average pooling has no dilation
        _SUMS.append((_case, (np.nan_to_num(_x, nan=0.5, neginf=-3.0), _k, _s, _p, _hw), {}))
        _SPREAD.append((_case, (_grad, _x.shape, _k, _s, _p, _hw), {}))

_ROUTE += [  # a gradient broadcast from one number (the backward of out.sum())
    ("broadcast-gradient", (np.broadcast_to(np.float32(1.5), (2, 3, 4, 4)),
                            max_pool_argmax.reference(_ties((2, 3, 9, 9), np.float32), (3, 3),
                                                      (2, 2), (0, 0), (1, 1), (4, 4))[1],
                            (2, 3, 9, 9)), {}),
    ("int64-argmax", (_rng.standard_normal((2, 2, 3, 3)),  # adaptive max pooling's indices
                      _rng.integers(0, 49, (2, 2, 3, 3)), (2, 2, 7, 7)), {}),
]
_SUMS += [
    ("int32", (_ties((2, 2, 7, 7), np.int32), (3, 3), (2, 2), (1, 1), (4, 4)), {}),
]


def _adaptive(case, x, out_hw):
    return (case, (x, out_hw), {})


_ADAPTIVE = [
    _adaptive("ties-5x7-to-3x4", _ties((2, 3, 5, 7), np.float32), (3, 4)),
    _adaptive("overlapping-7x7-to-4x5", _ties((2, 2, 7, 7), np.float64), (4, 5)),
    _adaptive("nan-and-inf", _with_nan(_ties((2, 3, 8, 8), np.float64)), (3, 5)),
    _adaptive("to-one", _ties((1, 2, 6, 5), np.float32), (1, 1)),
    _adaptive("to-zero-rows", _ties((1, 2, 6, 5), np.float32), (0, 3)),
    _adaptive("transposed-view", _ties((2, 2, 9, 6), np.float32).transpose(0, 1, 3, 2), (4, 5)),
]

CASES = {
    "max_pool_argmax": _MAX_POOL,
    "route_to_argmax": _ROUTE,
    "window_sum": _SUMS,
    "spread_over_windows": _SPREAD,
    "adaptive_max_argmax": _ADAPTIVE,
}
