#!/usr/bin/env python3
"""Where the block-cyclic mapping pays, simulated (issue 15, docs/adr/0018-block-cyclic-rows.md).

For each machine file, each node count P = 2, 4, ..., MAX_NODES and each cyclic factor
C = 1..MAX_CYCLIC, runs `tilepipe simulate --kernel wave2d --size S --map-dim 2 --tile H
--nodes P --cyclic C --json` (a short mapping dimension: few tiles per row against a fill of
about 2 P steps), and once `--cyclic auto` (the cost model's choice). Writes cyclic.csv (one row
per machine, P and C: tile, steps, simulated and predicted time, the simulated speed-up over
C = 1, and the factor the model chose for that machine and P), cyclic.png (simulated time over
C = 1's against C, one line per P, the model's choice marked) and context.txt (git revision,
every command). Only simulates: it may run on a busy machine. Standard library, plus matplotlib
for the plot (the system's python3-matplotlib: run with /usr/bin/python3).
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def simulate(exe, machine, size, height, nodes, cyclic):
    cmd = [exe, "simulate", "--kernel", "wave2d", "--size", size, "--map-dim", "2",
           "--tile", str(height), "--nodes", str(nodes), "--cyclic", str(cyclic),
           "--machine", machine, "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return cmd, json.loads(out)


def main():
    ap = benchlib.simulation_args(__doc__.split("\n")[0], "cyclic.csv, cyclic.png, context.txt")
    ap.add_argument("--size", default="65536x1024",
                    help="wave2d extents; the second (1024) is the mapping dimension")
    ap.add_argument("--tile", default="128", help="tile height along the mapping dimension")
    ap.add_argument("--max-nodes", type=int, default=64, help="largest P (a power of two)")
    ap.add_argument("--max-cyclic", type=int, default=8, help="largest C")
    args = ap.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    counts = []
    p = 2
    while p <= args.max_nodes:
        counts.append(p)
        p *= 2
    rows, commands = [], []
    for machine in args.machines.split(","):
        with open(machine) as f:
            name = json.load(f)["machine"]
        for p in counts:
            cmd, j = simulate(args.tilepipe, machine, args.size, args.tile, p, "auto")
            commands.append(" ".join(cmd))
            choice = j["cyclic"][0]
            base = None
            for c in range(1, args.max_cyclic + 1):
                try:
                    cmd, j = simulate(args.tilepipe, machine, args.size, args.tile, p, c)
                except subprocess.CalledProcessError as e:
                    # A factor larger than the rows allow: the planner's one-line refusal.
                    print(f"{name:24} P={p:4} C={c}: {e.stderr.strip()}", flush=True)
                    break
                commands.append(" ".join(cmd))
                sim = j["simulated_s"]
                base = sim if c == 1 else base
                rows.append({
                    "machine": name, "nodes": p, "cyclic": c, "size": args.size,
                    "tile": "x".join(map(str, j["tile"])), "steps": j["steps"],
                    "simulated_s": sim, "predicted_s": j["predicted_s"],
                    "sim_speedup": base / sim, "model_choice": choice})
                r = rows[-1]
                print(f"{name:24} P={p:4} C={c} tile {r['tile']:>9} steps {r['steps']:5} "
                      f"sim {sim:.4g} s pred {r['predicted_s']:.4g} s "
                      f"x{r['sim_speedup']:.3f} (model: C={choice})", flush=True)

    benchlib.write_results(args.outdir, "cyclic", rows, commands,
                           ["sim_speedup = simulated_s(C = 1) / simulated_s(C)"], plot)


def plot(plt, rows, path):
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    fig, axes = plt.subplots(1, len(machines), figsize=(5.5 * len(machines), 4.2), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, machine in zip(axes[0], machines):
        for k, p in enumerate(dict.fromkeys(r["nodes"] for r in rows if r["machine"] == machine)):
            pts = [r for r in rows if r["machine"] == machine and r["nodes"] == p]
            color = colors[k % len(colors)]
            ax.plot([r["cyclic"] for r in pts], [1 / r["sim_speedup"] for r in pts], marker="o",
                    color=color, label=f"{p} nodes")
            chosen = [r for r in pts if r["cyclic"] == r["model_choice"]]
            ax.plot([r["cyclic"] for r in chosen], [1 / r["sim_speedup"] for r in chosen],
                    marker="*", markersize=14, linestyle="none", color=color)
        ax.axhline(1, color="gray", linewidth=0.8)
        ax.set_xlabel("cyclic factor C")
        ax.set_ylabel("simulated time / block mapping's (C = 1)")
        ax.set_title(f"{machine}\n(star: --cyclic auto, the model's choice)", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
