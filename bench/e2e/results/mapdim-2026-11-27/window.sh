source /tmp/quiet.sh
quiet_begin
cd /work/main
T=build/release/apps/tilepipe/tilepipe
D=build/release/bench/recurrence/recurrence_door
for r in 1 2 3 4 5 6 7; do
 for m in 1 2; do echo "wave2d 8192x8192 2x1 tile256 map$m $($T run --kernel wave2d --size 8192x8192 --nodes 2 --tile 256 --map-dim $m --json | python3 -c "import json,sys; print(json.load(sys.stdin)['seconds'])")"; done
 for m in 1 2; do echo "wave2d 8192x8192 1x2 tile256 map$m $($T run --kernel wave2d --size 8192x8192 --cpus 2 --tile 256 --map-dim $m --json | python3 -c "import json,sys; print(json.load(sys.stdin)['seconds'])")"; done
 for m in 2 3; do echo "wave3d 384^3 2x1 tile32 map$m $($T run --kernel wave3d --size 384x384x384 --nodes 2 --tile 32 --map-dim $m --json | python3 -c "import json,sys; print(json.load(sys.stdin)['seconds'])")"; done
 for m in 0 2; do echo "recurrence 8000 2x1 tile256 map$m $($D 8000 2 1 1 256 $m | python3 -c "import json,sys; print(json.load(sys.stdin)['seconds'])")"; done
done
quiet_end
