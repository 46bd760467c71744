/*
 * Unit tests for the LLM providers (src/llm): the SSE parser fed one byte
 * at a time, with CRLF and CR line ends, multi-line data, comments and a
 * last event without its blank line; the model table; configuration
 * errors (unknown provider, no model, hosted endpoint without a key); and
 * the command provider for real: the request JSON on stdin, a JSON reply
 * with usage and a length stop, a plain-text reply, a non-zero exit with
 * its stderr, and a hang killed at the timeout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/llm.h"

typedef struct seen {
  char log[1024];
  int n;
} seen;

static int record(const char *event, const char *data, void *ctx)
{
  seen *s = ctx;
  size_t len = strlen(s->log);

  snprintf(s->log + len, sizeof s->log - len, "[%s|%s]", event, data);
  s->n++;
  return 0;
}

static void test_sse(void **state)
{
  static const char stream[] =
      ": keep-alive comment\r\n"
      "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
      "data: line one\ndata: line two\n\n"
      "data:no-space\r\r"
      "id: 7\nretry: 100\nevent: ping\n\n"
      "data: [DONE]";
  seen s;
  kope_sse p;
  size_t i;
  (void)state;

  memset(&s, 0, sizeof s);
  kope_sse_init(&p, record, &s);
  for (i = 0; i < sizeof stream - 1; i++)
    assert_int_equal(kope_sse_feed(&p, stream + i, 1), 0);
  assert_int_equal(s.n, 4);
  assert_int_equal(kope_sse_finish(&p), 0);
  assert_string_equal(s.log, "[message_start|{\"a\":1}][message|line one\nline two]"
                             "[message|no-space][ping|][message|[DONE]]");
  kope_sse_release(&p);
}

static int stop_at_second(const char *event, const char *data, void *ctx)
{
  (void)event;
  (void)data;
  return ++*(int *)ctx == 2 ? 42 : 0;
}

static void test_sse_stop(void **state)
{
  int n = 0;
  kope_sse p;
  (void)state;

  kope_sse_init(&p, stop_at_second, &n);
  assert_int_equal(kope_sse_feed(&p, "data: a\n\ndata: b\n\ndata: c\n\n", 27), 42);
  assert_int_equal(n, 2);
  kope_sse_release(&p);
}

static void test_model_limits(void **state)
{
  long w, g;
  (void)state;

  kope_llm_model_limits("gpt-4o-mini", &w, &g);
  assert_int_equal(w, 128000);
  kope_llm_model_limits("gpt-4", &w, &g);
  assert_int_equal(w, 8192);
  kope_llm_model_limits("claude-sonnet-4-5", &w, &g);
  assert_int_equal(w, 200000);
  kope_llm_model_limits("Qwen/Qwen2.5-Coder-7B-Instruct", &w, &g);
  assert_int_equal(w, 32768);
  kope_llm_model_limits("my-own-model", &w, &g);
  assert_int_equal(w, 0);
  assert_int_equal(g, 0);
}

static void test_config(void **state)
{
  kope_llm_opts o;
  kope_err err;
  kope_llm *l;
  (void)state;

  kope_llm_opts_init(&o);
  o.provider = "nope";
  o.model = "m";
  kope_err_clear(&err);
  assert_null(kope_llm_new(&o, &err));
  assert_int_equal(err.code, KOPE_EINPUT);

  kope_llm_opts_init(&o);
  kope_err_clear(&err);
  assert_null(kope_llm_new(&o, &err));
  assert_non_null(strstr(err.msg, "no model"));

  unsetenv("KOPE_LLM_API_KEY");
  unsetenv("OPENAI_API_KEY");
  o.model = "gpt-4o";
  kope_err_clear(&err);
  assert_non_null(l = kope_llm_new(&o, &err));   /* a dry run needs no key */
  {
    kope_llm_reply r;
    assert_int_equal(kope_llm_chat(l, "s", "u", &r, &err), KOPE_EENV);
    assert_non_null(strstr(err.msg, "KOPE_LLM_API_KEY"));
    assert_int_equal(r.attempts, 0);   /* refused before any request */
    kope_llm_reply_release(&r);
  }
  kope_llm_free(l);

  o.url = "http://127.0.0.1:11434";      /* a local server needs no key */
  kope_err_clear(&err);
  assert_non_null(l = kope_llm_new(&o, &err));
  assert_string_equal(kope_llm_endpoint(l), "http://127.0.0.1:11434/v1/chat/completions");
  assert_string_equal(kope_llm_name(l), "openai:gpt-4o");
  kope_llm_free(l);

  o.provider = "anthropic";
  o.url = "http://localhost:8080/";
  o.api_key = "k-1234567";
  assert_non_null(l = kope_llm_new(&o, &err));
  assert_string_equal(kope_llm_endpoint(l), "http://localhost:8080/v1/messages");
  kope_llm_free(l);

  o.provider = "command";
  o.cmd = NULL;
  kope_err_clear(&err);
  assert_null(kope_llm_new(&o, &err));
  assert_non_null(strstr(err.msg, "--llm-cmd"));
}

