"""save/load: npz round trips keep names, values and dtypes; anything else is refused with a
ValueError naming the file — and never by running code hidden in it."""
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

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
    with pytest.raises(TypeError, match="keys must be strings"):
        tinygrad_pool.save({1: np.zeros(1)}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="expected a mapping"):
        tinygrad_pool.save([np.zeros(1)], tmp_path / "x.npz")
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
    data = buffer.getvalue()
    rng = np.random.default_rng(1)
    path = tmp_path / "damaged.npz"
    refused = 0
    for trial in range(300):
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
    assert refused > 250


def test_saved_file_gets_ordinary_permissions(tmp_path):
    path = tmp_path / "shared.npz"
    tinygrad_pool.save({"a": np.zeros(1)}, path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
