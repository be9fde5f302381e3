#!/usr/bin/python3
"""Model against measurement (issue 5): runs `tilepipe sweep` (which calibrates first unless
--machine is given) and reports, per scheme, the model error |predicted - measured| / measured at
every swept point whose tiles hold at least --min-work-us of work, and the measured time of the
model's automatic choice against the best measured point of the same sweep.

Writes OUT/sweep-K.json, OUT/sweep-K.csv, OUT/machine-K.json, OUT/sweep-K.png per sweep K and
OUT/summary.md. usage:
  bench_sweep.py BUILD_DIR OUT_DIR [--size 12x12x524288] [--heights 256:65536] [--nodes 2]
                 [--cpus 1] [--repeat 3] [--sweeps 1] [--machine FILE] [--min-work-us 100]
                 [--link latency=20us,bandwidth=80MB/s] [--schemes all] [--simulate]

--simulate: also `tilepipe simulate` every swept point with the sweep's machine file, and report
the simulator's error beside the model's (OUT/simulated-K.json).

--confirm N (default 9): the best measured point of a sweep is the fastest of many medians of a
few noisy runs, so it is biased low (the winner's curse) where the schemes lie within the noise
of each other. After each sweep the model's choice and that best point are run again with
`tilepipe run`, N times each, interleaved (OUT/confirm-K.json), and their medians compared: a
selection and an evaluation on independent samples. 0: no re-measurement."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys


def error_table(errors):
    """Markdown rows: per scheme the points, the median and largest error, those within 10%."""
    rows = ["| scheme | points | median error | max error (at height) | within 10% |",
            "|---|---|---|---|---|"]
    for key in sorted(errors):
        errs = errors[key]
        worst = max(errs)
        within = sum(1 for e in errs if e[0] <= 0.10)
        rows.append(f"| {key} | {len(errs)} | {100 * statistics.median(e[0] for e in errs):.1f}% "
                    f"| {100 * worst[0]:.1f}% ({worst[1]}) | {within}/{len(errs)} |")
    return rows


def point(tp, a, row, machine, command, field):
    """`tilepipe COMMAND` (simulate or run) of one swept point: its JSON's FIELD, or None
    (reported) on failure."""
    cmd = [tp, command, "--kernel", a.kernel, "--size", a.size, "--nodes", a.nodes, "--cpus",
           a.cpus, "--tile", str(row["tile_height"]), "--schedule", row["schedule"],
           "--grouping", row["grouping"], "--machine", machine, "--json"]
    cmd += ["--link", a.link] if a.link else []
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"bench_sweep.py: {' '.join(cmd)} failed: {r.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(r.stdout)[field]


def simulate(tp, a, row, machine):
    """The simulated completion time of one swept point."""
    return point(tp, a, row, machine, "simulate", "simulated_s")


def run_point(tp, a, row, machine):
    """`tilepipe run` of one swept point: its JSON's seconds."""
    return point(tp, a, row, machine, "run", "seconds")


