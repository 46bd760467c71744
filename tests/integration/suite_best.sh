#!/usr/bin/env bash
# The suite against the vendor libraries, as a user gets it (issue 19's
# performance bar): a tiny real bench (the tuner on two small operators,
# budget 2), then `kope ops check --best` on its results document: one
# table and two geomean lines (seeds, bests) vs vendor over perf cases,
# with --json and --format md, the figures taken from the bench's final
# re-measurement (recomputed here from the raw per-case figures), one
# table from several documents. And
# `kope ops check --from` renders a saved `check --json` document without
# running anything.
. "$(dirname "$0")/../lib.sh"
R="$T/results.json"
FAST=(--eval-seeds 1 --case-budget 0.02 --final-seeds 2 --final-case-budget 0.03)

# 1. A tiny real bench: the tuner on relu and sum (both have a vendor).
expect_exit 0 "tiny bench" -- "$KOPE" bench --ops relu,sum --configs tuner+memory \
  --budget-evals 2 --seed 5 "${FAST[@]}" --out "$R"

# 2. The table and the two lines.
expect_exit 0 "ops check --best" -- "$KOPE" ops check --best "$R"
cp "$T/out" "$T/best.txt"
expect_match "a row per operator: relu" "$T/best.txt" "^relu +[0-9]+ +[0-9.]+x +[0-9.]+x  "
expect_match "a row per operator: sum" "$T/best.txt" "^sum +[0-9]+ +[0-9.]+x +[0-9.]+x  "
for what in seeds best; do
  line=$(grep -E "^suite $what: geomean [0-9.]+x vs vendor over [0-9]+ operators" "$T/best.txt")
  if [ -n "$line" ]; then ok "$what line present"; else not_ok "no $what line: $(cat "$T/best.txt")"; fi
  g=$(sed -E 's/^suite [a-z]+: geomean ([0-9.]+)x vs vendor over ([0-9]+) operators.*/\1 \2/' <<<"$line")
  expect_eq "$what: geomean > 0 over the 2 operators" \
    "$(python3 -c "import sys; g, n = sys.argv[1].split(); print(float(g) > 0 and int(n))" "$g")" 2
done

# 3. --json: the same figures, and they are the final re-measurement's.
expect_exit 0 "ops check --best --json" -- "$KOPE" ops check --best "$R" --json
cp "$T/out" "$T/best.json"
expect_eq "two operators" "$(json_get "[o['name'] for o in d['operators']]")" "['relu', 'sum']"
expect_eq "seeds' and bests' geomeans positive" \
  "$(json_get "all(d['summary'][k]['geomean_speedup_vendor'] > 0 and d['summary'][k]['operators'] == 2 for k in ('seeds', 'best'))")" True
expect_eq "text lines print the JSON figures" \
  "$(json_get "'%.3f' % d['summary']['best']['geomean_speedup_vendor']")" \
  "$(sed -nE 's/^suite best: geomean ([0-9.]+)x.*/\1/p' "$T/best.txt")"
