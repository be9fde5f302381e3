#!/usr/bin/env python3
"""Per-sweep figures of a tilepipe run --trace: span of each sweep, tiles on the busiest worker,
their mean, the hand-over (span - tiles_busiest x mean tile), and the gap between sweeps."""
import json, sys, statistics, collections
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
xs = sorted((e for e in ev if e.get("ph") == "X"), key=lambda e: e["ts"])
# split into sweeps: a worker's step number drops -> next sweep
sweep_of = {}
cur = collections.defaultdict(int); last = {}
sweeps = collections.defaultdict(list)
for e in xs:
    w = (e["pid"], e["tid"]); st = e["args"]["step"]
    if w in last and st < last[w]: cur[w] += 1
    last[w] = st
    sweeps[cur[w]].append((w, e))
rows = []
prev_end = None
for s in sorted(sweeps):
    comp = [(w, e) for w, e in sweeps[s] if e["name"] == "compute"]
    if not comp: continue
    a = min(e["ts"] for _, e in comp); b = max(e["ts"] + e["dur"] for _, e in comp)
    per = collections.Counter(w for w, _ in comp)
    durs = [e["dur"] for _, e in comp]
    busiest = max(per.values())
    mean = statistics.mean(durs)
    syncs = sum(e["dur"] for w, e in sweeps[s] if e["name"] == "sync")
    waits = sum(e["dur"] for w, e in sweeps[s] if e["name"] == "wait")
    gap = (a - prev_end) if prev_end is not None else float("nan")
    prev_end = b
    rows.append((s, (b - a) / 1e3, busiest, mean / 1e3, (b - a - busiest * mean) / 1e3, gap / 1e3, syncs / 1e3, waits / 1e3, len(per)))
print("sweep span_ms tiles_busiest mean_tile_ms handover_ms gap_before_ms sync_ms wait_ms workers")
for r in rows: print("%3d %8.2f %3d %8.3f %8.2f %8.2f %8.2f %8.2f %d" % r)
