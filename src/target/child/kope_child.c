/*
 * The child runtime: the trusted part of a worker process. It maps the
 * shared regions (inputs read-only, outputs read-write with a PROT_NONE
 * guard page after each output of each buffer slot), then serves commands
 * from the parent: ping, map, call the kernel N times (rotating over the
 * buffer slots), exit. It never sees reference results and keeps no clock
 * of its own; the parent times each command.
 *
 * Candidate workers are sealed at their first MAP (KOPE_CMDF_SEAL): the
 * OpenMP pool is started, freed heap memory is perturbed (no result can
 * survive in a freed buffer), a SIGSYS handler is set, and the seccomp
 * filter kope left in KOPE_CHILD_FD_FILTER is installed on every thread
 * (TSYNC). Every CALL checks that the kernel left the floating-point
 * control state (MXCSR, x87 control word) as it found it. After every
 * CALL's reply the stack below the runtime's frame is cleared, on the
 * main thread (KOPE_CHILD_STACK_MAIN bytes) and on each thread of the
 * OpenMP pool (KOPE_CHILD_STACK_POOL), so nothing a kernel leaves below
 * its stack pointer reaches its next call (issue 16, class 6); between
 * the calls of one batch the nearest KOPE_CHILD_STACK_BATCH bytes of the
 * main thread's stack are cleared (a cost every worker pays alike).
 *
 * With KOPE_PIN_THREADS=1 in its environment (the cpu target sets it for
 * every role) the first MAP pins each thread of the OpenMP pool to its own
 * CPU (thread i to the i-th allowed CPU, wrapping), before any seal. Left
 * to the scheduler, two threads of a team sometimes shared one core of a
 * small VM for whole batches, so one kernel timed against itself came out
 * 1x or 40x apart. Threads libgomp starts later inherit their creator's
 * CPU, so a kernel asking for more threads than the pool still runs (and
 * needs no system call the seal refuses).
 *
 * GPU targets link a host shim that defines the optional device hooks
 * (kope_child.h): the device context is created at MAP, before the seal,
 * and a CALL's reply carries the device time the shim measured.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* cpu_set_t, sched_setaffinity */
#endif
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kope_child.h"

static unsigned char *in_base, *out_base;
static uint64_t in_len, out_len;
static int sealed, pinned;
static char fp_msg[112], dev_msg[112];

/* libgomp, when the kernel links it: starting a parallel region here
 * creates the thread pool before the filter is installed. */
extern void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads,
                          unsigned flags) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));
/* Device hooks of GPU targets (kope_child.h); NULL on the cpu target. */
extern int kope_child_dev_map(const kope_child_cmd *c, const unsigned char *in,
                              unsigned char *out, char *msg, unsigned size)
    __attribute__((weak));
extern int kope_child_dev_done(uint64_t *device_ns, char *msg, unsigned size)
    __attribute__((weak));

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

static void reply_ns(uint32_t status, const char *msg, uint64_t device_ns);

static void reply(uint32_t status, const char *msg) { reply_ns(status, msg, 0); }

static void reply_ns(uint32_t status, const char *msg, uint64_t device_ns)
{
  kope_child_reply r;
  size_t n = sizeof r;
  const unsigned char *p = (const unsigned char *)&r;

  memset(&r, 0, sizeof r);
  r.magic = KOPE_CHILD_MAGIC;
  r.status = status;
  r.device_ns = device_ns;
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

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
  char b[80] = "kope-sandbox: forbidden system call ", d[12];
  int nr = si->si_syscall, n = 0;
  size_t o = strlen(b);

  (void)sig;
  (void)uc;
  if (nr < 0)
    nr = 0;
  do
    d[n++] = (char)('0' + nr % 10);
  while ((nr /= 10) && n < 11);
  while (n > 0)
    b[o++] = d[--n];
  b[o++] = '\n';
  if (write(2, b, o) < 0)
    _exit(KOPE_CHILD_EXIT_TRAP);
  _exit(KOPE_CHILD_EXIT_TRAP);
}

static void noop(void *p) { (void)p; }

#define KOPE_CHILD_STACK_MAIN (1u << 20)
#define KOPE_CHILD_STACK_POOL (256u << 10)
#define KOPE_CHILD_STACK_BATCH (64u << 10)

/* Zero n bytes of stack below the caller's frame (noinline, and the
 * buffer escapes, so the stores are not removed). */
static __attribute__((noinline)) void clear_below(size_t n)
{
  unsigned char *b = __builtin_alloca(n);

  memset(b, 0, n);
  __asm__ volatile("" : : "r"(b) : "memory");
}

static void clear_pool_one(void *p)
{
  (void)p;
  clear_below(KOPE_CHILD_STACK_POOL);
}

/* The stacks a kernel's last call used: the main thread's, and the pool's
 * when the worker has one. */
static void clear_stacks(void)
{
  clear_below(KOPE_CHILD_STACK_MAIN);
  if (GOMP_parallel && omp_get_thread_num)
    GOMP_parallel(clear_pool_one, NULL, 0, 0);
}

/* In each thread of the team: pin it to the (thread number mod n)-th CPU
 * of the allowed set p. */
static void pin_one(void *p)
{
  const cpu_set_t *all = p;
  int want = omp_get_thread_num() % CPU_COUNT(all), cpu, seen = 0;
  cpu_set_t one;

  for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, all) || seen++ != want)
      continue;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    (void)sched_setaffinity(0, sizeof one, &one);
    return;
  }
}

/* Start the OpenMP pool with every thread on its own CPU (see the top). */
static void pin_pool(void)
{
  static cpu_set_t all;
  const char *e = getenv("KOPE_PIN_THREADS");

  pinned = 1;
  if (!e || strcmp(e, "1") || !GOMP_parallel || !omp_get_thread_num ||
      sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) < 2)
    return;
  GOMP_parallel(pin_one, &all, 0, 0);
}

