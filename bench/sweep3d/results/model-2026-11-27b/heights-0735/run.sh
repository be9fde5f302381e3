#!/bin/bash
TP=$1; OUT=$2
"$TP" sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=0 \
  --nodes 2 --cpus 1 --tile-heights 2,8,32,128 --schemes overlap+hyperplane --repeat 3 \
  --sync block --json --quiet --save-machine "$OUT/machine-small-2x1-paired0.json" > "$OUT/sweep-small-2x1-paired0.json"
"$TP" sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=1 \
  --nodes 1 --cpus 2 --tile-heights 2,8,32,128 --schemes overlap+hyperplane --repeat 3 \
  --sync block --json --quiet --save-machine "$OUT/machine-small-1x2-paired1.json" > "$OUT/sweep-small-1x2-paired1.json"
