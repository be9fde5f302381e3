#!/usr/bin/python3
"""Summarises bench/comm results: a markdown table, the target checks and a PNG plot.

Reads <dir>/<config>.<round>.json: `tilepipe pingpong --json` objects (their `results`; older
tilepipes printed the array alone) or mpi_pingpong arrays (objects with bytes, latency_us,
latency_us_min, latency_us_max, bandwidth_mb_per_s), and comm_limits JSON lines
(limit_*). Never links C++. Usage: plot_pingpong.py DIR [--markdown FILE] [--png FILE]
"""
import argparse
import glob
import json
import os
import statistics
from collections import defaultdict

LABELS = {
    "tilepipe_shm_poll": "tilepipe shm, poll (World buffers)",
    "tilepipe_shm_poll_user": "tilepipe shm, poll, user buffers",
    "tilepipe_shm_hybrid": "tilepipe shm, hybrid (World buffers)",
    "tilepipe_shm_block": "tilepipe shm, block (futex, World buffers)",
    "tilepipe_shm_poll_cma": "tilepipe shm, poll, user buffers, rendezvous cma",
    "tilepipe_shm_poll_copy": "tilepipe shm, poll, user buffers, rendezvous copy",
    "tilepipe_shm_poll_eager64k": "tilepipe shm, poll, eager up to 64 KiB",
    "tilepipe_mpi_openmpi": "tilepipe over MPI (Open MPI ob1/vader)",
    "openmpi_vader_cma": "raw Open MPI, vader shm + CMA",
    "openmpi_vader_nocma": "raw Open MPI, vader shm, no single copy",
    "openmpi_tcp_loopback": "raw Open MPI, TCP loopback",
    "mpich_posix_shm": "raw MPICH, posix shm",
    "mpich_ucx_cma": "raw MPICH, UCX sm + CMA",
}
RAW_MPI_SHM = ["openmpi_vader_cma", "openmpi_vader_nocma", "mpich_posix_shm", "mpich_ucx_cma"]


def load(directory):
    rows = defaultdict(lambda: defaultdict(list))  # config -> bytes -> [objects, one per round]
    limits = defaultdict(lambda: defaultdict(list))  # what -> bytes -> [objects]
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        config = os.path.basename(path).split(".")[0]
        text = open(path, encoding="utf-8").read().strip()
        if not text:
            continue
        if config.startswith("limit_"):
            for line in text.splitlines():
                obj = json.loads(line)
                # Results before 2026-11-26 named the one-copy limit onecopy_mbps (MB/s).
                what = "onecopy_mb_per_s" if obj["what"] == "onecopy_mbps" else obj["what"]
                limits[what][obj["bytes"]].append(obj)
        else:
            data = json.loads(text)
            for obj in data["results"] if isinstance(data, dict) else data:
                rows[config][obj["bytes"]].append(obj)
    return rows, limits


def summary(objs, key="latency_us"):
    """Median over rounds of the per-round medians; extreme min and max over all batches."""
    return (statistics.median(o[key] for o in objs), min(o[key + "_min"] for o in objs),
            max(o[key + "_max"] for o in objs))


def limit_value(limits, what, nbytes):
    objs = limits.get(what, {}).get(nbytes)
    if not objs:
        return None
    return statistics.median(o["value"] for o in objs)


def latency(rows, config, nbytes):
    objs = rows.get(config, {}).get(nbytes)
    return summary(objs) if objs else None


def bandwidth(rows, config, nbytes, best=False):
    """MB/s from the median latency, or (best=True) from the fastest batch."""
    lat = latency(rows, config, nbytes)
    if not lat:
        return None
    t = lat[1] if best else lat[0]
    return nbytes / t if t > 0 else None


def fmt_lat(v):
    return "-" if v is None else f"{v[0]:.3f} [{v[1]:.3f}-{v[2]:.2f}]"


def fmt_bw(v):
    return "-" if v is None else f"{v:,.0f}"


