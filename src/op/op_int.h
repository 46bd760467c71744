/*
 * Internals of the op module: the kope_op structure, shared by the spec
 * loader (spec.c) and the accessors, binding and generators (op.c).
 */
#ifndef KOPE_OP_INT_H
#define KOPE_OP_INT_H

#include "kope/op.h"

#define KOPE_OP_MAX_CASES 64
#define KOPE_OP_MAX_LIBS 4
#define KOPE_OP_MAX_STRS 256

struct kope_op {
  const char *dir, *folder, *spec_path;
  const char *name, *category, *description;
  int level;
  size_t nargs;
  kope_arg args[KOPE_MAX_ARGS];
  size_t ncases;
  json_t *cases[KOPE_OP_MAX_CASES];
  const char *flops_expr, *bytes_expr;
  const char *reference_path, *seed_path, *vendor_path, *vendor_name;
  const char *libs[KOPE_OP_MAX_LIBS];
  size_t nlibs;
  kope_op_vendor vendor_cpu;      /* "vendor" again, as kope_op_vendor_for shows it */
  kope_op_vendor vendor_cuda;     /* "vendor_cuda"; path NULL when absent */
  char *strs[KOPE_OP_MAX_STRS];   /* every string the op owns */
  size_t nstrs;
  int nomem;                      /* a copy failed: kope_op_load reports KOPE_ENOMEM */
};

#endif
