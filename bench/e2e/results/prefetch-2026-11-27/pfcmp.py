import json, subprocess, statistics, sys
bins = {"before": "/tmp/tp_pf0", "prefetch": "/tmp/tp_pfall"}
cfgs = [("1x1", ["--nodes", "1", "--cpus", "1"]), ("2x1", ["--nodes", "2", "--cpus", "1"]),
        ("1x2", ["--nodes", "1", "--cpus", "2"]), ("2x1 copy", ["--nodes", "2", "--cpus", "1", "--faces", "copy"])]
res = {(c, b): [] for c, _ in cfgs for b in bins}
reps = int(sys.argv[1])
for r in range(reps):
    order = list(bins.items()) if r % 2 == 0 else list(reversed(bins.items()))
    for c, flags in cfgs:
        for b, exe in order:
            out = subprocess.run([exe, "run", "--kernel", "wave3d", "--size", "16x16x262144", "--tile", "16384", "--sweeps", "8", "--json"] + flags, capture_output=True, text=True, check=True).stdout
            res[(c, b)].append(json.loads(out)["seconds"])
for c, _ in cfgs:
    a, p = statistics.median(res[(c, "before")]), statistics.median(res[(c, "prefetch")])
    print(f"{c:10s} before {a:.4f} ({min(res[(c,'before')]):.4f}-{max(res[(c,'before')]):.4f})  prefetch {p:.4f} ({min(res[(c,'prefetch')]):.4f}-{max(res[(c,'prefetch')]):.4f})  before/prefetch {a/p:.3f}")
