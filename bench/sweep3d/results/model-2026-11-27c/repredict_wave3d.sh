#!/bin/bash
# usage: repredict_wave3d.sh TILEPIPE OUTDIR   wave3d 12x12x262144's short-run sweeps re-predicted from
# bench/model/results/short-2026-11-27b's machine files (the runs go with --repeat 1: predictions only)
TP=$1; OUT=$2; SRC=$(git rev-parse --show-toplevel)/bench/model/results/short-2026-11-27b
for k in 0 1 2; do
  "$TP" sweep --kernel wave3d --size 12x12x262144 --nodes 2 --cpus 1 --tile-heights 2048:32768 \
    --schemes all --repeat 1 --json --quiet --machine "$SRC/machine-$k.json" > "$OUT/repredicted-wave3d-$k.json" || echo "FAILED $k"
done
