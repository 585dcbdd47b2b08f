"""Checkpoints as NumPy ``.npz`` files: ``save(obj, f)`` and ``load(f)``, as ``torch.save`` /
``torch.load`` are used — for a model's ``state_dict()``, an optimizer's ``state_dict()``, or any
nesting of dicts, lists and tuples holding Tensors, NumPy arrays, numbers, strings, bools and None.

Unlike ``torch.load`` (a pickle), loading never executes code: arrays are read with
``allow_pickle=False``, so a file that needs pickle — a pickled object, or an npz holding an
object array — is refused with a ValueError instead of being run.

The file format, which ``np.load`` can read too:

- every Tensor, array and NumPy scalar is an ``.npy`` member named ``arr_0``, ``arr_1``, ... in the
  order a depth-first walk of ``obj`` meets them (an object met twice is stored once, and loads
  as one object again, as torch keeps shared tensors shared);
- one more member, ``__structure__``, holds UTF-8 JSON (as a uint8 array, so it too is plain
  numbers) describing ``obj``: Python scalars written as themselves, containers as one-key
  objects that keep what JSON would lose — ``{"dict": [[key, value], ...]}`` (so int keys stay
  ints), ``{"OrderedDict": [...]}``, ``{"list": [...]}``, ``{"tuple": [...]}`` — and leaves as
  ``{"tensor": "arr_0", "requires_grad": false}``, ``{"ndarray": "arr_1"}``,
  ``{"numpy_scalar": "arr_2"}``.

A file without ``__structure__`` is a checkpoint from before nesting was supported (a flat
mapping name -> array); it loads as before, as a dict of name -> NumPy array.

Tensors load as leaf Tensors with the ``requires_grad`` flag they were saved with (as
``torch.load`` gives; a ``state_dict``'s tensors do not require grad). Not kept, unlike a pickle:
an ``nn.Parameter`` loads as a plain Tensor (that class lives above the engine), and two different
Tensors viewing the same memory load as two copies.
"""
import io
import json
import os
import struct
import tempfile
import zipfile
import zlib
from collections import OrderedDict

import numpy as np
from numpy.lib.npyio import NpzFile

from .tensor import Tensor

STRUCTURE = "__structure__"  # never clashes with the generated array names arr_0, arr_1, ...
# The archive's comment says "written by save, with a structure member": a file whose member
# names were damaged (one flipped bit in the zip index) is then refused instead of loading as an
# old flat checkpoint with the generated names as its keys.
MARKER = b"tinygrad_pool checkpoint: nested, with a __structure__ member"
FORMAT = "tinygrad_pool checkpoint"
VERSION = 1
NUMERIC_KINDS = "biufc"  # bool, int, uint, float, complex: all that .npy stores without pickle
CONTAINER_TAGS = {"dict": dict, "OrderedDict": OrderedDict}
SAVABLE = ("Tensors, NumPy arrays and scalars, int, float, bool, str, None, and dicts (str or "
           "int keys), OrderedDicts, lists and tuples of them")


# ---- save ------------------------------------------------------------------------------------
class _Encoder:
    """Walks ``obj`` once: collects its arrays under generated names and returns the JSON-able
    description of its structure. ``where`` is the access path shown in errors, e.g.
    ``obj['state'][0]['fn']``."""

    def __init__(self):
        self.arrays = {}
        self.names = {}  # id(leaf) -> array name, so a Tensor saved twice is stored once
        self.keep_alive = []  # ids are only unique while the objects live
        self.open_containers = set()  # ids of the containers on the current path (cycles)

    def encode(self, value, where: str):
        kind = type(value)
        if value is None or kind in (bool, int, float, str):
            return value  # json writes a float's repr: every float round-trips, nan and inf too
        if isinstance(value, Tensor):
            node = {"tensor": self._store(value, value.data, where)}
            if value.requires_grad:
                node["requires_grad"] = True
            return node
        if isinstance(value, np.ndarray):
            return {"ndarray": self._store(value, value, where)}
        if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
            return {"numpy_scalar": self._store(value, np.asarray(value), where)}
        if kind in (dict, OrderedDict):
            return self._container(value, where, lambda: {kind.__name__: [
                [self._key(key, where), self.encode(item, f"{where}[{key!r}]")]
                for key, item in value.items()]})
        if kind in (list, tuple):
            return self._container(value, where, lambda: {kind.__name__: [
                self.encode(item, f"{where}[{index}]") for index, item in enumerate(value)]})
        raise TypeError(f"save: {where} is a {kind.__module__}.{kind.__qualname__}, which cannot be "
                        f"saved without pickle; can save {SAVABLE}")

    def _container(self, value, where: str, describe):
        if id(value) in self.open_containers:
            raise ValueError(f"save: {where} contains itself (a reference cycle), which this "
                             f"format cannot describe")
        self.open_containers.add(id(value))
        try:
            return describe()
        finally:
            self.open_containers.discard(id(value))

    @staticmethod
    def _key(key, where: str):
        if type(key) not in (str, int):  # bool is an int, but JSON would turn True into true
            raise TypeError(f"save: {where} has the key {key!r} of type {type(key).__name__}; "
                            f"dict keys must be str or int")
        return key

    def _store(self, leaf, array: np.ndarray, where: str) -> str:
        if id(leaf) in self.names:
            return self.names[id(leaf)]
        if array.dtype.kind not in NUMERIC_KINDS:
            raise TypeError(f"save: {where} has dtype {array.dtype}; only numeric arrays can be "
                            f"saved (object arrays would need pickle to load)")
        name = f"arr_{len(self.arrays)}"
        self.arrays[name] = array
        self.names[id(leaf)] = name
        self.keep_alive.append(leaf)
        return name


