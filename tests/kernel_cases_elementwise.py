"""Cases for the elementwise kernels fast/ replaces (tests/test_kernels.py runs them): large
arrays (the pool's and the bit trick's paths), small ones (NumPy's), layouts, inf/nan/-0."""
import numpy as np

_rng = np.random.default_rng(7)


def _values(shape, dtype, special=True):
    x = _rng.standard_normal(shape).astype(dtype)
    if special:
        flat = x.reshape(-1)
        flat[:6] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-30]
    return x


_LARGE = (64, 32, 16)  # 256 KiB in float64, 128 KiB in float32: the pool's sizes
CASES = {
    "relu": [(f"{name}-{np.dtype(dtype).name}", (make(dtype),), {})
             for dtype in (np.float32, np.float64)
             for name, make in (("small", lambda d: _values((3, 5), d)),
                                ("large", lambda d: _values(_LARGE, d)),
                                ("transposed", lambda d: _values(_LARGE, d).transpose(2, 0, 1)),
                                ("strided", lambda d: _values((128, 256), d)[:, ::2]))],
    "choose": [(f"{name}-{np.dtype(dtype).name}", args(dtype), {})
               for dtype in (np.float32, np.float64)
               for name, args in (
                   ("masked-gradient", lambda d: (_values(_LARGE, d) > 0, _values(_LARGE, d),
                                                  np.zeros((), d))),
                   ("zero-first", lambda d: (_values(_LARGE, d) > 0, np.zeros((), d),
                                             _values(_LARGE, d))),
                   ("minus-zero", lambda d: (_values(_LARGE, d) > 0, _values(_LARGE, d),
                                             np.array(-0.0, d))),
                   ("small", lambda d: (_values((4, 5), d) > 0, _values((4, 5), d),
                                        np.zeros((), d))),
                   ("broadcast", lambda d: (_values((64, 1), d) > 0, _values((64, 512), d),
                                            _values((512,), d))))],
}