/* Returns NULL or what failed. */
static const char *seal(void)
{
  struct sigaction sa;
  struct sock_fprog prog;
  struct stat st;
  static struct sock_filter insns[4096];

  if (GOMP_parallel)
    GOMP_parallel(noop, NULL, 0, 0);
  mallopt(M_PERTURB, 0xa5);
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  if (sigaction(SIGSYS, &sa, NULL) != 0)
    return "sigaction(SIGSYS)";
  if (fstat(KOPE_CHILD_FD_FILTER, &st) != 0 || st.st_size <= 0 ||
      (size_t)st.st_size > sizeof insns || st.st_size % sizeof insns[0] != 0)
    return "no seccomp filter from kope";
  if (pread(KOPE_CHILD_FD_FILTER, insns, (size_t)st.st_size, 0) != st.st_size)
    return "cannot read the seccomp filter";
  close(KOPE_CHILD_FD_FILTER);
  prog.len = (unsigned short)(st.st_size / sizeof insns[0]);
  prog.filter = insns;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    return "seccomp(SECCOMP_FILTER_FLAG_TSYNC) failed";
  sealed = 1;
  return NULL;
}

static int do_map(const kope_child_cmd *c)
{
  uint32_t i, s;
  long page = sysconf(_SC_PAGESIZE);
  uint32_t nslots = c->nslots ? c->nslots : 1;

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
  for (s = 0; s < nslots; s++)
    for (i = 0; i < c->nguards && i < KOPE_CHILD_MAX_ARGS; i++) {
      uint64_t g = c->guard_off[i] + s * c->out_stride;
      if (g + (uint64_t)page <= out_len &&
          mprotect(out_base + g, (size_t)page, PROT_NONE) != 0)
        return -1;
    }
  return 0;
}

/* Floating-point control state: MXCSR control bits and the x87 word. */
static void fp_state(unsigned *mx, unsigned short *cw)
{
#if defined(__x86_64__) || defined(__i386__)
  unsigned m;
  __asm__ volatile("stmxcsr %0" : "=m"(m));
  __asm__ volatile("fnstcw %0" : "=m"(*cw));
  *mx = m & 0xffc0u;   /* flags (bits 0-5) are sticky results, not state */
#else
  *mx = 0;
  *cw = 0;
#endif
}

static void fp_restore(unsigned mx, unsigned short cw)
{
#if defined(__x86_64__) || defined(__i386__)
  unsigned m;
  __asm__ volatile("stmxcsr %0" : "=m"(m));
  m = (m & 0x3fu) | mx;
  __asm__ volatile("ldmxcsr %0" : : "m"(m));
  __asm__ volatile("fldcw %0" : : "m"(cw));
#else
  (void)mx;
  (void)cw;
#endif
}

/* Returns 0, or -1 when the kernel changed the FP control state. */
static int do_call(const kope_child_cmd *c)
{
  kope_child_args a[8];
  uint32_t i, s, nslots = c->nslots ? c->nslots : 1;
  unsigned mx0, mx1;
  unsigned short cw0, cw1;

  if (nslots > 8)
    nslots = 8;
  memset(a, 0, sizeof a);
  for (s = 0; s < nslots; s++)
    for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++) {
      if (c->argk[i] == KOPE_ARGK_IN)
        a[s].ptr[i] = in_base + c->off[i] + s * c->in_stride;
      else if (c->argk[i] == KOPE_ARGK_OUT)
        a[s].ptr[i] = out_base + c->off[i] + s * c->out_stride;
      a[s].ival[i] = c->ival[i];
      a[s].fval[i] = c->fval[i];
    }
  fp_state(&mx0, &cw0);
  for (i = 0, s = 0; i < c->iters; i++) {
    if (i)
      clear_below(KOPE_CHILD_STACK_BATCH);
    kope_child_invoke(&a[s]);
    if (++s == nslots)
      s = 0;
  }
  fp_state(&mx1, &cw1);
  if (mx1 == mx0 && cw1 == cw0)
    return 0;
  snprintf(fp_msg, sizeof fp_msg, "MXCSR control 0x%04x -> 0x%04x, x87 control 0x%04x -> "
           "0x%04x", mx0, mx1, cw0, cw1);
  fp_restore(mx0, cw0);
  return -1;
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
    case KOPE_CMD_MAP: {
      const char *why = NULL;
      if (!pinned)
        pin_pool();
      if (do_map(&c) != 0)
        reply(KOPE_CHILD_ST_MAP, strerror(errno));
      else if (kope_child_dev_map &&
               kope_child_dev_map(&c, in_base, out_base, dev_msg, sizeof dev_msg) != 0)
        reply(KOPE_CHILD_ST_DEVICE, dev_msg);
      else if ((c.flags & KOPE_CMDF_SEAL) && !sealed && (why = seal()) != NULL)
        reply(KOPE_CHILD_ST_SEAL, why);
      else
        reply(KOPE_CHILD_ST_OK, NULL);
      break;
    }
    case KOPE_CMD_CALL: {
      uint64_t ns = 0;
      if (do_call(&c) != 0)
        reply(KOPE_CHILD_ST_FPSTATE, fp_msg);
      else if (kope_child_dev_done && kope_child_dev_done(&ns, dev_msg, sizeof dev_msg) != 0)
        reply(KOPE_CHILD_ST_DEVICE, dev_msg);
      else
        reply_ns(KOPE_CHILD_ST_OK, NULL, ns);
      clear_stacks();
      break;
    }
    case KOPE_CMD_EXIT:
      return 0;
    default:
      reply(1, "unknown command");
    }
  }
}
