/*
 * Shared CLI helpers (see cli.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static int progress_shown;

void kope_cli_print_json(json_t *j)
{
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));

  if (s) {
    fputs(s, stdout);
    fputc('\n', stdout);
  }
  free(s);
  json_decref(j);
}

void kope_cli_progress(void *ctx, const char *line)
{
  if (!isatty(2))
    return;
  fprintf(stderr, "\r\033[K%s%s", ctx ? (const char *)ctx : "", line);
  fflush(stderr);
  progress_shown = 1;
}

void kope_cli_progress_done(void)
{
  if (progress_shown) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
  progress_shown = 0;
}

int kope_cli_fail(const char *cmd, const kope_err *err)
{
  kope_cli_progress_done();
  fprintf(stderr, "kope %s: %s\n", cmd, err->msg[0] ? err->msg : "failed");
  return err->code ? err->code : 1;
}
