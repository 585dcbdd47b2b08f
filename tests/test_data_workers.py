"""DataLoader with worker processes: the same batches in the same order as loading in-process,
torch's per-worker seeding and get_worker_info, worker_init_fn, persistent workers, errors of a
worker raised in the main process naming the item, and workers that always stop (a loop left
early, an iterator deleted, a worker that died, the interpreter exiting). Datasets are tiny:
what costs time here is starting processes."""
import gc
import multiprocessing
import os
import pickle
import random
import subprocess
import sys
import textwrap
import time
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import Generator, Tensor
from tinygrad_pool.utils.data import DataLoader, Dataset, Subset, TensorDataset, get_worker_info
from tinygrad_pool.utils import data as data_module


class Squares(Dataset):
    """Sample i is {"value": i², "label": i}; reading ``fail_at`` raises ``error``."""

    def __init__(self, n=10, fail_at=None, error=ValueError):
        self.n, self.fail_at, self.error = n, fail_at, error

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.error(f"no sample {i}")
        return {"value": np.float32(i * i), "label": i}


class WhoLoads(Dataset):
    """Sample i tells which process read it, its worker info, and what the process's random
    sources drew first (recorded by ``record_first_draws`` as worker_init_fn)."""

    first_draws = None

    def __init__(self, n=8, sleep=0.0):
        self.n, self.sleep = n, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.sleep)
        info = get_worker_info()
        return {"index": i, "pid": os.getpid(), "worker": -1 if info is None else info.id,
                "num_workers": 0 if info is None else info.num_workers,
                "seed": -1 if info is None else info.seed,
                "own_dataset": info is not None and info.dataset is self,
                "first_draws": self.first_draws or [0.0, 0.0, 0.0]}


def record_first_draws(worker_id):
    info = get_worker_info()
    assert info.id == worker_id
    info.dataset.first_draws = [random.random(), np.random.random(),
                                float(tinygrad_pool.rand(1, dtype=tinygrad_pool.float64))]


class DiesAt(Squares):
    def __getitem__(self, i):
        if i == self.fail_at:
            os._exit(7)
        return super().__getitem__(i)


class WithGetitems(Squares):
    def __getitems__(self, indices):
        if self.fail_at in indices:
            raise IndexError(f"cannot read {indices}")
        return [self[i] for i in indices]


def pairs_collate(samples):
    return [(s["label"], float(s["value"])) for s in samples]


def assert_same(ours, theirs, where="batch"):
    """Same structure, dtypes and values."""
    assert type(ours) is type(theirs), (where, type(ours), type(theirs))
    if isinstance(theirs, Tensor):
        assert ours.dtype == theirs.dtype and not ours.requires_grad, where
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{index}]")
    else:
        assert ours == theirs, where


needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="the fork start method is not available here")


