/*
 * Operator specs: resolve an operator folder, parse op.json with jansson
 * and validate every field, so a malformed spec is reported once, up front,
 * naming the file, the field (as a path like args[2].shape[0]) and what was
 * expected. The resulting kope_op is immutable and owns all its strings.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "kope/op.h"
#include "core/expr.h"
#include "op/op_int.h"

static const char *const categories[] = {
  "elementwise", "reduction", "normalization", "matmul", "conv", "pooling",
  "scan", "loss", "attention", "indexing", "fused", "other", NULL
};

static int bad(kope_op *op, kope_err *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(kope_op *op, kope_err *err, const char *field, const char *fmt, ...)
{
  char what[768];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return kope_err_set(err, KOPE_EINPUT, "%s: field '%s': %s", op->spec_path, field, what);
}

static int is_ident(const char *s)
{
  if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return 0;
  return 1;
}

static char *own(kope_op *op, const char *s)
{
  char *c = kope_strdup(s);

  if (!c)
    op->nomem = 1;
  else if (op->nstrs < KOPE_OP_MAX_STRS)
    op->strs[op->nstrs++] = c;
  return c;
}

/* Required string field. */
static int get_str(kope_op *op, json_t *obj, const char *key, const char *field,
                   const char **out, int required, kope_err *err)
{
  json_t *v = json_object_get(obj, key);

  if (!v) {
    if (required)
      return bad(op, err, field, "missing (expected a string)");
    *out = NULL;
    return KOPE_OK;
  }
  if (!json_is_string(v))
    return bad(op, err, field, "expected a string");
  if (!(*out = own(op, json_string_value(v))))
    return kope_err_nomem(err, field);
  return KOPE_OK;
}

static int get_num(kope_op *op, json_t *obj, const char *key, const char *field,
                   double *out, double def, kope_err *err)
{
  json_t *v = json_object_get(obj, key);

  if (!v) {
    *out = def;
    return KOPE_OK;
  }
  if (!json_is_number(v))
    return bad(op, err, field, "expected a number");
  *out = json_number_value(v);
  return KOPE_OK;
}

static int parse_dtype(const char *s, kope_dtype *t)
{
  static const char *const names[] = {"f32", "f64", "i32", "i64"};
  int i;

  for (i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) {
      *t = (kope_dtype)i;
      return 0;
    }
  return -1;
}

static int parse_role(const char *s, kope_role *r)
{
  static const char *const names[] = {"in", "out", "dim", "param"};
  int i;

  for (i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) {
      *r = (kope_role)i;
      return 0;
    }
  return -1;
}

/* An expression field: a string or an integer literal. */
static int get_expr(kope_op *op, json_t *v, const char *field, const char **out,
                    kope_err *err)
{
  char buf[32];

  if (json_is_integer(v)) {
    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
    *out = own(op, buf);
  } else if (!json_is_string(v)) {
    return bad(op, err, field, "expected an integer expression (string or integer)");
  } else {
    *out = own(op, json_string_value(v));
  }
  return *out ? KOPE_OK : kope_err_nomem(err, field);
}

static int parse_tolerance(kope_op *op, json_t *t, const char *field, kope_arg *a,
                           kope_err *err)
{
  char f[192];
  int rc;

  if (!json_is_object(t))
    return bad(op, err, field, "expected an object {rtol, atol, nrtol}");
  snprintf(f, sizeof f, "%s.rtol", field);
  if ((rc = get_num(op, t, "rtol", f, &a->rtol, a->rtol, err)))
    return rc;
  snprintf(f, sizeof f, "%s.atol", field);
  if ((rc = get_num(op, t, "atol", f, &a->atol, a->atol, err)))
    return rc;
  snprintf(f, sizeof f, "%s.nrtol", field);
  if ((rc = get_num(op, t, "nrtol", f, &a->nrtol, a->nrtol, err)))
    return rc;
  if (a->rtol < 0 || a->atol < 0 || a->nrtol < 0)
    return bad(op, err, field, "tolerances must be >= 0");
  return KOPE_OK;
}

