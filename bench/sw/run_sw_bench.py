#!/usr/bin/env python3
"""Smith-Waterman speed: tilepipe align (1 CPU, 2 CPUs, 2 ranks) against parasail, side by side.

Also two independent 1-CPU runs at once (what two cores give this code: the ceiling of any 2-worker
scheme on this machine) and the cost model's time of each tilepipe configuration (from this
machine's calibration with sw's t_comp1 set to the one-core run's rate).

Creates its own virtual environment (bench/sw/.venv) with pip's `parasail` (the package bundles the
C library), screens parasail's single-thread routines (sw_striped, sw_scan, sw_diag at 8, 16 and
32 bits and the saturation-checked _sat ones) on a smaller pair, then times the fastest that does
not saturate at full size against tilepipe on the full pairs: interleaved rounds, medians of
--runs. GCUPS = query x target / s.
tilepipe's time is its own `seconds` (the DP, FASTA reading excluded); parasail's is the call.
Follows the helpers' benchmark lock: waits until nobody compiles, holds /tmp/tilepipe-bench.lock.
"""
import argparse
import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(HERE, ".venv")
LOCK = "/tmp/tilepipe-bench.lock"
CANDIDATES = ["sw_striped_8", "sw_striped_16", "sw_striped_32", "sw_striped_sat", "sw_scan_8",
              "sw_scan_16", "sw_scan_32", "sw_scan_sat", "sw_diag_8", "sw_diag_16", "sw_diag_32",
              "sw_diag_sat"]


