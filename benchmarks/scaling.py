"""How a step's cost grows with its size: the log-log slope, and the plot benchmarks/scaling.png.

A slope of 1 at the large end means linear growth (twice the batch or twice the chain, twice the
time); at the small end a fixed per-step cost (Python, one NumPy call per op) flattens it.
"""
import numpy as np

LARGE_END = 3  # the slope is fitted on the three largest sizes
LABELS = {"f": ("LeNet-5 training step (f)", "batch size", "per sample"),
          "e": ("elementwise chain, fwd+bwd (e)", "ops in the chain", "per op")}
COLOURS = {"ours": "#1f77b4", "torch": "#d62728"}


def slope(sizes, seconds, points=LARGE_END):
    """Least-squares slope of log(time) against log(size) over the largest ``points`` sizes."""
    x, y = np.log(np.asarray(sizes[-points:], float)), np.log(np.asarray(seconds[-points:], float))
    return float(np.polyfit(x, y, 1)[0])


def linear(value, tolerance=0.15):
    return abs(value - 1) <= tolerance


def verdict(slope, tolerance=0.15) -> str:
    """What a log-log slope says: the requirement is that cost grows no faster than linearly;
    below 1, fixed per-step costs still weigh (or the machine was noisy at the large end)."""
    if slope > 1 + tolerance:
        return "faster than linear: too slow"
    return "linear" if linear(slope, tolerance) else "below linear: fixed costs still weigh"


def plot(scaling, path):
    """Per-step time (top, log-log, with a slope-1 line through ours' largest point) and time per
    sample or per op (bottom) for each scaled workload; deterministic for the same figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [key for key in LABELS if key in scaling]
    figure, axes = plt.subplots(2, len(keys), figsize=(5.5 * len(keys), 7.5), squeeze=False)
    for column, key in enumerate(keys):
        title, xlabel, unit = LABELS[key]
        sizes = np.asarray(scaling[key]["sizes"], float)
        rows = scaling[key]["rows"]
        top, bottom = axes[0, column], axes[1, column]
        for name, slope_value in scaling[key]["slopes"].items():
            seconds = np.array([rows[str(int(s))]["frameworks"][name]["median_s"] for s in sizes])
            low = np.array([rows[str(int(s))]["frameworks"][name]["min_s"] for s in sizes])
            high = np.array([rows[str(int(s))]["frameworks"][name]["max_s"] for s in sizes])
            colour = COLOURS.get(name)
            label = f"{'tinygrad_pool' if name == 'ours' else 'PyTorch'} (slope {slope_value:.2f})"
            top.errorbar(sizes, seconds * 1e3, yerr=[(seconds - low) * 1e3, (high - seconds) * 1e3],
                         marker="o", color=colour, label=label, capsize=2)
            bottom.plot(sizes, seconds / sizes * 1e6, marker="o", color=colour, label=label)
            if name == "ours":
                top.plot(sizes, seconds[-1] * sizes / sizes[-1] * 1e3, "--", color="grey",
                         label="linear (slope 1)")
        top.set(xscale="log", yscale="log", title=title, ylabel="time per step (ms)")
        bottom.set(xscale="log", xlabel=xlabel, ylabel=f"time {unit} (µs)", ylim=(0, None))
        for axis in (top, bottom):
            axis.grid(True, which="both", alpha=0.3)
            axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)
