#!/usr/bin/python3
"""End-to-end benchmarks of `tilepipe run` (issue 4), medians of repeated runs in one session:

  1. 1 rank x 1 thread with one big tile against the kernel's own loop over the whole space and
     against the plain reference loop nest (wave_sequential);
  2. parallel efficiency T_seq / (2 T) on 2 workers (2 ranks x 1 CPU, 1 rank x 2 CPUs) over
     tile heights;
  3. the four schemes (blocking/overlap x hyperplane/vertical) at each tile height, on shm and,
     with --mpi, on Open MPI over TCP loopback.

With --machine FILE (from `tilepipe calibrate`), every row also carries the cost model's
predicted time (`tilepipe plan --machine FILE --json`, field predicted_s).

Writes OUT/results.json, OUT/summary.md (markdown tables) and OUT/schemes.png.

With --faces, only compares copied and direct faces (`tilepipe run --faces copy|direct`) on
2 ranks x 1 CPU: per repeat one sequential run, then every (schedule, height) with both face
modes back to back (the order alternating between repeats), so that the paired ratio
direct/copy sees the same machine load. Writes OUT/faces.json and OUT/faces.md.
usage: bench_run.py BUILD_DIR OUT_DIR [--size 16x16x1048576] [--heights 1024,4096,16384]
                    [--repeat 3] [--mpi] [--machine FILE] [--faces]"""
import argparse
import json
import os
import statistics
import subprocess
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

run_json = benchlib.run_json


