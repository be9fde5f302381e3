#!/usr/bin/python3
"""Plots a `tilepipe sweep` CSV: time against tile height per scheme, the measurement as points
(median, with min-max bars) and the model as lines, the model's choice marked, like the seeds'
figures (seed 000 Fig. 7, seed 002 Figs. 18-19).

usage: plot_sweep.py SWEEP.csv OUT.png [--title TEXT] [--format png|svg|pdf]

--format: the image format whatever OUT's name (default: from OUT's extension, else png)."""
import argparse
import csv
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("png")
    p.add_argument("--title", default="tilepipe sweep")
    p.add_argument("--format", choices=["png", "svg", "pdf"], default=None)
    a = p.parse_args()
    with open(a.csv) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("plot_sweep.py: no rows in " + a.csv, file=sys.stderr)
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    schemes = []
    for r in rows:
        s = (r["schedule"], r["grouping"])
        if s not in schemes:
            schemes.append(s)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, s in enumerate(schemes):
        c = colors[i % len(colors)]
        pts = sorted((int(r["tile_height"]), r) for r in rows
                     if (r["schedule"], r["grouping"]) == s and r["swept"] == "1")
        if not pts:
            continue
        hs = [h for h, _ in pts]
        meas = [float(r["measured_s"]) for _, r in pts]
        lo = [m - float(r["measured_min_s"]) for m, (_, r) in zip(meas, pts)]
        hi = [float(r["measured_max_s"]) - m for m, (_, r) in zip(meas, pts)]
        pred = [float(r["predicted_s"]) for _, r in pts]
        label = f"{s[0]} + {s[1]}"
        ax.errorbar(hs, meas, yerr=[lo, hi], fmt="o", color=c, capsize=2,
                    label=f"{label} (measured)")
        ax.plot(hs, pred, "-", color=c, label=f"{label} (model)")
    for r in rows:
        if r["chosen"] == "1":
            ax.plot([int(r["tile_height"])], [float(r["measured_s"])], marker="*", markersize=16,
                    color="k", linestyle="none",
                    label=f"model's choice: {r['schedule']} + {r['grouping']}, "
                          f"height {r['tile_height']}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tile height z")
    ax.set_ylabel("completion time (s)")
    ax.set_title(a.title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fmt = a.format
    if fmt is None:
        ext = a.png.rsplit(".", 1)[-1].lower() if "." in a.png else ""
        fmt = ext if ext in ("png", "svg", "pdf") else "png"
    fig.savefig(a.png, dpi=110, format=fmt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
