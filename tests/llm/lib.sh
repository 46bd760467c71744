# Helpers for the LLM integration tests (sourced after tests/lib.sh):
# start_server SCRIPT.json starts tests/llm/server.py on a free loopback
# port with that script (sets PORT, URL and LOG; the request log is fresh),
# stop_server kills it; requests counts the requests it served; req EXPR
# evaluates a Python expression over request number I (0-based) as r.
LLM_DIR="$KOPE_SRC/tests/llm"
SRV_PID=""

start_server() {
  stop_server
  LOG="$T/requests.jsonl"
  rm -f "$LOG" "$T/port"
  python3 "$LLM_DIR/server.py" "$1" "$LOG" "$T/port" 2>"$T/server.err" &
  SRV_PID=$!
  for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
  PORT=$(cat "$T/port")
  URL="http://127.0.0.1:$PORT"
  touch "$LOG"
}

stop_server() {
  if [ -n "$SRV_PID" ]; then kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; fi
  SRV_PID=""
}
trap stop_server EXIT

requests() { wc -l <"$LOG" | tr -d ' '; }

# req I EXPR: a Python expression over request I of the log (as r).
req() {
  python3 -c "import json,sys; r=[json.loads(l) for l in open('$LOG')][$1]; print(($2))"
}

# script FILE: write stdin (a JSON list of replies) to FILE.
script() { cat >"$1"; }

q() { sqlite3 "$1" "$2"; }
