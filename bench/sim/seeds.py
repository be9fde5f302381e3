#!/usr/bin/python3
"""The seeds' cluster experiments, simulated from their parameters (issue 15): seed 000's 9
single-CPU SCI nodes (3 x 3 mesh) on its three spaces, overlapping and non-overlapping schedules;
seed 002's 8 dual-CPU SMP nodes on two spaces, the four schemes. For each tile height of a
geometric grid (and the heights each model chooses) `tilepipe simulate` gives the simulated time
and both closed forms (the seeds' formula and the executed one, docs/model.md "Two formulas").
The papers give their measurements in figures only (seed 000 Figs. 8-11, seed 002 Figs. 18-19);
what the figures show is compared in docs/benchmarks.md.

usage: seeds.py TILEPIPE OUT_DIR
Writes OUT_DIR/results.json, OUT_DIR/table.md and OUT_DIR/context.txt. Deterministic: the
simulator and the formulas do not depend on this machine. Standard library only."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINES = os.path.join(HERE, "..", "..", "tests", "data", "machines")

EXPERIMENTS = [
    # (seed, machine file, space, nodes, cpus, schemes)
    ("000", "seed000-sci-cluster.json", "12x12x524288", 9, 1,
     [("overlap", "hyperplane"), ("blocking", "hyperplane")]),
    ("000", "seed000-sci-cluster.json", "24x24x262144", 9, 1,
     [("overlap", "hyperplane"), ("blocking", "hyperplane")]),
    ("000", "seed000-sci-cluster.json", "24x24x2097152", 9, 1,
     [("overlap", "hyperplane"), ("blocking", "hyperplane")]),
    ("002", "seed002-sci-smp-cluster.json", "16x16x65536", 8, 2,
     [("overlap", "hyperplane"), ("overlap", "vertical"), ("blocking", "hyperplane"),
      ("blocking", "vertical")]),
    ("002", "seed002-sci-smp-cluster.json", "16x16x262144", 8, 2,
     [("overlap", "hyperplane"), ("overlap", "vertical"), ("blocking", "hyperplane"),
      ("blocking", "vertical")]),
]
HEIGHTS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]


def simulate(tp, machine, space, nodes, cpus, schedule, grouping, tile, formula):
    cmd = [tp, "simulate", "--kernel", "wave3d", "--size", space, "--nodes", str(nodes),
           "--cpus", str(cpus), "--schedule", schedule, "--grouping", grouping, "--tile",
           str(tile), "--machine", machine, "--formula", formula, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return cmd, json.loads(out.stdout)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tp, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    context, rows = [], []
    for seed, mfile, space, nodes, cpus, schemes in EXPERIMENTS:
        machine = os.path.join(MACHINES, mfile)
        z = int(space.split("x")[-1])
        for schedule, grouping in schemes:
            points = []
            for h in [h for h in HEIGHTS if h <= z]:
                cmd, s = simulate(tp, machine, space, nodes, cpus, schedule, grouping, h, "seeds")
                _, e = simulate(tp, machine, space, nodes, cpus, schedule, grouping, h, "executed")
                if not points:
                    context.append(" ".join(cmd))
                points.append({"height": h, "steps": s["steps"], "simulated_s": s["simulated_s"],
                               "seeds_s": s["predicted_s"], "executed_s": e["predicted_s"]})
            chosen = {}
            for formula in ("seeds", "executed"):
                _, c = simulate(tp, machine, space, nodes, cpus, schedule, grouping, "auto",
                                formula)
                chosen[formula] = {"height": c["tile"][-1], "predicted_s": c["predicted_s"],
                                   "simulated_s": c["simulated_s"]}
            rows.append({"seed": seed, "space": space, "nodes": nodes, "cpus": cpus,
                         "schedule": schedule, "grouping": grouping, "points": points,
                         "chosen": chosen})
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"experiments": rows}, f, indent=1)
    lines = ["| seed | space, nodes x CPUs | scheme | best simulated height (time) | "
             "seeds' formula: its height (time; simulated there) | executed formula: its height "
             "(time; simulated there) | seeds' / executed formula error against the simulator, "
             "over the heights |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        best = min(r["points"], key=lambda p: p["simulated_s"])
        es = [p["seeds_s"] / p["simulated_s"] - 1 for p in r["points"]]
        ee = [p["executed_s"] / p["simulated_s"] - 1 for p in r["points"]]
        cs, ce = r["chosen"]["seeds"], r["chosen"]["executed"]
        lines.append(
            f"| {r['seed']} | {r['space']}, {r['nodes']} x {r['cpus']} | {r['schedule']} + "
            f"{r['grouping']} | {best['height']} ({best['simulated_s']:.4f} s) | "
            f"{cs['height']} ({cs['predicted_s']:.4f} s; {cs['simulated_s']:.4f} s) | "
            f"{ce['height']} ({ce['predicted_s']:.4f} s; {ce['simulated_s']:.4f} s) | "
            f"{100 * min(es):+.1f}..{100 * max(es):+.1f}% / {100 * min(ee):+.1f}..{100 * max(ee):+.1f}% |")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, "context.txt"), "w") as f:
        f.write("\n".join(context) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
