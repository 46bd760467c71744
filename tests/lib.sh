# Shared helpers for integration tests (sourced, not a test itself).
# Provides: $KOPE, $KOPE_SRC, $T (fresh scratch dir), expect_exit, json_get,
# pass/fail counters, skip and finish; q (sqlite3), json_file, variant
# (a seed with every knob at its first or last value), find_nvcc.
set -u
: "${KOPE:?KOPE must point to the kope binary}"
: "${KOPE_SRC:?KOPE_SRC must point to the source tree}"
T="${KOPE_TEST_TMP:-$(mktemp -d)}"
rm -rf "$T"
mkdir -p "$T"
PASSED=0
FAILED=0
# (--realtime) where this machine allows real-time priority, else empty:
# tests whose assertions rest on timing pass it so that other processes
# (a loaded CI runner) do not decide them (docs/evaluator.md)
REALTIME=()
if chrt -f 1 true 2>/dev/null; then REALTIME=(--realtime); fi

ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }

# expect_exit CODE DESCRIPTION -- COMMAND...: run, compare the exit code.
# stdout goes to $T/out, stderr to $T/err.
expect_exit() {
  local want=$1 desc=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$desc (exit $got)"; else
    not_ok "$desc: exit $got, expected $want"; sed 's/^/    /' "$T/err" | tail -5; fi
}

# json_get EXPR: evaluate a Python expression over the JSON in $T/out (as d).
json_get() {
  python3 -c "import json,sys; d=json.load(open('$T/out')); print($1)"
}

# expect_eq DESC GOT WANT
expect_eq() {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got '$2', expected '$3'"; fi
}

# expect_match DESC FILE REGEX
expect_match() {
  if grep -Eq -- "$3" "$2"; then ok "$1"; else not_ok "$1: /$3/ not in $2"; sed 's/^/    /' "$2" | head -5; fi
}

# skip REASON: the test cannot run here (a missing device or toolkit the
# caller opted out of); exit 77, which CTest reports as skipped, not passed.
skip() {
  echo "skip: $*"
  exit 77
}

# q DB SQL: run SQL on the SQLite file DB.
q() { sqlite3 "$1" "$2"; }

# json_file FILE EXPR: evaluate a Python expression over the JSON in FILE
# (as d).
json_file() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

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

# find_nvcc: set NVCC to the CUDA compiler ($KOPE_NVCC, $CUDA_HOME/bin,
# /usr/local/cuda/bin or the PATH); empty when there is none.
find_nvcc() {
  NVCC=${KOPE_NVCC:-${CUDA_HOME:+$CUDA_HOME/bin/nvcc}}
  [ -x "${NVCC:-}" ] || NVCC=/usr/local/cuda/bin/nvcc
  [ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
  [ -x "${NVCC:-}" ] || NVCC=
}

finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
