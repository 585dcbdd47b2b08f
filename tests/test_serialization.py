"""save/load: npz round trips keep names, values and dtypes — of flat state dicts and of nested
objects (optimizer state, lists, tuples, int keys, any str key) alike; anything else is refused,
when saving with a TypeError naming where it sits, when loading with a ValueError naming the file
(and the damaged entry) — and never by running code hidden in it. Damage of any kind, a killed
writer or a full disk never yields a silently different load or a lost checkpoint."""
import collections
import errno
import hashlib
import io
import json
import os
import pickle
import signal
import stat
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import nn, Tensor, tensor

from helpers import REPOSITORY

# The archive comment of format versions 1 and 2 (2 appends the structure's digest).
MARKER = b"tinygrad_pool checkpoint: nested, with a __structure__ member"


class WritesMarker:
    """Unpickling this creates the marker file — if anything ever unpickles it."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # creates the marker file when unpickled


def test_round_trip_keeps_names_order_values_and_dtypes(tmp_path):
    state = {"conv.weight": np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3),
             "head.bias": np.array([0.5, -1.25]),  # float64 stays float64
             "steps": np.array(7, dtype=np.int64),
             "tensor": tensor(np.ones(2, dtype=np.float32))}
    path = tmp_path / "ckpt.npz"
    tinygrad_pool.save(state, path)
    loaded = tinygrad_pool.load(path)
    assert list(loaded) == list(state)
    for name, value in state.items():
        expected = value.numpy() if isinstance(value, Tensor) else value
        assert loaded[name].dtype == expected.dtype, name
        np.testing.assert_array_equal(loaded[name], expected)


def test_model_round_trip_through_a_file(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 2 * 2, 3))
    fresh = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 2 * 2, 3))
    tinygrad_pool.save(model.state_dict(), tmp_path / "model.npz")
    fresh.load_state_dict(tinygrad_pool.load(tmp_path / "model.npz"))
    x = tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))
    np.testing.assert_array_equal(model(x).numpy(), fresh(x).numpy())
    assert all(p.dtype == np.float32 for p in fresh.parameters())


def test_save_writes_exactly_the_given_path_and_replaces_it(tmp_path):
    path = tmp_path / "weights.ckpt"  # no .npz appended, unlike np.savez with a file name
    tinygrad_pool.save({"a": np.zeros(1)}, str(path))
    tinygrad_pool.save({"a": np.ones(1)}, path)
    assert os.listdir(tmp_path) == ["weights.ckpt"]  # no temporary file left behind
    assert tinygrad_pool.load(path)["a"].tolist() == [1.0]


def test_save_refuses_what_it_could_not_load_safely(tmp_path):
    with pytest.raises(TypeError, match="only numeric arrays"):
        tinygrad_pool.save({"x": np.array([{"a": 1}], dtype=object)}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="dict keys must be str or int"):
        tinygrad_pool.save({(1, 2): np.zeros(1)}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="obj is a builtins.set"):
        tinygrad_pool.save({np.zeros(1).tobytes()}, tmp_path / "x.npz")
    assert not (tmp_path / "x.npz").exists()


def assert_refused(path):
    with pytest.raises(ValueError, match="not a valid tinygrad_pool checkpoint") as error:
        tinygrad_pool.load(path)
    assert str(path) in str(error.value)


def test_text_file_is_refused(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("these are not weights\n")
    assert_refused(path)


def test_truncated_and_corrupted_archives_are_refused(tmp_path):
    good = tmp_path / "good.npz"
    tinygrad_pool.save({"w": np.random.default_rng(0).standard_normal((64, 64))}, good)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    assert_refused(truncated)
    corrupted = tmp_path / "corrupted.npz"
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF  # inside the array's bytes: the zip CRC no longer matches
    corrupted.write_bytes(bytes(flipped))
    assert_refused(corrupted)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    assert_refused(empty)


def test_a_zip_of_other_files_and_a_single_npy_are_refused(tmp_path):
    foreign = tmp_path / "foreign.npz"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("w.npy", b"not an npy header")
    assert_refused(foreign)
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    assert_refused(single)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint file"):
        tinygrad_pool.load(tmp_path / "absent.npz")


def test_malicious_pickle_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.npz"
    path.write_bytes(pickle.dumps({"weight": WritesMarker(str(marker))}))
    assert_refused(path)
    assert not marker.exists()
    # The payload is live: unpickling it really would have run code.
    pickle.loads(path.read_bytes())
    assert marker.exists()


def test_npz_with_a_pickled_object_array_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.npz"
    payload = np.empty(1, dtype=object)
    payload[0] = WritesMarker(str(marker))
    buffer = io.BytesIO()
    np.savez(buffer, weight=np.zeros(2), evil=payload)  # np.savez pickles object arrays
    path.write_bytes(buffer.getvalue())
    assert_refused(path)
    assert not marker.exists()


@pytest.mark.parametrize("compressed", [False, True])
def test_damaged_checkpoints_only_ever_raise_value_error(tmp_path, compressed):
    """Truncate or flip bytes of a real checkpoint 300 ways: each load succeeds (an untouched
    byte of zip metadata) or raises ValueError — never zlib.error, NotImplementedError, ...."""
    buffer = io.BytesIO()
    arrays = dict(a=np.random.default_rng(0).standard_normal((16, 16)), b=np.arange(5))
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    assert count_refusals(buffer.getvalue(), tmp_path / "damaged.npz", 300, seed=1) > 250


def count_refusals(data: bytes, path, trials: int, seed: int) -> int:
    """Damage ``data`` ``trials`` ways (a third truncated, the rest with 1-4 bytes overwritten),
    load each from ``path``, and count the ValueErrors; any other exception fails the test."""
    rng = np.random.default_rng(seed)
    refused = 0
    for trial in range(trials):
        damaged = bytearray(data)
        if trial % 3 == 0:
            damaged = damaged[: rng.integers(len(data))]
        else:
            for position in rng.integers(len(data), size=rng.integers(1, 5)):
                damaged[position] = rng.integers(256)
        path.write_bytes(bytes(damaged))
        try:
            tinygrad_pool.load(path)
        except ValueError:
            refused += 1
    return refused


def test_saved_file_gets_ordinary_permissions(tmp_path):
    path = tmp_path / "shared.npz"
    tinygrad_pool.save({"a": np.zeros(1)}, path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


# ---- nested objects: what torch.save users save ----------------------------------------------
def round_trip(obj, tmp_path, name="ckpt.pt"):
    tinygrad_pool.save(obj, tmp_path / name)
    return tinygrad_pool.load(tmp_path / name)


def assert_same_object(loaded, saved, where="obj"):
    """Same types all the way down (tuples stay tuples, int keys ints), same dtypes and shapes,
    and the same values bit for bit (-0.0 is not 0.0)."""
    assert type(loaded) is type(saved), (where, type(loaded), type(saved))
    if isinstance(saved, Tensor):
        assert loaded.requires_grad == saved.requires_grad, where
        assert loaded.is_leaf and loaded.grad is None, where
        assert_same_array(loaded.numpy(), saved.numpy(), where)
    elif isinstance(saved, (np.ndarray, np.generic)):
        assert_same_array(loaded, saved, where)
    elif isinstance(saved, dict):
        assert list(loaded) == list(saved), where
        for (key, value), (saved_key, saved_value) in zip(loaded.items(), saved.items()):
            assert type(key) is type(saved_key), (where, key)
            assert_same_object(value, saved_value, f"{where}[{key!r}]")
    elif isinstance(saved, (list, tuple)):
        assert len(loaded) == len(saved), where
        for index, (value, saved_value) in enumerate(zip(loaded, saved)):
            assert_same_object(value, saved_value, f"{where}[{index}]")
    elif isinstance(saved, float):
        assert repr(loaded) == repr(saved), where  # tells nan from nan, -0.0 from 0.0
    else:
        assert loaded == saved, where


def assert_same_array(loaded, saved, where):
    assert loaded.dtype == saved.dtype and np.shape(loaded) == np.shape(saved), where
    assert np.asarray(loaded).tobytes() == np.asarray(saved).tobytes(), where


def optimizer_like_state():
    return {"state": {0: {"step": tensor(np.float32(3.0)),
                          "exp_avg": tensor(np.full((2, 3), 0.25, dtype=np.float32)),
                          "exp_avg_sq": tensor(np.ones(3, dtype=np.float64))},
                      1: {"step": 3, "momentum_buffer": None}},
            "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False,
                              "foreach": None, "params": [0, 1], "param_names": ["w", "b"]}]}


def test_optimizer_like_state_round_trips_with_int_keys_and_tuples(tmp_path):
    saved = optimizer_like_state()
    loaded = round_trip(saved, tmp_path)
    assert_same_object(loaded, saved)
    assert list(loaded["state"]) == [0, 1] and loaded["param_groups"][0]["betas"] == (0.9, 0.999)


def test_model_state_dict_loads_as_an_ordered_dict_of_plain_tensors(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    state = model.state_dict()
    loaded = round_trip(state, tmp_path)
    assert type(loaded) is type(state) and list(loaded) == list(state)
    for name, value in loaded.items():
        assert isinstance(value, Tensor) and not value.requires_grad, name
        np.testing.assert_array_equal(value.numpy(), np.asarray(state[name]), err_msg=name)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    fresh.load_state_dict(loaded)
    x = tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_array_equal(model(x).numpy(), fresh(x).numpy())


def test_training_resumes_from_a_checkpoint_exactly(tmp_path):
    """Model and Adam state in one file (the usual torch.save({...}) checkpoint): a resumed
    run takes the same next step as the uninterrupted one."""
    rng = np.random.default_rng(0)
    x = tensor(rng.standard_normal((8, 3)).astype(np.float32))
    target = tensor(rng.standard_normal((8, 1)).astype(np.float32))

    def make():
        tinygrad_pool.manual_seed(0)
        model = nn.Linear(3, 1)
        return model, tinygrad_pool.optim.Adam(model.parameters(), lr=0.1)

    def step(model, optimizer):
        optimizer.zero_grad()
        (((model(x) - target) ** 2).mean()).backward()
        optimizer.step()

    model, optimizer = make()
    for _ in range(2):
        step(model, optimizer)
    tinygrad_pool.save({"epoch": 2, "model": model.state_dict(),
                        "optimizer": optimizer.state_dict()}, tmp_path / "resume.pt")
    step(model, optimizer)
    checkpoint = tinygrad_pool.load(tmp_path / "resume.pt")
    assert checkpoint["epoch"] == 2
    resumed, resumed_optimizer = make()
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    step(resumed, resumed_optimizer)
    for ours, reference in zip(resumed.parameters(), model.parameters()):
        np.testing.assert_array_equal(ours.numpy(), reference.numpy())


def test_nested_lists_scalars_and_leaves_round_trip(tmp_path):
    saved = [1, 2.5, float("nan"), -float("inf"), True, None, "text", "ünïcode",
             2 ** 80, [[], (), {}, [(1,), ("a", None)]], collections.OrderedDict(b=1, a=(2,)),
             np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(0.5), np.bool_(True),
             tensor(np.array([True, False])), tensor(np.zeros((0, 4), dtype=np.float32)),
             tensor(np.ones(2), requires_grad=True)]
    assert_same_object(round_trip(saved, tmp_path), saved)
    assert_same_object(round_trip(tensor(np.arange(3)), tmp_path), tensor(np.arange(3)))
    assert round_trip(7, tmp_path) == 7


def test_requires_grad_is_kept_and_shared_tensors_stay_shared_as_torch(tmp_path, torch):
    weight = tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    loaded = round_trip({"a": weight, "b": weight, "c": weight.detach(), "d": weight * 2},
                        tmp_path)
    tweight = torch.ones(2, requires_grad=True)
    buffer = io.BytesIO()
    torch.save({"a": tweight, "b": tweight, "c": tweight.detach(), "d": tweight * 2}, buffer)
    buffer.seek(0)
    theirs = torch.load(buffer)
    for key in "abcd":
        assert loaded[key].requires_grad == theirs[key].requires_grad, key
        assert loaded[key].is_leaf and theirs[key].is_leaf, key  # a saved result loads as a leaf
    assert loaded["a"] is loaded["b"] and theirs["a"] is theirs["b"]
    assert loaded["a"] is not loaded["c"]


def test_file_objects_and_torch_load_arguments(tmp_path):
    buffer = io.BytesIO()
    tinygrad_pool.save(optimizer_like_state(), buffer)
    buffer.seek(0)
    loaded = tinygrad_pool.load(buffer, map_location="cpu", weights_only=True)
    assert_same_object(loaded, optimizer_like_state())
    with pytest.raises(ValueError, match="map_location='cuda:0' is not supported"):
        tinygrad_pool.load(buffer, map_location="cuda:0")
    with pytest.raises(TypeError, match="f must be a path or a binary file object, got int"):
        tinygrad_pool.save({}, 3)


def test_unsupported_objects_are_named_by_their_place(tmp_path):
    path = tmp_path / "x.pt"
    state = optimizer_like_state()
    state["state"][0]["fn"] = len
    with pytest.raises(TypeError, match=r"save: obj\['state'\]\[0\]\['fn'\] is a "
                                        r"builtins.builtin_function_or_method"):
        tinygrad_pool.save(state, path)
    with pytest.raises(TypeError, match=r"obj\[1\]\['k'\] is a collections.defaultdict"):
        tinygrad_pool.save([0, {"k": collections.defaultdict(int)}], path)
    with pytest.raises(TypeError, match=r"obj\[0\] has dtype <U1; only numeric arrays"):
        tinygrad_pool.save((np.array(["a"]),), path)
    with pytest.raises(TypeError, match=r"obj\['state'\] has the key True of type bool"):
        tinygrad_pool.save({"state": {True: 1}}, path)
    cycle = {"a": []}
    cycle["a"].append(cycle)
    with pytest.raises(ValueError, match=r"obj\['a'\]\[0\] contains itself"):
        tinygrad_pool.save(cycle, path)
    assert not path.exists() and os.listdir(tmp_path) == []


def test_old_flat_checkpoints_still_load_as_name_to_array(tmp_path):
    path = tmp_path / "old.npz"
    np.savez(path, **{"conv.weight": np.ones((2, 2), np.float32), "steps": np.array(3)})
    loaded = tinygrad_pool.load(path)
    assert type(loaded) is dict and list(loaded) == ["conv.weight", "steps"]
    assert all(isinstance(value, np.ndarray) for value in loaded.values())


def test_the_file_is_plain_npz_with_a_json_description_a_manifest_and_digests(tmp_path):
    """The documented format, computed independently: the manifest gives each member's dtype
    string, shape and the SHA-256 of its bytes in C order; the comment the JSON's SHA-256."""
    weight = np.arange(6, dtype=">f4").reshape(2, 3).T  # big-endian, and not C-contiguous
    tinygrad_pool.save({"w": weight, "n": 1, "t": tensor(np.ones(2), requires_grad=True)},
                       tmp_path / "x.npz")
    with np.load(tmp_path / "x.npz", allow_pickle=False) as archive:
        assert sorted(archive.zip.namelist()) == ["__structure__.npy", "arr_0.npy", "arr_1.npy"]
        text = archive["__structure__"].tobytes()
        comment = archive.zip.comment
    structure = json.loads(text)
    assert structure["format"] == "tinygrad_pool checkpoint" and structure["version"] == 2
    assert structure["object"] == {"dict": [["w", {"ndarray": "arr_0"}], ["n", 1],
                                            ["t", {"tensor": "arr_1", "requires_grad": True}]]}
    assert structure["arrays"] == {
        "arr_0": {"dtype": ">f4", "shape": [3, 2], "sha256": hashlib.sha256(
            bytes.fromhex(  # 0, 3, 1, 4, 2, 5: the transpose, row by row
            "00000000 40400000 3f800000 40800000 40000000 40a00000")).hexdigest()},
        "arr_1": {"dtype": np.dtype(np.float64).str, "shape": [2],
                  "sha256": hashlib.sha256(np.ones(2).tobytes()).hexdigest()}}
    assert comment == MARKER + b"; structure sha256 " + hashlib.sha256(text).hexdigest().encode()
    assert_same_object(tinygrad_pool.load(tmp_path / "x.npz")["w"], weight)