static int run_cmd(const char *cmd, double timeout, kope_llm_reply *r, kope_err *err)
{
  kope_llm_opts o;
  kope_llm *l;
  int rc;

  kope_llm_opts_init(&o);
  o.provider = "command";
  o.cmd = cmd;
  o.cmd_timeout_s = timeout;
  assert_non_null(l = kope_llm_new(&o, err));
  kope_err_clear(err);
  rc = kope_llm_chat(l, "SYSTEM PROMPT", "USER PROMPT", r, err);
  kope_llm_free(l);
  return rc;
}

static void test_command(void **state)
{
  char cmd[512], *dir = getenv("TMPDIR"), path[300];
  kope_llm_reply r;
  kope_err err;
  double t0;
  FILE *f;
  (void)state;

  snprintf(path, sizeof path, "%s/kope-llm-req-%d.json", dir ? dir : "/tmp", (int)getpid());
  snprintf(cmd, sizeof cmd, "cat > %s; echo '{\"content\": \"hello\", \"usage\": "
           "{\"prompt_tokens\": 12, \"completion_tokens\": 3}, \"finish_reason\": \"length\"}'",
           path);
  assert_int_equal(run_cmd(cmd, 10, &r, &err), KOPE_OK);
  assert_string_equal(r.text, "hello");
  assert_int_equal(r.tokens_in, 12);
  assert_int_equal(r.tokens_out, 3);
  assert_int_equal(r.truncated, 1);
  kope_llm_reply_release(&r);
  {
    char buf[4096] = "";
    assert_non_null(f = fopen(path, "r"));
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    remove(path);
    assert_non_null(strstr(buf, "\"USER PROMPT\""));
    assert_non_null(strstr(buf, "\"SYSTEM PROMPT\""));
  }

  assert_int_equal(run_cmd("printf 'plain text reply'", 10, &r, &err), KOPE_OK);
  assert_string_equal(r.text, "plain text reply");
  assert_int_equal(r.truncated, 0);
  kope_llm_reply_release(&r);

  assert_int_equal(run_cmd("echo oops >&2; exit 7", 10, &r, &err), KOPE_EREJECT);
  assert_non_null(strstr(err.msg, "status 7"));
  assert_non_null(strstr(err.msg, "oops"));
  kope_llm_reply_release(&r);

  t0 = kope_now();
  assert_int_equal(run_cmd("sleep 30 & sleep 30", 1, &r, &err), KOPE_EREJECT);
  assert_true(kope_now() - t0 < 10);
  assert_non_null(strstr(err.msg, "timed out"));
  kope_llm_reply_release(&r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sse),
    cmocka_unit_test(test_sse_stop),
    cmocka_unit_test(test_model_limits),
    cmocka_unit_test(test_config),
    cmocka_unit_test(test_command),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