def markdown(rows, limits, context):
    out = []
    if context:
        out += ["```", context.strip(), "```", ""]
    big = [65536, 1 << 20, 4 << 20]
    out.append("| configuration | 8 B one-way us: median [min-max] | 64 KiB MB/s | 1 MiB MB/s "
               "| 4 MiB MB/s | 1 MiB best | 4 MiB best |")
    out.append("|---|---|---:|---:|---:|---:|---:|")
    cl = limit_value(limits, "cacheline_one_way", 64)
    cl_objs = limits.get("cacheline_one_way", {}).get(64, [])
    if cl is not None:
        lo = min(o["min"] for o in cl_objs) / 1000
        hi = max(o["max"] for o in cl_objs) / 1000
        out.append(f"| limit: cross-core cache line (one way) | {cl / 1000:.3f} [{lo:.3f}-{hi:.2f}] "
                   "| | | | | |")
    oc = [limit_value(limits, "onecopy_mb_per_s", b) for b in big]
    if any(v is not None for v in oc):
        best = [max((o["max"] for o in limits["onecopy_mb_per_s"].get(b, [])), default=None)
                for b in big[1:]]
        out.append("| limit: one copy (memcpy of a buffer the other core wrote) | | "
                   + " | ".join(fmt_bw(v) for v in oc) + " | "
                   + " | ".join(fmt_bw(v) for v in best) + " |")
    for config in LABELS:
        if config not in rows:
            continue
        out.append(f"| {LABELS[config]} | {fmt_lat(latency(rows, config, 8))} | "
                   + " | ".join(fmt_bw(bandwidth(rows, config, b)) for b in big) + " | "
                   + " | ".join(fmt_bw(bandwidth(rows, config, b, best=True)) for b in big[1:])
                   + " |")
    out.append("")
    out += thresholds(rows)
    out += targets(rows, limits, cl)
    return "\n".join(out) + "\n"


def thresholds(rows):
    """Eager versus rendezvous (cma, copy) around the eager threshold: one-way us per size."""
    configs = [("tilepipe_shm_poll_eager64k", "eager"), ("tilepipe_shm_poll_cma", "rendezvous cma"),
               ("tilepipe_shm_poll_copy", "rendezvous copy"), ("tilepipe_shm_poll_user", "user buffers"),
               ("tilepipe_shm_poll", "World buffers")]
    configs = [(c, n) for c, n in configs if c in rows]
    if not configs:
        return []
    sizes = [1 << k for k in range(12, 23)]
    lines = ["| bytes | " + " | ".join(n + " us" for _, n in configs) + " |",
             "|---:|" + "---:|" * len(configs)]
    for b in sizes:
        cells = [latency(rows, c, b) for c, _ in configs]
        if all(v is None for v in cells):
            continue
        lines.append(f"| {b} | " + " | ".join("-" if v is None else f"{v[0]:.2f}" for v in cells)
                     + " |")
    return lines + [""]