def write_structure(path, structure, **arrays):
    text = structure if isinstance(structure, str) else json.dumps(structure)
    np.savez(path, __structure__=np.frombuffer(text.encode(), dtype=np.uint8), **arrays)


@pytest.mark.parametrize("structure", [
    "{not json", '"just a string"', {"format": "something else", "version": 1, "object": 1},
    {"format": "tinygrad_pool checkpoint", "version": 99, "object": 1},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": {"tensor": "arr_9"}},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": {"dict": [[1.5, 2]]}},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": {"list": 3}},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": {"set": [1]}},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": [1, 2]},
    {"format": "tinygrad_pool checkpoint", "version": 1, "object": None},  # arr_0 unaccounted
])
def test_a_damaged_description_is_refused(tmp_path, structure):
    path = tmp_path / "bad.npz"
    write_structure(path, structure, arr_0=np.zeros(2))
    assert_refused(path)


def test_damaged_nested_checkpoints_only_ever_raise_value_error(tmp_path):
    buffer = io.BytesIO()
    tinygrad_pool.save(optimizer_like_state(), buffer)
    assert count_refusals(buffer.getvalue(), tmp_path / "damaged.pt", 150, seed=2) > 120


def test_a_checkpoint_truncated_at_any_length_is_refused(tmp_path):
    buffer = io.BytesIO()
    tinygrad_pool.save(optimizer_like_state(), buffer)
    data = buffer.getvalue()
    for length in range(len(data)):
        with pytest.raises(ValueError, match="not a valid tinygrad_pool checkpoint"):
            tinygrad_pool.load(io.BytesIO(data[:length]))
    path = tmp_path / "state.pt"
    path.write_bytes(data[: len(data) // 2])
    assert_refused(path)  # the message names the file


# Any str: hypothesis's own text never holds lone surrogates, which JSON can carry too.
any_text = st.lists(st.characters() | st.integers(0xD800, 0xDFFF).map(chr), max_size=4).map("".join)
scalars = (st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | any_text
           | st.floats(width=64) | st.sampled_from(["a.npy", "arr_0", "__structure__", "file"]))
real_dtypes = [np.float32, np.float64, np.int64, np.uint8, np.bool_]
dtypes = st.sampled_from(real_dtypes + [np.complex64])


def arrays(dtypes):
    return st.builds(lambda values, dtype: np.array(values, dtype=dtype),
                     st.lists(st.integers(0, 100), max_size=4), dtypes)


leaves = arrays(dtypes)
numpy_scalars = st.builds(lambda value, dtype: dtype(value), st.integers(0, 100), dtypes)
trained = st.builds(lambda values: tensor(np.array(values, np.float32), requires_grad=True),
                    st.lists(st.floats(-1e3, 1e3, width=32), max_size=4))
keys = any_text | st.integers(-2 ** 70, 2 ** 70) | st.sampled_from(["a.npy", "allow_pickle", ""])
nested = st.recursive(scalars | leaves | arrays(st.sampled_from(real_dtypes)).map(Tensor)
                      | numpy_scalars | trained,
                      lambda inner: (
    st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(keys, inner, max_size=3)
    | st.dictionaries(keys, inner, max_size=3).map(collections.OrderedDict)),
    max_leaves=10)


@settings(max_examples=40, deadline=None)
@given(obj=nested)
def test_any_nesting_round_trips(tmp_path_factory, obj):
    assert_same_object(round_trip(obj, tmp_path_factory.mktemp("nested")), obj)


# ---- any key, any scalar -----------------------------------------------------------------------
# Keys that look like member names, file names or np.savez/np.load's own keywords, and the
# characters JSON must escape: all are plain JSON strings in the structure, never member names.
TRICKY_KEYS = ["a.npy", "a", "arr_0", "arr_0.npy", "__structure__", "__structure__.npy",
               "allow_pickle", "file", "fix_imports", "encoding", "mmap_mode", "max_header_size",
               "", " ", "a/b", "../up", "/abs", "C:\\dir", "\x00", "a\x00b", "\n", '"', "\\", "{}",
               "NaN", "ünïcode", "🙂", "\ud800", "\udfff", "\ud800\udc00", "\U00010000", "0", 0, -1,
               2 ** 80]


def tricky_object():
    return {"keys": {key: index for index, key in enumerate(TRICKY_KEYS)},
            "floats": [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 5e-324,
                       1.7976931348623157e308, 0.1],
            "ints": [0, -1, 2 ** 63, -2 ** 63 - 1, 2 ** 200], "bools": (True, False), "none": None,
            "strings": ["", "\x00", "\ud800", "a.npy", "__structure__", "null"],
            "nested": {"a": {"b": [({"c": [[]]},), ()]}}, "empty": ({}, [], ())}


def test_every_key_and_scalar_round_trips_as_through_torch(tmp_path, torch):
    """Str keys of every kind, int keys beside equal-looking str keys ("0" and 0), nan, inf,
    -0.0, huge ints, lone surrogates: exactly back — and what torch.save/torch.load give back."""
    saved = tricky_object()
    ours = round_trip(saved, tmp_path)
    assert_same_object(ours, saved)
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    buffer.seek(0)
    assert_same_object(ours, torch.load(buffer, weights_only=True))


def test_an_int_too_long_to_write_as_json_is_refused_by_save(tmp_path):
    path = tmp_path / "x.pt"
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)  # Python's default, whatever the environment set
    try:
        with pytest.raises(ValueError, match=r"save: obj\['n'\] is an int of 16610 bits"):
            tinygrad_pool.save({"n": 10 ** 5000}, path)
        with pytest.raises(ValueError, match=r"save: the key of obj\['n'\] is an int"):
            tinygrad_pool.save({"n": {10 ** 5000: 1}}, path)
        assert not path.exists()
        assert round_trip({10 ** 4000: -10 ** 4000}, tmp_path) == {10 ** 4000: -10 ** 4000}
    finally:
        sys.set_int_max_str_digits(limit)


def test_deep_nesting_round_trips_as_far_as_torch_and_beyond_is_a_clear_recursion_error(tmp_path):
    deep = []
    for _ in range(100):  # 300 containers deep: torch.save and torch.load take that, not 900
        deep = [{"k": (deep,)}]
    assert_same_object(round_trip(deep, tmp_path), deep)
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(RecursionError, match="save: obj is nested too deeply"):
        tinygrad_pool.save(deep, tmp_path / "deep.pt")
    assert not (tmp_path / "deep.pt").exists()


# ---- damage is always detected, and named ----------------------------------------------------
def guarded_bytes(data: bytes) -> set:
    """Positions of every member's stored bytes (.npy header and array, the structure's JSON)
    and of the archive comment: what a load depends on, beyond zip bookkeeping."""
    guarded = set()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            # A 30-byte local header (name and extra-field lengths at bytes 26-29), the name
            # and the extra field, then the stored bytes.
            lengths = data[info.header_offset + 26: info.header_offset + 30]
            start = info.header_offset + 30 + sum(struct.unpack("<HH", lengths))
            guarded.update(range(start, start + info.compress_size))
        guarded.update(range(len(data) - len(archive.comment), len(data)))
    return guarded


def test_every_byte_flip_is_refused_or_loads_exactly_what_was_saved():
    """Flip each byte of a small checkpoint in turn, wholly (^0xFF) and by its lowest bit (^0x01,
    which turns a shape's digit 3 into 2): load refuses it (ValueError) or gives back exactly
    what was saved, types, keys, dtypes, shapes and bits. The flips it survives are provably
    harmless: none lies in a member's stored bytes or the comment — all are zip bookkeeping that
    zipfile never reads (times, attributes, the local headers' copies of the central index)."""
    saved = optimizer_like_state()
    saved["meta"] = {"a.npy": -0.0, "": [float("nan"), None, True, "\ud800"], 0: np.int8(-3)}
    buffer = io.BytesIO()
    tinygrad_pool.save(saved, buffer)
    data = buffer.getvalue()
    survived = set()
    for mask in (0xFF, 0x01):
        for position in range(len(data)):
            flipped = bytearray(data)
            flipped[position] ^= mask
            try:
                loaded = tinygrad_pool.load(io.BytesIO(flipped))
            except ValueError:
                continue
            assert_same_object(loaded, saved, f"obj (byte {position} ^ {mask:#x})")
            survived.add(position)
    assert not survived & guarded_bytes(data), sorted(survived & guarded_bytes(data))
    assert len(survived) < len(data) // 2


def test_a_shape_digit_flipped_past_the_crc_is_refused(tmp_path):
    """zipfile checks a member's CRC only when reading reaches its end: a header that promises
    fewer elements left the check unreached, and (64, 64) once loaded as (64, 60)."""
    path = tmp_path / "w.pt"
    tinygrad_pool.save({"w": np.random.default_rng(0).standard_normal((64, 64))}, path)
    data = bytearray(path.read_bytes())
    digit = data.index(b"(64, 64)") + 6
    data[digit] ^= ord("4") ^ ord("0")
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"entry obj\['w'\] \(member arr_0\): dtype <f8 and shape "
                                         r"\[64, 60\], but the manifest says '<f8' and \[64, 64\]"):
        tinygrad_pool.load(path)


