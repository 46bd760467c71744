/*
 * The work queue (include/kope/queue.h) over libpq. Opening goes through
 * kope_db_open first, so the store is validated and migrated (kope_jobs is
 * part of the PostgreSQL schema) and an SQLite path is refused with a
 * clear message; then the queue keeps a connection of its own. Times
 * (leases, ages) are the server's now(), so the clocks of the workers'
 * machines do not matter.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/mem.h"
#include "kope/queue.h"

#define QP_MAX 12

struct kope_queue {
  PGconn *c;
  char *shown;   /* the store as shown (password masked) */
};

typedef struct qpar {
  const char *v[QP_MAX];
  char num[QP_MAX][32];
  int n;
} qpar;

static void qp_text(qpar *p, const char *v)
{
  if (p->n < QP_MAX)
    p->v[p->n++] = v;
}

static void qp_num(qpar *p, double v)
{
  if (p->n < QP_MAX) {
    snprintf(p->num[p->n], sizeof p->num[p->n], "%.17g", v);
    p->v[p->n] = p->num[p->n];
    p->n++;
  }
}

/* Run one statement; *res gets rows (caller clears) when res is given. */
static int q_run(kope_queue *q, const char *sql, const qpar *p, PGresult **res,
                 const char *what, kope_err *err)
{
  PGresult *r = PQexecParams(q->c, sql, p ? p->n : 0, NULL, p ? p->v : NULL, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  const char *msg;

  if (res)
    *res = NULL;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (!msg)
      msg = PQerrorMessage(q->c);
    kope_err_set(err, KOPE_EENV, "%s: %s: %.*s", q->shown, what, (int)strcspn(msg, "\n"), msg);
    PQclear(r);
    return KOPE_EENV;
  }
  if (res)
    *res = r;
  else
    PQclear(r);
  return KOPE_OK;
}

kope_queue *kope_queue_open(const char *url, kope_err *err)
{
  kope_queue *q = NULL;
  kope_db *db;
  const char *u = url && *url ? url : getenv("KOPE_DB");

  if (!u || (strncmp(u, "postgresql://", 13) && strncmp(u, "postgres://", 11))) {
    kope_err_set(err, KOPE_EINPUT, "the work queue needs a PostgreSQL store: give --db "
                 "postgresql://user@host/dbname (or set KOPE_DB); an SQLite file has no queue");
    return NULL;
  }
  if (!(db = kope_db_open(u, 0, err)))   /* validates and migrates */
    return NULL;
  q = calloc(1, sizeof *q);
  if (q)
    q->shown = kope_strdup(kope_db_path(db));
  kope_db_close(db);
  if (!q || !q->shown) {
    kope_queue_close(q);
    kope_err_nomem(err, "work queue");
    return NULL;
  }
  q->c = PQconnectdb(u);
  if (PQstatus(q->c) != CONNECTION_OK) {
    const char *msg = PQerrorMessage(q->c);
    kope_err_set(err, KOPE_EENV, "%s: cannot connect: %.*s", q->shown, (int)strcspn(msg, "\n"),
                 msg);
    kope_queue_close(q);
    return NULL;
  }
  return q;
}

void kope_queue_close(kope_queue *q)
{
  if (!q)
    return;
  PQfinish(q->c);
  free(q->shown);
  free(q);
}

int kope_queue_add(kope_queue *q, const char *op, const char *target, const char *policy,
                   int64_t budget_evals, const char *options, const char *harness,
                   int64_t *id, kope_err *err)
{
  qpar p = {0};
  PGresult *r = NULL;
  int rc;

  if (!op || !*op || !target || !policy || budget_evals < 1)
    return kope_err_set(err, KOPE_EINPUT, "a job needs an operator, a target, a policy and "
                        "a budget of at least 1 evaluation");
  qp_text(&p, op);
  qp_text(&p, target);
  qp_text(&p, policy);
  qp_num(&p, (double)budget_evals);
  qp_text(&p, options ? options : "[]");
  qp_text(&p, harness);
  rc = q_run(q, "INSERT INTO kope_jobs(op, target, policy, budget_evals, options, harness) "
             "VALUES ($1, $2, $3, $4::bigint, $5, $6) RETURNING id", &p, &r, "queueing a job",
             err);
  if (rc == KOPE_OK && id)
    *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return rc;
}

