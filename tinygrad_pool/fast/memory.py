"""Memory the engine reuses from step to step: the scratch buffers, and the reference counts
that decide what may be reused.

Writing into fresh memory costs a page fault per 4 KiB; on the machines we measured that made
allocating a large array as slow as the arithmetic done in it. A training loop asks for the
same shapes every step, so the ops take their large temporaries here (the im2col columns, the
padded input, the pooling phase copy and argmax) and give them back once nothing reads them,
and the engine gives back each intermediate gradient once the op it fed has used it. The ops
that make large gradients (ReLU, max-pool, conv) take them from here, so that in a steady
training loop these arrays come back step after step instead of from fresh memory.

THE INVARIANT: an array that anything outside the engine can reach is never reused.
  - Reused are only arrays that no user can see: temporaries inside one op, intermediate
    gradients, and what a node saved for backward (the conv columns, the max-pool argmax)
    once the node is released.
  - Anything handed out — an op's output, ``.data``, ``.grad`` (an adopted gradient included),
    ``.numpy()``, indices returned by ``return_indices=True`` (a copy), ``state_dict()``
    values, and an array obtained from ``saved_for_backward()`` or a node's attribute — is
    the user's. Arrays that could have been handed out (intermediate gradients, saved
    buffers) go back only when CPython's exact reference count shows that nobody else holds
    them or a view of them (``give_back_if_unreferenced``); where the count is not exact
    (other interpreters, 3.14+) nothing goes back at all.
  - A buffer is in one holder's hands at a time: taken, then given back only when no view of
    it survives.
tests/test_scratch.py holds references of every kind across many training steps and checks
that none of them changes.

What keeps the pool small:
  - buffers are kept per (shape, dtype), at most four, and only for shapes that some op has
    asked for, so gradients that nothing would reuse are left to malloc; past MAX_KEPT_BYTES
    in all, the shapes asked for longest ago give theirs up first; and at most MAX_SHAPES
    shapes are remembered at all (a run whose shapes keep changing must not grow the table);
  - per thread, so two threads never share one;
  - nothing here changes malloc, or anything else for the whole process.
"""
import math
import sys
import threading

import numpy as np

_scratch = threading.local()

SCRATCH_MIN_BYTES = 1 << 16  # smaller arrays come from malloc's own free lists, fault-free
KEPT_PER_SHAPE = 4
# All kept buffers of one thread together; past it, the shapes asked for longest ago lose
# theirs first (a program that runs many input sizes must not pile up buffers for each).
MAX_KEPT_BYTES = 256 << 20
MAX_SHAPES = 64  # shapes remembered per thread; a training loop asks for a handful


def _state():
    if not hasattr(_scratch, "free"):
        _scratch.free = {}  # (shape, dtype) -> kept arrays, least recently asked-for shape first
        _scratch.kept_bytes = 0
        _scratch.outputs = {}  # (shape, dtype) -> output buffers (take_output), likewise
        _scratch.output_bytes = 0
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
    if len(state.free) > MAX_SHAPES:  # forget the shape asked for longest ago, and its buffers
        forgotten = state.free.pop(next(iter(state.free)))
        state.kept_bytes -= sum(array.nbytes for array in forgotten)
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


# The references to an array when only its last holder in the engine has it: that holder's
# local name, the argument of the check below and getrefcount's own argument. CPython 3.14 may
# leave borrowed references uncounted, so there and on other interpreters we never recycle.
_CAN_COUNT_REFERENCES = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
_LAST_HOLDER_REFERENCES = 3


def unreferenced(array, references: int = _LAST_HOLDER_REFERENCES) -> bool:
    """True if ``array`` is a writeable ndarray owning its memory that nobody else refers to
    (``references`` counts the caller's own names for it, as _LAST_HOLDER_REFERENCES does)."""
    return (_CAN_COUNT_REFERENCES and type(array) is np.ndarray and array.base is None
            and array.flags.writeable and sys.getrefcount(array) <= references)


def give_back_if_unreferenced(array) -> None:
    """Give ``array`` (or the buffer it is a view of) back, unless anyone else still holds it.

    The caller may hold it in one name of its own (and must drop it afterwards). For a view, both the view and its base must be held by us alone: a user holding the view,
    or another view of the same base, keeps the memory theirs.
    """
    if not _CAN_COUNT_REFERENCES or type(array) is not np.ndarray:
        return
    base = array.base
    if base is None:
        if sys.getrefcount(array) <= _LAST_HOLDER_REFERENCES:
            give_buffer(array)
    elif type(base) is np.ndarray and base.base is None \
            and sys.getrefcount(array) <= _LAST_HOLDER_REFERENCES \
            and sys.getrefcount(base) <= 3:  # our name, getrefcount's, and array.base
        array = None
        give_buffer(base)


