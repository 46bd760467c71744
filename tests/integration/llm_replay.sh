#!/usr/bin/env bash
# The replay provider end to end: a real model's recorded softmax session
# (docs/data/llm-sessions/, packed by scripts/llm-session-pack.py) is
# replayed and every kernel evaluated live here. Checks: one Case per
# replayed call, with the thought and title the recorded reply declared;
# lineage intact (each Case's parent is an earlier Case of the session);
# at least one correct kernel; the call past the end of the recording is a
# no_kernel Case naming the file; the session is named after the
# recording's model. A bench llm configuration runs on the same recording.
# Errors: a missing file, a corrupt line, a wrong header (exit 2, file and
# line named); the packer on a handoff directory.
. "$(dirname "$0")/../lib.sh"
FAST=(--eval-seeds 1 --case-budget 0.03 --rounds 3 --no-vendor)
REC=${KOPE_REPLAY_REC:-$(ls "$KOPE_SRC"/docs/data/llm-sessions/*softmax*.jsonl.gz 2>/dev/null | head -1)}
if [ -z "$REC" ] || [ ! -f "$REC" ]; then
  not_ok "no recorded softmax session in docs/data/llm-sessions/"
  finish
  exit 1
fi
echo "# replaying $REC"

# What the recording declares: calls, model, and each reply's THOUGHT / TITLE lines.
python3 - "$REC" "$T" <<'P'
import gzip, json, re, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8") if l.strip()]
h, calls = lines[0], lines[1:]
def field(text, name):
    m = re.search(r"^\s*\**%s\**:\s*(.*?)\s*$" % name, text, re.M)
    return m.group(1) if m else ""
with open(sys.argv[2] + "/declared.txt", "w") as f:
    for c in calls:
        f.write("%s|%s\n" % (field(c["reply"], "THOUGHT"), field(c["reply"], "TITLE")))
open(sys.argv[2] + "/n", "w").write(str(len(calls)))
open(sys.argv[2] + "/model", "w").write(h["model"])
P
N=$(cat "$T/n")
MODEL=$(cat "$T/model")
[ "$N" -ge 1 ] && ok "the recording has $N calls" || not_ok "the recording has no calls"

# 1. Replay every call, and one more past the end.
DB="$T/x.db"
expect_exit 0 "replayed session" -- "$KOPE" optimize softmax --policy llm --llm-provider replay \
  --llm-replay "$REC" --db "$DB" --out "$T/runs" --budget-evals $((N + 1)) "${FAST[@]}" --json
S=$(json_get "d['session']")
expect_eq "policy named after the recording's model" "$(json_get "d['policy']")" "llm:$MODEL"
expect_eq "one Case per replayed call, the seed and the call past the end" \
  "$(q "$DB" "select count(*) from cases where session_id=$S")" $((N + 2))
q "$DB" "select thought_id || '|' || thought_title from cases where session_id=$S and step between 1 and $N order by step" > "$T/got.txt"
while IFS='|' read -r th ti; do
  step=$((${step:-0} + 1))
  got=$(sed -n "${step}p" "$T/got.txt")
  if [ -n "$th" ]; then
    expect_eq "call $step: declared thought and title" "$got" "$th|$ti"
  else
    ok "call $step declares no thought (inferred: ${got%%|*})"
  fi
done < "$T/declared.txt"
expect_eq "lineage: every Case but the seed has an earlier Case of the session as parent" \
  "$(q "$DB" "select count(*) from cases c join cases p on c.prev_id=p.id where c.session_id=$S and p.session_id=$S and p.step<c.step")" \
  $((N + 1))
expect_eq "the seed has no parent" "$(q "$DB" "select count(*) from cases where session_id=$S and step=0 and prev_id is null")" 1
c=$(q "$DB" "select count(*) from cases where session_id=$S and step>=1 and correct=1")
[ "$c" -ge 1 ] && ok "$c replayed kernels are correct" || not_ok "no replayed kernel is correct"
expect_eq "the call past the end is a no_kernel Case naming the recording" \
  "$(q "$DB" "select verdict || ' ' || (feedback like '%has $N replies; call $((N + 1)) asked%') from cases where session_id=$S and step=$((N + 1))")" \
  "no_kernel 1"

# 2. Bench: an llm configuration with the replay provider.
expect_exit 0 "bench llm+memory with the replay provider" -- "$KOPE" bench --ops softmax \
  --configs llm+memory --llm-provider replay --llm-replay "$REC" --budget-evals 1 \
  --workdir "$T/bench" --out "$T/bench.json" --eval-seeds 1 --case-budget 0.03 \
  --final-seeds 1 --final-case-budget 0.03
python3 - "$T/bench.json" > "$T/bench.txt" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(d, sort_keys=True))
P
expect_match "the bench ran llm+memory" "$T/bench.txt" '"llm\+memory"'
expect_match "nothing skipped" "$T/bench.txt" '"skipped": \[\]'

# 3. Errors: missing file, corrupt line, wrong header, no --llm-replay.
expect_exit 2 "missing recording" -- "$KOPE" optimize softmax --policy llm --llm-provider replay \
  --llm-replay "$T/nope.jsonl.gz" --db "$T/e.db"
expect_match "the missing file is named" "$T/err" "nope.jsonl.gz"
# Synthetic fixtures (not model output): a good header, then a broken line 3.
printf '%s\n' '{"kope_llm_session": 1, "model": "synthetic", "op": "relu"}' \
  '{"call": 1, "request": {}, "reply": "synthetic"}' '{"call": 2, "reply": ' > "$T/bad.jsonl"
expect_exit 2 "corrupt line" -- "$KOPE" optimize softmax --policy llm --llm-provider replay \
  --llm-replay "$T/bad.jsonl" --db "$T/e.db"
expect_match "file and line named" "$T/err" "bad.jsonl:3"
gzip -c "$T/bad.jsonl" > "$T/bad.jsonl.gz"
expect_exit 2 "corrupt line, gzip'd" -- "$KOPE" optimize softmax --policy llm --llm-provider replay \
  --llm-replay "$T/bad.jsonl.gz" --db "$T/e.db"
expect_match "file and line named (gzip)" "$T/err" "bad.jsonl.gz:3"
printf '%s\n' '{"model": "synthetic"}' > "$T/nohead.jsonl"
expect_exit 2 "no session header" -- "$KOPE" optimize softmax --policy llm --llm-provider replay \
  --llm-replay "$T/nohead.jsonl" --db "$T/e.db"
expect_match "header error names line 1" "$T/err" "nohead.jsonl:1"
expect_exit 2 "replay without --llm-replay" -- "$KOPE" optimize softmax --policy llm \
  --llm-provider replay --db "$T/e.db"
expect_exit 2 "bench with a corrupt recording" -- "$KOPE" bench --ops softmax --configs llm+memory \
  --llm-provider replay --llm-replay "$T/bad.jsonl" --workdir "$T/bench2" --out "$T/b2.json"
# An operator mismatch is a warning, and the session still runs (one synthetic call).
printf '%s\n' '{"kope_llm_session": 1, "model": "synthetic", "op": "relu"}' \
  '{"call": 1, "request": {}, "reply": "synthetic: no kernel here"}' > "$T/relu.jsonl"
expect_exit 0 "a recording for another operator still replays (the seed stays best)" -- \
  "$KOPE" optimize softmax --policy llm --llm-provider replay --llm-replay "$T/relu.jsonl" \
  --db "$T/w.db" --budget-evals 1 "${FAST[@]}"
expect_match "operator mismatch warned" "$T/err" "recorded for operator relu, replayed for softmax"

# 4. The packer: a handoff directory with two answered calls and one waiting.
H="$T/handoff"
mkdir -p "$H"
for i in 0001 0002 0003; do echo "{\"system\": \"s$i\", \"messages\": []}" > "$H/req-$i.json"; done
for i in 0001 0002; do printf 'THOUGHT: synthetic.t%s\nreply %s\n' "$i" "$i" > "$H/reply-$i.md"; done
expect_exit 0 "pack a handoff directory" -- python3 "$KOPE_SRC/scripts/llm-session-pack.py" "$H" \
  "$T/p.jsonl.gz" --model synthetic --answerer test --op softmax --notes "test fixture"
expect_eq "packed: header + two calls" "$(gzip -dc "$T/p.jsonl.gz" | wc -l)" 3
expect_eq "packed calls in order with their replies" \
  "$(gzip -dc "$T/p.jsonl.gz" | python3 -c 'import json,sys; l=[json.loads(x) for x in sys.stdin]; print(l[0]["kope_llm_session"], l[0]["op"], [(c["call"], c["request"]["system"], c["reply"].split()[1]) for c in l[1:]])')" \
  "1 softmax [(1, 's0001', 'synthetic.t0001'), (2, 's0002', 'synthetic.t0002')]"
# one session out of a bench's directory: requests 2..5, 3 timed out (no reply), 5 waiting
for i in 0004 0005; do echo "{\"system\": \"s$i\", \"messages\": []}" > "$H/req-$i.json"; done
rm "$H/reply-0001.md"
printf 'THOUGHT: synthetic.t0004\nreply 0004\n' > "$H/reply-0004.md"
expect_exit 0 "pack a range, leaving out unanswered requests" -- python3 \
  "$KOPE_SRC/scripts/llm-session-pack.py" "$H" "$T/r.jsonl.gz" --model synthetic --answerer test \
  --op softmax --first 2 --last 5 --skip-unanswered
expect_eq "range packed: calls renumbered, handoff request numbers kept" \
  "$(gzip -dc "$T/r.jsonl.gz" | python3 -c 'import json,sys; l=[json.loads(x) for x in sys.stdin]; print([(c["call"], c["handoff_request"], c["request"]["system"]) for c in l[1:]])')" \
  "[(1, 2, 's0002'), (2, 4, 's0004')]"
finish
