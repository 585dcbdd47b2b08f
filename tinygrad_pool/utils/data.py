"""Datasets and batching, as ``torch.utils.data``: ``Dataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, ``random_split``, the samplers, ``default_collate`` and ``DataLoader``.

Loading happens in the calling process (``num_workers=0``); the batches are what PyTorch's
DataLoader yields for the same dataset — the same structure (a TensorDataset gives a *list* of
tensors, as torch's collate turns tuples into lists), values and dtypes — as Tensors that do not
require grad.

Shuffling draws from a NumPy ``Generator`` (``generator=``, or the package's default generator
that ``tinygrad_pool.manual_seed`` seeds), so a seeded run is reproducible and each epoch is a new
permutation; the order itself cannot equal torch's, whose generator is a different algorithm.

A TensorDataset (also inside Subsets, as ``random_split`` makes) is batched with one fancy index
per tensor per batch; other datasets are read sample by sample and collated, as in torch.
"""
import bisect
import collections.abc
import copy
import itertools
import math
import warnings

import numpy as np

from ..random import default_generator
from .. import unsupported
from ..tensor import Tensor

COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                 "lists; found {}")


def _check_generator(owner: str, generator) -> None:
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(f"{owner}: generator must be a numpy.random.Generator (e.g. from "
                        f"tinygrad_pool.manual_seed or np.random.default_rng) or None, got "
                        f"{type(generator).__name__}")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


