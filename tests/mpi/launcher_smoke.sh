#!/bin/sh
# Smoke run of a tilepipe build under the launcher of the MPI it was built against, and under the
# other MPI's launcher (which must be refused with one clear line, not run every rank alone).
#
#   launcher_smoke.sh TILEPIPE LAUNCHER OTHER_LAUNCHER
# e.g. launcher_smoke.sh build/mpich/apps/tilepipe/tilepipe mpiexec.mpich mpirun.openmpi
# Exit 0 when every check holds; otherwise the first failing check is named on stderr.
set -u
tp=$1
launcher=$2
other=$3
flags_for() {
  case $("$1" --version 2>&1) in
    *"Open MPI"*|*OpenRTE*) echo "--oversubscribe --allow-run-as-root" ;;
    *) echo "" ;;
  esac
}
fail() {
  echo "launcher_smoke: $*" >&2
  exit 1
}
args="run --kernel wave3d --size 12x12x4099 --tile 512 --sync block --verify --json"
for transport in auto mpi; do
  # shellcheck disable=SC2046,SC2086
  out=$("$launcher" -n 2 $(flags_for "$launcher") "$tp" $args --transport $transport) ||
    fail "$launcher -n 2 tilepipe $args --transport $transport: exit $?"
  echo "$out" | grep -q '"nodes": 2' || fail "--transport $transport: not 2 nodes: $out"
  echo "$out" | grep -q '"verified": true' || fail "--transport $transport: not verified: $out"
done
echo "launcher_smoke: $launcher runs 2 ranks of $tp (shm and MPI transports, verified)"
# shellcheck disable=SC2046,SC2086
err=$("$other" -n 2 $(flags_for "$other") "$tp" $args 2>&1 >/dev/null)
status=$?
[ "$status" -ne 0 ] || fail "$other ran a build for another MPI"
echo "$err" | grep -q "start tilepipe with the launcher of the MPI it was built against" ||
  fail "$other: no clear refusal: $err"
echo "launcher_smoke: $other is refused: $(echo "$err" | grep -m1 'tilepipe: error')"
