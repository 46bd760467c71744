/*
 * Integer expressions over named values, as used in operator specs for
 * shapes, flops and bytes: + - * / % ( ), unary minus, integer literals,
 * names, min(a,b) / max(a,b), cdiv(a,b) (ceiling division) and rup(a,b)
 * (a rounded up to a multiple of b; cdiv and rup need a >= 0, b > 0).
 * Division truncates; division by zero is an error. Evaluation is in int64 with overflow detection.
 */
#ifndef KOPE_CORE_EXPR_H
#define KOPE_CORE_EXPR_H

#include <stdint.h>

/* Looks a name up; returns 0 and sets *v when found, -1 otherwise. */
typedef int (*kope_expr_lookup)(void *ctx, const char *name, int64_t *v);

/* Evaluate text. On error returns -1 and writes a message (what was
 * expected, at which character) into msg. */
int kope_expr_eval(const char *text, kope_expr_lookup lookup, void *ctx,
                   int64_t *value, char *msg, size_t msgsize);

/* Call fn for every name the expression mentions (not the functions); returns -1
 * on a syntax error (message in msg). */
int kope_expr_names(const char *text, void (*fn)(void *ctx, const char *name),
                    void *ctx, char *msg, size_t msgsize);

#endif
