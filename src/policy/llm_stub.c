/*
 * Placeholder for the LLM policy until src/policy/llm.c (issue 7) lands:
 * asking for --policy llm fails with a clear message.
 */
#include "policy/policy_int.h"

kope_policy *kope_policy_llm_new(const kope_policy_opts *o, int with_tuner, kope_err *err)
{
  (void)o;
  (void)with_tuner;
  kope_err_set(err, KOPE_EINPUT, "the llm policy is not available in this build");
  return NULL;
}
