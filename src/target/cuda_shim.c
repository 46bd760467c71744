/*
 * The trusted host side of a CUDA worker, generated per operator and per
 * candidate: kope_child_invoke copies the slot's inputs and (poisoned)
 * outputs to the device at the slot's first use in a CALL, flushes the L2
 * cache by writing a buffer larger than it, launches the kernel once with
 * the geometry of its `// @launch` line between two CUDA events and
 * synchronizes the whole device. The device hooks of the child runtime
 * (kope_child.h, defined in kope_cuda_rt.h) create the context and buffers
 * at MAP (before the seal) and, at the end of a CALL, copy the outputs
 * back, check a guard page after every output on the device and report the
 * median event time of the CALL's launches as device_ns.
 *
 * A vendor baseline (vendor_cuda, trusted host code calling cuBLAS or
 * cuDNN) gets the same host side with the launch replaced by one call of
 * its C function on device pointers (kope_cuda_vendor_shim_source): the
 * worker protocol, copies, L2 flush and event timing are the candidate's.
 *
 * The launch expressions are translated to C++ here: names become the
 * case's values (a->ival[i]) or the knob's integer value, and min, max,
 * cdiv, rup become checked helpers. The candidate's own macros never reach
 * this text: the candidate is appended after it in the same translation
 * unit (see cuda.c), so nothing it defines can change the shim.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target/cuda_int.h"

static const char *cu_type(kope_dtype t)
{
  return t == KOPE_F32 ? "float" : t == KOPE_F64 ? "double" : t == KOPE_I32 ? "int" : "long long";
}

char *kope_cuda_kernel_decl(const kope_op *op)
{
  kope_buf b;
  size_t i;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "extern \"C\" __global__ void %s(", kope_op_name(op));
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    const char *sep = i ? ", " : "";
    if (a->role == KOPE_ROLE_IN)
      kope_buf_printf(&b, "%sconst %s *__restrict__ %s", sep, cu_type(a->dtype), a->name);
    else if (a->role == KOPE_ROLE_OUT)
      kope_buf_printf(&b, "%s%s *%s", sep, cu_type(a->dtype), a->name);
    else if (a->role == KOPE_ROLE_DIM)
      kope_buf_printf(&b, "%slong long %s", sep, a->name);
    else
      kope_buf_printf(&b, "%s%s %s", sep, cu_type(a->dtype), a->name);
  }
  kope_buf_puts(&b, ")");
  return kope_buf_steal(&b);
}

/* Append expression e translated to C++ over the case values. Returns 0,
 * or -1 with err set for a name the launch module did not resolve. */
static int translate(kope_buf *b, const char *e, const kope_op *op, const kope_launch *l,
                     kope_err *err)
{
  static const char *const fns[] = {"min", "max", "cdiv", "rup", NULL};
  const char *p = e;

  kope_buf_puts(b, "(");
  while (*p) {
    char name[64];
    size_t n = 0, i;
    int k, done = 0;
    if (!isalpha((unsigned char)*p) && *p != '_') {
      kope_buf_printf(b, "%c", *p++);
      continue;
    }
    while ((isalnum((unsigned char)*p) || *p == '_') && n < sizeof name - 1)
      name[n++] = *p++;
    name[n] = '\0';
    for (k = 0; fns[k] && !done; k++)
      if ((done = !strcmp(name, fns[k])))
        kope_buf_printf(b, "kope_%s", name);
    for (i = 0; i < kope_op_nargs(op) && !done; i++) {
      const kope_arg *a = kope_op_arg(op, i);
      if ((done = !strcmp(a->name, name) &&
                  (a->role == KOPE_ROLE_DIM || a->role == KOPE_ROLE_PARAM)))
        kope_buf_printf(b, "(int64_t)a->ival[%zu]", i);
    }
    for (k = 0; k < l->nknobs && !done; k++)
      if ((done = !strcmp(l->knob[k], name)))
        kope_buf_printf(b, "(int64_t)%lldLL", (long long)l->knob_val[k]);
    if (!done)
      return kope_err_set(err, KOPE_EINPUT, "launch: unknown name '%s' in %s", name, e);
  }
  kope_buf_puts(b, ")");
  return 0;
}

/* `v[0..2] = ...;` for launch key name (missing dimensions are 1). */
static int emit_key(kope_buf *b, const char *var, const char *name, const kope_op *op,
                    const kope_launch *l, kope_err *err)
{
  const kope_launch_key *k = kope_launch_find(l, name);
  int i;

  for (i = 0; i < 3; i++) {
    kope_buf_printf(b, "  %s[%d] = ", var, i);
    if (k && i < k->n) {
      if (translate(b, k->expr[i], op, l, err))
        return -1;
    } else {
      kope_buf_puts(b, !k && !strcmp(name, "shared") ? "0" : "1");
    }
    kope_buf_puts(b, ";\n");
  }
  return 0;
}

