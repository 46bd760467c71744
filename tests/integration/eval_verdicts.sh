#!/usr/bin/env bash
# kope eval as a user runs it: one test per verdict, on real compiles and
# real child processes, with exit codes and JSON reports checked.
. "$(dirname "$0")/../lib.sh"
K="$KOPE_SRC/tests/kernels"
OPS="$KOPE_SRC/ops"

# verdict KERNEL EXPECTED_EXIT EXPECTED_VERDICT [REASON_REGEX] [extra args]
verdict() {
  local kern=$1 code=$2 want=$3 rx=${4:-.}
  shift 4 2>/dev/null || shift $#
  expect_exit "$code" "$kern -> $want" -- "$KOPE" eval relu "$K/$kern" --ops-dir "$OPS" \
    --json --no-timing "$@"
  expect_eq "$kern verdict" "$(json_get "d['verdict']" 2>/dev/null)" "$want"
  json_get "d['reason']" >"$T/reason" 2>/dev/null
  expect_match "$kern reason" "$T/reason" "$rx"
}

verdict relu_syntax_error.c 1 compile_error "error"
expect_match "diagnostics name the line, not the work dir" "$T/out" "kernel.c:5"
if grep -Eq "kope-eval-[A-Za-z0-9]{6}/" "$T/out"; then not_ok "work dir leaked into diagnostics"; else ok "no work dir in diagnostics"; fi
verdict relu_wrong_signature.c 1 compile_error "conflicting types"
verdict relu_zeros.c 1 incorrect "expected"
verdict relu_constant.c 1 incorrect "expected"
verdict relu_copy.c 1 incorrect "expected"
verdict relu_tail_skip.c 1 incorrect "never written"
verdict relu_oob_write.c 1 incorrect "past the end"
verdict relu_segfault.c 1 crash "SIGSEGV"
verdict relu_modify_input.c 1 crash "signal"
verdict relu_exit.c 1 crash "exited"

start=$(date +%s)
# own TMPDIR, so workers of other kope runs on this machine do not count
mkdir -p "$T/tmpdir"
TMPDIR="$T/tmpdir" verdict relu_infinite_loop.c 1 timeout "time limit" --timeout 2
took=$(( $(date +%s) - start ))
if [ "$took" -le 12 ]; then ok "timeout enforced quickly (${took}s)"; else not_ok "timeout took ${took}s"; fi
if pgrep -f "$T/tmpdir/kope-eval-" >/dev/null; then not_ok "a worker survived"; else ok "no worker left behind"; fi

verdict relu_printf.c 0 correct "correct"
# The default home is the relative ".kope": compilers run elsewhere, so it
# must still work when KOPE_HOME is unset and the cwd is arbitrary.
mkdir -p "$T/cwd"
expect_exit 0 "default relative home" -- env -u KOPE_HOME -C "$T/cwd" "$KOPE" eval relu \
  "$OPS/relu/seed.c" --ops-dir "$OPS" --no-timing
verdict relu_openmp.c 0 correct "correct"

# The seed kernel with timing: speedups, CIs and raw samples are reported.
expect_exit 0 "seed relu with timing" -- "$KOPE" eval relu "$OPS/relu/seed.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 5
expect_eq "per-case samples kept (timed cases)" "$(json_get "all(len(c['samples']['candidate']) >= 5 for c in d['cases'] if c['timed'])")" "True"
expect_eq "CI brackets the median" "$(json_get "all(c['speedup_ref']['ci_lo'] <= c['speedup_ref']['median'] <= c['speedup_ref']['ci_hi'] for c in d['cases'] if c['timed'])")" "True"
expect_eq "check cases are not timed" "$(json_get "all(('seconds' in c) == (c['role'] != 'check') for c in d['cases'])")" "True"
expect_eq "geomean speedup positive" "$(json_get "d['speedup_ref'] > 0")" "True"
expect_eq "harness version recorded" "$(json_get "d['harness_version']")" "kope-eval-6"
expect_eq "isolation reported" "$(json_get "'readonly_inputs' in d['environment']['isolation']")" "True"

# Timing sees a slow kernel as slow: 2000x the work below a million
# elements (the first timed case of that size).
expect_exit 0 "slow but correct kernel" -- "$KOPE" eval relu "$K/relu_slow.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 5 --seeds 1 "${REALTIME[@]}"
expect_eq "slow kernel measured slower than the reference" \
  "$(json_get "[c for c in d['cases'] if c['timed'] and int(c['shape'].split('=')[1]) < 1000000][0]['speedup_ref']['ci_hi'] < 0.5")" "True"

# Human output and batch evaluation (two kernels, parallel compile).
expect_exit 1 "batch: one good, one bad" -- "$KOPE" eval relu "$OPS/relu/seed.c" "$K/relu_zeros.c" \
  --ops-dir "$OPS" --no-timing
expect_match "batch prints both" "$T/out" "relu_zeros.c: incorrect"
expect_match "batch prints both (seed)" "$T/out" "seed.c: correct"

# Usage errors.
expect_exit 2 "missing kernel argument" -- "$KOPE" eval relu
expect_exit 2 "unknown operator" -- "$KOPE" eval no_such_op "$K/relu_zeros.c" --ops-dir "$OPS"
expect_match "unknown operator named" "$T/err" "no_such_op"
expect_exit 2 "missing kernel file" -- "$KOPE" eval relu "$T/nope.c" --ops-dir "$OPS"
expect_exit 2 "disallowed flag" -- "$KOPE" eval relu "$OPS/relu/seed.c" --ops-dir "$OPS" --cflags "-fplugin=evil.so"
expect_match "flag named" "$T/err" "fplugin"
expect_exit 0 "help" -- "$KOPE" eval --help
expect_match "help mentions verdicts" "$T/out" "compile_error"

# A malformed spec: exit 2 naming the file and the field.
mkdir -p "$T/ops/relu"
cp "$OPS/relu/"*.c "$T/ops/relu/"
python3 - "$OPS/relu/op.json" "$T/ops/relu/op.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["args"][0]["dtype"] = "f16"
json.dump(d, open(sys.argv[2], "w"))
PY
expect_exit 2 "malformed spec" -- "$KOPE" eval relu "$OPS/relu/seed.c" --ops-dir "$T/ops"
expect_match "error names file and field" "$T/err" "op.json: field 'args\[0\]\.dtype'"
expect_match "error says what was expected" "$T/err" "expected f32, f64, i32 or i64"

finish
