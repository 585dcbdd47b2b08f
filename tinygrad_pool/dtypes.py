"""PyTorch's dtype names, as the NumPy dtypes that hold the data.

``tinygrad_pool.float32`` *is* ``np.dtype("float32")``, so ``x.dtype == tinygrad_pool.float32``
and ``x.to(tinygrad_pool.long)`` read as in torch, and a NumPy dtype works wherever a dtype is
expected. (What differs: ``print(x.dtype)`` shows ``float32``, not ``torch.float32``.)

New floating tensors default to float32, as in torch: Python floats, ``zeros(3)``,
``rand(2, 2)``. Data that already has a dtype (a NumPy array, a Tensor) keeps it.
"""
import builtins

import numpy as np

float16 = half = np.dtype("float16")
float32 = float = np.dtype("float32")  # noqa: A001  (torch's names, on purpose)
float64 = double = np.dtype("float64")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = short = np.dtype("int16")
int32 = int = np.dtype("int32")  # noqa: A001
int64 = long = np.dtype("int64")
bool = np.dtype("bool")  # noqa: A001

DTYPES = {name: value for name, value in dict(globals()).items()
          if isinstance(value, np.dtype)}

_default = [float32]


def get_default_dtype() -> np.dtype:
    """The dtype of new floating tensors made from Python numbers (torch's default: float32)."""
    return _default[0]


def set_default_dtype(dtype) -> None:
    dtype = as_dtype("set_default_dtype", dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {dtype}")
    _default[0] = dtype


def or_default(op: str, dtype) -> np.dtype:
    """A ``dtype=`` argument where None means the default floating dtype (a factory's, a
    layer's, torch's legacy ``Tensor``)."""
    return _default[0] if dtype is None else as_dtype(op, dtype)


def as_dtype(op: str, dtype) -> np.dtype:
    """A dtype argument as a NumPy dtype. Python's ``float``, ``int`` and ``bool`` mean what they
    do in torch (float64, int64, bool); anything that is not a supported dtype is refused."""
    if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        return dtype
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    try:
        result = None if dtype is None else np.dtype(dtype)
    except (TypeError, ValueError):  # not a dtype at all (np.dtype("foo"), np.dtype(3))
        result = None
    if result is None or result.kind not in "fiub":
        raise TypeError(f"{op}: dtype must be one of tinygrad_pool's dtypes "
                        f"({', '.join(sorted(DTYPES))}), got {dtype!r}")
    return result


_PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool}


_CASTS = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "int64": ".long()",
          "int32": ".int()", "bool": ".bool()"}


def cast_spelling(dtype) -> str:
    """torch's spelling of a conversion to ``dtype``: ".float()", ".double()", ".to(torch.uint8)"."""
    dtype = np.dtype(dtype)
    return _CASTS.get(dtype.name, f".to(torch.{dtype.name})")


# ---- torch's legacy tensor types: their names (creation.py makes the types themselves) ----------
LEGACY_NAMES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16,
                "LongTensor": int64, "IntTensor": int32, "ShortTensor": int16, "CharTensor": int8,
                "ByteTensor": uint8, "BoolTensor": bool}
_LEGACY_OF = {dtype: name for name, dtype in LEGACY_NAMES.items()}


def legacy_type_name(dtype) -> str:
    """torch's name of a CPU tensor's type: 'torch.FloatTensor' for float32 (``x.type()``)."""
    return f"torch.{_LEGACY_OF[np.dtype(dtype)]}"


def legacy_type_dtype(op: str, value) -> np.dtype:
    """The dtype ``x.type(value)`` converts to, as torch reads it: a dtype, or a legacy type's
    name (``'torch.LongTensor'``). Another string, or a type (Python's ``int``), is torch's
    ValueError; any other object its TypeError. (``Tensor`` itself, the default type, the
    caller reads first: this module is below the engine.)"""
    if isinstance(value, np.dtype):
        return as_dtype(op, value)
    if isinstance(value, type) and value.__name__ in LEGACY_NAMES and \
            getattr(value, "dtype", None) is LEGACY_NAMES[value.__name__]:
        return value.dtype  # a legacy type (creation.py's), read by what it holds
    if isinstance(value, str):
        if value.startswith("torch.cuda."):
            raise RuntimeError(f"{op}: {value!r} is a CUDA type, and tinygrad_pool runs on the "
                               f"CPU only (see docs/porting.md)")
        if value.startswith("torch.") and value[len("torch."):] in LEGACY_NAMES:
            return LEGACY_NAMES[value[len("torch."):]]
        raise ValueError(f"{op}: invalid type: {value!r} (expected a name such as "
                         f"'torch.LongTensor', or a dtype such as torch.int64)")
    if isinstance(value, type):
        raise ValueError(f"{op}: invalid type: {value.__name__!r} (expected a dtype such as "
                         f"torch.int64 or a legacy type such as torch.LongTensor)")
    raise TypeError(f"{op}: dtype must be a type, str, or dtype object, got "
                    f"{type(value).__name__} {value!r}")
