#!/usr/bin/python3
"""Reproduces the seeds' theoretical curves with `tilepipe plan --machine`.

For seed 000's three spaces (9 single-CPU nodes, 3x3 mesh) and seed 002's 16x16xZ spaces (8 dual
nodes, the four schemes) it asks `tilepipe plan` for the predicted time at tile heights spaced
geometrically (16 per octave) and for `--tile auto`, and writes:
  OUT/seed_curves.csv   seed,space,scheme,tile_height,steps,step_s,predicted_s,paper_s,chosen
  OUT/seed_optima.md    the optimal tile heights, as a Markdown table (docs/model.md quotes it)
paper_s is the paper's own closed form where the paper gives one (seed 000 formula (3); seed 002
5.3, overlap + hyperplane), evaluated here independently of tilepipe.

usage: /usr/bin/python3 bench/model/seed_curves.py [--tilepipe EXE] [--out DIR]
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MACHINES = os.path.join(ROOT, "tests", "data", "machines")

SEED000 = {
    "machine": os.path.join(MACHINES, "seed000-sci-cluster.json"),
    "nodes": 9, "cpus": 1, "mesh": "3x3",
    "spaces": [(12, 12, 524288), (24, 24, 262144), (24, 24, 2097152)],
    "schemes": [("overlap", "hyperplane"), ("blocking", "hyperplane")],
}
SEED002 = {
    "machine": os.path.join(MACHINES, "seed002-sci-smp-cluster.json"),
    "nodes": 8, "cpus": 2, "mesh": None,
    "spaces": [(16, 16, 65536), (16, 16, 262144)],
    "schemes": [("overlap", "hyperplane"), ("overlap", "vertical"),
                ("blocking", "hyperplane"), ("blocking", "vertical")],
}


def plan(exe, machine, space, nodes, cpus, mesh, schedule, grouping, tile):
    args = [exe, "plan", "--kernel", "wave3d", "--size", "x".join(map(str, space)),
            "--nodes", str(nodes), "--cpus", str(cpus), "--schedule", schedule,
            "--grouping", grouping, "--tile", str(tile), "--machine", machine, "--formula", "seeds",
            "--json"]
    if mesh:
        args += ["--mesh", mesh]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("seed_curves: %s failed: %s" % (" ".join(args), done.stderr.strip()))
    return json.loads(done.stdout)


def heights(extent):
    out = set()
    k = 0
    while True:
        z = int(round(16 * 2 ** (k / 16.0)))
        if z > extent:
            break
        out.add(z)
        k += 1
    return sorted(out)


def seed000_formula3(space, z):
    """Seed 000 formula (3): (2 sum x_i + x_k + 1)(t_start_dma + t_comp + t_sync), 3x3 nodes."""
    x = space[0] // 3
    steps = 2 * 2 * (3 - 1) + (math.ceil(space[2] / z) - 1) + 1
    return steps * (49.2e-6 + x * x * z * 39.6e-9 + 4 * 18.8e-6)


def seed002_formula(space, z):
    """Seed 002 5.3: (3X/(2x) + 2Y/y + Z/z - 4)(100 us + x^2 z 39.6 ns), x = y = X/4."""
    X, Y, Z = space
    x = X // 4
    return (3 * X / (2 * x) + 2 * Y / x + math.ceil(Z / z) - 4) * (100e-6 + x * x * z * 39.6e-9)


def continuous_optimum(space, a_steps, per_step_s, per_height_s):
    """z* minimizing (A + Z/z)(B + C z): sqrt(Z B / (A C))."""
    return math.sqrt(space[2] * per_step_s / (a_steps * per_height_s))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilepipe", default=os.path.join(ROOT, "build", "release", "apps",
                                                           "tilepipe", "tilepipe"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "model-curves"))
    args = parser.parse_args()
    if not os.access(args.tilepipe, os.X_OK):
        sys.exit("seed_curves: %s is not an executable: build it first (cmake --preset release "
                 "&& cmake --build build/release)" % args.tilepipe)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    optima = []
    for seed, cfg in (("000", SEED000), ("002", SEED002)):
        for space in cfg["spaces"]:
            name = "x".join(map(str, space))
            for schedule, grouping in cfg["schemes"]:
                scheme = schedule + " + " + grouping
                chosen = plan(args.tilepipe, cfg["machine"], space, cfg["nodes"], cfg["cpus"],
                              cfg["mesh"], schedule, grouping, "auto")
                z_best = chosen["tile"][2]
                paper = None
                if seed == "000" and schedule == "overlap":
                    paper = seed000_formula3
                if seed == "002" and (schedule, grouping) == ("overlap", "hyperplane"):
                    paper = seed002_formula
                for z in sorted(set(heights(space[2]) + [z_best])):
                    j = plan(args.tilepipe, cfg["machine"], space, cfg["nodes"], cfg["cpus"],
                             cfg["mesh"], schedule, grouping, z)
                    rows.append([seed, name, scheme, z, j["steps"], j["step_s"], j["predicted_s"],
                                 paper(space, z) if paper else "", int(z == z_best)])
                z_star = ""
                if paper is seed000_formula3:
                    x = space[0] // 3
                    z_star = continuous_optimum(space, 8, 124.4e-6, x * x * 39.6e-9)
                elif paper is seed002_formula:
                    x = space[0] // 4
                    z_star = continuous_optimum(space, 3 * 4 / 2 + 2 * 4 - 4, 100e-6,
                                                x * x * 39.6e-9)
                paper_at_best = paper(space, z_best) if paper else None
                optima.append((seed, name, scheme, z_best, chosen["predicted_s"], z_star,
                               paper_at_best, chosen["steps"], chosen["step_time"]["subtiles"]))
    with open(os.path.join(args.out, "seed_curves.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seed", "space", "scheme", "tile_height", "steps", "step_s", "predicted_s",
                    "paper_s", "chosen"])
        w.writerows(rows)
    lines = ["| seed | space | scheme | optimal z (tilepipe) | steps | subtiles N | predicted | "
             "continuous z* of the paper's formula | paper's formula at z |",
             "|---|---|---|---|---|---|---|---|---|"]
    for seed, name, scheme, z, t, z_star, paper_t, steps, n in optima:
        lines.append("| %s | %s | %s | %d | %d | %s | %.4f s | %s | %s |" % (
            seed, name, scheme, z, steps, n if n else "-", t,
            "%.0f" % z_star if z_star != "" else "-",
            "%.4f s" % paper_t if paper_t is not None else "-"))
    with open(os.path.join(args.out, "seed_optima.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    with_paper = [r for r in rows if r[7] != ""]
    worst = max(abs(r[6] - r[7]) / r[7] for r in with_paper)
    print("tilepipe vs the papers' closed forms: max relative difference %.2g over %d heights"
          % (worst, len(with_paper)))
    print("wrote %s/seed_curves.csv (%d points)" % (args.out, len(rows)))


if __name__ == "__main__":
    main()
