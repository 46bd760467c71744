/*
 * ACMI context assembly (see include/kope/ctx.h): gathers candidate items
 * per tier — hot from the state, warm and cold from the experience store
 * and the target's knowledge cards — and admits them under the budget
 * B_k = max(0, W − S − G − R): all of hot (or the step is refused), then
 * warm best-first up to Q_w, then cold up to Q_c. The passive baseline
 * appends the session history and every retrieved record in arrival
 * order up to the window.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctx/ctx_int.h"

static const char *const tier_names[] = {"hot", "warm", "cold"};
static const char *const kind_names[] = {"spec", "target", "incumbent", "feedback", "case",
                                         "fix", "digest", "journal", "card", "history"};

const char *kope_tier_name(int tier)
{
  return tier >= 0 && tier < KOPE_TIER_COUNT ? tier_names[tier] : "unknown";
}

const char *kope_ctx_kind_name(int kind)
{
  return kind >= 0 && kind < KOPE_CTX_KIND_COUNT ? kind_names[kind] : "unknown";
}

void kope_ctx_budget_init(kope_ctx_budget *b)
{
  b->window = 32768;
  b->system = 800;
  b->generation = 4096;
  b->recency = 1024;
  b->warm_quota = 6000;
  b->cold_quota = 3000;
  b->chars_per_token = 4.0;
}

long kope_ctx_knowledge_budget(const kope_ctx_budget *b)
{
  long k = b->window - b->system - b->generation - b->recency;
  return k > 0 ? k : 0;
}

long kope_ctx_estimate(const kope_ctx_budget *b, const char *text)
{
  double cpt = b && b->chars_per_token > 0 ? b->chars_per_token : 4.0;
  size_t chars = 0;
  const unsigned char *p;

  if (!text)
    return 0;
  for (p = (const unsigned char *)text; *p; p++)
    chars += (*p & 0xC0) != 0x80;   /* count UTF-8 characters, not bytes */
  return (long)ceil((double)chars / cpt);
}

void kope_ctx_calibrate(kope_ctx_budget *b, size_t chars, long tokens)
{
  double obs, cur = b->chars_per_token > 0 ? b->chars_per_token : 4.0;

  if (tokens <= 0 || chars == 0)
    return;
  obs = (double)chars / (double)tokens;
  if (obs < 1.0 || obs > 12.0)
    return;   /* implausible: a provider that counts something else */
  b->chars_per_token = 0.7 * cur + 0.3 * obs;
}

/* ---- items ---- */

kope_ctx_item *kope_ctx_push(kope_ctx *c, int tier, int kind, const char *title,
                             const char *text)
{
  kope_ctx_item *it;

  if (kope_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v) != KOPE_OK) {
    c->nomem = 1;
    return NULL;
  }
  it = &c->v[c->n++];
  memset(it, 0, sizeof *it);   /* the slot may hold a popped item */
  it->tier = tier;
  it->kind = kind;
  it->title = kope_strdup(title ? title : "");
  it->text = kope_strdup(text ? text : "");
  it->op = kope_strdup("");
  it->category = kope_strdup("");
  it->layer = kope_strdup("");
  it->thought_id = kope_strdup("");
  it->verdict = kope_strdup("");
  it->target = kope_strdup("");
  if (!it->title || !it->text || !it->op || !it->category || !it->layer || !it->thought_id ||
      !it->verdict || !it->target) {
    kope_ctx_pop(c);
    c->nomem = 1;
    return NULL;
  }
  it->score.label = -1;
  it->tokens = kope_ctx_estimate(&c->b, it->title) + kope_ctx_estimate(&c->b, it->text) + 4;
  return it;
}

void kope_ctx_set(kope_ctx *c, char **field, const char *v)
{
  char *copy = kope_strdup(v ? v : "");

  if (!copy) {
    c->nomem = 1;   /* the old value stays; the build fails */
    return;
  }
  free(*field);
  *field = copy;
}

static void item_release(kope_ctx_item *it)
{
  free(it->title);
  free(it->text);
  free(it->op);
  free(it->category);
  free(it->layer);
  free(it->thought_id);
  free(it->verdict);
  free(it->target);
}

/* Drop the last item (not admitted). */
void kope_ctx_pop(kope_ctx *c)
{
  if (c->n)
    item_release(&c->v[--c->n]);
}

void kope_ctx_free(kope_ctx *c)
{
  size_t i;

  if (!c)
    return;
  for (i = 0; i < c->n; i++)
    item_release(&c->v[i]);
  free(c->v);
  free(c);
}

/* Admit the last pushed item against the tier quota and the total budget;
 * returns 1 when kept, 0 when dropped. */
int kope_ctx_admit(kope_ctx *c)
{
  kope_ctx_item *it = &c->v[c->n - 1];
  long quota = it->tier == KOPE_TIER_WARM ? c->b.warm_quota : c->b.cold_quota;
  long limit = c->mode == KOPE_CTX_PASSIVE ? c->b.window - c->b.system - c->b.generation
                                           : kope_ctx_knowledge_budget(&c->b);

  if (it->tier != KOPE_TIER_HOT &&
      ((c->mode == KOPE_CTX_ACTIVE && c->tokens[it->tier] + it->tokens > quota) ||
       c->total + it->tokens > limit)) {
    c->dropped[it->tier]++;
    kope_ctx_pop(c);
    return 0;
  }
  c->tokens[it->tier] += it->tokens;
  c->total += it->tokens;
  return 1;
}

