"""Datasets and batching, as ``torch.utils.data``: ``Dataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, ``random_split``, the samplers, ``default_collate`` and ``DataLoader``.

The batches are what PyTorch's DataLoader yields for the same dataset — the same structure (a
TensorDataset gives a *list* of tensors, as torch's collate turns tuples into lists), values and
dtypes — as Tensors that do not require grad. They are loaded in the calling process
(``num_workers=0``) or, as torch does, by ``num_workers`` worker processes: the main process
draws the order and sends each worker the indices of its batches, and puts the batches the
workers send back into that order, so they are the same batches either way.

Shuffling draws from ``generator=`` (a ``tinygrad_pool.Generator`` or a NumPy ``Generator``) or
the package's default generator that ``tinygrad_pool.manual_seed`` seeds, so a seeded run is
reproducible and each epoch is a new permutation; the order itself cannot equal torch's, whose
generator is a different algorithm.

A TensorDataset (also inside Subsets, as ``random_split`` makes) is batched with one fancy index
per tensor per batch; other datasets are read sample by sample and collated, as in torch.
"""
import atexit
import bisect
import collections.abc
import copy
import dataclasses
import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import random
import sys
import time
import traceback
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ..random import check_generator, default_generator, manual_seed
from .. import unsupported
from ..engine import Tensor

COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                 "lists; found {}")


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
    one from the first split on (torch's rule). The permutation comes from ``generator`` (a
    Generator or a NumPy Generator; default: the package's default generator).
    """
    check_generator("random_split", generator)
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
        check_generator("RandomSampler", generator)

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
        check_generator("SubsetRandomSampler", generator)
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
        return Tensor._make(np.array(batch, dtype=np.float64), None)
    if all(isinstance(value, (bool, np.bool_)) for value in batch):
        return Tensor._make(np.array(batch, dtype=np.bool_), None)
    if any(isinstance(value, (float, np.floating)) for value in batch):
        return Tensor._make(np.array(batch, dtype=np.float32), None)
    try:
        return Tensor._make(np.array(batch, dtype=np.int64), None)
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
        return Tensor._make(_stack([sample._data for sample in batch]), None)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(COLLATE_ERROR.format(elem.dtype))
        return Tensor._make(_stack([np.asarray(sample) for sample in batch]), None)
    if isinstance(elem, (np.bool_, np.number)):
        return Tensor._make(np.array(batch), None)
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
        return data if data.dtype.kind in "SaUO" else Tensor._make(np.array(data), None)
    if isinstance(data, (np.bool_, np.number)):
        return Tensor._make(np.array(data), None)
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


def _read_samples(dataset, indices: list) -> list:
    getitems = getattr(dataset, "__getitems__", None)
    if callable(getitems):
        return getitems(indices)
    return [dataset[index] for index in indices]


def _fetch(dataset, collate_fn, indices, read_samples=_read_samples):
    """The batch of the samples at ``indices``, collated (in the main process or a worker)."""
    if collate_fn is default_collate:
        found = _tensor_dataset_rows(dataset, indices)
        if found is not None:
            # default_collate of the samples, without making them: a tuple of tensors
            # collates to a list of stacked rows, i.e. each tensor indexed by the batch.
            dataset, rows = found
            return [Tensor._make(tensor._data[rows], None) for tensor in dataset.tensors]
    if isinstance(indices, np.ndarray):
        indices = indices.tolist()  # datasets get Python ints, as torch gives them
    return collate_fn(read_samples(dataset, indices))


def _index_batches(batch_sampler):
    """Each batch's indices. The built-in samplers give one index array per epoch, sliced per
    batch (no Python int per sample); any other sampler is iterated as it is."""
    if type(batch_sampler) is BatchSampler and \
            type(batch_sampler.sampler) in (SequentialSampler, RandomSampler):
        order, size = batch_sampler.sampler._order(), batch_sampler.batch_size
        end = len(order) - len(order) % size if batch_sampler.drop_last else len(order)
        for start in range(0, end, size):
            yield order[start:start + size]
    else:
        yield from batch_sampler


def _draw_base_seed(generator) -> int:
    """The seed of an iterator's workers (worker i seeds itself with it + i), drawn from the
    loader's generator when the iterator is made, as torch draws it — without workers too, so
    that a seeded shuffle gives the same order with and without workers."""
    return int((generator or default_generator()).integers(2 ** 63))


def _start_method_context(context):
    """``multiprocessing_context=`` as torch takes it: None (the default: fork, the start method
    torch gets on Linux, where the platform has it), a start method's name, or a context."""
    if context is None:
        return multiprocessing.get_context(_DEFAULT_START_METHOD)
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context={context!r}")
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={context}")
    return context


_DEFAULT_START_METHOD = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


class DataLoader:
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    ``batch_size`` samples per batch (the last one shorter unless ``drop_last``; ``None``: no
    batching, each sample goes through ``default_convert``), in order, or in a new random order
    each epoch with ``shuffle=True`` (drawn from ``generator``, a Generator or a NumPy
    Generator, or the package's default generator), or as a ``sampler`` / ``batch_sampler``
    gives the indices. ``collate_fn`` (default ``default_collate``) makes each batch from its
    samples.

    ``num_workers=0`` loads in this process; the options that only configure worker processes
    (``timeout``, ``prefetch_factor``, ``persistent_workers``, ``multiprocessing_context``) are
    then refused as torch refuses them, and ``worker_init_fn`` is ignored. ``num_workers > 0``
    starts that many worker processes (``multiprocessing_context``, default fork) for each
    iteration (once, with ``persistent_workers``): they load ``prefetch_factor`` batches each
    ahead, and the batches come in the sampler's order (``in_order=False``: as they are
    ready), the same batches as without workers. Worker i calls ``worker_init_fn(i)`` first
    and is seeded as torch seeds it: ``seed = base_seed + i`` seeds ``random`` and the
    package's default generator, and NumPy's global generator gets torch's words for it;
    ``get_worker_info()`` tells its id, ``num_workers``, ``seed`` and ``dataset``. An error in
    a worker is raised again here, of its type, naming the dataset item and carrying the
    worker's traceback; ``timeout`` (seconds, 0: none) bounds the wait for each batch.
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
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"DataLoader: timeout must be a number of seconds, got {timeout!r}")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0:
            if timeout != 0:
                raise ValueError(f"DataLoader: timeout={timeout!r} only applies to worker "
                                 f"processes; with num_workers=0 it must be 0")
            if prefetch_factor is not None:
                raise ValueError("prefetch_factor option could only be specified in "
                                 "multiprocessing. let num_workers > 0 to enable "
                                 "multiprocessing, otherwise set prefetch_factor to None.")
            if persistent_workers:
                raise ValueError("persistent_workers option needs num_workers > 0")
            if multiprocessing_context is not None:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers={num_workers}")
        else:
            prefetch_factor = 2 if prefetch_factor is None else prefetch_factor
            if not _is_int(prefetch_factor):
                raise TypeError(f"DataLoader: prefetch_factor must be an int, got "
                                f"{prefetch_factor!r}")
            if prefetch_factor < 0:
                raise ValueError("prefetch_factor option should be non-negative")
            if prefetch_factor == 0:  # (torch accepts it here and fails when iterating)
                raise ValueError("DataLoader: prefetch_factor must be greater than 0 with "
                                 "num_workers > 0, got 0")
            if multiprocessing_context is not None:
                multiprocessing_context = _start_method_context(multiprocessing_context)
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader: worker_init_fn must be callable or None, got "
                            f"{type(worker_init_fn).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable or None, got "
                            f"{type(collate_fn).__name__}")
        check_generator("DataLoader", generator)
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
        self._iterator = None  # the persistent workers' iterator, once made
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
        if self.num_workers == 0:
            _draw_base_seed(self.generator)  # unused here, drawn as with workers (see there)
            return self._batches() if self._auto_collation else self._samples()
        if not self.persistent_workers:
            return _WorkerIterator(self)
        if self._iterator is None or not self._iterator.running:
            self._iterator = _WorkerIterator(self)
        else:
            self._iterator.start_epoch(self)
        return self._iterator

    def _samples(self):
        for index in self.sampler:
            yield self.collate_fn(self.dataset[index])

    def _batches(self):
        dataset, collate_fn = self.dataset, self.collate_fn
        for indices in _index_batches(self.batch_sampler):
            yield _fetch(dataset, collate_fn, indices)


# ---- worker processes ------------------------------------------------------------------------
# A worker gets the indices of its batches on a queue of its own (put without blocking: the
# main process never waits on a worker that is busy sending) and sends each batch back on a pipe
# of its own, pickled in the worker, so a batch that does not pickle is an error of that batch.
_POLL_SECONDS = 5.0  # how often an idle worker checks that the main process still exists
_SHUTDOWN_SECONDS = 5.0  # how long stopping workers get before they are terminated
_END = object()  # what next() gives for a sampler that is done


