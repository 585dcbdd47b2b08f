"""Memory reused from step to step: one pool of blocks, and leases that say when a block is free.

Writing into fresh memory costs a page fault per 4 KiB, which made allocating a large array as
slow as the arithmetic done in it (measured: see benchmarks/README.md). A training loop asks
for the same sizes every step, so the kernels take their large arrays here — temporaries (the
im2col columns, the padded input), what ops save for backward, the gradients and outputs they
make — and in a steady loop these come back step after step instead of from fresh memory.
This is a private matter of ``fast/``: the engine never asks whether an array came from here.

THE INVARIANT: an array that anything can still reach is never handed out again.
  - The pool keeps *blocks* (1-D byte arrays). ``take`` hands out a view of a block through a
    *lease*: a small ctypes array over the block's bytes, which NumPy keeps as the ``base`` of
    the view and of every view made from it (a reshape, a user's ``.numpy()``, ``.grad``, a
    saved tensor). The block is free again only when its lease is deallocated — that is, when
    no array made from it is left anywhere — which a weak reference to the lease reports.
    Nothing is counted and nothing is given back by hand, so nothing can be given back too
    early, on any Python (CPython 3.14's uncounted borrowed references included: an object
    is deallocated only once nothing refers to it, however references are counted).
  - So a block is in one holder's hands at a time: a temporary until its op returns, a saved
    buffer until backward releases the node, a gradient until the op it fed has used it, an
    output until its tensor and every view of it are gone.
tests/test_scratch.py holds references of every kind across many training steps and checks
that none of them changes.

What keeps the pool small:
  - any block serves any shape and dtype that fills at least half of it (the smallest free
    one that fits): the forward's activations, freed during backward, make the backward's
    gradients, and a step needs about as many blocks as it has large arrays alive at once;
  - past MAX_KEPT_BYTES in all, the free blocks handed out longest ago are dropped;
  - per thread, so two threads never share one;
  - nothing here changes malloc, or anything else for the whole process.
"""
import bisect
import ctypes
import itertools
import math
import threading
import weakref

import numpy as np

_per_thread = threading.local()  # each thread its own pool

SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free
# All blocks of one thread together; past it, the free blocks handed out longest ago go first
# (a program that runs many input sizes must not pile up blocks for each).
MAX_KEPT_BYTES = 256 << 20


class _Block:
    """One block of memory; ``free`` turns True when the lease on it is deallocated."""

    __slots__ = ("memory", "size", "stamp", "free", "watch", "lease_type")

    def __init__(self, size: int, stamp: int):
        self.memory = np.empty(size, dtype=np.uint8)
        self.size, self.stamp, self.free, self.watch = size, stamp, True, None
        self.lease_type = ctypes.c_uint8 * size

    def lease(self, shape, dtype, stamp: int) -> np.ndarray:
        """An array over this block, which is in use until the array and every view of it
        are gone."""
        lease = self.lease_type.from_buffer(self.memory)
        self.free, self.stamp = False, stamp
        self.watch = weakref.ref(lease, self._returned)
        return np.ndarray(shape, dtype, buffer=lease)

    def _returned(self, _watch) -> None:
        self.free = True


class _Pool:
    """One thread's blocks, smallest first, with their sizes beside them (for bisect)."""

    def __init__(self):
        self.blocks, self.sizes = [], []
        self.clock = itertools.count()


def _pool() -> _Pool:
    pool = getattr(_per_thread, "pool", None)
    if pool is None:
        pool = _per_thread.pool = _Pool()
    return pool


def _blocks() -> list:
    """This thread's blocks, smallest first."""
    return _pool().blocks


