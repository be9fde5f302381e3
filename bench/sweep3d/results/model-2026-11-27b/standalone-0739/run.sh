#!/bin/bash
TP=$1
for r in 1 2 3; do
 for v in "1 2 --cyclic 1" "1 2 " "2 1 --cyclic 1" "2 1 "; do
  set -- $v
  N=$1; C=$2; shift 2
  out=$("$TP" run --kernel sweep3d --size 64x64x1024 --nodes $N --cpus $C "$@" --tile 128 --schedule overlap --grouping hyperplane --sync block --json --param angles=3 --param paired=1 2>&1)
  echo "$N x $C [$*] $(echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.3f s compute %.3f" % (j["seconds"], j["phases"]["compute_s"]), {k:v for k,v in j["phases"].items()})')"
 done
done
