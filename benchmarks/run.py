"""Benchmarks: tinygrad_pool against PyTorch (CPU), same workloads, same run, same threads.

    python benchmarks/run.py [--repeat N] [--threads default,1] [--only a,f,g,memory,...]
                             [--peers] [--json benchmarks/results.json] [--markdown FILE]
                             [--plot benchmarks/scaling.png]

Workloads (float32 unless stated; builders in workloads.py, peers in peers.py):
  a  LeNet-style step, 64×1×28×28, forward + backward   b  conv 32×16×32×32 → max-pool 2
  c  max_pool2d k3 s2 on 64×16×32×32                   d  the seed article's two trainings (f64)
  e  10,000-op elementwise chain                        f  LeNet-5 training step, batch 1/64/256
  g  VGG-style block training step, batch 32            h  MLP 784-128-10 training step, batch 64
Sections: ceiling (NumPy float32 GEMM rate, and the share of it (g) reaches), memory (peak of one
(g) step, ours vs PyTorch), scaling ((f) over batch 1…256 and (e) over 1k…100k ops, ours and
PyTorch, at the first thread setting; writes the plot).

Each framework is timed in its own worker process (ours never imports torch), a fresh set of
workers for each workload and thread setting, in short rotating blocks (~0.1 s of the slowest
side, at least one step), each block after one untimed run; medians over all timed runs. The
thread limits (OMP/OPENBLAS/MKL_NUM_THREADS, and torch.set_num_threads) are put into the
workers' environment before they import NumPy; the library itself never touches BLAS, malloc
or GC settings.
"""
import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import peers  # noqa: E402
import workloads as W  # noqa: E402  (imports NumPy: the parent does no timing itself)

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SAME_LOSS_RTOL = 1e-4
CHAIN_OPS = 10_000

# key: title, builder(lib, size), warm-up runs, repeat multiplier, target (ours / torch) or None
# (issue 14's targets; (b) has none)
WORKLOADS = {
    "a": ("LeNet-style step 64×1×28×28 (fwd+bwd)", lambda lib, n: W.lenet_style(lib), 3, 1, 1.0),
    "b": ("conv 32×16×32×32 → pool 2 (fwd+bwd)", lambda lib, n: W.conv_pool(lib), 2, 1, None),
    "c": ("max_pool2d k3 s2 64×16×32×32 (fwd+bwd)", lambda lib, n: W.pool(lib), 2, 1, 0.6),
    "d": ("article network, both trainings (f64)", lambda lib, n: W.article(lib), 1, 1, 1.0),
    "e": ("{n:,}-op elementwise chain (fwd+bwd)", W.chain, 1, 1, 1.5),
    "f": ("LeNet-5 train step, batch {n}", W.lenet5, 3, 1, 1.0),
    "g": ("VGG block train step 3×32×32, batch 32", W.vgg, 2, 1, 1.0),
    "h": ("MLP 784-128-10 train step, batch 64", W.mlp, 3, 1, 1.0),
}
ROWS = [("a", 64), ("b", 32), ("c", 64), ("d", 1), ("e", CHAIN_OPS), ("f", 1), ("f", 64),
        ("f", 256), ("g", 32), ("h", 64)]
SECTIONS = ("ceiling", "memory", "scaling")
SCALING = {"f": [1, 2, 4, 8, 16, 32, 64, 128, 256], "e": [1_000, 3_000, 10_000, 30_000, 100_000]}
NUMPY_PEERS = ("mygrad", "autograd")
PEER_FASTER = {"c": 5.0, "f": 5.0, "g": 5.0}  # "≥ 5× faster than a NumPy peer"; elsewhere ≥ 1×
# GEMMs for the ceiling: (g)'s largest conv GEMM (Cout × Cin·k² times Cin·k² × N·H·W) and a square
GEMMS = {"gemm_conv": (32, 288, 32 * 32 * 32), "gemm_square": (1024, 1024, 1024)}


def row_id(key, size):
    return f"f{size}" if key == "f" else key


# ---- worker processes ---------------------------------------------------------------------------
def thread_env(threads):
    env = dict(os.environ, BENCH_THREADS=str(threads))
    env.update({var: str(threads) for var in THREAD_VARS})
    return env


