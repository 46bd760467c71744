#!/usr/bin/env bash
# kope optimize --policy llm against a local scripted server that speaks
# the real protocols (tests/llm/server.py): a full session where the
# model writes a wrong kernel, then one that does not compile, then a
# correct faster one, and the forest in the store; streaming and
# non-streaming for OpenAI-compatible and Anthropic servers; what the
# requests carry; llm+tuner; the API key never leaves the request header.
. "$(dirname "$0")/../lib.sh"
. "$KOPE_SRC/tests/llm/lib.sh"
OPS="$KOPE_SRC/tests/llm/ops"   # scale2 with small cases only
export KOPE_LLM_API_KEY="sk-kope-test-SECRET-7f3a9c"
FAST=(--eval-seeds 1 --case-budget 0.02)
TIMED=(--eval-seeds 1 --case-budget 0.1 "${REALTIME[@]}")   # where a promotion must be measured

# 1. A full session over OpenAI-style SSE: wrong, compile error, correct and faster.
script "$T/s1.json" <<'J'
[{"kernel": "wrong.c", "header": {"LAYER": "algorithm", "THOUGHT": "algorithm.single_pass",
  "TITLE": "compute each element once", "RATIONALE": "the seed recomputes the output eight times"}},
 {"kernel": "compile_error.c", "header": {"LAYER": "algorithm", "THOUGHT": "algorithm.scale_factor",
  "TITLE": "use a scale factor", "RATIONALE": "fold the constant"}},
 {"kernel": "fast.c", "header": {"LAYER": "algorithm", "THOUGHT": "algorithm.single_pass",
  "TITLE": "one pass over the data", "RATIONALE": "REPEAT makes eight passes; one is enough"},
  "usage": [1234, 321]}]
J
start_server "$T/s1.json"
DB="$T/s1.db"
expect_exit 0 "llm session (openai, streaming)" -- "$KOPE" optimize scale2 --ops-dir "$OPS" \
  --db "$DB" --policy llm --llm-url "$URL" --llm-model test-coder --budget-evals 3 "${TIMED[@]}" --json
cp "$T/out" "$T/s1.out"; cp "$T/err" "$T/s1.err"
S=$(json_get "d['session']")
expect_eq "policy recorded with the model" "$(json_get "d['policy']")" "llm:test-coder"
expect_eq "three requests" "$(requests)" 3
expect_eq "four cases (seed + 3)" "$(q "$DB" "select count(*) from cases where session_id=$S")" 4
expect_eq "verdicts in order" "$(q "$DB" "select group_concat(verdict) from (select verdict from cases where session_id=$S order by step)")" \
  "correct,incorrect,compile_error,correct"
expect_eq "every attempt starts from the seed (the incumbent until step 3)" \
  "$(q "$DB" "select count(*) from cases c join cases p on c.prev_id=p.id where c.session_id=$S and p.step=0")" 3
best=$(json_get "d['best_case']")
expect_eq "the correct faster kernel is the incumbent" "$(q "$DB" "select step from cases where id=$best")" 3
expect_eq "promoted once" "$(json_get "d['promotions']")" 1
expect_eq "thought from the header" "$(q "$DB" "select thought_id||'|'||layer from cases where id=$best")" \
  "algorithm.single_pass|algorithm"
expect_eq "title from the header" "$(q "$DB" "select thought_title from cases where id=$best")" "one pass over the data"
expect_match "compile error fed back" <(q "$DB" "select feedback from cases where session_id=$S and step=2") "scale_factor"
expect_eq "usage recorded (in)" "$(q "$DB" "select tokens_in from cases where id=$best")" 1234
expect_eq "usage recorded (out)" "$(q "$DB" "select tokens_out from cases where id=$best")" 321
expect_eq "a journal per case" "$(q "$DB" "select count(*) from journals j join cases c on j.case_id=c.id where c.session_id=$S")" 4
expect_match "best.c is the LLM's kernel" "$(python3 -c "import json; print(json.load(open('$T/s1.out'))['best_path'])")" "one pass \(the seed makes eight\)"
# The cases are small (n <= a few thousand), so call overhead blunts the
# 8x difference in work: ask for a clear gain, not the full factor (under
# the sanitizers and a parallel test the ratio was 1.6x once).
if python3 -c "import json,sys; d=json.load(open('$T/s1.out')); sys.exit(0 if d['best_speedup_ref'] > 1.25 * d['seed_speedup_ref'] else 1)"; then
  ok "best is clearly faster than the seed"; else not_ok "best not faster: $(cat "$T/s1.out")"; fi
