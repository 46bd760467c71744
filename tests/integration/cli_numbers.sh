#!/usr/bin/env bash
# Numbers in options are checked (src/tool/cli.c): a value that is not a
# number, has trailing text, overflows or is out of range is a usage error
# (exit 2) whose message names the subcommand, the option, the value and
# what was expected, for options of optimize, bench (including the options
# the two share, parsed in one place), eval and ops; and a good value is
# still accepted (optimize --dry-run, which runs nothing).
source "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
K="$OPS/relu/seed.c"

# bad CMD OPT VALUE EXPECTED-TEXT -- ARGS...: run, expect exit 2 and the message.
bad() {
  local cmd=$1 opt=$2 val=$3 want=$4
  shift 5
  expect_exit 2 "kope $cmd --$opt '$val'" -- "$KOPE" "$cmd" "$@" "--$opt" "$val"
  expect_match "  message names --$opt and '$val'" "$T/err" \
    "^kope $cmd: --$opt: '$val' is not $want"
}

bad optimize threads x "an integer from 0 to 4096" -- relu --ops-dir "$OPS" --dry-run
bad optimize threads 4097 "an integer from 0 to 4096" -- relu --ops-dir "$OPS" --dry-run
bad optimize budget-evals 12x "an integer from 0 to" -- relu --ops-dir "$OPS" --dry-run
bad optimize budget-evals -1 "an integer from 0 to" -- relu --ops-dir "$OPS" --dry-run
bad optimize budget-evals 99999999999999999999 "an integer" -- relu --ops-dir "$OPS" --dry-run
bad optimize case-budget fast "a number from 0 to 3600" -- relu --ops-dir "$OPS" --dry-run
bad optimize case-budget nan "a number from 0 to 3600" -- relu --ops-dir "$OPS" --dry-run
bad optimize batch 9 "an integer from 1 to 8" -- relu --ops-dir "$OPS" --dry-run
bad optimize min-gain "" "a number" -- relu --ops-dir "$OPS" --dry-run
bad optimize window 32k "an integer from 1 to" -- relu --ops-dir "$OPS" --dry-run
bad optimize llm-temperature hot "a number from 0 to 10" -- relu --ops-dir "$OPS" --dry-run
bad optimize llm-retries -3 "an integer from 0 to 100" -- relu --ops-dir "$OPS" --dry-run
bad optimize seed -5 "an integer from 0 to" -- relu --ops-dir "$OPS" --dry-run
bad optimize resume 0 "an integer from 1 to" -- --ops-dir "$OPS"
bad bench threads x "an integer from 0 to 4096" -- --ops relu --out "$T/r.json"
bad bench eval-seeds 1.5 "an integer from 0 to 1000" -- --ops relu --out "$T/r.json"
bad bench repeats 0 "an integer from 1 to 1000" -- --ops relu --out "$T/r.json"
bad bench final-case-budget 0.1s "a number from 0 to 3600" -- --ops relu --out "$T/r.json"
bad bench level two "an integer from 1 to 1000" -- --out "$T/r.json"
bad eval threads x "an integer from 0 to 4096" -- relu "$K" --ops-dir "$OPS"
bad eval timeout 1e999 "a number from 0 to 86400" -- relu "$K" --ops-dir "$OPS"
bad ops seeds many "an integer from 1 to 1000" -- check relu --ops-dir "$OPS"
[ -e "$T/r.json" ] && not_ok "a rejected bench wrote results" || ok "a rejected bench wrote nothing"

# good values still work: hexadecimal, a decimal fraction, the range ends
expect_exit 0 "optimize --dry-run with good numbers" -- "$KOPE" optimize relu --ops-dir "$OPS" \
  --db "$T/k.db" --dry-run --json --threads 0x2 --budget-evals 0 --case-budget 0.02 --batch 8 \
  --window 32768 --seed 18446744073709551615 --llm-temperature 0
expect_eq "  the dry run printed its context" "$(json_get "'user' in d")" "True"
finish
