/*
 * Helpers shared by the subcommands: printing JSON documents, a progress
 * line on a terminal, and reading a kernel file.
 */
#ifndef KOPE_TOOL_CLI_H
#define KOPE_TOOL_CLI_H

#include <jansson.h>
#include "kope/core.h"

/* Print j (stolen) to stdout as one document followed by a newline. */
void kope_cli_print_json(json_t *j);
/* Progress callback: rewrites one status line on stderr when it is a
 * terminal; silent otherwise. ctx is the line prefix (a string). */
void kope_cli_progress(void *ctx, const char *line);
/* Clear the progress line, if any. */
void kope_cli_progress_done(void);
/* Print an error to stderr as "kope CMD: msg" and return its code. */
int kope_cli_fail(const char *cmd, const kope_err *err);

#endif
