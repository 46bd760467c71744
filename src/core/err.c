/*
 * Error slots: a status code plus a message. The message is formatted once
 * at the point of failure, where the file, field and expectation are known.
 */
#include <stdio.h>
#include <string.h>
#include "kope/core.h"

void kope_err_clear(kope_err *e)
{
  if (!e)
    return;
  e->code = KOPE_OK;
  e->msg[0] = '\0';
}

int kope_err_set(kope_err *e, int code, const char *fmt, ...)
{
  va_list ap;

  if (!e)
    return code;
  e->code = code;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return code;
}

int kope_err_nomem(kope_err *e, const char *what)
{
  return kope_err_set(e, KOPE_ENOMEM, "out of memory (%s)", what ? what : "allocation");
}
