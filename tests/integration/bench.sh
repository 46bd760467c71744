#!/usr/bin/env bash
# kope bench and kope report as a user runs them: a small bench (3
# operators, budget 4, three configurations) with the memory protocol
# checked in its results and stores; the report as HTML and Markdown; and
# the HTML rendered in headless Chromium (screenshot not blank, key
# elements in the DOM). bench_cross.sh covers the cross-target settings,
# skipped LLM configurations and bad input.
. "$(dirname "$0")/../lib.sh"
R="$T/results.json"
W="$R.d"
# Cheap timing settings so the bench fits CI on a small machine; the
# protocol is the same as with the defaults.
FAST=(--eval-seeds 1 --case-budget 0.02 --final-seeds 2 --final-case-budget 0.03)

# 1. The small bench: 3 operators, budget 4, three configurations.
expect_exit 0 "small bench" -- "$KOPE" bench --ops relu,softmax,rms_norm \
  --configs tuner+memory,tuner-nomemory,random --budget-evals 4 --seed 3 "${FAST[@]}" --out "$R" --json
cp "$T/out" "$T/bench-stdout.json"
cp "$T/err" "$T/bench-stderr.txt"
j() { json_file "$R" "$1"; }
expect_eq "format" "$(j "d['format'] + ' ' + str(d['schema'])")" "kope-bench 1"
expect_eq "recorded order" "$(j "','.join(d['settings']['order'])")" "relu,softmax,rms_norm"
expect_eq "order file" "$(tr '\n' , < "$W/order.txt")" "relu,softmax,rms_norm,"
expect_eq "one run per (config, operator)" "$(j "len(d['runs'])")" 9
expect_eq "runs interleaved: each operator under every configuration in turn" \
  "$(j "' '.join(r['op'][:2]+r['config'][:2] for r in d['runs'])")" \
  "retu retu rera sotu sotu sora rmtu rmtu rmra"
expect_eq "budget honoured" "$(j "all(r.get('evaluations', 0) <= 4 for r in d['runs'])")" True
for c in tuner+memory tuner-nomemory random; do
  db="$W/$c/r0/memory.db"
  expect_eq "$c: its own store holds its 3 sessions, in order" \
    "$(q "$db" "select group_concat(op) from (select op from sessions order by id)")" "relu,softmax,rms_norm"
done
expect_eq "memory carried: softmax's session saw relu's Cases in the same store" \
  "$(q "$W/tuner+memory/r0/memory.db" "select count(distinct op) from cases")" 3
expect_eq "curves start at the seed and have budget+1 points" \
  "$(j "all(len(r['curve']) == r['evaluations'] + 1 for r in d['runs'] if 'curve' in r)")" True
expect_eq "forest per run, rooted at the seed" \
  "$(j "all(r['forest'][0]['thought'] == 'start.seed' for r in d['runs'] if 'forest' in r)")" True
expect_eq "final: one batch per operator with the seed and every passed run" \
  "$(j "[len(f['kernels']) == 1 + sum(1 for r in d['runs'] if r['op'] == f['op'] and r['passed']) for f in d['final']]")" \
  "[True, True, True]"
expect_eq "final reports keep raw samples" \
  "$(j "all(len(c['samples']['candidate']) >= 2 for f in d['final'] for k in f['kernels'] if k['report']['accepted'] for c in k['report']['cases'] if c.get('timed', True))")" True
expect_eq "a common base kernel in each batch" \
  "$(j "all(sum(k['base'] for k in f['kernels']) == 1 for f in d['final'])")" True
expect_eq "cases total = 3 operators' cases" \
  "$(j "d['metrics']['configs']['random']['cases_total']")" \
  "$(j "sum(o['ncases'] for o in d['operators'])")"
expect_eq "pass rate consistent with passed cases" \
  "$(j "all(abs(m['pass_rate'] - m['cases_passed'] / m['cases_total']) < 1e-5 for m in d['metrics']['configs'].values())")" True
expect_eq "fast_p is decreasing in p" \
  "$(j "all(m['fast_p']['1.0'] >= m['fast_p']['1.5'] >= m['fast_p']['2.0'] for m in d['metrics']['configs'].values())")" True
