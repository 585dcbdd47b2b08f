"""Benchmarks: tinygrad_pool against PyTorch (CPU), same workloads, same run, 2 threads.

    python benchmarks/run.py [--repeat N] [--json benchmarks/results.json] [--only a,b]

Workloads (float32 unless stated):
  a  LeNet-style training step: 64×1×28×28 → conv 8@3×3 → ReLU → max-pool 2 → linear 10
     → cross-entropy, forward + backward (the input needs no gradient)
  b  conv2d 32×16×32×32, 32 filters 3×3, padding 1, then max-pool 2, forward + backward
     (input gradient included)
  c  max_pool2d alone on 64×16×32×32, kernel 3, stride 2 (overlapping windows), fwd + bwd
  d  the seed article's network, full training of both examples (per-image SGD, float64):
     per-op overhead on tiny tensors
  e  a 10,000-op elementwise chain (mul, add, tanh) on 16 elements, forward + backward:
     engine overhead
  f  peak memory of (b): tracemalloc for ours (NumPy reports its buffers to it); for both
     frameworks also the peak-RSS growth of one step in a fresh subprocess
     (/proc/self/clear_refs resets the high-water mark, then VmHWM − VmRSS before the step)

Each framework is timed in its own worker process (ours never imports torch), a fresh pair for
each workload, in short alternating blocks (~0.1 s, at least one step), each block after one
untimed run; medians over all timed runs. The thread limits are set here, in the benchmark's
own processes (the workers inherit them), before NumPy is imported; the library itself never
touches BLAS, malloc or GC settings.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "2"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tinygrad_pool.nn.functional as F  # noqa: E402
from tinygrad_pool import Tensor  # noqa: E402

torch = TF = None  # imported by load_torch(), only in the processes that time PyTorch


def load_torch() -> bool:
    global torch, TF
    try:
        import torch as _torch
        import torch.nn.functional as _TF
    except ImportError:  # the table then shows our times only
        return False
    torch, TF = _torch, _TF
    torch.set_num_threads(2)
    return True

F32 = np.float32


# ---- workloads: each builder returns a no-argument callable that runs one step --------------
def lenet_ours():
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((64, 1, 28, 28), dtype=F32))
    labels = rng.integers(0, 10, 64)
    w1 = Tensor(rng.standard_normal((8, 1, 3, 3), dtype=F32) * 0.3, requires_grad=True)
    b1 = Tensor(np.zeros(8, F32), requires_grad=True)
    w2 = Tensor(rng.standard_normal((10, 8 * 13 * 13), dtype=F32) * 0.03, requires_grad=True)
    b2 = Tensor(np.zeros(10, F32), requires_grad=True)
    params = (w1, b1, w2, b2)

    def step():
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
        loss = F.cross_entropy(F.linear(h.reshape(64, -1), w2, b2), labels)
        loss.backward()
        for p in params:
            p.grad = None
    return step


def lenet_torch():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((64, 1, 28, 28), dtype=F32))
    labels = torch.from_numpy(rng.integers(0, 10, 64))
    w1 = torch.tensor(rng.standard_normal((8, 1, 3, 3), dtype=F32) * 0.3, requires_grad=True)
    b1 = torch.zeros(8, requires_grad=True)
    w2 = torch.tensor(rng.standard_normal((10, 8 * 13 * 13), dtype=F32) * 0.03, requires_grad=True)
    b2 = torch.zeros(10, requires_grad=True)
    params = (w1, b1, w2, b2)

    def step():
        h = TF.max_pool2d(TF.relu(TF.conv2d(x, w1, b1)), 2)
        loss = TF.cross_entropy(TF.linear(h.reshape(64, -1), w2, b2), labels)
        loss.backward()
        for p in params:
            p.grad = None
    return step


def conv_pool_ours():
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((32, 16, 32, 32), dtype=F32), requires_grad=True)
    w = Tensor(rng.standard_normal((32, 16, 3, 3), dtype=F32) * 0.1, requires_grad=True)

    def step():
        F.max_pool2d(F.conv2d(x, w, padding=1), 2).sum().backward()
        x.grad = w.grad = None
    return step


def conv_pool_torch():
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((32, 16, 32, 32), dtype=F32), requires_grad=True)
    w = torch.tensor(rng.standard_normal((32, 16, 3, 3), dtype=F32) * 0.1, requires_grad=True)

    def step():
        TF.max_pool2d(TF.conv2d(x, w, padding=1), 2).sum().backward()
        x.grad = w.grad = None
    return step


def pool_ours():
    x = Tensor(np.random.default_rng(2).standard_normal((64, 16, 32, 32), dtype=F32),
               requires_grad=True)

    def step():
        F.max_pool2d(x, 3, stride=2).sum().backward()
        x.grad = None
    return step


def pool_torch():
    x = torch.tensor(np.random.default_rng(2).standard_normal((64, 16, 32, 32), dtype=F32),
                     requires_grad=True)

    def step():
        TF.max_pool2d(x, 3, stride=2).sum().backward()
        x.grad = None
    return step


# The seed article's two 6×6 images and its two training runs (docs: ARTICLE_NETWORK.md).
X1 = np.array([[1, 1, 0, 1, 0, 1]] * 3 + [[1, 1, 1, 1, 0, 1]] * 3, dtype=np.float64)
X2 = np.array([[-1, 0, -1, 0, 0, 1], [-1, 0, -1, 0, 0, 1], [-1, 0, -1, 1, 0, 1],
               [-1, -1, -1, 0, 0, -1], [-1, 0, -1, 0, 0, -1], [-1, 0, -1, 0, 0, -1]],
              dtype=np.float64)
ARTICLE_RUNS = (  # seed, W1 scale, epochs, lr, with ReLU + arctan
    (7839, 0.66, 100, 0.001, False),
    (56789, 5.66, 500, 0.01, True),
)


def _article_setup(seed, scale):
    rng = np.random.RandomState(seed)
    w1 = rng.randn(3, 3) * scale
    w2 = rng.randn(4, 1) * 5.7
    return w1, w2


def article_ours():
    images = [Tensor(img.reshape(1, 1, 6, 6)) for img in (X1, X2)]

    def train():
        predictions = []
        for seed, scale, epochs, lr, activations in ARTICLE_RUNS:
            w1_init, w2_init = _article_setup(seed, scale)
            w1, w2 = Tensor(w1_init, requires_grad=True), Tensor(w2_init, requires_grad=True)
            sums = [X1.sum(), X2.sum()]
            targets = [Tensor(np.arctan(s) if activations else s) for s in sums]
            for _ in range(epochs):
                for image, target in zip(images, targets):
                    # True convolution = cross-correlation with the flipped kernel.
                    layer1 = F.conv2d(image, w1.flip((0, 1)).reshape(1, 1, 3, 3))
                    if activations:
                        layer1 = layer1.relu()
                    out = F.max_pool2d(layer1, 2).reshape(1, 4) @ w2
                    if activations:
                        out = out.arctan()
                    cost = ((out - target) ** 2).sum() * 0.5
                    cost.backward()
                    w1.data -= lr * w1.grad.data
                    w2.data -= lr * w2.grad.data
                    w1.grad = w2.grad = None
            predictions.append(w2.data.ravel().copy())
        return predictions
    return train


def article_torch():
    images = [torch.from_numpy(img.reshape(1, 1, 6, 6)) for img in (X1, X2)]

    def train():
        predictions = []
        for seed, scale, epochs, lr, activations in ARTICLE_RUNS:
            w1_init, w2_init = _article_setup(seed, scale)
            w1 = torch.tensor(w1_init, requires_grad=True)
            w2 = torch.tensor(w2_init, requires_grad=True)
            sums = [X1.sum(), X2.sum()]
            targets = [torch.tensor(np.arctan(s) if activations else s) for s in sums]
            for _ in range(epochs):
                for image, target in zip(images, targets):
                    layer1 = TF.conv2d(image, w1.flip((0, 1)).reshape(1, 1, 3, 3))
                    if activations:
                        layer1 = layer1.relu()
                    out = TF.max_pool2d(layer1, 2).reshape(1, 4) @ w2
                    if activations:
                        out = out.arctan()
                    cost = ((out - target) ** 2).sum() * 0.5
                    cost.backward()
                    with torch.no_grad():
                        w1 -= lr * w1.grad
                        w2 -= lr * w2.grad
                    w1.grad = w2.grad = None
            predictions.append(w2.detach().numpy().ravel().copy())
        return predictions
    return train


CHAIN_OPS = 10_000


def chain_ours():
    rng = np.random.default_rng(3)
    x = Tensor(rng.standard_normal(16, dtype=F32), requires_grad=True)
    scale = Tensor(np.full(16, 0.9, F32))
    shift = Tensor(rng.standard_normal(16, dtype=F32) * 0.1)

    def step():
        y = x
        for i in range(CHAIN_OPS):
            kind = i % 3
            y = y * scale if kind == 0 else (y + shift if kind == 1 else y.tanh())
        y.sum().backward()
        x.grad = None
    return step


def chain_torch():
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal(16, dtype=F32), requires_grad=True)
    scale = torch.full((16,), 0.9)
    shift = torch.tensor(rng.standard_normal(16, dtype=F32) * 0.1)

    def step():
        y = x
        for i in range(CHAIN_OPS):
            kind = i % 3
            y = y * scale if kind == 0 else (y + shift if kind == 1 else y.tanh())
        y.sum().backward()
        x.grad = None
    return step


# name, description, ours, torch, warm-up runs, repeat multiplier, target ratio
WORKLOADS = {
    "a": ("LeNet step (64×1×28×28, fwd+bwd)", lenet_ours, lenet_torch, 3, 3, 1.0),
    "b": ("conv 32×16×32×32 → pool 2 (fwd+bwd)", conv_pool_ours, conv_pool_torch, 2, 2, 2.0),
    "c": ("max_pool2d k3 s2 64×16×32×32 (fwd+bwd)", pool_ours, pool_torch, 2, 2, 0.6),
    "d": ("article network, both trainings (f64)", article_ours, article_torch, 1, 0.5, 2.0),
    "e": ("10,000-op elementwise chain (fwd+bwd)", chain_ours, chain_torch, 1, 0.5, 2.0),
}


class Worker:
    """A child process that times one framework: ``ours`` never imports torch, ``torch``
    never builds our graphs. Each side thus runs in a process like its users' (the garbage
    collector's full passes cost in proportion to every object alive, and importing torch
    adds ~170,000 of them), and neither side's thread pool spins beside the other's."""

    def __init__(self, framework):
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", framework],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = json.loads(self.process.stdout.readline())["ready"]

    def run(self, key, warmup, count):
        self.process.stdin.write(json.dumps([key, warmup, count]) + "\n")
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def worker_loop(framework):
    """Serve ``[workload, warm-up runs, timed runs]`` requests; answer with the times."""
    ready = framework == "ours" or load_torch()
    print(json.dumps({"ready": ready}), flush=True)
    steps = {}
    for line in sys.stdin:
        key, warmup, count = json.loads(line)
        if key not in steps:
            steps[key] = WORKLOADS[key][1 if framework == "ours" else 2]()
        step = steps[key]
        for _ in range(warmup):
            step()
        times = []
        for _ in range(count):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        print(json.dumps(times), flush=True)


def time_medians(workers, key, warmup, repeat, block_seconds=0.1):
    """Median seconds per step on each side, timed in alternating blocks (ours, torch, ours,
    torch, …) so that load from other processes on a shared machine hits both sides alike.

    The blocks are short (about ``block_seconds`` of the slower side, judged from the warm-up),
    because this host's speed drifts over seconds: with a few long blocks, one side could
    catch a slow spell the other missed. Each block starts with an untimed run (the other
    side's thread pool may still be spinning down: OpenBLAS and OpenMP workers busy-wait for a
    while after a call)."""
    warm = [worker.run(key, warmup, 1) for worker in workers]  # also: one step's duration
    per_block = max(1, min(repeat, int(block_seconds / max(t[0] for t in warm))))
    times = [[] for _ in workers]
    while len(times[0]) < repeat:
        count = min(per_block, repeat - len(times[0]))
        for worker, samples in zip(workers, times):
            samples += worker.run(key, 1, count)
    return [statistics.median(samples) for samples in times], times


# ---- memory (f) -------------------------------------------------------------------------------
def _rss_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(framework):
    """In a fresh process: build (b), run it once to warm up, then the peak RSS growth of a step."""
    if framework == "torch":
        load_torch()
    step = (conv_pool_ours if framework == "ours" else conv_pool_torch)()
    step()
    with open("/proc/self/clear_refs", "w") as clear:  # reset VmHWM to the current RSS
        clear.write("5")
    before = _rss_kib("VmRSS:")
    step()
    print(json.dumps({"rss_peak_delta_mib": (_rss_kib("VmHWM:") - before) / 1024}))


def rss_delta(framework):
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", framework],
                             capture_output=True, text=True, timeout=120, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])["rss_peak_delta_mib"]
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as error:
        print(f"  (rss measurement for {framework} failed: {error})", file=sys.stderr)
        return None


def tracemalloc_peak_ours():
    step = conv_pool_ours()
    step()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    step()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / 2**20, scratch_mib()


def scratch_mib():
    """What conv/pool keep in their scratch buffers between steps (allocated before the traced
    step, so not in its peak, but resident all the same)."""
    from tinygrad_pool import scratch
    free = getattr(scratch._scratch, "free", {})
    return sum(buffer.nbytes for stack in free.values() for buffer in stack) / 2**20


# ---- driver -----------------------------------------------------------------------------------
def machine(torch_version):
    blas = "?"
    try:
        config = np.show_config(mode="dicts")
        blas_info = config["Build Dependencies"]["blas"]
        blas = f"{blas_info['name']} {blas_info['version']}"
    except Exception:  # older NumPy: no dict mode
        pass
    return {
        "cpus_visible": os.cpu_count(), "threads": 2, "python": platform.python_version(),
        "numpy": np.__version__, "blas": blas, "torch": torch_version,
        "processor": platform.processor() or platform.machine(),
    }


def torch_version():
    try:
        from importlib.metadata import version
        return version("torch")
    except Exception:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15,
                        help="timed runs per side and workload (d, e: half as many)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--only", default="abcdef", help="workload letters, e.g. 'ab' or 'a,c'")
    parser.add_argument("--memory-child", choices=("ours", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=("ours", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        return memory_child(args.memory_child)
    if args.worker:
        return worker_loop(args.worker)

    frameworks = ["ours", "torch"] if importlib.util.find_spec("torch") else ["ours"]
    info = machine(torch_version() if len(frameworks) == 2 else None)
    print(f"numpy {info['numpy']} ({info['blas']}), torch {info['torch']}, "
          f"python {info['python']}, {info['threads']} threads, {info['cpus_visible']} CPUs visible")
    results = {"machine": info, "workloads": {}}
    header = f"{'':2} {'workload':42} {'ours':>10} {'torch':>10} {'ours/torch':>10} {'target':>7}"
    print(header + "\n" + "-" * len(header))
    for key, (title, ours, theirs, warmup, scale, target) in WORKLOADS.items():
        if key not in args.only:
            continue
        repeat = max(3, round(args.repeat * scale))  # timed runs per side
        # A fresh pair of workers per workload: what one workload leaves in a process (malloc's
        # thresholds, the heap's layout, kept buffers) must not change the next one's timing.
        workers = [Worker(framework) for framework in frameworks]
        if not workers[-1].ready:  # torch is there but does not import: our times only
            workers.pop().close()
            frameworks.pop()
        medians, samples = time_medians(workers, key, warmup, repeat)
        for worker in workers:
            worker.close()
        (ours_s, torch_s), (ours_all, torch_all) = (medians + [None])[:2], (samples + [None])[:2]
        ratio = ours_s / torch_s if torch_s else None
        results["workloads"][key] = {
            "title": title, "ours_s": ours_s, "torch_s": torch_s, "ratio": ratio, "target": target,
            "met": None if ratio is None else ratio <= target, "repeat": repeat,
            "ours_all_s": ours_all, "torch_all_s": torch_all}
        print(f"{key:2} {title:42} {ours_s * 1e3:8.2f}ms "
              + (f"{torch_s * 1e3:8.2f}ms {ratio:9.2f}× {target:6.1f}×" if ratio else f"{'—':>10}"),
              flush=True)

    if "f" in args.only:
        traced, scratch = tracemalloc_peak_ours()
        rss_ours = rss_delta("ours")
        rss_torch = rss_delta("torch") if len(frameworks) == 2 else None
        results["workloads"]["f"] = {
            "title": "peak memory of (b)", "ours_tracemalloc_mib": traced,
            "ours_scratch_kept_mib": scratch,
            "ours_rss_delta_mib": rss_ours, "torch_rss_delta_mib": rss_torch,
            "ratio_rss": rss_ours / rss_torch if rss_ours and rss_torch else None}
        fmt = lambda v: "—" if v is None else f"{v:.1f} MiB"  # noqa: E731
        print(f"f  peak memory of (b): ours {fmt(traced)} (tracemalloc, one step) + {fmt(scratch)} "
              f"of scratch buffers kept between steps; peak-RSS growth of one step in a fresh "
              f"process: ours {fmt(rss_ours)}, torch {fmt(rss_torch)}")

    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
        print(f"wrote {args.json}")
    return results


if __name__ == "__main__":
    main()
