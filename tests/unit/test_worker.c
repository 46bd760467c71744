/*
 * Unit tests for the worker processes of the evaluator (src/eval/worker.c)
 * with real processes and descriptors: starting a worker leaves the
 * process's SIGPIPE disposition as it was; a command sent to a worker that
 * has already exited reports KOPE_WORKER_DIED instead of killing kope with
 * SIGPIPE, and leaves no SIGPIPE pending; a stopped worker leaves no
 * descriptor open; a stopped worker's CPU time is read before its kill and
 * its exit is reaped later, by kope_worker_reap_pending (no zombie stays);
 * and a start that fails part-way (the descriptor limit lets only two of
 * its three pipes be made) closes the ones it made.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "eval/worker.h"

typedef struct fixture {
  kope_region in, out;
  kope_env env;
  kope_limits lim;
  char dir[64];
} fixture;

static int count_fds(void)
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int n = 0;

  assert_non_null(d);
  while ((e = readdir(d)))
    n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;   /* the directory's own descriptor */
}

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof *f);
  kope_err err = {0, ""};

  snprintf(f->dir, sizeof f->dir, "/tmp/kope-test-worker-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  assert_int_equal(kope_region_init(&f->in, "test-in", &err), KOPE_OK);
  assert_int_equal(kope_region_init(&f->out, "test-out", &err), KOPE_OK);
  kope_env_init(&f->env, f->dir);
  f->lim.fsize_bytes = -1;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;

  kope_region_release(&f->in);
  kope_region_release(&f->out);
  kope_env_free(&f->env);
  rmdir(f->dir);
  free(f);
  return 0;
}

static int start(fixture *f, kope_worker *w, kope_err *err)
{
  return kope_worker_start(w, "/bin/true", f->dir, &f->env, &f->in, &f->out, &f->lim, 0, err);
}

static void test_dead_worker_no_sigpipe(void **state)
{
  fixture *f = *state;
  struct sigaction sa;
  struct pollfd pf;
  kope_child_cmd c;
  kope_worker w;
  kope_err err = {0, ""};
  sigset_t pending;
  int before = count_fds();

  signal(SIGPIPE, SIG_DFL);
  assert_int_equal(start(f, &w, &err), KOPE_OK);
  sigaction(SIGPIPE, NULL, &sa);
  assert_true(sa.sa_handler == SIG_DFL);   /* the library left it alone */
  /* /bin/true exits at once: its end of the log pipe closes */
  pf.fd = w.log_fd;
  pf.events = POLLIN;
  while (poll(&pf, 1, 5000) == 1 && !(pf.revents & POLLHUP))
    usleep(1000);
  usleep(20000);
  memset(&c, 0, sizeof c);
  c.magic = KOPE_CHILD_MAGIC;
  assert_int_equal(kope_worker_command(&w, &c, 5.0, NULL), KOPE_WORKER_DIED);
  sigpending(&pending);
  assert_false(sigismember(&pending, SIGPIPE));
  kope_worker_stop(&w);
  kope_buf_release(&w.log);
  assert_int_equal(count_fds(), before);
}

static void test_stop_closes(void **state)
{
  fixture *f = *state;
  kope_worker w;
  kope_err err = {0, ""};
  int before = count_fds();

  assert_int_equal(start(f, &w, &err), KOPE_OK);
  assert_true(count_fds() > before);
  kope_worker_stop(&w);
  kope_buf_release(&w.log);
  assert_int_equal(count_fds(), before);
}

static void test_stop_reaps_later(void **state)
{
  fixture *f = *state;
  kope_worker w;
  kope_err err = {0, ""};
  char path[96];
  FILE *fp;
  pid_t pid;

  snprintf(path, sizeof path, "%s/spin.sh", f->dir);
  assert_non_null(fp = fopen(path, "w"));
  fputs("#!/bin/sh\nwhile :; do :; done\n", fp);
  fclose(fp);
  chmod(path, 0755);
  assert_int_equal(kope_worker_start(&w, path, f->dir, &f->env, &f->in, &f->out, &f->lim, 0,
                                     &err), KOPE_OK);
  pid = w.pid;
  usleep(200000);
  kope_worker_stop(&w);
  assert_false(w.up);
  assert_true(w.cpu_s > 0.05);   /* read from its CPU clock before the kill */
  assert_true(w.cpu_s < 5.0);
  assert_int_equal(kill(pid, 0), 0);   /* killed, not yet reaped */
  kope_worker_reap_pending();
  assert_int_equal(kill(pid, 0), -1);   /* reaped: no zombie left */
  assert_int_equal(errno, ESRCH);
  kope_buf_release(&w.log);
  unlink(path);
}

static void test_failed_start_closes(void **state)
{
  fixture *f = *state;
  struct rlimit old, lim;
  kope_worker w;
  kope_err err = {0, ""};
  int before = count_fds(), fd, free_slots = 0, rc;

  /* a limit that leaves exactly four free descriptor numbers */
  for (fd = 0; free_slots < 4; fd++)
    free_slots += fcntl(fd, F_GETFD) < 0;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
  lim = old;
  lim.rlim_cur = (rlim_t)fd;
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
  rc = start(f, &w, &err);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
  assert_int_equal(rc, KOPE_EENV);
  assert_non_null(strstr(err.msg, "pipe"));
  kope_buf_release(&w.log);
  assert_int_equal(count_fds(), before);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_dead_worker_no_sigpipe, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stop_closes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stop_reaps_later, setup, teardown),
    cmocka_unit_test_setup_teardown(test_failed_start_closes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
