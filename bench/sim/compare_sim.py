#!/usr/bin/python3
"""Simulated against measured (issue 15): calibrates this machine, then for each configuration
(ranks x CPUs, tile height, schedule, grouping) runs `tilepipe run` REPEAT times (configurations
interleaved, so that every one sees the same minutes of a drifting machine) and `tilepipe
simulate` once (it is deterministic) with the calibrated machine file; the table gives the
measured median and min-max, the simulated time and the two closed formulas' (the seeds' and the
executed one, docs/model.md "Two formulas") and their errors against the median.

usage: compare_sim.py TILEPIPE OUT_DIR [--size 16x16x262144] [--heights 2048,8192]
                      [--configs 1x1,2x1,1x2,3x1,4x1,2x2,3x2,4x2] [--schemes overlap+hyperplane,blocking+hyperplane]
                      [--repeat 5] [--machine FILE] [--link SPEC] [--sweeps T] [--cores N]
                      [--alone-too]
Writes OUT_DIR/machine.json (unless --machine; with --alone-too also machine-1.json),
OUT_DIR/results.json, OUT_DIR/table.md and OUT_DIR/context.txt (commands, git sha, load before
and after). Standard library only."""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout


def load():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tilepipe")
    p.add_argument("out")
    p.add_argument("--size", default="16x16x262144")
    p.add_argument("--heights", default="2048,8192")
    # Every configuration of 1-4 ranks x 1-2 CPUs (issue 15), ranks x CPUs.
    p.add_argument("--configs", default="1x1,2x1,1x2,3x1,4x1,2x2,3x2,4x2")
    p.add_argument("--schemes", default="overlap+hyperplane,blocking+hyperplane")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--machine", default="")
    p.add_argument("--link", default="", help="calibrate and run through this emulated link")
    p.add_argument("--sweeps", type=int, default=1,
                   help="every run sweeps the space this many times (tilepipe run --sweeps), "
                        "predicted and simulated with --sweeps: runs long enough that the "
                        "start-up does not decide")
    p.add_argument("--alone-too", action="store_true",
                   help="also calibrate one worker alone (machine-1.json) for the configurations "
                        "of one thread, as `calibrate --nodes 1 --cpus 1` would for such a run")
    p.add_argument("--cores", type=int, default=os.cpu_count(),
                   help="cores the ranks share; configurations with more threads run --sync block")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tp = a.tilepipe
    kernel = f"wave{len(a.size.split('x'))}d"
    context = [f"load before: {load()}"]
    try:
        sha = run(["git", "rev-parse", "--short", "HEAD"]).strip()
    except RuntimeError:
        sha = "?"
    context.append(f"git: {sha}")
    # As a user calibrates for a run (`tilepipe calibrate --nodes N --cpus M`: the compute probes
    # on N x M ranks at once): one worker alone, and two at once for every configuration with
    # two or more threads (up to the cores; more share them, network.hosts below). Streaming
    # kernels compute faster alone (the memory to themselves). --alone-too off, or --machine:
    # one file for all, the two-worker calibration's.
    machine = a.machine
    machine_alone = a.machine
    if not machine:
        machine = os.path.join(a.out, "machine.json")
        machine_alone = os.path.join(a.out, "machine-1.json") if a.alone_too else machine
        for path, nodes in ((machine, "2"), (machine_alone, "1")):
            if nodes == "1" and path == machine:
                continue
            cal = [tp, "calibrate", "--kernel", kernel, "--size", a.size, "--nodes", nodes,
                   "--cpus", "1", "--tile-heights", a.heights, "-o", path, "--quiet"]
            if a.link:
                cal += ["--link", a.link]
            context.append("calibrate: " + " ".join(cal))
            run(cal)
    # More threads than cores: the ranks block (--sync block) and share the cores. The machine
    # then says so (network.hosts: every rank on one host of --cores cores, docs/model.md "Ranks
    # that share cores"), with the block mode's futex wake-up, as calibrate measured it
    # (notes.notify_us.block), paid by a thread that slept on its faces or at its step barrier;
    # t_sync stays the calibrated mode's (what a step costs when nobody sleeps).
    with open(machine) as f:
        calibrated = json.load(f)
    shared_machines = {}

    def machine_for(threads, nodes):
        if threads == 1:
            return machine_alone
        if threads <= a.cores:
            return machine
        if (threads, nodes) not in shared_machines:
            m = json.loads(json.dumps(calibrated))
            wake = m["notes"]["notify_us"]["block"]
            if a.link:  # as calibrate --link treats t_sync: what the transport adds to the flight
                c = m["comm"]
                wake = max(0.0, wake - (c["latency_us"] + 8e6 / c["bandwidth_bytes_per_s"]))
            net = m.setdefault("network", {})
            net["hosts"] = {"ranks_per_host": nodes, "cores": a.cores, "wake_us": wake}
            path = os.path.join(a.out, f"machine-shared-{nodes}x{threads // nodes}.json")
            with open(path, "w") as f:
                json.dump(m, f, indent=1)
            shared_machines[(threads, nodes)] = path
            context.append(f"{threads} threads on {a.cores} cores: {path} (network.hosts: "
                           f"{nodes} ranks on {a.cores} cores, wake {wake:.1f} us)")
        return shared_machines[(threads, nodes)]

    configs = []
    for c in a.configs.split(","):
        nodes, cpus = c.split("x")
        threads = int(nodes) * int(cpus)
        sync = ["--sync", "block"] if threads > a.cores else []
        for h in a.heights.split(","):
            for scheme in a.schemes.split(","):
                schedule, grouping = scheme.split("+")
                if grouping == "vertical" and cpus == "1":
                    continue
                flags = ["--kernel", kernel, "--size", a.size, "--nodes", nodes, "--cpus", cpus,
                         "--tile", h, "--schedule", schedule, "--grouping", grouping]
                if a.link:
                    flags += ["--link", a.link]
                if a.sweeps > 1:
                    flags += ["--sweeps", str(a.sweeps)]
                name = (f"{nodes} rank x {cpus} CPU, h={h}, {schedule} + {grouping}"
                        + (", block" if sync else ""))
                configs.append((name, flags, sync, machine_for(threads, int(nodes))))
    sims = {}
    for name, flags, _, mfile in configs:
        # The simulation and both closed forms: the seeds' (every step at full length) and the
        # executed one (fill, drain and hops; `tilepipe plan`'s default since 2026-11-27).
        cmd = [tp, "simulate"] + flags + ["--machine", mfile, "--formula", "seeds", "--json"]
        context.append("simulate: " + " ".join(cmd))
        j = json.loads(run(cmd))
        executed = json.loads(run(cmd[:-3] + ["--formula", "executed", "--json"]))
        sims[name] = {"simulated_s": j["simulated_s"], "predicted_s": j["predicted_s"],
                      "predicted_executed_s": executed["predicted_s"], "steps": j["steps"]}
    measured = {name: [] for name, _, _, _ in configs}
    for rep in range(a.repeat):
        order = configs if rep % 2 == 0 else list(reversed(configs))
        for name, flags, sync, _ in order:
            cmd = [tp, "run"] + flags + sync + ["--json"]
            if rep == 0:
                context.append("run: " + " ".join(cmd))
            measured[name].append(json.loads(run(cmd))["seconds"])
    context.append(f"load after: {load()}")
    rows = []
    for name, _, _, _ in configs:
        m = measured[name]
        med = statistics.median(m)
        s = sims[name]
        rows.append({"config": name, "measured_s": m, "median_s": med,
                     "simulated_s": s["simulated_s"], "predicted_s": s["predicted_s"],
                     "predicted_executed_s": s["predicted_executed_s"],
                     "steps": s["steps"],
                     "sim_error": s["simulated_s"] / med - 1,
                     "model_error": s["predicted_s"] / med - 1,
                     "executed_error": s["predicted_executed_s"] / med - 1})
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"machine": machine, "size": a.size, "repeat": a.repeat, "rows": rows}, f,
                  indent=1)
    lines = ["| configuration | steps | measured median s (min-max) | simulated s | error | "
             "seeds' formula s | error | executed formula s | error |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['config']} | {r['steps']} | {r['median_s']:.4f} "
                     f"({min(r['measured_s']):.4f}-{max(r['measured_s']):.4f}) | "
                     f"{r['simulated_s']:.4f} | {100 * r['sim_error']:+.1f}% | "
                     f"{r['predicted_s']:.4f} | {100 * r['model_error']:+.1f}% | "
                     f"{r['predicted_executed_s']:.4f} | {100 * r['executed_error']:+.1f}% |")
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "context.txt"), "w") as f:
        f.write("\n".join(context) + "\n")
    print("\n".join(lines))
    print("\n".join(context), file=sys.stderr)


if __name__ == "__main__":
    main()
