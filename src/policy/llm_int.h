/*
 * Internals of the LLM policy shared by llm.c (the policy) and
 * llm_parse.c (turning a model's reply into a proposal); exposed to the
 * unit tests.
 */
#ifndef KOPE_POLICY_LLM_INT_H
#define KOPE_POLICY_LLM_INT_H

#include "kope/policy.h"

/* Parse a reply for operator op_name. Fills out->source, layer,
 * thought_id, title, rationale (thought_inferred when the header gave no
 * thought), or out->no_kernel with the reason and an excerpt of the
 * reply. incumbent (may be NULL) helps infer the thought from what the
 * candidate adds. Returns 1 when a kernel was found, 0 otherwise. Strings
 * in out are owned by out (kope_proposal_release). */
int kope_llm_parse_reply(const char *reply, const char *op_name, const char *incumbent,
                         kope_proposal *out);

#endif
