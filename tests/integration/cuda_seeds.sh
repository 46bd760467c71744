#!/usr/bin/env bash
# The CUDA seeds and vendor baselines compile (no GPU needed). Every
# ops/*/seed.cu goes through `kope eval --target cuda --build-only` (the .cu
# gate plus nvcc with kope's generated host shim) and must come back
# "built"; at least 20 operators must have one. For relu, softmax, matmul
# and conv2d the seed is also built with every knob at its first and at its
# last listed value (knob combinations must compile too). Each seed declares
# knobs from at least two layers. A seed with a syntax error must come back
# compile_error (the build really compiles). Every ops/*/vendor.cu (trusted
# host code calling cuBLAS or cuDNN) is compiled by nvcc into a shared
# library linked with its library, warnings as errors, which must export
# the operator's C symbol; every one is named by its op.json as
# "vendor_cuda", and kope itself builds each into a vendor worker
# (`kope ops check --target cuda --build-only`: vendor "built", linked with
# -lcublas / -lcudnn, exporting the operator). A temporary copy of matvec
# with a broken vendor.cu, and one whose function has another signature
# than the operator's prototype, must fail the check naming that file.
# Under the sanitizers (KOPE_SANITIZED=1) only relu, softmax and matmul
# are built (and matmul's vendor through kope). nvcc missing: the test
# fails, unless KOPE_NO_CUDA=1 (skip).
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
mkdir -p "$T/tmpdir" "$T/var"
export TMPDIR="$T/tmpdir" KOPE_HOME="$T/home"

if [ "${KOPE_NO_CUDA:-0}" = 1 ]; then
  skip "KOPE_NO_CUDA=1"
fi
find_nvcc
if [ -z "$NVCC" ]; then
  echo "FAIL - nvcc not found (install the CUDA toolkit under /usr/local/cuda, set KOPE_NVCC or CUDA_HOME, or KOPE_NO_CUDA=1 to skip)"
  exit 1
fi
ARCH=(--cuda-arch 90)   # one architecture: half the nvcc time, same checks

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

# 5. kope's own CUDA vendor build: every vendor.cu is the op's vendor_cuda
# and `kope ops check --target cuda --build-only` builds it.
if [ "${KOPE_SANITIZED:-0}" = 1 ]; then VOPS=(matmul); else
  VOPS=()
  for f in "$OPS"/*/vendor.cu; do [ -e "$f" ] && VOPS+=("$(basename "$(dirname "$f")")"); done
fi
"$KOPE" ops --ops-dir "$OPS" --json >"$T/out" 2>"$T/err"
for op in "${VOPS[@]}"; do
  expect_eq "$op op.json names vendor.cu as vendor_cuda" \
    "$(json_get "[o['vendor_cuda'] for o in d['operators'] if o['name'] == '$op']")" "[True]"
done
KOPE_CUDA_ARCH=90 "$KOPE" ops check "${VOPS[@]}" --ops-dir "$OPS" --target cuda --build-only \
  --json >"$T/out" 2>"$T/err"
rc=$?
expect_eq "kope ops check --target cuda --build-only of ${#VOPS[@]} vendor operators exits 0" "$rc" 0
[ "$rc" = 0 ] || sed 's/^/    /' "$T/err" | tail -8
for op in "${VOPS[@]}"; do
  expect_eq "$op: kope builds the CUDA vendor baseline" \
    "$(json_get "[r['vendor_verdict'] for r in d['operators'] if r['name'] == '$op']" 2>/dev/null)" \
    "['built']"
done
# the cached vendor workers: linked with their library, exporting the operator
for op in "${VOPS[@]}"; do
  w=$(ls -d "$KOPE_HOME"/cache/build/"$op"-cuvendor-*/worker 2>/dev/null | head -1)
  lib=$(python3 -c "import json; print(json.load(open('$OPS/$op/op.json'))['vendor_cuda']['libs'][0])")
  if [ -n "$w" ] && nm "$w" | grep -Eq " T $op\$" && ldd "$w" | grep -q "lib$lib"; then
    ok "$op vendor worker exports $op and links lib$lib"
  else
    not_ok "$op vendor worker (${w:-missing}) does not export $op or link lib$lib"
  fi
done

# 6. A broken vendor.cu (temporary copy of matvec) fails the check, naming
# the file; so does a vendor function with another signature.
mkdir -p "$T/ops"
cp -r "$OPS/matvec" "$T/ops/"
sed -i 's/cublasSgemv(/cublasSgemv_undeclared(/' "$T/ops/matvec/vendor.cu"
if grep -q cublasSgemv_undeclared "$T/ops/matvec/vendor.cu"; then
  expect_exit 2 "a broken vendor.cu fails kope ops check --build-only" -- \
    env KOPE_CUDA_ARCH=90 "$KOPE" ops check matvec --ops-dir "$T/ops" --target cuda --build-only
  expect_match "the error names the broken vendor.cu" "$T/err" \
    "$T/ops/matvec/vendor.cu: the vendor baseline of operator matvec does not build"
  expect_match "the error carries nvcc's message" "$T/err" 'cublasSgemv_undeclared.*undefined'
else
  not_ok "could not break matvec's vendor.cu (file changed?)"
fi
cp "$OPS/matvec/vendor.cu" "$T/ops/matvec/vendor.cu"
sed -i 's/int64_t m, int64_t k)/int64_t m, int k)/' "$T/ops/matvec/vendor.cu"
if cmp -s "$OPS/matvec/vendor.cu" "$T/ops/matvec/vendor.cu"; then
  not_ok "could not change matvec's vendor signature (file changed?)"
else
  expect_exit 2 "a vendor function with another signature fails the build" -- \
    env KOPE_CUDA_ARCH=90 "$KOPE" ops check matvec --ops-dir "$T/ops" --target cuda --build-only
  expect_match "the signature error names vendor.cu" "$T/err" "vendor.cu.*error"
fi
finish
