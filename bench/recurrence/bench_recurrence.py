#!/usr/bin/python3
"""tilepipe against the hand-written MPI pipeline of the 2-D recurrence (issue 12, "Performance").

The recurrence A[i][j] = A[i-1][j] + A[i][j-1] - A[i-1][j-1] on an N x N grid, T sweeps:
  - handwritten: bench/recurrence/handwritten_mpi.c under `mpirun -np R` (each rank a band of
    columns, rows in chunks of G); G is tuned first: every G of --groups on the first grid, the
    fastest (median) kept for all;
  - door: tilepipe through its runtime door (recurrence_door), R forked ranks x 1 CPU and
    1 rank x 2 CPUs, and under `mpirun -np R` (joining the job);
  - plugin: the same kernel built as a plugin (examples/02_recurrence) through `tilepipe run
    --plugin`, 2 forked ranks (against "door 2 ranks (forked)": what the plugin costs; its process
    time is the command's wall time);
  - plain: the hand-written code under `mpirun -np 1` (the plain loop: one band, no message)
    against the door on 1 rank x 1 CPU (issue 12: within 5% of the plain loop).
tilepipe's tile height is tuned as G is: every height of --tiles on the first grid, one sweep,
door 2 forked ranks, the fastest (median) kept for every tilepipe row (--tile H fixes it, --group
G fixes G: a later window of the same run, e.g. --sizes 20000 --append). The mapping dimension is
tuned with the height (--map-dims 2,1: 2 pipelines along the columns, tiles TILE columns wide
whose rows are strided by the rank's width; 1 along the rows, each rank a band of columns as in
the hand-written code); --tile H --map-dim M fix both.
Every configuration runs --repeat times, interleaved (each round in its own shuffled order,
random.Random(round), so that no configuration always follows the same one), and every run's
sum must equal the others' (bit for bit). Before every measured run a rinse (touch_memory;
--no-rinse: none) writes one byte per page of as much memory as the grid holds: on this VM
the first touch of memory costs 0.1-1.8 s per GB depending on what the previous process did with
it (after the hand-written code, which writes its whole array, the next process paid 3-5 s to
touch 3 GB; after tilepipe's door 0.4 s), so without it a configuration's set-up depends on its
predecessor. The rinse's own time is kept per run (`touch_s`), a gauge of the VM's state.
Two times per run: `seconds` (the sweeps, timed
inside) and `process_s` (the whole process: set-up included, the MPI launcher's start aside),
and the wall time of the whole command as the script sees it (`command_s`, mpirun included).

usage: bench_recurrence.py BUILD_DIR OUT_DIR [--sizes 8000,20000] [--sweeps 1,10] [--repeat 5]
                           [--groups 16,64,256,1024] [--group G] [--tiles 256,512,1024,2048]
                           [--map-dims 2,1] [--tile H --map-dim M] [--append]
Each measured run starts after --settle seconds of rest (0.5: a run that follows an mpirun job
otherwise shares the CPUs with its exit). Writes OUT/results.json and OUT/summary.md (--append: adds its rows to those already there);
prints the summary. Load (uptime) before and after. Every tilepipe row also carries `setup_s`:
the slowest rank's set-up before its first step (layout, slab, faces), timed inside.
"""
import argparse
import json
import os
import statistics
import subprocess
import random
import sys
import time

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def run_json(cmd):
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    try:
        j = json.loads(out.stdout)  # tilepipe run --json: one (indented) object
    except json.JSONDecodeError:
        j = json.loads(out.stdout.strip().splitlines()[-1])  # the drivers: a last line of JSON
    j["command_s"] = wall
    # `tilepipe run --json` names the result `checksum` and does not time its own process: its
    # process time is the command's wall time as seen from here.
    j.setdefault("sum", j.get("checksum"))
    j.setdefault("process_s", wall)
    return j


def fmt_tuning(t):
    return ", ".join(f"{k}: {statistics.median(v):.4f} s" for k, v in t.items()) or "fixed"


