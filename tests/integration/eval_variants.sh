#!/usr/bin/env bash
# Input variants on one seed: a search evaluates candidates on one seed
# (kope bench --eval-seeds 1), and seed index k draws variant k mod 4
# (plain, mixed-scale, x16, x1/16), so a one-seed evaluation once saw the
# plain inputs only. A real model's gelu kernel wrong for large negative
# inputs was promoted that way. The small cases now run every variant on
# any number of seeds (kope_eval_case_seeds): the kernel is rejected on one
# seed, the seed kernel still passes, and the report says so.
source "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"
K="$KOPE_SRC/tests/kernels/gelu_wrong_mixed_scale.c"

expect_exit 1 "one seed: the mixed-scale bug is caught" -- \
  "$KOPE" eval gelu "$K" --ops-dir "$OPS" --seeds 1 --no-timing --json
expect_eq "  verdict incorrect" "$(json_get "d['verdict']")" incorrect
expect_eq "  on a variant seed (not seed 0)" "$(json_get "d['mismatch']['seed'] > 0 if 'seed' in d['mismatch'] else 'no seed field'")" True
expect_exit 0 "one seed: the seed kernel passes every variant" -- \
  "$KOPE" eval gelu "$OPS/gelu/seed.c" --ops-dir "$OPS" --seeds 1 --no-timing --json
expect_eq "  a small case ran 4 seeds" "$(json_get "[c['seeds'] for c in d['cases']][0]")" 4
finish
