#!/bin/bash
# usage: run.sh TILEPIPE OUTDIR NC...   the 8 points + the model's choice, --repeat 5, per N x C and paired
TP=$1; OUT=$2; shift 2
for NC in "$@"; do
  N=${NC%x*}; C=${NC#*x}
  for P in 0 1; do
    "$TP" sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=$P \
      --nodes $N --cpus $C --tile-heights 128,256 --schemes overlap+hyperplane --repeat 5 \
      --sync block --json --quiet --save-machine "$OUT/machine-$NC-paired$P.json" \
      > "$OUT/sweep-$NC-paired$P.json" || echo "FAILED $NC $P"
    date -u +"%T $NC paired$P done"
  done
done
