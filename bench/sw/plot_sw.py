#!/usr/bin/env python3
"""GCUPS per configuration of one bench/sw run (its sw_bench.json), the model's beside them.

    python3 bench/sw/plot_sw.py bench/sw/results/<run> [-o FILE]

One panel per pair (protein, DNA): a bar per configuration at its median GCUPS with the
min-max of its rounds as an error bar, and for the tilepipe configurations the model's GCUPS
(query x target / the model's seconds) as a black diamond. Writes <run>/sw_gcups.png unless -o
says otherwise. Needs matplotlib (Debian's python3-matplotlib, which `make deps` installs); the
benchmark's own virtual environment does not have it, so run_sw_bench.py calls this script with
the system's python3.
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a bench/sw/results/<run> folder (holding sw_bench.json)")
    ap.add_argument("-o", "--output", help="the PNG to write (default <run>/sw_gcups.png)")
    args = ap.parse_args()
    path = os.path.join(args.run, "sw_bench.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_sw.py: cannot read {path}: {e}", file=sys.stderr)
        return 2
    records = [r for r in data.get("records", []) if "config" in r and "gcups" in r]
    pairs = [w for w in ("protein", "dna") if any(r["workload"] == w for r in records)]
    if not pairs:
        print(f"plot_sw.py: {path} has no timed configurations", file=sys.stderr)
        return 2
    out = args.output or os.path.join(args.run, "sw_gcups.png")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(pairs), figsize=(6.2 * len(pairs), 4.2), squeeze=False)
    for ax, work in zip(axes[0], pairs):
        recs = [r for r in records if r["workload"] == work]
        names = [r["config"] for r in recs]
        y = list(range(len(recs)))[::-1]
        gcups = [r["gcups"] for r in recs]
        lo = [r["gcups"] - r.get("gcups_min", r["gcups"]) for r in recs]
        hi = [r.get("gcups_max", r["gcups"]) - r["gcups"] for r in recs]
        colors = ["#4c72b0" if n.startswith("tilepipe") else
                  "#999999" if n.startswith("two") else "#dd8452" for n in names]
        ax.barh(y, gcups, xerr=[lo, hi], color=colors, capsize=3, label="measured (median, min-max)")
        cells = recs[0]["length"] ** 2
        model = [(yy, cells / r["predicted_s"] / 1e9) for yy, r in zip(y, recs)
                 if r.get("predicted_s")]
        if model:
            ax.plot([m[1] for m in model], [m[0] for m in model], "D", color="black",
                    label="model")
        for yy, g in zip(y, gcups):  # the median inside its bar, clear of the bars' ends
            ax.text(0.01 * max(gcups), yy, f"{g:.1f}", va="center", fontsize=8, color="white")
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.set_xlabel("GCUPS (query x target / s)")
        ax.set_title(f"{work} {recs[0]['length']} x {recs[0]['length']}")
        ax.set_xlim(0, max(max(gcups) + max(hi), max((m[1] for m in model), default=0)) * 1.15)
        ax.legend(loc="lower right", fontsize=8)
    meta = data.get("meta", {})
    fig.suptitle(f"tilepipe align against parasail ({os.path.basename(os.path.normpath(args.run))}"
                 f"{', ' + meta['cpu'] if meta.get('cpu') else ''})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