static int parse_dist(kope_op *op, json_t *d, const char *field, kope_arg *a,
                      kope_err *err)
{
  const char *kind = "normal";
  json_t *k, *vary;
  char f[192];
  int rc = KOPE_OK;

  a->dist = KOPE_DIST_NORMAL;
  a->a = 0.0;
  a->b = 1.0;
  a->vary = a->dtype == KOPE_F32 || a->dtype == KOPE_F64;
  if (!d) {
    if (a->dtype == KOPE_I32 || a->dtype == KOPE_I64)
      return bad(op, err, field, "integer inputs need a dist {\"kind\": \"int\", \"lo\", \"hi\"}");
    return KOPE_OK;
  }
  if (!json_is_object(d))
    return bad(op, err, field, "expected an object");
  k = json_object_get(d, "kind");
  if (k && !json_is_string(k))
    return bad(op, err, field, "kind: expected a string");
  if (k)
    kind = json_string_value(k);
  snprintf(f, sizeof f, "%s.kind", field);
  if (a->dtype >= KOPE_I32 && strcmp(kind, "int"))
    return bad(op, err, f, "integer inputs need {\"kind\": \"int\", \"lo\", \"hi\"}");
  if (!strcmp(kind, "normal")) {
    if ((rc = get_num(op, d, "mean", f, &a->a, 0.0, err)) ||
        (rc = get_num(op, d, "std", f, &a->b, 1.0, err)))
      return rc;
    if (a->b < 0)
      return bad(op, err, field, "std must be >= 0");
  } else if (!strcmp(kind, "uniform")) {
    a->dist = KOPE_DIST_UNIFORM;
    if ((rc = get_num(op, d, "lo", f, &a->a, -1.0, err)) ||
        (rc = get_num(op, d, "hi", f, &a->b, 1.0, err)))
      return rc;
    if (a->b < a->a)
      return bad(op, err, field, "uniform needs lo <= hi");
  } else if (!strcmp(kind, "int")) {
    json_t *lo = json_object_get(d, "lo"), *hi = json_object_get(d, "hi");
    a->dist = KOPE_DIST_INT;
    if (!lo || !hi)
      return bad(op, err, field, "int distribution needs lo and hi");
    snprintf(f, sizeof f, "%s.lo", field);
    if ((rc = get_expr(op, lo, f, &a->lo_expr, err)))
      return rc;
    snprintf(f, sizeof f, "%s.hi", field);
    if ((rc = get_expr(op, hi, f, &a->hi_expr, err)))
      return rc;
    a->vary = 0;
    if (a->dtype == KOPE_F32 || a->dtype == KOPE_F64)
      return bad(op, err, f, "\"int\" is for integer inputs (use normal or uniform)");
  } else {
    return bad(op, err, f, "unknown distribution '%s' (expected normal, uniform or int)", kind);
  }
  vary = json_object_get(d, "vary");
  if (vary && !json_is_boolean(vary))
    return bad(op, err, field, "vary: expected true or false");
  if (vary)
    a->vary = a->dist != KOPE_DIST_INT && json_is_true(vary);
  return rc;
}

static void default_tolerance(kope_arg *a)
{
  if (a->dtype == KOPE_F64) {
    a->rtol = 1e-10; a->atol = 1e-12; a->nrtol = 1e-10;
  } else if (a->dtype == KOPE_F32) {
    a->rtol = 1e-5; a->atol = 1e-6; a->nrtol = 1e-5;
  } else {
    a->rtol = a->atol = a->nrtol = 0.0;
  }
}

static int parse_shape(kope_op *op, json_t *s, const char *field, kope_arg *a,
                       kope_err *err)
{
  size_t i;
  json_t *v;
  char f[192];
  int rc;

  if (!s)
    return bad(op, err, field, "missing (expected a list of expressions over dims)");
  if (!json_is_array(s) || json_array_size(s) > KOPE_MAX_RANK)
    return bad(op, err, field, "expected a list of at most %d expressions", KOPE_MAX_RANK);
  json_array_foreach(s, i, v) {
    snprintf(f, sizeof f, "%s[%zu]", field, i);
    if ((rc = get_expr(op, v, f, &a->shape[i], err)))
      return rc;
  }
  a->rank = (int)json_array_size(s);
  return KOPE_OK;
}

/* Refuse keys not in allowed (NULL-terminated): a typo must not fall back
 * silently to a default. */
static int only_keys(kope_op *op, json_t *obj, const char *field, const char *const *allowed,
                     kope_err *err)
{
  const char *key;
  json_t *v;
  int i, found;

  json_object_foreach(obj, key, v) {
    for (found = 0, i = 0; allowed[i]; i++)
      found |= !strcmp(allowed[i], key);
    if (!found)
      return bad(op, err, field, "unknown key '%s'", key);
  }
  return KOPE_OK;
}

