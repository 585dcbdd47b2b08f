"""Checkpoints as NumPy ``.npz`` files: ``save(obj, f)`` and ``load(f)``, as ``torch.save`` /
``torch.load`` are used — for a model's ``state_dict()``, an optimizer's ``state_dict()``, or any
nesting of dicts, lists and tuples holding Tensors, NumPy arrays, numbers, strings, bools and None.

Unlike ``torch.load`` (a pickle), loading never executes code: arrays are read with
``allow_pickle=False``, so a file that needs pickle — a pickled object, or an npz holding an
object array — is refused with a ValueError instead of being run.

The file format, version 2 — an uncompressed zip archive, which ``np.load`` can read too:

- every Tensor, array and NumPy scalar is an ``.npy`` member ``arr_0.npy``, ``arr_1.npy``, ... in
  the order a depth-first walk of ``obj`` meets them (an object met twice is stored once, and
  loads as one object again, as torch keeps shared tensors shared);
- one more member, ``__structure__.npy``, holds UTF-8 JSON (as a 1-d uint8 array, so it too is
  plain numbers): ``{"format": "tinygrad_pool checkpoint", "version": 2, "object": ...,
  "arrays": ...}``.
  ``object`` describes ``obj``: Python scalars written as themselves (a float as its repr, so
  nan, inf and -0.0 survive), containers as one-key objects that keep what JSON would lose —
  ``{"dict": [[key, value], ...]}`` (so int keys stay ints, and any str key is just a JSON
  string), ``{"OrderedDict": [...]}``, ``{"list": [...]}``, ``{"tuple": [...]}`` — and leaves as
  ``{"tensor": "arr_0", "requires_grad": true}`` (the flag only when set), ``{"ndarray":
  "arr_1"}``, ``{"numpy_scalar": "arr_2"}``.
  ``arrays`` is the manifest: for each member, ``{"dtype": "<f4", "shape": [2, 3], "sha256":
  "..."}`` — its ``dtype.str`` (byte order included), its shape, and the SHA-256 hex digest of its
  bytes in C order;
- the archive's comment is the marker ``tinygrad_pool checkpoint: nested, with a __structure__
  member``, then ``; structure sha256 `` and the SHA-256 hex digest of the JSON text.

``load`` checks all of it before returning anything: the JSON against the comment's digest, each
member, as the walk meets it, against its manifest entry (present, dtype, shape, digest), and
that the archive holds exactly the manifest's members. Any damage raises ValueError naming the
file and the entry, e.g. ``entry obj['fc.weight'] (member arr_3): SHA-256 mismatch``. (Zip's own
CRC-32s are not enough: zipfile checks a member's CRC only when reading reaches the member's end,
so one flipped digit in an ``.npy`` header's shape loaded a shorter array without complaint.)

Older files still load: version 1 (the same without ``arrays`` and the digest; its comment is the
marker alone, or empty) and, without ``__structure__``, a flat checkpoint from before nesting (a
mapping name -> array), which loads as a dict of name -> NumPy array.

Saving to a path is atomic: the archive goes to a temporary file beside the target
(``.<name>.<random>.tmp``), which is flushed and fsynced, then renamed over the target, and the
directory is fsynced (POSIX), so that the rename too survives a power cut. A crash, a kill or a
full disk mid-save leaves the previous checkpoint intact; only a kill (after which nothing can
run) leaves the temporary file behind, and nothing ever reads it.

Tensors load as leaf Tensors with the ``requires_grad`` flag they were saved with (as
``torch.load`` gives; a ``state_dict``'s tensors do not require grad). Not kept, unlike a pickle:
an ``nn.Parameter`` loads as a plain Tensor (that class lives above the engine), and two different
Tensors viewing the same memory load as two copies.
"""
import contextlib
import hashlib
import io
import json
import os
import struct
import sys
import tempfile
import zipfile
import zlib
from collections import OrderedDict

import numpy as np
from numpy.lib.npyio import NpzFile

from .engine import Tensor