def load():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--sizes", default="8000,20000")
    ap.add_argument("--sweeps", default="1,10")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--groups", default="16,64,256,1024")
    ap.add_argument("--group", type=int, default=0, help="G of the hand-written code (0: tune)")
    ap.add_argument("--tiles", default="256,512,1024,2048")
    ap.add_argument("--tile", type=int, default=0, help="tilepipe's tile height (0: tune)")
    ap.add_argument("--map-dims", default="2,1", help="mapping dimensions tuned with the height")
    ap.add_argument("--map-dim", type=int, default=0, help="with --tile: the mapping dimension")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--settle", type=float, default=0.5,
                    help="seconds of rest before each measured run (the last one's exit settles)")
    ap.add_argument("--no-rinse", dest="rinse", action="store_false",
                    help="no touch_memory before each measured run")
    a = ap.parse_args()
    door = os.path.join(a.build, "bench/recurrence/recurrence_door")
    toucher = os.path.join(a.build, "bench/recurrence/touch_memory")
    hand = os.path.join(a.build, "bench/recurrence/handwritten_mpi")
    # The same kernel (examples/02_recurrence) loaded as a plugin by the CLI: against the door's
    # forked 2 ranks, what calling through the plugin costs.
    tilepipe = os.path.join(a.build, "apps/tilepipe/tilepipe")
    plugin = os.path.join(a.build, "examples/libtp_recurrence.so")
    sizes = [int(s) for s in a.sizes.split(",")]
    sweeps = [int(s) for s in a.sweeps.split(",")]
    os.makedirs(a.out, exist_ok=True)
    load_before = load()

    # The hand-written code's grouping factor and tilepipe's tile height, each tuned the same
    # way on the first grid, one sweep, 2 ranks, 3 runs interleaved: the fastest median.
    n0 = sizes[0]
    tuning, tile_tuning = {}, {}
    for _ in range(3):
        if not a.group:
            for g in [int(x) for x in a.groups.split(",")]:
                r = run_json(MPIRUN + ["-np", "2", hand, str(n0), str(g), "1"])
                tuning.setdefault(g, []).append(r["seconds"])
        if not a.tile:
            for m in [int(x) for x in a.map_dims.split(",")]:
                for h in [int(x) for x in a.tiles.split(",")]:
                    r = run_json([door, str(n0), "2", "1", "1", str(h), str(m)])
                    tile_tuning.setdefault(f"{h}/{r['map_dim']}", []).append(r["seconds"])
    group = a.group or min(tuning, key=lambda g: statistics.median(tuning[g]))
    best = min(tile_tuning, key=lambda k: statistics.median(tile_tuning[k])) if not a.tile else None
    tile = a.tile or int(best.split("/")[0])
    map_dim = a.map_dim if a.tile else int(best.split("/")[1])

    configs = {
        "handwritten 2 ranks (mpirun)": lambda n, t: MPIRUN + ["-np", "2", hand, str(n), str(group), str(t)],
        "door 2 ranks (forked)": lambda n, t: [door, str(n), "2", "1", str(t), str(tile), str(map_dim)],
        "door 2 ranks (mpirun)": lambda n, t: MPIRUN + ["-np", "2", door, str(n), "2", "1", str(t), str(tile), str(map_dim)],
        "door 1 rank x 2 CPUs": lambda n, t: [door, str(n), "1", "2", str(t), str(tile), str(map_dim)],
        "plugin 2 ranks (tilepipe run)": lambda n, t: [
            tilepipe, "run", "--plugin", plugin, "--kernel", "recurrence", "--size", f"{n}x{n}",
            "--nodes", "2", "--cpus", "1", "--tile", str(tile)]
            + (["--map-dim", str(map_dim)] if map_dim else []) + ["--sweeps", str(t), "--json"],
        "door 1 rank x 1 CPU": lambda n, t: [door, str(n), "1", "1", str(t), str(tile), str(map_dim)],
        "plain loop (hand-written, mpirun -np 1)": lambda n, t: MPIRUN + ["-np", "1", hand, str(n), str(group), str(t)],
    }
    rows = []
    for n in sizes:
        for t in sweeps:
            runs = {name: [] for name in configs}
            names = list(configs)
            for rep in range(a.repeat):
                order = list(names)
                random.Random(rep).shuffle(order)
                for name in order:
                    time.sleep(a.settle)
                    mib = str((n + 1) * (n + 1) * 8 // 2**20 + 1)  # the grid's bytes
                    rinse = {"touch_s": run_json([toucher, mib])["touch_s"]} if a.rinse else {}
                    runs[name].append({**run_json(configs[name](n, t)), **rinse})
            sums = {r["sum"] for rs in runs.values() for r in rs}
            if len(sums) != 1:
                sys.exit(f"results differ at n={n}, sweeps={t}: {sums}")
            ref = statistics.median(r["process_s"] for r in runs["handwritten 2 ranks (mpirun)"])
            for name, rs in runs.items():
                keys = ("seconds", "process_s", "command_s") + (("setup_s",) if "setup_s" in rs[0] else ()) \
                    + (("touch_s",) if "touch_s" in rs[0] else ())
                med = {k: statistics.median(r[k] for r in rs) for k in keys}
                rows.append({"n": n, "sweeps": t, "config": name, **med,
                             "seconds_min": min(r["seconds"] for r in rs),
                             "seconds_max": max(r["seconds"] for r in rs),
                             "process_over_handwritten": med["process_s"] / ref,
                             "runs": rs})
            # Each grid's rows as soon as they are measured (a window that runs out keeps them).
            with open(os.path.join(a.out, f"partial-{n}-{t}.json"), "w") as f:
                json.dump([r for r in rows if (r["n"], r["sweeps"]) == (n, t)], f, indent=1)
    load_after = load()
    result = {"group": group, "tuning": tuning, "repeat": a.repeat, "tile": tile, "map_dim": map_dim,
              "tile_tuning": tile_tuning, "load_before": load_before, "load_after": load_after,
              "rows": rows, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path = os.path.join(a.out, "results.json")
    if a.append and os.path.exists(path):
        old = json.load(open(path))
        if (old["group"], old["tile"], old.get("map_dim", 0)) != (group, tile, map_dim):
            sys.exit(f"--append: G, tile, map dim {group}, {tile}, {map_dim} differ from {path}'s")
        old.setdefault("windows", []).append({k: result[k] for k in ("load_before", "load_after", "date")})
        old["rows"] += rows
        result = old
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    windows = [result] + result.get("windows", [])
    lines = [f"Recurrence, medians of {a.repeat} interleaved runs; hand-written G = {group} "
             f"(tuned over {a.groups}: {fmt_tuning(result['tuning'])}); tilepipe tile height "
             f"{tile}, mapping dimension {map_dim} (height/map dim tuned over {a.tiles} x "
             f"{a.map_dims}: {fmt_tuning(result.get('tile_tuning', {}))}). Load "
             + "; ".join(f"before {' '.join(w['load_before'])}, after {' '.join(w['load_after'])}"
                         for w in windows) + ".", "",
             "| N | sweeps | configuration | sweeps s (min-max) | set-up s | process s | / hand-written | command s | rinse s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        setup = f"{r['setup_s']:.4f}" if "setup_s" in r else "-"
        rinse = f"{r['touch_s']:.3f}" if "touch_s" in r else "-"
        lines.append(f"| {r['n']} | {r['sweeps']} | {r['config']} | {r['seconds']:.4f} "
                     f"({r['seconds_min']:.4f}-{r['seconds_max']:.4f}) | {setup} | {r['process_s']:.4f} | "
                     f"{r['process_over_handwritten']:.2f}x | {r['command_s']:.3f} | {rinse} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    for n in sizes:
        for t in sweeps:
            os.remove(os.path.join(a.out, f"partial-{n}-{t}.json"))
    print(text)


main()
