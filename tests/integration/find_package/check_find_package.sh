#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs the consumer.
set -euo pipefail
build_dir=$1 source_dir=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source_dir" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
out=$("$work/build/consumer")
echo "$out"
[ "$out" = "steps 520" ]
# The installed executable finds its installed plotting tool (share/tilepipe/plot_sweep.py).
for tool in plot_sweep.py plot_trace.py plot_model.py plot_pingpong.py; do
  [ -x "$work/prefix/share/tilepipe/$tool" ] || { echo "not installed: share/tilepipe/$tool"; exit 1; }
done
"$work/prefix/bin/tilepipe" sweep --kernel wave3d --size 4x4x256 --nodes 1 --cpus 1 \
  --tile-heights 16:32 --schemes overlap+hyperplane --repeat 1 --quiet --plot "$work/sweep.png" > /dev/null
[ -s "$work/sweep.png" ] || { echo "the installed tilepipe sweep --plot wrote no plot"; exit 1; }
echo "installed sweep --plot: ok"