def targets(rows, limits, cacheline_ns):
    """Each target judged on medians and on best batches (the noise-free estimate on a shared
    machine); both verdicts are printed."""
    lines = ["| target | medians | met | best batches | met |", "|---|---|---|---|---|"]
    yes = lambda ok: "yes" if ok else "no"
    poll = latency(rows, "tilepipe_shm_poll", 8)
    hybrid = latency(rows, "tilepipe_shm_hybrid", 8)
    block = latency(rows, "tilepipe_shm_block", 8)
    cl_objs = limits.get("cacheline_one_way", {}).get(64, [])
    if poll and cacheline_ns and cl_objs:
        cl_best = min(o["min"] for o in cl_objs)
        r_med = poll[0] * 1000 / cacheline_ns
        r_best = poll[1] * 1000 / cl_best
        lines.append(f"| 8 B shm+poll <= 1.5x cache-line one-way | {poll[0]:.3f} us = {r_med:.2f}x "
                     f"of {cacheline_ns / 1000:.3f} | {yes(r_med <= 1.5)} | {poll[1]:.3f} us = "
                     f"{r_best:.2f}x of {cl_best / 1000:.3f} | {yes(r_best <= 1.5)} |")
    paired = rows.get("tilepipe_shm_poll_paired", {}).get(8, [])
    if paired:
        # One ratio per run: the median over its batches of (message batch / cache-line batch),
        # both timed back to back on the same two processes. Median and range over the runs.
        ratios = [o["ratio_to_cacheline"] for o in paired]
        r_med = statistics.median(ratios)
        lat = statistics.median(o["latency_us"] for o in paired)
        line = statistics.median(o["cacheline_us"] for o in paired)
        lines.append(f"| 8 B shm+poll <= 1.5x cache line, paired batches ({len(ratios)} runs) | "
                     f"{r_med:.2f}x ({lat:.3f} vs {line:.3f} us) | {yes(r_med <= 1.5)} | "
                     f"runs {min(ratios):.2f}-{max(ratios):.2f}x | "
                     f"{sum(r <= 1.5 for r in ratios)}/{len(ratios)} runs |")
    for raw in ["openmpi_vader_cma", "openmpi_vader_nocma", "mpich_posix_shm"]:
        r = latency(rows, raw, 8)
        if poll and r:
            lines.append(f"| 8 B shm+poll below {LABELS[raw]} | {poll[0]:.3f} vs {r[0]:.3f} us | "
                         f"{yes(poll[0] < r[0])} | {poll[1]:.3f} vs {r[1]:.3f} us | "
                         f"{yes(poll[1] < r[1])} |")
    ours = ["tilepipe_shm_poll", "tilepipe_shm_poll_user", "tilepipe_shm_poll_cma",
            "tilepipe_shm_poll_copy"]
    for nbytes in [1 << 20, 2 << 20, 4 << 20]:
        oc_objs = limits.get("onecopy_mb_per_s", {}).get(nbytes, [])
        if not oc_objs:
            continue
        oc = statistics.median(o["value"] for o in oc_objs)
        oc_best = max(o["max"] for o in oc_objs)
        bw = max((bandwidth(rows, c, nbytes) or 0) for c in ours)
        bw_best = max((bandwidth(rows, c, nbytes, True) or 0) for c in ours)
        raw = max((bandwidth(rows, c, nbytes) or 0) for c in RAW_MPI_SHM)
        raw_best = max((bandwidth(rows, c, nbytes, True) or 0) for c in RAW_MPI_SHM)
        mib = nbytes >> 20
        lines.append(f"| {mib} MiB >= 90% of one copy | {bw:,.0f} MB/s = {100 * bw / oc:.0f}% of "
                     f"{oc:,.0f} | {yes(bw >= 0.9 * oc)} | {bw_best:,.0f} = "
                     f"{100 * bw_best / oc_best:.0f}% of {oc_best:,.0f} | {yes(bw_best >= 0.9 * oc_best)} |")
        lines.append(f"| {mib} MiB above the best raw MPI | {bw:,.0f} vs {raw:,.0f} MB/s | "
                     f"{yes(bw > raw)} | {bw_best:,.0f} vs {raw_best:,.0f} | {yes(bw_best > raw_best)} |")
    if poll and hybrid:
        pct = 100 * (hybrid[0] / poll[0] - 1)
        pct_best = 100 * (hybrid[1] / poll[1] - 1)
        lines.append(f"| 8 B hybrid within 10% of poll | {hybrid[0]:.3f} vs {poll[0]:.3f} us "
                     f"({pct:+.0f}%) | {yes(pct <= 10)} | {hybrid[1]:.3f} vs {poll[1]:.3f} "
                     f"({pct_best:+.0f}%) | {yes(pct_best <= 10)} |")
    if block:
        lines.append(f"| block (futex) cost, 8 B one way | {block[0]:.3f} us | reported | "
                     f"{block[1]:.3f} us | reported |")
    return lines


def plot(rows, limits, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    for config, label in LABELS.items():
        if config not in rows:
            continue
        sizes = sorted(b for b in rows[config] if b > 0)
        lat = [summary(rows[config][b])[0] for b in sizes]
        style = "-" if config.startswith("tilepipe") else "--"
        ax1.plot(sizes, lat, style, marker=".", label=label)
        ax2.plot(sizes, [b / l for b, l in zip(sizes, lat)], style, marker=".", label=label)
    oc = limits.get("onecopy_mb_per_s", {})
    if oc:
        sizes = sorted(oc)
        ax2.plot(sizes, [limit_value(limits, "onecopy_mb_per_s", b) for b in sizes], "k:",
                 linewidth=2, label="limit: one copy")
    cl = limit_value(limits, "cacheline_one_way", 64)
    if cl:
        ax1.axhline(cl / 1000, color="k", linestyle=":", label="limit: cache line one way")
    ax1.set(xscale="log", yscale="log", xlabel="message bytes", ylabel="one-way latency (us)",
            title="latency (median)")
    ax2.set(xscale="log", xlabel="message bytes", ylabel="MB/s", title="bandwidth (bytes / latency)")
    ax1.grid(True, which="both", alpha=0.3)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("directory")
    ap.add_argument("--markdown")
    ap.add_argument("--png")
    args = ap.parse_args()
    rows, limits = load(args.directory)
    ctx_path = os.path.join(args.directory, "context.txt")
    context = open(ctx_path, encoding="utf-8").read() if os.path.exists(ctx_path) else ""
    text = markdown(rows, limits, context)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
    print(text, end="")
    if args.png:
        plot(rows, limits, args.png)


if __name__ == "__main__":
    main()