expect_eq "request path" "$(req 0 "r['path']")" "/v1/chat/completions"
expect_eq "request streams with usage" "$(req 0 "r['body']['stream'], r['body']['stream_options']['include_usage']")" "(True, True)"
expect_eq "system then user message" "$(req 0 "[m['role'] for m in r['body']['messages']]")" "['system', 'user']"
expect_eq "model sent" "$(req 0 "r['body']['model']")" test-coder
expect_eq "max_tokens sent" "$(req 0 "r['body']['max_tokens']")" 4096
expect_eq "prompt has the operator and the reply format" \
  "$(req 0 "'void scale2(' in r['body']['messages'][1]['content'] and 'THOUGHT:' in r['body']['messages'][0]['content']")" True
expect_eq "second prompt carries the previous feedback" \
  "$(req 1 "'incorrect' in r['body']['messages'][1]['content'].lower()")" True
expect_eq "bearer key sent" "$(req 0 "r['headers']['Authorization']")" "Bearer $KOPE_LLM_API_KEY"

# 2. The key never appears in outputs, the store or run files.
sqlite3 "$DB" .dump >"$T/dump.sql"
leaks=$(grep -rl "SECRET-7f3a9c" "$T/s1.out" "$T/s1.err" "$T/dump.sql" "$KOPE_HOME" 2>/dev/null | wc -l)
expect_eq "key in no output, store or run file" "$leaks" 0

# 3. OpenAI-compatible without streaming, the newer max-token field.
script "$T/s2.json" <<'J'
[{"mode": "json", "kernel": "fast.c", "header": {"THOUGHT": "algorithm.single_pass", "TITLE": "one pass"}, "usage": [900, 100]}]
J
start_server "$T/s2.json"
expect_exit 0 "openai, not streaming" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/s2.db" \
  --policy llm --llm-url "$URL/v1" --llm-model test-coder --no-llm-stream \
  --llm-max-tokens-field max_completion_tokens --gen-tokens 2000 --budget-evals 1 "${FAST[@]}" --json
expect_eq "no stream requested" "$(req 0 "'stream' in r['body']")" False
expect_eq "max_completion_tokens sent" "$(req 0 "r['body']['max_completion_tokens'], 'max_tokens' in r['body']")" "(2000, False)"
expect_eq "path with /v1 given" "$(req 0 "r['path']")" "/v1/chat/completions"
expect_eq "candidate correct" "$(q "$T/s2.db" "select verdict||','||tokens_in from cases where step=1")" "correct,900"

# 4. Anthropic, streaming (named events) and not.
script "$T/s3.json" <<'J'
[{"kernel": "fast.c", "header": {"LAYER": "algorithm", "THOUGHT": "algorithm.single_pass", "TITLE": "one pass"}, "usage": [777, 88]},
 {"mode": "json", "kernel": "fast.c", "header": {"THOUGHT": "algorithm.single_pass"}, "usage": [555, 66]}]
J
start_server "$T/s3.json"
expect_exit 0 "anthropic, streaming" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/s3.db" \
  --policy llm --llm-provider anthropic --llm-url "$URL" --llm-model claude-test --budget-evals 1 "${FAST[@]}" --json
expect_eq "anthropic path" "$(req 0 "r['path']")" "/v1/messages"
expect_eq "anthropic headers" "$(req 0 "r['headers']['x-api-key'] == '$KOPE_LLM_API_KEY', r['headers']['anthropic-version']")" "(True, '2023-06-01')"
expect_eq "system at the top level, one user message" \
  "$(req 0 "'THOUGHT:' in r['body']['system'], [m['role'] for m in r['body']['messages']], r['body']['max_tokens'] > 0")" \
  "(True, ['user'], True)"
expect_eq "anthropic streamed candidate correct, usage kept" \
  "$(q "$T/s3.db" "select verdict||','||tokens_in||','||tokens_out from cases where step=1")" "correct,777,88"
