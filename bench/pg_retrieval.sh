#!/usr/bin/env bash
# Retrieval latency of the PostgreSQL engine on a local server at several
# store sizes, next to the SQLite engine on the same Cases.
#
# For each size N: bench_memory grows an SQLite store of N synthetic Cases
# (bench/memory.c: sessions with lineage, verdicts, compiler errors and
# mismatches, Journals, kernel sources, digests) and times its query mix
# there; `kope memory export` writes the store as JSON and `kope memory
# import` loads it into a fresh database of a private PostgreSQL 15 server
# (tests/pg_lib.sh), in one transaction (the import's bulk mode,
# src/mem/pg_import.c); the counts of both stores are compared and `kope
# memory check` recomputes every score on the server; then bench_memory
# times the same mix against the server (--cases 1 --bulk 0: one more
# Case, then the queries). The mix includes "agent step": every read the
# context builder makes before an optimization step (src/ctx/gather.c).
#
#   usage: KOPE_BUILD=build bash bench/pg_retrieval.sh [QUERIES] [SIZE...]
#          (defaults: 1200 queries, sizes 1000 10000 100000)
# The server runs at the caller's nice level (nice -n 19 bash ... on a
# shared machine). Exit 1 when a count differs or the check fails.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${KOPE_BUILD:-$SRC/build}
KOPE=$BUILD/kope KOPE_SRC=$SRC KOPE_TEST_TMP=$(mktemp -d)
. "$SRC/tests/lib.sh"
. "$SRC/tests/pg_lib.sh"
QUERIES=${1:-1200}
shift $(($# > 0 ? 1 : 0))
SIZES=${*:-1000 10000 100000}
WORK=$(mktemp -d /tmp/kope-pgbench.XXXXXX)
pg_start || exit 3
trap 'pg_stop; rm -rf "$WORK" "$KOPE_TEST_TMP"' EXIT
echo "server: $("$PG_BIN/postgres" --version), socket $KOPE_PG_SOCK; queries $QUERIES"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

counts() {   # the figures both stores must agree on
  "$KOPE" memory stats --db "$1" --json | jq -c '[.cases, .sessions, .journals, .digests, .sources]'
}

status=0
for n in $SIZES; do
  db=$WORK/s$n.db
  echo "== $n Cases =="
  echo "-- SQLite (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BUILD/bench_memory" --db "$db" --cases "$n" --queries "$QUERIES" --bulk 0 || exit 3
  "$KOPE" memory export --db "$db" --out "$WORK/s$n.json" || exit 3
  url=$(pg_createdb "k$n")
  t0=$(date +%s.%N)
  "$KOPE" memory import --db "$url" "$WORK/s$n.json" || exit 3
  t1=$(date +%s.%N)
  echo "import into PostgreSQL: $(echo "$n / ($t1 - $t0)" | bc -l | xargs printf '%.0f') Cases/s" \
       "($(echo "$t1 - $t0" | bc -l | xargs printf '%.1f') s, load $(cut -d' ' -f1-3 /proc/loadavg))"
  a=$(counts "$db") b=$(counts "$url")
  echo "counts [cases, sessions, journals, digests, sources]: SQLite $a, PostgreSQL $b"
  [ "$a" = "$b" ] || { echo "FAIL: the stores differ"; status=1; }
  "$KOPE" memory check --db "$url" || { echo "FAIL: memory check"; status=1; }
  echo "-- PostgreSQL (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BUILD/bench_memory" --db "$url" --cases 1 --queries "$QUERIES" --bulk 0 || exit 3
  rm -f "$db" "$db"-* "$WORK/s$n.json"
done
exit $status
