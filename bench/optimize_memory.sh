#!/usr/bin/env bash
# Benchmark: does experience help the offline tuner, and does the tuner beat
# blind search? Runs a fixed, ordered set of operators under three
# configurations at the same small budget:
#   random      blind random knob search (no memory)
#   tuner-off   the tuner with --memory off (uniform priors)
#   tuner-on    the tuner with memory on; one store carried from each
#               operator to the next in the order given, so later operators
#               benefit from earlier ones
# Each configuration starts from its own empty store. At the end the best
# kernel of every configuration is re-measured for each operator in ONE
# `kope eval` batch (same evaluator, interleaved with the reference, 5 fresh
# seeds), so the columns are side-by-side ratios, not numbers taken at
# different times. Prints per-operator speedups vs reference and their
# geometric means; writes results.json and results.md under --out.
#
# usage: bench/optimize_memory.sh [--ops "a b c"] [--budget N] [--out DIR]
#                                 [--seed S] [--kope PATH]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KOPE=$ROOT/build/kope
OPS="relu leaky_relu gelu silu softmax log_softmax rms_norm layer_norm sum mean matmul matmul_tb"
BUDGET=12
OUT=$ROOT/build/bench-optimize
SEED=1
while [ $# -gt 0 ]; do
  case $1 in
    --ops) OPS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --kope) KOPE=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "optimize_memory.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
rm -rf "$OUT"
mkdir -p "$OUT"
# Search runs use 2 input seeds and a short timing budget per case to fit
# the machine; the final re-measurement uses the full defaults.
FAST="--eval-seeds 2 --case-budget 0.08"
start=$(date +%s)

run_config() {   # NAME POLICY MEMORY
  local name=$1 policy=$2 memory=$3 op rc
  mkdir -p "$OUT/$name"
  for op in $OPS; do
    echo "[$(( $(date +%s) - start ))s] $name: $op" >&2
    rc=0
    "$KOPE" optimize "$op" --ops-dir "$ROOT/ops" --policy "$policy" --memory "$memory" \
      --db "$OUT/$name/memory.db" --budget-evals "$BUDGET" --seed "$SEED" $FAST \
      --out "$OUT/$name/$op.c" --json >"$OUT/$name/$op.json" 2>"$OUT/$name/$op.err" || rc=$?
    [ "$rc" -le 1 ] || { echo "  failed (exit $rc): $(tail -2 "$OUT/$name/$op.err")" >&2; }
  done
}

run_config random random off
run_config tuner-off tuner off
run_config tuner-on tuner on

# Final side-by-side re-measurement: seed and the three best kernels of each op.
for op in $OPS; do
  echo "[$(( $(date +%s) - start ))s] final measurement: $op" >&2
  files=("$ROOT/ops/$op/seed.c")
  for c in random tuner-off tuner-on; do
    if [ -f "$OUT/$c/$op.c" ]; then files+=("$OUT/$c/$op.c"); else files+=("$ROOT/ops/$op/seed.c"); fi
  done
  "$KOPE" eval "$op" --ops-dir "$ROOT/ops" "${files[@]}" --json >"$OUT/final-$op.json" \
    2>"$OUT/final-$op.err" || true
done

python3 - "$OUT" "$BUDGET" "$(( $(date +%s) - start ))" $OPS <<'PY'
import json, math, sys
out, budget, secs, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
cols = ["seed", "random", "tuner-off", "tuner-on"]
rows, res = [], {"budget_evals": budget, "seconds": secs, "operators": {}}
def gm(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else 0.0
for op in ops:
    try:
        reps = json.load(open(f"{out}/final-{op}.json"))["reports"]
    except Exception:
        continue
    sp = [r["speedup_ref"] if r["accepted"] else 0.0 for r in reps]
    ven = [r["speedup_vendor"] if r["accepted"] and r["speedup_vendor"] else 0.0 for r in reps]
    runs = {}
    for c in cols[1:]:
        try:
            runs[c] = json.load(open(f"{out}/{c}/{op}.json"))
        except Exception:
            runs[c] = {}
    res["operators"][op] = {"speedup_ref": dict(zip(cols, sp)), "speedup_vendor": dict(zip(cols, ven)),
                            "promotions": {c: runs[c].get("promotions") for c in cols[1:]},
                            "evaluations": {c: runs[c].get("evaluations") for c in cols[1:]}}
    rows.append((op, sp, ven))
res["geomean_ref"] = {c: gm([r[1][i] for r in rows]) for i, c in enumerate(cols)}
res["geomean_vendor"] = {c: gm([r[2][i] for r in rows]) for i, c in enumerate(cols)}
json.dump(res, open(f"{out}/results.json", "w"), indent=2)
lines = [f"Budget {budget} evaluations per operator and configuration; {len(rows)} operators; {secs} s in all.",
         "Speedup vs reference of the best kernel of each configuration, re-measured side by side in one `kope eval` batch:", "",
         "| operator | seed | random | tuner, memory off | tuner, memory on | vendor (vs ref) |", "|---|---|---|---|---|---|"]
for op, sp, ven in rows:
    v = sp[0] / ven[0] if ven[0] else 0
    lines.append(f"| {op} | " + " | ".join(f"{x:.3f}x" if x else "fail" for x in sp) + (f" | {v:.3f}x |" if v else " | - |"))
g = res["geomean_ref"]
lines.append("| **geomean** | " + " | ".join(f"**{g[c]:.3f}x**" for c in cols) + " | |")
gv = res["geomean_vendor"]
lines += ["", "Geomean speedup vs the vendor library (operators with one): " + ", ".join(f"{c} {gv[c]:.3f}x" for c in cols)]
open(f"{out}/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
