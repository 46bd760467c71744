#!/usr/bin/env bash
# `make run`: optimize a handful of operators offline (tuner policy, memory
# on, active context) and print a table. Memory persists in .kope/run.db,
# so every run starts from what earlier runs learned. Override with
# KOPE_RUN_OPS="op1 op2" and KOPE_RUN_BUDGET=N.
set -euo pipefail
cd "$(dirname "$0")/.."
KOPE=${KOPE:-./build/kope}
OPS=${KOPE_RUN_OPS:-"relu softmax rms_norm matmul"}
BUDGET=${KOPE_RUN_BUDGET:-8}
DB=${KOPE_RUN_DB:-.kope/run.db}
OUT=.kope/run
mkdir -p "$OUT"
for op in $OPS; do
  echo "== kope optimize $op --budget-evals $BUDGET --db $DB" >&2
  rc=0
  "$KOPE" optimize "$op" --budget-evals "$BUDGET" --db "$DB" --json >"$OUT/$op.json" || rc=$?
  [ "$rc" -le 1 ] || { echo "kope optimize $op failed (exit $rc)" >&2; exit "$rc"; }
done
python3 - "$OUT" $OPS <<'PY'
import json, sys
out, ops = sys.argv[1], sys.argv[2:]
print(f"{'operator':<14} {'seed vs ref':>11} {'best vs ref':>11} {'best vs vendor':>14} {'evals':>5} {'promoted':>8}  best kernel")
for op in ops:
    d = json.load(open(f"{out}/{op}.json"))
    ven = f"{d['best_speedup_vendor']:.3f}x" if d['best_speedup_vendor'] > 0 else "-"
    print(f"{op:<14} {d['seed_speedup_ref']:>10.3f}x {d['best_speedup_ref']:>10.3f}x {ven:>14} "
          f"{d['evaluations']:>5} {d['promotions']:>8}  {d['best_path'] or 'none'}")
PY