expect_eq "score in [0, 100]" "$(j "all(0 <= m['score'] <= 100 for m in d['metrics']['configs'].values())")" True
expect_eq "paired ratios for the 3 pairs" "$(j "len(d['paired'])")" 3
expect_eq "environment recorded" "$(j "bool(d['environment']['cpu']) and bool(d['environment']['compiler']) and d['environment']['harness_version'] == d['final'][0]['kernels'][0]['report']['harness_version']")" True
expect_eq "search settings recorded: vendor timed only in the final re-measurement" \
  "$(j "d['settings']['search_eval']['vendor']")" False
expect_eq "search Cases carry no vendor speedup (the vendor was not timed)" \
  "$(q "$W/random/r0/memory.db" "select count(*) from cases where speedup_vendor > 0")" 0
expect_eq "the final re-measurement times the vendor (all three have one)" \
  "$(j "all(k['report']['speedup_vendor'] > 0 for f in d['final'] for k in f['kernels'] if k['report']['accepted'])")" True
expect_eq "--json prints the metrics" "$(python3 -c "import json; print(sorted(json.load(open('$T/bench-stdout.json'))['metrics']['configs']))")" \
  "['random', 'tuner+memory', 'tuner-nomemory']"
expect_match "progress on stderr" "$T/bench-stderr.txt" "final re-measurement: rms_norm"

# 2. Reports.
expect_exit 0 "html report" -- "$KOPE" report "$R" --out "$T/report.html" --forest-op softmax --title "CI bench"
H="$T/report.html"
for pat in "<title>CI bench</title>" "id='summary'" "id='ablation-memory'" "id='ablation-random'" \
           "class='chart bars'" "class='parity'" "class='chart curves'" "class='chart tokens'" \
           "class='chart forest'" "Operator <b>softmax</b>" "tuner-nomemory"; do
  expect_match "html has $pat" "$H" "$pat"
done
if grep -Eq "<script|src=['\"]http|href=['\"]http" "$H"; then not_ok "html is not self-contained"; else ok "html is self-contained (no scripts, no links out)"; fi
expect_exit 0 "markdown report" -- "$KOPE" report "$R" --format md
expect_match "markdown summary table" "$T/out" "^\\| tuner\\+memory \\| [0-9.]+% \\("
expect_exit 2 "report refuses other JSON" -- "$KOPE" report "$W/order.txt"

# 3. The report in a real browser.
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  not_ok "chromium not installed (scripts/setup.sh installs it)"
else
  run_chrome() { timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$T/chrome-profile" "$@" 2>>"$T/chrome.log"; }
  run_chrome --window-size=1200,3000 --screenshot="$T/report.png" "file://$H" >/dev/null
  if [ -s "$T/report.png" ]; then ok "screenshot taken"; else not_ok "no screenshot (see $T/chrome.log)"; fi
  stats=$(python3 - "$T/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ctype]
raw, stride, prev, colours, ink, seen = zlib.decompress(idat), w * bpp, None, set(), 0, 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i] if prev else 0
        c = prev[i - bpp] if prev and i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0:
        for x in range(0, w, 4):
            px = bytes(line[x * bpp:x * bpp + 3]); colours.add(px); seen += 1
            ink += px != b'\xff\xff\xff'
print(len(colours), round(100.0 * ink / seen, 1))
PY
)
  ncol=${stats% *}; inkpct=${stats#* }
  if [ "${ncol:-0}" -ge 20 ]; then ok "screenshot has $ncol colours"; else not_ok "screenshot looks blank ($stats)"; fi
  if python3 -c "import sys; sys.exit(0 if float('${inkpct:-0}') > 3 else 1)"; then ok "screenshot $inkpct% non-white"; else not_ok "screenshot nearly white ($stats)"; fi
  run_chrome --dump-dom "file://$H" >"$T/dom.html"
  for pat in '<h1 id="title">CI bench</h1>' '<table class="summary">' '<svg class="chart bars"' \
             '<polyline class="curve"' '<svg class="chart forest"' '<td>tuner+memory</td>'; do
    if grep -qF "$pat" "$T/dom.html"; then ok "DOM has $pat"; else not_ok "DOM lacks $pat"; fi
  done
fi
finish
