#!/usr/bin/env bash
# kope optimize as a user runs it, on the test operator tests/ops/scale2
# (a seed with one knob that makes it 8x slower, one that changes nothing
# and one that breaks it): the forest in the store, the incumbent rule,
# budgets, resume, SIGINT, active vs passive context sizes, dry run.
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/tests/ops"
DB="$T/a.db"

# 1. A session: every attempt is a Case linked to the state it started from.
expect_exit 0 "tuner session on scale2" -- "$KOPE" optimize scale2 --ops-dir "$OPS" \
  --db "$DB" --budget-evals 3 --seed 1 --json "${REALTIME[@]}"
cp "$T/out" "$T/s1.json"
S1=$(json_get "d['session']")
expect_eq "evaluations used" "$(json_get "d['evaluations']")" 3
expect_eq "stop reason" "$(json_get "d['stop_reason']")" budget-evals
expect_eq "cases recorded (seed + 3)" "$(q "$DB" "select count(*) from cases where session_id=$S1")" 4
expect_eq "one root" "$(q "$DB" "select count(*) from cases where session_id=$S1 and prev_id is null")" 1
expect_eq "every other case links to a case of the session" \
  "$(q "$DB" "select count(*) from cases c join cases p on c.prev_id=p.id where c.session_id=$S1 and p.session_id=$S1")" 3
expect_eq "steps 0..3" "$(q "$DB" "select group_concat(step) from (select step from cases where session_id=$S1 order by step)")" "0,1,2,3"
expect_eq "a journal per case" "$(q "$DB" "select count(*) from journals j join cases c on j.case_id=c.id where c.session_id=$S1")" 4
expect_eq "labels derived for every case" "$(q "$DB" "select count(*) from case_scores s join cases c on s.id=c.id where c.session_id=$S1")" 4

# 2. The incumbent rule: the 8x move wins, the broken and the no-op ones never do.
best=$(json_get "d['best_case']")
expect_eq "best kernel is REPEAT=1" "$(q "$DB" "select thought_id from cases where id=$best")" "algorithm.repeat=1"
expect_eq "incorrect candidate recorded" "$(q "$DB" "select verdict from cases where session_id=$S1 and thought_id='memory.bug=1'")" incorrect
noop=$(q "$DB" "select id from cases where session_id=$S1 and thought_id='instruction.noop=1'")
expect_eq "no-op candidate is correct" "$(q "$DB" "select correct from cases where id=$noop")" 1
if [ "$noop" != "$best" ]; then ok "correct but not faster: not the incumbent"; else not_ok "no-op became the incumbent"; fi
expect_eq "later attempts start from the new incumbent" \
  "$(q "$DB" "select count(*) from cases where session_id=$S1 and step>1 and prev_id=$best")" \
  "$(q "$DB" "select count(*) from cases where session_id=$S1 and step>(select step from cases where id=$best)")"
bestc=$(json_get "d['best_path']")
expect_match "best.c header states the verdict" "$bestc" "verdict: correct"
expect_match "best.c has the winning knob" "$bestc" "#define REPEAT 1 "
if json_get "d['best_speedup_ref'] > 1.5 * d['seed_speedup_ref']" | grep -q True; then
  ok "best is faster than the seed"; else not_ok "best not faster: $(cat "$T/s1.json")"; fi

# 3. Budgets: seconds stops after the first step.
expect_exit 0 "seconds budget" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/b.db" \
  --budget-evals 0 --budget-seconds 0.5 --json
expect_eq "stopped by the seconds budget" "$(json_get "d['stop_reason']")" budget-seconds

# 4. Resume continues the same session.
expect_exit 0 "short session" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/r.db" \
  --budget-evals 1 --seed 2 --json
S=$(json_get "d['session']")
expect_exit 0 "resume" -- "$KOPE" optimize --resume "$S" --ops-dir "$OPS" --db "$T/r.db" \
  --budget-evals 2 --seed 2 --json
