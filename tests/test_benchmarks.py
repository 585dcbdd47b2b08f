"""benchmarks/run.py keeps running as the package changes: each of our workloads takes a step,
and the memory measurement (f) reads the scratch buffers where they now live. (Timing is the
benchmark's business, never asserted here.)"""
import pytest
from helpers import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/run.py")


@pytest.mark.parametrize("key", ["a", "b", "c", "e"])
def test_each_of_our_workloads_takes_a_step(bench, key):
    step = bench.WORKLOADS[key][1]()
    step()
    step()


def test_the_article_workload_runs_both_trainings(bench):
    predictions = bench.article_ours()()
    assert len(predictions) == 2 and all(p.shape == (4,) for p in predictions)


def test_memory_measurement_reads_the_scratch_buffers(bench):
    traced, scratch = bench.tracemalloc_peak_ours()
    assert traced > 0
    assert scratch > 0  # conv and pool keep their large temporaries between steps