# The unsigned integer type of each float width, to read a float array's bits through.
_BITS = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def where(condition, a, b):
    """``np.where(condition, a, b)``. Where one side is +0 and the other a large float array of
    the condition's shape — a gradient masked, as ReLU's and clamp's are — the same numbers,
    bit for bit, come from multiplying that array's *bits* by the condition: its own bits
    where it is kept (an inf or a nan too), 0, the bits of +0, where not; as np.where gives
    and torch's threshold_backward. (Multiplying the floats would give inf·0 = nan and -0.)
    Into a scratch buffer, which the engine gives back once it has used the gradient (as
    anyone's array, it is never taken back while held). Measured on a conv-sized gradient of
    the VGG block (g), 4 MiB: np.where 4.4 ms (a branch per element, and fresh memory that
    faults), this 0.3 ms. Anything else goes to np.where.
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
    out = take_buffer(values.shape, values.dtype)  # a gradient: the engine gives it back
    np.multiply(values.view(bits), keep, out=out.view(bits))
    return out


# ---- outputs: handed to users, reused once nothing is left of them ---------------------------
# Per thread: (shape, dtype) -> the buffers kept for outputs of that shape, and their bytes.
KEPT_OUTPUTS_PER_SHAPE = 8  # a training step that holds the last step's graph needs 2 per use


def take_output(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array for an op's output (conv, ReLU, max-pool): a view of
    a kept buffer that nothing made from it still refers to, else of a new one, kept from now on.

    An op's output is the user's, so unlike a scratch buffer nobody can give it back. The pool
    keeps the buffer and hands out only a view of it; each view (and each view of a view, a
    reshape, an in-place edit's target) holds a reference to the buffer, so once the buffer's
    reference count is down to the pool's own, nothing anywhere can still read or write it.
    Measured on the VGG block (g), one thread: 4,750 page faults per training step without
    this (the previous step's activations go back to malloc, which returns them to the kernel,
    and the next step faults them in again), none with it; 77 → 65 ms per step.
    """
    dtype = np.dtype(dtype)
    if not _CAN_COUNT_REFERENCES or math.prod(shape) * dtype.itemsize < SCRATCH_MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    state = _state()
    key = (shape, dtype)
    kept = state.outputs.pop(key, [])
    state.outputs[key] = kept  # the most recently asked-for shape, as in take_buffer
    if len(state.outputs) > MAX_SHAPES:  # forget the shape asked for longest ago
        forgotten = state.outputs.pop(next(iter(state.outputs)))
        state.output_bytes -= sum(array.nbytes for array in forgotten)
    for buffer in kept:
        if sys.getrefcount(buffer) <= 3:  # the list, this loop's name, getrefcount's argument
            return buffer[...]
    buffer = np.empty(shape, dtype=dtype)
    if len(kept) >= KEPT_OUTPUTS_PER_SHAPE or state.output_bytes + buffer.nbytes > MAX_KEPT_BYTES:
        return buffer  # not kept: malloc's, as any array
    kept.append(buffer)
    state.output_bytes += buffer.nbytes
    return buffer[...]


def idle_bytes() -> int:
    """What this thread's pool holds that nothing uses now: the kept scratch buffers, and the
    output buffers that no array refers to (memory kept for the next step, which benchmarks/
    counts beside a step's peak)."""
    state = _state()
    scratch = sum(array.nbytes for stack in state.free.values() for array in stack)
    return scratch + sum(buffer.nbytes for kept in state.outputs.values() for buffer in kept
                         if sys.getrefcount(buffer) <= 3)  # (as in take_output)


def output_like(x: np.ndarray):
    """``take_output`` in ``x``'s memory order (np.empty_like's), for a ufunc's ``out=``: the
    output of a convolution is a transposed view, and ReLU's output then follows it. None (the
    ufunc allocates) for a small array, which malloc serves from its free lists."""
    if x.nbytes < SCRATCH_MIN_BYTES:
        return None
    if x.flags.c_contiguous:
        return take_output(x.shape, x.dtype)
    order = sorted(range(x.ndim), key=lambda axis: -x.strides[axis])  # outermost axis first
    if not x.transpose(order).flags.c_contiguous:  # not a permuted contiguous array
        return np.empty_like(x)
    buffer = take_output(tuple([x.shape[axis] for axis in order]), x.dtype)
    return buffer.transpose(np.argsort(order))
