#!/usr/bin/env bash
# Retrieval latency of the PostgreSQL engine on a local server: starts a
# private PostgreSQL 15 server (tests/pg_lib.sh), then runs bench_memory
# against it (--db postgresql://...), which inserts N synthetic Cases one
# transaction each (as the optimize loop does) and times the agent's
# retrieval mix (p50/p99 per query kind).
#   usage: KOPE_BUILD=build bash bench/pg_retrieval.sh [CASES] [QUERIES]
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${KOPE_BUILD:-$SRC/build}
KOPE=$BUILD/kope KOPE_SRC=$SRC KOPE_TEST_TMP=$(mktemp -d)
. "$SRC/tests/lib.sh"
. "$SRC/tests/pg_lib.sh"
pg_start || exit 3
echo "server: $("$PG_BIN/postgres" --version), socket $KOPE_PG_SOCK"
"$BUILD/bench_memory" --db "$KOPE_PG_URL" --cases "${1:-100000}" --queries "${2:-2000}" --bulk 0
