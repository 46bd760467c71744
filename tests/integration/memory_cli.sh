#!/usr/bin/env bash
# Drives `kope memory` as a user would: imports a small experience forest
# from a json export (as memory brought over from another machine), then
# stats, list, show, search, tree, digests, retrieve, export in all three
# formats (and back through import: idempotent, ids remapped, provenance
# kept), gc and check; and the exit codes for bad input: an unknown Case
# id, files that are not kope databases (left byte-for-byte untouched), a
# database from a newer kope, and an unwritable path.
set -euo pipefail

: "${KOPE:?path to the kope binary}"
T="${KOPE_TEST_TMP:-$(mktemp -d)}/memory_cli"
rm -rf "$T"
mkdir -p "$T"
DB="$T/a/kope.db"
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_rc() {   # expect_rc CODE CMD...
  local want=$1; shift
  local got=0
  "$@" >"$T/out" 2>"$T/err" || got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want: $(cat "$T/err")"
}
contains() {    # contains FILE TEXT
  grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(head -c 600 "$1")"
}
json_get() {    # json_get FILE PYTHON-EXPR(doc)
  python3 -c "import json,sys; doc=json.load(open(sys.argv[1])); print($2)" "$1"
}
sum() { sha256sum "$1" | cut -d' ' -f1; }

# ---- a fixture: memory exported on "machine A" ----------------------------
SRC_A="void softmax(const float *x, float *y, int64_t rows, int64_t cols) { /* base */ }"
SRC_B="void softmax(const float *x, float *y, int64_t rows, int64_t cols) { /* omp */ }"
HASH_A=$(printf '%s' "$SRC_A" | sha256sum | cut -d' ' -f1)
HASH_B=$(printf '%s' "$SRC_B" | sha256sum | cut -d' ' -f1)
cat >"$T/machine-a.json" <<EOF
{"format": "kope-memory", "version": 1, "db_uuid": "machine-a",
 "sessions": [{"uid": "machine-a:1", "op": "softmax", "target": "riscv", "policy": "tuner",
               "started": 1700000000, "ended": 1700000100, "status": "done"}],
 "cases": [
  {"uid": "machine-a:1", "prev_uid": null, "session_uid": "machine-a:1", "step": 0,
   "op": "softmax", "category": "reduction", "target": "riscv", "verdict": "correct",
   "correct": true, "speedup": 1.0, "confidence": 1.0,
   "thought": {"layer": null, "id": "baseline", "title": "reference kernel"},
   "code_after_hash": "$HASH_A", "created": 1700000001},
  {"uid": "machine-a:2", "prev_uid": "machine-a:1", "session_uid": "machine-a:1", "step": 1,
   "op": "softmax", "category": "reduction", "target": "riscv", "verdict": "correct",
   "correct": true, "speedup": 1.6, "confidence": 0.9,
   "thought": {"layer": "parallel", "id": "parallel.outer=on",
               "title": "Parallelize the outer row loop"},
   "code_after_hash": "$HASH_B", "created": 1700000002},
  {"uid": "machine-a:3", "prev_uid": "machine-a:2", "session_uid": "machine-a:1", "step": 2,
   "op": "softmax", "category": "reduction", "target": "riscv", "verdict": "compile_error",
   "correct": false, "speedup": null, "confidence": 1.0,
   "thought": {"layer": "vectorize", "id": "vectorize.width=8", "title": "RVV intrinsics"},
   "feedback": "kernel.c:7:3: error: 'vl' undeclared (first use in this function)",
   "created": 1700000003},
  {"uid": "machine-a:4", "prev_uid": "machine-a:3", "session_uid": "machine-a:1", "step": 3,
   "op": "softmax", "category": "reduction", "target": "riscv", "verdict": "correct",
   "correct": true, "speedup": 2.0, "confidence": 0.8,
   "thought": {"layer": "vectorize", "id": "vectorize.width=8", "title": "declare vl first"},
   "created": 1700000004},
  {"uid": "machine-a:5", "prev_uid": "machine-a:2", "session_uid": "machine-a:1", "step": 4,
   "op": "softmax", "category": "reduction", "target": "riscv", "verdict": "correct",
   "correct": true, "speedup": 1.5, "confidence": 0.9,
   "thought": {"layer": "tiling", "id": "tiling.block=64", "title": "tile rows by 64"},
   "created": 1700000005}],
 "journals": [{"uid": "machine-a:1", "case_uid": "machine-a:2", "session_uid": "machine-a:1",
               "created": 1700000002, "body": "## step 1\nThe outer loop scaled nearly linearly."}],
 "sources": {"$HASH_A": "$SRC_A", "$HASH_B": "$SRC_B"},
 "hw_profiles": [{"fingerprint": "riscv-board", "profile": {"cpu": "rv64"}}]}