def take(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array: over the smallest free block that it fills at least
    half of, else over a new block, kept from now on. Small arrays (under SCRATCH_MIN_BYTES)
    are plain np.empty."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < SCRATCH_MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    pool = _pool()
    blocks, sizes = pool.blocks, pool.sizes
    k, end, most = bisect.bisect_left(sizes, nbytes), len(sizes), 2 * nbytes
    while k < end and sizes[k] <= most:
        if blocks[k].free:
            return blocks[k].lease(shape, dtype, next(pool.clock))
        k += 1
    if _drop_free_blocks(pool, sum(sizes) + nbytes - MAX_KEPT_BYTES):
        return np.empty(shape, dtype=dtype)  # over the budget even so: not kept, malloc's
    block = _Block(nbytes, next(pool.clock))
    k = bisect.bisect_right(sizes, nbytes)
    blocks.insert(k, block)
    sizes.insert(k, nbytes)
    return block.lease(shape, dtype, block.stamp)


def _drop_free_blocks(pool: _Pool, excess: int) -> bool:
    """Forget free blocks, the one handed out longest ago first, until ``excess`` bytes went;
    True if that many could not go."""
    if excess <= 0:
        return False
    for block in sorted([b for b in pool.blocks if b.free], key=lambda b: b.stamp):
        k = pool.blocks.index(block)
        del pool.blocks[k]
        excess -= pool.sizes.pop(k)
        if excess <= 0:
            return False
    return True


def zeros(shape, dtype) -> np.ndarray:
    """np.zeros for arrays that are then scatter-added into (col2im, max-pool backward).

    From the pool. Not np.zeros: that gets its memory from calloc, already-zero pages the
    kernel maps in lazily, so the first "+=" into each 4 KiB page faults twice (read, then
    write), at random places for a scatter, which made zeros-then-scatter much slower than
    the scatter itself (measured: see benchmarks/README.md). Filling an empty array touches
    each page once, in order.
    """
    array = take(shape, dtype)
    array.fill(0)
    return array


def idle_bytes() -> int:
    """What this thread's pool holds that nothing uses now: memory kept for the next step,
    which benchmarks/ counts beside a step's peak."""
    return sum([block.size for block in _blocks() if block.free])


# The unsigned integer type of each float width, to read a float array's bits through.
_BITS = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def where(condition, a, b):
    """``np.where(condition, a, b)``. Where one side is +0 and the other a large float array of
    the condition's shape — a gradient masked, as ReLU's and clamp's are — the same numbers,
    bit for bit, come from multiplying that array's *bits* by the condition: its own bits
    where it is kept (an inf or a nan too), 0, the bits of +0, where not; as np.where gives
    and torch's threshold_backward. (Multiplying the floats would give inf·0 = nan and -0.)
    Into a pool block, free again once the engine has used the gradient (and never while
    anyone holds it). np.where takes a branch per element and writes fresh memory that
    faults; the product has neither (measured: see benchmarks/README.md). Anything else goes
    to np.where.
    """
    # (the size first: on a few numbers, np.where is as fast, and the checks would cost more)
    if type(condition) is np.ndarray and condition.size >= _MASKED_MIN_SIZE \
            and condition.dtype == bool:
        if _is_plus_zero(b) and _maskable(a, condition, b):
            return _bits_times(a, condition)
        if _is_plus_zero(a) and _maskable(b, condition, a):
            return _bits_times(b, ~condition)
    return np.where(condition, a, b)


_MASKED_MIN_SIZE = SCRATCH_MIN_BYTES // 8  # numbers: the smallest float64 array the pool takes


def _is_plus_zero(value) -> bool:
    return type(value) is np.ndarray and value.ndim == 0 and value == 0 and not np.signbit(value)


def _maskable(values, condition, zero) -> bool:
    return (type(values) is np.ndarray and values.dtype.kind == "f" and values.shape == condition.shape
            and values.nbytes >= SCRATCH_MIN_BYTES and values.dtype.itemsize in _BITS
            and np.result_type(values, zero) == values.dtype)


def _bits_times(values, keep):
    bits = _BITS[values.dtype.itemsize]
    out = take(values.shape, values.dtype)  # a gradient: free again once the engine used it
    np.multiply(values.view(bits), keep, out=out.view(bits))
    return out


def output_like(x: np.ndarray):
    """``take`` in ``x``'s memory order (np.empty_like's), for a ufunc's ``out=``: the
    output of a convolution is a transposed view, and ReLU's output then follows it. None (the
    ufunc allocates) for a small array, which malloc serves from its free lists."""
    if x.nbytes < SCRATCH_MIN_BYTES:
        return None
    if x.flags.c_contiguous:
        return take(x.shape, x.dtype)
    order = sorted(range(x.ndim), key=lambda axis: -x.strides[axis])  # outermost axis first
    if not x.transpose(order).flags.c_contiguous:  # not a permuted contiguous array
        return np.empty_like(x)
    buffer = take(tuple([x.shape[axis] for axis in order]), x.dtype)
    return buffer.transpose(np.argsort(order))