STRUCTURE = "__structure__"  # never clashes with the generated array names arr_0, arr_1, ...
# The archive's comment says "written by save, with a structure member": a file whose member
# names were damaged (one flipped bit in the zip index) is then refused instead of loading as an
# old flat checkpoint with the generated names as its keys. Version 2 appends the structure's
# digest, which nothing inside the archive could vouch for.
MARKER = b"tinygrad_pool checkpoint: nested, with a __structure__ member"
DIGEST_TAG = b"; structure sha256 "
FORMAT = "tinygrad_pool checkpoint"
VERSION = 2
MANIFEST_FIELDS = {"dtype", "shape", "sha256"}
# A Python str may hold lone surrogates, which UTF-8 cannot encode. JSON could escape them, but
# json.loads joins an escaped high and low surrogate into one character ("\ud800\udc00" comes
# back as "\U00010000"), so the JSON is written unescaped and they are encoded as Python's
# pickle does, with "surrogatepass".
TEXT_ERRORS = "surrogatepass"
NUMERIC_KINDS = "biufc"  # bool, int, uint, float, complex: all that .npy stores without pickle
CONTAINER_TAGS = {"dict": dict, "OrderedDict": OrderedDict}
# JSON writes ints in decimal, which Python refuses past sys.get_int_max_str_digits() (at least
# 640 digits, 4300 by default): ints longer than this many bits (about 600 digits) are tried first.
LONG_INT_BITS = 2000
SAVABLE = ("Tensors, NumPy arrays and scalars, int, float, bool, str, None, and dicts (str or "
           "int keys), OrderedDicts, lists and tuples of them")
# What np.load, zipfile, zlib and the .npy header parser raise on a damaged archive (found by
# flipping and truncating bytes of real checkpoints). np.load refuses pickles and object arrays
# with ValueError; json.JSONDecodeError and UnicodeDecodeError are ValueErrors too, and a
# structure nested past the recursion limit a RecursionError, which is a RuntimeError.
DAMAGE_ERRORS = (ValueError, OSError, EOFError, KeyError, OverflowError, struct.error, zlib.error,
                 zipfile.BadZipFile, NotImplementedError, RuntimeError)


def _sha256(data) -> str:
    """Hex digest of ``data``'s bytes: an array's in C order (hashlib reads a contiguous array's
    buffer directly, so a large checkpoint is not copied to be hashed)."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)
    return hashlib.sha256(data).hexdigest()


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
        if kind is int and value.bit_length() > LONG_INT_BITS:
            self._check_writable_int(value, where)
        if value is None or kind in (bool, int, float, str):
            return value  # json writes a float's repr: every float round-trips, nan and inf too
        if isinstance(value, Tensor):
            node = {"tensor": self._store(value, value._data, where)}
            if value.requires_grad:
                node["requires_grad"] = True
            return node
        if isinstance(value, np.ndarray):
            return {"ndarray": self._store(value, value, where)}
        if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
            return {"numpy_scalar": self._store(value, np.asarray(value), where)}
        if kind in (dict, OrderedDict, list, tuple):
            # (Written out rather than through a helper: each level of nesting costs two stack
            # frames, as in load, so objects nested as deeply as torch.save takes load again.)
            if id(value) in self.open_containers:
                raise ValueError(f"save: {where} contains itself (a reference cycle), which this "
                                 f"format cannot describe")
            self.open_containers.add(id(value))
            try:
                if kind in (dict, OrderedDict):
                    items = [[self._key(key, where), self.encode(item, f"{where}[{key!r}]")]
                             for key, item in value.items()]
                else:
                    items = [self.encode(item, f"{where}[{index}]") for index, item in enumerate(value)]
            finally:
                self.open_containers.discard(id(value))
            return {kind.__name__: items}
        raise TypeError(f"save: {where} is a {kind.__module__}.{kind.__qualname__}, which cannot be "
                        f"saved without pickle; can save {SAVABLE}")

    @staticmethod
    def _check_writable_int(value: int, where: str) -> None:
        try:
            str(value)
        except ValueError:
            raise ValueError(f"save: {where} is an int of {value.bit_length()} bits, more decimal "
                             f"digits than Python will write (sys.get_int_max_str_digits() is "
                             f"{sys.get_int_max_str_digits()})") from None

    @staticmethod
    def _key(key, where: str):
        if type(key) not in (str, int):  # bool is an int, but JSON would turn True into true
            raise TypeError(f"save: {where} has the key {key!r} of type {type(key).__name__}; "
                            f"dict keys must be str or int")
        if type(key) is int and key.bit_length() > LONG_INT_BITS:
            _Encoder._check_writable_int(key, f"the key of {where}")
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
    uncompressed ``.npz`` with a manifest and SHA-256 digests (see the module's docstring).

    ``f`` is a path or a binary file object. A path is written exactly (no ``.npz`` is appended)
    and atomically: a crash, a kill or a full disk mid-write leaves any previous checkpoint there
    intact. Anything that would need pickle raises TypeError naming where it sits, e.g.
    ``obj['state'][0]['fn']``, and nothing is written.
    """
    to_file_object = hasattr(f, "write")
    if not (to_file_object or isinstance(f, (str, bytes, os.PathLike))):
        raise TypeError(f"save: f must be a path or a binary file object, got {type(f).__name__}")
    if not to_file_object:
        path = os.fsdecode(f)
        directory = os.path.dirname(os.path.abspath(path))
        # RuntimeError, as torch.save raises for both.
        if not os.path.isdir(directory):
            raise RuntimeError(f"save: the directory {directory!r} of f={path!r} does not exist")
        if os.path.isdir(path):
            raise RuntimeError(f"save: f={path!r} is a directory; expected a file path")
    encoder = _Encoder()
    try:
        described = encoder.encode(obj, "obj")
    except RecursionError:  # (torch.save's error too, from pickle)
        raise RecursionError(f"save: obj is nested too deeply for Python's recursion limit "
                             f"(sys.getrecursionlimit() is {sys.getrecursionlimit()})") from None
    manifest = {name: {"dtype": array.dtype.str, "shape": list(array.shape), "sha256": _sha256(array)}
                for name, array in encoder.arrays.items()}
    structure = json.dumps({"format": FORMAT, "version": VERSION, "object": described,
                            "arrays": manifest}, ensure_ascii=False).encode("utf-8", TEXT_ERRORS)
    arrays = dict(encoder.arrays)
    arrays[STRUCTURE] = np.frombuffer(structure, dtype=np.uint8)
    comment = MARKER + DIGEST_TAG + _sha256(structure).encode("ascii")
    if to_file_object:
        buffer = io.BytesIO()
        _write(buffer, arrays, comment)
        f.write(buffer.getvalue())
        return
    # Named after the target, so that one left behind by a killed save says whose it was.
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp",
                                         prefix=f".{os.path.basename(path)[:100]}.")
    try:
        with os.fdopen(handle, "w+b") as file:
            _write(file, arrays, comment)
            file.flush()
            os.fsync(file.fileno())  # the bytes are on disk before any name points at them
        # mkstemp creates the file private (0600); give it the permissions open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):  # (never hide the error that stopped the save)
            os.remove(temporary)
        raise
    _sync_directory(directory)


