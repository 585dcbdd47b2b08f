"""Before and after, in one process: the package at a commit against the working tree.

    .venv/bin/python benchmarks/compare.py 787ca5f --only a,c,d,e,f1,h --rounds 21

Both versions are imported side by side under other names (the commit's ``tinygrad_pool/``
from ``git archive``, the working tree's copied), so that one process times both, alternating
which goes first each round: a busy host slows both alike, where separate processes that run
minutes apart can differ by 30% or more on the same code. Each workload (benchmarks/workloads.py)
prints the median time per step of each and the ratio after/before, at one thread.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS_PER_ROUND = {"a": 10, "b": 3, "c": 10, "d": 1, "e": 1, "f1": 20, "f64": 5, "f256": 1,
                   "g": 2, "h": 20}


def builders(workloads):
    return {"a": workloads.lenet_style, "b": workloads.conv_pool, "c": workloads.pool,
            "d": workloads.article, "e": workloads.chain,
            "f1": lambda lib: workloads.lenet5(lib, 1), "f64": lambda lib: workloads.lenet5(lib, 64),
            "f256": lambda lib: workloads.lenet5(lib, 256), "g": workloads.vgg,
            "h": workloads.mlp}


def packages(commit: str, where: Path) -> None:
    """``before`` (the commit's package) and ``after`` (the working tree's) under ``where``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "tinygrad_pool"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "tinygrad_pool").rename(where / "before")
    shutil.copytree(ROOT / "tinygrad_pool", where / "after",
                    ignore=shutil.ignore_patterns("__pycache__"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", help="the version to compare the working tree with")
    parser.add_argument("--only", default="a,b,c,d,e,f1,f64,g,h", help="workload letters")
    parser.add_argument("--rounds", type=int, default=11, help="alternations (odd)")
    args = parser.parse_args()
    import threadpoolctl
    threadpoolctl.threadpool_limits(1)
    with tempfile.TemporaryDirectory() as folder:
        packages(args.commit, Path(folder))
        sys.path[:0] = [folder, str(ROOT / "benchmarks")]
        import after
        import before
        import workloads
        make = builders(workloads)
        for name in args.only.split(","):
            steps = {"before": make[name](before), "after": make[name](after)}
            for step in steps.values():  # warm up: first-call costs, the memory pool
                step(), step()
            times = {"before": [], "after": []}
            for round_ in range(args.rounds):
                for which in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                    start = time.perf_counter()
                    for _ in range(STEPS_PER_ROUND[name]):
                        steps[which]()
                    times[which].append((time.perf_counter() - start) / STEPS_PER_ROUND[name])
            old, new = statistics.median(times["before"]), statistics.median(times["after"])
            print(f"({name}) before {old * 1e3:9.3f} ms   after {new * 1e3:9.3f} ms   "
                  f"after/before {new / old:.3f}", flush=True)


if __name__ == "__main__":
    main()
