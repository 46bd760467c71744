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
    "timed against the current best kernel (the incumbent). Only a correct candidate\n"
    "that is measurably faster replaces the incumbent. Make one focused change per\n"
    "step, learn from the experience records given, and never trade correctness for\n"
    "speed: no reading or caching results between calls, no skipping elements, no\n"
    "lowering precision below the tolerance, no system calls or I/O.\n\n";

static void section(kope_buf *b, const kope_ctx *c, int tier, const char *heading)
{
  size_t i;
  int any = 0;

  for (i = 0; i < c->n; i++) {
    const kope_ctx_item *it = &c->v[i];
    if (it->tier != tier)
      continue;
    if (!any++)
      kope_buf_printf(b, "# %s\n\n", heading);
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