class Worker:
    """A child process that times one framework: ``ours`` never imports torch, ``torch``
    never builds our graphs. Each side thus runs in a process like its users' (the garbage
    collector's full passes cost in proportion to every object alive, and importing torch
    adds ~170,000 of them), and neither side's thread pool spins beside the other's."""

    def __init__(self, framework, threads):
        self.framework = framework
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", framework],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            env=thread_env(threads))
        self.info = json.loads(self.process.stdout.readline())

    def run(self, key, size, warmup, count):
        """The worker's answer; an error if it died instead (tinygrad's 10,000-op graph
        overflows the C stack: no Python exception reaches the worker's own handler)."""
        try:
            self.process.stdin.write(json.dumps([key, size, warmup, count]) + "\n")
            line = self.process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            return {"error": f"the worker process exited (code {self.process.wait()})"}
        return json.loads(line)

    def close(self):
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        self.process.wait()


def load_framework(framework):
    """The framework's module or peer adapter and its version (raises when unavailable)."""
    if framework == "ours":
        import tinygrad_pool
        from importlib.metadata import version
        return tinygrad_pool, version("tinygrad_pool")
    if framework == "torch":
        import torch
        torch.set_num_threads(int(os.environ.get("BENCH_THREADS", torch.get_num_threads())))
        return torch, torch.__version__
    adapter, reason = peers.load(framework)
    if adapter is None:
        raise RuntimeError(reason)
    return adapter, adapter.version


def make_step(framework, lib, key, size):
    if key in GEMMS:
        return gemm_step(*GEMMS[key])
    if framework in ("ours", "torch"):
        return WORKLOADS[key][1](lib, size)
    return peers.builder(lib, key, size)


def gemm_step(m, k, n):
    import numpy as np
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    out = np.empty((m, n), np.float32)

    def step():
        np.matmul(a, b, out=out)
    return step


def worker_loop(framework):
    """Serve ``[workload, size, warm-up runs, timed runs]``; answer with the times and the loss of
    the very first step this process ran of that workload (the equal-loss check)."""
    try:
        lib, version = load_framework(framework)
        info = {"ready": True, "version": version, "threads": os.environ.get("BENCH_THREADS")}
        if framework == "torch":
            info["torch_threads"] = lib.get_num_threads()
    except Exception as error:  # noqa: BLE001 - reported to the parent as "unavailable"
        lib, info = None, {"ready": False, "reason": str(error) or type(error).__name__}
    print(json.dumps(info), flush=True)
    steps, first_loss = {}, {}
    for line in sys.stdin:
        key, size, warmup, count = json.loads(line)
        try:
            if (key, size) not in steps:
                step = steps[key, size] = make_step(framework, lib, key, size)
                loss = step()
                first_loss[key, size] = None if loss is None else \
                    float(loss.item() if hasattr(loss, "item") else loss)
                warmup -= 1
            step = steps[key, size]
            for _ in range(warmup):
                step()
            times = []
            for _ in range(count):
                start = time.perf_counter()
                step()
                times.append(time.perf_counter() - start)
        except Exception as error:  # noqa: BLE001 - this framework cannot run this workload here
            print(json.dumps({"error": f"{type(error).__name__}: {error}".strip()[:300]}), flush=True)
            continue
        print(json.dumps({"times": times, "loss": first_loss[key, size]}), flush=True)


def time_rotating(workers, key, size, warmup, repeat, block_seconds=0.1):
    """Seconds per step of each worker, timed in rotating blocks (ours, torch, peers, ours, …)
    so that load from other processes on a shared machine hits every side alike.

    The blocks are short (about ``block_seconds`` of the slowest side, judged from the warm-up),
    because this host's speed drifts over seconds: with a few long blocks, one side could catch
    a slow spell the others missed. Each block starts with an untimed run (the other side's
    thread pool may still be spinning down: OpenBLAS and OpenMP workers busy-wait for a while
    after a call). Returns the workers that ran, their samples and first-step losses, and the
    errors of those that failed (by framework)."""
    warm = [worker.run(key, size, max(warmup, 1), 1) for worker in workers]
    errors = {w.framework: r["error"] for w, r in zip(workers, warm) if "error" in r}
    warm = [r for r in warm if "error" not in r]
    workers = [w for w in workers if w.framework not in errors]
    per_block = max(1, min(repeat, int(block_seconds / max(w["times"][0] for w in warm))))
    samples = [[] for _ in workers]
    while len(samples[0]) < repeat:
        count = min(per_block, repeat - len(samples[0]))
        for worker, taken in zip(workers, samples):
            taken += worker.run(key, size, 1, count)["times"]
    return workers, samples, [w["loss"] for w in warm], errors


def summary(samples):
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples),
            "samples_s": samples}


