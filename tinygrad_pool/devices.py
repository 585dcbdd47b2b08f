"""Devices, as torch names them on a machine with no accelerator: everything here lives on the CPU.

``device("cuda")`` and ``device("mps:0")`` construct, compare and print as torch's do, so that a
script's device lines (``device = torch.device("cuda" if use_cuda else "cpu")``) run unchanged;
what fails is putting a tensor on a device that is not here, with the error torch gives on a
CPU-only machine (``check_device``).
"""
import builtins

import numpy as np

# The device types torch's parser knows, in the order its error message lists them.
TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
         "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """``device(type, index=None)`` or ``device("type:index")``, as ``torch.device``: ``type`` and
    ``index`` (None when not given); equal to another device of the same type and index (never
    to a string, as in torch); printed as ``cuda:1``, shown as ``device(type='cuda', index=1)``."""

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002  (torch's argument name)
        if isinstance(type, device):
            if index is not None:
                raise TypeError(f"device: index must not be given with a device ({type!r})")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, (builtins.int, np.integer)) and not isinstance(type, (builtins.bool, np.bool_)):
            # torch reads a bare index as the accelerator's device
            raise RuntimeError(f"device: device({type}) names an accelerator device (an index "
                               f"alone), and none is available: Cannot access accelerator "
                               f"device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device: expected a str such as 'cpu' or 'cuda:0' (or a device), "
                            f"got {builtins.type(type).__name__} ({type!r})")
        name, colon, number = type.partition(":")
        if name not in TYPES:
            raise RuntimeError(f"device: Expected one of {', '.join(TYPES)} device type at start "
                               f"of device string: {type}")
        if colon:
            if index is not None:
                raise RuntimeError(f"device: type (string) must not include an index because "
                                   f"index was passed explicitly: {type}")
            if not number.isdigit() or (len(number) > 1 and number[0] == "0"):
                raise RuntimeError(f"device: Invalid device string: {type!r}")
            index = builtins.int(number)
        elif index is not None:
            if isinstance(index, (builtins.bool, np.bool_)) or not isinstance(
                    index, (builtins.int, np.integer)):
                raise TypeError(f"device: index must be an int, got {builtins.type(index).__name__}"
                                f" ({index!r})")
            if index < 0:
                raise RuntimeError(f"device: Device index must not be negative, got {index}")
            index = builtins.int(index)
        self._type, self._index = name, index

    type = property(lambda self: self._type)
    index = property(lambda self: self._index)

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __repr__(self) -> str:
        index = "" if self._index is None else f", index={self._index}"
        return f"device(type='{self._type}'{index})"

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __reduce__(self):
        return device, (self._type, self._index)

    # ``with torch.device("cpu"):`` makes that the default device of the factories inside; the
    # CPU is the only one here, so the block only has to check that the device is available.
    def __enter__(self):
        check_device("device", self)
        return self

    def __exit__(self, *exc) -> None:
        return None


CPU = device("cpu")

# What torch's CPU-only build raises when a tensor is put on a device it was not built for.
_MISSING = {
    "cuda": (AssertionError, "Torch not compiled with CUDA enabled"),
    "xpu": (AssertionError, "Torch not compiled with XPU enabled"),
    "mps": (RuntimeError, "PyTorch is not linked with support for mps devices"),
}


def missing(op: str, where) -> Exception:
    """The error for a tensor asked to live on ``where``, a device that is not here."""
    kind, reason = _MISSING.get(where.type, (RuntimeError, f"{where.type} devices are not "
                                                          f"available"))
    return kind(f"{op}: device {str(where)!r} is not available: {reason} (tinygrad_pool runs on "
                f"the CPU only; see docs/porting.md)")


def as_device(op: str, value, note: str = "") -> device:
    """A ``device=`` argument (a device, a str such as "cpu" or "cuda:0", or an index) as a
    device; a value that names no device is torch's TypeError."""
    if isinstance(value, device):
        return value
    if isinstance(value, (builtins.bool, np.bool_)) or not isinstance(
            value, (str, builtins.int, np.integer)):
        raise TypeError(f"{op}: device must be a str such as 'cpu' (or a torch.device), got "
                        f"{type(value).__name__} ({value!r}){note}")
    try:
        return device(value)
    except (RuntimeError, TypeError) as error:
        raise type(error)(f"{op}: {str(error).removeprefix('device: ')}{note}") from None


def check_device(op: str, value, note: str = "") -> None:
    """``device=`` as torch takes it: None or a CPU device passes; any other device is not here
    (torch's error for it, see ``missing``)."""
    if value is None or value is CPU:
        return
    where = as_device(op, value, note)
    if where.type != "cpu":
        raise missing(op, where)