def gone(pid: int) -> bool:
    """The process has exited and been reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


TENSORS = TensorDataset(tinygrad_pool.arange(26.).reshape(13, 2), tinygrad_pool.arange(13))

CONFIGS = {
    "TensorDataset": lambda: (TENSORS, dict(batch_size=3)),
    "shuffled with a Generator": lambda: (
        TENSORS, dict(batch_size=4, shuffle=True, generator=Generator().manual_seed(1))),
    "shuffled with the default generator": lambda: (
        TENSORS, dict(batch_size=4, shuffle=True)),
    "Subset, NumPy generator": lambda: (
        Subset(TENSORS, [12, 0, 5, 7, 3]), dict(batch_size=2, shuffle=True,
                                                generator=np.random.default_rng(3))),
    "dicts, drop_last, 3 workers": lambda: (
        Squares(11), dict(batch_size=4, drop_last=True, num_workers=3, prefetch_factor=1)),
    "batch_size=None": lambda: (Squares(5), dict(batch_size=None)),
    "collate_fn": lambda: (Squares(7), dict(batch_size=3, collate_fn=pairs_collate)),
    "sampler with repeats": lambda: (Squares(10), dict(batch_size=2, sampler=[3, 3, 0, 9, 4])),
    "batch_sampler": lambda: (Squares(10), dict(batch_sampler=[[1, 2], [0], [9, 8, 7]])),
    "__getitems__": lambda: (WithGetitems(9), dict(batch_size=4)),
}


@pytest.mark.parametrize("config", CONFIGS)
def test_workers_give_the_batches_of_in_process_loading_in_the_same_order(config):
    epochs = {}
    for workers in (False, True):
        # each loader gets its own generator, seeded alike; the default one is seeded alike too
        dataset, options = CONFIGS[config]()
        if workers:
            options.setdefault("num_workers", 2)
        else:
            options.update(num_workers=0, prefetch_factor=None)
        loader = DataLoader(dataset, **options)
        tinygrad_pool.manual_seed(123)
        epochs[workers] = [list(loader) for _ in range(2)]  # (shuffled: two orders)
        assert len(loader) == len(epochs[workers][0])
    assert_same(epochs[True], epochs[False])
    assert epochs[False][0], "no batches"


def test_in_order_false_gives_every_batch_once():
    loader = DataLoader(TENSORS, batch_size=2, num_workers=2, in_order=False)
    batches = sorted(batch[1].numpy().tolist() for batch in loader)
    assert batches == [[i, i + 1] for i in range(0, 12, 2)] + [[12]]


# ---- seeding and get_worker_info -------------------------------------------------------------
def test_numpy_seed_words_are_torchs():
    worker = pytest.importorskip("torch.utils.data._utils.worker")
    for base_seed in (0, 1, 2 ** 32 - 1, 2 ** 32, 123456789012345678, 2 ** 63 - 1):
        for worker_id in (0, 1, 7):
            assert data_module._numpy_worker_seed(base_seed, worker_id) == \
                worker._generate_state(base_seed, worker_id)


def test_each_worker_is_seeded_from_a_base_seed_drawn_in_the_main_process():
    def samples(generator):
        loader = DataLoader(WhoLoads(4), batch_size=None, num_workers=2, generator=generator,
                            worker_init_fn=record_first_draws)
        return list(loader)

    assert get_worker_info() is None  # in the main process
    first = samples(Generator().manual_seed(5))
    workers = {s["worker"]: s for s in first}
    assert sorted(workers) == [0, 1]
    base_seed = workers[0]["seed"]
    for worker_id, sample in workers.items():
        assert sample["num_workers"] == 2 and sample["own_dataset"]
        assert sample["pid"] != os.getpid()
        seed = sample["seed"]
        assert seed == base_seed + worker_id  # torch's rule
        python, numpy_global, package = sample["first_draws"]
        assert python == random.Random(seed).random()
        words = data_module._numpy_worker_seed(base_seed, worker_id)
        assert numpy_global == np.random.RandomState(words).random_sample()
        assert package == Generator().manual_seed(seed).random(1)[0]
    # the base seed comes from the loader's generator: the same seed, the same workers' seeds
    again = samples(Generator().manual_seed(5))
    assert [s["first_draws"] for s in again] == [s["first_draws"] for s in first]
    other = samples(Generator().manual_seed(6))
    assert other[0]["seed"] != base_seed
    # a new iterator draws a new base seed: each epoch's workers are seeded differently
    loader = DataLoader(WhoLoads(2), batch_size=None, num_workers=1)
    assert list(loader)[0]["seed"] != list(loader)[0]["seed"]


def test_worker_init_fn_changes_the_workers_copy_of_the_dataset_only():
    dataset = WhoLoads(4)
    batches = list(DataLoader(dataset, batch_size=2, num_workers=2,
                              worker_init_fn=record_first_draws))
    assert all(draw != 0 for batch in batches for row in batch["first_draws"]
               for draw in row.numpy().tolist())
    assert dataset.first_draws is None
    assert batches[0]["worker"].numpy().tolist() == [0, 0]
    assert batches[1]["worker"].numpy().tolist() == [1, 1]


# ---- persistent workers ----------------------------------------------------------------------
def test_persistent_workers_serve_every_epoch_and_stop_with_the_loader():
    loader = DataLoader(WhoLoads(6), batch_size=2, num_workers=2, persistent_workers=True,
                        shuffle=True, generator=Generator().manual_seed(0))
    epochs = [list(loader) for _ in range(3)]
    pids = [sorted({pid for batch in epoch for pid in batch["pid"].numpy().tolist()})
            for epoch in epochs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2  # the same two processes
    orders = [np.concatenate([b["index"].numpy() for b in epoch]) for epoch in epochs]
    for order in orders:
        assert sorted(order.tolist()) == list(range(6))
    assert not all(np.array_equal(orders[0], order) for order in orders[1:])
    # an epoch left half done: the next one starts afresh, nothing of the old one comes back
    iterator = iter(loader)
    next(iterator)
    assert sorted(np.concatenate([b["index"].numpy() for b in loader]).tolist()) == \
        list(range(6))
    del iterator, loader
    assert all(gone(pid) for pid in pids[0])


def test_persistent_workers_unshuffled_give_the_in_process_batches():
    loader = DataLoader(Squares(7), batch_size=3, num_workers=2, persistent_workers=True)
    expected = list(DataLoader(Squares(7), batch_size=3))
    for _ in range(2):
        assert_same(list(loader), expected)


# ---- errors ----------------------------------------------------------------------------------
class NeedsTwoArguments(Exception):
    def __init__(self, first, second):
        super().__init__(first, second)


def test_an_item_that_fails_raises_its_error_type_naming_the_item():
    loader = DataLoader(Squares(10, fail_at=7), batch_size=3, num_workers=2)
    with pytest.raises(ValueError) as error:
        list(loader)
    message = str(error.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 0 while loading "
                              "dataset item 7.\nOriginal Traceback (most recent call last):")
    assert "ValueError: no sample 7" in message and "__getitem__" in message
    # the batches before it came through
    batches = []
    with pytest.raises(ValueError):
        for batch in DataLoader(Squares(10, fail_at=7), batch_size=3, num_workers=2):
            batches.append(batch["label"].numpy().tolist())
    assert batches == [[0, 1, 2], [3, 4, 5]]


def test_error_types_that_do_not_travel_as_they_are():
    with pytest.raises(KeyError) as error:  # its message is shown as text, not a repr
        list(DataLoader(Squares(4, fail_at=1, error=KeyError), num_workers=1))
    assert str(error.value).startswith("Caught KeyError in DataLoader worker process 0 while "
                                       "loading dataset item 1.\n")

    class Local(LookupError):  # made in a function: does not pickle, its base class does
        pass

    with pytest.raises(LookupError, match="Caught Local .* dataset item 2") as error:
        list(DataLoader(Squares(4, fail_at=2, error=Local), num_workers=1))
    assert type(error.value) is LookupError
    with pytest.raises(RuntimeError, match="Caught NeedsTwoArguments .* dataset item 0"):
        list(DataLoader(Squares(4, fail_at=0, error=lambda m: NeedsTwoArguments(m, 2)),
                        num_workers=1))


def test_errors_outside_reading_an_item_name_the_batch_or_the_stage():
    with pytest.raises(IndexError, match=r"while loading dataset items \[4, 5, 6, 7\]\.\n"
                                         r"(.|\n)*cannot read \[4, 5, 6, 7\]"):
        list(DataLoader(WithGetitems(9, fail_at=6), batch_size=4, num_workers=2))

    def bad_collate(samples):
        raise TypeError("cannot collate")

    with pytest.raises(TypeError, match=r"while collating dataset items \[0, 1, 2\]"):
        list(DataLoader(Squares(6), batch_size=3, num_workers=1, collate_fn=bad_collate))

    def bad_init(worker_id):
        raise OSError(f"no setup for worker {worker_id}")

    with pytest.raises(OSError, match="worker process 0 in worker_init_fn(.|\n)*no setup for "
                                      "worker 0"):
        list(DataLoader(Squares(6), batch_size=1, num_workers=2, worker_init_fn=bad_init))


def test_a_batch_that_cannot_cross_to_the_main_process_is_an_error_of_that_batch():
    with pytest.raises(Exception, match=r"while sending the batch of dataset items \[0, 1\] to "
                                        r"the main process"):
        list(DataLoader(Squares(4), batch_size=2, num_workers=1,
                        collate_fn=lambda samples: lambda: samples))
    weight = tinygrad_pool.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        list(DataLoader(Squares(4), batch_size=2, num_workers=1,
                        collate_fn=lambda samples: weight * 2))


def test_a_worker_that_dies_is_reported_and_the_others_stopped():
    loader = DataLoader(DiesAt(8, fail_at=3), batch_size=1, num_workers=2)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly \(exit code\(s\) 7\)"):
        list(loader)
    assert time.monotonic() - start < 4


def test_timeout_bounds_the_wait_for_a_batch():
    loader = DataLoader(WhoLoads(2, sleep=0.6), batch_size=None, num_workers=1, timeout=0.1)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.1 seconds"):
        next(iter(loader))


# ---- stopping --------------------------------------------------------------------------------
def test_leaving_a_loop_or_deleting_the_iterator_stops_the_workers_at_once():
    loader = DataLoader(WhoLoads(40), batch_size=1, num_workers=2)
    start = time.monotonic()
    pids = set()
    for batch in loader:
        pids.update(batch["pid"].numpy().tolist())
        if len(pids) == 2:
            break
    assert all(gone(pid) for pid in pids)
    iterator = iter(loader)
    pids = {next(iterator)["pid"].item(), next(iterator)["pid"].item()}
    del iterator
    assert all(gone(pid) for pid in pids)
    assert time.monotonic() - start < 4  # stopped, not timed out


def test_an_iterator_collected_in_a_reference_cycle_stops_its_workers_at_once():
    iterator = iter(DataLoader(WhoLoads(6), batch_size=1, num_workers=2))
    pids = {next(iterator)["pid"].item(), next(iterator)["pid"].item()}
    cycle = [iterator]
    cycle.append(cycle)
    del iterator, cycle
    start = time.monotonic()
    gc.collect()
    assert all(gone(pid) for pid in pids) and time.monotonic() - start < 3


def test_an_exhausted_iterator_has_stopped_its_workers():
    iterator = iter(DataLoader(WhoLoads(3), batch_size=1, num_workers=2))
    pids = {batch["pid"].item() for batch in iterator}
    assert len(pids) == 2 and all(gone(pid) for pid in pids)
    with pytest.raises(StopIteration):
        next(iterator)


def test_a_script_exits_with_workers_still_running(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import tinygrad_pool
        from tinygrad_pool.utils.data import DataLoader, TensorDataset

        data = TensorDataset(tinygrad_pool.arange(40.))
        persistent = DataLoader(data, batch_size=2, num_workers=2, persistent_workers=True)
        print(sum(len(batch) for (batch,) in persistent))
        half_done = iter(DataLoader(data, batch_size=2, num_workers=2))
        print(next(half_done)[0].numpy().tolist())
        kept = iter(persistent)
        next(kept)
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["40", "[0.0, 1.0]"]
    assert done.stderr == ""


# ---- options ---------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [dict(prefetch_factor=-1), dict(timeout=-1),
                                     dict(multiprocessing_context="nope"),
                                     dict(multiprocessing_context=42)])
def test_worker_options_are_checked_as_torch_checks_them(torch, options):
    with pytest.raises(Exception) as theirs:
        torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(4)),
                                    num_workers=2, **options)
    with pytest.raises(type(theirs.value)) as ours:
        DataLoader(TensorDataset(tinygrad_pool.zeros(4)), num_workers=2, **options)
    assert str(ours.value) == str(theirs.value)


@needs_fork
def test_worker_option_defaults_and_our_own_checks(torch):
    data = TensorDataset(tinygrad_pool.zeros(4))
    ours = DataLoader(data, num_workers=2)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(4)),
                                         num_workers=2)
    assert ours.prefetch_factor == theirs.prefetch_factor == 2
    assert ours.multiprocessing_context is theirs.multiprocessing_context is None
    context = multiprocessing.get_context("fork")
    assert DataLoader(data, num_workers=1, multiprocessing_context="fork") \
        .multiprocessing_context is context
    with pytest.raises(ValueError, match="prefetch_factor must be greater than 0"):
        DataLoader(data, num_workers=2, prefetch_factor=0)
    with pytest.raises(TypeError, match="worker_init_fn must be callable or None, got int"):
        DataLoader(data, num_workers=2, worker_init_fn=3)
    with pytest.raises(TypeError, match="timeout must be a number of seconds, got '1'"):
        DataLoader(data, num_workers=2, timeout="1")


@needs_fork
def test_pin_memory_and_a_context_object_are_taken():
    context = multiprocessing.get_context("fork")
    loader = DataLoader(TENSORS, batch_size=5, num_workers=2, pin_memory=True,
                        multiprocessing_context=context)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(loader)
    assert_same(batches, list(DataLoader(TENSORS, batch_size=5)))


@pytest.mark.slow
def test_spawned_workers_get_the_dataset_pickled():
    """spawn pickles the dataset (its Tensors as arrays) and imports this module in the worker:
    slower to start (a fresh interpreter), the same batches."""
    loader = DataLoader(TENSORS, batch_size=4, num_workers=1, multiprocessing_context="spawn",
                        shuffle=True, generator=Generator().manual_seed(2))
    expected = list(DataLoader(TENSORS, batch_size=4, shuffle=True,
                               generator=Generator().manual_seed(2)))
    assert_same(list(loader), expected)


# ---- tensors between processes ---------------------------------------------------------------
def test_a_tensor_crosses_as_its_array_alone():
    base = tinygrad_pool.arange(100000.)
    view = base[10:14]
    sent = ForkingPickler.dumps(view)
    assert len(sent) < 1000  # the four numbers, not the base they were cut from
    received = pickle.loads(sent)
    assert type(received) is Tensor and received.dtype == view.dtype
    np.testing.assert_array_equal(received.numpy(), view.numpy())
    leaf = pickle.loads(ForkingPickler.dumps(tinygrad_pool.ones(3, requires_grad=True)))
    assert leaf.requires_grad and leaf.is_leaf
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        ForkingPickler.dumps(leaf * 2)
    # plain pickle is not ours to change: it still gives the tensor back
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(view)).numpy(), view.numpy())
