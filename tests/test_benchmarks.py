"""benchmarks/ keeps running as the package changes: every workload takes a step, f, g and h
compute the same loss as PyTorch from the same weights, the harness produces its figures
(worker processes, equal-loss check, JSON, Markdown), the FLOP count and the scaling slope are
right, and the memory measurement reads the scratch buffers where they now live. Timing is the
benchmark's business, never asserted here."""
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_pool

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import run as bench  # noqa: E402
import scaling  # noqa: E402
import workloads as W  # noqa: E402


@pytest.mark.parametrize("key, size", [("a", 64), ("b", 32), ("c", 64), ("e", 300), ("f", 2),
                                       ("g", 2), ("h", 4)])
def test_each_of_our_workloads_takes_a_step(key, size):
    step = bench.WORKLOADS[key][1](tinygrad_pool, size)
    first, second = float(step().item()), float(step().item())
    assert math.isfinite(first) and math.isfinite(second)
    if key in "fgh":  # a training step with momentum SGD lowers the loss on the same batch
        assert second < first


def test_the_article_workload_runs_both_trainings():
    # the sum of the final output weights of both trainings (see examples/article_network.py)
    assert math.isfinite(W.article(tinygrad_pool)())


@pytest.mark.parametrize("network", ["lenet5", "vgg", "mlp"])
def test_training_steps_equal_pytorchs(torch, network):
    ours = W.training_step(tinygrad_pool, network, 3)
    theirs = W.training_step(torch, network, 3)
    for _ in range(2):  # the second step also checks the momentum update
        assert ours().item() == pytest.approx(theirs().item(), rel=1e-4)


def test_the_networks_start_from_the_shared_weights(torch):
    model = W.sequential(tinygrad_pool, "lenet5")
    arrays = W.initial_weights("lenet5")
    assert [tuple(p.shape) for p in model.parameters()] == [a.shape for a in arrays]
    for parameter, array in zip(model.parameters(), arrays):
        np.testing.assert_array_equal(parameter.detach().numpy(), array)
    bound = 1 / math.sqrt(16 * 5 * 5)  # the first linear layer's fan-in: PyTorch's default bound
    assert np.abs(arrays[4]).max() <= bound and np.abs(arrays[4]).max() > 0.9 * bound


def test_flops_of_the_vgg_step_by_hand():
    n = 32
    conv1 = 2 * n * 32 * 32 * 32 * 3 * 9          # the first layer: forward + weight gradient
    conv2 = 2 * n * 32 * 32 * 32 * 32 * 9
    conv3 = 2 * n * 64 * 16 * 16 * 32 * 9
    fc = 2 * n * 4096 * 10
    assert W.training_flops("vgg", n) == 2 * conv1 + 3 * (conv2 + conv3 + fc)
    assert W.training_flops("mlp", 1) == 2 * 784 * 128 * 2 + 2 * 128 * 10 * 3


def test_slope_of_linear_and_quadratic_growth():
    sizes = [1, 10, 100, 1000]
    assert scaling.slope(sizes, [1e-3 + 2e-3 * s for s in sizes]) == pytest.approx(1, abs=0.05)
    assert scaling.slope(sizes, [3e-6 * s * s for s in sizes]) == pytest.approx(2)
    assert scaling.linear(1.1) and not scaling.linear(1.3)


def test_same_loss_compares_every_framework_with_ours():
    assert bench.same_loss({"ours": 2.30, "torch": 2.30001, "mygrad": None}) is True
    assert bench.same_loss({"ours": 2.30, "torch": 2.31}) is False
    assert bench.same_loss({"torch": 2.30}) is None
    assert bench.same_loss({"ours": 2.30}) is None  # never ours against itself
    assert bench.same_loss({"ours": 2.30, "mygrad": None}) is None


def test_the_harness_says_what_is_not_timed(monkeypatch, capsys):
    """Without torch (hidden here) and without --peers, the run says so before any table and
    never prints 'same loss' for ours alone."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    bench.main(["--only", "h", "--repeat", "1", "--threads", "1"])
    out = capsys.readouterr().out
    assert "PyTorch is not installed: ours is timed alone" in out
    assert "--peers adds them" in out and "same loss" not in out


def test_threads_argument():
    assert bench.parse_threads("1") == [1]
    assert bench.parse_threads("default,1")[1] == 1
    with pytest.raises(Exception, match="--threads"):
        bench.parse_threads("0")


def test_the_harness_times_two_workloads_in_worker_processes(tmp_path):
    """End to end, tiny: h and the GEMM ceiling at one thread, 1 repeat, JSON and Markdown."""
    frameworks = ["ours", "torch"] if importlib.util.find_spec("torch") else ["ours"]
    out, table = tmp_path / "results.json", tmp_path / "table.md"
    bench.main(["--only", "h,ceiling", "--repeat", "1", "--threads", "1",
                "--json", str(out), "--markdown", str(table)])
    results = json.loads(out.read_text())
    run = results["runs"]["1"]
    row = run["workloads"]["h"]
    assert sorted(row["frameworks"]) == sorted(frameworks)
    assert all(f["median_s"] > 0 and len(f["samples_s"]) == 1 for f in row["frameworks"].values())
    assert row["first_step_loss"]["ours"] == pytest.approx(2.3, abs=0.2)  # ≈ ln 10 at the start
    if "torch" in frameworks:
        assert row["same_loss"] is True
        assert row["ratio_ours_torch"] == pytest.approx(
            row["frameworks"]["ours"]["median_s"] / row["frameworks"]["torch"]["median_s"])
    assert set(run["ceiling"]["gemm"]) == {"gemm_conv", "gemm_square"}
    assert run["ceiling"]["machine_gflops"] > 0
    assert "| h | MLP 784-128-10" in table.read_text()


def test_unknown_only_is_refused():
    with pytest.raises(SystemExit):
        bench.main(["--only", "a,z"])


def test_memory_measurement_reads_the_scratch_buffers():
    step = W.vgg(tinygrad_pool, 2)
    step()
    traced, scratch = bench.traced_peak_ours(step)
    assert traced > 0
    assert scratch > 0  # the pool keeps its blocks, free, between steps


def test_peers_compute_the_same_loss_where_installed():
    import peers
    ours = float(W.mlp(tinygrad_pool, 4)().item())
    ran = 0
    for name in ("mygrad", "autograd"):
        adapter, reason = peers.load(name)
        if adapter is None:
            continue
        step = peers.builder(adapter, "h", 4)
        assert step() == pytest.approx(ours, rel=1e-4)
        ran += 1
    if not ran:
        pytest.skip("neither MyGrad nor autograd is installed")


def test_an_unavailable_peer_says_why(monkeypatch):
    import peers

    class Broken:
        def __init__(self):
            raise ImportError("no module", name="nonexistent")
    monkeypatch.setitem(peers.PEERS, "broken", Broken)
    adapter, reason = peers.load("broken")
    assert adapter is None and "nonexistent" in reason and "peers" in reason
