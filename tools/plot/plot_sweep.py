#!/usr/bin/python3
"""Plots a `tilepipe sweep` CSV: time against tile height per scheme, the measurement as points
(median, with min-max bars) and the model as lines, the model's choice marked, like the seeds'
figures (seed 000 Fig. 7, seed 002 Figs. 18-19).

usage: plot_sweep.py SWEEP.csv OUT.png [--title TEXT] [--format png|svg|pdf]

Made to be read at a glance: each scheme has its own colour, line style and marker; schemes whose
model lines coincide at every height (hyperplane and vertical grouping with one CPU per node) share
one line and say so; the measured points of different schemes sit side by side at each height
instead of on top of each other; the model's choice is a star with its own label; the legend is
below the axes, off the data.

--format: the image format whatever OUT's name (default: from OUT's extension, else png)."""
import argparse
import csv
import sys

STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]


def model_lines(schemes, points):
    """[(label, heights, predictions, scheme indices)]: one line per distinct model curve."""
    lines = []
    for i, s in enumerate(schemes):
        hs = [h for h, _ in points[s]]
        pred = [float(r["predicted_s"]) for _, r in points[s]]
        for line in lines:
            if line[1] == hs and all(abs(a - b) <= 1e-12 + 1e-9 * abs(b)
                                     for a, b in zip(line[2], pred)):
                line[3].append(i)
                break
        else:
            lines.append([None, hs, pred, [i]])
    for line in lines:
        names = [schemes[i] for i in line[3]]
        if len(names) == 1:
            line[0] = f"{names[0][0]} + {names[0][1]} (model)"
        else:
            groupings = " = ".join(n[1] for n in names)
            line[0] = f"{names[0][0]} + {groupings} (model, the same)"
    return lines


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

    schemes = []
    for r in rows:
        s = (r["schedule"], r["grouping"])
        if s not in schemes:
            schemes.append(s)
    points = {s: sorted((int(r["tile_height"]), r) for r in rows
                        if (r["schedule"], r["grouping"]) == s and r["swept"] == "1")
              for s in schemes}
    schemes = [s for s in schemes if points[s]]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    fig, ax = plt.subplots(figsize=(8, 6))
    for label, hs, pred, members in model_lines(schemes, points):
        c = colors[members[0] % len(colors)]
        ls = STYLES[members[0] % len(STYLES)][0]
        ax.plot(hs, pred, linestyle=ls, color=c, linewidth=1.8, label=label, zorder=2)
    # Measured points: side by side at each height (a factor 2 between heights on the log axis,
    # so offsets of a few percent never reach the next height).
    n = len(schemes)
    for i, s in enumerate(schemes):
        c = colors[i % len(colors)]
        marker = STYLES[i % len(STYLES)][1]
        shift = 1.0 + 0.035 * (i - (n - 1) / 2)
        hs = [h * shift for h, _ in points[s]]
        meas = [float(r["measured_s"]) for _, r in points[s]]
        lo = [m - float(r["measured_min_s"]) for m, (_, r) in zip(meas, points[s])]
        hi = [float(r["measured_max_s"]) - m for m, (_, r) in zip(meas, points[s])]
        ax.errorbar(hs, meas, yerr=[lo, hi], fmt=marker, color=c, markersize=5, capsize=2,
                    elinewidth=1, label=f"{s[0]} + {s[1]} (measured: median, min-max)",
                    zorder=3)
    for r in rows:
        if r["chosen"] == "1":
            h = int(r["tile_height"])
            ax.axvline(h, color="0.5", linewidth=0.8, linestyle=(0, (2, 3)), zorder=1)
            ax.plot([h], [float(r["measured_s"])], marker="*", markersize=17, color="k",
                    markerfacecolor="gold", linestyle="none", zorder=4,
                    label=f"model's choice: {r['schedule']} + {r['grouping']}, "
                          f"height {h} (measured)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tile height z (points per tile along the pipelined dimension)")
    ax.set_ylabel("completion time (s)")
    ax.set_title(a.title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7.5, frameon=False)
    rows_of_legend = (len(labels) + 1) // 2
    fig.tight_layout(rect=(0, 0.036 * rows_of_legend + 0.01, 1, 1))
    fmt = a.format
    if fmt is None:
        ext = a.png.rsplit(".", 1)[-1].lower() if "." in a.png else ""
        fmt = ext if ext in ("png", "svg", "pdf") else "png"
    fig.savefig(a.png, dpi=110, format=fmt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
