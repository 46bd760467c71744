/*
 * The fixture of the context and prompt unit tests (test_ctx.c,
 * test_prompt.c): a temporary directory with a fresh store, one shipped
 * operator, its seed as the correct incumbent of a step-1 context state.
 * Include after <cmocka.h> and kope_test.h. The caller owns what
 * kt_ctx_open fills and releases it with kt_ctx_close.
 */
#ifndef KT_CTX_H
#define KT_CTX_H

#include "kope/ctx.h"
#include "kope/mem.h"

typedef struct kt_ctx {
  char dir[64];
  kope_db *db;
  kope_op *op;
  char *seed;
} kt_ctx;

static inline void kt_ctx_open(kt_ctx *k, const char *op, const char *tag, kope_ctx_state *s)
{
  kope_err err = {0, ""};
  char *path;

  kt_tmpdir(k->dir, sizeof k->dir, tag);
  path = kope_path_join(k->dir, "kope.db");
  k->db = kope_db_open(path, 0, &err);
  free(path);
  assert_non_null(k->db);
  k->op = kt_op_load(op);
  k->seed = kope_file_read(kope_op_seed_path(k->op), NULL, &err);
  assert_non_null(k->seed);
  s->op = k->op;
  s->target = "cpu";
  s->target_text = "Target: cpu (test)";
  s->incumbent = k->seed;
  s->incumbent_correct = 1;
  s->inc_speedup_ref = 1.5;
  s->step = 1;
}

static inline void kt_ctx_close(kt_ctx *k)
{
  kope_db_close(k->db);
  kope_op_free(k->op);
  free(k->seed);
  kope_rmtree(k->dir);
}

#endif