def rewrite(path, edit=lambda members: None, comment=None):
    """Rewrite the checkpoint at ``path`` as a consistent zip — every CRC recomputed — after
    ``edit`` changes its members (a dict name -> stored bytes) in place; ``comment`` replaces
    the archive comment. Damage that zip's checks cannot see: only the manifest can."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
        comment = archive.comment if comment is None else comment
    edit(members)
    with zipfile.ZipFile(path, "w") as archive:
        for name, stored in members.items():
            archive.writestr(name, stored)
        archive.comment = comment


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def replace_once(members, name, old, new):
    assert members[name].count(old) == 1
    members[name] = members[name].replace(old, new)


def flip_last_byte(members, name):
    members[name] = members[name][:-1] + bytes([members[name][-1] ^ 1])


@pytest.mark.parametrize("edit, comment, message", [
    (lambda members: flip_last_byte(members, "arr_1.npy"), None,
     r"entry obj\['state'\]\[0\]\['exp_avg'\] \(member arr_1\): SHA-256 mismatch"),
    (lambda members: members.update({"arr_1.npy": npy(np.full((2, 3), 0.25))}), None,
     r"entry obj\['state'\]\[0\]\['exp_avg'\] \(member arr_1\): dtype <f8 and shape \[2, 3\], "
     r"but the manifest says '<f4'"),
    (lambda members: members.pop("arr_2.npy"), None,
     r"entry obj\['state'\]\[0\]\['exp_avg_sq'\] \(member arr_2\): missing from the archive"),
    (lambda members: members.update({"arr_3.npy": npy(np.zeros(1))}), None,
     r"the archive's members .* are not the manifest's \['arr_0', 'arr_1', 'arr_2'\]"),
    (lambda members: replace_once(members, "__structure__.npy", b'["lr", 0.1]', b'["lr", 0.2]'), None,
     r"member '__structure__' does not match the SHA-256 digest in the archive's comment"),
    (lambda members: None, MARKER,  # version 1's comment, as if the digest were cut off
     r"member '__structure__' says format version 2, but the archive's comment is that of "
     r"version 1"),
    (lambda members: None, b"",
     r"member '__structure__' says format version 2, but the archive's comment is that of "
     r"version 1"),
    (lambda members: None, MARKER + b"; structure sha256 " + b"0" * 64,
     r"member '__structure__' does not match the SHA-256 digest"),
    (lambda members: None, b"something else", r"the archive's trailer \(its comment\) is damaged"),
])
def test_damage_the_zip_checks_miss_is_refused_naming_file_and_entry(tmp_path, edit, comment,
                                                                     message):
    path = tmp_path / "state.pt"
    tinygrad_pool.save(optimizer_like_state(), path)
    rewrite(path, edit, comment)
    with pytest.raises(ValueError, match=f"load: '{path}' is not a valid tinygrad_pool "
                                         f"checkpoint .*: {message}"):
        tinygrad_pool.load(path)


def write_version_2(path, obj_node, manifest, **arrays):
    """A hand-made version 2 file whose structure and comment agree, holding ``arrays``."""
    text = json.dumps({"format": "tinygrad_pool checkpoint", "version": 2, "object": obj_node,
                       "arrays": manifest}).encode()
    np.savez(path, __structure__=np.frombuffer(text, dtype=np.uint8), **arrays)
    with zipfile.ZipFile(path, "a") as archive:
        archive.comment = MARKER + b"; structure sha256 " + hashlib.sha256(text).hexdigest().encode()


def manifest_entry(array):
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "sha256": hashlib.sha256(array.tobytes()).hexdigest()}


@pytest.mark.parametrize("obj_node, manifest, message", [
    ({"tensor": "arr_0"}, None, "has no well-formed manifest"),
    ({"tensor": "arr_0"}, {"arr_0": {"dtype": "<f8"}}, "has no well-formed manifest"),
    ({"tensor": "arr_0"}, {"arr_0": "x"}, "has no well-formed manifest"),
    (None, {"arr_0": manifest_entry(np.zeros(2))}, r"member \['arr_0'\] is not part of"),
    ({"list": [{"tensor": "arr_0"}, {"ndarray": "arr_1"}]}, {"arr_0": manifest_entry(np.zeros(2))},
     r"entry obj\[1\] \(member arr_1\): not in the manifest"),
    ({"list": [{"tensor": 0}]}, {"arr_0": manifest_entry(np.zeros(2))},
     r"entry obj\[0\] names the array 0, not a member name"),
])
def test_a_hand_made_version_2_file_with_a_bad_manifest_is_refused(tmp_path, obj_node, manifest,
                                                                   message):
    path = tmp_path / "hand.npz"
    write_version_2(path, obj_node, manifest, arr_0=np.zeros(2))
    with pytest.raises(ValueError, match=message):
        tinygrad_pool.load(path)


def test_a_hand_made_version_2_file_that_is_right_loads(tmp_path):
    path = tmp_path / "hand.npz"
    weight = np.arange(4.0)
    write_version_2(path, {"dict": [["w", {"tensor": "arr_0"}]]}, {"arr_0": manifest_entry(weight)},
                    arr_0=weight)
    assert_same_object(tinygrad_pool.load(path), {"w": tensor(weight)})


@pytest.mark.parametrize("comment", [MARKER, b""])  # the earliest version 1 files had none
def test_version_1_checkpoints_still_load(tmp_path, comment):
    path = tmp_path / "v1.npz"  # (np.savez would append .npz to any other name)
    write_structure(path, {"format": "tinygrad_pool checkpoint", "version": 1, "object": {"dict": [
        ["w", {"tensor": "arr_0", "requires_grad": True}], [3, {"numpy_scalar": "arr_1"}]]}},
        arr_0=np.arange(3.0), arr_1=np.array(7, dtype=np.int16))
    with zipfile.ZipFile(path, "a") as archive:
        archive.comment = comment
    assert_same_object(tinygrad_pool.load(path), {"w": tensor(np.arange(3.0), requires_grad=True),
                                                  3: np.int16(7)})


# ---- atomic writes: a crash, a kill or a full disk never costs the previous checkpoint ------
# The child process saves a large checkpoint over an existing one and SIGKILLs itself once half
# of the large array's bytes are on their way into the temporary file.
KILLED_WRITER = """
import os, signal, sys
import numpy as np
from numpy.lib import format
import tinygrad_pool