# independent recomputation from the document: per operator the geomean
# over perf cases of the per-case vendor medians; the best kernel is the
# accepted non-seed one with the highest perf-case geomean vs reference
cat > "$T/recompute.py" <<'EOF'
import json, math, sys
doc = json.load(open(sys.argv[1])); out = json.load(open(sys.argv[2]))
def gm(k, key):
    v = [c[key]['median'] for c in k['report']['cases']
         if c.get('role') != 'check' and c.get('timed', True) and c.get(key) and c[key]['median'] > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else 0
ok = True
logs = {'seeds': [], 'best': []}
for f in doc['final']:
    seed = [k for k in f['kernels'] if k['config'] == 'seed'][0]
    runs = [k for k in f['kernels'] if k['config'] != 'seed' and k['report']['accepted']]
    best = max(runs, key=lambda k: gm(k, 'speedup_ref')) if runs else seed
    row = [o for o in out['operators'] if o['name'] == f['op']][0]
    for what, k in (('seed', seed), ('best', best)):
        want = gm(k, 'speedup_vendor')
        ok &= abs(row[what]['speedup_vendor'] - want) <= 1e-4 * want
    ok &= row['best']['config'] == best['config']
    logs['seeds'].append(math.log(gm(seed, 'speedup_vendor')))
    logs['best'].append(math.log(gm(best, 'speedup_vendor')))
for k, v in logs.items():
    want = math.exp(sum(v) / len(v))
    ok &= abs(out['summary'][k]['geomean_speedup_vendor'] - want) <= 1e-4 * want
print(ok)
EOF
expect_eq "figures recomputed from the final re-measurement" \
  "$(python3 "$T/recompute.py" "$R" "$T/best.json")" True

# 4. Markdown.
expect_exit 0 "ops check --best --format md" -- "$KOPE" ops check --best "$R" --format md
expect_match "markdown head" "$T/out" "^\\| operator \\| perf cases \\| vendor baseline \\|"
expect_match "markdown relu row" "$T/out" "^\\| relu \\| [0-9]+ \\| oneDNN"
expect_match "markdown seeds line" "$T/out" "^suite seeds: geomean [0-9.]+x vs vendor"

# 4b. Several documents, one table: here only relu's part of the bench
# and then the whole bench; an operator in both takes the last one's row.
python3 -c "
import json; d = json.load(open('$R'))
d['operators'] = [o for o in d['operators'] if o['name'] == 'relu']
d['final'] = [f for f in d['final'] if f['op'] == 'relu']
json.dump(d, open('$T/relu-only.json', 'w'))"
expect_exit 0 "--best on two documents" -- "$KOPE" ops check --best "$T/relu-only.json" "$R" --json
expect_eq "one row per operator, from the last document" \
  "$(json_get "[(o['name'], o['document']) for o in d['operators']]")" "[('relu', 1), ('sum', 1)]"
expect_eq "same summary as the whole bench alone" \
  "$(json_get "d['summary']['best']['geomean_speedup_vendor']")" \
  "$(json_file "$T/best.json" "d['summary']['best']['geomean_speedup_vendor']")"
expect_exit 0 "--best on relu's part alone" -- "$KOPE" ops check --best "$T/relu-only.json" --json
expect_eq "relu's part: one operator" "$(json_get "d['summary']['seeds']['operators']")" 1

# 5. Bad input: not a bench document, a missing file.
echo '{"format": "other"}' > "$T/other.json"
expect_exit 2 "--best refuses another document" -- "$KOPE" ops check --best "$T/other.json"
expect_match "says why" "$T/err" "not a kope-bench results document"
expect_exit 2 "--best: missing file" -- "$KOPE" ops check --best "$T/missing.json"
expect_exit 2 "--best: a bad second document" -- "$KOPE" ops check --best "$R" "$T/other.json"

# 6. --from: a saved check document rendered without running.
expect_exit 0 "ops check --json (saved)" -- "$KOPE" ops check relu --json --seeds 1
cp "$T/out" "$T/check.json"
expect_exit 0 "ops check --from --format md" -- "$KOPE" ops check --from "$T/check.json" --format md
expect_match "md row from the saved figures" "$T/out" \
  "^\\| relu \\| elementwise \\| 1 \\| [0-9]+ \\| $(python3 -c "import json; print(json.load(open('$T/check.json'))['operators'][0]['timed_cases'])") \\| [0-9]+ \\| oneDNN eltwise_relu.* \\| correct \\| correct \\| $(python3 -c "import json; print('%.3f' % json.load(open('$T/check.json'))['operators'][0]['speedup_ref'])")x \\|"
expect_match "summary line from the saved figures" "$T/out" \
  "^suite seeds: geomean $(python3 -c "import json; print('%.3f' % json.load(open('$T/check.json'))['summary']['geomean_speedup_ref'])")x vs reference over 1 operators"
# an older document without vendor_name: the name comes from the spec
python3 -c "
import json; d = json.load(open('$T/check.json'))
for o in d['operators']: o.pop('vendor_name', None)
json.dump(d, open('$T/old.json', 'w'))"
expect_exit 0 "ops check --from an older document" -- "$KOPE" ops check --from "$T/old.json" --format md
expect_match "vendor name from the spec" "$T/out" "^\\| relu \\|.*\\| oneDNN eltwise_relu"
expect_exit 2 "--from refuses a bench document" -- "$KOPE" ops check --from "$T/other.json"

finish
