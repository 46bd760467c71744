#!/usr/bin/env bash
# --realtime (kope_realtime, src/core/proc.c; rt_turn in src/eval/eval.c):
# while it times a case, kope eval runs its judge SCHED_FIFO at
# KOPE_REALTIME_PRIO (20) and its workers' threads one step below (19), and
# SCHED_OTHER the rest of the time (compiling, checking, reaping), seen from
# outside with ps while the evaluation runs; the kernel is still judged
# correct and timed. Several --realtime evaluations at once finish (reaping
# sandboxed workers at RT once livelocked the machine). Without the privilege (a user without
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

# 1. Watch the scheduling classes of kope's judge (the main thread, lwp ==
# pid) and its workers' threads while it runs.
# a kernel no build cache holds, so the run compiles it
KU="$T/softmax_unique.c"
{ cat "$K"; echo "/* realtime.sh $$ $(date +%s%N) */"; } >"$KU"
"$KOPE" eval softmax "$KU" --ops-dir "$OPS" --seeds 1 --budget 0.1 --realtime --json \
  >"$T/eval.json" 2>"$T/eval.err" &
pid=$!
: >"$T/ps"
while kill -0 "$pid" 2>/dev/null; do
  { echo "--- snapshot"; ps -eLo pid,lwp,ppid,cls,rtprio,comm 2>/dev/null; } >>"$T/ps"
  sleep 0.02
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
grep -E " (kope|worker)$" "$T/ps" | awk '{print $4, $5, $6}' | sort | uniq -c | sed 's/^/    seen: /'
expect_match "  kope's judge ran SCHED_FIFO at 20" "$T/ps" \
  "^ *$pid +$pid +[0-9]+ +FF +20 +kope"
expect_match "  a worker ran SCHED_FIFO at 19 (one step below the judge)" "$T/ps" \
  "^ *[0-9]+ +[0-9]+ +$pid +FF +19 +worker"
expect_match "  outside its timing turns the judge ran SCHED_OTHER" "$T/ps" \
  "^ *$pid +$pid +[0-9]+ +TS +- +kope"
expect_match "  outside timing turns a worker ran SCHED_OTHER" "$T/ps" \
  "^ *[0-9]+ +[0-9]+ +$pid +TS +- +worker"
# while one of its compilers runs, the judge is SCHED_OTHER (it is
# real-time only inside its timing turns)
python3 - "$T/ps" "$pid" >"$T/compiling" 2>&1 <<'PY' || true
import sys
snaps, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("--- snapshot"):
        cur = []; snaps.append(cur); continue
    f = line.split()
    if cur is not None and len(f) >= 6 and f[0].isdigit():
        cur.append(f)
judge = sys.argv[2]
classes = []
for snap in snaps:
    parent = {f[0]: f[2] for f in snap}
    def under(p):
        for _ in range(8):
            if p == judge: return True
            p = parent.get(p)
            if p is None: return False
        return False
    if any(f[5] in ("cc1", "gcc", "as", "collect2", "ld") and under(f[2]) for f in snap):
        classes += [f[3] for f in snap if f[0] == judge and f[1] == judge]
print("compiling snapshots: %d, judge classes: %s" % (len(classes), sorted(set(classes))))
print("judge-while-compiling " + ("SCHED_OTHER" if classes and set(classes) == {"TS"} else "NOT-ONLY-TS"))
PY
sed 's/^/    /' "$T/compiling" | head -2
expect_match "  while its compilers ran, the judge ran SCHED_OTHER" "$T/compiling" \
  "^judge-while-compiling SCHED_OTHER"
if grep -Eq "^ *[0-9]+ +[0-9]+ +$pid +FF +20 +worker" "$T/ps"; then
  not_ok "  no worker runs at the judge's priority"
else ok "  no worker runs at the judge's priority"; fi
# (at kope's priorities only: other processes on the machine may run their own)
if grep -Eq " (FF|RR) +(19|20) +(cc1|gcc|cc|as|ld|collect2)$" "$T/ps"; then
  not_ok "  compilers run SCHED_OTHER"
else ok "  compilers run SCHED_OTHER"; fi

# 2. Three --realtime evaluations at once (sandboxed workers started and
# reaped concurrently): all finish, in bounded time.
t0=$(date +%s)
for i in 1 2 3; do
  timeout 600 "$KOPE" eval relu "$OPS/relu/seed.c" --ops-dir "$OPS" --seeds 1 --budget 0.05 \
    --realtime --json >"$T/par$i.json" 2>"$T/par$i.err" &
done
prc=0
for i in 1 2 3; do wait -n || { r=$?; [ "$r" = 1 ] || prc=$r; }; done
t1=$(date +%s)
echo "    three concurrent --realtime evaluations: $((t1 - t0)) s"
if [ "$prc" = 0 ]; then ok "  three concurrent --realtime evaluations finished"
else not_ok "  three concurrent --realtime evaluations: exit $prc"; tail -3 "$T"/par*.err; fi
if [ $((t1 - t0)) -lt 300 ]; then ok "  ... within 300 s"; else not_ok "  ... took $((t1 - t0)) s"; fi

# 3. Without the privilege: a clear environment error.
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