static const char *const arg_keys[] = {"name", "role", "dtype", "shape", "dist", "tolerance",
                                       "default", "description", NULL};
static const char *const top_keys[] = {"name", "category", "level", "description", "args",
                                       "cases", "tolerance", "flops", "bytes", "reference",
                                       "seed", "vendor", "vendor_cuda", "notes", NULL};

static int parse_arg(kope_op *op, json_t *j, size_t i, kope_err *err)
{
  kope_arg *a = &op->args[i];
  const char *s;
  char f[64], g[80];
  int rc;

  snprintf(f, sizeof f, "args[%zu]", i);
  if (!json_is_object(j))
    return bad(op, err, f, "expected an object {name, role, dtype, shape}");
  if ((rc = only_keys(op, j, f, arg_keys, err)))
    return rc;
  snprintf(g, sizeof g, "%s.name", f);
  if ((rc = get_str(op, j, "name", g, &a->name, 1, err)))
    return rc;
  if (!is_ident(a->name))
    return bad(op, err, g, "'%s' is not a C identifier", a->name);
  snprintf(g, sizeof g, "%s.role", f);
  if ((rc = get_str(op, j, "role", g, &s, 1, err)))
    return rc;
  if (parse_role(s, &a->role))
    return bad(op, err, g, "'%s' (expected in, out, dim or param)", s);
  snprintf(g, sizeof g, "%s.dtype", f);
  if ((rc = get_str(op, j, "dtype", g, &s, a->role != KOPE_ROLE_DIM, err)))
    return rc;
  a->dtype = KOPE_I64;
  if (s && parse_dtype(s, &a->dtype))
    return bad(op, err, g, "'%s' (expected f32, f64, i32 or i64)", s);
  if (a->role == KOPE_ROLE_DIM && a->dtype != KOPE_I64)
    return bad(op, err, g, "dims are always i64");
  default_tolerance(a);
  if (a->role == KOPE_ROLE_IN || a->role == KOPE_ROLE_OUT) {
    snprintf(g, sizeof g, "%s.shape", f);
    if ((rc = parse_shape(op, json_object_get(j, "shape"), g, a, err)))
      return rc;
  } else if (json_object_get(j, "shape")) {
    snprintf(g, sizeof g, "%s.shape", f);
    return bad(op, err, g, "only in/out buffers have a shape");
  }
  if (a->role == KOPE_ROLE_IN) {
    snprintf(g, sizeof g, "%s.dist", f);
    if ((rc = parse_dist(op, json_object_get(j, "dist"), g, a, err)))
      return rc;
  }
  if (a->role == KOPE_ROLE_OUT && json_object_get(j, "tolerance")) {
    snprintf(g, sizeof g, "%s.tolerance", f);
    if ((rc = parse_tolerance(op, json_object_get(j, "tolerance"), g, a, err)))
      return rc;
    a->tol_set = 1;
  }
  if (a->role == KOPE_ROLE_PARAM && json_object_get(j, "default")) {
    snprintf(g, sizeof g, "%s.default", f);
    if ((rc = get_num(op, j, "default", g, &a->def, 0.0, err)))
      return rc;
    a->has_default = 1;
  }
  return KOPE_OK;
}

static int find_arg(const kope_op *op, const char *name)
{
  size_t i;

  for (i = 0; i < op->nargs; i++)
    if (!strcmp(op->args[i].name, name))
      return (int)i;
  return -1;
}

struct name_check {
  const kope_op *op;
  char bad[64];
};

static void check_name(void *ctx, const char *name)
{
  struct name_check *nc = ctx;
  int i = find_arg(nc->op, name);

  if (nc->bad[0])
    return;
  if (i < 0 || !(nc->op->args[i].role == KOPE_ROLE_DIM ||
                 (nc->op->args[i].role == KOPE_ROLE_PARAM &&
                  (nc->op->args[i].dtype == KOPE_I32 || nc->op->args[i].dtype == KOPE_I64))))
    snprintf(nc->bad, sizeof nc->bad, "%s", name);
}

