#!/usr/bin/env python3
"""Checks a `tilepipe run --trace` file of a 2-rank pipeline for one time base: rank 1's first
tile needs rank 0's first face, so it cannot start before rank 0's first tile ends.
usage: check_trace_order.py TRACE.json"""
import json
import sys

events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
first = {}
for rank in (0, 1):
    spans = [e for e in events if e.get("ph") == "X" and e.get("pid") == rank
             and e.get("name") == "compute"]
    if not spans:
        sys.exit(f"no compute span of rank {rank}")
    first[rank] = min(spans, key=lambda e: e["ts"])
end0 = first[0]["ts"] + first[0]["dur"]
start1 = first[1]["ts"]
if start1 < end0:
    sys.exit(f"rank 1 computes at {start1} us, before rank 0's first tile ends at {end0} us")
print(f"ok: rank 0's first tile ends at {end0:.1f} us, rank 1 starts at {start1:.1f} us")
