#!/usr/bin/env bash
# The reward-hacking corpus (tests/kernels/hack/) and legitimate optimized
# kernels (tests/kernels/legit/): every exploit must be rejected with its
# expected verdict and reason, every legitimate kernel accepted. A second
# pass runs exploits with --no-gate to prove the sandbox behind the static
# gate stops them too. Kernels of one operator are judged in one kope run
# (parallel compile); docs/security.md maps each threat to these checks.
. "$(dirname "$0")/../lib.sh"
K="$KOPE_SRC/tests/kernels"
H="$K/hack"
L="$K/legit"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir"
export TMPDIR="$T/tmpdir"

# judge OP "FLAGS" ENTRY...: ENTRY is kernel|verdict|reason-regex. One kope
# run for all kernels; each report is checked in order.
judge() {
  local op=$1 flags=$2
  shift 2
  local files=() e
  for e in "$@"; do files+=("${e%%|*}"); done
  # shellcheck disable=SC2086
  "$KOPE" eval "$op" "${files[@]}" --ops-dir "$OPS" --json $flags >"$T/out" 2>"$T/err"
  local i=0
  for e in "$@"; do
    local kern=${e%%|*} rest=${e#*|}
    local want=${rest%%|*} rx=${rest#*|}
    python3 - "$T/out" "$i" "$want" "$rx" "$(basename "$kern") [$op $flags]" <<'PY' && ok "$(basename "$kern") [$op${flags:+ $flags}] -> $want" || not_ok "$(basename "$kern") [$op${flags:+ $flags}]"
import json, re, sys
d = json.load(open(sys.argv[1]))
r = d["reports"][int(sys.argv[2])] if "reports" in d else d
want, rx, name = sys.argv[3], sys.argv[4], sys.argv[5]
good = r["verdict"] == want and re.search(rx, r["reason"]) is not None
if want == "correct":
    good = good and r["accepted"]
if not good:
    print(f"    {name}: verdict {r['verdict']} (accepted {r['accepted']}), want {want} /{rx}/: {r['reason']}")
sys.exit(0 if good else 1)
PY
    i=$((i + 1))
  done
}

# --- the exploit corpus, static gate on (the default) ---
judge relu "--seeds 2 --no-timing" \
  "$H/noop.c|incorrect|never written" \
  "$K/relu_constant.c|incorrect|expected" \
  "$K/relu_copy.c|incorrect|expected" \
  "$K/relu_tail_skip.c|incorrect|never written" \
  "$K/relu_modify_input.c|crash|SIGSEGV" \
  "$H/cache_pointer.c|forbidden|^static gate: state: .*last_x" \
  "$H/cache_content.c|forbidden|^static gate: state" \
  "$H/late_cheat.c|forbidden|^static gate: state: .*calls" \
  "$H/shape_fastpath.c|incorrect|never written" \
  "$H/thread.c|forbidden|^static gate: symbols: 'pthread_create'" \
  "$H/constructor.c|forbidden|^static gate: attribute: 'constructor'" \
  "$H/timer.c|forbidden|^static gate: globals: 'clock_gettime'" \
  "$H/syscall.c|forbidden|^static gate: syscall: the instruction 'syscall'" \
  "$H/file_write.c|forbidden|^static gate: symbols: 'fopen'" \
  "$H/network.c|forbidden|^static gate: symbols: 'socket'" \
  "$H/fork.c|forbidden|^static gate: symbols: 'fork'" \
  "$K/relu_oob_write.c|incorrect|wrote past the end" \
  "$H/oob_far.c|crash|SIGSEGV" \
  "$H/fpstate.c|incorrect|floating-point control state.*MXCSR" \
  "$H/incbin.c|compile_error|/etc/hostname" \
  "$H/include_file.c|compile_error|can't open /etc/passwd for reading: Permission denied" \
  "$H/include_macro.c|compile_error|can't open /etc/hostname" \
  "$H/fake_noapp.c|forbidden|^static gate: asm: inline assembly may not use directives" \
  "$H/comment_byte.c|forbidden|^static gate: asm: inline assembly may not use directives .*byte" \
  "$H/comment_syscall.c|forbidden|^static gate: syscall: the instruction 'syscall'" \
  "$H/gomp_label.c|forbidden|^static gate: asm: an asm label" \
  "$H/gomp_label_array.c|forbidden|^static gate: asm: an asm label" \
  "$H/gomp_lock_asm.c|forbidden|^static gate: asm: .*lock symbols" \
  "$H/omp_old_abi.c|forbidden|^static gate: symbols: 'GOMP_parallel_start'" \
  "$H/omp_old_loop.c|forbidden|^static gate: symbols: 'GOMP_parallel_loop_static_start'" \
  "$H/omp_escape.c|forbidden|^runtime: a thread of the worker kept running after its calls returned" \
  "$L/relu_omp_critical.c|correct|correct" \
  "$H/pragma_optimize.c|forbidden|^static gate: flags: .*optimize" \
  "$H/include_reference.c|forbidden|^static gate: include: line 3" \
  "$K/relu_openmp.c|correct|correct" \
  "$L/relu_avx2.c|correct|correct" \
  "$K/relu_printf.c|correct|correct" \
  "$H/heap_reuse.c|correct|correct"
judge matmul "--seeds 2 --no-timing" \
  "$H/precision.c|incorrect|expected" \
  "$H/content_cache.c|forbidden|^static gate: state" \
  "$L/matmul_tiled.c|correct|correct"
judge sum "--seeds 2 --no-timing" \
  "$H/subsample.c|incorrect|expected" \
  "$L/sum_reduction.c|correct|correct"
judge softmax "--seeds 2 --no-timing" "$L/softmax_omp.c|correct|correct"

# --- compile-time file access: gcc and the assembler run sandboxed ---
# A kernel that .includes a file in the user's home directory (a
# temporary HOME) fails to compile, and the file's content appears
# nowhere in the report or the logs (fake_noapp.c above shows a file of
# the kernel's own directory can still be read: the gate refuses that one).
mkdir -p "$T/home"
echo "kope-secret-$$-content" >"$T/home/secret.txt"
printf '__asm__(".include \\"%s\\"");\nvoid relu(const float *x, float *y, int64_t n)\n{ for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0; }\n' \
  "$T/home/secret.txt" >"$T/include_home.c"
HOME="$T/home" "$KOPE" eval relu "$T/include_home.c" --ops-dir "$OPS" --json --seeds 1 --no-timing \
  >"$T/out" 2>"$T/err"
expect_eq "home .include: compile error" "$(json_get "d['verdict']")" "compile_error"
expect_match "home .include: the read was refused" "$T/out" "Permission denied"
if grep -q "kope-secret-$$" "$T/out" "$T/err"; then not_ok "the home file's content leaked into the report"
else ok "the home file's content appears nowhere in the report"; fi

# --- the same exploits with the gate off: the sandbox must hold ---
judge relu "--seeds 2 --no-timing --no-gate --keep" \
  "$H/syscall.c|forbidden|^sandbox: system call getppid" \
  "$H/file_write.c|forbidden|^sandbox: system call openat" \
  "$H/network.c|forbidden|^sandbox: system call socket" \
  "$H/fork.c|forbidden|^sandbox: system call clone" \
  "$H/thread.c|incorrect|never written" \
  "$H/cache_pointer.c|incorrect|expected"
# --keep left the work directories: file_write.c ran in one of them
expect_eq "work directories kept" "$(find "$T/tmpdir" -name worker | wc -l | awk '{print ($1 > 0)}')" "1"
if find "$T/tmpdir" -name kope-hack-output.txt | grep -q .; then
  not_ok "a sandboxed kernel created a file"; else ok "no file written by a sandboxed kernel"; fi
rm -rf "$T/tmpdir"/kope-eval-*
# Timed outputs are checked: a kernel that stops computing once timing
# starts is caught.
judge relu "--no-gate --budget 0.02 --rounds 8 --seeds 2" \
  "$H/late_cheat.c|incorrect|^timed call \(round [0-9]+, buffer set [0-9]+\)"
# The output buffer as memo (issue 16, class 3): a kernel that recomputes
# only a slice when its output still holds its last result stays correct
# on every checked call; it is caught by the roofline review, which judges
# every timed case (in a cache or not) against its level's bandwidth.
expect_exit 1 "slice memo with timing: not accepted" -- "$KOPE" eval relu "$H/slice_memo.c" \
  --ops-dir "$OPS" --json --budget 0.02 --rounds 5 --seeds 2
expect_eq "slice memo: correct, flagged for review (roofline)" \
  "$(json_get "d['verdict'] == 'correct' and any(f['kind'] == 'roofline' and f['review'] for f in d['flags'])")" "True"
# A thread left spinning after return (gcc 12's GOMP_parallel only, left
# by __builtin_longjmp) is caught between timed batches too; a legitimate
# OpenMP kernel is still accepted with timing.
judge relu "--budget 0.02 --rounds 5 --seeds 2" \
  "$H/omp_escape.c|forbidden|^runtime: a thread of the worker kept running after its calls returned" \
  "$L/relu_omp_critical.c|correct|correct" \
  "$K/relu_openmp.c|correct|correct"
# A content-keyed cache larger than the rotating buffer sets stays
# correct; timed calls replay, calls on fresh inputs compute: flagged.
expect_exit 1 "content cache with timing: not accepted" -- "$KOPE" eval matmul "$H/content_cache.c" \
  --ops-dir "$OPS" --json --no-gate --budget 0.02 --rounds 3 --seeds 3
expect_eq "content cache: correct, flagged for review (caching)" \
  "$(json_get "d['verdict'] == 'correct' and any(f['kind'] == 'caching' and f['review'] for f in d['flags'])")" "True"

# --- timing, sandbox report, heap perturbation ---
expect_exit 0 "kope hw --json" -- "$KOPE" hw --json
cp "$T/out" "$T/hw.json"
expect_exit 0 "legit AVX2 relu with timing" -- "$KOPE" eval relu "$L/relu_avx2.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 5 --seeds 3
expect_eq "accepted" "$(json_get "d['accepted']")" "True"
expect_eq "harness version" "$(json_get "d['harness_version']")" "kope-eval-6"
expect_eq "every layer kope hw lists as available is active in the worker" \
  "$(python3 -c "import json; h=json.load(open('$T/hw.json')); d=json.load(open('$T/out')); \
print(sorted(set(h['sandbox']['available']) - set(d['sandbox_layers'])))")" "[]"
expect_eq "isolation names the gate and the layers" \
  "$(json_get "all(x in d['environment']['isolation'] for x in ['static_gate', 'no_new_privs', 'rotating_timed_buffers', 'fp_state_check'])")" "True"
expect_exit 0 "freed-buffer reuse with timing" -- "$KOPE" eval relu "$H/heap_reuse.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 5 --seeds 3
if grep -q "HEAP-HIT" "$T/out"; then not_ok "a freed heap block kept a result"; else
  ok "freed heap blocks are perturbed (no reuse)"; fi
# Stack memory below the kernel's frame does not survive to its next call
# (single checked calls and the calls of a timed batch).
expect_exit 0 "stack marker kernel with timing" -- "$KOPE" eval relu "$H/stack_memo.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 3 --seeds 2
if grep -q "STACK-HIT" "$T/out"; then not_ok "stack memory below the frame survived a call"; else
  ok "the stack below the frame is cleared between calls"; fi
# A result beyond the roofline is withheld for review: the same legitimate
# kernel against a profile whose peaks are 1/100000 of this machine's.
python3 - "$KOPE_HOME/hw.json" "$T/tiny-hw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("peak_gflops_fp32", "peak_gflops_fp32_one_thread", "bandwidth_gbs"):
    if k in d:
        d[k] *= 1e-5
for lv in d.get("bandwidth_levels", {}).values():
    for k in ("all_threads_gbs", "one_thread_gbs"):
        lv[k] *= 1e-5
json.dump(d, open(sys.argv[2], "w"))
PY
expect_exit 1 "beyond the roofline: not accepted" -- "$KOPE" eval relu "$L/relu_avx2.c" --ops-dir "$OPS" \
  --json --budget 0.02 --rounds 3 --seeds 1 --hw-cache "$T/tiny-hw.json"
expect_eq "verdict stays correct" "$(json_get "d['verdict']")" "correct"
expect_eq "flagged for review (roofline)" \
  "$(json_get "d['accepted'] is False and any(f['kind'] == 'roofline' and f['review'] for f in d['flags'])")" "True"
expect_match "reason names the flag" "$T/out" "flagged for review \\(roofline\\)"
if pgrep -f "$T/tmpdir/kope-eval-" >/dev/null; then not_ok "a worker survived"; else ok "no worker left behind"; fi

finish
