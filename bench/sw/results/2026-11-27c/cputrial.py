#!/usr/bin/env python3
"""Interleaved trials reporting JSON seconds and the child's CPU time: cputrial.py ROUNDS PAIR name=EXE:args ..."""
import json, subprocess, sys, statistics, resource
rounds = int(sys.argv[1]); pair = sys.argv[2]
mat = {"protein": "blosum62", "dna": "ednafull"}[pair]
cfgs = []
for a in sys.argv[3:]:
    name, rest = a.split("=", 1)
    exe, args = rest.split(":", 1)
    cfgs.append((name, exe, args.split()))
wall = {n: [] for n, _, _ in cfgs}; cpu = {n: [] for n, _, _ in cfgs}
print("load before", open("/proc/loadavg").read().strip(), flush=True)
for r in range(rounds):
    order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
    for name, exe, args in order:
        cmd = [exe, "align", f"/tmp/sw2/{pair}_q.fa", f"/tmp/sw2/{pair}_t.fa", "--matrix", mat,
               "--gap-open", "10", "--gap-extend", "1", "--json", "--score-only"] + args
        u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        j = json.loads(out.strip().splitlines()[-1])
        wall[name].append(j["seconds"]); cpu[name].append((u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime))
print("load after", open("/proc/loadavg").read().strip())
b = statistics.median(wall[cfgs[0][0]]); bc = statistics.median(cpu[cfgs[0][0]])
for n, _, _ in cfgs:
    m = statistics.median(wall[n]); c = statistics.median(cpu[n])
    print(f"{n:24s} wall {m*1000:8.2f} ms (min {min(wall[n])*1000:7.2f})  x{b/m:.2f}   cpu {c*1000:7.1f} ms (min {min(cpu[n])*1000:6.1f}) x{c/bc:.3f}")
