#!/usr/bin/python3
"""Time from a fault to the end of a `tilepipe run` (issue 16), medians and spread of repeats:

  1. kill -9 of rank r (each rank of 2, 3 and 4 rank runs): signal sent -> tilepipe exited;
  2. SIGINT / SIGTERM to tilepipe: signal sent -> tilepipe exited (the launcher reaps every rank
     before it exits, so this bounds the last rank's exit);
  3. SIGSTOP of a rank with --progress-timeout T: signal sent -> tilepipe exited, minus T.

Each run starts `tilepipe run --kernel wave2d` (2-4 ranks x 1 CPU, --sync block), waits until
every rank is up plus DELAY ms, sends the signal and times the launcher's exit through a pidfd
(Python's os.pidfd_open; no polling interval). Checks the exit code and the one line each time.
Standard library only (no virtual environment needed).

usage: fault_times.py TILEPIPE [--repeat 5] [--delay-ms 200] [--size 128x262144]
                      [--progress-timeout 1] [--out results.json]"""
import argparse
import json
import os
import select
import signal
import statistics
import subprocess
import time


def children_of(pid):
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(name))
    return sorted(out)


def one_run(tp, args, ranks, target, sig, delay_s):
    """Starts tilepipe, strikes `target` ('launcher' or a rank index) with `sig` once every rank is
    up plus delay_s; returns (seconds from the signal to the launcher's exit, exit code, stderr)."""
    cmd = [tp, "run", "--kernel", "wave2d", "--size", args.size, "--tile", "16", "--nodes",
           str(ranks), "--cpus", "1", "--sync", "block", "--progress-timeout",
           str(args.progress_timeout), "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         restore_signals=True)
    fd = os.pidfd_open(p.pid)
    start = time.monotonic()
    kids = []
    while time.monotonic() - start < 10:
        kids = children_of(p.pid)
        if len(kids) == ranks:
            break
        time.sleep(0.001)
    time.sleep(delay_s)
    victim = p.pid if target == "launcher" else kids[target]
    sent = time.monotonic()
    os.kill(victim, sig)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.poll(30000)
    ended = time.monotonic()
    out, err = p.communicate()
    os.close(fd)
    return ended - sent, p.returncode, err.decode().strip(), out.decode()


def summary(xs):
    xs = sorted(xs)
    return {"median_ms": round(1000 * statistics.median(xs), 1),
            "min_ms": round(1000 * xs[0], 1), "max_ms": round(1000 * xs[-1], 1),
            "runs": len(xs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilepipe")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--delay-ms", type=int, default=200)
    ap.add_argument("--size", default="128x262144")
    ap.add_argument("--progress-timeout", type=float, default=1.0)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    delay = args.delay_ms / 1000
    rows = []

    def measure(label, ranks, target, sig, expect_code, expect_line, minus=0.0):
        times = []
        for _ in range(args.repeat):
            t, code, err, out = one_run(args.tilepipe, args, ranks, target, sig, delay)
            if code == 0:
                raise RuntimeError(f"{label}: the run ended before the fault; raise --size")
            if code != expect_code or expect_line not in err or "\n" in err or out:
                raise RuntimeError(f"{label}: exit {code}, stderr {err!r}, stdout {out[:80]!r}")
            times.append(t - minus)
        rows.append({"fault": label, "ranks": ranks, **summary(times)})
        r = rows[-1]
        print(f"{label:44s} ranks {ranks}: median {r['median_ms']:7.1f} ms "
              f"(min {r['min_ms']}, max {r['max_ms']}, {r['runs']} runs)", flush=True)

    for ranks in (2, 3, 4):
        for rank in range(ranks):
            measure(f"kill -9 rank {rank} -> end", ranks, rank, signal.SIGKILL, 1,
                    "was killed by signal 9 (SIGKILL)")
    for ranks in (2, 4):
        measure("SIGINT tilepipe -> end (every rank reaped)", ranks, "launcher", signal.SIGINT,
                130, "interrupted by SIGINT")
        measure("SIGTERM tilepipe -> end (every rank reaped)", ranks, "launcher", signal.SIGTERM,
                143, "interrupted by SIGTERM")
        measure(f"SIGSTOP rank {ranks - 1} -> end, minus the timeout", ranks, ranks - 1,
                signal.SIGSTOP, 1, "stopped", minus=args.progress_timeout)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"size": args.size, "delay_ms": args.delay_ms,
                       "progress_timeout_s": args.progress_timeout, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
