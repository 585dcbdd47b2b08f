"""utils.data: batches equal torch's DataLoader (values, dtypes, structure, len) on unshuffled
data; shuffling gives each epoch a fresh, reproducible permutation; random_split sizes follow
torch's rule; bad arguments raise torch's errors."""
import collections
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tinygrad_pool
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                      RandomSampler, SequentialSampler, Subset, TensorDataset,
                                      default_collate, default_convert, random_split)

Point = collections.namedtuple("Point", ["x", "y"])


def features_and_labels(n=10, rng=None):
    rng = rng or np.random.default_rng(0)
    return rng.standard_normal((n, 3, 2)).astype(np.float32), rng.integers(0, 5, size=n)


def assert_same_batch(ours, theirs, torch, where="batch"):
    """Same structure, container types, dtypes and values as torch's batch."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, Tensor), (where, type(ours))
        assert not ours.requires_grad, where
        assert str(theirs.dtype) == f"torch.{ours.dtype}", (where, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
        return
    assert type(ours) is type(theirs), (where, type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key in theirs:
            assert_same_batch(ours[key], theirs[key], torch, f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_batch(a, b, torch, f"{where}[{index}]")
    else:
        assert ours == theirs, where


def assert_same_loader(ours, theirs, torch):
    assert len(ours) == len(theirs)
    our_batches, their_batches = list(ours), list(theirs)
    assert len(our_batches) == len(their_batches) == len(theirs)
    for index, (a, b) in enumerate(zip(our_batches, their_batches)):
        assert_same_batch(a, b, torch, f"batch {index}")


# ---- parity with torch, unshuffled ----------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 13), batch_size=st.integers(1, 6), drop_last=st.booleans())
def test_tensor_dataset_batches_equal_torch(n, batch_size, drop_last):
    torch = pytest.importorskip("torch")
    x, y = features_and_labels(n)
    ours = DataLoader(TensorDataset(tensor(x), tensor(y)), batch_size=batch_size,
                      drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
        batch_size=batch_size, drop_last=drop_last)
    assert_same_loader(ours, theirs, torch)


class Records(Dataset):
    """Samples of every kind default_collate knows, built identically for both frameworks."""

    def __init__(self, n, make_tensor, kind):
        rng = np.random.default_rng(1)
        self.images = rng.standard_normal((n, 2, 2))  # float64 arrays stay float64
        self.n, self.make_tensor, self.kind = n, make_tensor, kind

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        image = self.images[i]
        if self.kind == "dict":
            return {"image": image, "label": i % 3, "weight": 0.5 * i, "flag": i % 2 == 0,
                    "name": f"sample{i}", "small": np.float32(i), "tensor": self.make_tensor(
                        image.astype(np.float32)), "nested": {"ids": [i, i + 1]}}
        if self.kind == "tuple":
            return image, i, (f"n{i}", 1.5 * i)
        if self.kind == "namedtuple":
            return Point(x=self.make_tensor(image), y=i)
        if self.kind == "list":
            return [np.int32(i), [True, False]]
        raise AssertionError(self.kind)


@pytest.mark.parametrize("kind", ["dict", "tuple", "namedtuple", "list"])
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (7, False)])
def test_collated_structures_equal_torch(torch, kind, batch_size, drop_last):
    ours = DataLoader(Records(7, tensor, kind), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(Records(7, torch.tensor, kind), batch_size=batch_size,
                                         drop_last=drop_last)
    assert_same_loader(ours, theirs, torch)


@pytest.mark.parametrize("kind", ["dict", "tuple", "namedtuple"])
def test_batch_size_none_converts_each_sample_as_torch(torch, kind):
    ours = DataLoader(Records(4, tensor, kind), batch_size=None)
    theirs = torch.utils.data.DataLoader(Records(4, torch.tensor, kind), batch_size=None)
    assert_same_loader(ours, theirs, torch)


@pytest.mark.parametrize("batch", [
    [True, False], [True, 1], [1, True], [1, 2.5], [2.5, 1], [np.float32(1), np.float64(2)],
    [np.int32(1), np.int32(2)], [np.bool_(True), np.bool_(False)], [np.array(1.5), np.array(2)],
    [np.zeros(2, np.float16), np.ones(2, np.float16)], [[1, "x"], [2, "y"]], ["a", "b"],
    [b"a", b"b"], [(1, 2), (3, 4)], [collections.OrderedDict(b=1, a=2)] * 2,
    [collections.defaultdict(int, k=1.0)] * 2,
])
def test_default_collate_dtypes_and_types_equal_torch(torch, batch):
    assert_same_batch(default_collate(batch), torch.utils.data.default_collate(batch), torch)


@pytest.mark.parametrize("data", [np.arange(3), np.float32(2), (np.ones(2), 3), [np.zeros(1)],
                                  {"a": np.ones(1), "b": "s"}, Point(np.array(0), 1), "text", 7])
def test_default_convert_equals_torch(torch, data):
    assert_same_batch(default_convert(data), torch.utils.data.default_convert(data), torch)


@pytest.mark.parametrize("batch", [
    [np.zeros(2), np.zeros(3)], [np.zeros((2, 1)), np.zeros((1, 2))], [[1, 2], [1]],
    [object(), object()], [None, None], [np.array(["a"]), np.array(["b"])], [1 + 2j, 1j],
    [1, 2 ** 70], [1.0, "a"],
])
def test_default_collate_errors_have_torch_type(torch, batch):
    with pytest.raises(Exception) as theirs:
        torch.utils.data.default_collate(batch)
    with pytest.raises(type(theirs.value)) as ours:
        default_collate(batch)
    if type(theirs.value) is not TypeError or "default_collate" in str(theirs.value):
        assert str(theirs.value) in str(ours.value)  # the same words, perhaps more detail


def test_mismatched_tensor_shapes_raise_torchs_message(torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.utils.data.default_collate([torch.zeros(2), torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError) as ours:
        default_collate([tensor(np.zeros(2)), tensor(np.zeros(2)), tensor(np.zeros(3))])
    assert str(ours.value) == str(theirs.value)


def test_len_and_batches_with_samplers_equal_torch(torch):
    x, y = features_and_labels(10)
    data = TensorDataset(tensor(x), tensor(y))
    tdata = torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y))
    order = [9, 0, 4, 4, 2]
    batches = [[3, 1], [0], [8, 8, 8]]
    cases = [(dict(sampler=order, batch_size=2), dict(sampler=order, batch_size=2)),
             (dict(sampler=order, batch_size=2, drop_last=True),) * 2,
             (dict(batch_sampler=batches),) * 2,
             (dict(sampler=order, batch_size=None),) * 2,
             (dict(batch_sampler=BatchSampler(SequentialSampler(data), 4, False)),
              dict(batch_sampler=torch.utils.data.BatchSampler(
                  torch.utils.data.SequentialSampler(tdata), 4, False)))]
    for ours, theirs in cases:
        assert_same_loader(DataLoader(data, **ours),
                           torch.utils.data.DataLoader(tdata, **theirs), torch)


def test_subset_and_concat_read_the_samples_torch_reads(torch):
    x, y = features_and_labels(6)
    ours = TensorDataset(tensor(x), tensor(y))
    theirs = torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y))
    indices = [5, 0, 3]
    assert_same_loader(DataLoader(Subset(ours, indices), batch_size=2),
                       torch.utils.data.DataLoader(torch.utils.data.Subset(theirs, indices),
                                                   batch_size=2), torch)
    joined, tjoined = ours + Subset(ours, indices), theirs + torch.utils.data.Subset(theirs, indices)
    assert isinstance(joined, ConcatDataset) and len(joined) == len(tjoined) == 9
    assert joined.cumulative_sizes == tjoined.cumulative_sizes
    for i in (0, 5, 6, 8, -1, -9):
        assert_same_batch(list(joined[i]), list(tjoined[i]), torch, f"sample {i}")
    assert_same_loader(DataLoader(joined, batch_size=4), torch.utils.data.DataLoader(
        tjoined, batch_size=4), torch)
    with pytest.raises(IndexError, match="out of range"):
        joined[9]


# ---- the TensorDataset fast path is only a shortcut ------------------------------------------
def slow_collate(samples):
    return default_collate(samples)  # not default_collate itself: samples are read one by one


@pytest.mark.parametrize("make", [lambda d: d, lambda d: Subset(d, [7, 2, 9, 0, 4]),
                                  lambda d: Subset(Subset(d, np.arange(9, -1, -1)), [1, 2, 3])])
def test_fast_path_equals_reading_samples_one_by_one(make):
    x, y = features_and_labels(10)
    dataset = make(TensorDataset(tensor(x), tensor(y)))
    fast = DataLoader(dataset, batch_size=3, shuffle=True, generator=np.random.default_rng(4))
    slow = DataLoader(dataset, batch_size=3, shuffle=True, generator=np.random.default_rng(4),
                      collate_fn=slow_collate)
    for _ in range(2):
        pairs = list(zip(fast, slow, strict=True))
        assert pairs
        for a, b in pairs:
            assert type(a) is type(b) is list
            for ours, reference in zip(a, b, strict=True):
                assert ours.dtype == reference.dtype
                np.testing.assert_array_equal(ours.numpy(), reference.numpy())


def test_batches_never_require_grad():
    x = tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    for collate in (None, slow_collate):
        for (batch,) in DataLoader(TensorDataset(x), batch_size=2, collate_fn=collate):
            assert not batch.requires_grad and batch.grad_fn is None


def test_batches_do_not_alias_the_dataset():
    x = tensor(np.zeros((4, 2)))
    (batch,) = next(iter(DataLoader(TensorDataset(x), batch_size=4)))
    batch.numpy()[...] += 1
    assert x.numpy().sum() == 0


# ---- shuffling -------------------------------------------------------------------------------
def epochs(loader, count):
    return [np.concatenate([labels.numpy() for _, labels in loader]) for _ in range(count)]


def test_shuffle_gives_each_epoch_a_new_permutation_of_all_samples():
    n = 23
    x = tensor(np.arange(n, dtype=np.float32).reshape(n, 1))
    loader = DataLoader(TensorDataset(x, tensor(np.arange(n))), batch_size=5, shuffle=True,
                        generator=np.random.default_rng(0))
    seen = epochs(loader, 3)
    for order in seen:
        assert sorted(order.tolist()) == list(range(n))
    assert not np.array_equal(seen[0], seen[1]) and not np.array_equal(seen[1], seen[2])
    assert not np.array_equal(seen[0], np.arange(n))
    # features and labels stay paired
    for features, labels in loader:
        np.testing.assert_array_equal(features.numpy()[:, 0], labels.numpy())


def test_shuffle_is_reproducible_with_a_seeded_generator_and_with_manual_seed():
    data = TensorDataset(tensor(np.zeros((17, 1))), tensor(np.arange(17)))
    a = DataLoader(data, batch_size=4, shuffle=True, generator=np.random.default_rng(7))
    b = DataLoader(data, batch_size=4, shuffle=True, generator=np.random.default_rng(7))
    for left, right in zip(epochs(a, 3), epochs(b, 3)):
        np.testing.assert_array_equal(left, right)
    default = DataLoader(data, batch_size=4, shuffle=True)  # the package's default generator
    tinygrad_pool.manual_seed(3)
    first = epochs(default, 2)
    tinygrad_pool.manual_seed(3)
    again = epochs(default, 2)
    for left, right in zip(first, again):
        np.testing.assert_array_equal(left, right)
    assert not np.array_equal(first[0], first[1])


def test_drop_last_with_shuffle_drops_only_the_short_batch():
    data = TensorDataset(tensor(np.arange(10)))
    loader = DataLoader(data, batch_size=3, shuffle=True, drop_last=True,
                        generator=np.random.default_rng(0))
    sizes = [len(batch) for (batch,) in loader]
    assert sizes == [3, 3, 3] and len(loader) == 3


def test_random_sampler_with_more_samples_or_replacement():
    data = list(range(5))
    sampler = RandomSampler(data, num_samples=12, generator=np.random.default_rng(0))
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == 12
    assert sorted(drawn[:5]) == sorted(drawn[5:10]) == data and set(drawn[10:]) <= set(data)
    with_replacement = list(RandomSampler(data, replacement=True, num_samples=50,
                                          generator=np.random.default_rng(0)))
    assert len(with_replacement) == 50 and set(with_replacement) <= set(data)
    assert len(set(with_replacement)) < 50  # repeats: it really draws with replacement


# ---- random_split ----------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 40), parts=st.lists(st.integers(1, 9), min_size=1, max_size=5))
def test_random_split_fraction_sizes_equal_torchs(n, parts):
    torch = pytest.importorskip("torch")
    fractions = [p / sum(parts) for p in parts]
    if not np.isclose(sum(fractions), 1) or sum(fractions) > 1:
        return  # float rounding made them not sum to 1: torch treats them as counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length splits warn in both
        ours = random_split(list(range(n)), fractions, generator=np.random.default_rng(0))
        theirs = torch.utils.data.random_split(list(range(n)), fractions)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    everything = sorted(i for subset in ours for i in subset.indices)
    assert everything == list(range(n))  # disjoint and covering


def test_random_split_counts_are_disjoint_reproducible_and_random():
    data = TensorDataset(tensor(np.arange(30)))
    first = random_split(data, [10, 15, 5], generator=np.random.default_rng(1))
    again = random_split(data, [10, 15, 5], generator=np.random.default_rng(1))
    assert [len(s) for s in first] == [10, 15, 5]
    assert [s.indices for s in first] == [s.indices for s in again]
    values = np.concatenate([DataLoader(s, batch_size=30).__iter__().__next__()[0].numpy()
                             for s in first])
    assert sorted(values.tolist()) == list(range(30))
    assert values.tolist() != list(range(30))
    assert all(s.dataset is data for s in first)


def test_random_split_warns_about_empty_splits_as_torch(torch):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        sizes = [len(s) for s in random_split(range(2), [0.5, 0.1, 0.4])]
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = [len(s) for s in torch.utils.data.random_split(range(2), [0.5, 0.1, 0.4])]
    assert sizes == expected == [2, 0, 0]  # floors 1, 0, 0; the remainder goes to the first
    messages = [str(w.message) for w in ours]
    assert messages == [str(w.message) for w in theirs]
    assert messages == [f"Length of split at index {i} is 0. This might result in an empty "
                        f"dataset." for i in (1, 2)]


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.7], [1.2, -0.2], [2, 4]])
def test_random_split_errors_equal_torchs(torch, lengths):
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.random_split(range(5), lengths)
    with pytest.raises(ValueError) as ours:
        random_split(range(5), lengths)
    assert str(theirs.value) in str(ours.value)


def test_random_split_refuses_what_torch_would_mangle():
    with pytest.raises(TypeError, match=r"lengths\[1\] must be an int or a fraction"):
        random_split(range(5), [2, "3"])
    with pytest.raises(ValueError, match=r"lengths\[0\] must be a non-negative int"):
        random_split(range(5), [-1, 6])
    with pytest.raises(ValueError, match=r"lengths\[0\] must be a non-negative int"):
        random_split(range(5), [2.5, 2.5])
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator"):
        random_split(range(5), [2, 3], generator=42)


# ---- errors ----------------------------------------------------------------------------------
def test_tensor_dataset_checks_its_tensors(torch):
    with pytest.raises(AssertionError, match="Size mismatch between tensors") as ours:
        TensorDataset(tensor(np.zeros(3)), tensor(np.zeros(4)))
    assert "[3, 4]" in str(ours.value)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        torch.utils.data.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(IndexError, match="0-dimensional"):
        TensorDataset(tensor(np.float32(1)))
    with pytest.raises(TypeError, match="argument 1 must be a Tensor, got ndarray"):
        TensorDataset(tensor(np.zeros(3)), np.zeros(3))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()


TORCH_REFUSES = [dict(num_workers=-1), dict(prefetch_factor=2), dict(persistent_workers=True),
                 dict(multiprocessing_context="spawn"), dict(batch_size=0),
                 dict(batch_size=True), dict(batch_size=2.0), dict(drop_last=1),
                 dict(shuffle=True, sampler=[0, 1]), dict(batch_sampler=[[0]], batch_size=2),
                 dict(batch_sampler=[[0]], drop_last=True),
                 dict(batch_size=None, drop_last=True)]


@pytest.mark.parametrize("options", TORCH_REFUSES)
def test_dataloader_refuses_what_torch_refuses_with_its_message(torch, options):
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(4)), **options)
    with pytest.raises(ValueError) as ours:
        DataLoader(TensorDataset(tensor(np.zeros(4))), **options)
    assert " ".join(str(ours.value).split()) == " ".join(str(theirs.value).split()).replace(
        "multiprocessing.let", "multiprocessing. let")


def test_dataloader_refuses_unsupported_options_clearly():
    data = TensorDataset(tensor(np.zeros(4)))
    with pytest.raises(ValueError, match="prefetch_factor must be greater than 0"):
        DataLoader(data, num_workers=2, prefetch_factor=0)
    with pytest.raises(ValueError, match="timeout=5 only applies to worker processes"):
        DataLoader(data, timeout=5)
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator"):
        DataLoader(data, shuffle=True, generator=0)
    with pytest.raises(TypeError, match="collate_fn must be callable"):
        DataLoader(data, collate_fn="stack")
    with pytest.raises(TypeError, match="map-style dataset"):
        DataLoader(iter(range(3)))
    loader = DataLoader(data, batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3


def test_pin_memory_warns_and_changes_nothing_as_torch_without_accelerator():
    data = TensorDataset(tensor(np.arange(4)))
    with pytest.warns(UserWarning, match="no accelerator is found"):
        pinned = [b.numpy().tolist() for (b,) in DataLoader(data, batch_size=3, pin_memory=True)]
    assert pinned == [[0, 1, 2], [3]]


def test_worker_init_fn_is_ignored_in_process_as_torch_does():
    calls = []
    loader = DataLoader(TensorDataset(tensor(np.arange(3))), worker_init_fn=calls.append)
    assert len(list(loader)) == 3 and calls == []
