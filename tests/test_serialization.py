"""save/load: npz round trips keep names, values and dtypes — of flat state dicts and of nested
objects (optimizer state, lists, tuples, int keys) alike; anything else is refused, when saving
with a TypeError naming where it sits, when loading with a ValueError naming the file — and never
by running code hidden in it."""
import collections
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import Tensor, nn


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
             "tensor": Tensor(np.ones(2, dtype=np.float32))}
    path = tmp_path / "ckpt.npz"
    tinygrad_pool.save(state, path)
    loaded = tinygrad_pool.load(path)
    assert list(loaded) == list(state)
    for name, value in state.items():
        expected = value.data if isinstance(value, Tensor) else value
        assert loaded[name].dtype == expected.dtype, name
        np.testing.assert_array_equal(loaded[name], expected)


def test_model_round_trip_through_a_file(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 2 * 2, 3))
    fresh = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 2 * 2, 3))
    tinygrad_pool.save(model.state_dict(), tmp_path / "model.npz")
    fresh.load_state_dict(tinygrad_pool.load(tmp_path / "model.npz"))
    x = Tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))
    np.testing.assert_array_equal(model(x).data, fresh(x).data)
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
    """Same types all the way down (tuples stay tuples, int keys ints), same values and dtypes."""
    assert type(loaded) is type(saved), (where, type(loaded), type(saved))
    if isinstance(saved, Tensor):
        assert loaded.dtype == saved.dtype and loaded.requires_grad == saved.requires_grad, where
        assert loaded.is_leaf and loaded.grad is None, where
        np.testing.assert_array_equal(loaded.data, saved.data, err_msg=where)
    elif isinstance(saved, (np.ndarray, np.generic)):
        assert loaded.dtype == saved.dtype and np.shape(loaded) == np.shape(saved), where
        np.testing.assert_array_equal(loaded, saved, err_msg=where)
    elif isinstance(saved, dict):
        assert list(loaded) == list(saved), where
        for (key, value), (saved_key, saved_value) in zip(loaded.items(), saved.items()):
            assert type(key) is type(saved_key), (where, key)
            assert_same_object(value, saved_value, f"{where}[{key!r}]")
    elif isinstance(saved, (list, tuple)):
        assert len(loaded) == len(saved), where
        for index, (value, saved_value) in enumerate(zip(loaded, saved)):
            assert_same_object(value, saved_value, f"{where}[{index}]")
    elif isinstance(saved, float) and np.isnan(saved):
        assert np.isnan(loaded), where
    else:
        assert loaded == saved, where


def optimizer_like_state():
    return {"state": {0: {"step": Tensor(np.float32(3.0)),
                          "exp_avg": Tensor(np.full((2, 3), 0.25, dtype=np.float32)),
                          "exp_avg_sq": Tensor(np.ones(3, dtype=np.float64))},
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
    for name, tensor in loaded.items():
        assert isinstance(tensor, Tensor) and not tensor.requires_grad, name
        np.testing.assert_array_equal(tensor.data, np.asarray(state[name]), err_msg=name)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    fresh.load_state_dict(loaded)
    x = Tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_array_equal(model(x).data, fresh(x).data)


def test_training_resumes_from_a_checkpoint_exactly(tmp_path):
    """Model and Adam state in one file (the usual torch.save({...}) checkpoint): a resumed
    run takes the same next step as the uninterrupted one."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((8, 3)).astype(np.float32))
    target = Tensor(rng.standard_normal((8, 1)).astype(np.float32))

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
        np.testing.assert_array_equal(ours.data, reference.data)


def test_nested_lists_scalars_and_leaves_round_trip(tmp_path):
    saved = [1, 2.5, float("nan"), -float("inf"), True, None, "text", "ünïcode",
             2 ** 80, [[], (), {}, [(1,), ("a", None)]], collections.OrderedDict(b=1, a=(2,)),
             np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(0.5), np.bool_(True),
             Tensor(np.array([True, False])), Tensor(np.zeros((0, 4), dtype=np.float32)),
             Tensor(np.ones(2), requires_grad=True)]
    assert_same_object(round_trip(saved, tmp_path), saved)
    assert_same_object(round_trip(Tensor(np.arange(3)), tmp_path), Tensor(np.arange(3)))
    assert round_trip(7, tmp_path) == 7


def test_requires_grad_is_kept_and_shared_tensors_stay_shared_as_torch(tmp_path, torch):
    weight = Tensor(np.ones(2, dtype=np.float32), requires_grad=True)
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


def test_the_file_is_plain_npz_with_a_json_description(tmp_path):
    tinygrad_pool.save({"w": Tensor(np.ones(2)), "n": 1}, tmp_path / "x.npz")
    with np.load(tmp_path / "x.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["__structure__", "arr_0"]
        structure = json.loads(archive["__structure__"].tobytes())
    assert structure["object"] == {"dict": [["w", {"tensor": "arr_0"}], ["n", 1]]}


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


def test_a_truncated_nested_checkpoint_raises(tmp_path):
    path = tmp_path / "state.pt"
    tinygrad_pool.save(optimizer_like_state(), path)
    data = path.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 10):
        path.write_bytes(data[:cut])
        assert_refused(path)


scalars = (st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.text(max_size=5)
           | st.floats(allow_nan=False, width=64))
leaves = st.builds(lambda values, dtype: np.array(values, dtype=dtype),
                   st.lists(st.integers(0, 100), max_size=4),
                   st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_]))
nested = st.recursive(scalars | leaves | leaves.map(Tensor), lambda inner: (
    st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=3) | st.integers(-5, 5), inner, max_size=3)),
    max_leaves=10)


@settings(max_examples=25, deadline=None)
@given(obj=nested)
def test_any_nesting_round_trips(tmp_path_factory, obj):
    assert_same_object(round_trip(obj, tmp_path_factory.mktemp("nested")), obj)


def test_no_flipped_bit_loads_as_something_else(tmp_path):
    """Every single-bit flip of a checkpoint, at every byte: load refuses it (ValueError) or
    gives back exactly what was saved — never silently other keys or values (a damaged member
    name once made a nested checkpoint load as a flat one keyed arr_0, arr_1, ...)."""
    saved = {f"layer{i}.weight": Tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3) + i)
             for i in range(3)}
    good, damaged = tmp_path / "good.pt", tmp_path / "damaged.pt"
    tinygrad_pool.save(saved, good)
    data = good.read_bytes()
    outcomes = {"refused": 0, "intact": 0}
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= 0x10
        damaged.write_bytes(bytes(flipped))
        try:
            loaded = tinygrad_pool.load(damaged)
        except ValueError:
            outcomes["refused"] += 1
            continue
        assert set(loaded) == set(saved), position
        for key, value in saved.items():
            np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())
        outcomes["intact"] += 1
    assert outcomes["refused"] > len(data) // 2  # most bytes matter; the rest (times, padding) not
