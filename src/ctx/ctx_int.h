/*
 * Internals of the context assembler shared by ctx.c (items, budget,
 * admission), gather.c (what each tier holds) and render.c (prompts).
 */
#ifndef KOPE_CTX_INT_H
#define KOPE_CTX_INT_H

#include "kope/ctx.h"

struct kope_ctx {
  const kope_ctx_state *s;
  int mode;
  kope_ctx_budget b;
  kope_ctx_item *v;
  size_t n, cap;
  long tokens[KOPE_TIER_COUNT], total;
  size_t dropped[KOPE_TIER_COUNT];
  int nomem;          /* an item could not be added: the build fails with KOPE_ENOMEM */
};

/* Append an item (strings copied); the caller sets structured fields,
 * then calls kope_ctx_admit (hot items are always kept). NULL when out of
 * memory (c->nomem is set; nothing was added, so do not admit). */
kope_ctx_item *kope_ctx_push(kope_ctx *c, int tier, int kind, const char *title,
                             const char *text);
/* Replace *field (owned) by a copy of v (NULL: ""); out of memory keeps the
 * old value and sets c->nomem. */
void kope_ctx_set(kope_ctx *c, char **field, const char *v);
int kope_ctx_admit(kope_ctx *c);
void kope_ctx_pop(kope_ctx *c);

/* gather.c */
void kope_ctx_add_hot(kope_ctx *c);
int kope_ctx_add_warm(kope_ctx *c, kope_db *db, kope_err *err);
int kope_ctx_add_cold(kope_ctx *c, kope_db *db, kope_err *err);
int kope_ctx_add_cards(kope_ctx *c, kope_err *err);
int kope_ctx_add_passive(kope_ctx *c, kope_db *db, kope_err *err);
/* Append the line diff of b against a to out (diff.c: hunks with two lines
 * of context, ' ' / '-' / '+' lines); 0, or -1 when a side has more than
 * 4000 lines or memory ran out (out may then hold part of it). */
int kope_ctx_line_diff(const char *a, const char *b, kope_buf *out);

/* The reply format every LLM prompt asks for (render.c). */
extern const char kope_ctx_reply_format[];

#endif
