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
    asked for, so gradients that nothing would reuse are left to malloc; past MAX_KEPT_BYTES
    in all, the shapes asked for longest ago give theirs up first;
  - per thread, so two threads never share one;
  - nothing here changes malloc, or anything else for the whole process.
"""
import math
import threading

import numpy as np

_scratch = threading.local()

SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free
KEPT_PER_SHAPE = 4
# All kept buffers of one thread together; past it, the shapes asked for longest ago lose
# theirs first (a program that runs many input sizes must not pile up buffers for each).
MAX_KEPT_BYTES = 256 << 20


def _state():
    if not hasattr(_scratch, "free"):
        _scratch.free = {}  # (shape, dtype) -> kept arrays, least recently asked-for shape first
        _scratch.kept_bytes = 0
    return _scratch


def take_buffer(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array: a kept one if there is one, else a new one."""
    dtype = np.dtype(dtype)
    if math.prod(shape) * dtype.itemsize < SCRATCH_MIN_BYTES:  # tiny: bookkeeping would dominate
        return np.empty(shape, dtype=dtype)
    state = _state()
    key = (shape, dtype)
    stack = state.free.pop(key, [])
    state.free[key] = stack  # from now on this shape is wanted, and the most recently so
    if not stack:
        return np.empty(shape, dtype=dtype)
    state.kept_bytes -= stack[-1].nbytes
    return stack.pop()


def give_buffer(array: np.ndarray) -> None:
    """Keep ``array`` for a later take_buffer of its shape. The caller must be its only holder."""
    if array.nbytes < SCRATCH_MIN_BYTES or array.base is not None or not array.flags.c_contiguous:
        return
    state = _state()
    stack = state.free.get((array.shape, array.dtype))
    if stack is None or len(stack) >= KEPT_PER_SHAPE:
        return
    stack.append(array)
    state.kept_bytes += array.nbytes
    while state.kept_bytes > MAX_KEPT_BYTES:  # drop from the shape asked for longest ago
        oldest = next(stack for stack in state.free.values() if stack)
        state.kept_bytes -= oldest.pop().nbytes


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