# ---- datasets --------------------------------------------------------------------------------
class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; subclasses define ``__getitem__``
    and ``__len__``. ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other) -> "ConcatDataset":
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: the tensors are indexed along their first
    dimension, which must be the same for all."""

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor, got none")
        for position, tensor in enumerate(tensors):
            if not isinstance(tensor, Tensor):
                raise TypeError(f"TensorDataset: argument {position} must be a Tensor, got "
                                f"{type(tensor).__name__}")
            if tensor.ndim == 0:
                raise IndexError(f"TensorDataset: argument {position} is 0-dimensional; samples "
                                 f"are taken along the first dimension, so each tensor needs one")
        lengths = [tensor.shape[0] for tensor in tensors]
        if any(length != lengths[0] for length in lengths):
            # AssertionError is what torch raises here.
            raise AssertionError(f"Size mismatch between tensors: TensorDataset needs the same "
                                 f"first dimension in every tensor, got {lengths}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        if type(self).__getitem__ is not Subset.__getitem__ and \
                type(self).__getitems__ is Subset.__getitems__:
            # DataLoader reads a Subset through __getitems__: an override of __getitem__ alone
            # would be silently skipped (torch refuses this too).
            raise NotImplementedError(f"{type(self).__name__} overrides __getitem__ but not "
                                      f"__getitems__; override both")
        if isinstance(indices, (str, bytes)) or not (hasattr(indices, "__len__")
                                                     and hasattr(indices, "__getitem__")):
            raise TypeError(f"Subset: indices must be a sequence of ints, got "
                            f"{type(indices).__name__} {indices!r:.40}")
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of each dataset in turn; ``cumulative_sizes[k]`` counts those of the first
    ``k + 1`` datasets."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")  # torch's type
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if not _is_int(index):
            raise TypeError(f"ConcatDataset: index must be an int, got {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"ConcatDataset: index {index} is out of range for {len(self)} "
                             f"samples")
        index = index % len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None) -> list:
    """Split ``dataset`` into non-overlapping random Subsets of the given ``lengths``.

    Lengths are sample counts summing to ``len(dataset)``, or fractions summing to 1: each split
    then gets ``floor(fraction * len(dataset))`` samples and the remainder is dealt out one by
    one from the first split on (torch's rule). The permutation comes from ``generator`` (a NumPy
    Generator; default: the package's default generator).
    """
    _check_generator("random_split", generator)
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"random_split: lengths must be a sequence of sample counts or of "
                        f"fractions, got {type(lengths).__name__} {lengths!r:.40}")
    lengths = list(lengths)
    for index, length in enumerate(lengths):
        if isinstance(length, bool) or not isinstance(length, (int, float, np.integer,
                                                                np.floating)):
            raise TypeError(f"random_split: lengths[{index}] must be an int or a fraction, got "
                            f"{length!r}")
    size = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        for index, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {index} is not between 0 and 1")
        lengths = [math.floor(size * fraction) for fraction in lengths]
        for index in range(size - sum(lengths)):
            lengths[index % len(lengths)] += 1
        for index, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {index} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
    if sum(lengths) != size:
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(random_split: lengths {lengths} sum to {sum(lengths)}, the dataset "
                         f"has {size} samples)")
    for index, length in enumerate(lengths):
        if not _is_int(length) or length < 0:
            raise ValueError(f"random_split: lengths[{index}] must be a non-negative int (or "
                             f"all lengths fractions summing to 1), got {length!r}")
    order = (generator or default_generator()).permutation(size).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]


# ---- samplers: which indices, in which order -------------------------------------------------
class Sampler:
    """Iterates over dataset indices (subclasses define ``__iter__``, usually ``__len__``)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def _order(self) -> np.ndarray:
        return np.arange(len(self.data_source))

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random order each time it is iterated: a permutation (several, concatenated, when
    ``num_samples`` exceeds the dataset), or ``num_samples`` draws with replacement."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not _is_int(self.num_samples) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")
        _check_generator("RandomSampler", generator)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _order(self) -> np.ndarray:
        # The default generator is looked up now, so manual_seed after making the sampler counts.
        generator = self.generator or default_generator()
        size, count = len(self.data_source), self.num_samples
        if self.replacement:
            return generator.integers(size, size=count)
        whole, rest = divmod(count, size)
        return np.concatenate([generator.permutation(size) for _ in range(whole)]
                              + [generator.permutation(size)[:rest]])

    def __iter__(self):
        return iter(self._order().tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a fresh random order each time it is iterated."""

    def __init__(self, indices, generator=None):
        _check_generator("SubsetRandomSampler", generator)
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        order = (self.generator or default_generator()).permutation(len(self.indices))
        return (self.indices[i] for i in order.tolist())

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter,
    or dropped when ``drop_last``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        while True:
            batch = list(itertools.islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ---- collation: a list of samples -> one batch -----------------------------------------------
def _stack(arrays: list) -> np.ndarray:
    first = arrays[0].shape
    for entry, array in enumerate(arrays):
        if array.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(array.shape)} at entry {entry}")
    return np.stack(arrays)


def _collate_numbers(batch: list) -> Tensor:
    """Python numbers, as ``torch.tensor(batch)`` makes them: floats first -> float64 (collate's
    rule); ints first -> bool if all are bools, float32 (torch's default) if any is a float,
    else int64."""
    for entry, value in enumerate(batch):
        if not isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
            raise TypeError(f"default_collate: entry {entry} of a batch of numbers is a "
                            f"{type(value).__name__} ({value!r:.40})")
    if isinstance(batch[0], float):
        return Tensor(np.array(batch, dtype=np.float64))
    if all(isinstance(value, (bool, np.bool_)) for value in batch):
        return Tensor(np.array(batch, dtype=np.bool_))
    if any(isinstance(value, (float, np.floating)) for value in batch):
        return Tensor(np.array(batch, dtype=np.float32))
    try:
        return Tensor(np.array(batch, dtype=np.int64))
    except OverflowError:
        raise ValueError(f"default_collate: Overflow when unpacking long long: "
                         f"{max(batch, key=abs)} does not fit in int64") from None


def default_collate(batch):
    """Turn a list of samples into a batch, as ``torch.utils.data.default_collate``:

    Tensors and NumPy arrays -> one Tensor with a new leading dimension (dtype kept; shapes must
    match); NumPy scalars -> a Tensor of their dtype; Python floats -> float64, ints -> int64,
    bools -> bool; strings and bytes -> the list as it is; dicts -> the same keys, each collated;
    namedtuples -> the same type, field by field; tuples -> a *list*, position by position; lists
    -> a list (all samples the same length). Batches never require grad.
    """
    if len(batch) == 0:
        raise IndexError("default_collate: got an empty batch (a list of 0 samples)")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return Tensor(_stack([sample._data for sample in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(COLLATE_ERROR.format(elem.dtype))
        return Tensor(_stack([np.asarray(sample) for sample in batch]))
    if isinstance(elem, (np.bool_, np.number)):
        return Tensor(np.array(batch))
    if isinstance(elem, (int, float)):
        return _collate_numbers(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([sample[key] for sample in batch]) for key in elem}
        return _same_mapping_type(elem, collated)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # Each position goes on as the tuple zip makes (so strings inside stay a tuple, as torch's).
        collated = [default_collate(position) for position in zip(*batch)]
        if isinstance(elem, tuple):
            return collated  # torch's backwards-compatible choice: tuples become lists
        return _same_sequence_type(elem, collated)
    raise TypeError(COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """What a DataLoader with ``batch_size=None`` applies to each sample (torch's
    ``default_convert``): NumPy arrays and scalars -> Tensors, inside dicts, lists and tuples
    too (tuples -> lists); everything else unchanged."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "SaUO" else Tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return Tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping_type(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence_type(data, [default_convert(item) for item in data])
    return data


def _same_mapping_type(original, values: dict):
    """``values`` in a mapping of the original's type where it can be made (as torch does)."""
    try:
        if isinstance(original, collections.abc.MutableMapping):
            clone = copy.copy(original)  # keeps a defaultdict's factory, an OrderedDict's order
            clone.update(values)
            return clone
        return type(original)(values)
    except TypeError:
        return values


def _same_sequence_type(original, values: list):
    try:
        if isinstance(original, collections.abc.MutableSequence):
            clone = copy.copy(original)
            clone[:] = values
            return clone
        return type(original)(values)
    except TypeError:
        return values


# ---- the loader ------------------------------------------------------------------------------
def get_worker_info():
    """None: there are no worker processes (torch returns None in the main process too)."""
    return None


def _tensor_dataset_rows(dataset, indices):
    """``(TensorDataset, rows)`` when a batch can be cut from a TensorDataset's tensors with one
    fancy index each — looking through plain Subsets — else None (then samples are read one by
    one, and any bad index fails there exactly as ``dataset[i]`` would)."""
    rows = np.asarray(indices)
    while type(dataset) is Subset and rows.dtype.kind in "iu" and rows.ndim == 1:
        # Per batch, not per epoch: Subset.indices may be a long list (random_split's).
        rows = np.asarray([dataset.indices[i] for i in rows.tolist()])
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or rows.dtype.kind not in "iu" or rows.ndim != 1:
        return None
    size = len(dataset)
    if rows.size == 0 or rows.min() < -size or rows.max() >= size:
        return None
    return dataset, rows


class DataLoader:
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    ``batch_size`` samples per batch (the last one shorter unless ``drop_last``; ``None``: no
    batching, each sample goes through ``default_convert``), in order, or in a new random order
    each epoch with ``shuffle=True`` (drawn from ``generator``, a NumPy Generator, or the
    package's default generator), or as a ``sampler`` / ``batch_sampler`` gives the indices.
    ``collate_fn`` (default ``default_collate``) makes each batch from its samples.

    Everything is loaded in this process: ``num_workers`` must be 0, and the options that only
    configure worker processes (``timeout``, ``prefetch_factor``, ``persistent_workers``,
    ``multiprocessing_context``) are refused as torch refuses them at ``num_workers=0``;
    ``worker_init_fn`` and ``in_order`` are ignored as torch ignores them there.
    ``pin_memory=True`` warns and does nothing, as torch on a machine without an accelerator.
    """

    _FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
              "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader: dataset must be a map-style dataset (with __getitem__ "
                            f"and __len__), got {type(dataset).__name__}; iterable-style "
                            f"datasets are not supported")
        if not _is_int(num_workers):
            raise TypeError(f"DataLoader: num_workers must be an int, got {num_workers!r}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers > 0:
            raise ValueError(f"DataLoader: num_workers={num_workers} is not supported: "
                             f"tinygrad_pool loads every batch in the calling process; pass "
                             f"num_workers=0 (the batches are the same)")
        if timeout != 0:
            raise ValueError(f"DataLoader: timeout={timeout!r} only applies to worker processes; "
                             f"with num_workers=0 it must be 0")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. "
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            raise ValueError(f"multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable or None, got "
                            f"{type(collate_fn).__name__}")
        _check_generator("DataLoader", generator)
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
            if value is not None and (isinstance(value, (str, bytes))
                                      or not hasattr(value, "__iter__")):
                raise TypeError(f"DataLoader: {name} must be an iterable of indices (a Sampler) "
                                f"or None, got {type(value).__name__} {value!r:.40}")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._initialized = True

    def __setattr__(self, name, value):
        if name in self._FIXED and getattr(self, "_initialized", False):
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def __len__(self) -> int:
        return len(self.batch_sampler if self._auto_collation else self.sampler)

    def __iter__(self):
        if self.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        return self._batches() if self._auto_collation else self._samples()

    def _samples(self):
        for index in self.sampler:
            yield self.collate_fn(self.dataset[index])

    def _batches(self):
        for indices in self._index_batches():
            yield self._fetch(indices)

    def _index_batches(self):
        """Each batch's indices. The built-in samplers give one index array per epoch, sliced
        per batch (no Python int per sample); any other sampler is iterated as it is."""
        batch_sampler = self.batch_sampler
        if type(batch_sampler) is BatchSampler and \
                type(batch_sampler.sampler) in (SequentialSampler, RandomSampler):
            order, size = batch_sampler.sampler._order(), batch_sampler.batch_size
            end = len(order) - len(order) % size if batch_sampler.drop_last else len(order)
            for start in range(0, end, size):
                yield order[start:start + size]
        else:
            yield from batch_sampler

    def _fetch(self, indices):
        if self.collate_fn is default_collate:
            found = _tensor_dataset_rows(self.dataset, indices)
            if found is not None:
                # default_collate of the samples, without making them: a tuple of tensors
                # collates to a list of stacked rows, i.e. each tensor indexed by the batch.
                dataset, rows = found
                return [Tensor(tensor._data[rows]) for tensor in dataset.tensors]
        if isinstance(indices, np.ndarray):
            indices = indices.tolist()  # datasets get Python ints, as torch gives them
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            samples = getitems(indices)
        else:
            samples = [self.dataset[index] for index in indices]
        return self.collate_fn(samples)


__getattr__ = unsupported.module_getattr("tinygrad_pool.utils.data", "torch.utils.data")
