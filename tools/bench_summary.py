#!/usr/bin/env python3
"""The current figures at the top of docs/benchmarks.md, one short table per area, regenerated
from the newest results under bench/*/results/ (the dated sections below them keep the detail).

  tools/bench_summary.py            rewrites the block between the summary markers
  tools/bench_summary.py --check    exits 1 when the block is not what the results give

Reads only result files (JSON, and the model's summary.md); standard library only."""
import argparse
import glob
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN = "<!-- summary:begin (tools/bench_summary.py writes this block) -->"
END = "<!-- summary:end -->"


def by_name(path):
    """Sort key of a results folder: its name, numbers by value (they carry their date, then a
    run number: 2026-11-27-sweeps-10 after 2026-11-27-sweeps-9)."""
    return [int(part) if part.isdigit() else part
            for part in re.split(r"(\d+)", os.path.basename(path))]


def newest(pattern):
    """The newest results folder matching pattern (by name, by_name)."""
    found = sorted(glob.glob(os.path.join(ROOT, pattern)), key=by_name)
    if not found:
        sys.exit(f"bench_summary: no results match {pattern}")
    return found[-1]


def rel(path):
    return os.path.relpath(path, ROOT)


def rows_of(path):
    """A pingpong file's rows: `tilepipe pingpong --json`'s `results` (an older tilepipe, and the
    raw MPI benchmarks, print the array alone)."""
    data = json.load(open(path))
    return data["results"] if isinstance(data, dict) else data


def comm():
    d = newest("bench/comm/results/paired-*")
    ratios, lat, line = [], [], []
    for f in sorted(glob.glob(os.path.join(d, "tilepipe_shm_poll_paired.*.json"))):
        row = next(r for r in rows_of(f) if r["bytes"] == 8)
        ratios.append(row["ratio_to_cacheline"])
        lat.append(row["latency_us"])
        line.append(row["cacheline_us"])
    raw = {}
    for name in ("openmpi_vader_cma", "mpich_posix_shm"):
        runs = [next(r for r in rows_of(f) if r["bytes"] == 8)["latency_us"]
                for f in sorted(glob.glob(os.path.join(d, f"{name}.*.json")))]
        raw[name] = statistics.median(runs)
    return [
        f"### Communication (`{rel(d)}`)",
        "",
        "| 8-byte one-way latency, shm + poll | median over runs |",
        "|---|---:|",
        f"| tilepipe | {statistics.median(lat):.3f} us ({len(lat)} runs) |",
        f"| raw cache line between the same ranks | {statistics.median(line):.3f} us |",
        f"| ratio to the paired cache line (target 1.5x) | {statistics.median(ratios):.2f}x "
        f"({min(ratios):.2f}-{max(ratios):.2f}) |",
        f"| raw Open MPI (vader + CMA) / MPICH (posix shm) | "
        f"{raw['openmpi_vader_cma']:.3f} / {raw['mpich_posix_shm']:.3f} us |",
    ]


def executor():
    # Of the newest day's paired runs, the one that began on the quietest machine.
    runs = sorted(glob.glob(os.path.join(ROOT, "bench/e2e/results/compare-*")), key=by_name)
    if not runs:
        sys.exit("bench_summary: no results match bench/e2e/results/compare-*")
    day = re.search(r"\d{4}-\d{2}-\d{2}", os.path.basename(runs[-1])).group(0)
    same_day = [r for r in runs if day in os.path.basename(r)]
    d = min(same_day, key=lambda r: float(json.load(open(os.path.join(r, "compare.json")))
                                           ["load_before"]))
    j = json.load(open(os.path.join(d, "compare.json")))
    t_seq = j["seq_s"]
    out = [f"### Executor, wave3d {j['size']} (`{rel(d)}`, build B, load {j['load_before']})", "",
           "| configuration | median s | efficiency T_seq / (workers x T) |", "|---|---:|---:|"]
    for r in j["rows"]:
        if r["config"].startswith("pingpong"):
            continue
        workers = 1 if r["config"].startswith("1x1") else 2
        out.append(f"| {r['config']} | {r['B_median']:.4f} | "
                   f"{t_seq / (workers * r['B_median']):.2f} |")
    return out


