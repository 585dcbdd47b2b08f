"""examples/digits_cnn.py end to end, shortened (--quick): it learns, draws, saves and reloads."""
import numpy as np
import pytest
from helpers import load_script

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def digits_cnn():
    return load_script("examples/digits_cnn.py")


@pytest.fixture(scope="module")
def quick_run(digits_cnn, tmp_path_factory):
    out = tmp_path_factory.mktemp("digits")
    return digits_cnn.main(["--quick", "--out", str(out), "--seed", "0", "--no-progress"]), out


def test_quick_run_learns(quick_run):
    result, _ = quick_run
    losses = result["history"]["loss"]
    assert len(losses) == 3
    assert losses[-1] < 0.5 * losses[0]  # the loss goes down...
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    assert result["accuracy"] > 0.8  # ...and 10-way guessing would be 0.1


def test_pictures_are_pngs(quick_run):
    result, out = quick_run
    assert result["curves"] == out / "curves.png"
    assert result["curves"].read_bytes()[:8] == PNG_SIGNATURE
    if result["graph"] is not None:  # drawn whenever tinygrad_pool.save_graph exists
        assert result["graph"].read_bytes()[:8] == PNG_SIGNATURE


def test_checkpoint_reload_gives_the_same_accuracy_and_weights(quick_run, digits_cnn):
    import tinygrad_pool

    result, out = quick_run
    assert result["reloaded_accuracy"] == result["accuracy"]
    state = tinygrad_pool.load(out / "checkpoint.npz")
    model = digits_cnn.build_model(np.random.default_rng(123))
    assert set(state) == {name for name, _ in model.named_parameters()}
    assert all(array.dtype == np.float32 for array in state.values())
    model.load_state_dict(state)
    x_train, y_train, x_test, y_test = digits_cnn.load_data(0)
    assert digits_cnn.evaluate(model, x_test, y_test) == result["accuracy"]


def test_data_split_is_fixed_by_seed_and_float32(digits_cnn):
    first, again, other = digits_cnn.load_data(0), digits_cnn.load_data(0), digits_cnn.load_data(1)
    x_train, y_train, x_test, y_test = first
    assert x_train.dtype == np.float32 and x_train.shape[1:] == (1, 8, 8)
    assert len(x_train) + len(x_test) == 1797 and y_train.dtype.kind == "i"
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[1], other[1])