def _write(file, arrays: dict, comment: bytes) -> None:
    """The arrays as an uncompressed npz in ``file`` (a seekable binary file), marked as ours."""
    np.savez(file, **arrays)  # (to a file object: np.savez would append .npz to a name)
    file.seek(0)
    with zipfile.ZipFile(file, "a") as archive:
        archive.comment = comment


def _sync_directory(directory: str) -> None:
    """fsync the directory, so that a rename into it survives a power cut (POSIX). Windows cannot
    open a directory, and some file systems refuse to sync one: skipped there, as the file
    itself is already complete and synced."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


# ---- load ------------------------------------------------------------------------------------
class _Decoder:
    """Rebuilds the saved object from its JSON description, asking ``read(name, where)`` for each
    array the first time the walk meets it (``where`` is the access path, e.g. ``obj['fc.bias']``,
    for errors). Every node is checked, so a hand-made structure raises ValueError, never a raw
    KeyError."""

    def __init__(self, read):
        self.read = read
        self.loaded = {}  # array name -> the object made from it (shared objects stay shared)

    def decode(self, node, where: str = "obj"):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or len(node) == 0:
            raise ValueError(f"malformed structure node at {where}: {node!r:.80}")
        tag = next(iter(node))
        if tag in CONTAINER_TAGS and len(node) == 1:
            pairs = node[tag]
            if not all(isinstance(p, list) and len(p) == 2 and type(p[0]) in (str, int)
                       for p in self._list(pairs, where)):
                raise ValueError(f"malformed {tag} entries at {where}: {pairs!r:.80}")
            return CONTAINER_TAGS[tag]((key, self.decode(item, f"{where}[{key!r}]"))
                                       for key, item in pairs)
        if tag in ("list", "tuple") and len(node) == 1:
            items = [self.decode(item, f"{where}[{index}]")
                     for index, item in enumerate(self._list(node[tag], where))]
            return items if tag == "list" else tuple(items)
        if tag == "tensor" and set(node) <= {"tensor", "requires_grad"}:
            return self._leaf(node["tensor"], where, lambda array: Tensor(
                array, dtype=array.dtype, requires_grad=node.get("requires_grad") is True))
        if tag == "ndarray" and len(node) == 1:
            return self._leaf(node[tag], where, lambda array: array)
        if tag == "numpy_scalar" and len(node) == 1:
            return self._leaf(node[tag], where, lambda array: array[()])
        raise ValueError(f"malformed structure node at {where}: {node!r:.80}")

    @staticmethod
    def _list(value, where: str) -> list:
        if not isinstance(value, list):
            raise ValueError(f"malformed structure at {where}: expected a list, got {value!r:.80}")
        return value

    def _leaf(self, name, where: str, make):
        if not isinstance(name, str):
            raise ValueError(f"entry {where} names the array {name!r:.80}, not a member name")
        if name not in self.loaded:
            self.loaded[name] = make(self.read(name, where))
        return self.loaded[name]


def _entry(where: str, name: str) -> str:
    return f"entry {where} (member {name})"


def _member(archive: NpzFile, name: str, label: str) -> np.ndarray:
    """The member ``name`` as a numeric array; any failure to read it is a ValueError that starts
    with ``label`` (which member of which entry)."""
    try:
        array = archive[name]
    except DAMAGE_ERRORS as error:
        raise ValueError(f"{label}: unreadable ({type(error).__name__}: {error})") from error
    # NpzFile hands back raw bytes for a member that is not an .npy array.
    if not isinstance(array, np.ndarray) or array.dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{label} is not a numeric .npy array")
    return array


def _read_flat(archive: NpzFile) -> dict:
    """A checkpoint from before nesting: name -> array, as it always was."""
    return {name: _member(archive, name, f"member {name!r}") for name in archive.files}


def _read_nested(archive: NpzFile, comment: bytes):
    header = _read_header(archive, comment)
    present = {name for name in archive.files if name != STRUCTURE}
    if header["version"] == 1:
        listed, read = present, _unverified_reader(archive, present)
    else:
        manifest = _read_manifest(archive, header)
        listed, read = set(manifest), _verified_reader(archive, manifest, present)
    decoder = _Decoder(read)
    obj = decoder.decode(header["object"])
    unused = sorted(listed - set(decoder.loaded))
    if unused:
        raise ValueError(f"{'member' if len(unused) == 1 else 'members'} {unused} "
                         f"{'is' if len(unused) == 1 else 'are'} not part of the saved object")
    return obj


def _read_header(archive: NpzFile, comment: bytes) -> dict:
    """The structure's JSON, once the archive's comment vouches for it: version 2's comment ends
    with the JSON's digest; version 1's is the marker alone (or, in the earliest files, empty)."""
    encoded = _member(archive, STRUCTURE, f"member {STRUCTURE!r}")
    if encoded.dtype != np.uint8 or encoded.ndim != 1:
        raise ValueError(f"member {STRUCTURE!r} is not UTF-8 text (a 1-d uint8 array)")
    text = encoded.tobytes()
    if comment.startswith(MARKER + DIGEST_TAG):
        if comment[len(MARKER + DIGEST_TAG):] != _sha256(text).encode("ascii"):
            raise ValueError(f"member {STRUCTURE!r} does not match the SHA-256 digest in the "
                             f"archive's comment: one of them is damaged")
        vouched = 2
    elif comment in (MARKER, b""):
        vouched = 1
    else:
        raise ValueError("the archive's trailer (its comment) is damaged or truncated")
    header = json.loads(text.decode("utf-8", TEXT_ERRORS))
    if not isinstance(header, dict) or header.get("format") != FORMAT or "object" not in header:
        raise ValueError(f"member {STRUCTURE!r} is not a {FORMAT} description")
    version = header.get("version")
    if version not in (1, 2):
        raise ValueError(f"format version {version!r} is not supported (this tinygrad_pool "
                         f"reads versions 1 and {VERSION})")
    if version != vouched:
        raise ValueError(f"member {STRUCTURE!r} says format version {version}, but the archive's "
                         f"comment is that of version {vouched}: one of them is damaged")
    return header


def _read_manifest(archive: NpzFile, header: dict) -> dict:
    """Version 2's manifest, member name -> {"dtype", "shape", "sha256"}, once the archive is
    known to hold no member beyond it (each once)."""
    manifest = header.get("arrays")
    if not (isinstance(manifest, dict) and all(
            isinstance(entry, dict) and set(entry) == MANIFEST_FIELDS for entry in manifest.values())):
        raise ValueError(f"member {STRUCTURE!r} has no well-formed manifest of arrays")
    members = archive.zip.namelist()
    if not set(members) <= {f"{name}.npy" for name in [*manifest, STRUCTURE]} or (
            len(set(members)) != len(members)):
        raise ValueError(f"the archive's members {sorted(members)} are not the manifest's "
                         f"{sorted(manifest)} and {STRUCTURE!r}, each once")
    return manifest


def _unverified_reader(archive: NpzFile, present: set):
    """Version 1's: the member as it is (zip's CRC-32s are all that vouch for it)."""
    def read(name: str, where: str) -> np.ndarray:
        if name not in present:
            raise ValueError(f"entry {where} names a missing array {name!r:.80}")
        return _member(archive, name, _entry(where, name))
    return read


def _verified_reader(archive: NpzFile, manifest: dict, present: set):
    """Version 2's: the member, once it matches its manifest entry in dtype, shape and bytes."""
    def read(name: str, where: str) -> np.ndarray:
        label = _entry(where, name)
        if name not in manifest:
            raise ValueError(f"{label}: not in the manifest")
        if name not in present:
            raise ValueError(f"{label}: missing from the archive")
        array, expected = _member(archive, name, label), manifest[name]
        if array.dtype.str != expected["dtype"] or list(array.shape) != expected["shape"]:
            raise ValueError(f"{label}: dtype {array.dtype.str} and shape {list(array.shape)}, but "
                             f"the manifest says {expected['dtype']!r:.20} and "
                             f"{expected['shape']!r:.80}")
        if _sha256(array) != expected["sha256"]:
            raise ValueError(f"{label}: SHA-256 mismatch, its data is damaged")
        return array
    return read


