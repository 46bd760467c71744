#!/usr/bin/env bash
# Case roles (op.json "role": check | perf) as a user meets them, on the
# test operator tests/ops/roles (one 7-element check case, two perf cases):
# check cases are judged on every seed but never timed or scored, so a
# kernel slow only on the check case is scored fast and promoted, a kernel
# wrong only on the check case is rejected (the reason names the case), the
# JSON report has no timing for check cases, and a spec without roles
# (scale2) times every case as before.
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/tests/ops"
K="$KOPE_SRC/tests/kernels/roles"
TIMING=(--seeds 2 --budget 0.05 --rounds 5)
cd "$T" || exit 1

# 1. kope ops show lists each case's role and source.
expect_exit 0 "ops show roles" -- "$KOPE" ops show roles --ops-dir "$OPS"
expect_match "check case listed with its role" "$T/out" "0  check n=7 tiny_prime"
expect_match "perf case listed with its source" "$T/out" "perf  n=65536 l2_sized \(source: a 256 KiB"

# 2. Slow only on the check case (20000 passes), timed against a base 64x
# slower on the perf cases: over all three cases (as before roles) the
# candidate would lose, (64 * 64 / 20000)^(1/3) = 0.59x; over the perf cases
# it wins by far more than the noise of a loaded machine.
expect_exit 0 "slow-on-check kernel accepted" -- "$KOPE" eval roles "$K/fast_slow_check.c" \
  --ops-dir "$OPS" --base "$K/slow_perf.c" --json "${TIMING[@]}"
cp "$T/out" "$T/fast.json"
expect_eq "check case: role" "$(json_get "d['cases'][0]['role']")" check
expect_eq "check case: name and shape" "$(json_get "d['cases'][0]['name'] + ' ' + d['cases'][0]['shape']")" "tiny_prime n=7"
expect_eq "check case: not timed" "$(json_get "d['cases'][0]['timed']")" False
expect_eq "check case: no timing in the report" \
  "$(json_get "[k for k in ('seconds','speedup_ref','samples','rounds','speedup_base') if k in d['cases'][0]]")" "[]"
expect_eq "perf cases: timed" "$(json_get "[c['timed'] for c in d['cases'][1:]]")" "[True, True]"
expect_eq "perf case: role and name" "$(json_get "d['cases'][2]['role'] + ' ' + d['cases'][2]['name']")" "perf dram_sized"
expect_eq "geomean over the perf cases only" \
  "$(json_get "abs(d['speedup_ref'] - (d['cases'][1]['speedup_ref']['median'] * d['cases'][2]['speedup_ref']['median']) ** 0.5) < 1e-4 * d['speedup_ref']")" True
expect_eq "vs base: rounds of the perf cases only" \
  "$(json_get "d['vs_base']['rounds'] == sum(c['rounds'] for c in d['cases'][1:])")" True
if json_get "d['vs_base']['speedup'] > 4" | grep -q True; then ok "faster than the base on the perf cases"
else not_ok "vs base: $(json_get "d['vs_base']")"; fi
expect_match "reason counts the timed cases" "$T/out" "all 3 cases correct on 2 seeds \(2 timed\)"
# the policy's feedback gives each perf case against the base (the incumbent) too
expect_eq "feedback: perf case vs reference and vs incumbent" \
  "$(json_get "all(('x [' in l and ' vs reference, ' in l and ' vs incumbent, ' in l) for l in d['feedback'].splitlines() if 'perf' in l or 'sized' in l)")" True
expect_eq "feedback: the check case stays untimed" \
  "$(json_get "[l for l in d['feedback'].splitlines() if 'tiny_prime' in l][0].endswith('correct (check case, not timed)')")" True

# the same pair the other way round: the ratio is not one-sided by construction
expect_exit 0 "slow-on-perf kernel vs the fast one" -- "$KOPE" eval roles "$K/slow_perf.c" \
  --ops-dir "$OPS" --base "$K/fast_slow_check.c" --json "${TIMING[@]}"
if json_get "d['vs_base']['speedup'] < 0.25" | grep -q True; then ok "slower than the base on the perf cases"
else not_ok "vs base: $(json_get "d['vs_base']")"; fi

# text report: per-case lines with role, name and shape
expect_exit 0 "text report" -- "$KOPE" eval roles "$K/fast_slow_check.c" --ops-dir "$OPS" "${TIMING[@]}"
expect_match "check case line" "$T/out" "0 +check tiny_prime +n=7 +correct, not timed"
expect_match "perf case line" "$T/out" "2 +perf +dram_sized +n=1048576 +[0-9.e-]+ "
expect_match "geomean over the timed cases" "$T/out" "geomean over the timed cases"

# 3. Wrong only on the check case: rejected, and the reason names the case.
expect_exit 1 "wrong on the check case only: rejected" -- "$KOPE" eval roles \
  "$K/wrong_on_check.c" --ops-dir "$OPS" --json "${TIMING[@]}"
expect_eq "verdict incorrect" "$(json_get "d['verdict']")" incorrect
expect_match "reason names the case by name and shape" "$T/out" 'case 0 \\"tiny_prime\\" \(n=7\)'
expect_eq "mismatch names the case" "$(json_get "d['mismatch']['case_name']")" tiny_prime

# 4. Promotion: the tuner's FAST=1 (fast on perf cases, thousands of times
# slower on the check case) replaces the seed.
expect_exit 0 "tuner session on roles" -- "$KOPE" optimize roles --ops-dir "$OPS" \
  --db "$T/o.db" --budget-evals 1 --seed 1 --json
best=$(json_get "d['best_case']")
expect_eq "FAST=1 promoted" "$(sqlite3 "$T/o.db" "select thought_id from cases where id=$best")" "algorithm.fast=1"
if json_get "d['best_speedup_ref'] > 2 * d['seed_speedup_ref']" | grep -q True; then
  ok "best scored faster than the seed"; else not_ok "best not faster: $(cat "$T/out")"; fi

# 5. kope ops check: the suite summary over the timed cases
expect_exit 0 "ops check roles" -- "$KOPE" ops check roles --ops-dir "$OPS" --json --seeds 1
expect_eq "timed cases counted" "$(json_get "d['operators'][0]['timed_cases']")" 2
expect_eq "summary geomean is the seed's" \
  "$(json_get "abs(d['summary']['geomean_speedup_ref'] - d['operators'][0]['speedup_ref']) < 1e-4 * d['operators'][0]['speedup_ref']")" True
expect_exit 0 "ops check text" -- "$KOPE" ops check roles --ops-dir "$OPS" --seeds 1
expect_match "summary line" "$T/out" "suite seeds: geomean [0-9.]+x vs reference over 1 operators"

# 6. A spec without roles (scale2): every case is judged, timed and scored.
expect_exit 0 "role-less spec" -- "$KOPE" eval scale2 "$OPS/scale2/seed.c" --ops-dir "$OPS" \
  --json --seeds 1 --budget 0.02 --rounds 3
expect_eq "every case timed, role both" \
  "$(json_get "all(c['timed'] and c['role'] == 'both' and 'seconds' in c for c in d['cases'])")" True
expect_eq "all 8 cases timed" "$(json_get "len([c for c in d['cases'] if c['timed']])")" 8

finish
