#!/usr/bin/env bash
# One run of the communication benchmarks on this machine: physical limits, tilepipe shm
# (poll/hybrid/block, cma/copy rendezvous), tilepipe over MPI, raw MPI_Send/MPI_Recv with
# Open MPI (vader with and without CMA, TCP loopback) and MPICH (posix shm; UCX with CMA), then a
# markdown table and a PNG plot (tools/plot/plot_pingpong.py, Debian's /usr/bin/python3).
#
# usage: bench/comm/run_comm_bench.sh [ROUNDS]   (env: BUILD, OUT, ITERS, SIZES, NICE, PAIRED)
# Every configuration runs ROUNDS times (default 3), interleaved, so that background load on a
# shared machine spreads over all rows; the table reports the median of the rounds' medians and
# the extreme batch minima/maxima. Ranks are pinned to cores 0 and 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
out=${OUT:-$build/bench/comm/results}
iters=${ITERS:-4000}
sizes=${SIZES:-0:4MiB}
rounds=${1:-3}
hi=4194304
# NICE="nice -n -15" (as root) keeps other users' compilers from preempting the ranks mid-batch.
read -r -a nice <<<"${NICE:-}"

mkdir -p "$out"
rm -f "$out"/*.json "$out"/commands.txt
cmake --build "$build" --target tilepipe comm_limits >/dev/null
mpicc.openmpi -O2 -o "$out/mpi_pingpong.openmpi" "$root/bench/comm/mpi_pingpong.c"
mpicc.mpich -O2 -o "$out/mpi_pingpong.mpich" "$root/bench/comm/mpi_pingpong.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tp="$build/apps/tilepipe/tilepipe"
limits="$build/bench/comm/comm_limits"
ompi=(mpirun.openmpi -n 2 --bind-to core --map-by core)
ob1=(--mca pml ob1 --mca btl self,vader)
mpich=(mpiexec.mpich -n 2 -bind-to core)

declare -A cmds
cmds[limit_cacheline]="$limits cacheline --iters 2000"
cmds[limit_onecopy]="$limits onecopy --sizes 1024:$hi --iters 400"
cmds[tilepipe_shm_poll]="$tp pingpong --ranks 2 --sync poll --buffers world --sizes $sizes --iters $iters --json"
cmds[tilepipe_shm_poll_user]="$tp pingpong --ranks 2 --sync poll --buffers user --sizes $sizes --iters $iters --json"
cmds[tilepipe_shm_hybrid]="$tp pingpong --ranks 2 --sync hybrid --sizes $sizes --iters $iters --json"
cmds[tilepipe_shm_block]="$tp pingpong --ranks 2 --sync block --sizes $sizes --iters 1000 --json"
cmds[tilepipe_shm_poll_cma]="$tp pingpong --ranks 2 --sync poll --buffers user --rendezvous cma --sizes 32KiB:$hi --iters $iters --json"
cmds[tilepipe_shm_poll_copy]="$tp pingpong --ranks 2 --sync poll --buffers user --rendezvous copy --sizes 32KiB:$hi --iters $iters --json"
cmds[tilepipe_shm_poll_eager64k]="$tp pingpong --ranks 2 --sync poll --eager-max 64KiB --sizes 1KiB:64KiB --iters $iters --json"
cmds[tilepipe_mpi_openmpi]="${ompi[*]} ${ob1[*]} $tp pingpong --transport mpi --sync poll --sizes $sizes --iters $iters --json"
cmds[openmpi_vader_cma]="${ompi[*]} ${ob1[*]} --mca btl_vader_single_copy_mechanism cma $out/mpi_pingpong.openmpi 0 $hi $iters"
cmds[openmpi_vader_nocma]="${ompi[*]} ${ob1[*]} --mca btl_vader_single_copy_mechanism none $out/mpi_pingpong.openmpi 0 $hi $iters"
cmds[openmpi_tcp_loopback]="${ompi[*]} --mca pml ob1 --mca btl self,tcp $out/mpi_pingpong.openmpi 0 $hi $iters"
cmds[mpich_posix_shm]="${mpich[*]} $out/mpi_pingpong.mpich 0 $hi $iters"
cmds[mpich_ucx_cma]="env MPIR_CVAR_NOLOCAL=1 UCX_TLS=self,sysv,posix,cma ${mpich[*]} $out/mpi_pingpong.mpich 0 $hi $iters"

# The latency target's own reference: messages and a raw cache-line ring ping-pong timed batch
# for batch between the same two ranks (pingpong --cacheline), PAIRED runs per round: the VM's
# cross-core latency drifts between rows, a back-to-back pair of batches shares one moment.
paired_runs=${PAIRED:-3}
cmds[tilepipe_shm_poll_paired]="$tp pingpong --ranks 2 --sync poll --sizes 8 --iters $iters --cacheline --json"

order=(limit_cacheline limit_onecopy tilepipe_shm_poll tilepipe_shm_poll_user tilepipe_shm_hybrid tilepipe_shm_block
       tilepipe_shm_poll_cma tilepipe_shm_poll_copy tilepipe_shm_poll_eager64k tilepipe_mpi_openmpi openmpi_vader_cma
       openmpi_vader_nocma openmpi_tcp_loopback mpich_posix_shm mpich_ucx_cma)
for name in "${order[@]}"; do echo "$name: ${cmds[$name]}" >>"$out/commands.txt"; done
echo "tilepipe_shm_poll_paired ($paired_runs per round): ${cmds[tilepipe_shm_poll_paired]}" >>"$out/commands.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= rounds; ++r)); do
  for name in "${order[@]}"; do
    echo "round $r/$rounds: $name" >&2
    ${nice[@]} ${cmds[$name]} >"$out/$name.$r.json"
  done
  for ((k = 1; k <= paired_runs; ++k)); do
    echo "round $r/$rounds: tilepipe_shm_poll_paired $k/$paired_runs" >&2
    ${nice[@]} ${cmds[tilepipe_shm_poll_paired]} >"$out/tilepipe_shm_poll_paired.$r-$k.json"
  done
done
{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores), $(uname -sr)"
  echo "git: $(git -C "$root" rev-parse --short HEAD), build: $build, rounds: $rounds, iters: $iters, nice: ${NICE:-none}"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/context.txt"
/usr/bin/python3 "$root/tools/plot/plot_pingpong.py" "$out" --markdown "$out/table.md" \
  --png "$out/pingpong.png"
echo "results: $out/table.md $out/pingpong.png" >&2
