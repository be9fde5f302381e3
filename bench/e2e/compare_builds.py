#!/usr/bin/python3
"""Two builds of tilepipe side by side (issue 11: "performance unchanged"): every configuration
runs with build A then build B (the order alternating between repeats, so both see the same
minutes of a drifting machine), and the table gives each one's median, min-max and the median
of the paired ratios B/A.

  1. 1 rank x 1 CPU, one tile over the whole space, against the plain reference loop
     (wave_sequential of build B);
  2. 2 ranks x 1 CPU and 1 rank x 2 CPUs at each tile height (overlap, hyperplane): efficiency
     T_seq / (2 T);
  3. copied against direct faces on 2 ranks x 1 CPU (overlap);
  4. `tilepipe pingpong` one-way latency at 8 B, 64 KiB and 1 MiB (shm, poll).

usage: compare_builds.py TP_A TP_B SEQ_EXE OUT_DIR [--size 16x16x1048576] [--heights 2048,8192]
                         [--repeat 5]
Writes OUT_DIR/compare.json and OUT_DIR/compare.md."""
import argparse
import json
import os
import statistics
import subprocess
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

run_json = benchlib.run_json


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tp_a")
    p.add_argument("tp_b")
    p.add_argument("seq")
    p.add_argument("out")
    p.add_argument("--size", default="16x16x1048576")
    p.add_argument("--heights", default="2048,8192")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    kernel = f"wave{len(a.size.split('x'))}d"
    run = [None, "run", "--kernel", kernel, "--size", a.size, "--json"]
    configs = [("1x1 one tile", ["--nodes", "1", "--cpus", "1", "--tile", a.size.split("x")[-1]])]
    for h in a.heights.split(","):
        configs.append((f"2 ranks x 1 CPU h={h}", ["--nodes", "2", "--cpus", "1", "--tile", h]))
        configs.append((f"1 rank x 2 CPUs h={h}", ["--nodes", "1", "--cpus", "2", "--tile", h]))
        for faces in ("copy", "direct"):
            configs.append((f"2 ranks faces {faces} h={h}",
                            ["--nodes", "2", "--cpus", "1", "--tile", h, "--faces", faces]))
    ping = [None, "pingpong", "--sizes", "8", "--iters", "20000", "--json"]
    ping_big = [None, "pingpong", "--sizes", "64KiB:1MiB", "--iters", "2000", "--json"]
    load_before = load()
    seq_s = []
    times = {name: {"A": [], "B": []} for name, _ in configs}
    lat = {}
    checksums = set()
    for rep in range(a.repeat):
        seq = run_json([a.seq, a.size, "1"])
        seq_s.append(seq["seconds"])
        checksums.add(seq["checksum"])
        order = ("A", "B") if rep % 2 == 0 else ("B", "A")
        for name, flags in configs:
            for which in order:
                tp = a.tp_a if which == "A" else a.tp_b
                r = run_json([tp] + run[1:] + flags)
                checksums.add(r["checksum"])
                times[name][which].append(r["seconds"])
        for which in order:
            tp = a.tp_a if which == "A" else a.tp_b
            for cmd in (ping, ping_big):
                got = run_json([tp] + cmd[1:])
                # `results` since the JSON preamble; an older build printed the array alone.
                for row in got["results"] if isinstance(got, dict) else got:
                    key = f"pingpong {row['bytes']} B one-way us"
                    lat.setdefault(key, {"A": [], "B": []})[which].append(row["latency_us"])
    load_after = load()
    t_seq = statistics.median(seq_s)
    rows = []
    for name, d in list(times.items()) + list(lat.items()):
        ratios = [b / x for x, b in zip(d["A"], d["B"])]
        rows.append({"config": name, "A_median": statistics.median(d["A"]),
                     "A_min": min(d["A"]), "A_max": max(d["A"]),
                     "B_median": statistics.median(d["B"]), "B_min": min(d["B"]),
                     "B_max": max(d["B"]), "ratio_median": statistics.median(ratios),
                     "ratio_min": min(ratios), "ratio_max": max(ratios)})
    result = {"size": a.size, "repeat": a.repeat, "seq_s": t_seq, "load_before": load_before,
              "load_after": load_after, "A": a.tp_a, "B": a.tp_b, "rows": rows,
              "checksums_agree": len(checksums) == 1}
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump(result, f, indent=1)
    md = [f"`{' '.join(sys.argv)}`", "",
          f"{kernel} {a.size}, {a.repeat} paired repeats (A then B, alternating), load "
          f"{load_before} before, {load_after} after; plain loop {t_seq:.4f} s; "
          f"checksums agree: {len(checksums) == 1}.", "",
          "| configuration | A median (min-max) | B median (min-max) | B/A median (min-max) | "
          "efficiency A / B |", "|---|---|---|---|---|"]
    for r in rows:
        eff = ""
        if " x " in r["config"] or "faces" in r["config"]:
            workers = 1 if r["config"].startswith("1x1") else 2
            eff = f"{t_seq / (workers * r['A_median']):.2f} / {t_seq / (workers * r['B_median']):.2f}"
        md.append(f"| {r['config']} | {r['A_median']:.4g} ({r['A_min']:.4g}-{r['A_max']:.4g}) | "
                  f"{r['B_median']:.4g} ({r['B_min']:.4g}-{r['B_max']:.4g}) | "
                  f"{r['ratio_median']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f}) | {eff} |")
    with open(os.path.join(a.out, "compare.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if len(checksums) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
