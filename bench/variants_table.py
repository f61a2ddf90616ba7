#!/usr/bin/env python3
"""variants_table.py: the docs/variants.md table from the stores of bench/lab-gates.sh.

Usage: bench/variants_table.py DB... (one gate per store). For each gate: the per-pair deltas of
the usable pairs (on / off - 1 of train_s), the verdict with its decisive reason, the held-out
PSNR of both arms, the kernel whose GPU time changed most between the arms (mean gpu_ms of the
usable runs) with its share off -> on, and the flagged runs with their reasons."""
import json
import os
import sqlite3
import sys


def gate_row(path):
    db = sqlite3.connect(path)
    (name, verdict, vj) = db.execute("SELECT name, verdict, verdict_json FROM gates").fetchone()
    v = json.loads(vj)
    pairs = db.execute(
        "SELECT p.idx, r.arm, a.id, a.status, a.train_s, a.psnr_db, a.flag_reason FROM pairs p "
        "JOIN runs r ON r.pair_id = p.id JOIN attempts a ON a.run_id = r.id AND "
        "a.attempt = p.attempt WHERE p.status = 'done' ORDER BY p.idx").fetchall()
    by_pair = {}
    for idx, arm, aid, status, t, psnr, why in pairs:
        by_pair.setdefault(idx, {})[arm] = (aid, status, t, psnr, why)
    deltas, psnr = [], {"off": [], "on": []}
    used = {"off": [], "on": []}
    flagged = []
    for idx, arms in sorted(by_pair.items()):
        if any(a[1] != "ok" for a in arms.values()):
            flagged += [f"pair {idx} {arm}: {a[4]}" for arm, a in arms.items() if a[1] != "ok"]
            continue
        deltas.append(arms["on"][2] / arms["off"][2] - 1)
        for arm in ("off", "on"):
            psnr[arm].append(arms[arm][3])
            used[arm].append(arms[arm][0])

    def kernels(ids):
        rows = db.execute(
            "SELECT name, AVG(gpu_ms), AVG(share) FROM kernels WHERE attempt_id IN (%s) GROUP BY "
            "name" % ",".join("?" * len(ids)), ids).fetchall()
        return {n: (ms, sh) for n, ms, sh in rows}

    k_off, k_on = kernels(used["off"]), kernels(used["on"])
    names = set(k_off) & set(k_on)
    top = max(names, key=lambda n: abs(k_on[n][0] - k_off[n][0])) if names else None
    kern = (f"{top}: {k_off[top][0]:.0f} -> {k_on[top][0]:.0f} ms "
            f"(share {100 * k_off[top][1]:.1f}% -> {100 * k_on[top][1]:.1f}%)") if top else ""
    decisive = next((r for r in v.get("reasons", [])
                     if r.startswith(("adopted", "rejected", "inconclusive"))), "")
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    return {"name": name, "verdict": verdict,
            "deltas": ", ".join(f"{100 * d:+.1f}%" for d in deltas), "reason": decisive,
            "psnr": f"{mean(psnr['off']):.2f} / {mean(psnr['on']):.2f}", "kernel": kern,
            "flagged": "; ".join(flagged), "arms": db.execute(
                "SELECT spec_json FROM sweeps").fetchone()[0]}


def main():
    print("| gate | arms (off -> on) | per-pair delta | verdict: why | PSNR off / on (dB) | kernel that moved most | flagged runs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path in sys.argv[1:]:
        r = gate_row(path)
        spec = json.loads(r["arms"])
        arms = " -> ".join(json.dumps(spec["arms"][a], separators=(",", ":")) for a in ("off", "on"))
        print(f"| {r['name']} | `{arms}` | {r['deltas']} | **{r['verdict']}**: {r['reason']} | "
              f"{r['psnr']} | {r['kernel']} | {r['flagged'] or 'none'} |")


if __name__ == "__main__":
    main()