def median_run(cmd, repeat, env=None):
    results = [run_json(cmd, env) for _ in range(repeat)]
    secs = sorted(r["seconds"] for r in results)
    mid = results[[r["seconds"] for r in results].index(secs[len(secs) // 2])]
    mid["seconds_min"], mid["seconds_max"] = secs[0], secs[-1]
    return mid


def compare_faces(a, tp, seq_exe, kernel, heights):
    """Copied against direct faces, interleaved; medians, min-max and paired ratios."""
    seq_s = []
    runs = {}  # (schedule, height, faces) -> list of result dicts
    for rep in range(a.repeat):
        seq = run_json([seq_exe, a.size, "1"])
        seq_s.append(seq["seconds"])
        for sched in ("blocking", "overlap"):
            for h in heights:
                modes = ("copy", "direct") if rep % 2 == 0 else ("direct", "copy")
                for faces in modes:
                    cmd = [tp, "run", "--kernel", kernel, "--size", a.size, "--nodes", "2",
                           "--cpus", "1", "--tile", str(h), "--schedule", sched, "--grouping",
                           "hyperplane", "--sync", "hybrid", "--faces", faces, "--json"]
                    r = run_json(cmd)
                    if r["checksum"] != seq["checksum"] or r["faces"] != faces:
                        raise RuntimeError(f"checksum or face mode differs: {' '.join(cmd)}")
                    runs.setdefault((sched, h, faces), []).append(r)
                    print(f"rep {rep} {sched:8} h={h:6} {faces:6} {r['seconds']:.4f}s",
                          file=sys.stderr)
    t_seq = statistics.median(seq_s)
    rows = []
    for sched in ("blocking", "overlap"):
        for h in heights:
            copy, direct = runs[(sched, h, "copy")], runs[(sched, h, "direct")]
            ratios = [d["seconds"] / c["seconds"] for c, d in zip(copy, direct)]
            for faces, rs in (("copy", copy), ("direct", direct)):
                secs = [r["seconds"] for r in rs]
                rows.append({
                    "schedule": sched, "tile_height": h, "faces": faces,
                    "seconds": statistics.median(secs), "seconds_min": min(secs),
                    "seconds_max": max(secs),
                    "efficiency": t_seq / (2 * statistics.median(secs)),
                    "hidden_share": statistics.median(
                        [r["hidden_share"] for r in rs if r["hidden_share"] is not None] or [0]),
                    "send_start_s": statistics.median(r["phases"]["send_start_s"] for r in rs),
                    "wait_s": statistics.median(r["phases"]["wait_s"] for r in rs),
                    "face_transfer_s": statistics.median(
                        max(x["face_transfer_s"] for x in r["ranks"]) for r in rs),
                    "direct_over_copy": statistics.median(ratios) if faces == "direct" else None,
                    "ratio_min": min(ratios) if faces == "direct" else None,
                    "ratio_max": max(ratios) if faces == "direct" else None})
    with open(os.path.join(a.out, "faces.json"), "w") as f:
        json.dump({"size": a.size, "repeat": a.repeat, "t_seq": t_seq, "t_seq_all": seq_s,
                   "rows": rows}, f, indent=2)
    md = [f"Size {a.size} ({kernel}), 2 ranks x 1 CPU, hyperplane, medians of {a.repeat} "
          f"interleaved runs (min-max); T_seq {t_seq:.4f} s ({min(seq_s):.4f}-{max(seq_s):.4f}).",
          "", "| schedule | tile height | faces | seconds (min-max) | efficiency T_seq/(2T) | "
          "direct/copy paired (min-max) | hidden | send start s | waiting s | t_face us |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "-" if r["direct_over_copy"] is None else (
            f"{r['direct_over_copy']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f})")
        md.append(f"| {r['schedule']} | {r['tile_height']} | {r['faces']} | {r['seconds']:.4f} "
                  f"({r['seconds_min']:.4f}-{r['seconds_max']:.4f}) | {r['efficiency']:.2f} | "
                  f"{ratio} | {100 * r['hidden_share']:.0f}% | {r['send_start_s']:.4f} | "
                  f"{r['wait_s']:.4f} | {1e6 * r['face_transfer_s']:.0f} |")
    with open(os.path.join(a.out, "faces.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--size", default="16x16x1048576")
    p.add_argument("--heights", default="1024,4096,16384,65536")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--mpi", action="store_true", help="also Open MPI over TCP loopback")
    p.add_argument("--machine", help="machine file: add the model's predicted time to each row")
    p.add_argument("--faces", action="store_true",
                   help="only compare copied and direct faces on 2 ranks x 1 CPU, interleaved")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tp = os.path.join(a.build, "apps/tilepipe/tilepipe")
    seq_exe = os.path.join(a.build, "bench/e2e/wave_sequential")
    kernel = f"wave{len(a.size.split('x'))}d"
    heights = [int(h) for h in a.heights.split(",")]
    results = {"size": a.size, "kernel": kernel, "repeat": a.repeat}
    if a.faces:
        return compare_faces(a, tp, seq_exe, kernel, heights)

    seq = run_json([seq_exe, a.size, str(a.repeat)])
    results["sequential"] = seq
    one = median_run([tp, "run", "--kernel", kernel, "--size", a.size, "--nodes", "1", "--cpus",
                      "1", "--tile", a.size.split("x")[-1], "--json"], a.repeat)
    results["one_worker"] = {"seconds": one["seconds"], "seconds_min": one["seconds_min"],
                             "seconds_max": one["seconds_max"], "checksum": one["checksum"]}
    if one["checksum"] != seq["checksum"]:
        raise RuntimeError("checksum of tilepipe run differs from the sequential loop")

    rows = []
    for transport in (["shm", "mpi-tcp"] if a.mpi else ["shm"]):
        for workers in (["2x1", "1x2"] if transport == "shm" else ["2x1"]):
            nodes, cpus = workers.split("x")
            for sched in ("blocking", "overlap"):
                for group in ("hyperplane", "vertical"):
                    if cpus == "1" and group == "vertical":
                        continue  # with one CPU per node both groupings are the same schedule
                    for h in heights:
                        cmd = [tp, "run", "--kernel", kernel, "--size", a.size, "--nodes", nodes,
                               "--cpus", cpus, "--tile", str(h), "--schedule", sched,
                               "--grouping", group, "--sync", "hybrid", "--json"]
                        env = None
                        if transport == "mpi-tcp":
                            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", nodes,
                                   "--mca", "btl", "tcp,self", "--bind-to", "core"] + cmd + [
                                "--transport", "mpi"]
                        r = median_run(cmd, a.repeat, env)
                        if r["checksum"] != seq["checksum"]:
                            raise RuntimeError(f"checksum differs: {' '.join(cmd)}")
                        predicted = None
                        if a.machine:
                            plan = run_json([tp, "plan", "--kernel", kernel, "--size", a.size,
                                             "--nodes", nodes, "--cpus", cpus, "--tile", str(h),
                                             "--schedule", sched, "--grouping", group,
                                             "--machine", a.machine, "--transport",
                                             "mpi" if transport == "mpi-tcp" else "shm",
                                             "--json"])
                            predicted = plan["predicted_s"]
                        rows.append({"predicted_s": predicted, "transport": transport, "workers": workers,
                                     "schedule": sched, "grouping": group, "tile_height": h,
                                     "seconds": r["seconds"], "seconds_min": r["seconds_min"],
                                     "seconds_max": r["seconds_max"],
                                     "efficiency": seq["seconds"] / (2 * r["seconds"]),
                                     "hidden_share": r["hidden_share"], "phases": r["phases"]})
                        print(f"{transport} {workers} {sched:8} {group:10} h={h:6} "
                              f"{r['seconds']:.4f}s eff {rows[-1]['efficiency']:.2f}",
                              file=sys.stderr)
    results["runs"] = rows
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)

    md = [f"Size {a.size} ({kernel}), medians of {a.repeat} runs (min-max).", "",
          f"Sequential: the kernel's loop over the whole space {seq['seconds']:.4f} s "
          f"({seq['seconds_min']:.4f}-{seq['seconds_max']:.4f}); the plain reference loop nest "
          f"(allocation included) {seq['reference_s']:.4f} s ({seq['reference_s_min']:.4f}-"
          f"{seq['reference_s_max']:.4f}); tilepipe run 1 rank x 1 CPU, one tile: "
          f"{one['seconds']:.4f} s ({one['seconds_min']:.4f}-{one['seconds_max']:.4f}), "
          f"ratio {one['seconds'] / seq['seconds']:.3f}.", "",
          "| transport | ranks x CPUs | schedule | grouping | tile height | seconds (min-max) | "
          "efficiency T_seq/(2T) | hidden | predicted s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        hidden = "-" if r["hidden_share"] is None else f"{100 * r['hidden_share']:.0f}%"
        md.append(f"| {r['transport']} | {r['workers']} | {r['schedule']} | {r['grouping']} | "
                  f"{r['tile_height']} | {r['seconds']:.4f} ({r['seconds_min']:.4f}-"
                  f"{r['seconds_max']:.4f}) | {r['efficiency']:.2f} | {hidden} | "
                  + ("-" if r["predicted_s"] is None else f"{r['predicted_s']:.4f}") + " |")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5))
    keys = sorted({(r["transport"], r["workers"], r["schedule"], r["grouping"]) for r in rows})
    for k in keys:
        pts = [(r["tile_height"], r["seconds"]) for r in rows
               if (r["transport"], r["workers"], r["schedule"], r["grouping"]) == k]
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=" ".join(k))
    ax.axhline(seq["seconds"] / 2, color="k", linestyle=":", label="T_seq / 2")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tile height")
    ax.set_ylabel("seconds")
    ax.set_title(f"tilepipe run {kernel} {a.size}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "schemes.png"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
