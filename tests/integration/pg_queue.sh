#!/usr/bin/env bash
# The PostgreSQL engine, work queue and workers against a real PostgreSQL
# 15 server (tests/pg_lib.sh): 4 workers and 2 concurrent `kope optimize`
# sessions write one store; one worker is killed with SIGKILL mid-job.
# Checks: every job done exactly once (state done, one recorded session),
# the killed job reclaimed (claimed twice), no Case lost or duplicated
# (each session's steps 0..n-1 once), lineage intact (every prev_case_id
# an older Case of the same session), stored d-scores equal to a serial
# rescore (memory check; rescore changes nothing), digests equal to a full
# recomputation, queue on SQLite refused (exit 2), a worker of another
# harness version refused (exit 3), no password in messages; and a round
# trip SQLite -> PostgreSQL -> SQLite keeping every Case, Journal, digest
# and link.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../pg_lib.sh"
pg_require
pg_start || { echo "FAIL: cannot start PostgreSQL"; exit 1; }
cd "$KOPE_SRC"
URL="$KOPE_PG_URL"
OPT=(--eval-seeds 1 --case-budget 0.02 --no-vendor --rounds 3 --threads 1)
EV=3; [ "${KOPE_SANITIZED:-0}" = 1 ] && EV=2   # sanitized kope is slower

# ---- the queue refuses SQLite; bad input ---------------------------------
expect_exit 2 "queue on an SQLite store is refused" -- "$KOPE" queue list --db "$T/x.db"
expect_match "the refusal says why" "$T/err" "needs a PostgreSQL store"
expect_exit 2 "queue add without operators" -- "$KOPE" queue add --db "$URL"
expect_exit 0 "queue --help" -- "$KOPE" queue --help
expect_exit 0 "worker --help" -- "$KOPE" worker --help
expect_exit 3 "an unreachable server with a password" -- \
  "$KOPE" memory stats --db "postgresql://kope:s3cretpw@/kope?host=$T/nosock"
if grep -q s3cretpw "$T/err"; then not_ok "the password appears in a message"; else
  ok "the password is masked in messages"; fi

# ---- queue 4 jobs, 4 workers, 2 concurrent optimize sessions --------------
expect_exit 0 "queue add 4 jobs" -- "$KOPE" queue add relu sigmoid relu leaky_relu --db "$URL" \
  --target cpu --policy tuner --budget-evals "$EV" --json -- "${OPT[@]}"
expect_eq "4 job ids" "$(json_get 'len(d["jobs"])')" 4

for i in 1 2 3 4; do
  "$KOPE" worker --db "$URL" --lease 3 --poll 0.5 >"$T/w$i.out" 2>"$T/w$i.err" &
  eval "W$i=\$!"
done
"$KOPE" optimize relu --db "$URL" --policy tuner --budget-evals "$EV" "${OPT[@]}" --json \
  >"$T/o1.json" 2>"$T/o1.err" &
O1=$!
"$KOPE" optimize sigmoid --db "$URL" --policy tuner --budget-evals "$EV" "${OPT[@]}" --json \
  >"$T/o2.json" 2>"$T/o2.err" &
O2=$!
# kill the worker of the first running job as soon as it holds one
victim=""
for _ in $(seq 1 200); do
  victim=$(pg_psql "SELECT id || ' ' || worker FROM kope_jobs WHERE state = 'running' ORDER BY id LIMIT 1")
  [ -n "$victim" ] && break
  sleep 0.1
