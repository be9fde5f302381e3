#!/usr/bin/env bash
# Progress benchmark: how much of a transfer moves while both ranks compute without calling the
# communication library, for tilepipe (shm, and over Open MPI) and raw MPI (Open MPI vader and
# TCP, MPICH with and without its asynchronous progress thread). Prints a markdown table of the
# hidden share per message size (median of the rounds) and keeps the JSON of every run.
#
# usage: bench/progress/run_progress_bench.sh [ROUNDS]   (env: BUILD, OUT, REPEATS, LO, HI)
# Each configuration runs ROUNDS times (default 3), interleaved. Ranks are pinned to cores 0, 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
out=${OUT:-$build/bench/progress/results}
repeats=${REPEATS:-15}
lo=${LO:-1024}
hi=${HI:-4194304}
rounds=${1:-3}

mkdir -p "$out"
rm -f "$out"/*.json "$out"/commands.txt
cmake --build "$build" --target tp_progress >/dev/null
mpicc.openmpi -O2 -o "$out/mpi_progress.openmpi" "$root/bench/progress/mpi_progress.c"
mpicc.mpich -O2 -o "$out/mpi_progress.mpich" "$root/bench/progress/mpi_progress.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tp="$build/bench/progress/tp_progress"
ompi=(mpirun.openmpi -n 2 --bind-to core --map-by core)
ob1=(--mca pml ob1 --mca btl self,vader)
mpich=(mpiexec.mpich -n 2 -bind-to core)
args="$lo $hi $repeats"

declare -A cmds
cmds[tilepipe_shm]="taskset -c 0,1 $tp $args poll"
cmds[tilepipe_over_openmpi]="${ompi[*]} ${ob1[*]} $tp $args poll"
cmds[openmpi_vader]="${ompi[*]} ${ob1[*]} $out/mpi_progress.openmpi $args"
cmds[openmpi_tcp]="${ompi[*]} --mca pml ob1 --mca btl self,tcp $out/mpi_progress.openmpi $args"
cmds[mpich]="${mpich[*]} $out/mpi_progress.mpich $args"
cmds[mpich_async_progress]="env MPIR_CVAR_ASYNC_PROGRESS=1 ${mpich[*]} $out/mpi_progress.mpich $args"

order=(tilepipe_shm tilepipe_over_openmpi openmpi_vader openmpi_tcp mpich mpich_async_progress)
for name in "${order[@]}"; do echo "$name: ${cmds[$name]}" >>"$out/commands.txt"; done
for ((r = 1; r <= rounds; ++r)); do
  for name in "${order[@]}"; do
    echo "round $r/$rounds: $name" >&2
    ${cmds[$name]} >"$out/$name.$r.json"
  done
done
{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores), $(uname -sr)"
  echo "git: $(git -C "$root" rev-parse --short HEAD), rounds: $rounds, repeats: $repeats," \
    "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  /usr/bin/python3 - "$out" "${order[@]}" <<'PY'
import json, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
import glob
rows = {}
for name in names:
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{name}.*.json"))]
    by_size = {}
    for run in runs:
        for e in run:
            by_size.setdefault(e["bytes"], []).append(e)
    rows[name] = by_size
sizes = sorted({b for r in rows.values() for b in r})
def label(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
print("Hidden share of the transfer while both ranks compute (1 - wait after compute / transfer "
      "alone; median of the rounds), and the transfer alone in us:")
print()
print("| configuration | " + " | ".join(label(b) for b in sizes) + " |")
print("|---|" + "---:|" * len(sizes))
for name in names:
    cells = []
    for b in sizes:
        es = rows[name].get(b, [])
        if not es:
            cells.append("-")
            continue
        h = statistics.median(e["hidden"] for e in es)
        t = statistics.median(e["transfer_us"] for e in es)
        cells.append(f"{h:.2f} ({t:.1f})")
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
} | tee "$out/table.md"