/* Every name in an expression must be a dim or an integer param. */
static int check_expr(kope_op *op, const char *expr, const char *field, kope_err *err)
{
  struct name_check nc = {op, ""};
  char msg[256];

  if (kope_expr_names(expr, check_name, &nc, msg, sizeof msg) != 0)
    return bad(op, err, field, "%s", msg);
  if (nc.bad[0])
    return bad(op, err, field, "'%s' in \"%s\" is not a dim or an integer param", nc.bad, expr);
  return KOPE_OK;
}

static int parse_args(kope_op *op, json_t *root, kope_err *err)
{
  json_t *args = json_object_get(root, "args"), *v;
  size_t i, nout = 0;
  int rc;
  char f[64];

  if (!json_is_array(args) || json_array_size(args) == 0)
    return bad(op, err, "args", "expected a non-empty list of arguments");
  if (json_array_size(args) > KOPE_MAX_ARGS)
    return bad(op, err, "args", "at most %d arguments", KOPE_MAX_ARGS);
  op->nargs = json_array_size(args);
  json_array_foreach(args, i, v)
    if ((rc = parse_arg(op, v, i, err)))
      return rc;
  for (i = 0; i < op->nargs; i++) {
    kope_arg *a = &op->args[i];
    if (find_arg(op, a->name) != (int)i) {
      snprintf(f, sizeof f, "args[%zu].name", i);
      return bad(op, err, f, "duplicate argument name '%s'", a->name);
    }
    nout += a->role == KOPE_ROLE_OUT;
  }
  if (nout == 0)
    return bad(op, err, "args", "at least one argument with role \"out\" is needed");
  for (i = 0; i < op->nargs; i++) {
    kope_arg *a = &op->args[i];
    for (int d = 0; d < a->rank; d++) {
      snprintf(f, sizeof f, "args[%zu].shape[%d]", i, d);
      if ((rc = check_expr(op, a->shape[d], f, err)))
        return rc;
    }
    if (a->lo_expr) {
      snprintf(f, sizeof f, "args[%zu].dist.lo", i);
      if ((rc = check_expr(op, a->lo_expr, f, err)))
        return rc;
      snprintf(f, sizeof f, "args[%zu].dist.hi", i);
      if ((rc = check_expr(op, a->hi_expr, f, err)))
        return rc;
    }
  }
  return KOPE_OK;
}

/* A case object: every dim and every param without default; nothing else
 * but "name", "source" (strings) and "role" ("check" or "perf"). */
static int parse_case(kope_op *op, json_t *c, size_t ci, kope_err *err)
{
  char f[64];
  const char *key;
  json_t *v;
  size_t i;
  kope_case_bind b;
  int rc;

  snprintf(f, sizeof f, "cases[%zu]", ci);
  if (!json_is_object(c))
    return bad(op, err, f, "expected an object of dim and param values");
  json_object_foreach(c, key, v) {
    int ai = find_arg(op, key);
    snprintf(f, sizeof f, "cases[%zu].%s", ci, key);
    if (!strcmp(key, "name") || !strcmp(key, "source")) {
      if (!json_is_string(v))
        return bad(op, err, f, "expected a string");
      continue;
    }
    if (!strcmp(key, "role")) {
      if (!json_is_string(v) || (strcmp(json_string_value(v), "check") &&
                                 strcmp(json_string_value(v), "perf")))
        return bad(op, err, f, "expected \"check\" (judged, never timed) or \"perf\" "
                   "(judged, timed and scored)");
      continue;
    }
    if (ai < 0 || (op->args[ai].role != KOPE_ROLE_DIM && op->args[ai].role != KOPE_ROLE_PARAM))
      return bad(op, err, f, "'%s' is not a dim or param of %s", key, op->name);
    if (op->args[ai].role == KOPE_ROLE_DIM || op->args[ai].dtype >= KOPE_I32) {
      if (!json_is_integer(v))
        return bad(op, err, f, "expected an integer");
      if (op->args[ai].role == KOPE_ROLE_DIM && json_integer_value(v) < 0)
        return bad(op, err, f, "dims must be >= 0");
    } else if (!json_is_number(v)) {
      return bad(op, err, f, "expected a number");
    }
  }
  for (i = 0; i < op->nargs; i++) {
    const kope_arg *a = &op->args[i];
    if ((a->role == KOPE_ROLE_DIM || (a->role == KOPE_ROLE_PARAM && !a->has_default)) &&
        !json_object_get(c, a->name)) {
      snprintf(f, sizeof f, "cases[%zu]", ci);
      return bad(op, err, f, "missing value for %s '%s'",
                 a->role == KOPE_ROLE_DIM ? "dim" : "param", a->name);
    }
  }
  op->cases[ci] = json_incref(c);
  if ((rc = kope_op_bind(op, ci, &b, err)))
    return rc;
  return KOPE_OK;
}

