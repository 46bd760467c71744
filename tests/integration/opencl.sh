#!/usr/bin/env bash
# The opencl target end to end on PoCL (any OpenCL platform works): kope
# eval of relu's seed.cl is correct; a wrong kernel is incorrect; a kernel
# that does not compile is a compile_error whose diagnostics name
# kernel.cl's line; an endless kernel is a timeout and leaves no worker; two
# kernels, an #include or an unknown name in @launch are forbidden by the
# gate; a second kernel the gate cannot see (token pasting) is caught by
# the build; writing the read-only input faults (crash); a global size that
# is not a multiple of the local size is reported by the runtime (crash);
# an unknown --device and a machine without platforms are environment
# errors (exit 3); `kope optimize relu --target opencl --budget-evals 4`
# exits 0 with a correct best kernel and its Cases recorded for target
# opencl, each with the device it ran on ("platform / device", the same for
# all, shown by kope memory show and export). No OpenCL platform: the test
# fails, unless KOPE_NO_OPENCL=1.
. "$(dirname "$0")/../lib.sh"
K="$KOPE_SRC/tests/kernels/opencl"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir" "$T/novendors"
export TMPDIR="$T/tmpdir" KOPE_HOME="$T/home"

if [ "${KOPE_NO_OPENCL:-0}" = 1 ]; then
  skip "KOPE_NO_OPENCL=1"
fi

# verdict KERNEL EXPECTED_EXIT EXPECTED_VERDICT REASON_REGEX [extra args]
verdict() {
  local kern=$1 code=$2 want=$3 rx=$4
  shift 4
  expect_exit "$code" "$(basename "$kern") -> $want" -- "$KOPE" eval relu "$kern" \
    --target opencl --ops-dir "$OPS" --json --no-timing --seeds 1 "$@"
  expect_eq "$(basename "$kern") verdict" "$(json_get "d['verdict']" 2>/dev/null)" "$want"
  json_get "d['reason']" >"$T/reason" 2>/dev/null
  expect_match "$(basename "$kern") reason" "$T/reason" "$rx"
}

verdict "$OPS/relu/seed.cl" 0 correct "all 12 cases correct"
expect_eq "candidate sealed after the warm-up (seccomp active)" \
  "$(json_get "'seccomp_bpf' in d['sandbox_layers']" 2>/dev/null)" "True"
verdict "$K/relu_wrong.cl" 1 incorrect "expected 0"
verdict "$K/relu_syntax_error.cl" 1 compile_error "undeclared identifier"
json_get "d['diagnostics']" >"$T/diag"
expect_match "diagnostics name kernel.cl's line" "$T/diag" "kernel\.cl:6:"
if grep -q "tempfile_\|kope-eval-" "$T/diag"; then not_ok "temporary paths in diagnostics"; else
  ok "no temporary paths in diagnostics"; fi
verdict "$K/relu_two_kernels.cl" 1 forbidden "2 kernels"
verdict "$K/relu_include.cl" 1 forbidden "#include is not allowed"
verdict "$K/relu_bad_launch.cl" 1 forbidden "unknown name 'rows' in global=rows"
verdict "$K/relu_macro_kernel.cl" 1 compile_error "defines 2 kernels"
verdict "$K/relu_write_input.cl" 1 crash "SIGSEGV"
verdict "$K/relu_bad_local.cl" 1 crash "CL_INVALID_WORK_GROUP_SIZE"

start=$(date +%s)
verdict "$K/relu_infinite_loop.cl" 1 timeout "time limit" --timeout 2
took=$(( $(date +%s) - start ))
# the compile (PoCL, on a loaded machine) is most of it
if [ "$took" -le 60 ]; then ok "timeout enforced (${took}s)"; else not_ok "timeout took ${took}s"; fi
if pgrep -f "$T/tmpdir/kope-eval-" >/dev/null; then not_ok "a worker survived"; else
  ok "no worker left behind"; fi

