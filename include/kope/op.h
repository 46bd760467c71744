/*
 * kope operators: loading and validating operator specs, generating the C
 * prototype, binding cases, and the knob annotations of kernel sources.
 *
 * An operator is a folder holding op.json (the spec), a trusted reference
 * implementation, a seed kernel and optionally a vendor baseline; see
 * docs/operator-format.md. kope_op_load validates everything and reports
 * the first problem naming the file, the field and what was expected.
 */
#ifndef KOPE_OP_H
#define KOPE_OP_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "kope/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_op kope_op;

typedef enum kope_role { KOPE_ROLE_IN, KOPE_ROLE_OUT, KOPE_ROLE_DIM, KOPE_ROLE_PARAM } kope_role;
typedef enum kope_dtype { KOPE_F32, KOPE_F64, KOPE_I32, KOPE_I64 } kope_dtype;
typedef enum kope_dist_kind { KOPE_DIST_NORMAL, KOPE_DIST_UNIFORM, KOPE_DIST_INT } kope_dist_kind;

#define KOPE_MAX_ARGS 24
#define KOPE_MAX_RANK 6

/* Read-only view of one argument; owned by the kope_op. */
typedef struct kope_arg {
  const char *name;
  kope_role role;
  kope_dtype dtype;
  int rank;                           /* buffers: number of shape entries */
  const char *shape[KOPE_MAX_RANK];   /* expressions */
  /* inputs: distribution; int bounds are expressions (lo_expr/hi_expr) */
  kope_dist_kind dist;
  double a, b;                        /* normal: mean,std; uniform: lo,hi */
  const char *lo_expr, *hi_expr;      /* int */
  int vary;                           /* per-seed variants on (floats) */
  /* outputs: tolerance */
  double rtol, atol, nrtol;
  int tol_set;                        /* tolerance given on the arg itself */
  /* params: default (has_default) */
  int has_default;
  double def;
} kope_arg;

/* Resolve NAME_OR_PATH (a folder under ops_dir, or a path to an operator
 * folder) and load its spec. ops_dir NULL: kope_ops_dir(). Returns NULL
 * with err (KOPE_EINPUT) on any problem. Caller frees with kope_op_free. */
kope_op *kope_op_load(const char *name_or_path, const char *ops_dir, kope_err *err);
void kope_op_free(kope_op *op);

/* The operator directory: $KOPE_OPS, else ./ops when it exists, else the
 * source tree's ops/. Caller frees. */
char *kope_ops_dir(void);
/* Names of operator folders (those with an op.json) under dir, sorted.
 * *names is a malloc'd array of malloc'd strings; free with
 * kope_strv_free. Returns KOPE_OK or an error. */
int kope_ops_list(const char *dir, char ***names, size_t *n, kope_err *err);
void kope_strv_free(char **v, size_t n);

const char *kope_op_name(const kope_op *op);
const char *kope_op_category(const kope_op *op);
const char *kope_op_description(const kope_op *op);
const char *kope_op_dir(const kope_op *op);
const char *kope_op_spec_path(const kope_op *op);
int kope_op_level(const kope_op *op);
size_t kope_op_nargs(const kope_op *op);
const kope_arg *kope_op_arg(const kope_op *op, size_t i);
size_t kope_op_ncases(const kope_op *op);
const char *kope_op_case_name(const kope_op *op, size_t c);   /* never NULL */
/* A case's role (op.json "role"): KOPE_CASE_CHECK cases are judged for
 * correctness only, never timed or scored; KOPE_CASE_PERF cases are judged,
 * timed and scored. A case without "role" is both (KOPE_CASE_BOTH), as every
 * case was before roles existed. */
typedef enum { KOPE_CASE_BOTH = 0, KOPE_CASE_CHECK = 1, KOPE_CASE_PERF = 2 } kope_case_role;
kope_case_role kope_op_case_role(const kope_op *op, size_t c);
/* Nonzero when case c is timed and scored (role perf, or no role). */
int kope_op_case_timed(const kope_op *op, size_t c);
/* Where a perf case's shape comes from (op.json "source", e.g. "Llama-2-7B
 * FFN up projection, 64 tokens"); "" when not given. Never NULL. */
const char *kope_op_case_source(const kope_op *op, size_t c);
/* Paths (owned by op); vendor NULL when the operator has none. */
const char *kope_op_reference_path(const kope_op *op);
const char *kope_op_seed_path(const kope_op *op);
/* The seed kernel for a target's source extension: NULL or ".c", the
 * spec's seed; another extension, seed<ext> in the operator's folder
 * (".cl": seed.cl, ".cu": seed.cu). Caller frees; the file may not exist. */
char *kope_op_seed_path_for(const kope_op *op, const char *ext);
const char *kope_op_vendor_path(const kope_op *op);
const char *kope_op_vendor_name(const kope_op *op);
size_t kope_op_vendor_nlibs(const kope_op *op);
const char *kope_op_vendor_lib(const kope_op *op, size_t i);
/* The text of a trusted source of op (its reference or a vendor baseline,
 * at path) as it is compiled: each `#include "../_vendor/NAME.h"` line
 * replaced by that shared vendor helper (from the _vendor folder beside
 * the operator's folder, else the shipped ops/_vendor), with #line
 * directives; a file without one is returned as it is. Caller frees; NULL
 * with err set (KOPE_EINPUT naming file:line for an unknown helper). */
