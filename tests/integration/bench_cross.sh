#!/usr/bin/env bash
# kope bench's memory settings on the fast test operator scale2: bad input
# is refused; cold / source / target / both start from the right memory
# (an empty store, an imported export, a copy of --db, both) while the
# starting store stays untouched; an LLM configuration is skipped, with
# the reason recorded, when no LLM is configured; two result documents go
# into one report.
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/tests/ops"
FAST=(--eval-seeds 1 --case-budget 0.02 --final-seeds 2 --final-case-budget 0.03)

# 1. Bad input.
expect_exit 2 "unknown configuration" -- "$KOPE" bench --ops relu --configs tuner,random --out "$T/x.json"
expect_match "names the configuration" "$T/err" "unknown configuration 'tuner'"
expect_exit 2 "source needs --source-memory" -- "$KOPE" bench --ops relu --configs source --out "$T/x.json"
expect_exit 2 "target needs --db" -- "$KOPE" bench --ops relu --configs target --out "$T/x.json"
expect_exit 2 "needs --out" -- "$KOPE" bench --ops relu
expect_exit 2 "unknown operator" -- "$KOPE" bench --ops relu,nosuchop --out "$T/x.json"
expect_exit 2 "a configuration twice" -- "$KOPE" bench --ops relu --configs random,random --out "$T/x.json"
expect_exit 2 "only LLM configurations and no LLM" -- "$KOPE" bench --ops scale2 --ops-dir "$OPS" \
  --configs llm+memory --out "$T/x.json"
expect_exit 2 "a starting store that is not a kope store" -- "$KOPE" bench --ops scale2 --ops-dir "$OPS" \
  --configs target --db "$OPS/scale2/op.json" --out "$T/x.json"
expect_exit 0 "help lists the configurations" -- "$KOPE" bench --help
expect_match "help names cold/source/target/both" "$T/out" "both +cross-target"

# 2. A starting store (this target) and an export from another store.
START="$T/start.db"
expect_exit 0 "memory of this target" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$START" \
  --budget-evals 1 --eval-seeds 1 --case-budget 0.02
expect_exit 0 "memory of the other target" -- "$KOPE" optimize scale2 --ops-dir "$OPS" --db "$T/other.db" \
  --policy random --budget-evals 2 --eval-seeds 1 --case-budget 0.02
"$KOPE" memory export --db "$T/other.db" --format json >"$T/source.json" 2>"$T/err"
expect_eq "export for --source-memory" "$?" 0
# 3. The four settings and a skipped LLM configuration in one bench.
before=$(sha256sum "$START" | cut -d' ' -f1)
X="$T/cross.json"
expect_exit 0 "cross-target bench" -- "$KOPE" bench --ops scale2 --ops-dir "$KOPE_SRC/tests/ops" \
  --configs cold,source,target,both,llm+memory --db "$START" --source-memory "$T/source.json" \
  --budget-evals 2 "${FAST[@]}" --out "$X"
expect_eq "starting store untouched" "$(sha256sum "$START" | cut -d' ' -f1)" "$before"
# a read-only SQLite reader may leave an empty -wal behind, never content
expect_eq "nothing written to its WAL" "$(stat -c %s "$START-wal" 2>/dev/null || echo 0)" 0
xj() { json_file "$X" "$1"; }
expect_eq "llm+memory skipped with a reason" "$(xj "[s['config'] for s in d['skipped']]")" "['llm+memory']"
expect_eq "four settings ran" "$(xj "[c['name'] for c in d['settings']['configs']]")" "['cold', 'source', 'target', 'both']"
nstart=$(q "$START" "select count(*) from cases")
nsrc=$(python3 -c "import json; print(len(json.load(open('$T/source.json'))['cases']))")
for c in cold source target both; do
  # Cases other than those of the bench's own session (the newest one)
  got=$(q "$T/cross.json.d/$c/r0/memory.db" "select count(*) from cases where session_id <> (select max(id) from sessions)")
  case $c in cold) want=0 ;; source) want=$nsrc ;; target) want=$nstart ;; both) want=$((nstart + nsrc)) ;; esac
  expect_eq "$c starts from the right memory" "$got" "$want"
done

expect_eq "the bench's session ran in every store" \
  "$(for c in cold source target both; do q "$T/cross.json.d/$c/r0/memory.db" "select count(*) from cases where session_id = (select max(id) from sessions)"; done | sort -u)" 3

# 3b. --start plain: sessions start from the seed with every knob at its
# first value; the "seed" kernel re-measured at the end is that kernel.
P="$T/plain.json"
expect_exit 0 "bench from the plain start" -- "$KOPE" bench --ops scale2 --ops-dir "$OPS" \
  --configs random --budget-evals 1 --start plain "${FAST[@]}" --out "$P"
pj() { json_file "$P" "$1"; }
expect_eq "start recorded in the settings" "$(pj "d['settings']['start']")" plain
expect_eq "the seed row is the plain kernel" \
  "$(pj "[k['path'] for f in d['final'] for k in f['kernels'] if k['config'] == 'seed']")" \
  "['$P.d/start/scale2.c']"
expect_match "plain kernel: REPEAT at its first value" "$P.d/start/scale2.c" "^#define REPEAT 1 "
expect_eq "the session started from it" \
  "$(q "$P.d/random/r0/memory.db" "select thought_id from cases where step=0")" start.plain
expect_exit 2 "bad --start" -- "$KOPE" bench --ops scale2 --ops-dir "$OPS" --start fancy --out "$P"

# 4. Two documents in one report.
cp "$X" "$T/again.json"
expect_exit 0 "two documents in one report" -- "$KOPE" report "$X" "$T/again.json" --out "$T/both.html"
expect_match "configurations labelled with their file" "$T/both.html" "<td>cold \\(.*again.json\\)</td>"
expect_match "llm skip reported" "$T/both.html" "Skipped llm\\+memory"
finish
