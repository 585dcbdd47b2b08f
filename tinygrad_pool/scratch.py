"""Scratch buffers: the large arrays of one training step, reused by the next.

Writing into fresh memory costs a page fault per 4 KiB; on the machines we measured that made
allocating a large array as slow as the arithmetic done in it. A training loop asks for the
same shapes every step, so the ops take their large temporaries here (the im2col columns, the
padded input, the pooling phase copy and argmax) and give them back once nothing reads them,
and the engine gives back each intermediate gradient once the op it fed has used it (when
CPython's reference count shows that nobody else holds it; see Tensor.backward). The ops that
make large gradients (ReLU, max-pool, conv) take them from here, so that in a steady training
loop these arrays come back step after step instead of from fresh memory.

The rules that keep it safe and small:
  - a buffer is in one holder's hands at a time: taken, then given back only when no view of
    it survives;
  - buffers are kept per (shape, dtype), at most four, and only for shapes that some op has
    asked for, so gradients that nothing would reuse are left to malloc;
  - per thread, so two threads never share one;
  - nothing here changes malloc, or anything else for the whole process.
"""
import math
import threading

import numpy as np

_scratch = threading.local()

SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free
KEPT_PER_SHAPE = 4


def _free_lists() -> dict:
    free = getattr(_scratch, "free", None)
    if free is None:
        free = _scratch.free = {}
    return free


def take_buffer(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array: a kept one if there is one, else a new one."""
    dtype = np.dtype(dtype)
    if math.prod(shape) * dtype.itemsize < SCRATCH_MIN_BYTES:  # tiny: bookkeeping would dominate
        return np.empty(shape, dtype=dtype)
    stack = _free_lists().setdefault((shape, dtype), [])  # from now on, this shape is wanted
    return stack.pop() if stack else np.empty(shape, dtype=dtype)


def give_buffer(array: np.ndarray) -> None:
    """Keep ``array`` for a later take_buffer of its shape. The caller must be its only holder."""
    if array.nbytes < SCRATCH_MIN_BYTES or array.base is not None or not array.flags.c_contiguous:
        return
    stack = _free_lists().get((array.shape, array.dtype))
    if stack is not None and len(stack) < KEPT_PER_SHAPE:
        stack.append(array)


def zeros(shape, dtype) -> np.ndarray:
    """np.zeros for arrays that are then scatter-added into (col2im, max-pool backward).

    From the kept buffers when there is one. Otherwise not np.zeros: that gets its memory from
    calloc, already-zero pages the kernel maps in lazily, so the first "+=" into each 4 KiB
    page faults twice (read, then write), at random places for a scatter: measured at ~9 µs a
    fault here, that made zeros-then-scatter ten times slower than the scatter itself. Filling
    an empty array touches each page once, in order.
    """
    array = take_buffer(shape, dtype)
    array.fill(0)
    return array