def same_loss(losses):
    """Does every framework's first-step loss equal ours (to SAME_LOSS_RTOL, relative)?"""
    ours = losses.get("ours")
    others = [value for name, value in losses.items() if name != "ours" and value is not None]
    if ours is None or not others:  # nothing to compare ours with (never ours with itself)
        return None
    return all(abs(value - ours) <= SAME_LOSS_RTOL * max(1.0, abs(ours))
               for value in losses.values() if value is not None)


def measure(frameworks, threads, key, size, repeat, unavailable):
    """One workload at one thread setting: every framework that can express it, in fresh workers."""
    workers = []
    for framework in frameworks:
        if framework in unavailable:
            continue
        if framework not in ("ours", "torch") and key not in peers.PEERS[framework].workloads:
            continue
        worker = Worker(framework, threads)
        if worker.info["ready"]:
            workers.append(worker)
        else:
            unavailable[framework] = worker.info["reason"]
            worker.close()
    ran, samples, losses, errors = time_rotating(workers, key, size, WORKLOADS[key][2], repeat)
    for worker in workers:
        worker.close()
    names = [worker.framework for worker in ran]
    result = {"frameworks": {name: summary(s) for name, s in zip(names, samples)},
              "first_step_loss": dict(zip(names, losses)), "repeat": repeat, "errors": errors}
    result["same_loss"] = same_loss(result["first_step_loss"])
    ours = result["frameworks"].get("ours", {}).get("median_s")
    if ours:
        torch_s = result["frameworks"].get("torch", {}).get("median_s")
        result["ratio_ours_torch"] = ours / torch_s if torch_s else None
        result["ratio_peer_ours"] = {name: s["median_s"] / ours for name, s in result["frameworks"].items()
                                     if name not in ("ours", "torch")}
    return result


# ---- memory -------------------------------------------------------------------------------------
def _rss_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def rss_growth_mib(step):
    """Peak-RSS growth of one step: /proc/self/clear_refs resets the high-water mark, then
    VmHWM − VmRSS before the step. Only a rough figure: memory malloc kept from the warm-up is
    reused without growing RSS, and what it returned is counted again."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before = _rss_kib("VmRSS:")
    step()
    return (_rss_kib("VmHWM:") - before) / 1024


def traced_peak_ours(step):
    """Peak of NumPy's allocations during one step over what was allocated before it
    (tracemalloc: NumPy reports its buffers to it), and the buffers conv/pool/ReLU keep between
    steps (allocated before the step, so not in its peak, but part of its working memory)."""
    import tracemalloc
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    step()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / 2**20, scratch_mib()


def scratch_mib():
    """The blocks the pool of reused memory (fast/memory.py) keeps free between steps."""
    from tinygrad_pool.fast import memory
    return memory.idle_bytes() / 2**20


def allocated_peak_torch(step):
    """Peak of PyTorch's CPU allocations during one step over what was allocated before it: the
    profiler records every allocation and free (``profile_memory=True``) with the allocator's
    running total, the same quantity tracemalloc gives for ours. (Frees of blocks allocated before
    the profiler started, the previous step's .grad, are not seen: at most the parameters' size.)"""
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        step()
    allocations, pending = [], list(profiler.profiler.kineto_results.experimental_event_tree())
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        if node.tag == _EventType.Allocation:
            allocations.append((node.start_time_ns, node.extra_fields.alloc_size))
    running = itertools.accumulate(size for _, size in sorted(allocations))
    return max(running, default=0) / 2**20


def memory_child(framework):
    """In a fresh process: build (g), one warm-up step, the RSS growth of a step, then the
    allocation peak of a step (tracemalloc for ours, the profiler for torch). "ours-live": ours
    with the pool keeping nothing (every buffer is fresh memory, freed when done), so that
    tracemalloc's peak is the most memory the step's arrays ever held at once."""
    lib, _ = load_framework("ours" if framework == "ours-live" else framework)
    if framework == "ours-live":
        from tinygrad_pool.fast import memory
        memory.MAX_KEPT_BYTES = 0
    step = W.vgg(lib)
    step()
    rss = rss_growth_mib(step)
    if framework.startswith("ours"):
        traced, scratch = traced_peak_ours(step)
        result = {"peak_mib": traced, "scratch_kept_mib": scratch, "rss_growth_mib": rss}
    else:
        result = {"peak_mib": allocated_peak_torch(step), "scratch_kept_mib": 0.0, "rss_growth_mib": rss}
    print(json.dumps(result))


def memory(threads, frameworks):
    result = {}
    for framework in frameworks[:1] + ["ours-live"] + frameworks[1:2]:
        try:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", framework],
                                 capture_output=True, text=True, timeout=300, check=True,
                                 env=thread_env(threads)).stdout
            result[framework] = json.loads(out.strip().splitlines()[-1])
        except (subprocess.SubprocessError, ValueError, IndexError, OSError) as error:
            print(f"  (memory measurement for {framework} failed: {error})", file=sys.stderr)
    if "ours" in result and "torch" in result and result["torch"]["peak_mib"]:
        ours = result["ours"]
        result["ratio"] = (ours["peak_mib"] + ours["scratch_kept_mib"]) / result["torch"]["peak_mib"]
        if "ours-live" in result:
            result["ratio_live"] = result["ours-live"]["peak_mib"] / result["torch"]["peak_mib"]
    return result


# ---- ceiling ------------------------------------------------------------------------------------
def ceiling(threads, repeat, vgg_row):
    """NumPy float32 GEMM rates (timed in an ``ours`` worker of this thread setting) and the share
    of the best of them that (g)'s training step reaches."""
    worker = Worker("ours", threads)
    rates = {}
    for name, (m, k, n) in GEMMS.items():
        _, (samples,), _, _ = time_rotating([worker], name, 0, 2, repeat)
        rates[name] = {"shape": [m, k, n], **summary(samples),
                       "gflops": 2 * m * k * n / statistics.median(samples) / 1e9}
    worker.close()
    result = {"gemm": rates, "machine_gflops": max(r["gflops"] for r in rates.values()),
              "vgg_flops": W.training_flops("vgg", 32)}
    for framework, figures in (vgg_row or {}).get("frameworks", {}).items():
        gflops = result["vgg_flops"] / figures["median_s"] / 1e9
        result.setdefault("vgg_gflops", {})[framework] = gflops
        result.setdefault("fraction", {})[framework] = gflops / result["machine_gflops"]
    return result