def model():
    d = newest("bench/model/results/shm-quiet-*")
    text = open(os.path.join(d, "summary.md")).read()
    rows = [l for l in text.splitlines() if re.match(r"\| (blocking|overlap) \+", l)]
    choice = [l for l in text.splitlines() if re.match(r"\| \d+ \| ", l)]
    ratios = [float(l.rstrip(" |").split("|")[-1]) for l in choice]
    return [f"### Model against measurement, shm (`{rel(d)}`)", "",
            "| scheme | points | median error | max error (at height) | within 10% |",
            "|---|---|---|---|---|"] + rows + [
            "", f"Automatic choice against the best measured point: "
            f"{min(ratios):.3f}-{max(ratios):.3f}x over {len(ratios)} sweeps (target within 5%)."]


def smith_waterman():
    d = newest("bench/sw/results/*")
    j = json.load(open(os.path.join(d, "sw_bench.json")))
    meta = j.get("meta", {})
    load = (f", load {meta['load_before'][0]:.2f} before, {meta['load_after'][0]:.2f} after"
            if "load_before" in meta else "")
    out = [f"### Smith-Waterman against parasail (`{rel(d)}`{load})", "",
           "| pair | tilepipe 1 CPU | parasail's best | 1 CPU / parasail (target 1.0) | "
           "1 CPU `--simd avx2` / parasail | "
           "2 CPUs, 2 ranks / 1 CPU (target 1.85) | model's 2 CPUs, 2 ranks / 1 CPU | "
           "two 1-CPU runs at once / 1 CPU |", "|---|---|---|---:|---:|---|---|---:|"]
    # The bound a 2-worker split puts on this kernel: each worker's band is half as high, and one
    # core computes such bands at its own rate (bench/sw/README.md).
    bounds = []
    for work in ("protein", "dna"):
        recs = {r["config"]: r for r in j["records"] if r["workload"] == work and "config" in r}
        one = recs["tilepipe 1 CPU"]
        para = next(r for c, r in recs.items() if c.startswith("parasail"))
        half = recs.get("tilepipe 1 CPU, 2-worker tiles")
        if half:
            bounds.append(f"{work} {2 * half['gcups'] / one['gcups']:.2f}x")

        def model(name):
            p = recs[name].get("predicted_s")
            return f"{one['median_s'] / p:.2f}x" if p else "-"

        two = recs.get("two 1-CPU runs at once")
        two_cell = f"{two['speedup_vs_1cpu']:.2f}x" if two else "-"
        avx2 = recs.get("tilepipe 1 CPU, --simd avx2")
        avx2_cell = f"{avx2['gcups'] / para['gcups']:.2f}x" if avx2 else "-"
        isa = f" ({one['simd']})" if one.get("simd") else ""
        out.append(f"| {work} {one['length']}x{one['length']} | {one['gcups']:.2f} GCUPS{isa} | "
                   f"{para['config'].split()[1]} {para['gcups']:.2f} GCUPS | "
                   f"{one['gcups'] / para['gcups']:.2f}x | {avx2_cell} | "
                   f"{recs['tilepipe 2 CPUs']['speedup_vs_1cpu']:.2f}x, "
                   f"{recs['tilepipe 2 ranks']['speedup_vs_1cpu']:.2f}x | "
                   f"{model('tilepipe 2 CPUs')}, {model('tilepipe 2 ranks')} | "
                   f"{two_cell} |")
    if bounds:
        out += ["", "The most 2 workers can give with these bands, 2 x (1 CPU with the 2-worker "
                "tiles) / 1 CPU: " + ", ".join(bounds) + "."]
    aligned = [r for r in j["records"] if r.get("alignment")]
    if aligned:
        out += ["", "The alignment itself (1 CPU, medians): score pass, traceback, the process's "
                "maximum resident set (target under 1 GB at 100k x 100k).", "",
                "| pair | score pass | traceback | max RSS | alignment columns |",
                "|---|---:|---:|---:|---:|"]
        for r in aligned:
            out.append(f"| {r['workload']} {r['length']}x{r['length']} | "
                       f"{statistics.median(r['score_pass_s']):.3f} s | "
                       f"{statistics.median(r['traceback_s']):.3f} s | "
                       f"{max(r['max_rss_mb']):.0f} MB | {r['alignment_length']} |")
    return out


