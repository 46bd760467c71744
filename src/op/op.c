/*
 * Operator accessors, case binding (dims, params, element counts, flops and
 * bytes evaluated per case), the generated C prototype and a JSON view.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/expr.h"
#include "op/op_int.h"

const char *kope_op_name(const kope_op *op) { return op->name; }
const char *kope_op_category(const kope_op *op) { return op->category; }
const char *kope_op_description(const kope_op *op) { return op->description; }
const char *kope_op_dir(const kope_op *op) { return op->dir; }
const char *kope_op_spec_path(const kope_op *op) { return op->spec_path; }
int kope_op_level(const kope_op *op) { return op->level; }
size_t kope_op_nargs(const kope_op *op) { return op->nargs; }
size_t kope_op_ncases(const kope_op *op) { return op->ncases; }
const char *kope_op_reference_path(const kope_op *op) { return op->reference_path; }
const char *kope_op_seed_path(const kope_op *op) { return op->seed_path; }
const char *kope_op_vendor_path(const kope_op *op) { return op->vendor_path; }

char *kope_op_seed_path_for(const kope_op *op, const char *ext)
{
  if (!ext || !strcmp(ext, ".c"))
    return kope_strdup(op->seed_path);
  return kope_sprintf("%s/seed%s", op->dir, ext);
}
const char *kope_op_vendor_name(const kope_op *op) { return op->vendor_name; }
size_t kope_op_vendor_nlibs(const kope_op *op) { return op->nlibs; }

const kope_arg *kope_op_arg(const kope_op *op, size_t i)
{
  return i < op->nargs ? &op->args[i] : NULL;
}

const char *kope_op_vendor_lib(const kope_op *op, size_t i)
{
  return i < op->nlibs ? op->libs[i] : NULL;
}

const char *kope_op_case_name(const kope_op *op, size_t c)
{
  json_t *n = c < op->ncases ? json_object_get(op->cases[c], "name") : NULL;
  return json_is_string(n) ? json_string_value(n) : "";
}

kope_case_role kope_op_case_role(const kope_op *op, size_t c)
{
  json_t *r = c < op->ncases ? json_object_get(op->cases[c], "role") : NULL;
  const char *v = json_is_string(r) ? json_string_value(r) : "";
  if (!strcmp(v, "check"))
    return KOPE_CASE_CHECK;
  if (!strcmp(v, "perf"))
    return KOPE_CASE_PERF;
  return KOPE_CASE_BOTH;
}

int kope_op_case_timed(const kope_op *op, size_t c)
{
  return kope_op_case_role(op, c) != KOPE_CASE_CHECK;
}

const char *kope_op_case_source(const kope_op *op, size_t c)
{
  json_t *n = c < op->ncases ? json_object_get(op->cases[c], "source") : NULL;
  return json_is_string(n) ? json_string_value(n) : "";
}

const char *kope_op_lib_flag(const char *lib)
{
  if (!strcmp(lib, "openblas"))
    return "-lopenblas";
  if (!strcmp(lib, "dnnl"))
    return "-ldnnl";
  if (!strcmp(lib, "m"))
    return "-lm";
  return NULL;
}

const char *kope_dtype_c(kope_dtype t)
{
  static const char *const n[] = {"float", "double", "int32_t", "int64_t"};
  return n[t];
}

const char *kope_dtype_name(kope_dtype t)
{
  static const char *const n[] = {"f32", "f64", "i32", "i64"};
  return n[t];
}

size_t kope_dtype_size(kope_dtype t)
{
  return t == KOPE_F32 || t == KOPE_I32 ? 4 : 8;
}

const char *kope_role_name(kope_role r)
{
  static const char *const n[] = {"in", "out", "dim", "param"};
  return n[r];
}

char *kope_op_prototype(const kope_op *op)
{
  kope_buf b;
  size_t i;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "void %s(", op->name);
  for (i = 0; i < op->nargs; i++) {
    const kope_arg *a = &op->args[i];
    const char *sep = i ? ", " : "";
    if (a->role == KOPE_ROLE_IN)
      kope_buf_printf(&b, "%sconst %s *%s", sep, kope_dtype_c(a->dtype), a->name);
    else if (a->role == KOPE_ROLE_OUT)
      kope_buf_printf(&b, "%s%s *%s", sep, kope_dtype_c(a->dtype), a->name);
    else
      kope_buf_printf(&b, "%s%s %s", sep, kope_dtype_c(a->dtype), a->name);
  }
  kope_buf_puts(&b, ");");
  return kope_buf_steal(&b);
}

struct scope {
  const kope_op *op;
  const kope_case_bind *b;
};

static int lookup(void *ctx, const char *name, int64_t *v)
{
  struct scope *s = ctx;
  size_t i;

  for (i = 0; i < s->op->nargs; i++)
    if (!strcmp(s->op->args[i].name, name) &&
        (s->op->args[i].role == KOPE_ROLE_DIM || s->op->args[i].role == KOPE_ROLE_PARAM)) {
      *v = s->b->ival[i];
      return 0;
    }
  return -1;
}

int kope_op_eval_expr(const kope_op *op, const kope_case_bind *b, const char *expr,
                      int64_t *v, kope_err *err)
{
  struct scope s = {op, b};
  char msg[256];

  if (kope_expr_eval(expr, lookup, &s, v, msg, sizeof msg) != 0)
    return kope_err_set(err, KOPE_EINPUT, "%s", msg);
  return KOPE_OK;
}

static int bind_values(const kope_op *op, size_t c, kope_case_bind *b)
{
  size_t i;

  for (i = 0; i < op->nargs; i++) {
    const kope_arg *a = &op->args[i];
    json_t *v;
    if (a->role != KOPE_ROLE_DIM && a->role != KOPE_ROLE_PARAM)
      continue;
    v = json_object_get(op->cases[c], a->name);
    b->fval[i] = v ? json_number_value(v) : a->def;
    b->ival[i] = v && json_is_integer(v) ? json_integer_value(v) : (int64_t)llround(b->fval[i]);
  }
  return KOPE_OK;
}

static int bind_counts(const kope_op *op, size_t c, kope_case_bind *b, kope_err *err)
{
  char field[96];
  kope_err sub;
  size_t i;
  int d;

  for (i = 0; i < op->nargs; i++) {
    const kope_arg *a = &op->args[i];
    int64_t n = 1, e;
    if (a->role != KOPE_ROLE_IN && a->role != KOPE_ROLE_OUT)
      continue;
    for (d = 0; d < a->rank; d++) {
      snprintf(field, sizeof field, "cases[%zu]: args[%zu].shape[%d]", c, i, d);
      if (kope_op_eval_expr(op, b, a->shape[d], &e, &sub))
        return kope_err_set(err, KOPE_EINPUT, "%s: field '%s': %s", op->spec_path, field,
                            sub.msg);
      if (e < 0)
        return kope_err_set(err, KOPE_EINPUT, "%s: field '%s': \"%s\" is negative (%lld)",
                            op->spec_path, field, a->shape[d], (long long)e);
      if (__builtin_mul_overflow(n, e, &n) || n > ((int64_t)1 << 34))
        return kope_err_set(err, KOPE_EINPUT, "%s: field '%s': buffer too large",
                            op->spec_path, field);
    }
    b->count[i] = n;
  }
  return KOPE_OK;
}

int kope_op_bind(const kope_op *op, size_t c, kope_case_bind *b, kope_err *err)
{
  int64_t f, y;
  kope_err sub;
  int rc;

  memset(b, 0, sizeof *b);
  if (c >= op->ncases)
    return kope_err_set(err, KOPE_EINPUT, "%s: no case %zu", op->spec_path, c);
  bind_values(op, c, b);
  if ((rc = bind_counts(op, c, b, err)))
    return rc;
  if (kope_op_eval_expr(op, b, op->flops_expr, &f, &sub))
    return kope_err_set(err, KOPE_EINPUT, "%s: field 'flops' in cases[%zu]: %s",
                        op->spec_path, c, sub.msg);
  if (kope_op_eval_expr(op, b, op->bytes_expr, &y, &sub))
    return kope_err_set(err, KOPE_EINPUT, "%s: field 'bytes' in cases[%zu]: %s",
                        op->spec_path, c, sub.msg);
  b->flops = (double)f;
  b->bytes = (double)y;
  return KOPE_OK;
}

char *kope_op_case_label(const kope_op *op, size_t c)
{
  kope_buf b;
  size_t i;
  json_t *v;

  kope_buf_init(&b, 0);
  for (i = 0; i < op->nargs; i++) {
    const kope_arg *a = &op->args[i];
    if (a->role != KOPE_ROLE_DIM && a->role != KOPE_ROLE_PARAM)
      continue;
    v = json_object_get(op->cases[c], a->name);
    if (a->role == KOPE_ROLE_PARAM && !v)
      continue;
    if (json_is_integer(v))
      kope_buf_printf(&b, "%s%s=%lld", b.len ? " " : "", a->name,
                      (long long)json_integer_value(v));
    else
      kope_buf_printf(&b, "%s%s=%g", b.len ? " " : "", a->name, json_number_value(v));
  }
  return kope_buf_steal(&b);
}

static json_t *arg_json(const kope_arg *a)
{
  json_t *j = json_pack("{s:s, s:s, s:s}", "name", a->name, "role", kope_role_name(a->role),
                        "dtype", kope_dtype_name(a->dtype));
  int d;

  if (a->role == KOPE_ROLE_IN || a->role == KOPE_ROLE_OUT) {
    json_t *s = json_array();
    for (d = 0; d < a->rank; d++)
      json_array_append_new(s, json_string(a->shape[d]));
    json_object_set_new(j, "shape", s);
  }
  if (a->role == KOPE_ROLE_OUT && a->dtype <= KOPE_F64)
    json_object_set_new(j, "tolerance", json_pack("{s:f, s:f, s:f}", "rtol", a->rtol,
                                                  "atol", a->atol, "nrtol", a->nrtol));
  if (a->role == KOPE_ROLE_PARAM && a->has_default)
    json_object_set_new(j, "default", json_real(a->def));
  return j;
}

json_t *kope_op_to_json(const kope_op *op)
{
  json_t *j, *args = json_array(), *cases = json_array();
  char *proto = kope_op_prototype(op);
  size_t i;

  for (i = 0; i < op->nargs; i++)
    json_array_append_new(args, arg_json(&op->args[i]));
  for (i = 0; i < op->ncases; i++)
    json_array_append(cases, op->cases[i]);
  j = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:o, s:o, s:i, s:b, s:s*}",
                "name", op->name, "category", op->category, "level", op->level,
                "description", op->description, "dir", op->dir, "prototype", proto,
                "args", args, "cases", cases, "ncases", (int)op->ncases,
                "vendor", op->vendor_path != NULL, "vendor_name", op->vendor_name);
  free(proto);
  return j;
}
