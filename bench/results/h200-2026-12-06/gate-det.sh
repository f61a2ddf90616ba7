#!/usr/bin/env bash
# Session 19, next call: the same gate with a deterministic base (sweeps/gate-bwd-state-global-det.yaml's
# arms and base), 7,000 iterations, 3 pairs, default rules.
. .data/pre.sh; sed -e 's/^  off: .*/  off: {bwd_state: shared}/' -e 's/^  on: .*/  on: {bwd_state: global}/' -e 's/^name: .*/name: bwd-state-det/' -e 's/^  deterministic: .*/  deterministic: "on"/' -e 's/^description: .*/description: "per-splat backward: run states read from the forward buffer (bwd_state: global), deterministic mode"/' sweeps/gate-bwd-chain.yaml > sweeps/gate-bwd-state-det.yaml; grep -n "deterministic\|arms\|off:\|on:" sweeps/gate-bwd-state-det.yaml | head; PATH=$B:$PATH timeout 560 bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-state-det 2>&1; echo "at $SECONDS s"