def simulation():
    # compare_sim.py's newest runs by name: on shared memory (not -link, -1g, cyclic-*), and
    # through the emulated link.
    shm = [d for d in glob.glob(os.path.join(ROOT, "bench/sim/results/[0-9]*[0-9]"))
           if "-link" not in os.path.basename(d)]
    link = glob.glob(os.path.join(ROOT, "bench/sim/results/[0-9]*-link-*[0-9]"))
    if not shm:
        sys.exit("bench_summary: no simulation results on shared memory")

    def stats(rows, key):
        e = [abs(r[key]) for r in rows]
        return f"{len(e)} | {100 * statistics.median(e):.1f}% | {100 * max(e):.1f}%"

    out = []
    for d, where in ((sorted(shm, key=by_name)[-1], "shared memory"),
                     (sorted(link, key=by_name)[-1] if link else None, "the emulated link")):
        if d is None:
            continue
        j = json.load(open(os.path.join(d, "results.json")))
        # Configurations with more threads than cores run --sync block; their machine files say
        # so (network.hosts: the ranks share the cores, compare_sim.py): a row of their own.
        fit = [r for r in j["rows"] if not r["config"].endswith(", block")]
        shared = [r for r in j["rows"] if r["config"].endswith(", block")]
        out += [f"### Simulation against measurement, wave3d {j['size']}, {where} (`{rel(d)}`)",
                "", "| | configurations | median error | max error |", "|---|---:|---:|---:|"]
        for label, rows in (("", fit), (", more threads than cores", shared)):
            if not rows:
                continue
            out.append(f"| `tilepipe simulate`{label} | {stats(rows, 'sim_error')} |")
            out.append(f"| closed formula (the seeds'){label} | {stats(rows, 'model_error')} |")
            if all("executed_error" in r for r in rows):  # runs from 2026-11-27 on
                out.append(f"| closed formula (executed){label} | "
                           f"{stats(rows, 'executed_error')} |")
        out.append("")
    return out[:-1]


def faults():
    d = newest("bench/faults/results/*")
    j = json.load(open(os.path.join(d, "fault_times.json")))
    kinds = {}
    for r in j["rows"]:
        kind = re.sub(r"rank \d+", "a rank", r["fault"])
        kinds.setdefault(kind, []).append(r)
    out = [f"### Faults (`{rel(d)}`)", "", "| fault | ranks | medians |", "|---|---|---|"]
    for kind, rows in kinds.items():
        ranks = sorted({r["ranks"] for r in rows})
        meds = [r["median_ms"] for r in rows]
        out.append(f"| {kind} | {', '.join(map(str, ranks))} | "
                   f"{min(meds):.1f}-{max(meds):.1f} ms |")
    return out


def sor():
    f = newest("bench/sor/results/*-quiet.json")
    j = json.load(open(f))
    plain = next(r for r in j["rows"] if r["what"] == "plain loop")
    model = any("predicted_s" in r for r in j["rows"])  # bench_sor.py --model
    out = [f"### sor2d {j['size']}, T = {j['iterations']}, against the plain sweep-by-sweep loop "
           f"(`{rel(f)}`)", "", "| configuration | median | plain loop / it |"
           + (" model's prediction (error) |" if model else ""),
           "|---|---:|---:|" + ("---:|" if model else "")]
    for r in j["rows"]:
        row = f"| {r['what']} | {r['median_s']:.3f} s | {plain['median_s'] / r['median_s']:.2f}x |"
        if model:
            row += (f" {r['predicted_s']:.3f} s ({100 * r['model_error']:+.0f}%) |"
                    if "predicted_s" in r else " |")
        out.append(row)
    return out


