#!/bin/sh
# tilepipe under srun on a one-host Slurm that this script starts and stops itself (docs/slurm.md):
# munged, slurmctld and slurmd with their own key, sockets, ports and state in a temporary
# directory. Checks that `srun -n 2 --mpi=pmix --cpus-per-task=1 tilepipe run ... --verify` joins
# one job of 2 ranks with 1 CPU each (the affinity mask srun sets) and verifies bit for bit, and
# that `srun -n 2` without MPI wire-up is refused with one line, exit 2, instead of 2 runs alone.
# Exits 77 (skipped) with a line saying why where Slurm is not installed or its daemons cannot
# start here. Every daemon start and srun is bounded; the daemons and the directory are removed on
# exit.
# Usage: slurm_smoke.sh TILEPIPE
set -u
tilepipe=$1
skip() {
  echo "SKIPPED: $*"
  exit 77
}
for tool in munged munge slurmctld slurmd srun sinfo python3; do
  command -v "$tool" > /dev/null 2>&1 ||
    skip "$tool is not installed (Debian: slurm-wlm and munge, make deps)"
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/tp-slurm-XXXXXX") || exit 1
stop() {
  cd / || return
  # Jobs still finishing first (at most 10 s), so that their slurmstepd reports and exits.
  if [ -n "${SLURM_CONF:-}" ]; then
    for _ in $(seq 1 20); do
      [ -z "$(timeout 5 squeue -h 2> /dev/null)" ] && break
      sleep 0.5
    done
  fi
  for pid_file in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -s "$pid_file" ] && kill "$(cat "$pid_file" 2> /dev/null)" 2> /dev/null
  done
  # Give them a moment to exit before their directory goes.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    alive=0
    for pid_file in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
      [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file" 2> /dev/null)" 2> /dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.5
  done
  # Whatever is left working in the directory (a slurmstepd whose slurmd went, a task) is ours.
  for proc in /proc/[0-9]*; do
    case "$(readlink "$proc/cwd" 2> /dev/null)" in
      "$dir" | "$dir"/* | "$dir (deleted)") kill -9 "${proc#/proc/}" 2> /dev/null ;;
    esac
  done
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start job steps (run as root, as CI does)"
host=$(hostname -s)
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
set -- $ports
mkdir -p "$dir/state" "$dir/spool" "$dir/munge" && chmod 700 "$dir/munge"
head -c 1024 /dev/urandom > "$dir/munge/key" && chmod 400 "$dir/munge/key"
timeout 10 munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" ||
  skip "munged does not start here: $(tail -n 1 "$dir/munged.log" 2> /dev/null)"

cpus=$(nproc)
touch "$dir/plugstack.conf"
cat > "$dir/slurm.conf" << EOF
ClusterName=tilepipe-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$dir/slurm.conf"
timeout 20 slurmctld -f "$SLURM_CONF" ||
  skip "slurmctld does not start here: $(tail -n 1 "$dir/slurmctld.log" 2> /dev/null)"
timeout 20 slurmd -f "$SLURM_CONF" ||
  skip "slurmd does not start here: $(tail -n 1 "$dir/slurmd.log" 2> /dev/null)"
idle=no
for _ in $(seq 1 40); do
  if timeout 5 sinfo -h -o %t 2> /dev/null | grep -q idle; then
    idle=yes
    break
  fi
  sleep 0.5
done
[ $idle = yes ] || skip "the Slurm node did not become idle in 20 s: $(tail -n 1 "$dir/slurmd.log")"
timeout 30 srun --mpi=list 2>&1 | grep -q pmix || skip "this Slurm has no pmix MPI plugin"
cd "$dir" || exit 1

fail() {
  echo "FAILED: $*"
  exit 1
}
args="run --kernel wave3d --size 12x10x300 --tile 32 --sync block --verify --json"
out=$(timeout 60 srun -n 2 --cpus-per-task=1 --cpu-bind=cores --mpi=pmix "$tilepipe" $args 2>&1) ||
  fail "srun --mpi=pmix: $out"
printf '%s\n' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["nodes"] == 2 and j["cpus"] == 1 and j["verified"] is True, j
' || fail "srun --mpi=pmix did not run one verified job of 2 ranks x 1 CPU: $out"

timeout 60 srun -n 2 --mpi=none "$tilepipe" run --kernel wave2d --size 64x64 > "$dir/none.out" \
  2> "$dir/none.err"
rc=$?
[ $rc = 2 ] || fail "srun --mpi=none: exit $rc, not 2: $(cat "$dir/none.out" "$dir/none.err")"
[ -s "$dir/none.out" ] && fail "srun --mpi=none ran: $(cat "$dir/none.out")"
grep -q '^tilepipe: error: srun started 2 tasks without MPI wire-up, so each would run alone: use srun --mpi=pmix' \
  "$dir/none.err" || fail "srun --mpi=none: $(cat "$dir/none.err")"
echo "srun: 2 ranks x 1 CPU verified; srun without MPI wire-up refused"
