#!/usr/bin/env bash
# Benchmark (printed figures, not a test): how close does kope's shipped
# search get to OpenBLAS on matmul?
#
# 1. Runs the shipped search: `kope optimize matmul` with the offline tuner
#    and default settings, for a fixed budget of EVALS candidate
#    evaluations (default 12, kope's default), in a fresh experience store.
# 2. Times the best kernel it found at m = n = k = 1024 against OpenBLAS's
#    cblas_sgemm (the operator's vendor baseline) with `kope eval` on a
#    temporary copy of the operator whose only perf case is 1024^3 (plus
#    one tiny check case): the kernel runs outside the kope process, as
#    every evaluation does, in interleaved rounds; kope reports the median
#    per-round ratio with its 95% interval.
# Prints the ratio best / OpenBLAS as a speedup (>1: faster than OpenBLAS).
#
# usage: bench/matmul_vs_openblas.sh [WORKDIR]
#   KOPE (default build/kope), EVALS (12), ROUNDS (9), REUSE=1 (time WORKDIR's
#   best.c from an earlier run instead of searching again), BUDGET (1.0 s of
#   timing per case), TIMEOUT (120 s per call of the 1024^3 timing: the -O2
#   one-thread reference takes ~1.7 s there on a quiet 2-vCPU machine and
#   past kope's default 10 s under a load of ~14), OPENBLAS_CORETYPE is
#   passed through (see ops/matmul/vendor.c on machines OpenBLAS does not
#   know).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
KOPE=${KOPE:-$SRC/build/kope}
EVALS=${EVALS:-12}
ROUNDS=${ROUNDS:-9}
BUDGET=${BUDGET:-1.0}
TIMEOUT=${TIMEOUT:-120}
W=${1:-$(mktemp -d /tmp/kope-mm-bench.XXXXXX)}
mkdir -p "$W"

if [ "${REUSE:-0}" = 1 ] && [ -f "$W/best.c" ] && [ -f "$W/optimize.json" ]; then
  echo "== search: reusing $W/best.c (REUSE=1)" >&2
  t0=0 t1=0
else
echo "== search: kope optimize matmul --budget-evals $EVALS (tuner, defaults), work dir $W" >&2
t0=$(date +%s)
"$KOPE" optimize matmul --ops-dir "$SRC/ops" --budget-evals "$EVALS" --db "$W/kope.db" \
  --out "$W/best.c" --json >"$W/optimize.json" 2>"$W/optimize.err" || {
  echo "kope optimize failed (rc $?): $(tail -5 "$W/optimize.err")" >&2
  exit 1
}
t1=$(date +%s)
fi

# The operator with its 1024^3 perf case only (and one tiny check case).
rm -rf "$W/ops1024"
mkdir -p "$W/ops1024"
cp -r "$SRC/ops/matmul" "$W/ops1024/matmul"
[ ! -d "$SRC/ops/_vendor" ] || cp -r "$SRC/ops/_vendor" "$W/ops1024/_vendor"
python3 - "$W/ops1024/matmul/op.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["cases"] = [{"m": 7, "n": 7, "k": 7, "role": "check", "name": "tiny"},
              {"m": 1024, "n": 1024, "k": 1024, "role": "perf", "name": "1024^3"}]
json.dump(d, open(p, "w"), indent=2)
PY

echo "== timing: best kernel vs OpenBLAS at 1024^3, $ROUNDS+ rounds, ${BUDGET}s" >&2
"$KOPE" eval matmul "$W/best.c" --ops-dir "$W/ops1024" --json --rounds "$ROUNDS" --budget "$BUDGET" \
  --seeds 1 --timeout "$TIMEOUT" >"$W/eval.json" 2>"$W/eval.err" || {
  echo "kope eval failed (rc $?): $(tail -5 "$W/eval.err")" >&2
  exit 1
}

python3 - "$W/optimize.json" "$W/eval.json" "$((t1 - t0))" <<'PY'
import json, sys
opt = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))
rep = ev["reports"][0] if "reports" in ev else ev
case = [c for c in rep["cases"] if c.get("timed")][0]
def g(o, *ks):
    for k in ks:
        if k in o:
            return o[k]
    return None
print("search: %s s, %s" % (sys.argv[3], {k: opt[k] for k in opt if k in ("evals", "best_speedup", "speedup", "session")}))
print("1024^3 case: verdict %s" % rep.get("verdict"))
for k in sorted(case):
    if any(w in k for w in ("ven", "ref", "cand", "time", "speedup", "roof", "rounds")):
        v = case[k]
        if not isinstance(v, list):
            print("  %s: %s" % (k, v))
PY