static int parse_cases(kope_op *op, json_t *root, kope_err *err)
{
  json_t *cases = json_object_get(root, "cases"), *c;
  size_t i;
  int rc;

  if (!json_is_array(cases) || json_array_size(cases) == 0)
    return bad(op, err, "cases", "expected a non-empty list of case objects");
  if (json_array_size(cases) > KOPE_OP_MAX_CASES)
    return bad(op, err, "cases", "at most %d cases", KOPE_OP_MAX_CASES);
  op->ncases = json_array_size(cases);
  json_array_foreach(cases, i, c)
    if ((rc = parse_case(op, c, i, err)))
      return rc;
  for (i = 0; i < op->ncases; i++)
    if (kope_op_case_timed(op, i))
      return KOPE_OK;
  return bad(op, err, "cases", "every case has role \"check\": at least one must be "
             "\"perf\" (or have no role) so that something is timed");
}

static int parse_file_field(kope_op *op, json_t *root, const char *key, const char *field,
                            const char *def, const char **path, kope_err *err)
{
  const char *rel = def;
  int rc;
  char *p;

  if ((rc = get_str(op, root, key, field, &rel, 0, err)))
    return rc;
  if (!rel)
    rel = def;
  if (strstr(rel, "..") || rel[0] == '/')
    return bad(op, err, field, "'%s' must be a file name inside the operator folder", rel);
  p = kope_path_join(op->dir, rel);
  *path = own(op, p);
  free(p);
  if (!*path)
    return kope_err_nomem(err, field);
  if (!kope_is_file(*path))
    return bad(op, err, field, "file '%s' does not exist", *path);
  return KOPE_OK;
}

/* Library names a vendor baseline in lang may link, as the error lists them. */
static const char *vendor_lib_names(kope_op_vendor_lang lang)
{
  return lang == KOPE_OP_VENDOR_CUDA ? "cublas, cudnn" : "openblas, dnnl, m";
}

const char *kope_op_vendor_lib_flag(kope_op_vendor_lang lang, const char *lib)
{
  if (!lib)
    return NULL;
  switch (lang) {
  case KOPE_OP_VENDOR_C:
    return kope_op_lib_flag(lib);
  case KOPE_OP_VENDOR_CUDA:
    return !strcmp(lib, "cublas") ? "-lcublas" : !strcmp(lib, "cudnn") ? "-lcudnn" : NULL;
  default:
    return NULL;
  }
}

const kope_op_vendor *kope_op_vendor_for(const kope_op *op, kope_op_vendor_lang lang)
{
  const kope_op_vendor *v = lang == KOPE_OP_VENDOR_C      ? &op->vendor_cpu
                            : lang == KOPE_OP_VENDOR_CUDA ? &op->vendor_cuda
                                                          : NULL;

  return v && v->path ? v : NULL;
}

/* One vendor object, `KEY: {source, libs, name}`, in lang (its library
 * names and its default file, dflt). Absent or null: out stays empty. */
static int parse_vendor_obj(kope_op *op, json_t *root, const char *key, kope_op_vendor_lang lang,
                            const char *dflt, kope_op_vendor *out, kope_err *err)
{
  json_t *v = json_object_get(root, key), *libs, *l;
  char f[64];
  size_t i;
  int rc;

  if (!v || json_is_null(v))
    return KOPE_OK;
  if (!json_is_object(v))
    return bad(op, err, key, "expected an object {source, libs, name}");
  snprintf(f, sizeof f, "%s.source", key);
  if ((rc = parse_file_field(op, v, "source", f, dflt, &out->path, err)))
    return rc;
  snprintf(f, sizeof f, "%s.name", key);
  if ((rc = get_str(op, v, "name", f, &out->name, 0, err)))
    return rc;
  libs = json_object_get(v, "libs");
  snprintf(f, sizeof f, "%s.libs", key);
  if (libs && !json_is_array(libs))
    return bad(op, err, f, "expected a list of library names");
  json_array_foreach(libs, i, l) {
    snprintf(f, sizeof f, "%s.libs[%zu]", key, i);
    if (!json_is_string(l) || !kope_op_vendor_lib_flag(lang, json_string_value(l)))
      return bad(op, err, f, "expected one of %s", vendor_lib_names(lang));
    if (out->nlibs < KOPE_OP_VENDOR_MAX_LIBS &&
        !(out->libs[out->nlibs++] = own(op, json_string_value(l))))
      return kope_err_nomem(err, f);
  }
  if (!out->name && !(out->name = own(op, out->nlibs ? out->libs[0] : "vendor")))
    return kope_err_nomem(err, key);
  return KOPE_OK;
}

