#!/usr/bin/env python3
"""Strong and weak scaling of wave3d or sweep3d from 1 to 1024 nodes, simulated (issue 15).

For each machine file and each node count P = 1, 2, 4, ..., runs
`tilepipe simulate --kernel K --size S --nodes P --mesh AxB --tile auto --json` (the model
chooses the tile height, schedule and grouping at each scale) and writes scaling.csv (one row per
machine, mode and P), scaling.png (efficiency and chosen tile height against nodes) and
context.txt (git revision, commands). Efficiency = the one-node simulated time / (P x simulated
time): for wave3d that is points x t_comp1 (one node has no communication); for sweep3d it also
holds the sweeps' copies and what runs between sweeps on one node.

Strong: the same space at every P (wave3d 256x256x65536, sweep3d 256x256x1024). Weak: PER_NODE
cross-section per node (wave3d 64x64, sweep3d 32x32), the mesh A x B growing, the height fixed
(wave3d 65536, sweep3d 1024). sweep3d's costs on a cluster's CPU: --calibrations gives this
machine's calibrations of wave3d and sweep3d (one window); each machine file is copied into
OUTDIR with sweep3d's samples times f = the file's wave3d t_comp1 over this machine's, as
compute.kernels.sweep3d, and this machine's copy rate over f where the file has none (the
sweeps' last, copying sweep; bench/sim/README.md). Standard library, plus matplotlib for the
plot (the system's python3-matplotlib: run with /usr/bin/python3).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


# Per kernel: strong scaling's space, weak scaling's cross-section per node and height.
DEFAULTS = {
    "wave3d": {"strong": "256x256x65536", "per_node": "64x64", "height": 65536},
    "sweep3d": {"strong": "256x256x1024", "per_node": "32x32", "height": 1024},
}


def mesh_of(p):
    """A x B with A * B = p, A >= B, both powers of two."""
    k = p.bit_length() - 1
    return 1 << ((k + 1) // 2), 1 << (k // 2)


def simulate(exe, kernel, machine, size, nodes, mesh, cpus):
    cmd = [exe, "simulate", "--kernel", kernel, "--size", "x".join(map(str, size)),
           "--nodes", str(nodes), "--cpus", str(cpus), "--tile", "auto", "--machine", machine,
           "--json"]
    if nodes > 1:
        cmd += ["--mesh", "x".join(map(str, mesh))]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return cmd, json.loads(out), time.monotonic() - start


def main():
    ap = benchlib.simulation_args(__doc__.split("\n")[0], "scaling.csv, scaling.png, context.txt")
    ap.add_argument("--kernel", choices=sorted(DEFAULTS), default="wave3d")
    ap.add_argument("--max-nodes", type=int, default=1024, help="largest P (a power of two)")
    ap.add_argument("--strong-size", help="strong scaling's space (default: the kernel's)")
    ap.add_argument("--per-node", help="weak scaling: cross-section per node (default: the kernel's)")
    ap.add_argument("--height", type=int, help="weak scaling: the mapping extent (default: the kernel's)")
    ap.add_argument("--cpus", type=int, default=1, help="CPUs per node (seed 000: 1)")
    ap.add_argument("--calibrations", metavar="WAVE3D.json,KERNEL.json",
                    help="sweep3d (required): two `tilepipe calibrate` files of this machine, one "
                         "rank, one window: wave3d's and the kernel's")
    args = ap.parse_args()

    defaults = DEFAULTS[args.kernel]
    if args.kernel != "wave3d" and len((args.calibrations or "").split(",")) != 2:
        ap.error(f"--kernel {args.kernel} needs --calibrations WAVE3D.json,KERNEL.json")
    os.makedirs(args.outdir, exist_ok=True)
    strong = [int(x) for x in (args.strong_size or defaults["strong"]).split("x")]
    per_node = [int(x) for x in (args.per_node or defaults["per_node"]).split("x")]
    height = args.height or defaults["height"]
    counts = []
    p = 1
    while p <= args.max_nodes:
        counts.append(p)
        p *= 2
    rows, commands = [], []
    for machine in args.machines.split(","):
        with open(machine) as f:
            mfile = json.load(f)
        if args.kernel != "wave3d":
            machine, mfile = kernel_machine(machine, mfile, args)
        for mode in ("strong", "weak"):
            one_node = None
            for p in counts:
                a, b = mesh_of(p)
                size = strong if mode == "strong" else [per_node[0] * a, per_node[1] * b, height]
                cmd, j, wall = simulate(args.tilepipe, args.kernel, machine, size, p, (a, b),
                                        args.cpus)
                commands.append(" ".join(cmd))
                sim = j["simulated_s"]
                if p == 1:
                    one_node = sim
                # One node's time per point (P = 1 runs the strong size, or weak's per-node
                # size); wave3d's is t_comp1 (one node has no communication).
                points = size[0] * size[1] * size[2]
                one_points = (strong[0] * strong[1] * strong[2] if mode == "strong"
                              else per_node[0] * per_node[1] * height)
                per_point = one_node / one_points
                rows.append({
                    "machine": mfile["machine"], "mode": mode, "nodes": p,
                    "mesh": "x".join(map(str, j["mesh"])), "size": "x".join(map(str, size)),
                    "tile_height": j["tile"][j["map_dim"] - 1],
                    "schedule": j["schedule"], "grouping": j["grouping"],
                    "steps": j["steps"], "simulated_s": sim, "predicted_s": j["predicted_s"],
                    "efficiency": points * per_point / (p * sim),
                    "critical_network_s": j["critical_path"]["network_s"],
                    "rank_steps": j["rank_steps"], "sim_wall_s": round(wall, 3)})
                r = rows[-1]
                print(f"{r['machine']:24} {mode:6} P={p:5} tile {r['tile_height']:6} "
                      f"{r['schedule']}+{r['grouping']} sim {sim:.4g} s "
                      f"pred {r['predicted_s']:.4g} s E {r['efficiency']:.3f} ({wall:.1f} s)",
                      flush=True)

    benchlib.write_results(args.outdir, "scaling", rows, commands,
                           [f"kernel {args.kernel}",
                            "efficiency = points x (one node's simulated_s per point) / "
                            "(nodes x simulated_s)"],
                           lambda plt, rows, path: plot(plt, rows, path, args.kernel))


def kernel_machine(path, mfile, args):
    """A copy of machine file `path` in OUTDIR with the kernel's costs: this machine's calibrated
    samples (and copy rate, where the file has none) scaled by f = the file's wave3d t_comp1 over
    this machine's (the kernel is assumed to cost f times this machine's on the file's CPU)."""
    wave_path, kernel_path = args.calibrations.split(",")
    with open(wave_path) as f:
        here_wave = json.load(f)["compute"]["t_comp1_ns"]
    with open(kernel_path) as f:
        here = json.load(f)
    costs = here["compute"]["kernels"][args.kernel]
    factor = mfile["compute"]["t_comp1_ns"] / here_wave
    mfile = json.loads(json.dumps(mfile))
    mfile["compute"].setdefault("kernels", {})[args.kernel] = {
        "t_comp1_ns": costs["t_comp1_ns"] * factor,
        "element_bytes": costs["element_bytes"],
        "samples": [{"tile_points": s["tile_points"], "t_comp1_ns": s["t_comp1_ns"] * factor}
                    for s in costs.get("samples", [])]}
    note = (f"; bench/sim/scaling.py: {args.kernel}'s t_comp1 samples calibrated on this machine "
            f"({kernel_path}) x {factor:.4g}, the file's wave3d t_comp1 over this machine's "
            f"({here_wave:.4g} ns, {wave_path})")
    copy = here["comm"].get("cpu_copy_bytes_per_s")
    if copy and "cpu_copy_bytes_per_s" not in mfile["comm"]:
        mfile["comm"]["cpu_copy_bytes_per_s"] = copy / factor
        note += f"; cpu_copy_bytes_per_s: this machine's {copy:.4g} / {factor:.4g}"
    mfile["source"] += note
    out = os.path.join(args.outdir, f"{mfile['machine']}-{args.kernel}.json")
    with open(out, "w") as f:
        json.dump(mfile, f, indent=1)
        f.write("\n")
    return out, mfile


def plot(plt, rows, path, kernel):
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
            # Markers differ by machine: curves that coincide stay visible.
            style = dict(linestyle=styles[mode], marker="os^D"[k % 4], markersize=7 - 2 * (k % 2),
                         color=colors[k % len(colors)])
            ax_e.plot(n, [r["efficiency"] for r in pts], label=label, **style)
            # One node: no communication, every height costs the same; not a choice.
            many = [r for r in pts if r["nodes"] > 1]
            ax_h.plot([r["nodes"] for r in many], [r["tile_height"] for r in many], **style)
    for ax in (ax_e, ax_h):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (1 CPU each)")
        ax.grid(True, alpha=0.3)
    ax_e.set_ylabel("efficiency = 1-node time / (nodes x time)")
    ax_e.set_ylim(0, 1.05)
    ax_h.set_yscale("log", base=2)
    ax_h.set_ylabel("tile height chosen by the model")
    ax_e.set_title(f"{kernel}, simulated (tilepipe simulate)")
    ax_h.set_title("--tile auto at each scale")
    handles, labels = ax_e.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
