#!/usr/bin/env bash
# The CUDA target on a machine with an NVIDIA GPU: what CI (nvcc, no GPU)
# cannot show. Usage: bench/cuda_device_check.sh OUTDIR [KOPE]
#   KOPE: the kope binary (default build/kope, built with `make` if absent)
# Runs, keeping every stdout/stderr/exit status in OUTDIR:
#   1. nvidia-smi and the device probe (kope eval ... --target cuda)
#   2. kope hw --json
#   3. kope ops check --target cuda --build-only --json (every seed.cu and
#      vendor_cuda baseline builds)
#   4. kope ops check --target cuda --json (every seed.cu correct and timed,
#      every vendor_cuda baseline, cuBLAS/cuDNN, correct)
#   5. kope eval relu seed.cu --target cuda --json (one full report, device_ns
#      path); matmul (cuBLAS) and softmax (cuDNN) seeds timed against their
#      vendor baselines (speedup_vendor); and the CUDA hack corpus kernels
#      that only run-time checks catch
#   6. kope bench --target cuda --ops relu,softmax,matmul --budget-evals 4
# Exits 2 with a clear message when there is no usable GPU, else the number
# of failed steps (0: all passed). Sandbox traps (kope-sandbox: forbidden
# system call N) are collected in OUTDIR/sandbox_traps.txt: they are the
# input for the CUDA seccomp allow-list (docs/security.md).
set -u
OUT=${1:?usage: bench/cuda_device_check.sh OUTDIR [KOPE]}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KOPE=${2:-$ROOT/build/kope}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export KOPE_HOME="$OUT/kope-home" TMPDIR="$OUT/tmp"
mkdir -p "$TMPDIR"
FAILED=0

log() { echo "[cuda_device_check] $*" | tee -a "$OUT/summary.txt"; }

# step NAME WANT_EXIT -- COMMAND...: run, keep outputs, compare the exit.
step() {
  local name=$1 want=$2
  shift 3
  local t0=$SECONDS
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  echo "$rc" >"$OUT/$name.rc"
  if [ "$rc" -eq "$want" ]; then log "ok   $name (exit $rc, $((SECONDS - t0)) s)"
  else log "FAIL $name (exit $rc, expected $want, $((SECONDS - t0)) s): $(tail -2 "$OUT/$name.err" | tr '\n' ' ')"
       FAILED=$((FAILED + 1)); fi
  return 0
}

: >"$OUT/summary.txt"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$OUT/nvidia-smi.txt" 2>&1; then
  log "no NVIDIA GPU here (nvidia-smi missing or failing): this check needs one"
  exit 2
fi
nvidia-smi >>"$OUT/nvidia-smi.txt" 2>&1
if [ ! -x "$KOPE" ]; then
  log "building kope ($KOPE missing)"
  (cd "$ROOT" && make >"$OUT/build.log" 2>&1) || { log "build failed, see build.log"; exit 2; }
fi
"$KOPE" eval relu "$ROOT/ops/relu/seed.cu" --ops-dir "$ROOT/ops" --target cuda --no-timing \
  --seeds 1 >"$OUT/probe.out" 2>"$OUT/probe.err"
if grep -q "no CUDA device" "$OUT/probe.err"; then
  log "kope finds no CUDA device: $(cat "$OUT/probe.err")"
  exit 2
fi

step hw 0 -- "$KOPE" hw --json --refresh
step ops_build 0 -- "$KOPE" ops check --ops-dir "$ROOT/ops" --target cuda --build-only --json
step ops_check 0 -- "$KOPE" ops check --ops-dir "$ROOT/ops" --target cuda --json
step eval_relu 0 -- "$KOPE" eval relu "$ROOT/ops/relu/seed.cu" --ops-dir "$ROOT/ops" \
  --target cuda --json --keep
for op in matmul softmax; do
  step "eval_${op}_vendor" 0 -- "$KOPE" eval "$op" "$ROOT/ops/$op/seed.cu" --ops-dir "$ROOT/ops" \
    --target cuda --json
done
# run-time defenses: these pass the gate and must be rejected when run
step hack_oob 1 -- "$KOPE" eval relu "$ROOT/tests/kernels/hack_cuda/oob_write.cu" \
  --ops-dir "$ROOT/ops" --target cuda --json --no-timing
step hack_reads_output 1 -- "$KOPE" eval relu "$ROOT/tests/kernels/hack_cuda/reads_output.cu" \
  --ops-dir "$ROOT/ops" --target cuda --json --no-timing
step bench 0 -- "$KOPE" bench --target cuda --ops relu,softmax,matmul --budget-evals 4 \
  --ops-dir "$ROOT/ops" --out "$OUT/bench.json" --workdir "$OUT/bench.d"
grep -rh "kope-sandbox: forbidden system call" "$OUT" --include='*.out' --include='*.err' \
  --include='*.json' 2>/dev/null | sort | uniq -c >"$OUT/sandbox_traps.txt"
[ -s "$OUT/sandbox_traps.txt" ] && log "sandbox traps seen: $(tr '\n' ' ' <"$OUT/sandbox_traps.txt")"
log "$FAILED step(s) failed; outputs in $OUT"
exit "$FAILED"