/* "vendor" (C, the cpu target's; also kept in the older fields) and
 * "vendor_cuda" (CUDA host code). */
static int parse_vendor(kope_op *op, json_t *root, kope_err *err)
{
  size_t i;
  int rc;

  if ((rc = parse_vendor_obj(op, root, "vendor", KOPE_OP_VENDOR_C, "vendor.c", &op->vendor_cpu, err)) ||
      (rc = parse_vendor_obj(op, root, "vendor_cuda", KOPE_OP_VENDOR_CUDA, "vendor.cu", &op->vendor_cuda,
                             err)))
    return rc;
  op->vendor_path = op->vendor_cpu.path;
  op->vendor_name = op->vendor_cpu.name;
  for (i = 0; i < op->vendor_cpu.nlibs && i < KOPE_OP_MAX_LIBS; i++)
    op->libs[op->nlibs++] = op->vendor_cpu.libs[i];
  return KOPE_OK;
}

static int parse_header(kope_op *op, json_t *root, kope_err *err)
{
  json_t *lv = json_object_get(root, "level");
  const char *cat;
  int rc, i, found = 0;

  if ((rc = get_str(op, root, "name", "name", &op->name, 1, err)))
    return rc;
  if (!is_ident(op->name))
    return bad(op, err, "name", "'%s' is not a C identifier", op->name);
  if (strcmp(op->name, op->folder))
    return bad(op, err, "name", "'%s' must equal the folder name '%s'", op->name, op->folder);
  if ((rc = get_str(op, root, "category", "category", &cat, 1, err)))
    return rc;
  for (i = 0; categories[i]; i++)
    found |= !strcmp(categories[i], cat);
  if (!found)
    return bad(op, err, "category", "'%s' (expected one of elementwise, reduction, "
               "normalization, matmul, conv, pooling, scan, loss, attention, indexing, "
               "fused, other)", cat);
  op->category = cat;
  if (!json_is_integer(lv) || json_integer_value(lv) < 1 || json_integer_value(lv) > 4)
    return bad(op, err, "level", "expected an integer from 1 to 4");
  op->level = (int)json_integer_value(lv);
  if ((rc = get_str(op, root, "description", "description", &op->description, 1, err)))
    return rc;
  return KOPE_OK;
}

static int parse_costs(kope_op *op, json_t *root, kope_err *err)
{
  json_t *f = json_object_get(root, "flops"), *b = json_object_get(root, "bytes");
  json_t *tol = json_object_get(root, "tolerance");
  size_t i;
  int rc;

  if (!f || !b)
    return bad(op, err, f ? "bytes" : "flops", "missing (expected an integer expression)");
  if ((rc = get_expr(op, f, "flops", &op->flops_expr, err)) ||
      (rc = get_expr(op, b, "bytes", &op->bytes_expr, err)) ||
      (rc = check_expr(op, op->flops_expr, "flops", err)) ||
      (rc = check_expr(op, op->bytes_expr, "bytes", err)))
    return rc;
  if (!tol)
    return KOPE_OK;
  for (i = 0; i < op->nargs; i++) {
    kope_arg *a = &op->args[i];
    if (a->role == KOPE_ROLE_OUT && !a->tol_set && a->dtype <= KOPE_F64 &&
        (rc = parse_tolerance(op, tol, "tolerance", a, err)))
      return rc;
  }
  return KOPE_OK;
}