def sweep3d():
    found = sorted(glob.glob(os.path.join(ROOT, "bench/sweep3d/results/*.json")), key=by_name)
    if not found:
        return []
    f = found[-1]
    j = json.load(open(f))
    out = [f"### sweep3d {j['size']}, S{2 if j['angles'] == 1 else 4}, T = {j['iterations']}, "
           f"against the plain loop (`{rel(f)}`, load {j['load_before'][0]:.2f} before, "
           f"{j['load_after'][0]:.2f} after)", "",
           "| configuration | median [min, max] | efficiency T_plain / (workers x T) |",
           "|---|---:|---:|"]
    for r in j["rows"]:
        eff = f"{r['efficiency_vs_plain']:.2f}" if "efficiency_vs_plain" in r else "1 (reference)"
        out.append(f"| {r['what']} | {r['median_s']:.3f} s [{r['min_s']:.3f}, {r['max_s']:.3f}] "
                   f"| {eff} |")
    return out


def recurrence():
    d = newest("bench/recurrence/results/*")
    j = json.load(open(os.path.join(d, "results.json")))
    out = [f"### 2-D recurrence against a hand-written MPI pipeline (G = {j['group']}) "
           f"(`{rel(d)}`)", "",
           "Two workers against the hand-written 2-rank pipeline, one worker against the plain "
           "loop (the hand-written code under `mpirun -np 1`).", "",
           "| N | sweeps | configuration | s per sweep | per sweep / reference | "
           "whole process / reference |",
           "|---|---:|---|---:|---:|---:|"]
    rows = j["rows"]

    def reference(r, plain):
        for x in rows:
            if x["n"] == r["n"] and x["sweeps"] == r["sweeps"] and (
                    x["config"].startswith("plain") if plain else
                    x["config"].startswith("handwritten")):
                return x
        return None

    for r in rows:
        if r["config"].startswith("plain"):
            continue
        one_worker = "1 rank x 1 CPU" in r["config"]
        ref = reference(r, one_worker)
        if ref is None:
            continue
        per_sweep = r["seconds"] / ref["seconds"]
        whole = r["process_s"] / ref["process_s"]
        out.append(f"| {r['n']} | {r['sweeps']} | {r['config']} | "
                   f"{r['seconds'] / r['sweeps']:.4f} | {per_sweep:.2f}x | {whole:.2f}x |")
    return out


def block():
    parts = [BEGIN, "## Current figures", "",
             "The newest result of each area, on the 2-core AMD EPYC VM this project is measured "
             "on; commands, conditions and spreads are in the dated sections below and in the "
             "results folders named in each heading. Regenerate with "
             "`python3 tools/bench_summary.py`.", ""]
    for area in (comm, executor, model, smith_waterman, simulation, faults, sor, sweep3d,
                 recurrence):
        lines = area()
        if lines:
            parts += lines + [""]
    return "\n".join(parts) + END


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    text = open(DOC).read()
    fresh = block()
    if BEGIN in text:
        start = text.index(BEGIN)
        stop = text.index(END) + len(END)
        updated = text[:start] + fresh + text[stop:]
    else:
        title, rest = text.split("\n", 1)
        updated = title + "\n\n" + fresh + "\n" + rest
    if a.check:
        if updated != text:
            sys.exit("docs/benchmarks.md: the current figures differ from bench/*/results "
                     "(run python3 tools/bench_summary.py)")
        return 0
    with open(DOC, "w") as f:
        f.write(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
