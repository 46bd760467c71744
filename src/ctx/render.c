/*
 * Rendering a context for an LLM: a system prompt (role, rules, reply
 * format) and a user prompt with one Markdown section per tier — the task
 * (hot), selected experience (warm) and background knowledge (cold) —
 * each item under its own heading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctx/ctx_int.h"

const char kope_ctx_reply_format[] =
    "Reply with a short header, then the complete kernel in one fenced C code block:\n"
    "\n"
    "LAYER: <parallel | tiling | vectorize | memory | instruction | algorithm>\n"
    "THOUGHT: <thought id, e.g. parallel.parallel=1 or tiling.block=64, or a new\n"
    "          <layer>.<name>=<value> id>\n"
    "TITLE: <one line>\n"
    "RATIONALE: <one or two sentences>\n"
    "\n"
    "```c\n"
    "<the complete source file defining the operator's function>\n"
    "```\n"
    "\n"
    "You may declare tuning knobs as `#define NAME VALUE // @knob layer=L values=a,b \"desc\"`;\n"
    "every combination of their values must be correct.\n";

static const char system_intro[] =
    "You are an expert performance engineer writing compute kernels. You improve one\n"
    "kernel step by step: each reply is one complete candidate, which is compiled,\n"
    "checked against a trusted reference on every case with fresh random inputs, and\n"
    "timed against the current best kernel (the incumbent). Never trade correctness for\n"
    "speed: no reading or caching results between calls, no skipping elements, no\n"
    "lowering precision below the tolerance, no system calls or I/O.\n\n";

/* The incumbent rule as the agent applies it (significant() and
 * judge_batch() in src/agent/agent.c), and what to build on. */
static void rule_text(kope_buf *b, const kope_ctx_state *s)
{
  double g = s->min_gain > 0 ? s->min_gain : 0.05, alpha = s->alpha > 0 ? s->alpha : 0.05;

  kope_buf_printf(b,
      "Promotion rule: the incumbent changes only for a correct candidate whose speedup\n"
      "over the incumbent (geometric mean over the timed cases of each case's median\n"
      "per-round time ratio) is at least %.2fx, with the geometric mean of the cases'\n"
      "lower ~95%% confidence bounds above 1\n"
      "and a sign-test p below %g (one-sided: the chance, were the two kernels equally\n"
      "fast, of the candidate winning at least as many rounds as it did, over the rounds of\n"
      "every timed case); it is then re-measured once and promoted only if the\n"
      "re-measurement passes the same test. Among several such candidates of one batch\n"
      "the fastest is re-measured. A candidate that is faster but misses one of these\n"
      "conditions is not promoted; the prompt says which condition it missed.\n\n"
      "What to build on: start from the incumbent's code, and carry over any improvement\n"
      "of the shown unpromoted candidate that was faster than the incumbent; combine\n"
      "changes when the last ones were too small to pass the rule on their own. Learn from\n"
      "the experience records given.\n\n",
      1.0 + g, alpha);
}

/* What the bracket of an experience line means (src/mem/score.c, the
 * confidence in src/agent/record.c). */
static const char case_legend[] =
    "Each experience line reads [label r=.. d=.. c=..]: r is the step ratio, the Case's\n"
    "speedup vs the reference divided by its parent's (first measurements; not the\n"
    "promotion test, so an effective Case may not have been promoted); label effective\n"
    "r >= 1.05, partial 1 <= r < 1.05, ineffective 0.85 <= r < 1, negative r < 0.85 or\n"
    "failed; d is the discounted score (r for a leaf, else 0.5 r + 0.35 x the sum of\n"
    "its children's d); c is the confidence, 1 - the two-sided sign-test p of its rounds\n"
    "against its incumbent (1 when failed or not timed).\n\n";

static int has_cases(const kope_ctx *c)
{
  size_t i;

  for (i = 0; i < c->n; i++)
    if (c->v[i].kind == KOPE_CTX_CASE || c->v[i].kind == KOPE_CTX_FIX)
      return 1;
  return 0;
}

static void section(kope_buf *b, const kope_ctx *c, int tier, const char *heading)
{
  size_t i;
  int any = 0;

  for (i = 0; i < c->n; i++) {
    const kope_ctx_item *it = &c->v[i];
    if (it->tier != tier)
      continue;
    if (!any++) {
      kope_buf_printf(b, "# %s\n\n", heading);
      if (tier == KOPE_TIER_WARM && has_cases(c))
        kope_buf_puts(b, case_legend);
    }
    kope_buf_printf(b, "## %s\n%s\n\n", it->title, it->text);
  }
}

int kope_ctx_render(const kope_ctx *c, char **system, char **user, kope_err *err)
{
  kope_buf s, u;

  (void)err;
  kope_buf_init(&s, 0);
  kope_buf_init(&u, 0);
  kope_buf_puts(&s, system_intro);
  rule_text(&s, c->s);
  kope_buf_puts(&s, kope_ctx_reply_format);
  section(&u, c, KOPE_TIER_HOT, "Task");
  section(&u, c, KOPE_TIER_WARM,
          c->mode == KOPE_CTX_PASSIVE ? "History and experience" : "Relevant experience");
  section(&u, c, KOPE_TIER_COLD, "Background knowledge");
  kope_buf_printf(&u, "Write the next candidate for operator %s. ", kope_op_name(c->s->op));
  kope_buf_puts(&u, "Follow the reply format from the system prompt.\n");
  *system = kope_buf_steal(&s);
  *user = kope_buf_steal(&u);
  return KOPE_OK;
}
