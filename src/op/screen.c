/*
 * The no-compute screen: kernels that do not compute the operator, written
 * from the spec alone, which the operator's check must reject. METR found
 * that a sizeable share of a public benchmark's tasks could be passed
 * without computing anything (zeros, a constant, the input copied); an
 * operator whose cases or tolerance let such a kernel through measures
 * nothing. Each generated kernel has the operator's exact prototype and
 * fills every output the same way:
 *   zeros     every element 0;
 *   constant  every element 1;
 *   mean      every element the mean of the first float input;
 *   copy      the first input's elements, cyclically, converted to the
 *             output's type.
 * Buffer sizes are the spec's shape expressions rendered as C over the
 * kernel's own dim and integer-param arguments.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "kope/op.h"

const char *const kope_screen_kinds[] = {"zeros", "constant", "mean", "copy", NULL};

/* An integer expression of the spec as C: names cast to int64_t,
 * min/max as macros. */
static void expr_c(kope_buf *b, const char *e)
{
  while (*e) {
    if (isalpha((unsigned char)*e) || *e == '_') {
      const char *s = e;
      while (isalnum((unsigned char)*e) || *e == '_')
        e++;
      if ((e - s == 3) && (!strncmp(s, "min", 3) || !strncmp(s, "max", 3)) && *e == '(')
        kope_buf_printf(b, "KS_%c%c%c", toupper(s[0]), toupper(s[1]), toupper(s[2]));
      else
        kope_buf_printf(b, "((int64_t)%.*s)", (int)(e - s), s);
    } else {
      kope_buf_append(b, e++, 1);
    }
  }
}

static void count_c(kope_buf *b, const kope_arg *a)
{
  int i;

  kope_buf_puts(b, "(int64_t)1");
  for (i = 0; i < a->rank; i++) {
    kope_buf_puts(b, " * (");
    expr_c(b, a->shape[i]);
    kope_buf_puts(b, ")");
  }
}

static const kope_arg *first_input(const kope_op *op, int want_float)
{
  size_t i;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    if (a->role == KOPE_ROLE_IN &&
        (!want_float || a->dtype == KOPE_F32 || a->dtype == KOPE_F64))
      return a;
  }
  return NULL;
}

/* The value every output element gets, as a C expression of i. */
static int fill_value(const kope_op *op, const char *kind, kope_buf *pre, const char **val,
                      kope_err *err)
{
  const kope_arg *x;

  if (!strcmp(kind, "zeros")) {
    *val = "0";
  } else if (!strcmp(kind, "constant")) {
    *val = "1";
  } else if (!strcmp(kind, "mean")) {
    if (!(x = first_input(op, 1)))
      return kope_err_set(err, KOPE_EREJECT, "%s has no float input to average",
                          kope_op_name(op));
    kope_buf_puts(pre, "  double ks_s = 0;\n  int64_t ks_n = ");
    count_c(pre, x);
    kope_buf_printf(pre, ";\n  for (int64_t i = 0; i < ks_n; i++)\n    ks_s += %s[i];\n"
                         "  const double ks_m = ks_s / (double)ks_n;\n", x->name);
    *val = "ks_m";
  } else if (!strcmp(kind, "copy")) {
    if (!(x = first_input(op, 0)))
      return kope_err_set(err, KOPE_EREJECT, "%s has no input to copy", kope_op_name(op));
    kope_buf_puts(pre, "  int64_t ks_n = ");
    count_c(pre, x);
    kope_buf_printf(pre, ";\n  const %s *ks_x = %s;\n", kope_dtype_c(x->dtype), x->name);
    *val = "ks_x[i % ks_n]";
  } else {
    return kope_err_set(err, KOPE_EINPUT, "unknown screen kernel '%s' (zeros, constant, "
                        "mean or copy)", kind);
  }
  return KOPE_OK;
}

char *kope_op_screen_kernel(const kope_op *op, const char *kind, kope_err *err)
{
  kope_buf b, pre;
  const char *val = NULL;
  char *proto = NULL, *out = NULL;
  size_t i, len;

  kope_buf_init(&b, 0);
  kope_buf_init(&pre, 0);
  if (fill_value(op, kind, &pre, &val, err) != KOPE_OK)
    goto out;
  proto = kope_op_prototype(op);
  len = strlen(proto);
  while (len > 0 && (proto[len - 1] == ';' || isspace((unsigned char)proto[len - 1])))
    proto[--len] = '\0';
  kope_buf_printf(&b, "/* no-compute screen kernel: %s */\n#include <stdint.h>\n"
                      "#define KS_MIN(a, b) ((a) < (b) ? (a) : (b))\n"
                      "#define KS_MAX(a, b) ((a) > (b) ? (a) : (b))\n\n%s\n{\n%s",
                  kind, proto, pre.data ? pre.data : "");
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    if (a->role != KOPE_ROLE_OUT)
      continue;
    kope_buf_puts(&b, "  for (int64_t i = 0, ks_len = ");
    count_c(&b, a);
    kope_buf_printf(&b, "; i < ks_len; i++)\n    %s[i] = (%s)(%s);\n", a->name,
                    kope_dtype_c(a->dtype), val);
  }
  kope_buf_puts(&b, "}\n");
  out = kope_buf_steal(&b);
out:
  free(proto);
  kope_buf_release(&b);
  kope_buf_release(&pre);
  return out;
}
