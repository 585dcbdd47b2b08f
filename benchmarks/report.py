"""The Markdown tables of a run (``run.py --markdown FILE``), for benchmarks/README.md."""
import scaling as S

PEER_NAMES = ("mygrad", "autograd", "tinygrad")


def number(milliseconds):
    return f"{milliseconds:.{0 if milliseconds >= 100 else 1 if milliseconds >= 10 else 2}f}"


def ms(figures):
    if not figures:
        return "—"
    return (f"{number(figures['median_s'] * 1e3)} ms "
            f"({number(figures['min_s'] * 1e3)}–{number(figures['max_s'] * 1e3)})")


def workloads_table(run, peers):
    peer_columns = [name for name in PEER_NAMES if name in peers]
    head = ["", "workload", "tinygrad_pool", "PyTorch", "ours / PyTorch", "target", "same loss"]
    head += [f"{name} (× ours)" for name in peer_columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for rid, row in run["workloads"].items():
        figures, ratio, target = row["frameworks"], row.get("ratio_ours_torch"), row["target"]
        cells = [rid, row["title"], ms(figures.get("ours")), ms(figures.get("torch")),
                 "—" if ratio is None else f"**{ratio:.2f}×**",
                 "—" if target is None or ratio is None else
                 f"≤ {target:g}× {'✓' if ratio <= target else '✗'}",
                 {True: "✓", False: "✗", None: "—"}[row["same_loss"]]]
        for name in peer_columns:
            peer_ratio = row.get("ratio_peer_ours", {}).get(name)
            need = 5.0 if row["key"] in "cfg" else 1.0
            cells.append("—" if peer_ratio is None else
                         f"{ms(figures[name])}: {peer_ratio:.1f}× {'✓' if peer_ratio >= need else '✗'}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(results):
    info = results["machine"]
    out = [f"Run of {info['date']} on {info['processor']} ({info['cpus_visible']} CPUs visible), "
           f"Python {info['python']}, NumPy {info['numpy']} ({info['blas']}); median of "
           f"{results['repeat']} timed steps after warm-up (min–max in brackets).", ""]
    for threads, run in results["runs"].items():
        out += [f"### {threads} thread{'s' if threads != '1' else ''}", "",
                workloads_table(run, results["frameworks"]), ""]
        ceiling = run.get("ceiling")
        if ceiling:
            gemms = ", ".join(f"{'×'.join(map(str, g['shape']))}: {g['gflops']:.1f} GFLOP/s"
                              for g in ceiling["gemm"].values())
            vgg = ", ".join(f"{name} {gflops:.1f} GFLOP/s = **{ceiling['fraction'][name]:.0%}**"
                            for name, gflops in ceiling.get("vgg_gflops", {}).items())
            out += [f"Ceiling: NumPy float32 GEMM (M×K×N) {gemms}; (g) does "
                    f"{ceiling['vgg_flops'] / 1e9:.2f} GFLOP a step: {vgg} of the best GEMM rate.", ""]
    memory = results.get("memory")
    if memory and "ours" in memory:
        ours, torch = memory["ours"], memory.get("torch")
        live = memory.get("ours-live")
        out += ["### Memory of one (g) step", "",
                "| | allocated during the step (peak over before) | kept between steps | "
                "peak-RSS growth |", "|---|---:|---:|---:|",
                f"| tinygrad_pool (tracemalloc) | {ours['peak_mib']:.1f} MiB | "
                f"{ours['scratch_kept_mib']:.1f} MiB (pool) | {ours['rss_growth_mib']:.1f} MiB |"]
        if live:
            out += [f"| tinygrad_pool, pool keeping nothing (live arrays) | "
                    f"{live['peak_mib']:.1f} MiB | — | {live['rss_growth_mib']:.1f} MiB |"]
        if torch:
            out += [f"| PyTorch (profiler) | {torch['peak_mib']:.1f} MiB | — | "
                    f"{torch['rss_growth_mib']:.1f} MiB |", "",
                    f"Ratio to PyTorch's peak: **{memory['ratio']:.2f}×** with the pool (peak + "
                    f"kept)" + (f", **{memory['ratio_live']:.2f}×** for the step's live arrays."
                                if "ratio_live" in memory else ".")]
        out.append("")
    scaling = results.get("scaling")
    for key in ("f", "e"):
        if not scaling or key not in scaling:
            continue
        data = scaling[key]
        title, xlabel, unit = S.LABELS[key]
        names = list(data["slopes"])
        out += [f"### Scaling: {title}", "",
                f"| {xlabel} | " + " | ".join(f"{n} per step | {n} {unit}" for n in names) + " |",
                "|---:|" + "---:|" * (2 * len(names))]
        for size in data["sizes"]:
            row = data["rows"][str(size)]["frameworks"]
            out.append(f"| {size:,} | " + " | ".join(
                f"{number(row[n]['median_s'] * 1e3)} ms | {number(row[n]['median_s'] / size * 1e6)} µs"
                for n in names) + " |")
        out += ["", "Log-log slope over the three largest sizes: " + ", ".join(
            f"{n} {s:.2f} ({S.verdict(s)})"
            for n, s in data["slopes"].items()) + ".", ""]
    if results.get("unavailable"):
        out += ["Unavailable: " + "; ".join(f"{n}: {r}" for n, r in results["unavailable"].items()), ""]
    return "\n".join(out)
