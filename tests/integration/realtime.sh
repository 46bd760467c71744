#!/usr/bin/env bash
# --realtime (kope_realtime, src/core/proc.c): kope eval runs its judge
# SCHED_FIFO at KOPE_REALTIME_PRIO (20) and its workers one step below (19),
# seen from outside with ps while the evaluation runs; the kernel is still
# judged correct and timed. Without the privilege (a user without
# CAP_SYS_NICE, where runuser exists and we are root) --realtime is an
# environment error (exit 3) that says what it needs.
source "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
K="$OPS/softmax/seed.c"

if ! chrt -f 1 true 2>/dev/null; then
  # no privilege here: only the refusal can be checked
  expect_exit 3 "--realtime without the privilege" -- \
    "$KOPE" eval softmax "$K" --ops-dir "$OPS" --seeds 1 --budget 0.02 --realtime
  expect_match "  the message says what is needed" "$T/err" \
    "^kope eval: --realtime: cannot run SCHED_FIFO at priority 20: .*CAP_SYS_NICE"
  finish
fi

# 1. Watch the scheduling classes of kope and its workers while it runs.
"$KOPE" eval softmax "$K" --ops-dir "$OPS" --seeds 1 --budget 0.05 --realtime --json \
  >"$T/eval.json" 2>"$T/eval.err" &
pid=$!
: >"$T/ps"
while kill -0 "$pid" 2>/dev/null; do
  ps -eLo pid,ppid,cls,rtprio,comm >>"$T/ps" 2>/dev/null
  sleep 0.05
done
wait "$pid"
rc=$?
# exit 1 is a review flag of a loaded machine (docs/security.md), not a failure here
if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then ok "kope eval --realtime ran (exit $rc)"
else not_ok "kope eval --realtime exited $rc"; sed 's/^/    /' "$T/eval.err" | tail -5; fi
python3 - "$T/eval.json" >"$T/verdict" 2>&1 <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
print(d["verdict"], "timed" if d["speedup_ref"] > 0 else "untimed")
PY
expect_match "  the seed is judged correct and timed" "$T/verdict" "^correct timed"
grep -E " (kope|worker)$" "$T/ps" | awk '{print $3, $4, $5}' | sort | uniq -c | sed 's/^/    seen: /'
expect_match "  kope's judge ran SCHED_FIFO at 20" "$T/ps" \
  "^ *$pid +[0-9]+ +FF +20 +kope"
expect_match "  a worker ran SCHED_FIFO at 19 (one step below the judge)" "$T/ps" \
  "^ *[0-9]+ +$pid +FF +19 +worker"
if grep -Eq "^ *[0-9]+ +$pid +FF +20 +worker" "$T/ps"; then
  not_ok "  no worker runs at the judge's priority"
else ok "  no worker runs at the judge's priority"; fi
# (at kope's priorities only: other processes on the machine may run their own)
if grep -Eq " (FF|RR) +(19|20) +(cc1|gcc|cc|as|ld|collect2)$" "$T/ps"; then
  not_ok "  compilers run SCHED_OTHER"
else ok "  compilers run SCHED_OTHER"; fi

# 2. Without the privilege: a clear environment error.
if command -v runuser >/dev/null && [ "$(id -u)" = 0 ] && runuser -u nobody -- true 2>/dev/null &&
  runuser -u nobody -- test -x "$KOPE" 2>/dev/null; then
  expect_exit 3 "--realtime as nobody (no CAP_SYS_NICE)" -- \
    runuser -u nobody -- env KOPE_HOME=/tmp "$KOPE" eval softmax "$K" --ops-dir "$OPS" \
    --seeds 1 --realtime
  expect_match "  the message says what is needed" "$T/err" \
    "^kope eval: --realtime: cannot run SCHED_FIFO at priority 20: .*CAP_SYS_NICE"
else
  echo "skip - the unprivileged check (no runuser, not root or $KOPE not reachable by nobody)"
fi
finish
