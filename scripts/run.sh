#!/usr/bin/env bash
# `make run`: the loop at work, offline, in about five minutes on two cores.
#  (a) recorded real-model sessions in docs/data/llm-sessions/ (a softmax
#      and a conv2d one by default; KOPE_RUN_REPLAY for others) are
#      replayed (--llm-provider replay): the model's kernels are the
#      recorded ones, but every one is compiled, checked and timed live here;
#  (b) the offline tuner optimizes a couple of operators from the plain
#      start (--start plain: every knob at its first value), so it climbs.
# Both run as `kope bench` sessions (memory on); after each, one line per
# step (step, thought, verdict, speedup vs the reference) from the
# session's experience forest; then a table of where each kernel stands
# against the vendor library (the bench's final side-by-side
# re-measurement), and an HTML report (`kope report`) whose path is printed.
# Overrides: KOPE_RUN_OPS="op1 op2" (tuner operators), KOPE_RUN_BUDGET=N
# (tuner evaluations), KOPE_RUN_REPLAY="file..." or none (recordings),
# KOPE_RUN_OUT=DIR (default .kope/run).
set -euo pipefail
cd "$(dirname "$0")/.."
KOPE=${KOPE:-./build/kope}
OPS=${KOPE_RUN_OPS:-"relu"}
BUDGET=${KOPE_RUN_BUDGET:-8}
# default: a softmax and a conv2d session, both promoted a model's kernel
REPLAY=${KOPE_RUN_REPLAY:-$(ls docs/data/llm-sessions/softmax-2026-12-04-e17815d.jsonl.gz \
  docs/data/llm-sessions/conv2d-2026-12-04-b3c22f7-cold.jsonl.gz 2>/dev/null || true)}
[ "$REPLAY" != none ] || REPLAY=
OUT=${KOPE_RUN_OUT:-.kope/run}
EVAL=(--eval-seeds 1 --case-budget 0.03 --final-seeds 2 --final-case-budget 0.05)
# time at real-time priority where the machine allows it (root or
# CAP_SYS_NICE): other processes then do not disturb the timings
# (docs/evaluator.md, "Real-time priority")
if chrt -f 1 true 2>/dev/null; then EVAL+=(--realtime); fi
rm -rf "$OUT"
mkdir -p "$OUT"
t0=$(date +%s)

# steps FILE: one line per step of every session in a bench results file.
steps() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["runs"]:
    print(f"-- {r['op']} ({r['config']}, {r['policy']}): {r['evaluations']} evaluations, "
          f"{r['promotions']} promotions")
    for c in r.get("forest", []):
        sp = f"{c['speedup']:.2f}x" if c.get("correct") else "-"
        # a correct kernel that was not accepted was flagged for review (roofline, caching)
        v = "flagged" if c["verdict"] == "correct" and not c.get("correct") else c["verdict"]
        print(f"   step {c['step']:>2}  {v:<13} {sp:>8} vs ref  {c['label']:<10} {c['thought']}")
PY
}

# header REC: the recording's operator and number of calls.
header() {
  gzip -dc "$1" | python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.strip()]
print(json.loads(lines[0]).get("op", ""), len(lines) - 1)'
}

results=()
for rec in $REPLAY; do
  read -r op calls < <(header "$rec")
  [ -n "$op" ] || { echo "$rec: no operator in the header; skipped" >&2; continue; }
  name=$(basename "$rec" .jsonl.gz)
  echo "== replay $rec: $op, $calls recorded model replies, evaluated live" >&2
  "$KOPE" bench --ops "$op" --configs llm+memory --llm-provider replay --llm-replay "$rec" \
    --budget-evals "$calls" --workdir "$OUT/$name" --out "$OUT/$name.json" "${EVAL[@]}"
  steps "$OUT/$name.json"
  results+=("$OUT/$name.json")
done

echo "== offline tuner from the plain start: ${OPS// /, }, $BUDGET evaluations each" >&2
"$KOPE" bench --ops "${OPS// /,}" --configs tuner+memory --start plain --budget-evals "$BUDGET" \
  --workdir "$OUT/tuner" --out "$OUT/tuner.json" "${EVAL[@]}"
steps "$OUT/tuner.json"
results+=("$OUT/tuner.json")

echo
python3 - "${results[@]}" <<'PY'
import json, sys
print("Where each kernel stands (final re-measurement, side by side; speedups are geomeans over the timed cases)")
print(f"{'operator':<12} {'config':<14} {'seed vs ref':>11} {'best vs ref':>11} {'best vs vendor':>14}  standing")
for f in sys.argv[1:]:
    d = json.load(open(f))
    for fin in d["final"]:
        ks = {k["config"]: k for k in fin["kernels"]}
        seed = ks.get("seed", {}).get("report", {})
        for cfg, k in ks.items():
            if cfg == "seed":
                continue
            r = k.get("report", {})
            ven = r.get("speedup_vendor", 0) or 0
            stand = ("no correct kernel" if not r.get("accepted") else
                     "no vendor baseline" if ven <= 0 else
                     f"{ven:.2f}x the vendor: faster" if ven >= 1.05 else
                     f"{ven:.2f}x the vendor: on par" if ven > 0.95 else
                     f"{1 / ven:.1f}x slower than the vendor")
            print(f"{fin['op']:<12} {cfg:<14} {seed.get('speedup_ref', 0):>10.2f}x "
                  f"{r.get('speedup_ref', 0):>10.2f}x {ven:>13.3f}x  {stand} ({r.get('vendor', '')})")
PY
"$KOPE" report "${results[@]}" --out "$OUT/report.html" --title "kope make run"
echo
echo "report: $OUT/report.html ($(( $(date +%s) - t0 )) s)"
