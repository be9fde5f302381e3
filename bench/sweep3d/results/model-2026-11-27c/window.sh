#!/bin/bash
# usage: window.sh LOGPREFIX cmd...   (runs cmd in a quiet window: bench lock held, no compiler,
# ninja or ctest for 15 s; records start/end, load and the busiest processes before and after)
LOG=$1; shift
exec 9>/tmp/bench.lock; flock 9
touch /tmp/quiet-hold
trap 'rm -f /tmp/quiet-hold' EXIT
busy() { pgrep -x cc1plus >/dev/null || pgrep -x ninja >/dev/null || pgrep -x ctest >/dev/null; }
while true; do while busy; do sleep 10; done; sleep 15; busy || break; done
date -u > $LOG.start.txt; uptime > $LOG.uptime-before.txt
ps -eo pid,stat,pcpu,etime,comm --sort=-pcpu | head -6 > $LOG.ps-before.txt
"$@" > $LOG.log 2>&1; echo "rc=$?" >> $LOG.log
uptime > $LOG.uptime-after.txt; date -u >> $LOG.start.txt
ps -eo pid,stat,pcpu,etime,comm --sort=-pcpu | head -6 > $LOG.ps-after.txt
rm -f /tmp/quiet-hold
flock -u 9