done
vjob=${victim%% *}; vpid=${victim##*:}
if [ -n "$victim" ] && kill -KILL "$vpid" 2>/dev/null; then ok "killed worker $vpid holding job $vjob"; else
  not_ok "no running job to kill ($victim)"; fi
wait "$O1"; r1=$?; wait "$O2"; r2=$?
for i in 1 2 3 4; do eval "p=\$W$i"; [ "$p" = "$vpid" ] || wait "$p"; done
wait 2>/dev/null
expect_eq "both optimize sessions ran" "$r1$r2" "00"

# ---- every job done exactly once; the killed one reclaimed ----------------
expect_exit 0 "queue list --json" -- "$KOPE" queue list --db "$URL" --json
expect_eq "all 4 jobs done" "$(json_get 'd["progress"]["done"]')" 4
expect_eq "4 distinct sessions recorded" \
  "$(json_get 'len(set(j["session"] for j in d["jobs"] if j["session"]))')" 4
expect_eq "the killed job was reclaimed" \
  "$(json_get "[j['claims'] for j in d['jobs'] if j['id'] == ${vjob:-0}][0] >= 2")" True
expect_eq "no job finished by the killed worker" \
  "$(json_get "sum(1 for j in d['jobs'] if j['worker'].endswith(':${vpid:-x}'))")" 0

# ---- no Case lost or duplicated; lineage intact --------------------------
done_sessions=$(json_get '",".join(str(j["session"]) for j in d["jobs"])')
s1=$(python3 -c "import json; print(json.load(open('$T/o1.json'))['session'])")
s2=$(python3 -c "import json; print(json.load(open('$T/o2.json'))['session'])")
expect_eq "each finished session has steps 0..n-1 exactly once" "$(pg_psql "
  SELECT count(*) FROM (SELECT session_id, count(*) n, count(DISTINCT step) d, max(step) m
  FROM cases WHERE session_id IN ($done_sessions,$s1,$s2) GROUP BY 1) x
  WHERE n <> d OR m <> n - 1")" 0
expect_eq "6 finished sessions have Cases" "$(pg_psql "
  SELECT count(DISTINCT session_id) FROM cases WHERE session_id IN ($done_sessions,$s1,$s2)")" 6
expect_eq "every prev_case_id is an older Case of the same session" "$(pg_psql "
  SELECT count(*) FROM cases c LEFT JOIN cases p ON p.id = c.prev_id
  WHERE c.prev_id IS NOT NULL AND (p.id IS NULL OR p.id >= c.id OR p.session_id <> c.session_id)")" 0
expect_eq "one score row and one text document per Case" "$(pg_psql "
  SELECT (SELECT count(*) FROM cases) = (SELECT count(*) FROM case_scores) AND
         (SELECT count(*) FROM cases) = (SELECT count(*) FROM mem_docs WHERE kind = 0)")" t

# ---- scores and digests equal a serial recomputation ---------------------
expect_exit 0 "memory check: stored r, label, d equal a serial rescore" -- \
  "$KOPE" memory check --db "$URL"
"$KOPE" memory check --db "$URL" 2>&1 | grep -q "scores: .* Cases consistent" &&
  ok "scores consistent" || not_ok "scores not reported consistent"
pg_psql "SELECT id, d_score, succ_sum, n_succ, label FROM case_scores ORDER BY id" >"$T/scores1"
pg_psql "SELECT target, category, layer, thought_id, attempts, n_correct, n_effective, n_partial,
  n_ineffective, n_negative, median_ratio FROM digests ORDER BY 1, 2, 3, 4" >"$T/dig1"
"$KOPE" memory digests --refresh --db "$URL" >/dev/null 2>&1
pg_psql "SELECT target, category, layer, thought_id, attempts, n_correct, n_effective, n_partial,
  n_ineffective, n_negative, median_ratio FROM digests ORDER BY 1, 2, 3, 4" >"$T/dig2"
if cmp -s "$T/dig1" "$T/dig2" && [ -s "$T/dig1" ]; then ok "digests equal a full recomputation"; else
  not_ok "digests differ from a recomputation"; diff "$T/dig1" "$T/dig2" | head -5; fi

# ---- harness version -----------------------------------------------------
pg_psql "INSERT INTO kope_jobs(op, target, policy, budget_evals, harness) VALUES
  ('relu', 'cpu', 'tuner', 1, 'kope-eval-0')" >/dev/null
expect_exit 3 "a worker of another harness version is refused" -- "$KOPE" worker --db "$URL"
expect_match "the refusal names both versions" "$T/err" "kope-eval-0.*kope-eval"
pg_psql "DELETE FROM kope_jobs WHERE harness = 'kope-eval-0'" >/dev/null

# ---- Ctrl-C: the current Case is finished, the job given back -------------
"$KOPE" queue add relu --db "$URL" --budget-evals 20 -- "${OPT[@]}" >/dev/null 2>&1
before=$(pg_psql "SELECT count(*) FROM cases")
"$KOPE" worker --db "$URL" --lease 5 >"$T/wi.out" 2>"$T/wi.err" &
WI=$!
for _ in $(seq 1 100); do
  [ "$(pg_psql "SELECT count(*) FROM kope_jobs WHERE state = 'running'")" = 1 ] && break
  sleep 0.1
done
sleep 3
kill -INT "$WI"
wait "$WI"; wrc=$?
expect_eq "an interrupted worker exits 0" "$wrc" 0
expect_eq "its job is pending again" "$(pg_psql "SELECT state FROM kope_jobs ORDER BY id DESC LIMIT 1")" pending
expect_eq "the interrupted session's Cases were recorded" \
  "$(pg_psql "SELECT count(*) > $before FROM cases")" t
pg_psql "DELETE FROM kope_jobs WHERE state = 'pending'" >/dev/null

# ---- round trip SQLite -> PostgreSQL -> SQLite ----------------------------
"$KOPE" memory export --db "$URL" --out "$T/pg.json" >/dev/null 2>&1
"$KOPE" memory import "$T/pg.json" --db "$T/a.db" >/dev/null 2>&1
expect_exit 0 "export from SQLite" -- "$KOPE" memory export --db "$T/a.db" --out "$T/a.json"
URL2=$(pg_createdb kope2)
expect_exit 0 "import into PostgreSQL" -- "$KOPE" memory import "$T/a.json" --db "$URL2"
expect_exit 0 "export from PostgreSQL" -- "$KOPE" memory export --db "$URL2" --out "$T/b.json"
expect_exit 0 "import back into SQLite" -- "$KOPE" memory import "$T/b.json" --db "$T/c.db"
expect_exit 0 "export again" -- "$KOPE" memory export --db "$T/c.db" --out "$T/c.json"
cat >"$T/cmp.py" <<'EOF'
import json, sys
def key(doc):
    d = json.load(open(doc))
    cases = sorted((c["uid"], c["prev_uid"] or "", c["verdict"], c["step"],
                    round(c["d_score"], 9), c["session_uid"] or "") for c in d["cases"])
    journals = sorted(j["uid"] for j in d.get("journals", []))
    digests = sorted((g["target"], g["layer"], g["thought_id"], g["attempts"], g["correct"],
                      str(g["supporting_cases"])) for g in d["digests"])
    return cases, journals, digests, sorted(d["sources"])
a, b, c = (key(x) for x in sys.argv[1:4])
print("same" if a == b == c and a[0] else "differ", len(a[0]), len(a[1]), len(a[2]))
EOF
res=$(python3 "$T/cmp.py" "$T/a.json" "$T/b.json" "$T/c.json")
expect_match "round trip keeps every Case, Journal, digest, source ($res)" <(echo "$res") "^same [1-9]"
# the import's bulk mode (src/mem/pg_import.c): known uids from its caches
expect_match "importing the same file again adds nothing" \
  <("$KOPE" memory import "$T/a.json" --db "$URL2" 2>&1) "0 new Cases"
expect_match "the first export maps onto the rows its copy made" \
  <("$KOPE" memory import "$T/pg.json" --db "$URL2" 2>&1) "0 new Cases"
python3 - "$T/a.json" "$T/bad.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = dict(d["cases"][-1], uid="0000:1", prev_uid="0000:2")
d["cases"].append(bad)   # its predecessor is nowhere: the import must fail
json.dump(d, open(sys.argv[2], "w"))
EOF
URL3=$(pg_createdb kope3)
expect_exit 2 "a file that fails at its last Case" -- "$KOPE" memory import "$T/bad.json" --db "$URL3"
expect_eq "leaves nothing behind" "$(PG_DB=kope3 pg_psql "SELECT count(*) FROM cases")" 0
expect_eq "the PostgreSQL copy is consistent" \
  "$("$KOPE" memory check --db "$URL2" >/dev/null 2>&1; echo $?)" 0

finish