expect_eq "same session" "$(json_get "d['session']")" "$S"
expect_eq "steps continue" "$(q "$T/r.db" "select max(step) from cases where session_id=$S")" 3
expect_eq "one session in the store" "$(q "$T/r.db" "select count(*) from sessions")" 1
expect_eq "resumed steps are not repeats" \
  "$(q "$T/r.db" "select count(distinct code_after_hash) from cases where session_id=$S")" 4

# 5. SIGINT stops cleanly with everything recorded.
"$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/i.db" --budget-evals 50 --json \
  >"$T/int.json" 2>"$T/int.err" &
pid=$!
for _ in $(seq 1 300); do
  n=$(q "$T/i.db" "select count(*) from cases" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 2 ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then ok "SIGINT: clean exit ($rc)"; else not_ok "SIGINT: exit $rc"; cat "$T/int.err"; fi
expect_eq "SIGINT: stop reason" "$(python3 -c "import json; print(json.load(open('$T/int.json'))['stop_reason'])")" interrupted
expect_eq "SIGINT: session closed as interrupted" "$(q "$T/i.db" "select status from sessions")" interrupted
expect_eq "SIGINT: a journal for every case" "$(q "$T/i.db" "select count(*) from cases")" \
  "$(q "$T/i.db" "select count(*) from journals")"
expect_exit 0 "SIGINT: store passes its check" -- "$KOPE" memory check --db "$T/i.db"

# 6. Passive context grows with the history; active stays within budget.
expect_exit 0 "passive session" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/p.db" \
  --budget-evals 4 --context passive --eval-seeds 1 --case-budget 0.02 --json
python3 - "$T/out" <<'EOF' && ok "passive context grows every step" || not_ok "passive context did not grow"
import json, sys
t = [s["total"] for s in json.load(open(sys.argv[1]))["context_tokens"]]
sys.exit(0 if len(t) == 4 and all(b > a for a, b in zip(t, t[1:])) else 1)
EOF
expect_exit 0 "active session, small quotas" -- "$KOPE" optimize scale2 --ops-dir "$OPS" \
  --db "$DB" --budget-evals 4 --warm-quota 300 --cold-quota 200 --eval-seeds 1 \
  --case-budget 0.02 --json
python3 - "$T/out" <<'EOF' && ok "active context within hot + Q_w + Q_c" || not_ok "active context over budget"
import json, sys
steps = json.load(open(sys.argv[1]))["context_tokens"]
sys.exit(0 if steps and all(s["total"] <= s["hot"] + 300 + 200 for s in steps) else 1)
EOF

# 6b. --start plain: the session starts from the seed with every knob at its
# first listed value (REPEAT 1, NOOP 0, BUG 0), recorded as start.plain.
expect_exit 0 "plain start" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/pl.db" \
  --start plain --budget-evals 1 --eval-seeds 1 --case-budget 0.02 --json
expect_eq "plain start recorded" "$(q "$T/pl.db" "select thought_id from cases where step=0")" start.plain
q "$T/pl.db" "select body from kernel_sources k join cases c on k.hash=c.code_after_hash where c.step=0" \
  >"$T/plain.c"
expect_match "plain start: REPEAT at its first value" "$T/plain.c" "^#define REPEAT 1 "
expect_match "plain start: BUG at its first value" "$T/plain.c" "^#define BUG 0 "
expect_exit 2 "bad --start" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --start fancy

# 7. Dry run: the context with per-tier token counts; a too-small window is refused.
expect_exit 0 "dry run" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$DB" --dry-run --json
expect_eq "dry run has hot tokens" "$(json_get "d['context']['tokens']['hot'] > 0")" True
expect_eq "dry run sees the earlier sessions" "$(json_get "d['context']['tokens']['warm'] > 0")" True
expect_match "prompt asks for the reply format" "$T/out" "THOUGHT:"
expect_exit 2 "hot payload larger than the window" -- "$KOPE" optimize scale2 --ops-dir "$OPS" \
  --db "$DB" --dry-run --window 6000
expect_match "refusal names the budget" "$T/err" "hot payload.*B_k"
expect_exit 2 "unknown policy" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$DB" --policy nope
expect_exit 2 "bad memory mode" -- "$KOPE" optimize scale2 --memory maybe
expect_exit 0 "help" -- "$KOPE" optimize --help

finish