# ---- scaling ------------------------------------------------------------------------------------
def scaling(frameworks, threads, repeat, unavailable):
    result = {}
    for key, sizes in SCALING.items():
        rows = {}
        for size in sizes:
            rows[size] = measure(frameworks[:2], threads, key, size, repeat if key == "f" else
                                 max(3, repeat // 3), unavailable)
            figures = rows[size]["frameworks"]
            print(f"   scaling {key} {size:>7,}: " + ", ".join(
                f"{name} {f['median_s'] * 1e3:.2f} ms" for name, f in figures.items()), flush=True)
        result[key] = {"sizes": sizes, "rows": {str(size): row for size, row in rows.items()}}
        import scaling as S
        result[key]["slopes"] = {
            name: S.slope(sizes, [rows[s]["frameworks"][name]["median_s"] for s in sizes])
            for name in rows[sizes[0]]["frameworks"]}
    return result


# ---- driver -------------------------------------------------------------------------------------
def machine():
    import numpy as np
    blas = "?"
    try:
        blas_info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas_info['name']} {blas_info['version']}"
    except Exception:  # noqa: BLE001 - older NumPy: no dict mode
        pass
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpus_visible": len(os.sched_getaffinity(0)), "python": platform.python_version(),
            "numpy": np.__version__, "blas": blas, "processor": model,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def parse_threads(text):
    default = len(os.sched_getaffinity(0))
    values = [default if part == "default" else int(part) for part in text.split(",") if part]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"--threads: expected 'default' or positive integers, got {text!r}")
    return list(dict.fromkeys(values))


def fmt_ms(figures):
    return f"{figures['median_s'] * 1e3:.2f} ms" if figures else "—"


