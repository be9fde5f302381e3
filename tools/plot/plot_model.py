#!/usr/bin/python3
"""Plots predicted time against tile height per scheme from bench/model/seed_curves.py's CSV.

One panel per (seed, space); one line per scheme; the paper's closed form (where it has one) as
dots on top of tilepipe's line; the chosen (optimal) height marked.
usage: /usr/bin/python3 tools/plot/plot_model.py CSV PNG
"""
import csv
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_model.py seed_curves.csv out.png")
    panels = OrderedDict()
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            key = "seed %s: %s" % (r["seed"], r["space"])
            panels.setdefault(key, OrderedDict()).setdefault(r["scheme"], []).append(r)
    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    for ax, (title, schemes) in zip(axes.flat, panels.items()):
        for scheme, pts in schemes.items():
            z = [int(p["tile_height"]) for p in pts]
            t = [float(p["predicted_s"]) for p in pts]
            (line,) = ax.plot(z, t, label=scheme)
            paper = [(int(p["tile_height"]), float(p["paper_s"])) for p in pts if p["paper_s"]]
            if paper:
                ax.plot([p[0] for p in paper[::8]], [p[1] for p in paper[::8]], "o", ms=3,
                        color=line.get_color(), label=scheme + " (paper's formula)")
            for p in pts:
                if p["chosen"] == "1":
                    ax.plot(int(p["tile_height"]), float(p["predicted_s"]), "*", ms=11,
                            color=line.get_color())
        ax.set_xscale("log", base=2)
        ax.set_title(title)
        ax.set_xlabel("tile height z")
        ax.set_ylabel("predicted time (s)")
        lo = min(float(p["predicted_s"]) for pts in schemes.values() for p in pts)
        ax.set_ylim(lo * 0.9, lo * 3)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