#define JOB_COLS                                                                  \
  "id, op, target, policy, harness, state, budget_evals, options, "               \
  "coalesce(worker, ''), coalesce(device, ''), claims, coalesce(session_id, 0), " \
  "coalesce(exit_code, 0), coalesce(passed, 0), coalesce(best_speedup, 0), "      \
  "extract(epoch FROM now() - created), coalesce(stop_reason, '')"

static void copy_field(char *dst, size_t size, const PGresult *r, int row, int col)
{
  snprintf(dst, size, "%s", PQgetvalue(r, row, col));
}

/* KOPE_OK, or KOPE_ENOMEM when the options could not be copied. */
static int read_job(const PGresult *r, int row, kope_job *j)
{
  memset(j, 0, sizeof *j);
  j->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
  copy_field(j->op, sizeof j->op, r, row, 1);
  copy_field(j->target, sizeof j->target, r, row, 2);
  copy_field(j->policy, sizeof j->policy, r, row, 3);
  copy_field(j->harness, sizeof j->harness, r, row, 4);
  copy_field(j->state, sizeof j->state, r, row, 5);
  j->budget_evals = strtoll(PQgetvalue(r, row, 6), NULL, 10);
  j->options = kope_strdup(PQgetvalue(r, row, 7));
  copy_field(j->worker, sizeof j->worker, r, row, 8);
  copy_field(j->device, sizeof j->device, r, row, 9);
  j->claims = atoi(PQgetvalue(r, row, 10));
  j->session_id = strtoll(PQgetvalue(r, row, 11), NULL, 10);
  j->exit_code = atoi(PQgetvalue(r, row, 12));
  j->passed = atoi(PQgetvalue(r, row, 13));
  j->best_speedup = strtod(PQgetvalue(r, row, 14), NULL);
  j->age_s = strtod(PQgetvalue(r, row, 15), NULL);
  copy_field(j->stop_reason, sizeof j->stop_reason, r, row, 16);
  return j->options ? KOPE_OK : KOPE_ENOMEM;
}

int kope_queue_list(kope_queue *q, kope_job **jobs, size_t *n, kope_err *err)
{
  PGresult *r = NULL;
  int rc = q_run(q, "SELECT " JOB_COLS " FROM kope_jobs ORDER BY id", NULL, &r,
                 "listing jobs", err), i, rows;

  *jobs = NULL;
  *n = 0;
  rows = rc == KOPE_OK ? PQntuples(r) : 0;
  if (rows > 0 && !(*jobs = calloc((size_t)rows, sizeof **jobs)))
    rc = kope_err_nomem(err, "job list");
  for (i = 0; rc == KOPE_OK && i < rows; i++)
    if (read_job(r, i, &(*jobs)[(*n)++]) != KOPE_OK)
      rc = kope_err_nomem(err, "job list");
  PQclear(r);
  return rc;
}

void kope_jobs_free(kope_job *jobs, size_t n)
{
  size_t i;

  for (i = 0; jobs && i < n; i++)
    free(jobs[i].options);
  free(jobs);
}

int kope_queue_check_harness(kope_queue *q, const char *harness, kope_err *err)
{
  qpar p = {0};
  PGresult *r = NULL;
  int rc;

  qp_text(&p, harness);
  rc = q_run(q, "SELECT harness, count(*) FROM kope_jobs WHERE state IN ('pending', "
             "'running') AND harness <> $1 GROUP BY 1 ORDER BY 2 DESC LIMIT 1", &p, &r,
             "checking jobs", err);
  if (rc == KOPE_OK && PQntuples(r) > 0)
    rc = kope_err_set(err, KOPE_EENV, "%s: %s jobs were queued for harness %s; this worker "
                      "runs %s and is refused (upgrade or downgrade kope on this machine)",
                      q->shown, PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 0), harness);
  PQclear(r);
  return rc;
}

