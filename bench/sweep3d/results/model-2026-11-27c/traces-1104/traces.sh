#!/bin/bash
# usage: traces.sh TILEPIPE OUTDIR ROUNDS  -- tilepipe run of the 8 points with --trace, interleaved
TP=$1; OUT=$2; R=${3:-2}
source /work/notes/quiet.sh
quiet_begin; uptime > $OUT/uptime-before.txt
for r in $(seq 1 $R); do
 for NC in 2x1 1x2; do N=${NC%x*}; C=${NC#*x}
  for P in 0 1; do for H in 128 256; do
   tag=$NC-p$P-h$H-r$r
   "$TP" run --kernel sweep3d --size 64x64x1024 --nodes $N --cpus $C --tile $H --schedule overlap --grouping hyperplane --sync block --json --param angles=3 --param paired=$P --trace $OUT/trace-$tag.json > $OUT/run-$tag.json || echo FAIL $tag
  done; done
 done
done
uptime > $OUT/uptime-after.txt; quiet_end