write_array = format.write_array

def write_half_then_die(file, array, *args, **kwargs):
    file.write(array.tobytes()[: array.nbytes // 2])
    file.flush()
    os.kill(os.getpid(), signal.SIGKILL)

format.write_array = write_half_then_die
tinygrad_pool.save({"weight": np.ones((512, 512)), "step": 3}, sys.argv[1])
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_a_writer_killed_mid_save_leaves_the_previous_checkpoint_intact(tmp_path):
    path = tmp_path / "ckpt.pt"
    previous = optimizer_like_state()
    tinygrad_pool.save(previous, path)
    before = path.read_bytes()
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPOSITORY), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], cwd=REPOSITORY,
                           env=environment, capture_output=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    (stray,) = [entry for entry in tmp_path.iterdir() if entry != path]
    assert stray.name.startswith(".ckpt.pt.") and stray.stat().st_size > 1_000_000  # mid-write
    assert path.read_bytes() == before
    assert_same_object(tinygrad_pool.load(path), previous)
    tinygrad_pool.save({"step": 4}, path)  # the stray temporary file is in nobody's way
    assert tinygrad_pool.load(path) == {"step": 4}


def fill_the_disk(file, array, *args, **kwargs):
    """np.savez's write_array on a disk that fills up halfway through the array."""
    file.write(array.tobytes()[: array.nbytes // 2])
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def fail_with(code):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))
    return fail


