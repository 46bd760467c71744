#!/usr/bin/env bash
# The CUDA seeds and vendor baselines compile (no GPU needed). Every
# ops/*/seed.cu goes through `kope eval --target cuda --build-only` (the .cu
# gate plus nvcc with kope's generated host shim) and must come back
# "built"; at least 20 operators must have one. For relu, softmax, matmul
# and conv2d the seed is also built with every knob at its first and at its
# last listed value (knob combinations must compile too). Each seed declares
# knobs from at least two layers. A seed with a syntax error must come back
# compile_error (the build really compiles). Every ops/*/vendor.cu (trusted
# host code calling cuBLAS or cuDNN; kope has no CUDA vendor build yet) is
# compiled by nvcc into a shared library linked with its library, which
# must export the operator's C symbol.
# Under the sanitizers (KOPE_SANITIZED=1) only relu, softmax and matmul
# are built. nvcc missing: the test fails, unless KOPE_NO_CUDA=1 (skip).
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir" "$T/var"
export TMPDIR="$T/tmpdir" KOPE_HOME="$T/home"

if [ "${KOPE_NO_CUDA:-0}" = 1 ]; then
  echo "skip: KOPE_NO_CUDA=1"
  exit 0
fi
NVCC=${KOPE_NVCC:-${CUDA_HOME:+$CUDA_HOME/bin/nvcc}}
[ -x "${NVCC:-}" ] || NVCC=/usr/local/cuda/bin/nvcc
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
  echo "FAIL - nvcc not found (install the CUDA toolkit under /usr/local/cuda, set KOPE_NVCC or CUDA_HOME, or KOPE_NO_CUDA=1 to skip)"
  exit 1
fi
ARCH=(--cuda-arch 90)   # one architecture: half the nvcc time, same checks

# variant SRC DST first|last: the seed with every knob set to its first or
# last listed value.
variant() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
src, dst, which = sys.argv[1:]
def pick(m):
    vals = m.group(3).split(",")
    return "#define %s %s%s" % (m.group(1), vals[0] if which == "first" else vals[-1], m.group(2))
text = re.sub(r"^#define (\w+) \S+(\s+// @knob \S+ values=(\S+).*)$", pick, open(src).read(), flags=re.M)
open(dst, "w").write(text)
PY
}

# build OP FILE...: kope build-only of the files; prints one verdict per file.
build() {
  local op=$1
  shift
  "$KOPE" eval "$op" "$@" --ops-dir "$OPS" --target cuda --build-only "${ARCH[@]}" --json \
    >"$T/out" 2>"$T/err"
  python3 -c "
import json, sys
d = json.load(open('$T/out'))
for b in d['builds']:
    print(b['verdict'], b['reason'].replace('\n', ' ')[:200])
" 2>/dev/null || echo "no-json exit $(tail -1 "$T/err")"
}

if [ "${KOPE_SANITIZED:-0}" = 1 ]; then
  SEEDS=("$OPS"/relu/seed.cu "$OPS"/softmax/seed.cu "$OPS"/matmul/seed.cu)
  VARIANT_OPS=()
  echo "# sanitizer build: relu, softmax and matmul only"
else
  SEEDS=("$OPS"/*/seed.cu)
  VARIANT_OPS=(relu softmax matmul conv2d)
fi

# 1. A broken seed is a compile error, not "built".
sed 's/return v > 0.0f ? v : 0.0f;/return v > 0.0f ? v : undeclared_name;/' \
  "$OPS/relu/seed.cu" >"$T/var/broken.cu"
if cmp -s "$OPS/relu/seed.cu" "$T/var/broken.cu"; then
  not_ok "could not make a broken relu seed (seed changed?)"
else
  expect_eq "a seed with an undeclared name is a compile error" \
    "$(build relu "$T/var/broken.cu" | cut -d' ' -f1)" compile_error
fi

# 2. Every seed builds and declares knobs from two or more layers.
built=0
for f in "${SEEDS[@]}"; do
  op=$(basename "$(dirname "$f")")
  res=$(build "$op" "$f")
  if [ "${res%% *}" = built ]; then built=$((built + 1)); ok "$op seed.cu builds"; else
    not_ok "$op seed.cu: $res"; sed 's/^/    /' "$T/err" | tail -5; fi
  layers=$(grep -o '@knob layer=[a-z]*' "$f" | sort -u | wc -l)
  if [ "$layers" -ge 2 ]; then ok "$op seed.cu has knobs from $layers layers"; else
    not_ok "$op seed.cu has knobs from $layers layer(s), needs 2"; fi
done
echo "# $built of ${#SEEDS[@]} seeds built"
if [ "${KOPE_SANITIZED:-0}" != 1 ]; then
  if [ "$built" -ge 20 ]; then ok "$built >= 20 CUDA seeds build"; else
    not_ok "only $built CUDA seeds build (need 20)"; fi
fi

# 3. Extreme knob settings build too.
for op in "${VARIANT_OPS[@]}"; do
  variant "$OPS/$op/seed.cu" "$T/var/${op}_first.cu" first
  variant "$OPS/$op/seed.cu" "$T/var/${op}_last.cu" last
  if cmp -s "$T/var/${op}_first.cu" "$T/var/${op}_last.cu"; then
    not_ok "$op: the knob variants are identical (no knobs parsed?)"
  fi
  res=$(build "$op" "$T/var/${op}_first.cu" "$T/var/${op}_last.cu")
  expect_eq "$op seed builds with every knob at its first and at its last value" \
    "$(echo "$res" | cut -d' ' -f1 | tr '\n' ' ')" "built built "
done

# 4. Vendor baselines: nvcc into a shared library that exports the operator.
if [ "${KOPE_SANITIZED:-0}" != 1 ]; then
  nven=0
  for f in "$OPS"/*/vendor.cu; do
    [ -e "$f" ] || continue
    op=$(basename "$(dirname "$f")")
    libs=()
    grep -q '<cublas_v2.h>' "$f" && libs+=(-lcublas)
    grep -q '<cudnn.h>' "$f" && libs+=(-lcudnn)
    if "$NVCC" -std=c++17 -O2 -arch=sm_90 -shared -Xcompiler -fPIC,-Wall,-Wextra -Werror all-warnings \
        -o "$T/var/$op.so" "$f" "${libs[@]}" >"$T/err" 2>&1 &&
       nm -D --defined-only "$T/var/$op.so" | grep -Eq " T $op\$"; then
      nven=$((nven + 1)); ok "$op vendor.cu builds and exports $op (${libs[*]})"
    else
      not_ok "$op vendor.cu"; sed 's/^/    /' "$T/err" | tail -5
    fi
  done
  if [ "$nven" -ge 4 ]; then ok "$nven CUDA vendor baselines build"; else
    not_ok "only $nven CUDA vendor baselines build"; fi
fi
finish