@dataclasses.dataclass(frozen=True)
class _WorkerInfo:
    """What ``get_worker_info()`` tells the code running in a worker (torch's WorkerInfo)."""
    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """In a DataLoader worker process, a frozen record of its ``id``, ``num_workers``, ``seed``
    and ``dataset`` (this process's copy), e.g. to give each worker its share of the data or
    to seed another library; None in the main process (torch's ``get_worker_info``)."""
    return _worker_info


def _numpy_worker_seed(base_seed: int, worker_id: int) -> list:
    """The four 32-bit words that seed NumPy's global generator in worker ``worker_id``:
    torch's recipe (``_generate_state``: NumPy's SeedSequence hash of ``[worker_id, low and
    high halves of base_seed, 0]``), so ``np.random`` differs between workers and from
    ``random``, which is seeded with ``base_seed + worker_id``."""
    mask = 0xFFFFFFFF
    multiplier = 0x43B0D7E5

    def hashed(value: int) -> int:
        nonlocal multiplier
        value = (value ^ multiplier) & mask
        multiplier = (multiplier * 0x931E8875) & mask
        value = (value * multiplier) & mask
        return value ^ (value >> 16)

    def mixed(x: int, y: int) -> int:
        value = (0xCA01F9DD * x - 0x4973F715 * y) & mask
        return value ^ (value >> 16)

    pool = [hashed(value) for value in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for source in range(4):  # every word mixed into every other, so each affects all
        for target in range(4):
            if source != target:
                pool[target] = mixed(pool[target], hashed(pool[source]))
    words, multiplier = [], 0x8B51F9DD
    for value in pool:
        value = (value ^ multiplier) & mask
        multiplier = (multiplier * 0x58F38DED) & mask
        value = (value * multiplier) & mask
        words.append(value ^ (value >> 16))
    return words


class _KeyErrorMessage(str):
    """A KeyError shows ``repr`` of its message: this one shows the text, traceback included."""

    def __repr__(self) -> str:
        return str(self)


def _picklable_type(kind: type) -> type:
    """``kind``, or its nearest base class that pickles (a class made inside a function does
    not), to be raised in the main process."""
    for base in kind.__mro__:
        try:
            pickle.dumps(base)
            return base
        except Exception:  # (PicklingError, AttributeError: pickling a class looks it up)
            continue
    return RuntimeError


class _WorkerError:
    """An exception raised in a worker, carried to the main process and raised there (torch's
    ExceptionWrapper): its type, and its traceback as text, which is all of it that pickles."""

    def __init__(self, where: str):
        kind, error, trace = sys.exc_info()
        self.name = kind.__name__
        self.kind = _picklable_type(kind)
        self.text = "".join(traceback.format_exception(kind, error, trace))
        self.where = where

    def reraise(self):
        message = f"Caught {self.name} {self.where}.\nOriginal {self.text}"
        if self.kind is KeyError:
            message = _KeyErrorMessage(message)
        try:
            error = self.kind(message)
        except Exception:  # an exception type that needs other arguments
            raise RuntimeError(message) from None
        try:
            raise error
        finally:
            del error  # (else this frame and the error's traceback would hold each other)


def _items(indices) -> str:
    """'dataset item 7', or 'dataset items [3, 1, 4]' (the first few of a long batch)."""
    if isinstance(indices, np.ndarray):
        indices = indices.tolist()
    if not isinstance(indices, list):
        return f"dataset item {indices!r}"
    shown = ", ".join(map(repr, indices[:8])) + (", ..." if len(indices) > 8 else "")
    return f"dataset items [{shown}]"


class _WorkerFetcher:
    """Loads a worker's batches as the main process would, noting which item it is reading,
    so that an error names it."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, worker_id: int):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        self.where = f"in DataLoader worker process {worker_id}"
        self.reading = None  # the item (or the items, to __getitems__) being read

    def read_samples(self, dataset, indices: list) -> list:  # _fetch's, one item at a time
        self.reading = indices
        getitems = getattr(dataset, "__getitems__", None)
        if callable(getitems):
            samples = getitems(indices)
        else:
            samples = []
            for index in indices:
                self.reading = index
                samples.append(dataset[index])
        self.reading = None
        return samples

    def load(self, indices):
        """The batch at ``indices`` (a sample's index without auto-collation), or the error
        that loading it raised."""
        try:
            if self.auto_collation:
                return _fetch(self.dataset, self.collate_fn, indices, self.read_samples)
            self.reading = indices
            sample = self.dataset[indices]
            self.reading = None
            return self.collate_fn(sample)
        except Exception:
            if self.reading is None:
                stage = f"while collating {_items(indices)}"
            else:
                stage = f"while loading {_items(self.reading)}"
            self.reading = None
            return _WorkerError(f"{self.where} {stage}")


def _worker_loop(dataset, auto_collation, collate_fn, tasks, results, stopping, base_seed,
                 worker_init_fn, worker_id, num_workers, inherited_results):
    """A worker process: seeded as torch seeds its workers, it loads each batch whose indices
    arrive on ``tasks`` and sends it back on ``results`` with its epoch and position, until
    it gets None."""
    global _worker_info
    for pipe in inherited_results:
        # fork copied the main process's reading ends: closed, a send fails once the main
        # process is gone, instead of blocking forever
        pipe.close()
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_numpy_worker_seed(base_seed, worker_id))
    _worker_info = _WorkerInfo(worker_id, num_workers, seed, dataset)
    fetcher = _WorkerFetcher(dataset, auto_collation, collate_fn, worker_id)
    failure = None
    if worker_init_fn is not None:
        try:
            worker_init_fn(worker_id)
        except Exception:
            failure = _WorkerError(f"{fetcher.where} in worker_init_fn")
    parent = os.getppid()
    try:
        while os.getppid() == parent:  # (a main process that died leaves its workers orphans)
            try:
                task = tasks.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            if task is None:
                break
            if stopping.is_set():
                continue  # the tasks left are skipped until None
            epoch, position, indices = task
            batch = failure if failure is not None else fetcher.load(indices)
            try:
                message = ForkingPickler.dumps((epoch, position, batch))
            except Exception:  # the batch does not pickle: an error of that batch
                message = ForkingPickler.dumps((epoch, position, _WorkerError(
                    f"{fetcher.where} while sending the batch of {_items(indices)} to the main "
                    f"process")))
            try:
                results.send_bytes(message)  # (what results.send does, once it has pickled)
            except OSError:  # the main process closed its end, or is gone
                break
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group; the main process handles it
    results.close()


class _WorkerPool:
    """A DataLoader iterator's worker processes and the channels to them.

    Kept in ``_RUNNING_POOLS`` until stopped: an iterator dropped inside a reference cycle is
    finalized by the garbage collector after its queues' own clean-up has already run, and
    the stop signals would never leave; held here, the queues outlive the iterator's
    ``__del__``, which stops the pool.
    """

    def __init__(self, loader: "DataLoader", base_seed: int):
        self.running = False  # (until there are workers to stop)
        self._owner = os.getpid()  # a forked copy of this object must not stop the workers
        context = _start_method_context(loader.multiprocessing_context)
        self.size = loader.num_workers
        self._timeout = loader.timeout
        self._stopping = context.Event()
        self._tasks, self._results, self._processes = [], [], []
        self.running = True
        _RUNNING_POOLS.add(self)
        try:
            for worker_id in range(self.size):
                self._start(context, loader, base_seed, worker_id)
        except BaseException:  # (spawn: a dataset that does not pickle) no worker left behind
            self.stop()
            raise

    def _start(self, context, loader: "DataLoader", base_seed: int, worker_id: int) -> None:
        tasks = context.Queue()
        tasks.cancel_join_thread()  # exiting never waits for tasks no worker will read
        results, sender = context.Pipe(duplex=False)
        self._tasks.append(tasks)
        self._results.append(results)
        inherited = list(self._results) if context.get_start_method() == "fork" else []
        process = context.Process(
            target=_worker_loop, name=f"DataLoader worker {worker_id}", daemon=True,
            args=(loader.dataset, loader._auto_collation, loader.collate_fn, tasks, sender,
                  self._stopping, base_seed, loader.worker_init_fn, worker_id, self.size,
                  inherited))
        process.start()
        sender.close()  # the worker has its own copy
        self._processes.append(process)

    def send(self, worker_id: int, task) -> None:
        self._tasks[worker_id].put(task)

    def receive(self) -> list:
        """The messages of the workers that have one (waiting for one); RuntimeError if a
        worker died or ``timeout`` passed first."""
        exits = [process.sentinel for process in self._processes]
        ready = multiprocessing.connection.wait(self._results + exits, self._timeout or None)
        if not ready:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        messages = []
        for pipe in ready:
            if pipe not in exits:
                try:
                    messages.append(pipe.recv())
                except (EOFError, OSError):  # a worker that died while sending: found below
                    pass
        dead = [] if messages else [process for process in self._processes
                                    if not process.is_alive()]  # (asked only when none came)
        if dead:
            self.stop()
            raise RuntimeError(f"DataLoader worker (pid(s) "
                               f"{', '.join(str(process.pid) for process in dead)}) exited "
                               f"unexpectedly (exit code(s) "
                               f"{', '.join(str(process.exitcode) for process in dead)})")
        return messages

    def stop(self) -> None:
        """Stop the workers: each finishes the item it is on and exits; what they still send
        is read and dropped, so none stays blocked sending, and any still running after
        ``_SHUTDOWN_SECONDS`` is terminated."""
        if not self.running or os.getpid() != self._owner:
            return
        self.running = False
        self._stopping.set()
        for tasks in self._tasks:
            tasks.put(None)
        pipes = list(self._results)
        deadline = time.monotonic() + _SHUTDOWN_SECONDS
        while time.monotonic() < deadline:
            alive = [process for process in self._processes if process.is_alive()]
            if not alive:
                break
            ready = multiprocessing.connection.wait(
                pipes + [process.sentinel for process in alive], deadline - time.monotonic())
            for pipe in ready:
                if pipe in pipes:
                    try:
                        pipe.recv()
                    except (EOFError, OSError):
                        pipes.remove(pipe)
        for process in self._processes:
            if process.is_alive():
                process.terminate()
            process.join()
        for pipe in self._results:
            pipe.close()
        for tasks in self._tasks:
            tasks.close()
        _RUNNING_POOLS.discard(self)


_RUNNING_POOLS = set()  # (see _WorkerPool)


@atexit.register
def _stop_workers_at_exit() -> None:
    # registered after multiprocessing's own exit handler, so run before it terminates
    # whatever daemon processes are left
    for pool in list(_RUNNING_POOLS):
        pool.stop()


class _WorkerIterator:
    """A DataLoader's batches, loaded by its worker processes.

    Batch k of an epoch goes to worker k mod num_workers; ``prefetch_factor`` batches per
    worker are asked for ahead. Each comes back tagged with its epoch and position: batches
    are yielded in the sampler's order (``in_order=False``: as they arrive), and what is left
    of an epoch that persistent workers did not finish is dropped.
    """

    def __init__(self, loader: "DataLoader"):
        self._pool = None
        self._ahead = loader.prefetch_factor * loader.num_workers
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._epoch = 0
        self._pool = _WorkerPool(loader, _draw_base_seed(loader.generator))
        self.start_epoch(loader)

    @property
    def running(self) -> bool:
        return self._pool.running

    def start_epoch(self, loader: "DataLoader") -> None:
        """A fresh pass over the loader's sampler, its first batches asked for."""
        self._epoch += 1
        self._indices = (_index_batches(loader.batch_sampler) if loader._auto_collation
                         else iter(loader.sampler))
        self._sent = self._yielded = 0
        self._arrived = {}
        for _ in range(self._ahead):
            self._send_next()

    def _send_next(self) -> None:
        indices = next(self._indices, _END)
        if indices is not _END:
            self._pool.send(self._sent % self._pool.size, (self._epoch, self._sent, indices))
            self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._yielded == self._sent:  # every batch of the epoch is out
                if not self._persistent:
                    self._pool.stop()
                raise StopIteration
            position = self._yielded if self._in_order else next(iter(self._arrived), None)
            if position in self._arrived:
                break
            for epoch, at, loaded in self._pool.receive():
                if epoch == self._epoch:
                    self._arrived[at] = loaded
        batch = self._arrived.pop(position)
        self._yielded += 1
        self._send_next()
        if isinstance(batch, _WorkerError):
            batch.reraise()
        return batch

    def __del__(self):
        if self._pool is not None:
            self._pool.stop()


def _rebuild_tensor(array: np.ndarray, requires_grad: bool) -> Tensor:
    tensor = Tensor._make(array, None)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _reduce_tensor(tensor: Tensor):
    """How multiprocessing pickles a Tensor (batches, and a dataset given to spawned workers):
    as its array alone — not the graph that made it, nor the whole base a view was cut from."""
    if tensor.requires_grad and tensor.grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries. If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    return _rebuild_tensor, (tensor._data, tensor.requires_grad)


ForkingPickler.register(Tensor, _reduce_tensor)


__getattr__ = unsupported.module_getattr("tinygrad_pool.utils.data", "torch.utils.data")
