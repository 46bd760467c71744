#!/usr/bin/env bash
# The operator suite as CI checks it: every spec loads, every seed and
# vendor baseline is correct on every case (correctness only here; the
# timed `kope ops check` runs in .ci/run), and every operator passes the
# no-compute screen (zeros, a constant, the mean, a copy of the input must
# all be rejected). The screen itself is tested on fixtures: an operator
# that only copies its input must be reported, with the kernel named.
. "$(dirname "$0")/../lib.sh"
OPS="$KOPE_SRC/ops"

# 1. The screen catches a leaky operator and passes a sound one.
expect_exit 1 "screen flags an operator a copy passes" -- "$KOPE" ops screen ident \
  --ops-dir "$KOPE_SRC/tests/ops_screen"
expect_match "the copy kernel is named" "$T/out" "copy kernel accepted"
expect_exit 0 "screen passes rowsum (min() in a shape)" -- "$KOPE" ops screen rowsum \
  --ops-dir "$KOPE_SRC/tests/ops_screen" --json
expect_eq "four kernels, all rejected" \
  "$(json_get "sum(k['rejected'] for o in d['operators'] for k in o['kernels'])")" 4
expect_exit 2 "screen of an unknown operator" -- "$KOPE" ops screen no_such_op \
  --ops-dir "$KOPE_SRC/tests/ops_screen"

# 2. The whole suite (under the sanitizers, where kope runs slower, one
# operator of each category: the code paths in kope are the same).
expect_exit 0 "ops list" -- "$KOPE" ops --ops-dir "$OPS" --json
SUBSET=()
if [ "${KOPE_SANITIZED:-0}" = 1 ]; then
  mapfile -t SUBSET < <(json_get "'\n'.join(sorted({o['category']: o['name'] for o in d['operators']}.values()))")
  echo "# sanitizer build: checking ${SUBSET[*]}"
fi
nops=$(json_get "len(d['operators'])")
[ ${#SUBSET[@]} -gt 0 ] && nops=${#SUBSET[@]}
echo "# $nops operators"
if [ "${KOPE_SANITIZED:-0}" != 1 ]; then
  if [ "$nops" -ge 56 ]; then ok "the suite has $nops >= 56 operators"; else
    not_ok "the suite has only $nops operators"; fi
fi
expect_exit 0 "every operator passes the no-compute screen" -- "$KOPE" ops screen \
  --ops-dir "$OPS" --json "${SUBSET[@]}"
expect_eq "screened every operator" "$(json_get "len(d['operators'])")" "$nops"
json_get "'\n'.join(o['name'] + ': ' + ', '.join(k['kind'] for k in o['kernels'] if not k['rejected']) for o in d['operators'] if not o['ok'])"
expect_exit 0 "every seed and vendor baseline is correct" -- "$KOPE" ops check \
  --ops-dir "$OPS" --no-timing --json "${SUBSET[@]}"
json_get "'\n'.join(o['name'] + ': ' + o['reason'] for o in d['operators'] if not o['ok'])"
# How much of its tolerance each accepted kernel used (worst error / bound):
# within [0, 1] for an accepted kernel, above 0 where outputs are inexact.
expect_eq "accepted kernels stay within their bounds" "$(json_get "sum(1 for o in d['operators'] \
  if o['ok'] and not (0 <= o['seed_max_error_ratio'] <= 1 and (o['vendor_max_error_ratio'] is None \
  or 0 <= o['vendor_max_error_ratio'] <= 1)))")" 0
expect_eq "inexact operators report a nonzero error ratio" "$(json_get "int(any(o['seed_max_error_ratio'] > 0 \
  for o in d['operators']))")" 1
json_get "'\n'.join('# thin tolerance margin: %s seed %.2f vendor %s' % (o['name'], o['seed_max_error_ratio'], \
  o['vendor_max_error_ratio']) for o in d['operators'] if max(o['seed_max_error_ratio'], \
  o['vendor_max_error_ratio'] or 0) > 0.5)"
finish
