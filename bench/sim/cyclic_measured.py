#!/usr/bin/env python3
"""Where the block-cyclic mapping pays on this machine: measured beside the simulation (issue 15,
docs/adr/0018-block-cyclic-rows.md).

A short mapping dimension (wave2d 262144x256 mapped along 256 with tiles 128 high: 2 tiles per
row of tiles) leaves the block mapping's second worker idle for the first worker's first tile, a
third of the run on 2 workers; C cycles of C-times-thinner rows shorten that wait. For each
configuration (NODESxCPUS) and cyclic factor C, interleaved over the repeats, runs

    tilepipe run --kernel wave2d --size S --map-dim 2 --tile H --nodes N --cpus P --cyclic C --json

and, with a machine file of this host (calibrated here first unless --machine names one), the same
plan through `tilepipe simulate --json` (simulated_s, and predicted_s from the closed formula).
Every run of one configuration must give the same checksum. Writes cyclic_measured.csv (one row
per configuration and C: median, min and max of the runs' seconds, the simulated and predicted
time, the measured and simulated speed-up over C = 1), cyclic_measured.png (time against C per
configuration: measured medians with their min-max, simulated lines) and context.txt (git
revision, load before and after, every command). Standard library, plus matplotlib for the plot
(the system's python3-matplotlib: run with /usr/bin/python3).
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def plan_args(args, nodes, cpus, cyclic):
    return ["--kernel", "wave2d", "--size", args.size, "--map-dim", "2", "--tile", str(args.tile),
            "--nodes", str(nodes), "--cpus", str(cpus), "--cyclic", str(cyclic)]


def plot(plt, rows, path):
    configs = list(dict.fromkeys(r["config"] for r in rows))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, config in enumerate(configs):
        mine = [r for r in rows if r["config"] == config]
        c = [r["cyclic"] for r in mine]
        med = [r["median_s"] for r in mine]
        err = [[m - r["min_s"] for m, r in zip(med, mine)], [r["max_s"] - m for m, r in zip(med, mine)]]
        color = f"C{i}"
        ax.errorbar(c, med, yerr=err, fmt="o", color=color, capsize=3,
                    label=f"{config} measured (median, min-max)")
        if all(r["simulated_s"] != "" for r in mine):
            ax.plot(c, [r["simulated_s"] for r in mine], "-", color=color,
                    label=f"{config} simulated")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["cyclic"] for r in rows}))
    ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("cyclic factor C")
    ax.set_ylabel("seconds")
    ax.set_ylim(bottom=0)
    ax.set_title(f"wave2d {rows[0]['size']}, tiles {rows[0]['tile']} high")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tilepipe", help="path to the tilepipe executable")
    ap.add_argument("outdir", help="where to write cyclic_measured.csv, .png and context.txt")
    ap.add_argument("--size", default="262144x256", help="wave2d extents, mapped along the second")
    ap.add_argument("--tile", type=int, default=128, help="tile height along the mapping dimension")
    ap.add_argument("--configs", default="2x1,1x2", help="NODESxCPUS, comma-separated")
    ap.add_argument("--cyclic", default="1,2,4,8", help="cyclic factors, comma-separated")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--machine", help="a machine file of this host for the simulation (default: "
                    "`tilepipe calibrate --kernel wave2d` of each configuration, into OUTDIR)")
    ap.add_argument("--quick", action="store_true", help="calibrate with --quick (tests)")
    args = ap.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    factors = [int(c) for c in args.cyclic.split(",")]
    commands = []
    load_before = benchlib.load_average()[0]

    machines = {}
    for nodes, cpus in configs:
        if args.machine:
            machines[(nodes, cpus)] = args.machine
            continue
        path = os.path.join(args.outdir, f"machine-{nodes}x{cpus}.json")
        cmd = [args.tilepipe, "calibrate", "-o", path, "--kernel", "wave2d", "--size", args.size,
               "--nodes", str(nodes), "--cpus", str(cpus), "--tile-heights",
               ",".join(str(max(1, args.tile // c)) for c in factors), "--quiet"]
        if args.quick:
            cmd.append("--quick")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
        commands.append(cmd)
        machines[(nodes, cpus)] = path

    seconds = {(n, p, c): [] for n, p in configs for c in factors}
    checksums = {}
    for rep in range(args.repeats):
        for nodes, cpus in configs:
            for c in factors:
                cmd = [args.tilepipe, "run"] + plan_args(args, nodes, cpus, c) + ["--json"]
                out = benchlib.run_json(cmd)
                seconds[(nodes, cpus, c)].append(out["seconds"])
                checksums.setdefault((nodes, cpus), set()).add(out["checksum"])
                if rep == 0:
                    commands.append(cmd)
    for key, sums in checksums.items():
        if len(sums) != 1:
            sys.exit(f"{key[0]}x{key[1]}: the cyclic factors gave different checksums {sorted(sums)}")

    rows = []
    for nodes, cpus in configs:
        base = statistics.median(seconds[(nodes, cpus, factors[0])])
        sim_base = None
        for c in factors:
            cmd = [args.tilepipe, "simulate"] + plan_args(args, nodes, cpus, c) + [
                "--machine", machines[(nodes, cpus)], "--json"]
            sim = benchlib.run_json(cmd)
            commands.append(cmd)
            sim_base = sim_base or sim["simulated_s"]
            runs = seconds[(nodes, cpus, c)]
            med = statistics.median(runs)
            rows.append({
                "config": f"{nodes}x{cpus}", "size": args.size, "tile": args.tile, "cyclic": c,
                "runs": len(runs), "median_s": med, "min_s": min(runs), "max_s": max(runs),
                "simulated_s": sim["simulated_s"], "predicted_s": sim["predicted_s"],
                "speedup_measured": base / med, "speedup_simulated": sim_base / sim["simulated_s"],
                "sim_error": sim["simulated_s"] / med - 1,
            })
    load_after = benchlib.load_average()[0]
    notes = [f"load {load_before:.2f} before, {load_after:.2f} after",
             f"repeats {args.repeats}, interleaved over configurations and factors"]
    benchlib.write_results(args.outdir, "cyclic_measured", rows, commands, notes, plot)
    for r in rows:
        print(f"{r['config']} C={r['cyclic']}: {r['median_s']:.4f} s [{r['min_s']:.4f}, "
              f"{r['max_s']:.4f}] x{r['speedup_measured']:.2f}; simulated {r['simulated_s']:.4f} s "
              f"x{r['speedup_simulated']:.2f} ({100 * r['sim_error']:+.1f}%)")
    print(notes[0])


if __name__ == "__main__":
    main()
