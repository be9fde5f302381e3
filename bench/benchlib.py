"""What the benchmark scripts under bench/ share: run a command that prints JSON, say the load,
and write a sweep's results (CSV, context, plot).

A script imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import benchlib
Standard library only (write_results plots with matplotlib when it is there).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time


def run_json(argv, env=None, timeout=1800):
    """Runs argv and returns its standard output parsed as JSON; a failure raises RuntimeError
    naming the command, its exit status and its standard error."""
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def load_average():
    """The 1-minute load average, as the results record it before and after a run."""
    return os.getloadavg()


def git_revision():
    """The short git revision of the repository that holds bench/ ("" outside a checkout)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def write_results(outdir, stem, rows, commands, notes=(), plot=None):
    """Writes OUTDIR/STEM.csv (the rows, dicts with the same keys, in order), OUTDIR/context.txt
    (git revision, UTC date, the `notes` lines, every command) and, with `plot`, OUTDIR/STEM.png:
    plot(plt, rows, path) with matplotlib's pyplot on the Agg backend; without matplotlib it says
    so on stderr and writes no plot (the system's python3-matplotlib: run with /usr/bin/python3)."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, f"{stem}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(outdir, "context.txt"), "w") as f:
        f.write(f"git {git_revision()}\n")
        f.write(f"date {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
        for line in notes:
            f.write(line + "\n")
        f.write("\n".join(" ".join(c) if isinstance(c, list) else c for c in commands) + "\n")
    if plot is None:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not found: no plot (use /usr/bin/python3)", file=sys.stderr)
        return
    path = os.path.join(outdir, f"{stem}.png")
    plot(plt, rows, path)
    print(f"wrote {path}")


def simulation_args(description, outputs):
    """The argument parser the simulation studies (bench/sim) share: the tilepipe executable, the
    results folder (which gets `outputs`) and --machines (seed 000's SCI cluster and the
    InfiniBand EDR-class file by default); each study adds its own options."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("tilepipe", help="path to the tilepipe executable")
    ap.add_argument("outdir", help=f"where to write {outputs}")
    ap.add_argument("--machines", default=",".join([
        os.path.join(root, "tests/data/machines/seed000-sci-cluster.json"),
        os.path.join(root, "bench/sim/machines/infiniband-edr-cluster.json")]),
        help="comma-separated machine files (default: seed 000's SCI cluster, InfiniBand EDR)")
    return ap
