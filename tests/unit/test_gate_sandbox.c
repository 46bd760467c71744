/*
 * Unit tests for the sandbox behind the static gate (src/eval/sandbox.c):
 * the probe report, the seccomp filter kope builds for candidate workers
 * (installed in forked children here exactly as the child runtime does:
 * no_new_privs, then SECCOMP_FILTER_FLAG_TSYNC), and turning a worker's
 * death into a reason. Allowed calls (write, getpid, anonymous memory,
 * threads) must work; sockets, fork, executable memory, kill and
 * write-mode opens must be stopped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "eval/sandbox.h"

/* Install the candidate filter in this (child) process. */
static int install(void)
{
  static struct sock_filter insns[4096];
  struct sock_fprog prog;
  struct stat st;
  kope_err err;
  int fd = kope_sandbox_filter_fd(getpid(), &err);

  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size > sizeof insns ||
      pread(fd, insns, (size_t)st.st_size, 0) != st.st_size)
    return -1;
  close(fd);
  prog.len = (unsigned short)(st.st_size / sizeof insns[0]);
  prog.filter = insns;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static void *thread_fn(void *p) { return p; }

/* Child actions after the filter: each _exits 0 when it got through. */
static void act_basic(void)
{
  void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  _exit(m != MAP_FAILED && write(1, "", 0) == 0 && getpid() > 0 ? 0 : 1);
}
static void act_thread(void)
{
  pthread_t t;
  _exit(pthread_create(&t, NULL, thread_fn, NULL) == 0 && pthread_join(t, NULL) == 0 ? 0 : 1);
}
static void act_socket(void) { _exit(socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 2); }
static void act_fork(void) { _exit(syscall(SYS_fork) >= 0 ? 0 : 2); }
static void act_exec_mem(void)
{
  _exit(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
        MAP_FAILED ? 0 : 2);
}
static void act_kill(void) { _exit(kill(getppid(), 0) == 0 ? 0 : 2); }
static void act_open_write(void)
{
  _exit(open("/tmp/kope-sandbox-unit-test", O_WRONLY | O_CREAT, 0600) >= 0 ? 0 : 2);
}
static void act_open_read(void) { _exit(open("/etc/hostname", O_RDONLY) < 0 ? 3 : 0); }

/* Run act under the filter; returns the raw wait status. */
static int run(void (*act)(void))
{
  pid_t pid = fork();
  int st = 0;

  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGSYS, SIG_DFL);   /* cmocka catches it in the runner */
    if (install() != 0)
      _exit(99);
    act();
    _exit(98);
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return st;
}

static void expect_exit(int st, int code)
{
  if (!WIFEXITED(st) || WEXITSTATUS(st) != code)
    fail_msg("expected exit %d, got status 0x%x", code, st);
}

static void expect_trapped(int st)
{
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
    fail_msg("expected death by SIGSYS, got status 0x%x", st);
}

static int have_seccomp(void)
{
  if (kope_sandbox_probe()->seccomp)
    return 1;
  printf("# seccomp unavailable here (%s): filter tests skipped\n",
         kope_sandbox_probe()->why_seccomp);
  return 0;
}

static void test_allowed(void **state)
{
  (void)state;
  if (!have_seccomp())
    skip();
  expect_exit(run(act_basic), 0);
  expect_exit(run(act_thread), 0);
  expect_exit(run(act_open_read), 3);   /* read-only opens fail quietly */
}

static void test_refused(void **state)
{
  (void)state;
  if (!have_seccomp())
    skip();
  expect_trapped(run(act_socket));
  expect_trapped(run(act_fork));
  expect_trapped(run(act_exec_mem));
  expect_trapped(run(act_kill));
  expect_trapped(run(act_open_write));
  assert_int_not_equal(access("/tmp/kope-sandbox-unit-test", F_OK), 0);
}

static void test_probe_report(void **state)
{
  json_t *j = kope_sandbox_caps_json(kope_sandbox_probe());
  json_t *av = json_object_get(j, "available"), *un = json_object_get(j, "unavailable");
  const kope_sandbox_caps *c = kope_sandbox_probe();

  (void)state;
  assert_non_null(av);
  assert_non_null(un);
  assert_string_equal(json_string_value(json_array_get(av, 0)), "no_new_privs");
  /* every layer is either available or explained */
  assert_int_equal(json_array_size(av) + json_object_size(un), 5);
  assert_int_equal(json_object_get(un, "seccomp_bpf") == NULL, c->seccomp);
  json_decref(j);
}

static void test_death_reasons(void **state)
{
  char why[200];

  (void)state;
  assert_int_equal(kope_sandbox_death("hi\nkope-sandbox: forbidden system call 41\n",
                                      KOPE_SANDBOX_TRAP_EXIT, why, sizeof why), 1);
  assert_string_equal(why, "sandbox: system call socket (41) is not allowed");
  assert_int_equal(kope_sandbox_death("kope-sandbox: setup failed: landlock: errno 22\n",
                                      KOPE_SANDBOX_SETUP_EXIT, why, sizeof why), 1);
  assert_non_null(strstr(why, "landlock"));
  /* a kernel that prints the marker but exits normally is not a sandbox death */
  assert_int_equal(kope_sandbox_death("kope-sandbox: forbidden system call 41\n", 0, why,
                                      sizeof why), 0);
  assert_int_equal(kope_sandbox_death(NULL, KOPE_SANDBOX_TRAP_EXIT, why, sizeof why), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_probe_report),
    cmocka_unit_test(test_death_reasons),
    cmocka_unit_test(test_allowed),
    cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
