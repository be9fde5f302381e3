#!/usr/bin/python3
"""Turns a `tilepipe run --trace FILE` or `tilepipe simulate --trace FILE` Chrome trace into a PNG
time chart, one row per rank and CPU thread, like the seeds' schedule figures: compute, send
start, waiting and synchronization.

usage: plot_trace.py TRACE.json OUT.png [--from-ms A] [--to-ms B]
Reads only the trace file (docs/cli.md documents its format); needs python3-matplotlib."""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"compute": "#3b75af", "send": "#ef8636", "wait": "#c53a32", "sync": "#9a9a9a"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--from-ms", type=float, default=None, help="start of the window shown")
    parser.add_argument("--to-ms", type=float, default=None, help="end of the window shown")
    args = parser.parse_args()
    try:
        with open(args.trace) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_trace: error: cannot read trace '{args.trace}': {e}", file=sys.stderr)
        return 2
    spans = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    if not spans:
        print(f"plot_trace: error: '{args.trace}' has no spans", file=sys.stderr)
        return 2
    t0 = min(e["ts"] for e in spans)
    tracks = sorted({(e["pid"], e["tid"]) for e in spans})
    row = {t: i for i, t in enumerate(tracks)}
    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.5 * len(tracks)))
    for name, colour in COLOURS.items():
        bars = {}
        for e in spans:
            if e["name"] != name:
                continue
            start = (e["ts"] - t0) / 1e3
            bars.setdefault(row[(e["pid"], e["tid"])], []).append((start, e["dur"] / 1e3))
        for r, segs in bars.items():
            ax.broken_barh(segs, (r - 0.4, 0.8), facecolors=colour, label=name if r == min(bars) else None)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([f"rank {p} cpu {t}" for p, t in tracks])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    if args.from_ms is not None or args.to_ms is not None:
        ax.set_xlim(args.from_ms, args.to_ms)
    title = trace.get("otherData", {}).get("title", args.trace)
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), loc="upper right", ncol=4)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