def ensure_venv():
    """Re-runs this script under bench/sw/.venv, creating it and installing parasail first."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    if subprocess.call([py, "-c", "import parasail"], stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([py, "-m", "pip", "install", "-q", "parasail"])
    os.execv(py, [py] + sys.argv)


def write_fasta(path, name, seq):
    with open(path, "w") as f:
        f.write(f">{name}\n")
        for i in range(0, len(seq), 80):
            f.write(seq[i:i + 80] + "\n")


def nobody_compiles():
    return subprocess.call(["pgrep", "-f", "cc1plus|/ld |collect2"], stdout=subprocess.DEVNULL) != 0


def take_lock(name):
    while True:
        while os.path.exists(LOCK) or not nobody_compiles():
            time.sleep(10)
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue
        os.write(fd, (name + "\n").encode())
        os.close(fd)
        return


def run_tilepipe(exe, q, t, matrix, cpus, nodes, extra):
    cmd = [exe, "align", q, t, "--matrix", matrix, "--gap-open", "10", "--gap-extend", "1",
           "--json", "--score-only", "--cpus", str(cpus)] + extra
    if nodes > 1:
        cmd += ["--nodes", str(nodes)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out.strip().splitlines()[-1])
    return j["seconds"], j["score"], j.get("simd", "?")


def run_alignment(exe, q, t, matrix, extra):
    """One 1-CPU `align` with the alignment (traceback) as users run it: the score pass's and the
    traceback's seconds from its JSON, and the process's maximum resident set in MB, from GNU
    time (Debian's `time`, installed by make deps): a child's own rusage would count this Python
    process, whose pages a vforked child holds until it execs."""
    cmd = ["/usr/bin/time", "-f", "maxrss_kb %M", exe, "align", q, t, "--matrix", matrix,
           "--gap-open", "10", "--gap-extend", "1", "--json", "--cpus", "1"] + extra
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    j = json.loads(r.stdout.strip().splitlines()[-1])
    rss = [line.split()[1] for line in r.stderr.splitlines() if line.startswith("maxrss_kb ")]
    return (j["seconds"], j["traceback_seconds"], int(rss[-1]) / 1024.0, j["score"],
            j["length"])


def run_two_at_once(exe, q, t, matrix, extra):
    """Two independent 1-CPU runs started together: the slower one's seconds (each did n x m).

    What two cores give this code when nothing is shared but the machine: the ceiling of any
    2-worker scheme here (SIMD units, caches and memory bandwidth a hypervisor may share between
    the two vCPUs included)."""
    cmd = [exe, "align", q, t, "--matrix", matrix, "--gap-open", "10", "--gap-extend", "1",
           "--json", "--score-only", "--cpus", "1"] + extra
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise subprocess.CalledProcessError(p.returncode, cmd)
        results.append(json.loads(out.strip().splitlines()[-1]))
    return max(r["seconds"] for r in results), results[0]["score"], results[0].get("simd", "?")


def sw_machine_file(machine, n, rates, path):
    """Writes to `path` the machine file of the model column for one workload of n x n cells.

    It is this machine's calibration (communication, synchronization) with sw's t_comp1 taken
    from one-core runs: `rates` maps a tile's points to the seconds of a one-core run with tiles of
    that shape, so each configuration's tiles cost what one core took per cell with them (a
    2-worker tile's band is half as high, and its per-column work weighs twice as much). The model
    then predicts what the pipeline itself costs (fill, drain, faces, steps), not the speed of a
    core."""
    with open(machine) as f:
        m = json.load(f)
    samples = [{"tile_points": p, "t_comp1_ns": s / (n * n) * 1e9} for p, s in sorted(rates.items())]
    m["compute"].setdefault("kernels", {})["sw"] = {
        "element_bytes": 4, "t_comp1_ns": samples[-1]["t_comp1_ns"], "samples": samples}
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def predict(exe, n, tile_args, sw_machine):
    """The cost model's time for one configuration, from the workload's machine file
    (sw_machine_file)."""
    out = subprocess.run([exe, "plan", "--kernel", "sw", "--size", f"{n}x{n}", "--machine",
                          sw_machine, "--json"] + tile_args, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["predicted_s"]


def run_parasail(parasail, routine, q, t, matrix):
    """Seconds of one call and its score (None when the routine saturated: no valid score)."""
    f = getattr(parasail, routine)
    start = time.perf_counter()
    r = f(q, t, 10, 1, matrix)
    seconds = time.perf_counter() - start
    return seconds, (None if getattr(r, "saturated", False) else r.score)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tilepipe", default=os.path.join(ROOT, "build/release/apps/tilepipe/tilepipe"))
    ap.add_argument("--protein", type=int, default=30000, help="protein pair length")
    ap.add_argument("--dna", type=int, default=100000, help="DNA pair length")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (median)")
    ap.add_argument("--alignment-runs", type=int, default=3,
                    help="1-CPU runs with the alignment (traceback) per pair; 0: none")
    ap.add_argument("--screen-fraction", type=float, default=0.3,
                    help="parasail routines are screened on pairs this fraction of the length")
    ap.add_argument("--tilepipe-args", default="", help="extra tilepipe align arguments")
    ap.add_argument("--out", default=None, help="results folder (default results/<UTC date>)")
    ap.add_argument("--no-lock", action="store_true", help="skip the benchmark lock protocol")
    args = ap.parse_args()
    ensure_venv()
    import parasail  # noqa: E402 (installed by ensure_venv)

    out_dir = args.out or os.path.join(HERE, "results",
                                       datetime.datetime.utcnow().strftime("%Y-%m-%d"))
    if not args.out:  # a second run of the day goes to <date>b, <date>c, ...: the first's data stays
        base = out_dir
        for suffix in [""] + list("bcdefghijklmnopqrstuvwxyz"):
            out_dir = base + suffix
            if not os.path.exists(os.path.join(out_dir, "sw_bench.json")):
                break
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(14)
    workloads = [
        ("protein", "blosum62", parasail.blosum62, "ACDEFGHIKLMNPQRSTVWY", args.protein),
        ("dna", "ednafull", parasail.nuc44, "ACGT", args.dna),
    ]
    extra = args.tilepipe_args.split()
    if not args.no_lock:
        take_lock("sw-simd bench/sw/run_sw_bench.py")
    try:
        load_before = os.getloadavg()
        records = []
        with tempfile.TemporaryDirectory() as tmp:
            # This machine's communication and synchronization for the model column.
            machine = os.path.join(out_dir, "machine.json")
            subprocess.run([args.tilepipe, "calibrate", "--quiet", "-o", machine], check=True,
                           capture_output=True)
            for label, tp_matrix, ps_matrix, letters, n in workloads:
                q = "".join(rng.choice(letters) for _ in range(n))
                t = "".join(rng.choice(letters) for _ in range(n))
                qf, tf = os.path.join(tmp, f"{label}_q.fa"), os.path.join(tmp, f"{label}_t.fa")
                write_fasta(qf, "query", q)
                write_fasta(tf, "target", t)
                # Screen parasail's routines on a shorter pair (one run each), keep the fastest.
                m = max(1000, int(n * args.screen_fraction))
                screen = {}
                for routine in CANDIDATES:
                    s, _ = run_parasail(parasail, routine, q[:m], t[:m], ps_matrix)
                    screen[routine] = m * m / s / 1e9
                # At full size a narrow routine may saturate (no valid score): the fastest of the
                # screening order that does not is parasail's best.
                best = None
                for routine in sorted(screen, key=screen.get, reverse=True):
                    if run_parasail(parasail, routine, q, t, ps_matrix)[1] is not None:
                        best = routine
                        break
                print(f"{label}: parasail screening at {m}x{m} (GCUPS): " +
                      ", ".join(f"{k} {v:.2f}" for k, v in sorted(screen.items(), key=lambda x: -x[1])) +
                      f"; best valid at {n}x{n}: {best}",
                      flush=True)
                # The tiles align chooses (kernels::sw_default_tile): one process takes one row of
                # tiles per thread, target / 32 wide within 256-2048; 2 ranks tiles as high along
                # the target. One CPU with the 2-worker tiles: the model's cost of those tiles.
                width = min(2048, max(256, (n + 31) // 32))
                half = ["--tile", f"{(n + 1) // 2}x{width}"]
                configs = [
                    ("tilepipe 1 CPU", lambda: run_tilepipe(args.tilepipe, qf, tf, tp_matrix, 1, 1, extra)),
                    ("tilepipe 1 CPU, 2-worker tiles",
                     lambda: run_tilepipe(args.tilepipe, qf, tf, tp_matrix, 1, 1, extra + half)),
                    # The AVX2 path beside the default (AVX-512 where the CPU has it): parasail's
                    # pip package has no AVX-512 routine, so this is the equal-width comparison.
                    ("tilepipe 1 CPU, --simd avx2",
                     lambda: run_tilepipe(args.tilepipe, qf, tf, tp_matrix, 1, 1, extra + ["--simd", "avx2"])),
                    ("tilepipe 2 CPUs", lambda: run_tilepipe(args.tilepipe, qf, tf, tp_matrix, 2, 1, extra)),
                    ("tilepipe 2 ranks", lambda: run_tilepipe(args.tilepipe, qf, tf, tp_matrix, 1, 2, extra)),
                    ("two 1-CPU runs at once", lambda: run_two_at_once(args.tilepipe, qf, tf, tp_matrix, extra)),
                    (f"parasail {best}", lambda: run_parasail(parasail, best, q, t, ps_matrix) + ("",)),
                ]
                times = {name: [] for name, _ in configs}
                scores = {}
                simd = {}
                for r in range(args.runs):
                    order = configs[r % len(configs):] + configs[:r % len(configs)]
                    for name, fn in order:
                        s, score, isa = fn()
                        times[name].append(s)
                        scores.setdefault(name, set()).add(score)
                        if isa:
                            simd[name] = isa
                one_core = statistics.median(times["tilepipe 1 CPU"])
                # The model's time for the tilepipe configurations (tiles as align chooses them).
                tiles = {"tilepipe 1 CPU": ["--nodes", "1", "--cpus", "1", "--tile", f"{n}x8192"],
                         "tilepipe 2 CPUs": ["--nodes", "1", "--cpus", "2", "--tile",
                                             f"{(n + 1) // 2}x{width}", "--cyclic", "1"],
                         "tilepipe 2 ranks": ["--nodes", "2", "--cpus", "1", "--tile", str(width)]}
                rates = {n * 8192: one_core,
                         (n + 1) // 2 * width: statistics.median(
                             times["tilepipe 1 CPU, 2-worker tiles"])}
                sw_machine = sw_machine_file(machine, n, rates,
                                             os.path.join(tmp, f"{label}_machine.json"))
                predicted = {name: predict(args.tilepipe, n, a, sw_machine)
                             for name, a in tiles.items()}
                for name, _ in configs:
                    med = statistics.median(times[name])
                    work = 2 if name == "two 1-CPU runs at once" else 1  # cells computed, x n^2
                    rec = {
                        "workload": label, "length": n, "config": name,
                        "runs": len(times[name]), "seconds": times[name],
                        "median_s": med, "gcups": work * n * n / med / 1e9,
                        "gcups_min": work * n * n / max(times[name]) / 1e9,
                        "gcups_max": work * n * n / min(times[name]) / 1e9,
                        "speedup_vs_1cpu": work * one_core / med, "scores": sorted(scores[name]),
                        "simd": simd.get(name, ""), "predicted_s": predicted.get(name),
                    }
                    records.append(rec)
                    pred = f" model {rec['predicted_s']:.3f} s" if rec["predicted_s"] else ""
                    print(f"{label:8s} {name:28s} median {med:8.3f} s{pred}  {rec['gcups']:6.2f} GCUPS "
                          f"[{rec['gcups_min']:.2f}, {rec['gcups_max']:.2f}]  x{rec['speedup_vs_1cpu']:.2f} "
                          f"score {rec['scores']}", flush=True)
                all_scores = set().union(*scores.values())
                if len(all_scores) != 1:
                    print(f"error: {label}: scores differ between tools: {scores}", file=sys.stderr)
                    return 1
                # The alignment itself (traceback), 1 CPU, after the score-only runs.
                aligned = [run_alignment(args.tilepipe, qf, tf, tp_matrix, extra)
                           for _ in range(args.alignment_runs)]
                if aligned:
                    rec = {"workload": label, "length": n, "alignment": True,
                           "score_pass_s": [a[0] for a in aligned],
                           "traceback_s": [a[1] for a in aligned],
                           "max_rss_mb": [a[2] for a in aligned],
                           "score": aligned[0][3], "alignment_length": aligned[0][4]}
                    records.append(rec)
                    print(f"{label:8s} alignment (1 CPU): score pass "
                          f"{statistics.median(rec['score_pass_s']):.3f} s, traceback "
                          f"{statistics.median(rec['traceback_s']):.3f} s "
                          f"({min(rec['traceback_s']):.3f}-{max(rec['traceback_s']):.3f}), "
                          f"max RSS {max(rec['max_rss_mb']):.1f} MB, "
                          f"{rec['alignment_length']} columns", flush=True)
                    if rec["score"] not in all_scores:
                        print(f"error: {label}: the alignment's score {rec['score']} differs",
                              file=sys.stderr)
                        return 1
                records.append({"workload": label, "parasail_screen_gcups": screen,
                                "screen_length": m, "parasail_best": best})
        load_after = os.getloadavg()
    finally:
        if not args.no_lock:
            os.remove(LOCK)
    meta = {
        "date_utc": datetime.datetime.utcnow().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv), "host": platform.node(), "cpu": cpu_model(),
        "nproc": os.cpu_count(), "parasail": parasail.__version__,
        "load_before": load_before, "load_after": load_after,
    }
    with open(os.path.join(out_dir, "sw_bench.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    with open(os.path.join(out_dir, "sw_bench.md"), "w") as f:
        f.write(f"{meta['date_utc']} UTC, {meta['cpu']}, load {load_before[0]:.2f} before, "
                f"{load_after[0]:.2f} after; `{meta['command']}`\n\n")
        f.write("| pair | configuration | median s | model s | GCUPS (min-max) | x 1 CPU | score | simd |\n")
        f.write("|---|---|---:|---:|---|---:|---:|---|\n")
        for r in records:
            if "config" not in r:
                continue
            model = f"{r['predicted_s']:.3f}" if r.get("predicted_s") else "-"
            f.write(f"| {r['workload']} {r['length']}x{r['length']} | {r['config']} | "
                    f"{r['median_s']:.3f} | {model} | {r['gcups']:.2f} ({r['gcups_min']:.2f}-{r['gcups_max']:.2f}) | "
                    f"{r['speedup_vs_1cpu']:.2f} | {r['scores'][0]} | {r['simd']} |\n")
        aligned = [r for r in records if r.get("alignment")]
        if aligned:
            f.write("\nThe alignment (1 CPU, `align --json` without `--score-only`; medians, "
                    "min-max):\n\n| pair | score pass s | traceback s | max RSS MB | columns |\n"
                    "|---|---:|---|---:|---:|\n")
            for r in aligned:
                f.write(f"| {r['workload']} {r['length']}x{r['length']} | "
                        f"{statistics.median(r['score_pass_s']):.3f} | "
                        f"{statistics.median(r['traceback_s']):.3f} "
                        f"({min(r['traceback_s']):.3f}-{max(r['traceback_s']):.3f}) | "
                        f"{max(r['max_rss_mb']):.1f} | {r['alignment_length']} |\n")
    print(f"load before {load_before}, after {load_after}; wrote {out_dir}/sw_bench.json, sw_bench.md")
    # The plot of GCUPS per configuration (plot_sw.py) needs matplotlib, which this script's
    # virtual environment lacks: the system's python3 has it (Debian's python3-matplotlib).
    if subprocess.call(["/usr/bin/python3", os.path.join(HERE, "plot_sw.py"), out_dir]) != 0:
        print("the plot was not written (plot_sw.py needs /usr/bin/python3 with matplotlib: make deps)",
              file=sys.stderr)
    return 0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
