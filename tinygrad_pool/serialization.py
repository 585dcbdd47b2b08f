"""Checkpoints as NumPy ``.npz`` files: ``save(model.state_dict(), path)``, ``load(path)``.

Unlike ``torch.load`` (a pickle), loading never executes code: arrays are read with
``allow_pickle=False``, so a file that needs pickle — a pickled object, or an npz holding an
object array — is refused with a ValueError instead of being run.
"""
import os
import struct
import tempfile
import zipfile
import zlib

import numpy as np
from numpy.lib.npyio import NpzFile

from .tensor import Tensor


def save(state_dict, path) -> None:
    """Write a mapping of name -> array (or Tensor) to ``path`` as an uncompressed ``.npz``.

    The file is written exactly at ``path`` (no ``.npz`` is appended) and atomically: a crash
    mid-write leaves any previous checkpoint at ``path`` intact.
    """
    if not hasattr(state_dict, "items"):
        raise TypeError(f"save: expected a mapping of name -> array (e.g. model.state_dict()), "
                        f"got {type(state_dict).__name__}")
    arrays = {}
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"save: keys must be strings, got {name!r}")
        array = np.asarray(value.data if isinstance(value, Tensor) else value)
        if array.dtype.kind not in "biufc":
            raise TypeError(f"save: {name!r} has dtype {array.dtype}; only numeric arrays can be "
                            f"saved (object arrays would need pickle to load)")
        arrays[name] = array
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez(file, **arrays)  # a file object: np.savez would append .npz to a name
        # mkstemp creates the file private (0600); give it the permissions open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def load(path) -> dict:
    """Read a checkpoint written by ``save``: a dict of name -> NumPy array, in saved order.

    Raises FileNotFoundError if there is no file, and ValueError naming the path if it is not
    a readable ``.npz`` of numeric arrays (a text file, a pickle, a truncated or corrupt archive,
    an object array).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load: no checkpoint file at {path!r}")
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, NpzFile):
            raise ValueError("it holds a single .npy array, not an .npz archive of named arrays")
        with archive:
            arrays = {name: archive[name] for name in archive.files}
        for name, array in arrays.items():
            # NpzFile hands back raw bytes for a member that is not an .npy array.
            if not isinstance(array, np.ndarray) or array.dtype.kind not in "biufc":
                raise ValueError(f"member {name!r} is not a numeric .npy array")
        return arrays
    except (ValueError, OSError, EOFError, KeyError, OverflowError, struct.error, zlib.error,
            zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
        # np.load refuses pickles (and object arrays) with ValueError; damaged archives surface
        # as whichever error zipfile, zlib or the .npy header parser hits first (found by
        # flipping and truncating bytes of real checkpoints): one message for all of them.
        raise ValueError(f"load: {path!r} is not a valid tinygrad_pool checkpoint (.npz of numeric "
                         f"arrays, no pickle): {error}") from error