def print_row(threads, rid, title, row):
    figures = row["frameworks"]
    ratio = row.get("ratio_ours_torch")
    peers = "  ".join(f"{name} {fmt_ms(f)} ({row['ratio_peer_ours'][name]:.1f}×)"
                      for name, f in figures.items() if name not in ("ours", "torch"))
    check = {True: "same loss", False: "LOSS DIFFERS " + json.dumps(row["first_step_loss"]),
             None: ""}[row["same_loss"]]
    peers += "".join(f"  {name} failed ({error})" for name, error in row["errors"].items())
    print(f"{threads:>2} {rid:4} {title:44} {fmt_ms(figures.get('ours')):>10} "
          f"{fmt_ms(figures.get('torch')):>10} {'' if ratio is None else f'{ratio:.2f}×':>7}  "
          f"{check}  {peers}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per side and workload (≥ 9)")
    parser.add_argument("--threads", type=parse_threads, default=parse_threads("default,1"),
                        help="thread settings, e.g. 'default,1' (default: both), '2' or '1'")
    parser.add_argument("--only", default=",".join([*WORKLOADS, *SECTIONS]),
                        help="workload letters and sections (ceiling, memory, scaling), e.g. 'a,g,memory'")
    parser.add_argument("--peers", action="store_true", help="also time MyGrad, autograd, tinygrad")
    parser.add_argument("--json", default=None, help="write every figure to this file")
    parser.add_argument("--markdown", default=None, help="write the tables as Markdown to this file")
    parser.add_argument("--plot", default=os.path.join(HERE, "scaling.png"),
                        help="where the scaling section writes its plot ('' for none)")
    parser.add_argument("--memory-child", choices=("ours", "ours-live", "torch"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        return memory_child(args.memory_child)
    if args.worker:
        return worker_loop(args.worker)
    selected = set()
    for part in args.only.split(","):  # "abc", "a,g,memory"
        selected.update([part.strip()] if part.strip() in SECTIONS else part.strip())
    unknown = selected - set(WORKLOADS) - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown workloads or sections {sorted(unknown)}; "
                     f"expected letters of {''.join(WORKLOADS)} or {', '.join(SECTIONS)}")

    import importlib.util
    has_torch = importlib.util.find_spec("torch") is not None
    frameworks = ["ours"] + (["torch"] if has_torch else [])
    if not has_torch:
        print("PyTorch is not installed: ours is timed alone, with no ratios and no loss check "
              "(make bench sets up torch==2.13.0, as make test does)")
    if args.peers:
        frameworks += list(peers.PEERS)
    else:
        print("peers (MyGrad, autograd, tinygrad) are not timed: --peers adds them")
    unavailable = {}
    results = {"machine": machine(), "thread_settings": args.threads, "repeat": args.repeat,
               "frameworks": frameworks, "runs": {}}
    info = results["machine"]
    print(f"{info['processor']}, {info['cpus_visible']} CPUs visible; numpy {info['numpy']} "
          f"({info['blas']}), python {info['python']}; thread settings {args.threads}")
    print(f"{'th':>2} {'':4} {'workload':44} {'ours':>10} {'torch':>10} {'o/t':>7}")
    for threads in args.threads:
        run = results["runs"][str(threads)] = {"workloads": {}}
        for key, size in ROWS:
            if key not in selected:
                continue
            title = WORKLOADS[key][0].format(n=size)
            row = measure(frameworks, threads, key, size, args.repeat, unavailable)
            row.update(title=title, key=key, size=size, target=WORKLOADS[key][4])
            run["workloads"][row_id(key, size)] = row
            print_row(threads, row_id(key, size), title, row)
        if "ceiling" in selected:
            run["ceiling"] = ceiling(threads, args.repeat, run["workloads"].get("g"))
            c = run["ceiling"]
            print(f"{threads:>2} ceiling: GEMM " + ", ".join(
                f"{name} {r['gflops']:.1f} GFLOP/s" for name, r in c["gemm"].items())
                + "; (g) " + ", ".join(f"{name} {g:.1f} GFLOP/s = {c['fraction'][name]:.0%}"
                                       for name, g in c.get("vgg_gflops", {}).items()), flush=True)
    if "memory" in selected:
        results["memory"] = memory(args.threads[0], frameworks)
        m = results["memory"]
        print("memory of one (g) step: " + "; ".join(
            f"{name} peak {m[name]['peak_mib']:.1f} MiB + {m[name]['scratch_kept_mib']:.1f} MiB kept, "
            f"RSS growth {m[name]['rss_growth_mib']:.1f} MiB"
            for name in ("ours", "ours-live", "torch") if name in m)
            + (f"; ratio {m['ratio']:.2f}× (with the pool)" if "ratio" in m else "")
            + (f", {m['ratio_live']:.2f}× (live arrays)" if "ratio_live" in m else ""), flush=True)
    if "scaling" in selected:
        results["scaling"] = scaling(frameworks, args.threads[0], args.repeat, unavailable)
        if args.plot:
            import scaling as S
            S.plot(results["scaling"], args.plot)
            print(f"wrote {args.plot}")
    results["unavailable"] = unavailable
    for name, reason in unavailable.items():
        print(f"{name}: unavailable ({reason})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
        print(f"wrote {args.json}")
    if args.markdown:
        import report
        with open(args.markdown, "w") as out:
            out.write(report.markdown(results))
        print(f"wrote {args.markdown}")
    return results


if __name__ == "__main__":
    main()
