"""torch's thread settings: ``set_num_threads`` / ``get_num_threads``, how many threads the
matrix products use, and ``set_num_interop_threads`` / ``get_num_interop_threads``.

The products (matmul, linear, the convolutions' GEMMs) run in NumPy's BLAS, which splits them
over threads; every other op is a NumPy loop on one thread. So the threads PyTorch's CPU
backend spreads its ops over are, here, BLAS's: the setting goes to every BLAS library loaded
in the process (through ``threadpoolctl``), and holds for the whole process, as torch's does.

torch's inter-op threads are a second pool, which runs independent ops at the same time (the
JIT's forks). Here every op runs in the thread that calls it, one after another, so there is
no such pool: the count is kept and read back, with torch's rule that it is set at most once.
"""
import numbers
import os
import threading

import numpy as np

# torch unpacks the count into a C long long
_MAX = 2 ** 63 - 1


def _checked_count(op: str, threads) -> int:
    """A positive int, or torch's error for what ``op`` was given (the value named)."""
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
        kind = type(threads)  # named as torch names it: numpy.bool, float, Tensor
        name = kind.__name__ if kind.__module__ == "builtins" or kind.__name__ == "Tensor" \
            else f"{kind.__module__}.{kind.__name__}"
        raise RuntimeError(f"{op} expects an int, but got {name} "
                           f"(threads={threads!r}; a positive integer)")
    if threads > _MAX:
        raise ValueError(f"{op}: Overflow when unpacking long long (threads={threads!r}"
                         f"; at most {_MAX})")
    if threads <= 0:
        raise RuntimeError(f"{op} expects a positive integer, got threads={threads!r}")
    return int(threads)


def set_num_threads(threads) -> None:
    """Use ``threads`` threads for the matrix products (torch's intra-op threads)."""
    threads = _checked_count("set_num_threads", threads)
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=threads, user_api="blas")  # called, not entered: the limit stays


def get_num_threads() -> int:
    """The threads the matrix products use (1 where NumPy's BLAS is not found)."""
    from threadpoolctl import threadpool_info
    counts = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    return max(counts, default=1)


_interop_threads = None  # set once by set_num_interop_threads
_interop_lock = threading.Lock()  # (two threads setting it at once: one of them is refused)


def set_num_interop_threads(threads) -> None:
    """torch's inter-op thread count: kept and read back (no op here runs beside another), and
    as in torch settable once per process; a refused value does not count as the once."""
    global _interop_threads
    threads = _checked_count("set_num_interop_threads", threads)
    with _interop_lock:
        if _interop_threads is not None:
            raise RuntimeError(f"Error: cannot set number of interop threads after parallel work "
                               f"has started or set_num_interop_threads called (threads={threads}; "
                               f"it was set to {_interop_threads} before, and is set once per "
                               f"process)")
        _interop_threads = threads


def get_num_interop_threads() -> int:
    """The count set_num_interop_threads set, else torch's default: one per CPU."""
    return _interop_threads if _interop_threads is not None else (os.cpu_count() or 1)