/* ---- building ---- */

static int check_hot(kope_ctx *c, kope_err *err)
{
  long bk = kope_ctx_knowledge_budget(&c->b);

  if (c->mode == KOPE_CTX_ACTIVE && c->tokens[KOPE_TIER_HOT] > bk)
    return kope_err_set(err, KOPE_EINPUT,
                        "context: the hot payload (specification, incumbent, feedback, "
                        "target) needs %ld tokens but the knowledge budget B_k = W-S-G-R = "
                        "%ld-%ld-%ld-%ld is %ld; raise the window or lower the reserves",
                        c->tokens[KOPE_TIER_HOT], c->b.window, c->b.system,
                        c->b.generation, c->b.recency, bk);
  return KOPE_OK;
}

kope_ctx *kope_ctx_build(const kope_ctx_state *s, kope_db *db, int mode,
                         const kope_ctx_budget *b, kope_err *err)
{
  kope_ctx *c = calloc(1, sizeof *c);
  int rc;

  if (!c) {
    kope_err_nomem(err, "context");
    return NULL;
  }
  c->s = s;
  c->mode = mode;
  if (b)
    c->b = *b;
  else
    kope_ctx_budget_init(&c->b);
  kope_ctx_add_hot(c);
  if ((rc = check_hot(c, err)))
    goto out;
  if (mode == KOPE_CTX_PASSIVE)
    rc = kope_ctx_add_passive(c, db, err);
  else if (db && (rc = kope_ctx_add_warm(c, db, err)) == KOPE_OK)
    rc = kope_ctx_add_cold(c, db, err);
  if (rc == KOPE_OK && mode == KOPE_CTX_ACTIVE && !db)
    rc = kope_ctx_add_cards(c, err);
  if (rc == KOPE_OK && c->nomem)
    rc = kope_err_nomem(err, "context items");
out:
  if (rc != KOPE_OK) {
    kope_ctx_free(c);
    return NULL;
  }
  return c;
}

int kope_ctx_mode_of(const kope_ctx *c) { return c->mode; }
size_t kope_ctx_nitems(const kope_ctx *c) { return c->n; }
const kope_ctx_item *kope_ctx_item_at(const kope_ctx *c, size_t i) { return i < c->n ? &c->v[i] : NULL; }
long kope_ctx_total_tokens(const kope_ctx *c) { return c->total; }
const kope_ctx_budget *kope_ctx_budget_of(const kope_ctx *c) { return &c->b; }
const kope_ctx_state *kope_ctx_state_of(const kope_ctx *c) { return c->s; }

long kope_ctx_tier_tokens(const kope_ctx *c, int tier)
{
  return tier >= 0 && tier < KOPE_TIER_COUNT ? c->tokens[tier] : 0;
}

size_t kope_ctx_dropped(const kope_ctx *c, int tier)
{
  return tier >= 0 && tier < KOPE_TIER_COUNT ? c->dropped[tier] : 0;
}

static json_t *item_json(const kope_ctx_item *it, int with_text)
{
  json_t *j = json_pack("{s:s, s:s, s:s, s:I}", "tier", kope_tier_name(it->tier), "kind",
                        kope_ctx_kind_name(it->kind), "title", it->title, "tokens",
                        (json_int_t)it->tokens);

  if (it->kind == KOPE_CTX_CASE || it->kind == KOPE_CTX_FIX || it->kind == KOPE_CTX_DIGEST) {
    json_object_set_new(j, "op", json_string(it->op));
    json_object_set_new(j, "thought_id", json_string(it->thought_id));
    json_object_set_new(j, "layer", json_string(it->layer));
    json_object_set_new(j, "relevance", json_real(it->relevance));
    json_object_set_new(j, "target", json_string(it->target));
    if (it->other_target)
      json_object_set_new(j, "other_target", json_true());
    if (it->kind == KOPE_CTX_DIGEST)
      json_object_set_new(j, "attempts", json_integer(it->attempts));
    else
      json_object_set_new(j, "case_id", json_integer(it->case_id));
  }
  if (with_text)
    json_object_set_new(j, "text", json_string(it->text));
  return j;
}

json_t *kope_ctx_to_json(const kope_ctx *c, int with_text)
{
  json_t *items = json_array();
  size_t i;

  for (i = 0; i < c->n; i++)
    json_array_append_new(items, item_json(&c->v[i], with_text));
  return json_pack("{s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}, s:{s:I, s:I, s:I, s:I},"
                   " s:{s:I, s:I}, s:o}",
                   "mode", c->mode == KOPE_CTX_PASSIVE ? "passive" : "active", "budget",
                   "window", (json_int_t)c->b.window, "system", (json_int_t)c->b.system,
                   "generation", (json_int_t)c->b.generation, "recency",
                   (json_int_t)c->b.recency, "knowledge", (json_int_t)kope_ctx_knowledge_budget(&c->b),
                   "warm_quota", (json_int_t)c->b.warm_quota, "cold_quota",
                   (json_int_t)c->b.cold_quota, "chars_per_token", c->b.chars_per_token,
                   "tokens", "hot", (json_int_t)c->tokens[0], "warm", (json_int_t)c->tokens[1],
                   "cold", (json_int_t)c->tokens[2], "total", (json_int_t)c->total, "dropped",
                   "warm", (json_int_t)c->dropped[1], "cold", (json_int_t)c->dropped[2],
                   "items", items);
}
