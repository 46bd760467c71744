#!/usr/bin/env bash
# File handoff for `--llm-provider command`: an answerer that is not an HTTP
# API (a person, a model in another session, a runner without a server).
#
#   kope optimize softmax --policy llm --llm-provider command \
#     --llm-cmd 'scripts/llm-handoff.sh /tmp/handoff' --llm-cmd-timeout 1800
#
# Each call takes the request JSON on stdin and writes it to
# DIR/req-NNNN.json (NNNN counts calls in DIR: 0001, 0002, ...), then waits
# for DIR/reply-NNNN.md and prints it as the reply. The answerer reads only
# the request files and writes each reply to reply-NNNN.md.tmp first, then
# renames it, so a half-written reply is never read. A reply that is one JSON
# object is passed as is (content + usage, see docs/llm.md); anything else is
# the reply text. DIR/STOP ends every waiting call with exit 3.
# KOPE_HANDOFF_TIMEOUT (seconds, default 1800) bounds the wait.
set -euo pipefail
dir=${1:?usage: llm-handoff.sh DIR}
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
n=$(( $(find "$dir" -maxdepth 1 -name 'req-*.json' | wc -l) + 1 ))
id=$(printf '%04d' "$n")
cat > "$dir/req-$id.json.tmp"
mv "$dir/req-$id.json.tmp" "$dir/req-$id.json"
flock -u 9
limit=${KOPE_HANDOFF_TIMEOUT:-1800}
start=$(date +%s)
while [ ! -f "$dir/reply-$id.md" ]; do
  [ ! -f "$dir/STOP" ] || { echo "llm-handoff: $dir/STOP exists" >&2; exit 3; }
  [ $(( $(date +%s) - start )) -lt "$limit" ] || { echo "llm-handoff: no reply-$id.md after ${limit}s" >&2; exit 3; }
  sleep 1
done
cat "$dir/reply-$id.md"