int kope_queue_claim(kope_queue *q, const char *worker, const char *target,
                     const char *device, const char *harness, double lease_s, kope_job *job,
                     int *got, kope_err *err)
{
  qpar p = {0};
  PGresult *r = NULL;
  int rc;

  *got = 0;
  qp_text(&p, worker);
  qp_num(&p, lease_s);
  qp_text(&p, target);
  qp_text(&p, device);
  qp_text(&p, harness);
  rc = q_run(q, "UPDATE kope_jobs SET state = 'running', worker = $1, claims = claims + 1, "
             "started = now(), lease_until = now() + make_interval(secs => $2::float8), "
             "device = $4, note = CASE WHEN state = 'running' THEN 'reclaimed from ' || "
             "worker || ' (lease expired)' ELSE note END WHERE id = (SELECT id FROM kope_jobs "
             "WHERE (state = 'pending' OR (state = 'running' AND lease_until < now())) AND "
             "($3::text IS NULL OR target = $3) AND harness = $5 ORDER BY id LIMIT 1 FOR "
             "UPDATE SKIP LOCKED) RETURNING " JOB_COLS, &p, &r, "claiming a job", err);
  if (rc == KOPE_OK && PQntuples(r) == 1) {
    /* out of memory after the claim: the job comes back when its lease ends */
    if (read_job(r, 0, job) != KOPE_OK)
      rc = kope_err_nomem(err, "claimed job");
    else
      *got = 1;
  }
  PQclear(r);
  return rc;
}

/* One UPDATE guarded by the holder; *held = rows changed. */
static int q_update(kope_queue *q, const char *sql, const qpar *p, int *held, kope_err *err)
{
  PGresult *r = NULL;
  int rc = q_run(q, sql, p, &r, "updating a job", err);

  if (held)
    *held = rc == KOPE_OK && atoi(PQcmdTuples(r)) > 0;
  PQclear(r);
  return rc;
}

int kope_queue_heartbeat(kope_queue *q, int64_t id, const char *worker, double lease_s,
                         int *held, kope_err *err)
{
  qpar p = {0};

  qp_num(&p, (double)id);
  qp_text(&p, worker);
  qp_num(&p, lease_s);
  return q_update(q, "UPDATE kope_jobs SET lease_until = now() + make_interval(secs => "
                  "$3::float8) WHERE id = $1::bigint AND worker = $2 AND state = 'running'", &p,
                  held, err);
}

int kope_queue_finish(kope_queue *q, const kope_job *res, const char *worker, int *held,
                      kope_err *err)
{
  qpar p = {0};

  qp_num(&p, (double)res->id);
  qp_text(&p, worker);
  qp_text(&p, res->state);
  qp_num(&p, res->exit_code);
  qp_num(&p, (double)res->session_id);
  qp_num(&p, res->passed);
  qp_num(&p, res->best_speedup);
  qp_text(&p, res->stop_reason);
  return q_update(q, "UPDATE kope_jobs SET state = $3, exit_code = $4::int, session_id = "
                  "nullif($5::bigint, 0), passed = $6::int, best_speedup = $7::float8, "
                  "stop_reason = $8, finished = now(), lease_until = NULL WHERE id = $1::bigint "
                  "AND worker = $2 AND state = 'running'", &p, held, err);
}

int kope_queue_release(kope_queue *q, int64_t id, const char *worker, const char *note,
                       kope_err *err)
{
  qpar p = {0};

  qp_num(&p, (double)id);
  qp_text(&p, worker);
  qp_text(&p, note);
  return q_update(q, "UPDATE kope_jobs SET state = 'pending', lease_until = NULL, note = $3 "
                  "WHERE id = $1::bigint AND worker = $2 AND state = 'running'", &p, NULL, err);
}

int kope_queue_open_jobs(kope_queue *q, int64_t *pending, int64_t *running, kope_err *err)
{
  PGresult *r = NULL;
  int rc = q_run(q, "SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER "
                 "(WHERE state = 'running') FROM kope_jobs", NULL, &r, "counting jobs", err);

  *pending = *running = 0;
  if (rc == KOPE_OK) {
    *pending = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    *running = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
  }
  PQclear(r);
  return rc;
}