static const char shim_head[] =
  "#include <stdint.h>\n#include <string.h>\n#include <cuda_runtime.h>\n"
  "#include \"kope_child.h\"\n#include \"kope_cuda_rt.h\"\n\n";

/* The call's arguments: device pointers, dims as dim_type, params in
 * their type (type_of: the kernel's CUDA types or the vendor's C ones). */
static void emit_args(kope_buf *b, const kope_op *op, const char *(*type_of)(kope_dtype),
                      const char *dim_type)
{
  size_t i;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    const char *t = type_of(a->dtype), *sep = i ? ",\n      " : "";
    if (a->role == KOPE_ROLE_IN)
      kope_buf_printf(b, "%s(const %s *)kope_dev_in(a->ptr[%zu])", sep, t, i);
    else if (a->role == KOPE_ROLE_OUT)
      kope_buf_printf(b, "%s(%s *)kope_dev_out(a->ptr[%zu])", sep, t, i);
    else if (a->role == KOPE_ROLE_DIM)
      kope_buf_printf(b, "%s(%s)a->ival[%zu]", sep, dim_type, i);
    else if (a->dtype == KOPE_F32 || a->dtype == KOPE_F64)
      kope_buf_printf(b, "%s(%s)a->fval[%zu]", sep, t, i);
    else
      kope_buf_printf(b, "%s(%s)a->ival[%zu]", sep, t, i);
  }
}

char *kope_cuda_shim_source(const kope_op *op, const char *candidate, kope_err *err)
{
  static const char *const keys[] = {"grid", "block", "shared", NULL};
  static const char *const required[] = {"grid", "block", NULL};
  kope_launch l;
  kope_buf b;
  char *decl;
  int ok = 1;

  if (kope_launch_parse(candidate, op, keys, required, &l, err) != KOPE_OK)
    return NULL;
  decl = kope_cuda_kernel_decl(op);
  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "/* Generated by kope: the CUDA host side of operator %s. */\n%s"
                  "%s;\n\nextern \"C\" void kope_child_invoke(const kope_child_args *a)\n{\n"
                  "  int64_t g[3], bl[3], sh[3];\n  if (!kope_cuda_begin(a))\n    return;\n",
                  kope_op_name(op), shim_head, decl);
  if (emit_key(&b, "g", "grid", op, &l, err) || emit_key(&b, "bl", "block", op, &l, err) ||
      emit_key(&b, "sh", "shared", op, &l, err)) {
    ok = 0;
    goto out;
  }
  kope_buf_printf(&b, "  if (!kope_cuda_geometry(g, bl, sh[0], (const void *)%s))\n"
                  "    return;\n  kope_cuda_start();\n  %s<<<kope_cuda_grid, kope_cuda_block, "
                  "kope_cuda_shared>>>(\n      ", kope_op_name(op), kope_op_name(op));
  emit_args(&b, op, cu_type, "long long");
  kope_buf_puts(&b, ");\n  kope_cuda_finish(a);\n}\n\n#line 1 \"kernel.cu\"\n");
out:
  free(decl);
  if (!ok) {
    kope_buf_release(&b);
    return NULL;
  }
  return kope_buf_steal(&b);
}

char *kope_cuda_vendor_shim_source(const kope_op *op)
{
  char *proto = kope_op_prototype(op);
  kope_buf b;

  kope_buf_init(&b, 0);
  /* the nominal 1x1x1 geometry is only checked and recorded; the call
   * of kope_cuda_geometry is for its L2 flush */
  kope_buf_printf(&b, "/* Generated by kope: the CUDA host side of the vendor baseline of "
                  "operator %s. */\n%sextern \"C\" %s\n\nextern \"C\" void "
                  "kope_child_invoke(const kope_child_args *a)\n{\n"
                  "  static const int64_t one[3] = {1, 1, 1};\n"
                  "  if (!kope_cuda_begin(a) || !kope_cuda_geometry(one, one, 0, NULL))\n"
                  "    return;\n  kope_cuda_start();\n  %s(\n      ",
                  kope_op_name(op), shim_head, proto, kope_op_name(op));
  emit_args(&b, op, kope_dtype_c, "int64_t");
  kope_buf_puts(&b, ");\n  kope_cuda_finish(a);\n}\n");
  free(proto);
  return kope_buf_steal(&b);
}
