#!/usr/bin/env bash
# The OpenCL seeds as CI checks them on PoCL: `kope ops check --target
# opencl --no-timing` runs every operator that has an ops/*/seed.cl (each
# seed on every case and input seed, against the C reference) and at least
# 20 must pass. A seed with a deliberate bug (mul's vector path adding
# instead of multiplying) must come back incorrect, so the check really
# compares. For softmax, matmul, sum and conv2d the seed is also evaluated
# with every knob at its first and at its last listed value (every knob
# combination must be correct). Under the sanitizers (KOPE_SANITIZED=1)
# only relu, softmax and matmul are checked and no variants run.
# No OpenCL platform: the test fails, unless KOPE_NO_OPENCL=1 (skip).
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir" "$T/var"
export TMPDIR="$T/tmpdir" KOPE_HOME="$T/home"

if [ "${KOPE_NO_OPENCL:-0}" = 1 ]; then
  skip "KOPE_NO_OPENCL=1"
fi

# verdicts OP FILE...: kope eval --target opencl --no-timing; one verdict per
# file (--json gives one report for one file, {"reports": [...]} for several).
verdicts() {
  local op=$1
  shift
  "$KOPE" eval "$op" "$@" --ops-dir "$OPS" --target opencl --no-timing --seeds 2 --json \
    >"$T/out" 2>"$T/err"
  python3 -c "
import json
d = json.load(open('$T/out'))
for k in d.get('reports', [d]):
    print(k['verdict'])
" 2>/dev/null || echo "no-json $(tail -1 "$T/err")"
}

if [ "${KOPE_SANITIZED:-0}" = 1 ]; then
  NAMES=(relu softmax matmul)
  VARIANT_OPS=()
  echo "# sanitizer build: relu, softmax and matmul only"
else
  NAMES=()
  for f in "$OPS"/*/seed.cl; do NAMES+=("$(basename "$(dirname "$f")")"); done
  VARIANT_OPS=(softmax matmul sum conv2d)
fi
echo "# ${#NAMES[@]} operators with a seed.cl"

# 1. A wrong kernel is rejected (the check compares with the reference).
sed 's/VSTORE(va \* vb, 0, y + i);/VSTORE(va + vb, 0, y + i);/' "$OPS/mul/seed.cl" >"$T/var/mul_bad.cl"
if cmp -s "$OPS/mul/seed.cl" "$T/var/mul_bad.cl"; then
  not_ok "could not make a wrong mul seed (seed changed?)"
else
  expect_eq "mul adding instead of multiplying is incorrect" \
    "$(verdicts mul "$T/var/mul_bad.cl")" incorrect
fi

# 2. Every seed.cl on every case: at least 20 pass (all of the subset under
# the sanitizers).
expect_exit 0 "ops check --target opencl runs" -- "$KOPE" ops check --target opencl \
  --ops-dir "$OPS" --no-timing --json "${NAMES[@]}"
cp "$T/out" "$T/check.json"
npass=$(json_get "sum(1 for o in d['operators'] if o['ok'])" 2>/dev/null || echo 0)
nchk=$(json_get "len(d['operators'])" 2>/dev/null || echo 0)
json_get "'\n'.join('# not ok: ' + o['name'] + ': ' + o.get('reason', '') for o in d['operators'] if not o['ok'])" 2>/dev/null
echo "# $npass of $nchk seeds correct on OpenCL"
expect_eq "checked every named operator" "$nchk" "${#NAMES[@]}"
if [ "${KOPE_SANITIZED:-0}" = 1 ]; then
  expect_eq "all $nchk checked seeds are correct" "$npass" "$nchk"
elif [ "$npass" -ge 20 ]; then ok "$npass >= 20 OpenCL seeds are correct"; else
  not_ok "only $npass OpenCL seeds are correct (need 20)"; fi

# 3. Knob corners: every knob at its first, then at its last value.
for op in "${VARIANT_OPS[@]}"; do
  variant "$OPS/$op/seed.cl" "$T/var/${op}_first.cl" first
  variant "$OPS/$op/seed.cl" "$T/var/${op}_last.cl" last
  expect_eq "$op with every knob at its first and at its last value is correct" \
    "$(verdicts "$op" "$T/var/${op}_first.cl" "$T/var/${op}_last.cl" | tr '\n' ' ')" \
    "correct correct "
done
finish
