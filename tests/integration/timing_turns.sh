#!/usr/bin/env bash
# Machine-wide turns for timing (src/eval/turns.c): every kope process
# takes /tmp/kope-timing.lock before timing a case. While another process
# holds it, kope eval checks correctness but does not time: it finishes
# only after the holder lets go, still correct and timed; two evaluations
# started together both finish correct.
source "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
K="$OPS/relu/seed.c"
LOCK=/tmp/kope-timing.lock
command -v flock >/dev/null || skip "flock(1) is missing (util-linux)"

# 1. An outside holder keeps the turn for 15 s (longer than the evaluation
# takes without turns, even on a loaded machine).
touch "$LOCK" 2>/dev/null || skip "$LOCK cannot be created"
flock -x "$LOCK" -c "touch $T/held; sleep 15" &
holder=$!
for _ in $(seq 100); do [ -f "$T/held" ] && break; sleep 0.05; done
t0=$(date +%s.%N)
"$KOPE" eval relu "$K" --ops-dir "$OPS" --seeds 1 --budget 0.02 --json >"$T/out" 2>"$T/err"
rc=$?
t1=$(date +%s.%N)
holder_alive_at_end=$(kill -0 "$holder" 2>/dev/null && echo yes || echo no)
wait "$holder"
expect_eq "kope eval exits 0 after the holder's turn" "$rc" 0
expect_eq "  correct and timed" "$(json_get "d['verdict'] + ' ' + str(d['speedup_ref'] > 0)")" "correct True"
expect_eq "  the holder had let go before kope finished" "$holder_alive_at_end" no
if python3 -c "import sys; sys.exit(0 if $t1 - $t0 >= 14.5 else 1)"; then
  ok "  kope waited for the turn ($(python3 -c "print(round($t1 - $t0, 1))") s >= 14.5 s)"
else not_ok "  kope did not wait for the turn: $(python3 -c "print(round($t1 - $t0, 1))") s"; fi

# 2. Two evaluations at once take turns and both finish correct.
"$KOPE" eval relu "$K" --ops-dir "$OPS" --seeds 1 --budget 0.02 --json >"$T/a.json" 2>"$T/a.err" &
a=$!
"$KOPE" eval relu "$K" --ops-dir "$OPS" --seeds 1 --budget 0.02 --json >"$T/b.json" 2>"$T/b.err" &
b=$!
wait "$a"; ra=$?
wait "$b"; rb=$?
expect_eq "two evaluations at once: both exit 0" "$ra $rb" "0 0"
expect_eq "  both correct" "$(json_file "$T/a.json" "d['verdict']") $(json_file "$T/b.json" "d['verdict']")" "correct correct"
finish