def save(obj, f) -> None:
    """Write ``obj`` (a ``state_dict``, an optimizer's ``state_dict()``, or any nesting of dicts,
    lists and tuples of Tensors, arrays, numbers, strings, bools and None) to ``f`` as an
    uncompressed ``.npz``.

    ``f`` is a path or a binary file object. A path is written exactly (no ``.npz`` is appended)
    and atomically: a crash mid-write leaves any previous checkpoint there intact. Anything that
    would need pickle raises TypeError naming where it sits, e.g. ``obj['state'][0]['fn']``, and
    nothing is written.
    """
    if not (hasattr(f, "write") or isinstance(f, (str, bytes, os.PathLike))):
        raise TypeError(f"save: f must be a path or a binary file object, got {type(f).__name__}")
    encoder = _Encoder()
    structure = json.dumps({"format": FORMAT, "version": VERSION, "object": encoder.encode(obj, "obj")})
    arrays = dict(encoder.arrays)
    arrays[STRUCTURE] = np.frombuffer(structure.encode("utf-8"), dtype=np.uint8)
    if hasattr(f, "write"):
        buffer = io.BytesIO()
        _write(buffer, arrays)
        f.write(buffer.getvalue())
        return
    path = os.fsdecode(f)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(handle, "w+b") as file:
            _write(file, arrays)
        # mkstemp creates the file private (0600); give it the permissions open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


# ---- load ------------------------------------------------------------------------------------
class _Decoder:
    """Rebuilds the saved object from its JSON description and the npz's arrays. Every node is
    checked, so a damaged or hand-made structure raises ValueError, never a raw KeyError."""

    def __init__(self, arrays: dict):
        self.arrays = arrays
        self.loaded = {}  # array name -> the object made from it (shared objects stay shared)

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or len(node) == 0:
            raise ValueError(f"malformed structure node {node!r:.80}")
        tag = next(iter(node))
        if tag in CONTAINER_TAGS and len(node) == 1:
            pairs = node[tag]
            if not all(isinstance(p, list) and len(p) == 2 and type(p[0]) in (str, int)
                       for p in self._list(pairs)):
                raise ValueError(f"malformed {tag} entries {pairs!r:.80}")
            return CONTAINER_TAGS[tag]((key, self.decode(item)) for key, item in pairs)
        if tag in ("list", "tuple") and len(node) == 1:
            items = [self.decode(item) for item in self._list(node[tag])]
            return items if tag == "list" else tuple(items)
        if tag == "tensor" and set(node) <= {"tensor", "requires_grad"}:
            return self._leaf(node["tensor"], lambda array: Tensor(
                array, requires_grad=node.get("requires_grad") is True))
        if tag == "ndarray" and len(node) == 1:
            return self._leaf(node[tag], lambda array: array)
        if tag == "numpy_scalar" and len(node) == 1:
            return self._leaf(node[tag], lambda array: array[()])
        raise ValueError(f"malformed structure node {node!r:.80}")

    @staticmethod
    def _list(value) -> list:
        if not isinstance(value, list):
            raise ValueError(f"malformed structure: expected a list, got {value!r:.80}")
        return value

    def _leaf(self, name, make):
        if name not in self.loaded:
            if not isinstance(name, str) or name not in self.arrays:
                raise ValueError(f"the structure names a missing array {name!r:.80}")
            self.loaded[name] = make(self.arrays[name])
        return self.loaded[name]


