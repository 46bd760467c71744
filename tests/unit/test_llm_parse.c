/*
 * Unit tests for reading an LLM's reply (src/policy/llm_parse.c): the
 * asked-for shape; Markdown-decorated header keys in any order with a
 * multi-line rationale; prose around the code; several code blocks (the
 * last one defining the operator wins over snippets); code without a
 * fence; a missing header (the thought inferred from what the candidate
 * adds over the incumbent, and marked inferred); and the unusable replies
 * (no code, a block that is cut off, blocks that define something else)
 * that become no_kernel with a reason and the start of the reply.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kope_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/llm_int.h"

#define KERNEL "#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t n)\n{\n" \
               "  for (int64_t i = 0; i < n; i++)\n    y[i] = x[i] > 0 ? x[i] : 0;\n}\n"
#define PARALLEL "#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t n)\n{\n" \
                 "#pragma omp parallel for\n  for (int64_t i = 0; i < n; i++)\n" \
                 "    y[i] = x[i] > 0 ? x[i] : 0;\n}\n"

static void test_shape(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("LAYER: vectorize\nTHOUGHT: vectorize.avx2\n"
                                        "TITLE: use AVX2\nRATIONALE: eight lanes.\n\n"
                                        "```c\n" KERNEL "```\n", "relu", NULL, &p), 1);
  assert_string_equal(p.source, KERNEL);
  assert_string_equal(p.layer, "vectorize");
  assert_string_equal(p.thought_id, "vectorize.avx2");
  assert_string_equal(p.title, "use AVX2");
  assert_string_equal(p.rationale, "eight lanes.");
  assert_int_equal(p.thought_inferred, 0);
  assert_null(p.no_kernel);
  kope_proposal_release(&p);
}

static void test_decorated_header(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("Here is my next attempt.\n\n**Title:** Split rows\n"
                                        "- **Thought ID**: Parallel Rows\n"
                                        "**Layer:** Parallel (OpenMP)\n"
                                        "**Rationale:** the loop is independent;\n"
                                        "each thread takes a contiguous range.\n\n"
                                        "```cpp\n" PARALLEL "```\n\nThis should scale.\n",
                                        "relu", KERNEL, &p), 1);
  assert_string_equal(p.source, PARALLEL);
  assert_string_equal(p.layer, "parallel");
  assert_string_equal(p.thought_id, "parallel.parallel_rows");
  assert_string_equal(p.title, "Split rows");
  assert_string_equal(p.rationale,
                      "the loop is independent; each thread takes a contiguous range.");
  kope_proposal_release(&p);
}

static void test_several_blocks(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("THOUGHT: parallel.omp\nThe key line is:\n"
                                        "```c\n#pragma omp parallel for\n```\n"
                                        "A first draft:\n```c\n" KERNEL "```\n"
                                        "On reflection, the full kernel:\n```c\n" PARALLEL
                                        "```\nCompile with -fopenmp.\n", "relu", NULL, &p), 1);
  assert_string_equal(p.source, PARALLEL);
  assert_string_equal(p.thought_id, "parallel.omp");
  assert_string_equal(p.layer, "parallel");
  kope_proposal_release(&p);
}

static void test_unfenced(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("THOUGHT: algorithm.branchless\n"
                                        "Sure! The kernel:\n\n" KERNEL "\nHope this helps.\n",
                                        "relu", NULL, &p), 1);
  assert_string_equal(p.source, KERNEL);
  kope_proposal_release(&p);
}

static void test_inferred(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("I parallelized the loop.\n```\n" PARALLEL "```\n",
                                        "relu", KERNEL, &p), 1);
  assert_int_equal(p.thought_inferred, 1);
  assert_string_equal(p.thought_id, "parallel.omp_parallel_for");
  assert_string_equal(p.layer, "parallel");
  assert_contains(p.title, "(inferred)");
  assert_contains(p.rationale, "I parallelized the loop.");
  kope_proposal_release(&p);
  /* the incumbent already has the pragma: nothing recognisable is added */
  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("```c\n" PARALLEL "```\n", "relu", PARALLEL, &p), 1);
  assert_string_equal(p.thought_id, "algorithm.rewrite");
  assert_int_equal(p.thought_inferred, 1);
  kope_proposal_release(&p);
}

static void test_unusable(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("THOUGHT: tiling.block=64\nI would tile the loop.",
                                        "relu", KERNEL, &p), 0);
  assert_null(p.source);
  assert_contains(p.no_kernel, "no code defining relu()");
  assert_contains(p.no_kernel, "I would tile the loop.");
  assert_string_equal(p.thought_id, "tiling.block=64");
  kope_proposal_release(&p);

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("```c\n#include <stdint.h>\nvoid relu(const float *x"
                                        ", float *y, int64_t n)\n{\n  for (", "relu", NULL, &p),
                   0);
  assert_contains(p.no_kernel, "not closed");
  kope_proposal_release(&p);

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("```c\nvoid relu_fast(const float *x) { }\n```\n"
                                        "```python\nprint(1)\n```\n", "relu", NULL, &p), 0);
  assert_contains(p.no_kernel, "none of the 2 code blocks defines relu()");
  kope_proposal_release(&p);

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("", "relu", NULL, &p), 0);
  assert_non_null(p.no_kernel);
  kope_proposal_release(&p);
}

static void test_json(void **state)
{
  kope_proposal p;
  (void)state;

  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("{\"layer\": \"parallel\", \"thought_id\": "
                                        "\"parallel.rows\", \"title\": \"t\", \"rationale\":"
                                        " \"r\", \"source\": \"void relu(const float *x, "
                                        "float *y, long n) { }\"}", "relu", NULL, &p), 1);
  assert_string_equal(p.thought_id, "parallel.rows");
  assert_string_equal(p.layer, "parallel");
  assert_string_equal(p.source, "void relu(const float *x, float *y, long n) { }");
  kope_proposal_release(&p);
  memset(&p, 0, sizeof p);
  assert_int_equal(kope_llm_parse_reply("{\"source\": \"int x;\"}", "relu", NULL, &p), 0);
  assert_contains(p.no_kernel, "does not define relu()");
  kope_proposal_release(&p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shape),
    cmocka_unit_test(test_decorated_header),
    cmocka_unit_test(test_several_blocks),
    cmocka_unit_test(test_unfenced),
    cmocka_unit_test(test_inferred),
    cmocka_unit_test(test_unusable),
    cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
