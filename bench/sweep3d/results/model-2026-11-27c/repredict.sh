#!/bin/bash
# usage: repredict.sh TILEPIPE DIR...   each DIR's sweeps re-predicted from their own machine files
# (the runs go with --repeat 1; only the predictions are used): DIR/repredicted-NxC-pairedP.json
TP=$1; shift
for D in "$@"; do
  for NC in 2x1 1x2; do N=${NC%x*}; C=${NC#*x}
    for P in 0 1; do
      "$TP" sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=$P \
        --nodes $N --cpus $C --tile-heights 128,256 --schemes overlap+hyperplane --repeat 1 \
        --sync block --json --quiet --machine "$D/machine-$NC-paired$P.json" \
        > "$D/repredicted-$NC-paired$P.json" || echo "FAILED $D $NC $P"
    done
  done
done
