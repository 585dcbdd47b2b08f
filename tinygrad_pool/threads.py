"""torch's ``set_num_threads`` / ``get_num_threads``: how many threads the matrix products use.

The products (matmul, linear, the convolutions' GEMMs) run in NumPy's BLAS, which splits them
over threads; every other op is a NumPy loop on one thread. So the threads PyTorch's CPU
backend spreads its ops over are, here, BLAS's: the setting goes to every BLAS library loaded
in the process (through ``threadpoolctl``), and holds for the whole process, as torch's does.
"""
import numbers

import numpy as np

# torch unpacks the count into a C long long
_MAX = 2 ** 63 - 1


def set_num_threads(threads) -> None:
    """Use ``threads`` threads for the matrix products (torch's intra-op threads)."""
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
        kind = type(threads)  # named as torch names it: numpy.bool, float, Tensor
        name = kind.__name__ if kind.__module__ == "builtins" or kind.__name__ == "Tensor" \
            else f"{kind.__module__}.{kind.__name__}"
        raise RuntimeError(f"set_num_threads expects an int, but got {name} "
                           f"(threads={threads!r}; a positive integer)")
    if threads > _MAX:
        raise ValueError(f"set_num_threads: Overflow when unpacking long long (threads={threads!r}"
                         f"; at most {_MAX})")
    if threads <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, got threads={threads!r}")
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=int(threads), user_api="blas")  # called, not entered: the limit stays


def get_num_threads() -> int:
    """The threads the matrix products use (1 where NumPy's BLAS is not found)."""
    from threadpoolctl import threadpool_info
    counts = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    return max(counts, default=1)
