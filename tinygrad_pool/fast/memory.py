"""Memory the engine reuses from step to step: one pool of blocks, and the reference counts
that decide when a block is free.

Writing into fresh memory costs a page fault per 4 KiB; on the machines we measured that made
allocating a large array as slow as the arithmetic done in it. A training loop asks for the
same sizes every step, so the ops take their large arrays here — temporaries (the im2col
columns, the padded input, the pooling phase copy), what they save for backward (the columns,
max-pool's argmax), the gradients they make (ReLU, max-pool, conv) and their outputs (conv,
ReLU, max-pool) — and in a steady training loop these come back step after step instead of
from fresh memory.

THE INVARIANT: an array that anything outside the engine can reach is never reused.
  - The pool keeps *blocks* (1-D byte arrays). Every array ``take`` hands out is a view of one
    block, and every view — a view of that view, a reshape, a user's ``.data``, ``.grad``,
    ``.numpy()``, a saved tensor, an array from ``saved_for_backward()`` — holds a reference
    to its block (NumPy's ``base``). A block is handed out again only when CPython's exact
    reference count shows that nothing but the pool refers to it: no array made from it is
    left anywhere. Nothing is given back by hand, so nothing can be given back too early;
    where the count is not exact (other interpreters, 3.14+) the pool keeps nothing.
  - So a block is in one holder's hands at a time, and it is free again the moment its last
    view goes: a temporary when its op returns, a saved buffer when backward releases the
    node, a gradient once the op it fed has used it, an output once its tensor and every view
    of it are gone.
tests/test_scratch.py holds references of every kind across many training steps and checks
that none of them changes.

What keeps the pool small:
  - any block serves any shape and dtype that fills at least half of it (the smallest free
    one that fits): the forward's activations, freed during backward, make the backward's
    gradients, and a step needs about as many blocks as it has large arrays alive at once;
    "at least half" is where the kept bytes came out lowest (a looser rule reuses blocks
    poorly filled, a stricter one makes more blocks; measured: see benchmarks/README.md);
  - past MAX_KEPT_BYTES in all, the free blocks handed out longest ago are dropped;
  - per thread, so two threads never share one;
  - nothing here changes malloc, or anything else for the whole process.
"""
import bisect
import itertools
import math
import sys
import threading

import numpy as np

_per_thread = threading.local()  # each thread its own pool

SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free
# All blocks of one thread together; past it, the free blocks handed out longest ago go first
# (a program that runs many input sizes must not pile up blocks for each).
MAX_KEPT_BYTES = 256 << 20

# The references to a block when only the pool has it: the pool's list and getrefcount's own
# argument. CPython 3.14 may leave borrowed references uncounted, so there and on other
# interpreters the pool keeps nothing.
_CAN_COUNT_REFERENCES = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
_FREE = 2


class _Pool:
    """One thread's blocks, smallest first; ``sizes`` beside them (for bisect), and when each
    was last handed out (``stamps``, to drop the free ones used longest ago first)."""

    def __init__(self):
        self.blocks, self.sizes, self.stamps = [], [], []
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
    """An uninitialised C-contiguous array: a view of the smallest free block that it fills at
    least half of, else of a new block, kept from now on. Small arrays (under
    SCRATCH_MIN_BYTES) are plain np.empty. (A bisect over the blocks' sizes, then the view by
    the ndarray constructor: cheap beside the page faults it saves.)"""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < SCRATCH_MIN_BYTES or not _CAN_COUNT_REFERENCES:
        return np.empty(shape, dtype=dtype)
    pool = _pool()
    blocks, sizes = pool.blocks, pool.sizes
    k, end, most = bisect.bisect_left(sizes, nbytes), len(sizes), 2 * nbytes
    while k < end and sizes[k] <= most:
        if sys.getrefcount(blocks[k]) <= _FREE:
            pool.stamps[k] = next(pool.clock)
            return np.ndarray(shape, dtype, buffer=blocks[k])
        k += 1
    if _drop_free_blocks(pool, sum(sizes) + nbytes - MAX_KEPT_BYTES):
        return np.empty(shape, dtype=dtype)  # over the budget even so: not kept, malloc's
    block = np.empty(nbytes, dtype=np.uint8)
    k = bisect.bisect_right(sizes, nbytes)
    blocks.insert(k, block)
    sizes.insert(k, nbytes)
    pool.stamps.insert(k, next(pool.clock))
    return np.ndarray(shape, dtype, buffer=block)


def _drop_free_blocks(pool: _Pool, excess: int) -> bool:
    """Forget free blocks, the one handed out longest ago first, until ``excess`` bytes went;
    True if that many could not go."""
    if excess <= 0:
        return False
    for stamp in sorted(pool.stamps):
        k = pool.stamps.index(stamp)
        if sys.getrefcount(pool.blocks[k]) <= _FREE:
            del pool.blocks[k], pool.stamps[k]
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


def unreferenced(array, references: int = 3) -> bool:
    """True if nobody but the caller refers to ``array`` — a writeable ndarray owning its memory,
    or the only view of a pool block — so that it may be kept without a copy (a leaf adopts
    its first gradient so, as PyTorch's AccumulateGrad does). ``references`` counts the
    caller's own names for it and getrefcount's argument."""
    if not (_CAN_COUNT_REFERENCES and type(array) is np.ndarray and array.flags.writeable
            and sys.getrefcount(array) <= references):
        return False
    base = array.base
    if base is None:
        return True
    # A block: the pool's list, the view's base, this name and getrefcount's argument.
    return type(base) is np.ndarray and sys.getrefcount(base) <= _FREE + 2 \
        and any([block is base for block in _blocks()])


def idle_bytes() -> int:
    """What this thread's pool holds that nothing uses now: memory kept for the next step,
    which benchmarks/ counts beside a step's peak."""
    return sum([block.size for block in _blocks() if sys.getrefcount(block) <= _FREE + 1])


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
