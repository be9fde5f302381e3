#!/usr/bin/env bash
# One CLI case: check_cli.sh WANT_RC WANT_STDERR STDOUT_REGEX -- COMMAND...
# WANT_STDERR is compared exactly (empty: no stderr); STDOUT_REGEX is an extended regex that the
# whole stdout must match (empty: stdout must be empty).
set -u
want_rc=$1 want_err=$2 out_re=$3
shift 4
err_file=$(mktemp)
trap 'rm -f "$err_file"' EXIT
out=$("$@" 2>"$err_file")
rc=$?
err=$(cat "$err_file")
ok=1
if [[ $rc != "$want_rc" ]]; then echo "exit code $rc, expected $want_rc"; ok=0; fi
if [[ $err != "$want_err" ]]; then printf 'stderr:   %s\nexpected: %s\n' "$err" "$want_err"; ok=0; fi
if [[ -z $out_re && -n $out ]] || [[ -n $out_re && ! $out =~ ^${out_re}$ ]]; then
  printf 'stdout:\n%s\ndoes not match: %s\n' "$out" "$out_re"
  ok=0
fi
[[ $ok == 1 ]]
