#!/bin/bash
# usage: repredict_merged.sh TILEPIPE MAIN_TILEPIPE DIR   w1's and w2's sweeps re-predicted by the
# merged build into DIR/merged/ (w1-*, w2-*), and wave3d's short runs by both builds
TP=$1; MAIN=$2; D=$3
for W in w1 w2; do
  SRC=$D; [ $W = w2 ] && SRC=$D/w2
  for NC in 2x1 1x2; do N=${NC%x*}; C=${NC#*x}
    for P in 0 1; do
      "$TP" sweep --kernel sweep3d --size 64x64x1024 --param angles=3 --param paired=$P \
        --nodes $N --cpus $C --tile-heights 128,256 --schemes overlap+hyperplane --repeat 1 \
        --sync block --json --quiet --machine "$SRC/machine-$NC-paired$P.json" \
        > "$D/merged/$W-repredicted-$NC-paired$P.json" || echo "FAILED $W $NC $P"
    done
  done
done
mkdir -p /tmp/s3d/wvm/main /tmp/s3d/wvm/s3d
"$D/repredict_wave3d.sh" "$MAIN" /tmp/s3d/wvm/main
"$D/repredict_wave3d.sh" "$TP" /tmp/s3d/wvm/s3d
