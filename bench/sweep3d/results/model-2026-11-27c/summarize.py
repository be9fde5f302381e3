#!/usr/bin/env python3
"""The table of this directory's sweeps: per N x C and paired, each point's median [min, max],
prediction, error, the run's tile over the probe's, and the calibrated tile_spread."""
import json, sys, os
d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
for nc in ("2x1", "1x2"):
    for p in (0, 1):
        f = os.path.join(d, f"sweep-{nc}-paired{p}.json")
        if not os.path.exists(f):
            continue
        s = json.load(open(f))
        m = json.load(open(os.path.join(d, f"machine-{nc}-paired{p}.json")))
        sweeps = 8 if p == 0 else 4
        cells = []
        for r in s["results"]:
            cells.append("%d%s (%.0f us): %.3f s [%.3f, %.3f], %.3f s, %+.1f%%, tile %.2f" % (
                r["tile_height"], " chosen" if r["chosen"] else "", r["tile_work_s"] * 1e6,
                r["measured_s"], r["measured_min_s"], r["measured_max_s"], r["predicted_s"],
                100 * r["error"], r["measured_tile_s"] / sweeps / r["tile_work_s"]))
        print(f"| {nc}, {p} | " + " | ".join(cells) + " | %.3f |" % m["node"].get("tile_spread", 0))
