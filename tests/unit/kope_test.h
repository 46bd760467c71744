/*
 * Shared fixtures of the cmocka unit tests (tests/unit/test_*.c), so a
 * helper every test needs is written once: the operator directory and
 * loader, a substring assertion, and a temporary directory. Include after
 * <cmocka.h>. Everything is static inline (a test uses what it needs);
 * strings returned are owned by the caller (free()), an operator by the
 * caller (kope_op_free). A failure ends the running test (fail_msg).
 */
#ifndef KOPE_TEST_H
#define KOPE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/op.h"

/* The shipped operator directory: $KOPE_SRC/ops, else the source tree's. */
static inline char *kt_ops_dir(void)
{
  const char *src = getenv("KOPE_SRC");

  return kope_path_join(src && *src ? src : KOPE_SOURCE_DIR, "ops");
}

/* A shipped operator by name; the test fails when it does not load. */
static inline kope_op *kt_op_load(const char *name)
{
  char *dir = kt_ops_dir();
  kope_err err = {0, ""};
  kope_op *op = kope_op_load(name, dir, &err);

  free(dir);
  if (!op)
    fail_msg("cannot load %s: %s", name, err.msg);
  return op;
}

/* needle must occur in hay (NULL fails). */
static inline void assert_contains(const char *hay, const char *needle)
{
  if (!hay || !strstr(hay, needle))
    fail_msg("expected \"%s\" in \"%s\"", needle, hay ? hay : "(null)");
}

/* Make a fresh directory /tmp/kope-TAG-XXXXXX into buf (n bytes, at least
 * 64); returns buf. Remove it with kope_rmtree. */
static inline char *kt_tmpdir(char *buf, size_t n, const char *tag)
{
  snprintf(buf, n, "/tmp/kope-%s-XXXXXX", tag);
  if (!mkdtemp(buf))
    fail_msg("mkdtemp %s failed", buf);
  return buf;
}

#endif
