/*
 * The child runtime: the trusted part of a worker process. It maps the
 * shared regions (inputs read-only, outputs read-write with a PROT_NONE
 * guard page after each output), then serves commands from the parent:
 * ping, map, call the kernel N times, exit. It never sees reference
 * results and keeps no clock of its own; the parent times each command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kope_child.h"

static unsigned char *in_base, *out_base;
static uint64_t in_len, out_len;

static int read_full(int fd, void *buf, size_t n)
{
  unsigned char *p = buf;

  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static void reply(uint32_t status, const char *msg)
{
  kope_child_reply r;
  size_t n = sizeof r;
  const unsigned char *p = (const unsigned char *)&r;

  memset(&r, 0, sizeof r);
  r.magic = KOPE_CHILD_MAGIC;
  r.status = status;
  if (msg)
    snprintf(r.msg, sizeof r.msg, "%s", msg);
  while (n > 0) {
    ssize_t w = write(KOPE_CHILD_FD_REPLY, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      _exit(3);
    p += w;
    n -= (size_t)w;
  }
}

static int do_map(const kope_child_cmd *c)
{
  uint32_t i;
  long page = sysconf(_SC_PAGESIZE);

  if (in_base)
    munmap(in_base, in_len);
  if (out_base)
    munmap(out_base, out_len);
  in_base = out_base = NULL;
  in_len = c->in_size;
  out_len = c->out_size;
  if (in_len) {
    in_base = mmap(NULL, in_len, PROT_READ, MAP_SHARED, KOPE_CHILD_FD_IN, 0);
    if (in_base == MAP_FAILED)
      return in_base = NULL, -1;
  }
  if (out_len) {
    out_base = mmap(NULL, out_len, PROT_READ | PROT_WRITE, MAP_SHARED, KOPE_CHILD_FD_OUT, 0);
    if (out_base == MAP_FAILED)
      return out_base = NULL, -1;
  }
  for (i = 0; i < c->nguards && i < KOPE_CHILD_MAX_ARGS; i++)
    if (c->guard_off[i] + (uint64_t)page <= out_len &&
        mprotect(out_base + c->guard_off[i], (size_t)page, PROT_NONE) != 0)
      return -1;
  return 0;
}

static void do_call(const kope_child_cmd *c)
{
  kope_child_args a;
  uint32_t i;

  memset(&a, 0, sizeof a);
  for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++) {
    if (c->argk[i] == KOPE_ARGK_IN)
      a.ptr[i] = in_base + c->off[i];
    else if (c->argk[i] == KOPE_ARGK_OUT)
      a.ptr[i] = out_base + c->off[i];
    a.ival[i] = c->ival[i];
    a.fval[i] = c->fval[i];
  }
  for (i = 0; i < c->iters; i++)
    kope_child_invoke(&a);
}

int main(void)
{
  kope_child_cmd c;

  for (;;) {
    if (read_full(KOPE_CHILD_FD_CMD, &c, sizeof c) != 0)
      return 0;
    if (c.magic != KOPE_CHILD_MAGIC) {
      reply(1, "bad command");
      return 2;
    }
    switch (c.kind) {
    case KOPE_CMD_PING:
      reply(0, NULL);
      break;
    case KOPE_CMD_MAP:
      if (do_map(&c) != 0)
        reply(2, strerror(errno));
      else
        reply(0, NULL);
      break;
    case KOPE_CMD_CALL:
      do_call(&c);
      reply(0, NULL);
      break;
    case KOPE_CMD_EXIT:
      return 0;
    default:
      reply(1, "unknown command");
    }
  }
}
