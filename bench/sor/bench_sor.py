#!/usr/bin/env python3
"""sor2d: the plain loop against tilepipe run's time tiles, interleaved, medians of several runs.

Usage: bench_sor.py BUILD_DIR [--size 4096x4096] [--iterations 64] [--omega 1.5]
                    [--map-dim 2] [--tiles 16,32,64] [--cpus 1,2] [--repeats 5] [--out FILE.json]
                    [--model]

Each round runs the plain loop (bench/sor/sor_sequential), then tilepipe run for every tile
height along --map-dim and CPU count (map-dim 2, i + t: a band of rows runs all the sweeps
its time tile holds while its two planes stay in cache; the other dimensions get one row of
tiles per CPU), so that load
changes hit every configuration alike. Prints one line per configuration: median, min, max
seconds and the ratio of the plain loop's median to it; checks every checksum against the plain
loop's. --model calibrates for each CPU count first and adds the cost model's prediction (the
runs get --machine; their tile and mapping are given, so the model predicts, it does not choose).
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--size", default="4096x4096")
    p.add_argument("--iterations", type=int, default=64)
    p.add_argument("--omega", default="1.5")
    p.add_argument("--map-dim", default="2")
    p.add_argument("--tiles", default="16,32,64")
    p.add_argument("--cpus", default="1,2")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out")
    p.add_argument("--model", action="store_true",
                   help="calibrate for each CPU count first (tilepipe calibrate --kernel sor2d) "
                        "and put the model's prediction beside each configuration")
    a = p.parse_args()
    seq = os.path.join(a.build, "bench/sor/sor_sequential")
    exe = os.path.join(a.build, "apps/tilepipe/tilepipe")
    configs = [(int(t), int(c)) for t in a.tiles.split(",") for c in a.cpus.split(",")]
    plain, runs, checksum = [], {c: [] for c in configs}, None
    load_before = os.getloadavg()
    # The model: one calibration per CPU count, for this problem and its tile heights (the
    # machine file of `cpus` threads computing at once), used by every run of that count.
    machines, predicted = {}, {}
    if a.model:
        out_dir = os.path.dirname(os.path.abspath(a.out)) if a.out else "."
        stem = os.path.splitext(os.path.basename(a.out))[0] if a.out else "sor"
        for cpus in sorted({c for _, c in configs}):
            path = os.path.join(out_dir, f"{stem}-machine-{cpus}cpu.json")
            subprocess.run([exe, "calibrate", "--kernel", "sor2d", "--size", a.size, "--param",
                            f"iterations={a.iterations}", "--param", f"omega={a.omega}",
                            "--nodes", "1", "--cpus", str(cpus), "--map-dim", a.map_dim,
                            "--tile-heights", a.tiles,
                            "-o", path, "--quiet"], check=True)
            machines[cpus] = path
    for _ in range(a.repeats):
        j = run_json([seq, a.size, str(a.iterations), a.omega, "1"])
        plain.append(j["plain_s"]["median"])
        checksum = j["checksum"]
        for tile, cpus in configs:
            j = run_json([exe, "run", "--kernel", "sor2d", "--size", a.size, "--param",
                          f"iterations={a.iterations}", "--param", f"omega={a.omega}",
                          "--map-dim", a.map_dim, "--tile", str(tile), "--cpus", str(cpus), "--json"]
                         + (["--machine", machines[cpus]] if a.model else []))
            if a.model:
                predicted[(tile, cpus)] = j["predicted_s"]
            if j["checksum"] != checksum:
                sys.exit(f"tile {tile} cpus {cpus}: checksum {j['checksum']} != {checksum}")
            runs[(tile, cpus)].append(j["seconds"])
    load_after = os.getloadavg()
    base = statistics.median(plain)
    rows = [{"what": "plain loop", "median_s": base, "min_s": min(plain), "max_s": max(plain)}]
    for (tile, cpus), v in runs.items():
        m = statistics.median(v)
        rows.append({"what": f"tilepipe tile {tile} (dim {a.map_dim}), {cpus} CPU(s)", "median_s": m,
                     "min_s": min(v), "max_s": max(v), "speedup_vs_plain": base / m,
                     "efficiency_vs_plain": base / m / cpus})
        if a.model:
            rows[-1]["predicted_s"] = predicted[(tile, cpus)]
            rows[-1]["model_error"] = predicted[(tile, cpus)] / m - 1
            rows[-1]["machine"] = machines[cpus]
    for r in rows:
        extra = f"  x{r['speedup_vs_plain']:.2f}" if "speedup_vs_plain" in r else ""
        if "predicted_s" in r:
            extra += f"  predicted {r['predicted_s']:.3f} s ({100 * r['model_error']:+.1f}%)"
        print(f"{r['what']:<36} median {r['median_s']:.3f} s  "
              f"[{r['min_s']:.3f}, {r['max_s']:.3f}]{extra}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"size": a.size, "iterations": a.iterations, "omega": a.omega,
                       "repeats": a.repeats, "checksum": checksum, "rows": rows,
                       "load_before": load_before, "load_after": load_after,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f, indent=2)


main()