def load(f, map_location=None, *, weights_only=None):
    """Read a checkpoint written by ``save`` and rebuild the saved object: Tensors where Tensors
    were saved, arrays where arrays were, dict key types, OrderedDicts and tuples kept. Every
    array is checked against the file's manifest (dtype, shape, SHA-256) first. A file from
    before nesting (a flat name -> array npz) loads as a dict of name -> NumPy array.

    ``map_location`` is accepted for ``torch.load`` scripts: only ``None`` and ``"cpu"``
    (everything here lives in NumPy on the CPU). ``weights_only`` is accepted and ignored:
    loading never unpickles, so it is always as safe as ``weights_only=True``.

    Raises FileNotFoundError if there is no file, and ValueError naming the file — and the entry,
    where one is damaged — if it is not a readable checkpoint (a text file, a pickle, a truncated
    or corrupt archive, an object array).
    """
    if map_location is not None and str(map_location) != "cpu":
        raise ValueError(f"load: map_location={map_location!r} is not supported; tinygrad_pool "
                         f"tensors live on the CPU (use None or 'cpu')")
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be a bool or None, got {weights_only!r}")
    if hasattr(f, "read"):
        source, shown = f, f"file object {getattr(f, 'name', type(f).__name__)!r}"
    elif isinstance(f, (str, bytes, os.PathLike)):
        source = os.fsdecode(f)
        shown = repr(source)
        if not os.path.isfile(source):
            raise FileNotFoundError(f"load: no checkpoint file at {shown}")
    else:
        raise TypeError(f"load: f must be a path or a binary file object, got {type(f).__name__}")
    try:
        archive = np.load(source, allow_pickle=False)
        if not isinstance(archive, NpzFile):
            raise ValueError("it holds a single .npy array, not an .npz archive of named arrays")
        with archive:
            comment = archive.zip.comment
            if STRUCTURE in archive.files:
                return _read_nested(archive, comment)
            if comment.startswith(MARKER):  # so the index lost the structure member's name
                raise ValueError(f"it was written with a {STRUCTURE!r} member, which is missing: "
                                 f"the archive's index is damaged")
            if comment:  # flat checkpoints had none
                raise ValueError("the archive's trailer (its comment) is damaged or not ours")
            return _read_flat(archive)
    except DAMAGE_ERRORS as error:
        raise ValueError(f"load: {shown} is not a valid tinygrad_pool checkpoint (.npz of numeric "
                         f"arrays, no pickle): {error}") from error
