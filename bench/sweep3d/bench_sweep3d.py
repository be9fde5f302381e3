#!/usr/bin/env python3
"""sweep3d: the plain loop against tilepipe run on ranks x CPUs, interleaved, medians of runs.

Usage: bench_sweep3d.py BUILD_DIR [--size 64x64x1024] [--angles 3] [--iterations 1]
                        [--tiles 32,64] [--configs 1x1,2x1,1x2] [--variants ""]
                        [--repeats 5] [--out FILE.json]

Each round runs the plain loop (bench/sweep3d/sweep3d_sequential), then `tilepipe run --kernel
sweep3d` for every tile height and configuration RANKSxCPUS (forked ranks, --sync block), and for
every variant (a ';'-separated list of extra flag sets, e.g. "--param octants=pipelined"), so that
load changes hit every configuration alike. Prints one line per configuration: median, min and
max seconds, and the efficiency T_plain / (workers x T); checks every checksum against the plain
loop's. Standard library only.
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--size", default="64x64x1024")
    p.add_argument("--angles", type=int, default=3)
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--tiles", default="32,64")
    p.add_argument("--configs", default="1x1,2x1,1x2")
    p.add_argument("--variants", default="")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out")
    a = p.parse_args()
    seq = os.path.join(a.build, "bench/sweep3d/sweep3d_sequential")
    exe = os.path.join(a.build, "apps/tilepipe/tilepipe")
    variants = [v.split() for v in a.variants.split(";")] if a.variants else [[]]
    configs = [(int(t), c, tuple(v)) for t in a.tiles.split(",") for c in a.configs.split(",")
               for v in variants]
    plain, runs, checksum = [], {c: [] for c in configs}, None
    load_before = os.getloadavg()
    for _ in range(a.repeats):
        j = run_json([seq, a.size, str(a.angles), str(a.iterations), "1"])
        plain.append(j["plain_s"]["median"])
        checksum = j["checksum"]
        for tile, config, variant in configs:
            ranks, cpus = config.split("x")
            j = run_json([exe, "run", "--kernel", "sweep3d", "--size", a.size,
                          "--param", f"angles={a.angles}", "--param", f"iterations={a.iterations}",
                          "--tile", str(tile), "--nodes", ranks, "--cpus", cpus,
                          "--sync", "block", "--json", *variant])
            if j["checksum"] != checksum:
                sys.exit(f"tile {tile} {config} {variant}: checksum {j['checksum']} != {checksum}")
            runs[(tile, config, variant)].append(j["seconds"])
    load_after = os.getloadavg()
    base = statistics.median(plain)
    rows = [{"what": "plain loop", "median_s": base, "min_s": min(plain), "max_s": max(plain)}]
    for (tile, config, variant), v in runs.items():
        ranks, cpus = (int(x) for x in config.split("x"))
        m = statistics.median(v)
        what = f"tilepipe {ranks} rank(s) x {cpus} CPU(s), tile {tile}" + (
            f" {' '.join(variant)}" if variant else "")
        rows.append({"what": what, "median_s": m, "min_s": min(v), "max_s": max(v),
                     "efficiency_vs_plain": base / m / (ranks * cpus)})
    for r in rows:
        extra = f"  efficiency {r['efficiency_vs_plain']:.2f}" if "efficiency_vs_plain" in r else ""
        print(f"{r['what']:<58} median {r['median_s']:.3f} s  "
              f"[{r['min_s']:.3f}, {r['max_s']:.3f}]{extra}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"size": a.size, "angles": a.angles, "iterations": a.iterations,
                       "repeats": a.repeats, "checksum": checksum, "rows": rows,
                       "load_before": load_before, "load_after": load_after,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f, indent=2)


main()
