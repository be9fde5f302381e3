#!/bin/bash
# usage: both.sh TILEPIPE DIR   run.sh into DIR/w2, then repredict_wave3d.sh into DIR
TP=$1; D=$2
"$D/run.sh" "$TP" "$D/w2" 2x1 1x2
"$D/repredict_wave3d.sh" "$TP" "$D"