static int parse_spec(kope_op *op, json_t *root, kope_err *err)
{
  int rc;

  if (!json_is_object(root))
    return bad(op, err, "(top level)", "expected a JSON object");
  if ((rc = only_keys(op, root, "(top level)", top_keys, err)))
    return rc;
  if ((rc = parse_header(op, root, err)) || (rc = parse_args(op, root, err)) ||
      (rc = parse_costs(op, root, err)) || (rc = parse_cases(op, root, err)) ||
      (rc = parse_file_field(op, root, "reference", "reference", "reference.c",
                              &op->reference_path, err)) ||
      (rc = parse_file_field(op, root, "seed", "seed", "seed.c", &op->seed_path, err)) ||
      (rc = parse_vendor(op, root, err)))
    return rc;
  return KOPE_OK;
}

char *kope_ops_dir(void)
{
  const char *e = getenv("KOPE_OPS");

  if (e && *e)
    return kope_strdup(e);
  if (kope_is_dir("ops"))
    return kope_strdup("ops");
  return kope_strdup(KOPE_SOURCE_DIR "/ops");
}

static char *resolve_dir(const char *name_or_path, const char *ops_dir)
{
  char *dir;

  if (strchr(name_or_path, '/') || (kope_is_dir(name_or_path) && !ops_dir &&
                                    !strcmp(name_or_path, ".")))
    return kope_strdup(name_or_path);
  if (ops_dir)
    return kope_path_join(ops_dir, name_or_path);
  dir = kope_ops_dir();
  {
    char *p = kope_path_join(dir, name_or_path);
    free(dir);
    return p;
  }
}

kope_op *kope_op_load(const char *name_or_path, const char *ops_dir, kope_err *err)
{
  kope_op *op = calloc(1, sizeof *op);
  json_error_t je;
  json_t *root = NULL;
  char *dir = resolve_dir(name_or_path, ops_dir), *spec = NULL;
  const char *base;
  int rc = KOPE_OK;

  if (!op || !dir) {
    free(op);
    free(dir);
    kope_err_nomem(err, "operator");
    return NULL;
  }
  while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
    dir[strlen(dir) - 1] = '\0';
  base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  op->dir = own(op, dir);
  op->folder = own(op, base);
  spec = kope_path_join(dir, "op.json");
  op->spec_path = own(op, spec);
  if (op->nomem)
    goto out;
  if (!kope_is_dir(dir)) {
    rc = kope_err_set(err, KOPE_EINPUT, "unknown operator '%s': no folder %s",
                      name_or_path, dir);
    goto out;
  }
  if (!kope_is_file(spec)) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s: missing (an operator folder needs op.json)", spec);
    goto out;
  }
  root = json_load_file(spec, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s:%d:%d: invalid JSON: %s", spec, je.line,
                      je.column, je.text);
    goto out;
  }
  rc = parse_spec(op, root, err);
out:
  if (op->nomem)   /* whatever else a failed copy made go wrong */
    rc = kope_err_nomem(err, "operator");
  json_decref(root);
  free(dir);
  free(spec);
  if (rc != KOPE_OK) {
    kope_op_free(op);
    return NULL;
  }
  return op;
}

void kope_op_free(kope_op *op)
{
  size_t i;

  if (!op)
    return;
  for (i = 0; i < op->ncases; i++)
    json_decref(op->cases[i]);
  for (i = 0; i < op->nstrs; i++)
    free(op->strs[i]);
  free(op);
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int kope_ops_list(const char *dir, char ***names, size_t *n, kope_err *err)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  size_t cap = 0;
  int rc = KOPE_OK;

  *n = 0;
  *names = NULL;
  if (!d)
    return kope_err_set(err, KOPE_EINPUT, "%s: cannot open operator directory", dir);
  while (rc == KOPE_OK && (e = readdir(d))) {
    char *sub, *spec;
    if (e->d_name[0] == '.')
      continue;
    sub = kope_path_join(dir, e->d_name);
    spec = kope_path_join(sub, "op.json");
    if (!spec) {
      rc = kope_err_nomem(err, "operator list");
    } else if (kope_is_file(spec)) {
      if (kope_grow(names, &cap, *n + 1, sizeof **names) != KOPE_OK ||
          !((*names)[*n] = kope_strdup(e->d_name)))
        rc = kope_err_nomem(err, "operator list");
      else
        (*n)++;
    }
    free(sub);
    free(spec);
  }
  closedir(d);
  if (rc != KOPE_OK) {
    kope_strv_free(*names, *n);
    *names = NULL;
    *n = 0;
    return rc;
  }
  if (*n)
    qsort(*names, *n, sizeof **names, cmp_str);
  return KOPE_OK;
}

void kope_strv_free(char **v, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}
