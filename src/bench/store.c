/*
 * The memory of each benchmark run: a private copy of the starting store
 * (kope_db_copy: SQLite's online backup, so a store in WAL mode is copied
 * whole and the original is only read), optionally with a memory export from another
 * target imported; and, after a session, what the bench reads back from
 * that store: the session's experience forest and its incumbent curve.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/mem.h"
#include "bench/bench_int.h"

static void remove_db_files(const char *path)
{
  char *p;

  unlink(path);
  p = kope_sprintf("%s-wal", path);
  unlink(p);
  free(p);
  p = kope_sprintf("%s-shm", path);
  unlink(p);
  free(p);
}

int kope_bench_store_prepare(const char *path, const char *src, const char *source_memory,
                             kope_err *err)
{
  kope_db *db = NULL;
  kope_mem_import_stats st;
  int rc = KOPE_OK;

  remove_db_files(path);
  if (src) {
    /* a file that is not a kope store is refused before copying it */
    if (!(db = kope_db_open(src, KOPE_DB_NOCREATE | KOPE_DB_READONLY, err)))
      return err->code;
    rc = kope_db_copy(db, path, err);
    kope_db_close(db);
    if (rc != KOPE_OK)
      return rc;
  }
  if (!(db = kope_db_open(path, 0, err)))
    return err->code;
  if (source_memory)
    rc = kope_mem_import(db, source_memory, &st, err);
  kope_db_close(db);
  return rc;
}

/* ---- reading a session back ---- */

typedef struct sess_read {
  json_t *nodes;
} sess_read;

static int node_of(const kope_mem_case *c, void *ctx)
{
  sess_read *s = ctx;
  json_t *n = json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:b, s:f, s:f, s:f}", "id",
                        (json_int_t)c->id, "prev", (json_int_t)c->in.prev_case_id, "step",
                        (json_int_t)c->in.step, "thought", c->in.thought_id ? c->in.thought_id : "",
                        "verdict", c->in.verdict ? c->in.verdict : "", "label",
                        kope_mem_label_name(c->in.score.label), "correct", c->in.score.correct, "r",
                        isfinite(c->in.score.step_ratio) ? c->in.score.step_ratio : 0.0, "d",
                        isfinite(c->in.score.d_score) ? c->in.score.d_score : 0.0, "speedup",
                        c->in.score.correct && isfinite(c->in.score.speedup) ? c->in.score.speedup
                                                                             : 0.0);
  json_array_append_new(s->nodes, n);
  return 0;
}

static double speedup_of(json_t *nodes, int64_t id)
{
  size_t i;
  json_t *n;

  json_array_foreach(nodes, i, n)
    if ((int64_t)kope_bj_num(n, "id", 0) == id)
      return kope_bj_num(n, "speedup", 0);
  return 0.0;
}

/* curve[k]: the incumbent's speedup after k evaluations: the Case that
 * step k+1 started from (prev), the best Case after the last step. */
static json_t *curve_of(json_t *nodes, int64_t best_case)
{
  json_t *curve = json_array(), *n;
  size_t i;

  json_array_foreach(nodes, i, n) {
    if (i == 0)
      continue;
    json_array_append_new(curve, json_real(speedup_of(nodes, (int64_t)kope_bj_num(n, "prev", 0))));
  }
  if (json_array_size(nodes))
    json_array_append_new(curve, json_real(speedup_of(nodes, best_case)));
  return curve;
}

int kope_bench_session_read(const char *db_path, int64_t session, int64_t best_case,
                            json_t **forest, json_t **curve, kope_err *err)
{
  kope_db *db = kope_db_open(db_path, KOPE_DB_NOCREATE | KOPE_DB_READONLY, err);
  kope_mem_filter f;
  sess_read s = {json_array()};
  int rc;

  *forest = *curve = NULL;
  if (!db) {
    json_decref(s.nodes);
    return err->code;
  }
  memset(&f, 0, sizeof f);
  f.session_id = session;
  rc = kope_mem_case_each(db, &f, 0, node_of, &s, err);
  kope_db_close(db);
  if (rc != KOPE_OK) {
    json_decref(s.nodes);
    return rc;
  }
  *curve = curve_of(s.nodes, best_case);
  *forest = s.nodes;
  return KOPE_OK;
}
