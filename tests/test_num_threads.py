"""set_num_threads / get_num_threads: torch's names for the threads of the matrix products,
which here are NumPy's BLAS's; set_num_interop_threads / get_num_interop_threads: a count kept,
set once per process; torch's errors for a count that is not a positive int."""
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import tinygrad_pool as tp
from tinygrad_pool import Tensor, tensor


@pytest.fixture
def restore_threads():
    before = tp.get_num_threads()
    yield before
    tp.set_num_threads(before)


def blas_thread_counts() -> list:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_numpy_has_a_blas_to_set():
    assert blas_thread_counts(), "threadpoolctl finds no BLAS in this NumPy"


@pytest.mark.parametrize("threads", [1, 2, 3, np.int64(2)])
def test_the_count_reaches_every_blas_and_reads_back(restore_threads, threads):
    tp.set_num_threads(threads)
    assert blas_thread_counts() == [int(threads)] * len(blas_thread_counts())
    assert tp.get_num_threads() == threads
    assert type(tp.get_num_threads()) is int


def test_products_are_the_same_numbers_on_one_thread_and_two(restore_threads):
    rng = np.random.default_rng(0)
    x = tensor(rng.standard_normal((64, 300)))
    w = tensor(rng.standard_normal((200, 300)))
    results = []
    for threads in (1, 2):
        tp.set_num_threads(threads)
        results.append(tp.nn.functional.linear(x, w).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


def test_get_and_set_match_torch(torch, restore_threads):
    torch_before = torch.get_num_threads()
    try:
        for threads in (1, 3):
            tp.set_num_threads(threads)
            torch.set_num_threads(threads)
            assert tp.get_num_threads() == torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(torch_before)


BAD = [0, -1, 2.5, "2", True, np.bool_(True), None, [2], 2 ** 63]
SETTINGS = {"set_num_threads": "get_num_threads",  # each setter with the getter it sets
            "set_num_interop_threads": "get_num_interop_threads"}


@pytest.mark.parametrize("setter", SETTINGS)
@pytest.mark.parametrize("value", BAD, ids=repr)
def test_bad_counts_raise_torchs_error_and_change_nothing(torch, restore_threads, setter, value):
    read = getattr(tp, SETTINGS[setter])
    before = read()
    with pytest.raises(Exception) as theirs:
        getattr(torch, setter)(value)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(tp, setter)(value)
    assert type(ours.value) is type(theirs.value)
    assert str(theirs.value) in str(ours.value)  # torch's words, then the value and what was expected
    assert f"threads={value!r}" in str(ours.value)
    assert read() == before


def test_a_tensor_is_not_a_count(torch, restore_threads):
    with pytest.raises(RuntimeError, match="set_num_threads expects an int, but got Tensor"):
        tp.set_num_threads(tp.tensor(2))
    with pytest.raises(RuntimeError, match="set_num_threads expects an int, but got Tensor"):
        torch.set_num_threads(torch.tensor(2))


# ---- inter-op threads: a count kept (no op runs beside another here), set once per process ----
def run_in_fresh_process(code: str) -> list:
    """The lines ``code`` prints, run in a new interpreter: the count is set once per process,
    so each script starts from a process that never set it."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.split()


ONCE = """
lib = __import__("{lib}")
print(lib.get_num_interop_threads())
lib.set_num_interop_threads(3)
print(lib.get_num_interop_threads())
try:
    lib.set_num_interop_threads(3)
except RuntimeError as error:
    print(str(error).startswith("Error: cannot set number of interop threads after parallel "
                                "work has started or set_num_interop_threads called"))
print(lib.get_num_interop_threads())
"""


def test_interop_threads_are_set_once_and_read_back():
    default, after_set, refused, still = run_in_fresh_process(ONCE.format(lib="tinygrad_pool"))
    assert int(default) >= 1
    assert (after_set, refused, still) == ("3", "True", "3")


def test_interop_threads_behave_as_torchs(torch):
    ours = run_in_fresh_process(ONCE.format(lib="tinygrad_pool"))
    theirs = run_in_fresh_process(ONCE.format(lib="torch"))
    assert ours == theirs  # the default (one per CPU) too


def test_a_refused_interop_count_does_not_use_up_the_once():
    out = run_in_fresh_process("""
import tinygrad_pool as tp
for bad in (0, 2.5):
    try:
        tp.set_num_interop_threads(bad)
    except RuntimeError:
        pass
tp.set_num_interop_threads(2)
print(tp.get_num_interop_threads())
""")
    assert out == ["2"]