def _read_structure(arrays: dict):
    encoded = arrays.pop(STRUCTURE)
    if encoded.dtype != np.uint8 or encoded.ndim != 1:
        raise ValueError(f"member {STRUCTURE!r} is not UTF-8 text (a 1-d uint8 array)")
    text = encoded.tobytes().decode("utf-8")
    header = json.loads(text)
    if not isinstance(header, dict) or header.get("format") != FORMAT or "object" not in header:
        raise ValueError(f"member {STRUCTURE!r} is not a {FORMAT} description")
    if header.get("version") != VERSION:
        raise ValueError(f"format version {header.get('version')!r} is not supported "
                         f"(this tinygrad_pool reads version {VERSION})")
    decoder = _Decoder(arrays)
    obj = decoder.decode(header["object"])
    unused = sorted(set(arrays) - set(decoder.loaded))
    if unused:
        raise ValueError(f"member(s) {unused} are not part of the saved object")
    return obj


def _write(file, arrays: dict) -> None:
    """The arrays as an uncompressed npz in ``file`` (a seekable binary file), marked as ours."""
    np.savez(file, **arrays)  # (to a file object: np.savez would append .npz to a name)
    file.seek(0)
    with zipfile.ZipFile(file, "a") as archive:
        archive.comment = MARKER


def load(f, map_location=None, *, weights_only=None):
    """Read a checkpoint written by ``save`` and rebuild the saved object: Tensors where Tensors
    were saved, arrays where arrays were, dict key types, OrderedDicts and tuples kept. A file
    from before nesting (a flat name -> array npz) loads as a dict of name -> NumPy array.

    ``map_location`` is accepted for ``torch.load`` scripts: only ``None`` and ``"cpu"``
    (everything here lives in NumPy on the CPU). ``weights_only`` is accepted and ignored:
    loading never unpickles, so it is always as safe as ``weights_only=True``.

    Raises FileNotFoundError if there is no file, and ValueError naming the file if it is not a
    readable checkpoint (a text file, a pickle, a truncated or corrupt archive, an object array).
    """
    if map_location is not None and str(map_location) != "cpu":
        raise ValueError(f"load: map_location={map_location!r} is not supported; tinygrad_pool "
                         f"tensors live on the CPU (use None or 'cpu')")
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be a bool or None, got {weights_only!r}")
    if hasattr(f, "read"):
        source, shown = f, f"file object {getattr(f, 'name', type(f).__name__)!r}"
    elif isinstance(f, (str, bytes, os.PathLike)):
        source = shown = os.fsdecode(f)
        shown = repr(shown)
        if not os.path.isfile(source):
            raise FileNotFoundError(f"load: no checkpoint file at {shown}")
    else:
        raise TypeError(f"load: f must be a path or a binary file object, got {type(f).__name__}")
    try:
        archive = np.load(source, allow_pickle=False)
        if not isinstance(archive, NpzFile):
            raise ValueError("it holds a single .npy array, not an .npz archive of named arrays")
        with archive:
            arrays = {name: archive[name] for name in archive.files}
            comment = archive.zip.comment
        if comment and comment != MARKER:  # ours, damaged or cut short (old files have none)
            raise ValueError("the archive's trailer (its comment) is damaged or truncated")
        marked = comment == MARKER
        for name, array in arrays.items():
            # NpzFile hands back raw bytes for a member that is not an .npy array.
            if not isinstance(array, np.ndarray) or array.dtype.kind not in NUMERIC_KINDS:
                raise ValueError(f"member {name!r} is not a numeric .npy array")
        if STRUCTURE not in arrays:
            if marked:
                raise ValueError(f"it was written with a {STRUCTURE!r} member, which is "
                                 f"missing: the archive's index is damaged")
            return arrays  # a flat checkpoint from before nesting: name -> array, as it always was
        return _read_structure(arrays)
    except (ValueError, OSError, EOFError, KeyError, OverflowError, struct.error, zlib.error,
            zipfile.BadZipFile, NotImplementedError, RuntimeError, UnicodeDecodeError) as error:
        # np.load refuses pickles (and object arrays) with ValueError; damaged archives surface
        # as whichever error zipfile, zlib or the .npy header parser hits first (found by
        # flipping and truncating bytes of real checkpoints): one message for all of them.
        # (json.JSONDecodeError and UnicodeDecodeError are ValueErrors too.)
        raise ValueError(f"load: {shown} is not a valid tinygrad_pool checkpoint (.npz of numeric "
                         f"arrays, no pickle): {error}") from error
