#!/usr/bin/env bash
# device call 4: the bwd_run_pixels gate again in the production mode (deterministic: off), since
# the iteration benchmark of call 2 (float atomics) did not show the deterministic gate's gain.
. .data/pre.sh
PATH=$B:$PATH timeout 215 bash bench/lab-gates.sh $B $OUT 7000 3 bwd-run-pixels-float > $OUT/gates4.txt 2>&1
cat $OUT/gates4.txt