expect_exit 3 "unknown --device" -- "$KOPE" eval relu "$OPS/relu/seed.cl" --target opencl \
  --ops-dir "$OPS" --no-timing --seeds 1 --device no-such-device-xyz
expect_match "unknown --device named" "$T/err" "no OpenCL device matches 'no-such-device-xyz'"
# the device is an option: --device wins over the environment's default,
# which applies without it
KOPE_OCL_DEVICE=no-such-device-xyz expect_exit 0 "--device over \$KOPE_OCL_DEVICE" -- \
  "$KOPE" eval relu "$OPS/relu/seed.cl" --target opencl --ops-dir "$OPS" --no-timing \
  --seeds 1 --device 0
KOPE_OCL_DEVICE=no-such-device-xyz expect_exit 3 "\$KOPE_OCL_DEVICE as the default" -- \
  "$KOPE" eval relu "$OPS/relu/seed.cl" --target opencl --ops-dir "$OPS" --no-timing --seeds 1
OCL_ICD_VENDORS="$T/novendors" expect_exit 3 "no OpenCL platform" -- "$KOPE" eval relu \
  "$OPS/relu/seed.cl" --target opencl --ops-dir "$OPS" --no-timing
expect_match "no platform named" "$T/err" "no OpenCL platform"

# The target's description (hot tier) lists the devices with their
# OpenCL version (a 64-byte buffer once left PoCL's version string empty).
expect_exit 0 "optimize --dry-run --target opencl" -- "$KOPE" optimize relu --target opencl \
  --ops-dir "$OPS" --db "$T/dry.db" --dry-run
expect_match "device list names the OpenCL version" "$T/out" "^0: .* \(OpenCL [0-9]"

expect_exit 0 "optimize relu --target opencl" -- "$KOPE" optimize relu --target opencl \
  --ops-dir "$OPS" --db "$T/o.db" --budget-evals 4 --eval-seeds 1 --case-budget 0.02 \
  --out "$T/best.cl" --json
expect_eq "optimize: target" "$(json_get "d['target']")" opencl
expect_eq "optimize: passed" "$(json_get "d['passed']")" True
expect_eq "optimize: 4 evaluations" "$(json_get "d['evaluations']")" 4
expect_eq "Cases carry target opencl" \
  "$(sqlite3 "$T/o.db" "select count(*) from cases where target = 'opencl'")" \
  "$(sqlite3 "$T/o.db" "select count(*) from cases")"
expect_eq "Cases recorded" "$(sqlite3 "$T/o.db" "select count(*) > 0 from cases")" 1
expect_eq "every Case has a device" \
  "$(sqlite3 "$T/o.db" "select count(*) from cases where coalesce(device, '') = ''")" 0
expect_eq "one device for the run" \
  "$(sqlite3 "$T/o.db" "select count(distinct device) from cases")" 1
DEV=$(sqlite3 "$T/o.db" "select device from cases limit 1")
echo "# device: $DEV"
if [[ "$DEV" == *" / "* ]]; then ok "device is 'platform / device'"; else
  not_ok "device '$DEV' is not 'platform / device'"; fi
expect_exit 0 "memory show --json" -- "$KOPE" memory show 1 --db "$T/o.db" --json
expect_eq "memory show carries the device" "$(json_get "d['case']['device']" 2>/dev/null)" "$DEV"
expect_exit 0 "memory show (text)" -- "$KOPE" memory show 1 --db "$T/o.db"
expect_match "memory show prints target and device" "$T/out" "target opencl, device "
expect_exit 0 "memory export --format json" -- "$KOPE" memory export --db "$T/o.db" \
  --format json --out "$T/o.json"
expect_eq "the export carries every Case's device" \
  "$(python3 -c "import json; d=json.load(open('$T/o.json')); print(sorted(set(c['device'] for c in d['cases'])) == ['$DEV'])")" \
  True
verdict "$T/best.cl" 0 correct "all 12 cases correct"
finish
