#!/bin/bash
# usage: s3dm_ab.sh OUTDIR NC...   before/after interleaved per configuration, --repeat 5
OUT=$1; shift
for NC in "$@"; do
  N=${NC%x*}; C=${NC#*x}
  for P in 0 1; do
    for TAG in before after; do
      /tmp/s3dm_$TAG/tilepipe sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=$P \
        --nodes $N --cpus $C --tile-heights 128,256 --schemes overlap+hyperplane --repeat 5 \
        --sync block --json --quiet --save-machine "$OUT/machine-$TAG-$NC-paired$P.json" \
        > "$OUT/sweep-$TAG-$NC-paired$P.json" || echo "FAILED $TAG $NC $P"
      date -u +"%T $TAG $NC paired$P done"
    done
  done
done
