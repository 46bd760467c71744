#!/usr/bin/env bash
# The CUDA target without a GPU: every kernel of the CUDA hack corpus
# (tests/kernels/hack_cuda/*.cu) goes through `kope eval --target cuda
# --build-only` (static gate + nvcc, nothing runs) in one kope run, and each
# result must match the file's first line `// @expect VERDICT [REGEX]`
# (built, compile_error or forbidden; REGEX must occur in the reason). Then,
# on a machine without a usable CUDA device, eval, ops check and optimize
# with --target cuda must exit 3 naming "no CUDA device"; with a device,
# the legitimate kernel must be accepted instead.
# nvcc missing: the test fails, unless KOPE_NO_CUDA=1 (then it skips).
. "$(dirname "$0")/../lib.sh"
C="$KOPE_SRC/tests/kernels/hack_cuda"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir"
export TMPDIR="$T/tmpdir" KOPE_HOME="$T/home"

find_nvcc
if [ -z "$NVCC" ]; then
  if [ "${KOPE_NO_CUDA:-0}" = 1 ]; then
    skip "nvcc not found and KOPE_NO_CUDA=1"
  fi
  echo "FAIL - nvcc not found (install the CUDA toolkit under /usr/local/cuda, set KOPE_NVCC or CUDA_HOME, or KOPE_NO_CUDA=1 to skip)"
  exit 1
fi

files=("$C"/*.cu)
expect_eq "corpus has at least 10 kernels" "$([ ${#files[@]} -ge 10 ] && echo yes)" yes
"$KOPE" eval relu "${files[@]}" --ops-dir "$OPS" --target cuda --build-only --json \
  >"$T/out" 2>"$T/err"
rc=$?
[ -s "$T/out" ] || { not_ok "build-only run printed no JSON (exit $rc)"; sed 's/^/    /' "$T/err" | tail -5; finish; exit 1; }
python3 - "$T/out" "${files[@]}" <<'PY' >"$T/res"
import json, re, sys
d = json.load(open(sys.argv[1]))
builds = d["builds"]
for path, b in zip(sys.argv[2:], builds):
    first = open(path).readline().split(None, 3)
    want = first[2]
    rx = first[3].strip() if len(first) > 3 else ""
    name = path.rsplit("/", 1)[-1]
    text = b["reason"] + "\n" + (b.get("diagnostics") or "")
    good = b["path"] == path and b["verdict"] == want and re.search(re.escape(rx), text)
    print(("ok" if good else "FAIL") + f" {name}: {b['verdict']} (want {want} /{rx}/): {b['reason']}")
PY
while read -r st rest; do
  if [ "$st" = ok ]; then ok "$rest"; else not_ok "$rest"; fi
done <"$T/res"
expect_eq "one result per corpus file" "$(grep -c . "$T/res")" "${#files[@]}"
expect_eq "build-only exits 1 when a kernel is refused" "$rc" 1

# build-only of the legitimate kernel alone: exit 0, human output says built
expect_exit 0 "build-only of a legitimate kernel" -- "$KOPE" eval relu "$C/legit.cu" \
  --ops-dir "$OPS" --target cuda --build-only
expect_match "human output says built" "$T/out" "legit.cu: built"
# ops check --build-only builds the operator's seed.cu
expect_exit 0 "ops check --target cuda --build-only relu" -- "$KOPE" ops check relu \
  --ops-dir "$OPS" --target cuda --build-only --json
expect_eq "relu's seed.cu is built" "$(json_get 'd["operators"][0]["seed_verdict"]')" built
# an unknown architecture is nvcc's error, reported as a compile error
expect_exit 1 "--cuda-arch bogus does not build" -- "$KOPE" eval relu "$C/legit.cu" \
  --ops-dir "$OPS" --target cuda --build-only --cuda-arch bogus
expect_match "nvcc's message is the diagnostic" "$T/out" "compile_error .*gpu architecture 'bogus'"

# running needs a device
if nvidia-smi -L >/dev/null 2>&1; then
  expect_exit 0 "with a GPU: the legitimate kernel is accepted" -- "$KOPE" eval relu \
    "$C/legit.cu" --ops-dir "$OPS" --target cuda --seeds 2 --no-timing
else
  expect_exit 3 "eval --target cuda without a device" -- "$KOPE" eval relu "$C/legit.cu" \
    --ops-dir "$OPS" --target cuda
  expect_match "eval names the missing device" "$T/err" "no CUDA device \(cudaGetDeviceCount: .+\)"
  expect_exit 3 "ops check --target cuda without a device" -- "$KOPE" ops check relu \
    --ops-dir "$OPS" --target cuda
  expect_match "ops check names the missing device" "$T/err" "no CUDA device"
  expect_exit 3 "optimize --target cuda without a device" -- "$KOPE" optimize relu \
    --ops-dir "$OPS" --target cuda --budget-evals 2 --db "$T/db.sqlite"
  expect_match "optimize names the missing device" "$T/err" "no CUDA device"
fi
finish