expect_exit 0 "anthropic, not streaming" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/s3b.db" \
  --policy llm --llm-provider anthropic --llm-url "$URL" --llm-model claude-test --no-llm-stream \
  --budget-evals 1 "${FAST[@]}" --json
expect_eq "anthropic json candidate correct, usage kept" \
  "$(q "$T/s3b.db" "select verdict||','||tokens_in||','||tokens_out from cases where step=1")" "correct,555,66"
expect_eq "anthropic json request did not stream" "$(req 1 "'stream' in r['body']")" False

# 5. llm+tuner: the tuner tunes the knob the LLM declared, between LLM steps.
script "$T/s4.json" <<'J'
[{"kernel": "fast.c", "header": {"LAYER": "algorithm", "THOUGHT": "algorithm.single_pass", "TITLE": "one pass"}},
 {"text": "I have nothing better to offer."}]
J
start_server "$T/s4.json"
expect_exit 0 "llm+tuner" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/s4.db" \
  --policy llm+tuner --llm-url "$URL" --llm-model test-coder --budget-evals 3 "${TIMED[@]}" --json
expect_eq "llm+tuner policy name" "$(json_get "d['policy']")" "llm+tuner:test-coder"
if [ "$(q "$T/s4.db" "select count(*) from cases c join cases p on c.prev_id=p.id where c.step=2 and p.step=1")" = 1 ]; then
  expect_eq "step 2 is the tuner's move on the LLM's knob" \
    "$(q "$T/s4.db" "select thought_id from cases where step=2")" "instruction.unroll=4"
  expect_eq "then the LLM again (2 requests)" "$(requests)" 2
  expect_eq "its prose-only reply is a no_kernel case" "$(q "$T/s4.db" "select verdict from cases where step=3")" no_kernel
else
  # the LLM's kernel was not confirmed faster on this (loaded) machine: the
  # tuner tunes the seed's knobs for its two steps instead
  not_ok "the LLM's kernel (8x fewer passes) was not promoted: $(q "$T/s4.db" "select step, verdict, speedup from cases")"
fi

# 6. Structured (JSON) replies and LLM reflection in the Journal, counted as tokens.
script "$T/s5.json" <<'J'
[{"json_kernel": "fast.c", "header": {"layer": "algorithm", "thought_id": "algorithm.single_pass",
  "title": "one pass", "rationale": "eight passes are seven too many"}, "usage": [1000, 100]},
 {"text": "Removing the repeated passes cut the memory traffic eightfold.\nDIGEST: drop redundant passes over the data.", "usage": [300, 20]}]
J
start_server "$T/s5.json"
expect_exit 0 "json replies with reflection" -- "$KOPE" optimize scale2 --ops-dir "$OPS" \
  --db "$T/s5.db" --policy llm --llm-url "$URL" --llm-model test-coder --llm-json --llm-reflect \
  --budget-evals 1 "${FAST[@]}" --json
expect_eq "response_format json_schema sent" "$(req 0 "r['body']['response_format']['type']")" json_schema
expect_eq "JSON reply read" "$(q "$T/s5.db" "select verdict||','||thought_id||','||rationale from cases where step=1")" \
  "correct,algorithm.single_pass,eight passes are seven too many"
expect_eq "reflection asked after the evaluation" "$(req 1 "'Verdict: correct' in r['body']['messages'][1]['content']")" True
expect_match "reflection in the Journal" <(q "$T/s5.db" "select body from journals j join cases c on j.case_id=c.id where c.step=1") \
  "Interpretation \(openai:test-coder\).*eightfold"
expect_eq "reflection tokens counted" "$(json_get "(d['tokens_in'], d['tokens_out'])")" "(1300, 120)"

# 7. --dry-run renders the prompt without calling the model.
expect_exit 0 "dry run with the llm policy" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$DB" \
  --policy llm --llm-url "$URL" --llm-model test-coder --dry-run
expect_match "dry run shows tokens per tier" "$T/out" "tokens per tier: hot [0-9]+, warm [0-9]+, cold [0-9]+"
expect_eq "dry run sent nothing" "$(requests)" 2  # the two of section 6
expect_exit 2 "unknown provider" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$DB" \
  --policy llm --llm-provider nope --llm-model x
expect_exit 2 "no model" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$DB" --policy llm --llm-url "$URL"
stop_server
finish