EOF

# ---- import and inspect -----------------------------------------------------
expect_rc 0 "$KOPE" memory import "$T/machine-a.json" --db "$DB" --json
[ "$(json_get "$T/out" "doc['cases_new']")" = 5 ] || fail "import: expected 5 new Cases"
expect_rc 0 "$KOPE" memory import "$T/machine-a.json" --db "$DB" --json
[ "$(json_get "$T/out" "doc['cases_new']")" = 0 ] || fail "second import added Cases"

expect_rc 0 "$KOPE" memory stats --db "$DB"
contains "$T/out" "5 Cases"
contains "$T/out" "softmax 5"
expect_rc 0 "$KOPE" memory stats --db "$DB" --json
[ "$(json_get "$T/out" "doc['by_label']['effective']")" = 1 ] || fail "stats: effective count"
[ "$(json_get "$T/out" "doc['by_verdict']['compile_error']")" = 1 ] || fail "stats: verdicts"

expect_rc 0 "$KOPE" memory list --db "$DB" --label effective --json
[ "$(json_get "$T/out" "len(doc['cases'])")" = 1 ] || fail "list --label effective"
[ "$(json_get "$T/out" "doc['cases'][0]['thought']['id']")" = parallel.outer=on ] ||
  fail "list: the effective Case"
expect_rc 0 "$KOPE" memory list --db "$DB" --op softmax --target riscv
[ "$(wc -l <"$T/out")" -eq 5 ] || fail "list --op --target: $(cat "$T/out")"

expect_rc 0 "$KOPE" memory show 4 --db "$DB"
contains "$T/out" "lineage (root first):"
contains "$T/out" "machine-a:4"
contains "$T/out" "imported from machine-a"
expect_rc 0 "$KOPE" memory show 2 --db "$DB" --json --code
[ "$(json_get "$T/out" "[c['case_id'] for c in doc['lineage']]")" = "[1, 2]" ] ||
  fail "show: lineage of 2"
[ "$(json_get "$T/out" "sorted(c['case_id'] for c in doc['successors'])")" = "[3, 5]" ] ||
  fail "show: successors of 2"
[ "$(json_get "$T/out" "doc['case']['step_ratio']")" = 1.6 ] || fail "show: step ratio"
contains "$T/out" "omp"
expect_rc 2 "$KOPE" memory show 99 --db "$DB"
contains "$T/err" "no Case with id 99"
expect_rc 2 "$KOPE" memory show abc --db "$DB"

expect_rc 0 "$KOPE" memory search "outer loop" --db "$DB" --json
[ "$(json_get "$T/out" "len(doc['results']) >= 1")" = True ] || fail "search: no results"
expect_rc 0 "$KOPE" memory tree softmax --db "$DB"
contains "$T/out" "#1 step 0 [partial"
contains "$T/out" "  #2 step 1 [effective r=1.600"
contains "$T/out" "    #3 step 2 [negative r=0.000"
contains "$T/out" "      #4 step 3 [partial r=1.000"
expect_rc 0 "$KOPE" memory tree 1 --db "$DB"
contains "$T/out" "#5 step 4"
expect_rc 0 "$KOPE" memory digests --db "$DB" --refresh
contains "$T/out" "parallel.outer=on"
expect_rc 0 "$KOPE" memory retrieve --db "$DB" --op softmax --target riscv \
  --feedback "kernel.c:30:1: error: 'vlmax' undeclared (first use in this function)"
contains "$T/out" "fixed by #4"

# ---- export in every format, and back -----------------------------------------
expect_rc 0 "$KOPE" memory export --db "$DB" --format json --out "$T/b.json"
[ "$(json_get "$T/b.json" "[c['label'] for c in doc['cases']]")" = \
  "['partial', 'effective', 'negative', 'partial', 'ineffective']" ] || fail "export labels"
[ "$(json_get "$T/b.json" "doc['cases'][0]['prev_case_id']")" = None ] || fail "root prev"
for k in case_id prev_case_id session_id step op target verdict correct speedup step_ratio \
         label d_score confidence thought; do
  [ "$(json_get "$T/b.json" "'$k' in doc['cases'][1]")" = True ] || fail "export lacks $k"
done
expect_rc 0 "$KOPE" memory export --db "$DB" --format md --out "$T/b.md"
contains "$T/b.md" "| 2 | 1 |"
contains "$T/b.md" "parallel.outer=on"
expect_rc 0 "$KOPE" memory export --db "$DB" --format dot --out "$T/b.dot"
contains "$T/b.dot" "c2 -> c3;"
if command -v dot >/dev/null 2>&1; then
  dot -Tsvg "$T/b.dot" -o "$T/b.svg" || fail "graphviz could not render the dot export"
