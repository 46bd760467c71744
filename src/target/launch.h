/*
 * Declared launch geometry of GPU-style kernels (OpenCL, CUDA). A kernel
 * source names its geometry on one line, e.g.
 *   // @launch global=rup(cdiv(n, EPT), WG) local=WG
 *   // @launch grid=cdiv(n, 256) block=256 shared=1024
 * Each key takes one to three integer expressions separated by commas
 * (src/core/expr.c: + - * / % ( ), min, max, cdiv, rup). Names are the
 * operator's dim arguments, its integer params, and the knob macros of the
 * same file (their current values, which must be integers). The host side
 * (kope's, trusted) evaluates the expressions for each bound case; the
 * candidate never codes its own launch. Target-neutral: the caller says
 * which keys are allowed and which are required.
 */
#ifndef KOPE_TARGET_LAUNCH_H
#define KOPE_TARGET_LAUNCH_H

#include "kope/op.h"

#define KOPE_LAUNCH_MAX_KEYS 4
#define KOPE_LAUNCH_MAX_DIMS 3
#define KOPE_LAUNCH_MAX_KNOBS 32

typedef struct kope_launch_key {
  char name[16];                                  /* "global", "local", ... */
  int n;                                          /* expressions given: 1..3 */
  char expr[KOPE_LAUNCH_MAX_DIMS][256];
} kope_launch_key;

/* A parsed @launch line; plain data, no ownership. */
typedef struct kope_launch {
  int nkeys;
  kope_launch_key key[KOPE_LAUNCH_MAX_KEYS];
  int nknobs;                                     /* integer knob macros of the file */
  char knob[KOPE_LAUNCH_MAX_KNOBS][64];
  int64_t knob_val[KOPE_LAUNCH_MAX_KNOBS];
} kope_launch;

/* Parse the single `// @launch` line of src. keys: the allowed keys
 * (NULL-terminated); required: those that must be present (NULL-terminated,
 * may be NULL). Every name is checked against op's dims and integer params
 * and the file's knobs. Returns KOPE_OK, or KOPE_EINPUT with a message that
 * starts with "launch: " (e.g. "launch: unknown name 'X' in global=X*2"). */
int kope_launch_parse(const char *src, const kope_op *op, const char *const *keys,
                      const char *const *required, kope_launch *l, kope_err *err);

/* The key named name, or NULL when the line does not give it. */
const kope_launch_key *kope_launch_find(const kope_launch *l, const char *name);

/* Evaluate key name for bound case b: v[0..2] (dimensions not given are
 * 1), *n the number given. KOPE_EINPUT when the key is absent or an
 * expression fails (division by zero, overflow). */
int kope_launch_eval(const kope_launch *l, const kope_op *op, const kope_case_bind *b,
                     const char *name, int64_t v[KOPE_LAUNCH_MAX_DIMS], int *n, kope_err *err);

/* Look name up as evaluation does (dims, integer params, knobs): 0 and *v
 * set when known. ival: the case's dim/param values by argument index. */
int kope_launch_lookup(const kope_launch *l, const kope_op *op, const int64_t *ival,
                       const char *name, int64_t *v);

#endif