char *kope_op_trusted_source(const kope_op *op, const char *path, kope_err *err);

/* Linker flag for a vendor library name ("openblas" -> "-lopenblas"), or
 * NULL when the name is not one kope links (openblas, dnnl, m). */
const char *kope_op_lib_flag(const char *lib);

#define KOPE_OP_VENDOR_MAX_LIBS 4

/* A vendor baseline as one target builds it: source path, display name and
 * library names (all owned by the op). */
typedef struct kope_op_vendor {
  const char *path;
  const char *name;
  size_t nlibs;
  const char *libs[KOPE_OP_VENDOR_MAX_LIBS];
} kope_op_vendor;

/* The language a vendor baseline is written in; each target names the
 * one it times (kope_target_vendor_lang, kope_target_vendor). */
typedef enum kope_op_vendor_lang {
  KOPE_OP_VENDOR_NONE = 0,  /* none */
  KOPE_OP_VENDOR_C,         /* op.json "vendor": C calling OpenBLAS / oneDNN */
  KOPE_OP_VENDOR_CUDA       /* op.json "vendor_cuda": CUDA C++ host code calling
                             * cuBLAS / cuDNN */
} kope_op_vendor_lang;

/* The vendor baseline written in lang, or NULL when the operator has none
 * (always NULL for KOPE_OP_VENDOR_NONE). */
const kope_op_vendor *kope_op_vendor_for(const kope_op *op, kope_op_vendor_lang lang);
/* Linker flag for a library of a vendor baseline in lang: C as
 * kope_op_lib_flag; CUDA: "cublas" -> "-lcublas", "cudnn" -> "-lcudnn".
 * NULL for a name that language's baselines do not link. */
const char *kope_op_vendor_lib_flag(kope_op_vendor_lang lang, const char *lib);

/* The C prototype, e.g. "void relu(const float *x, float *y, int64_t n);".
 * Caller frees. */
char *kope_op_prototype(const kope_op *op);
const char *kope_dtype_c(kope_dtype t);     /* "float", "int64_t", ... */
const char *kope_dtype_name(kope_dtype t);  /* "f32", ... */
size_t kope_dtype_size(kope_dtype t);
const char *kope_role_name(kope_role r);

/* A case bound to values: every dim and param has a value, every buffer an
 * element count. */
typedef struct kope_case_bind {
  int64_t ival[KOPE_MAX_ARGS];   /* dims and integer params */
  double fval[KOPE_MAX_ARGS];    /* float params (and int params as double) */
  int64_t count[KOPE_MAX_ARGS];  /* buffers: element count */
  double flops, bytes;
} kope_case_bind;

int kope_op_bind(const kope_op *op, size_t c, kope_case_bind *b, kope_err *err);
/* Evaluate an integer expression in the scope of a bound case. */
int kope_op_eval_expr(const kope_op *op, const kope_case_bind *b, const char *expr,
                      int64_t *v, kope_err *err);
/* "m=33 n=7 k=1023" (caller frees). */
char *kope_op_case_label(const kope_op *op, size_t c);
/* JSON description of the spec (new reference). */
json_t *kope_op_to_json(const kope_op *op);

/* ---- the no-compute screen ---- */

/* Kinds of kernels that do not compute the operator: "zeros", "constant",
 * "mean", "copy"; NULL-terminated. */
extern const char *const kope_screen_kinds[];
/* Source of a screen kernel of the given kind with op's prototype; every
 * output is filled without computing (see src/op/screen.c). Caller frees;
 * NULL with err set (KOPE_EREJECT when the kind does not apply to op, e.g.
 * "mean" without a float input; KOPE_EINPUT for an unknown kind). */
char *kope_op_screen_kernel(const kope_op *op, const char *kind, kope_err *err);

/* ---- knobs: `#define NAME VALUE  // @knob layer=L values=a,b,c "text"` ---- */

#define KOPE_MAX_KNOB_VALUES 16

typedef struct kope_knob {
  char name[64];
  char layer[16];
  char value[32];                            /* current value in the source */
  char values[KOPE_MAX_KNOB_VALUES][32];
  int nvalues;
  char desc[160];
  int line;                                  /* 1-based line of the #define */
} kope_knob;

/* The six optimization layers, NULL-terminated. */
extern const char *const kope_knob_layers[];

/* Parse every knob of src. *knobs is malloc'd (free()); where reports the
 * file name in errors. A malformed annotation is an error (KOPE_EINPUT)
 * naming the line; KOPE_ENOMEM when out of memory. */
int kope_knobs_parse(const char *src, const char *where, kope_knob **knobs,
                     size_t *n, kope_err *err);
/* A copy of src with knob name set to value (which must be allowed).
 * Caller frees; NULL with err set when the knob or value is unknown. */
char *kope_knobs_apply(const char *src, const char *name, const char *value,
                       kope_err *err);
/* A copy of src with every knob at the first of its listed values (the
 * "plain" configuration a search can start from). Caller frees; NULL with
 * err set when an annotation is malformed (where names the file). */
char *kope_knobs_plain(const char *src, const char *where, kope_err *err);
/* Thought id for a knob move, "<layer>.<lowercased name>=<value>". */
char *kope_knob_thought_id(const kope_knob *k, const char *value);

#ifdef __cplusplus
}
#endif
#endif