@pytest.mark.parametrize("patched, replacement, code", [
    ((np.lib.format, "write_array"), fill_the_disk, errno.ENOSPC),
    ((os, "fsync"), fail_with(errno.EIO), errno.EIO),
    ((os, "replace"), fail_with(errno.EACCES), errno.EACCES),
], ids=["disk full mid-write", "fsync fails", "rename fails"])
def test_a_failed_save_keeps_the_previous_checkpoint_and_removes_its_temporary_file(
        tmp_path, monkeypatch, patched, replacement, code):
    path = tmp_path / "ckpt.pt"
    previous = optimizer_like_state()
    tinygrad_pool.save(previous, path)
    before = path.read_bytes()
    monkeypatch.setattr(*patched, replacement)
    with pytest.raises(OSError) as error:
        tinygrad_pool.save({"weight": np.ones((256, 256))}, path)
    monkeypatch.undo()
    assert error.value.errno == code
    assert os.listdir(tmp_path) == ["ckpt.pt"] and path.read_bytes() == before
    assert_same_object(tinygrad_pool.load(path), previous)


def test_a_path_save_cannot_write_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(RuntimeError, match=r"save: f='.*taken' is a directory; expected a file"):
        tinygrad_pool.save({"a": 1}, tmp_path / "taken")
    with pytest.raises(RuntimeError, match=r"save: the directory '.*absent' of f='.*x.pt' does "
                                           r"not exist"):
        tinygrad_pool.save({"a": 1}, tmp_path / "absent" / "x.pt")
    assert os.listdir(tmp_path) == ["taken"] and os.listdir(tmp_path / "taken") == []


def test_save_syncs_the_file_before_renaming_it_and_the_directory_after(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        is_directory = stat.S_ISDIR(os.fstat(descriptor).st_mode)
        events.append("sync directory" if is_directory else "sync file")
        real_fsync(descriptor)

    def replace(source, target):
        events.append("rename")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    tinygrad_pool.save({"a": np.zeros(3)}, tmp_path / "x.pt")
    # Windows cannot open a directory to sync it (and NTFS journals the rename itself).
    assert events == ["sync file", "rename"] + (["sync directory"] if os.name == "posix" else [])
