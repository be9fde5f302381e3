#!/usr/bin/env python3
"""sweep3d: the plain loop against tilepipe run on ranks x CPUs, interleaved, medians of runs.

Usage: bench_sweep3d.py BUILD_DIR [--size 64x64x1024] [--angles 3] [--iterations 1] [--c 0.0]
                        [--tiles 32,64] [--configs 1x1,2x1,1x2] [--variants ""]
                        [--repeats 5] [--traces DIR] [--out FILE.json]

Each round runs the plain loop (bench/sweep3d/sweep3d_sequential), then `tilepipe run --kernel
sweep3d` for every tile height and configuration RANKSxCPUS (forked ranks, --sync block), and for
every variant (a ';'-separated list of extra flag sets, e.g. "--param paired=0"), so that
load changes hit every configuration alike. Prints one line per configuration: median, min and
max seconds, and the efficiency T_plain / (workers x T); checks every checksum against the plain
loop's. With --traces DIR every tilepipe run also writes its trace (--trace) into DIR, and each
line adds the medians over the rounds of what the trace says about the workers (threads of all
ranks): busy = compute / (workers x span), sync = waits at the rank's step barrier / (workers x
span), and gap = the share of the span in which no worker computes (between octants: the hook;
within an octant: the fill and drain and every step's hand-over). These fractions are what to
compare across configurations on a loaded machine, where seconds mean little.
A quick check that the script runs (seconds): bench_sweep3d.py build/release --size 8x8x32
--angles 1 --tiles 8 --repeats 1 --traces /tmp/sweep3d-traces
Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

run_json = benchlib.run_json


def trace_fractions(path):
    """busy, sync and gap fractions of a Chrome trace written by tilepipe run --trace."""
    with open(path) as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return None
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    workers = len({(e["pid"], e["tid"]) for e in spans})
    span = max(t1 - t0, 1e-9)
    compute = sorted((e["ts"], e["ts"] + e["dur"]) for e in spans if e["name"] == "compute")
    gap, end = 0.0, t0
    for a, b in compute:
        gap += max(0.0, a - end)
        end = max(end, b)
    busy = sum(b - a for a, b in compute)
    sync = sum(e["dur"] for e in spans if e["name"] == "sync")
    return {"busy": busy / (workers * span), "sync": sync / (workers * span), "gap": gap / span}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--size", default="64x64x1024")
    p.add_argument("--angles", type=int, default=3)
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--c", default="0.0")
    p.add_argument("--tiles", default="32,64")
    p.add_argument("--configs", default="1x1,2x1,1x2")
    p.add_argument("--variants", default="")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--traces")
    p.add_argument("--out")
    a = p.parse_args()
    seq = os.path.join(a.build, "bench/sweep3d/sweep3d_sequential")
    exe = os.path.join(a.build, "apps/tilepipe/tilepipe")
    variants = [v.split() for v in a.variants.split(";")] if a.variants else [[]]
    configs = [(int(t), c, tuple(v)) for t in a.tiles.split(",") for c in a.configs.split(",")
               for v in variants]
    plain, runs, checksum = [], {c: [] for c in configs}, None
    fractions = {c: [] for c in configs}
    if a.traces:
        os.makedirs(a.traces, exist_ok=True)
    load_before = os.getloadavg()
    for rnd in range(a.repeats):
        j = run_json([seq, a.size, str(a.angles), str(a.iterations), "1", a.c])
        plain.append(j["plain_s"]["median"])
        checksum = j["checksum"]
        for tile, config, variant in configs:
            ranks, cpus = config.split("x")
            trace = []
            if a.traces:
                name = f"t{tile}-{config}-{'_'.join(variant).replace('=', '-')}-{rnd}.json"
                trace = ["--trace", os.path.join(a.traces, name.replace("--", ""))]
            j = run_json([exe, "run", "--kernel", "sweep3d", "--size", a.size,
                          "--param", f"angles={a.angles}", "--param", f"iterations={a.iterations}",
                          "--param", f"c={a.c}", "--tile", str(tile), "--nodes", ranks,
                          "--cpus", cpus, "--sync", "block", "--json", *trace, *variant])
            if j["checksum"] != checksum:
                sys.exit(f"tile {tile} {config} {variant}: checksum {j['checksum']} != {checksum}")
            runs[(tile, config, variant)].append(j["seconds"])
            if trace:
                fractions[(tile, config, variant)].append(trace_fractions(trace[1]))
    load_after = os.getloadavg()
    base = statistics.median(plain)
    rows = [{"what": "plain loop", "median_s": base, "min_s": min(plain), "max_s": max(plain)}]
    for (tile, config, variant), v in runs.items():
        ranks, cpus = (int(x) for x in config.split("x"))
        m = statistics.median(v)
        what = f"tilepipe {ranks} rank(s) x {cpus} CPU(s), tile {tile}" + (
            f" {' '.join(variant)}" if variant else "")
        row = {"what": what, "median_s": m, "min_s": min(v), "max_s": max(v),
               "efficiency_vs_plain": base / m / (ranks * cpus)}
        f = [x for x in fractions[(tile, config, variant)] if x]
        if f:
            row["trace"] = {k: statistics.median(x[k] for x in f) for k in ("busy", "sync", "gap")}
        rows.append(row)
    for r in rows:
        extra = f"  efficiency {r['efficiency_vs_plain']:.2f}" if "efficiency_vs_plain" in r else ""
        if "trace" in r:
            extra += "  busy {busy:.2f} sync {sync:.2f} gap {gap:.2f}".format(**r["trace"])
        print(f"{r['what']:<58} median {r['median_s']:.3f} s  "
              f"[{r['min_s']:.3f}, {r['max_s']:.3f}]{extra}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"size": a.size, "angles": a.angles, "iterations": a.iterations, "c": a.c,
                       "repeats": a.repeats, "checksum": checksum, "rows": rows,
                       "load_before": load_before, "load_after": load_after,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f, indent=2)


if __name__ == "__main__":
    main()
