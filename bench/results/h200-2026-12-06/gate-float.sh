#!/usr/bin/env bash
# Session 19, the call after call 1 (whose own gate step did not fire: it looked for chain-compare's
# `trainings:` line in train.txt, where the script did not write it then): splatsweep gates
# bwd_state shared -> global in float mode, 7,000 iterations, 3 pairs, default rules (the spec is
# gate-bwd-chain.yaml's with the arms changed, i.e. sweeps/gate-bwd-state-global.yaml's).
. .data/pre.sh; sed -e 's/^  off: .*/  off: {bwd_state: shared}/' -e 's/^  on: .*/  on: {bwd_state: global}/' -e 's/^name: .*/name: bwd-state/' -e 's/^description: .*/description: "per-splat backward: run states read from the forward buffer (bwd_state: global)"/' sweeps/gate-bwd-chain.yaml > sweeps/gate-bwd-state.yaml; PATH=$B:$PATH timeout 560 bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-state 2>&1; echo "at $SECONDS s"
