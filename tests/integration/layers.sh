#!/usr/bin/env bash
# The layering check (scripts/check-layers.py): the source tree passes it,
# and on temporary copies of src/ and include/ it fails, naming file and
# line, for each kind of violation: a lower module including a higher one's
# public header (core -> kope/agent.h) or internal header (op -> eval/...),
# the CLI including an internal header (tool -> mem/sq.h), a public header
# including an internal one, a module folder that is not in the layer order,
# and a listed exception that no longer occurs (an accepted one passes). A clean copy passes, so the
# failures come from the injected lines.
. "$(dirname "$0")/../lib.sh"
CHECK="$KOPE_SRC/scripts/check-layers.py"

expect_exit 0 "the source tree passes the layering check" -- python3 "$CHECK" "$KOPE_SRC"
expect_match "it checked the tree" "$T/out" "check-layers: [0-9]+ files, 0 violations"

# fresh_copy: $T/tree, a copy of src/ and include/.
fresh_copy() {
  rm -rf "$T/tree"
  mkdir -p "$T/tree"
  cp -r "$KOPE_SRC/src" "$KOPE_SRC/include" "$T/tree/"
}

fresh_copy
expect_exit 0 "an unchanged copy passes" -- python3 "$CHECK" "$T/tree"

# violates DESC FILE LINE REGEX: append LINE to FILE in a fresh copy; the
# check must exit 1 and print REGEX.
violates() {
  fresh_copy
  mkdir -p "$(dirname "$T/tree/$2")"
  printf '%s\n' "$3" >>"$T/tree/$2"
  expect_exit 1 "$1 fails the check" -- python3 "$CHECK" "$T/tree"
  expect_match "$1 is named" "$T/out" "$4"
}

violates "core including kope/agent.h" src/core/err.c '#include "kope/agent.h"' \
  '^src/core/err\.c:[0-9]+: core \(layer 0\) includes kope/agent\.h of agent'
violates "op including an eval internal header" src/op/op.c '#include "eval/gate.h"' \
  '^src/op/op\.c:[0-9]+: op .* includes eval/gate\.h of eval'
violates "the CLI including mem/sq.h" src/tool/main.c '#include "mem/sq.h"' \
  '^src/tool/main\.c:[0-9]+: tool uses the public API only, includes mem/sq\.h'
violates "a public header including an internal one" include/kope/op.h '#include "core/expr.h"' \
  '^include/kope/op\.h:[0-9]+: public header includes internal header core/expr\.h'
violates "<kope/...> counts as well" src/mem/db.c '#include <kope/policy.h>' \
  '^src/mem/db\.c:[0-9]+: mem .* includes kope/policy\.h of policy'
violates "a module outside the layer order" src/extra/x.c '#include "kope/core.h"' \
  "^src/extra/x\.c: module 'extra' is not in the layer order"

# An accepted exception: the check's copy lists core -> kope/agent.h; the
# include passes there, and a tree without it reports the stale entry.
sed 's#^EXCEPTIONS = {#&\n    ("src/core/err.c", "kope/agent.h"): "test",#' "$CHECK" >"$T/check.py"
fresh_copy
expect_exit 1 "a stale exception fails the check" -- python3 "$T/check.py" "$T/tree"
expect_match "the stale exception is named" "$T/out" \
  '^src/core/err\.c: listed exception for kope/agent\.h no longer occurs'
printf '#include "kope/agent.h"\n' >>"$T/tree/src/core/err.c"
expect_exit 0 "a listed exception is accepted" -- python3 "$T/check.py" "$T/tree"
expect_exit 2 "a folder without src/ is a usage error" -- python3 "$CHECK" "$T/none"

finish
