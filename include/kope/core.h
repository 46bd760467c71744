/*
 * kope core: errors, bounded growable buffers, files, hashing and clocks.
 *
 * Every other module builds on these. Errors travel in a caller-owned
 * kope_err that carries a status code (the CLI's exit code) and a message
 * that names the file, the field and what was expected. Buffers have a cap
 * so a runaway compiler log or LLM reply cannot exhaust memory: appends
 * past the cap are dropped and the buffer is marked truncated.
 */
#ifndef KOPE_CORE_H
#define KOPE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes; they double as the CLI's exit codes (DESIGN.md §2). */
typedef enum kope_status {
  KOPE_OK = 0,        /* success / kernel accepted */
  KOPE_EREJECT = 1,   /* kernel rejected, or no correct kernel found */
  KOPE_EINPUT = 2,    /* usage error or bad input file */
  KOPE_EENV = 3,      /* environment problem: compiler, disk, database */
  KOPE_EINTERNAL = 4, /* a bug in kope */
  /* Out of memory: an environment problem (exit code 3). See the policy
   * at kope_grow below. */
  KOPE_ENOMEM = KOPE_EENV
} kope_status;

/* An error slot owned by the caller; zero-initialise or kope_err_clear(). */
typedef struct kope_err {
  int code;        /* a kope_status; KOPE_OK when nothing failed */
  char msg[1536];  /* human-readable, one or a few lines */
} kope_err;

void kope_err_clear(kope_err *e);
/* Sets code and message (printf-style); returns code. e may be NULL. */
int kope_err_set(kope_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Out-of-memory policy. Allocation failure is neither fatal nor ignored
 * inside the library: the function that sees a NULL from malloc, calloc,
 * realloc or kope_grow leaves its data structures valid (a failed growth
 * keeps the old array), returns KOPE_ENOMEM (setting a message with
 * kope_err_nomem when it has a kope_err), and every caller passes that
 * status up unchanged. The CLI prints the message and exits 3. Functions
 * without a status (void, or returning a pointer) report it by their
 * documented failure value (NULL, -1). */

/* Sets "out of memory (what)" in e (may be NULL); returns KOPE_ENOMEM. */
int kope_err_nomem(kope_err *e, const char *what);

/* Make the array *pp (the address of any object pointer, e.g. &v) hold at
 * least need elements of elem bytes. *cap is its capacity in elements;
 * growth doubles it (from 16), new elements are zeroed. The array is owned
 * by the caller (free()). Returns KOPE_OK, or KOPE_ENOMEM (on allocation
 * failure or size overflow) with *pp and *cap unchanged. */
int kope_grow(void *pp, size_t *cap, size_t need, size_t elem);

/* A growable byte buffer with a hard cap (limit 0 = 64 MiB). data is always
 * NUL-terminated. The buffer owns data; release with kope_buf_release. */
typedef struct kope_buf {
  char *data;
  size_t len;
  size_t cap;
  size_t limit;
  int truncated;   /* set once an append was cut at the limit */
} kope_buf;

void kope_buf_init(kope_buf *b, size_t limit);
void kope_buf_release(kope_buf *b);
void kope_buf_reset(kope_buf *b);
/* Append; returns 0, or -1 when the cap cut the append (truncated set). */
int kope_buf_append(kope_buf *b, const void *data, size_t n);
int kope_buf_puts(kope_buf *b, const char *s);
int kope_buf_printf(kope_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int kope_buf_vprintf(kope_buf *b, const char *fmt, va_list ap);
/* Hand the data to the caller (who frees it) and reset the buffer. */
char *kope_buf_steal(kope_buf *b);

/* Files. Returned strings are owned by the caller (free()). Out of memory:
 * kope_file_read returns NULL and the functions with a status return
 * KOPE_ENOMEM (err set), also when given a NULL path (a path that could
 * not be allocated); the string helpers return NULL, and kope_path_join
 * returns NULL for a NULL part, so a failed allocation is never silently
 * an empty or "(null)" string. */
char *kope_file_read(const char *path, size_t *len, kope_err *err);
/* Write via a temporary file and rename, so readers never see half. */
int kope_file_write_atomic(const char *path, const void *data, size_t len,
                           kope_err *err);
int kope_mkdirs(const char *path, kope_err *err);
int kope_rmtree(const char *path);
int kope_is_dir(const char *path);
int kope_is_file(const char *path);
char *kope_path_join(const char *a, const char *b);
char *kope_strdup(const char *s);
char *kope_strndup(const char *s, size_t n);
char *kope_sprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A byte count for people: "48 KiB", "2 MiB", "1.5 MiB", "512 B", or
 * "unknown" when n <= 0. */
void kope_format_bytes(long n, char *buf, size_t size);

/* SHA-256 of data as 64 hex characters plus NUL in out. */
void kope_sha256_hex(const void *data, size_t len, char out[65]);

/* Monotonic clock in seconds. */
double kope_now(void);

/* Which directory holds kope's state (cache, hardware profile, default
 * database): $KOPE_HOME if set, otherwise ./.kope. Caller frees. */
char *kope_home_dir(void);

/* The judge's priority that `--realtime` asks for (kope_realtime). */
#define KOPE_REALTIME_PRIO 20

/* Timing on a shared machine: from now on, while kope's judge (the
 * thread that holds the clock and the workers' timeouts) holds a timing
 * turn, it runs SCHED_FIFO at prio (2-99) and every thread of the workers
 * it times one step below, so the judge preempts them at once (a kernel
 * that spins cannot starve its timeout) and other processes on the
 * machine no longer preempt a timed kernel (the kernel's RT throttling,
 * sched_rt_runtime_us, still leaves them 5% of each CPU). Everything else
 * (compiling, checking, starting and reaping workers) stays SCHED_OTHER:
 * reaping a sandboxed worker at RT livelocked the machine with several
 * kope processes at once. This call tries prio once and returns the
 * thread to its policy. Needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO of
 * at least prio: otherwise KOPE_EENV with the reason. Process-wide; not
 * thread-safe against running evaluations (call it before them).
 * docs/evaluator.md, "Real-time priority", has the measured effect. */
int kope_realtime(int prio, kope_err *err);

#ifdef __cplusplus
}
#endif
#endif