fi
expect_rc 0 "$KOPE" memory export --db "$DB" --op softmax --label negative --out "$T/neg.json"
[ "$(json_get "$T/neg.json" "[c['case_id'] for c in doc['cases']]")" = "[1, 2, 3]" ] ||
  fail "a filtered export must bring the ancestors"
expect_rc 2 "$KOPE" memory export --db "$DB" --format xml

DB2="$T/b/kope.db"
expect_rc 0 "$KOPE" memory import "$T/b.json" --db "$DB2" --json
[ "$(json_get "$T/out" "doc['cases_new']")" = 5 ] || fail "import into a fresh store"
expect_rc 0 "$KOPE" memory export --db "$DB2" --out "$T/c.json"
python3 - "$T/b.json" "$T/c.json" <<'PY' || fail "round trip changed the facts"
import json, sys
def facts(p):
    doc = json.load(open(p))
    keep = ("uid", "prev_uid", "session_uid", "step", "op", "target", "verdict", "correct",
            "speedup", "step_ratio", "label", "d_score", "confidence", "thought")
    return {c["uid"]: {k: c.get(k) for k in keep} for c in doc["cases"]}
a, b = facts(sys.argv[1]), facts(sys.argv[2])
sys.exit(0 if a == b else 1)
PY

# ---- gc and check ------------------------------------------------------------------
expect_rc 0 "$KOPE" memory gc --db "$DB" --keep-journals 0 --keep-sources 0 --json
[ "$(json_get "$T/out" "doc['journals_dropped']")" = 1 ] || fail "gc journals"
expect_rc 0 "$KOPE" memory check --db "$DB"
contains "$T/out" "integrity: ok"
expect_rc 0 "$KOPE" memory stats --db "$DB" --json
[ "$(json_get "$T/out" "doc['cases']")" = 5 ] || fail "gc must keep every Case"

# ---- bad input ----------------------------------------------------------------------
echo "just some notes" >"$T/notes.txt"
before=$(sum "$T/notes.txt")
expect_rc 2 "$KOPE" memory stats --db "$T/notes.txt"
contains "$T/err" "not a kope database"
[ "$(sum "$T/notes.txt")" = "$before" ] || fail "a text file was modified"

python3 - "$T/foreign.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("create table t(x)"); c.commit(); c.close()
PY
before=$(sum "$T/foreign.db")
expect_rc 2 "$KOPE" memory list --db "$T/foreign.db"
contains "$T/err" "another application"
[ "$(sum "$T/foreign.db")" = "$before" ] || fail "a foreign database was modified"

cp "$DB2" "$T/newer.db"
python3 - "$T/newer.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("pragma user_version = 42"); c.commit(); c.close()
PY
before=$(sum "$T/newer.db")
expect_rc 2 "$KOPE" memory stats --db "$T/newer.db"
contains "$T/err" "newer kope"
[ "$(sum "$T/newer.db")" = "$before" ] || fail "a newer database was modified"

cp "$DB2" "$T/corrupt.db"
python3 - "$T/corrupt.db" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
for i in range(4096, len(b)): b[i] = (i * 7 + 13) & 255
open(p, "wb").write(bytes(b))
PY
before=$(sum "$T/corrupt.db")
expect_rc 2 "$KOPE" memory stats --db "$T/corrupt.db"
[ "$(sum "$T/corrupt.db")" = "$before" ] || fail "a corrupt database was modified"

expect_rc 3 "$KOPE" memory import "$T/b.json" --db /proc/kope-no-such/dir/kope.db
expect_rc 3 "$KOPE" memory stats --db "$T/notes.txt/kope.db"
expect_rc 2 "$KOPE" memory import "$T/notes.txt" --db "$DB"
expect_rc 2 "$KOPE" memory frobnicate --db "$DB"
expect_rc 2 "$KOPE" memory list --db "$DB" --label great
expect_rc 2 "$KOPE" memory list --db "$DB" --bogus

# ---- help ------------------------------------------------------------------------------
expect_rc 0 "$KOPE" memory --help
for sub in stats list show search tree export import gc digests retrieve check; do
  expect_rc 0 "$KOPE" memory "$sub" --help
  contains "$T/out" "usage: kope memory $sub"
done

if [ "$fails" -ne 0 ]; then
  echo "memory_cli: $fails failure(s)" >&2
  exit 1
fi
echo "memory_cli: ok"
