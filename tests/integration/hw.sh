#!/usr/bin/env bash
# Integration test for `kope hw`: --json prints one valid JSON document with
# positive measured figures, a second run reuses the cache, the human table
# shows the roofline and the per-level bandwidth table, a cached suspect
# mark is shown, --help exits 0 and bad usage exits 2.
set -euo pipefail

: "${KOPE:?KOPE must name the kope binary}"
: "${KOPE_TEST_TMP:?KOPE_TEST_TMP must name a scratch directory}"
T=$KOPE_TEST_TMP
rm -rf "$T"
mkdir -p "$T"

fail() {
  echo "hw.sh: FAIL: $*" >&2
  exit 1
}

# Exit status of a command, without tripping set -e.
status() {
  local rc=0
  "$@" >"$T/last.out" 2>"$T/last.err" || rc=$?
  echo "$rc"
}

# 1. First run measures; stdout is one JSON document.
"$KOPE" hw --json --cache "$T/hw.json" >"$T/first.json" 2>"$T/first.err" ||
  fail "kope hw --json exited $? ($(cat "$T/first.err"))"
python3 - "$T/first.json" <<'EOF' || fail "first --json output is wrong: $(cat "$T/first.json")"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("cpu_model", "cores", "threads", "simd", "cache", "compiler",
          "peak_gflops_fp32", "bandwidth_gbs", "fingerprint", "from_cache",
          "measure_seconds", "measured_at"):
    assert k in d, "missing key " + k
assert d["peak_gflops_fp32"] > 0, d["peak_gflops_fp32"]
assert d["bandwidth_gbs"] > 0, d["bandwidth_gbs"]
assert d["from_cache"] is False
assert d["threads"] >= 1 and 1 <= d["cores"] <= d["threads"]
assert isinstance(d["simd"], list)
assert set(d["cache"]) >= {"l1d", "l2", "l3"}
lv = d["bandwidth_levels"]
assert set(lv) == {"l1d", "l2", "l3", "dram"}, lv
assert lv["dram"]["all_threads_gbs"] == d["bandwidth_gbs"]
assert lv["dram"]["one_thread_gbs"] > 0
for k in ("l1d", "l2", "l3"):
    # a level of known size is measured on all threads and on one
    assert (lv[k]["all_threads_gbs"] > 0) == (d["cache"][k] > 0), (k, lv[k])
    assert (lv[k]["one_thread_gbs"] > 0) == (d["cache"][k] > 0), (k, lv[k])
    assert lv[k]["bytes"] == d["cache"][k]
assert d["peak_gflops_fp32_one_thread"] > 0
assert d["suspect"] is None or isinstance(d["suspect"], str)
assert d["cache_source"] in ("sysfs", "cpuid")
EOF
[ -f "$T/hw.json" ] || fail "cache file $T/hw.json was not written"

# 2. Second run comes from the cache with the same figures.
"$KOPE" hw --json --cache "$T/hw.json" >"$T/second.json" ||
  fail "second kope hw --json failed"
python3 - "$T/first.json" "$T/second.json" <<'EOF' || fail "second run did not reuse the cache: $(cat "$T/second.json")"
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert b["from_cache"] is True
assert a["peak_gflops_fp32"] == b["peak_gflops_fp32"]
assert a["bandwidth_gbs"] == b["bandwidth_gbs"]
assert a["fingerprint"] == b["fingerprint"]
EOF

# 3. The human table.
"$KOPE" hw --cache "$T/hw.json" >"$T/table.txt" || fail "kope hw (table) failed"
for word in model threads GFLOP/s GB/s FLOP/byte cached; do
  grep -q "$word" "$T/table.txt" || fail "table lacks '$word': $(cat "$T/table.txt")"
done

# 3b. The per-level table, and a suspect mark kept in the cache is shown.
for word in L1d L2 L3 DRAM "all threads" "one thread"; do
  grep -q "$word" "$T/table.txt" || fail "table lacks '$word': $(cat "$T/table.txt")"
done
python3 - "$T/hw.json" <<'EOF' || fail "cannot mark the cache suspect"
import json, sys
d = json.load(open(sys.argv[1]))
d["suspect"] = "test mark: measured under load"
json.dump(d, open(sys.argv[1], "w"))
EOF
"$KOPE" hw --cache "$T/hw.json" >"$T/table2.txt" || fail "kope hw (suspect table) failed"
grep -q "^suspect .*test mark: measured under load" "$T/table2.txt" ||
  fail "the suspect mark is not shown: $(cat "$T/table2.txt")"
"$KOPE" hw --json --cache "$T/hw.json" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["from_cache"] and d["suspect"].startswith("test mark")' ||
  fail "--json does not carry the suspect mark"

# 4. A corrupt cache is re-measured.
echo 'not json {{{' >"$T/hw.json"
"$KOPE" hw --json --cache "$T/hw.json" >"$T/third.json" || fail "corrupt cache made kope hw fail"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["from_cache"] is False and d["peak_gflops_fp32"] > 0' \
  "$T/third.json" || fail "corrupt cache was not re-measured"

# 5. Help and usage errors.
[ "$(status "$KOPE" hw --help)" = 0 ] || fail "kope hw --help did not exit 0"
grep -q "usage: kope hw" "$T/last.out" || fail "--help printed no usage on stdout"
[ "$(status "$KOPE" hw --bogus)" = 2 ] || fail "kope hw --bogus did not exit 2"
grep -q "bogus" "$T/last.err" || fail "--bogus gave no message on stderr"
[ ! -s "$T/last.out" ] || fail "--bogus wrote to stdout"
[ "$(status "$KOPE" hw --cache)" = 2 ] || fail "kope hw --cache without PATH did not exit 2"
[ "$(status "$KOPE" hw extra)" = 2 ] || fail "kope hw extra did not exit 2"

echo "hw.sh: all checks passed"
