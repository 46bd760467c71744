#!/usr/bin/env bash
# Timing bias of the evaluator's same-round comparison: each operator's
# seed is judged with itself as --base, so every vs_base ratio should be 1.
# Given two kope binaries (say, before and after a change to the timing
# rounds), they run alternately, side by side, on the same load.
#   bench/timing_bias.sh KOPE_A [KOPE_B] [REPEATS] [OPS]
# Prints one line per run and, per binary, the geometric mean of the
# vs_base ratios and the candidate's round wins (docs/results.md).
set -u
A=${1:?usage: bench/timing_bias.sh KOPE_A [KOPE_B] [REPEATS] [OPS]}
B=${2:-}
REPEATS=${3:-4}
OPLIST=${4:-relu,gelu,sum,softmax}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OPS=$SRC/ops
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for rep in $(seq 1 "$REPEATS"); do
  for op in ${OPLIST//,/ }; do
    for k in "$A" $B; do
      "$k" eval "$op" "$OPS/$op/seed.c" --base "$OPS/$op/seed.c" --ops-dir "$OPS" --json \
        --seeds 1 --budget 0.05 --rounds 7 >"$TMP/r.json" 2>"$TMP/err" || {
        echo "run failed: $k $op: $(tail -1 "$TMP/err")" >&2; continue; }
      python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['vs_base']
print(sys.argv[2], sys.argv[3], d['speedup'], d['wins'], d['rounds'])" "$TMP/r.json" "$k" "$op"
    done
  done
done | tee "$TMP/all"
python3 - "$TMP/all" <<'PY'
import math, sys, collections
r = collections.defaultdict(list); w = collections.defaultdict(lambda: [0, 0])
for line in open(sys.argv[1]):
    k, op, s, wins, rounds = line.split()
    r[k].append(float(s)); w[k][0] += int(wins); w[k][1] += int(rounds)
for k, v in r.items():
    g = math.exp(sum(map(math.log, v)) / len(v))
    print(f"{k}: geomean vs_base {g:.4f} over {len(v)} runs; candidate won {w[k][0]}/{w[k][1]} rounds")
PY