def confirm(tp, a, chosen, best, machine):
    """The chosen and the best point, a.confirm runs each, interleaved: {name: [seconds]}."""
    points = {"chosen": chosen, "best": best}
    times = {name: [] for name in points}
    for i in range(a.confirm):
        for name in (list(points) if i % 2 == 0 else list(points)[::-1]):
            t = run_point(tp, a, points[name], machine)
            if t is None:
                return None
            times[name].append(t)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--kernel", default="wave3d")
    p.add_argument("--size", default="12x12x524288")
    p.add_argument("--heights", default="256:65536")
    p.add_argument("--nodes", default="2")
    p.add_argument("--cpus", default="1")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=1)
    p.add_argument("--machine")
    p.add_argument("--min-work-us", type=float, default=100.0)
    p.add_argument("--link", help="emulated link for the calibration and the runs")
    p.add_argument("--schemes", default="all", help="tilepipe sweep --schemes")
    p.add_argument("--confirm", type=int, default=9,
                   help="re-measure the choice and the best point N times each, interleaved")
    p.add_argument("--simulate", action="store_true",
                   help="the simulator's time of every swept point beside the model's")
    a = p.parse_args()
    tp = os.path.join(a.build, "apps/tilepipe/tilepipe")
    if not os.access(tp, os.X_OK):
        print(f"bench_sweep.py: {tp} is not built (cmake --build {a.build})", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    md = [f"`tilepipe sweep --kernel {a.kernel} --size {a.size} --nodes {a.nodes} --cpus {a.cpus} "
          f"--tile-heights {a.heights} --schemes {a.schemes} --repeat {a.repeat}"
          + (f" --machine {a.machine}" if a.machine else "")
          + (f" --link {a.link}" if a.link else "") + "`, "
          f"{a.sweeps} sweep(s), git {sha}, host {platform.node()}, "
          f"load average before: {os.getloadavg()[0]:.1f}", ""]
    all_err = {}
    sim_err = {}
    choice_rows = []
    for k in range(a.sweeps):
        base = os.path.join(a.out, f"sweep-{k}")
        cmd = [tp, "sweep", "--kernel", a.kernel, "--size", a.size, "--nodes", a.nodes, "--cpus",
               a.cpus, "--tile-heights", a.heights, "--schemes", a.schemes, "--repeat",
               str(a.repeat), "--json", "--quiet", "--csv", base + ".csv", "--plot",
               base + ".png"]
        cmd += ["--link", a.link] if a.link else []
        cmd += ["--machine", a.machine] if a.machine else ["--save-machine",
                                                           os.path.join(a.out, f"machine-{k}.json")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench_sweep.py: {' '.join(cmd)} failed: {r.stderr.strip()}", file=sys.stderr)
            return 1
        out = json.loads(r.stdout)
        with open(base + ".json", "w") as f:
            json.dump(out, f, indent=2)
        rows = out["results"]
        machine = a.machine or os.path.join(a.out, f"machine-{k}.json")
        simulated = []
        for row in rows:
            if not row["swept"] or row["measured_tile_s"] * 1e6 < a.min_work_us:
                continue
            key = f"{row['schedule']} + {row['grouping']}"
            all_err.setdefault(key, []).append((abs(row["error"]), row["tile_height"], k))
            if a.simulate:
                sim = simulate(tp, a, row, machine)
                if sim is None:
                    return 1
                simulated.append({"schedule": row["schedule"], "grouping": row["grouping"],
                                  "tile_height": row["tile_height"],
                                  "measured_s": row["measured_s"],
                                  "predicted_s": row["predicted_s"], "simulated_s": sim})
                e = abs(sim - row["measured_s"]) / row["measured_s"]
                sim_err.setdefault(key, []).append((e, row["tile_height"], k))
        if a.simulate:
            with open(os.path.join(a.out, f"simulated-{k}.json"), "w") as f:
                json.dump(simulated, f, indent=2)
        best = min(rows, key=lambda x: x["measured_s"])
        chosen = next(x for x in rows if x["chosen"])
        again = None
        if a.confirm > 0:
            again = confirm(tp, a, chosen, best, machine)
            if again is None:
                return 1
            with open(os.path.join(a.out, f"confirm-{k}.json"), "w") as f:
                json.dump({"chosen": {k2: chosen[k2] for k2 in ("schedule", "grouping",
                                                                 "tile_height")},
                           "best": {k2: best[k2] for k2 in ("schedule", "grouping",
                                                             "tile_height")},
                           "seconds": again}, f, indent=2)
        choice_rows.append((k, chosen, best, again))
        print(f"sweep {k}: done", file=sys.stderr)

    md += [f"Model error |predicted - measured| / measured at the swept points whose tiles took "
           f">= {a.min_work_us:g} us of computation (measured), medians of {a.repeat} "
           "interleaved runs per point:", "",
           *error_table(all_err)]
    if a.simulate:
        md += ["", "`tilepipe simulate` (the same plans and machine files) against the same "
               "measurements:", "",
               *error_table(sim_err)]
    md += ["", "The model's choice (over every tile height and the swept schemes) against the best "
           "measured point of the same sweep:", "",
           "| sweep | chosen | measured s | best measured | s | chosen / best |",
           "|---|---|---|---|---|---|"]
    for k, c, b, _ in choice_rows:
        md.append(f"| {k} | {c['schedule']} + {c['grouping']}, z = {c['tile_height']} | "
                  f"{c['measured_s']:.4f} ({c['measured_min_s']:.4f}-{c['measured_max_s']:.4f}) | "
                  f"{b['schedule']} + {b['grouping']}, z = {b['tile_height']} | "
                  f"{b['measured_s']:.4f} ({b['measured_min_s']:.4f}-{b['measured_max_s']:.4f}) | "
                  f"{c['measured_s'] / b['measured_s']:.3f} |")
    if a.confirm > 0:
        md += ["", f"The same two points run again, {a.confirm} `tilepipe run`s each, interleaved "
               "(medians, min-max; the best point chosen on the sweep's runs, measured on "
               "these):", "",
               "| sweep | chosen s | best point s | chosen / best |", "|---|---|---|---|"]
        for k, c, b, t in choice_rows:
            mc, mb = statistics.median(t["chosen"]), statistics.median(t["best"])
            md.append(f"| {k} | {mc:.4f} ({min(t['chosen']):.4f}-{max(t['chosen']):.4f}) | "
                      f"{mb:.4f} ({min(t['best']):.4f}-{max(t['best']):.4f}) | {mc / mb:.3f} |")
    md.append("")
    md.append(f"load average after: {os.getloadavg()[0]:.1f}")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
