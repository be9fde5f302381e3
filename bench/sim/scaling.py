#!/usr/bin/env python3
"""Strong and weak scaling of wave3d from 1 to 1024 nodes, simulated (issue 15).

For each machine file and each node count P = 1, 2, 4, ..., runs
`tilepipe simulate --kernel wave3d --size S --nodes P --mesh AxB --tile auto --json` (the model
chooses the tile height, schedule and grouping at each scale) and writes scaling.csv (one row per
machine, mode and P), scaling.png (efficiency and chosen tile height against nodes) and
context.txt (git revision, commands). Efficiency = points x t_comp1 / (P x simulated time): the
one-CPU computation without any communication, over P nodes' time.

Strong: the same space at every P (default 256x256x65536). Weak: PER_NODE cross-section per node
(default 64x64), the mesh A x B growing, the height fixed. Standard library, plus matplotlib for
the plot (the system's python3-matplotlib: run with /usr/bin/python3).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def mesh_of(p):
    """A x B with A * B = p, A >= B, both powers of two."""
    k = p.bit_length() - 1
    return 1 << ((k + 1) // 2), 1 << (k // 2)


def simulate(exe, machine, size, nodes, mesh, cpus):
    cmd = [exe, "simulate", "--kernel", "wave3d", "--size", "x".join(map(str, size)),
           "--nodes", str(nodes), "--cpus", str(cpus), "--tile", "auto", "--machine", machine,
           "--json"]
    if nodes > 1:
        cmd += ["--mesh", "x".join(map(str, mesh))]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return cmd, json.loads(out), time.monotonic() - start


def main():
    ap = benchlib.simulation_args(__doc__.split("\n")[0], "scaling.csv, scaling.png, context.txt")
    ap.add_argument("--max-nodes", type=int, default=1024, help="largest P (a power of two)")
    ap.add_argument("--strong-size", default="256x256x65536")
    ap.add_argument("--per-node", default="64x64", help="weak scaling: cross-section per node")
    ap.add_argument("--height", type=int, default=65536, help="weak scaling: the mapping extent")
    ap.add_argument("--cpus", type=int, default=1, help="CPUs per node (seed 000: 1)")
    args = ap.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    strong = [int(x) for x in args.strong_size.split("x")]
    per_node = [int(x) for x in args.per_node.split("x")]
    counts = []
    p = 1
    while p <= args.max_nodes:
        counts.append(p)
        p *= 2
    rows, commands = [], []
    for machine in args.machines.split(","):
        with open(machine) as f:
            mfile = json.load(f)
        t_comp1 = mfile["compute"]["t_comp1_ns"] * 1e-9
        for mode in ("strong", "weak"):
            for p in counts:
                a, b = mesh_of(p)
                size = strong if mode == "strong" else [per_node[0] * a, per_node[1] * b,
                                                        args.height]
                cmd, j, wall = simulate(args.tilepipe, machine, size, p, (a, b), args.cpus)
                commands.append(" ".join(cmd))
                points = size[0] * size[1] * size[2]
                sim = j["simulated_s"]
                rows.append({
                    "machine": mfile["machine"], "mode": mode, "nodes": p,
                    "mesh": "x".join(map(str, j["mesh"])), "size": "x".join(map(str, size)),
                    "tile_height": j["tile"][j["map_dim"] - 1],
                    "schedule": j["schedule"], "grouping": j["grouping"],
                    "steps": j["steps"], "simulated_s": sim, "predicted_s": j["predicted_s"],
                    "efficiency": points * t_comp1 / (p * sim),
                    "critical_network_s": j["critical_path"]["network_s"],
                    "rank_steps": j["rank_steps"], "sim_wall_s": round(wall, 3)})
                r = rows[-1]
                print(f"{r['machine']:24} {mode:6} P={p:5} tile {r['tile_height']:6} "
                      f"{r['schedule']}+{r['grouping']} sim {sim:.4g} s "
                      f"pred {r['predicted_s']:.4g} s E {r['efficiency']:.3f} ({wall:.1f} s)",
                      flush=True)

    benchlib.write_results(args.outdir, "scaling", rows, commands,
                           ["efficiency = points x t_comp1 / (nodes x simulated_s)"], plot)


def plot(plt, rows, path):
    fig, (ax_e, ax_h) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"strong": "-", "weak": "--"}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, machine in enumerate(dict.fromkeys(r["machine"] for r in rows)):
        for mode in ("strong", "weak"):
            pts = [r for r in rows if r["machine"] == machine and r["mode"] == mode]
            if not pts:
                continue
            n = [r["nodes"] for r in pts]
            label = f"{machine}, {mode}"
            style = dict(linestyle=styles[mode], marker="o", color=colors[k % len(colors)])
            ax_e.plot(n, [r["efficiency"] for r in pts], label=label, **style)
            # One node: no communication, every height costs the same; not a choice.
            many = [r for r in pts if r["nodes"] > 1]
            ax_h.plot([r["nodes"] for r in many], [r["tile_height"] for r in many], **style)
    for ax in (ax_e, ax_h):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (1 CPU each)")
        ax.grid(True, alpha=0.3)
    ax_e.set_ylabel("efficiency = 1-CPU compute / (nodes x time)")
    ax_e.set_ylim(0, 1.05)
    ax_h.set_yscale("log", base=2)
    ax_h.set_ylabel("tile height chosen by the model")
    ax_e.set_title("wave3d, simulated (tilepipe simulate)")
    ax_h.set_title("--tile auto at each scale")
    handles, labels = ax_e.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
