/*
 * Sandbox layers for candidate workers (see sandbox.h): probing what the
 * kernel allows, entering namespaces and Landlock in the forked child,
 * the seccomp allow-list (libseccomp, exported as BPF), verification from
 * /proc, and turning a sandbox death into a reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kope/eval.h"
#include "eval/sandbox.h"

/* Landlock, defined here so older kernel headers do not matter. */
#define LL_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_NET_ALL ((1ULL << 0) | (1ULL << 1))           /* bind, connect TCP */
#define LL_SCOPE_ALL ((1ULL << 0) | (1ULL << 1))         /* abstract unix, signal */
#define KOPE_NS_UID 1000                                 /* the worker's id inside */

struct ll_ruleset_attr {
  uint64_t fs, net, scoped;
};

struct ll_path_beneath {
  uint64_t allowed;
  int32_t parent_fd;
} __attribute__((packed));

static kope_sandbox_caps caps;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* ---- async-signal-safe helpers for the forked child ---- */

static size_t put_str(char *b, size_t o, size_t size, const char *s)
{
  while (*s && o + 1 < size)
    b[o++] = *s++;
  b[o] = '\0';
  return o;
}

static size_t put_num(char *b, size_t o, size_t size, long v)
{
  char d[24];
  int n = 0;

  if (v < 0) {
    o = put_str(b, o, size, "-");
    v = -v;
  }
  do
    d[n++] = (char)('0' + v % 10);
  while ((v /= 10) && n < 23);
  while (n > 0 && o + 1 < size)
    b[o++] = d[--n];
  b[o] = '\0';
  return o;
}

static void die(const char *what)
{
  char b[160];
  size_t o = put_str(b, 0, sizeof b, "kope-sandbox: setup failed: ");

  o = put_str(b, o, sizeof b, what);
  o = put_str(b, o, sizeof b, ": errno ");
  o = put_num(b, o, sizeof b, errno);
  o = put_str(b, o, sizeof b, "\n");
  if (write(2, b, o) < 0)
    _exit(KOPE_SANDBOX_SETUP_EXIT);
  _exit(KOPE_SANDBOX_SETUP_EXIT);
}

static int write_file(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

  if (fd >= 0) {
    rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
    close(fd);
  }
  return rc;
}

/* Map id outside to KOPE_NS_UID inside: "1000 <id> 1". */
static int write_map(const char *path, long id)
{
  char b[64];
  size_t o = put_num(b, 0, sizeof b, KOPE_NS_UID);

  o = put_str(b, o, sizeof b, " ");
  o = put_num(b, o, sizeof b, id);
  put_str(b, o, sizeof b, " 1\n");
  return write_file(path, b);
}

/* 0 ok, else which step failed (1 unshare, 2 maps). */
static int enter_userns(int with_net)
{
  long uid = (long)getuid(), gid = (long)getgid();

  if (unshare(CLONE_NEWUSER | (with_net ? CLONE_NEWNET : 0)) != 0)
    return 1;
  if (write_file("/proc/self/setgroups", "deny") != 0 ||
      write_map("/proc/self/uid_map", uid) != 0 || write_map("/proc/self/gid_map", gid) != 0)
    return 2;
  return 0;
}

static uint64_t ll_fs_all(int abi)
{
  uint64_t fs = (1ULL << 13) - 1;   /* ABI 1: execute .. make_sym */

  if (abi >= 2)
    fs |= 1ULL << 13;               /* refer */
  if (abi >= 3)
    fs |= 1ULL << 14;               /* truncate */
  if (abi >= 5)
    fs |= 1ULL << 15;               /* ioctl on devices */
  return fs;
}

static int ll_allow(int ruleset, const char *path, uint64_t access)
{
  struct ll_path_beneath pb;
  int fd = open(path, O_PATH | O_CLOEXEC), rc;

  if (fd < 0)
    return 0;   /* a missing system path needs no rule */
  pb.allowed = access;
  pb.parent_fd = fd;
  rc = (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
  close(fd);
  return rc;
}

/* ro: paths read/execute only; files: single files read/write (may be
 * NULL); rundir: read-write. */
static int enter_landlock(int abi, const char *const *ro, const char *const *files,
                          const char *rundir)
{
  struct ll_ruleset_attr a = {ll_fs_all(abi), LL_NET_ALL, LL_SCOPE_ALL};
  size_t asize = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  uint64_t rx = (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR) & a.fs;
  uint64_t rw = (LL_FS_READ_FILE | LL_FS_WRITE_FILE) & a.fs;
  int rs = (int)syscall(__NR_landlock_create_ruleset, &a, asize, 0), i, rc = 0;

  if (rs < 0)
    return -1;
  for (i = 0; ro[i] && rc == 0; i++)
    rc = ll_allow(rs, ro[i], rx);
  for (i = 0; files && files[i] && rc == 0; i++)
    rc = ll_allow(rs, files[i], rw);
  if (rc == 0)
    rc = ll_allow(rs, rundir, a.fs);
  if (rc == 0)
    rc = (int)syscall(__NR_landlock_restrict_self, rs, 0);
  close(rs);
  return rc;
}

static const char *const worker_ro[] = {"/usr", "/lib", "/lib64", "/bin", "/etc", "/proc",
                                        "/sys", "/dev", NULL};

void kope_sandbox_enter(const kope_sandbox_caps *c, const char *rundir, int strict)
{
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die("no_new_privs");
  if (!strict || !c)
    return;
  if (c->userns && enter_userns(c->netns))
    die("user namespace");
  else if (!c->userns && c->netns && unshare(CLONE_NEWNET) != 0)
    die("network namespace");
  if (c->landlock_abi > 0 && enter_landlock(c->landlock_abi, worker_ro, NULL, rundir) != 0)
    die("landlock");
}

void kope_sandbox_enter_compile(const kope_sandbox_caps *c, const char *rundir)
{
  /* The toolchain and the system headers; not /etc, /proc, /home, /tmp. */
  static const char *const ro[] = {"/usr", "/lib", "/lib64", "/bin", NULL};
  static const char *const files[] = {"/etc/ld.so.cache", "/dev/null", NULL};

  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die("no_new_privs");
  if (!c)
    return;
  if (c->userns && enter_userns(c->netns))
    die("user namespace");
  else if (!c->userns && c->netns && unshare(CLONE_NEWNET) != 0)
    die("network namespace");
  if (c->landlock_abi > 0 && enter_landlock(c->landlock_abi, ro, files, rundir) != 0)
    die("landlock");
}

/* ---- probing ---- */

/* Run fn in a forked child; its exit status (or 255 when it died). */
static int in_child(int (*fn)(void))
{
  pid_t pid = fork();
  int st = 0;

  if (pid < 0)
    return 254;
  if (pid == 0)
    _exit(fn());
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return 255;
  return WEXITSTATUS(st);
}

static int probe_seccomp_child(void)
{
  struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {1, &f};

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return 1;
  return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0
             ? 0 : 2;
}

static int probe_userns_child(void) { return enter_userns(1); }
static int probe_userns_only_child(void) { return enter_userns(0) ? 1 : 0; }
static int probe_netns_child(void) { return unshare(CLONE_NEWNET) == 0 ? 0 : 1; }

static void probe(void)
{
  int st;
  long abi;

  st = in_child(probe_seccomp_child);
  caps.seccomp = st == 0;
  if (!caps.seccomp)
    snprintf(caps.why_seccomp, sizeof caps.why_seccomp, "%s",
             st == 1 ? "prctl(PR_SET_NO_NEW_PRIVS) refused" : "seccomp(TSYNC) refused");
  st = in_child(probe_userns_child);
  caps.userns = caps.netns = st == 0;
  if (st != 0 && in_child(probe_userns_only_child) == 0) {
    caps.userns = 1;
    snprintf(caps.why_netns, sizeof caps.why_netns, "network namespace refused inside the "
             "user namespace");
  } else if (st != 0) {
    snprintf(caps.why_userns, sizeof caps.why_userns, "%s",
             st == 1 ? "unshare(CLONE_NEWUSER) refused" : "cannot write the id maps");
    caps.netns = in_child(probe_netns_child) == 0;
    if (!caps.netns)
      snprintf(caps.why_netns, sizeof caps.why_netns, "unshare(CLONE_NEWNET) refused");
  }
  abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_VERSION);
  caps.landlock_abi = abi > 0 ? (int)abi : 0;
  if (abi <= 0)
    snprintf(caps.why_landlock, sizeof caps.why_landlock, "%s",
             errno == EOPNOTSUPP ? "Landlock is disabled in this kernel"
                                 : "Landlock is not supported by this kernel");
}

const kope_sandbox_caps *kope_sandbox_probe(void)
{
  pthread_once(&probe_once, probe);
  return &caps;
}

json_t *kope_sandbox_caps_json(const kope_sandbox_caps *c)
{
  json_t *av = json_array(), *un = json_object();
  char ll[32];

  json_array_append_new(av, json_string("no_new_privs"));
#define LAYER(ok, name, why)                                                    \
  do {                                                                          \
    if (ok)                                                                     \
      json_array_append_new(av, json_string(name));                             \
    else                                                                        \
      json_object_set_new(un, name, json_string(why));                          \
  } while (0)
  LAYER(c->seccomp, "seccomp_bpf", c->why_seccomp);
  LAYER(c->userns, "user_namespace", c->why_userns);
  LAYER(c->netns, "net_namespace", c->why_netns);
  snprintf(ll, sizeof ll, "landlock_abi%d", c->landlock_abi);
  LAYER(c->landlock_abi > 0, c->landlock_abi > 0 ? ll : "landlock", c->why_landlock);
#undef LAYER
  return json_pack("{s:o, s:o}", "available", av, "unavailable", un);
}

/* ---- the seccomp allow-list ---- */

static int allow(scmp_filter_ctx f, const char *name)
{
  int nr = seccomp_syscall_resolve_name(name);

  return nr == __NR_SCMP_ERROR ? 0 : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
}

/* What the runtime, libc's malloc and printf, libm and libgomp need once
 * the worker runs: memory (never executable), futexes, threads (clone
 * with CLONE_THREAD only), time, and I/O on descriptors already open. */
static int build_rules(scmp_filter_ctx f, pid_t pid)
{
  static const char *const plain[] = {
    "read", "write", "readv", "writev", "close", "fstat", "newfstatat", "lseek", "munmap",
    "mremap", "madvise", "brk", "futex", "sched_yield", "sched_getaffinity",
    "set_robust_list", "rseq", "rt_sigprocmask", "rt_sigreturn", "exit", "exit_group",
    "gettid", "getpid", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "clock_nanosleep", "nanosleep", "getrandom", "restart_syscall", "getcpu", "sigaltstack",
    /* PoCL re-checks its cached kernel with access() on a new grid shape;
     * no more than newfstatat already tells */
    "access", "faccessat", "faccessat2", NULL};
  const uint64_t clone_mask = CLONE_THREAD | CLONE_VM | CLONE_NEWNS | CLONE_NEWUSER |
                              CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                              CLONE_NEWCGROUP | CLONE_VFORK;
  const uint64_t wr = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  int i, rc = 0;

  for (i = 0; plain[i] && rc == 0; i++)
    rc = allow(f, plain[i]);
  if (rc == 0)
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (rc == 0)
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (rc == 0)
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, clone_mask, CLONE_THREAD | CLONE_VM));
  if (rc == 0)   /* glibc falls back to clone, whose flags a filter can see */
    rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc == 0)   /* abort() signals its own process */
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                          SCMP_A0(SCMP_CMP_EQ, (uint64_t)pid));
  if (rc == 0)   /* glibc sets its thread signals up on pthread_create; SIGSYS stays kope's */
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1,
                          SCMP_A0(SCMP_CMP_NE, SIGSYS));
  if (rc == 0)   /* getrlimit only */
    rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
  if (rc == 0)   /* read-only opens fail quietly (libc probing); writes trap */
    rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, wr, 0));
  if (rc == 0)
    rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 1,
                          SCMP_A1(SCMP_CMP_MASKED_EQ, wr, 0));
  return rc;
}

int kope_sandbox_filter_fd(pid_t pid, kope_err *err)
{
  scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
  int fd = -1, rc;

  if (!f) {
    kope_err_set(err, KOPE_EENV, "seccomp_init failed");
    goto out;
  }
  if ((rc = build_rules(f, pid)) != 0) {
    kope_err_set(err, KOPE_EENV, "seccomp rule: %s", strerror(-rc));
    goto out;
  }
  fd = memfd_create("kope-seccomp", MFD_CLOEXEC);
  if (fd < 0 || (rc = seccomp_export_bpf(f, fd)) != 0) {
    kope_err_set(err, KOPE_EENV, "cannot export the seccomp filter: %s",
                 strerror(fd < 0 ? errno : -rc));
    if (fd >= 0)
      close(fd);
    fd = -1;
  }
out:
  if (f)
    seccomp_release(f);
  return fd;
}

/* ---- verification and reasons ---- */

static int status_field(pid_t pid, const char *key, long *val)
{
  char path[64], line[256];
  size_t k = strlen(key);
  FILE *fp;
  int found = 0;

  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  if (!(fp = fopen(path, "r")))
    return 0;
  while (!found && fgets(line, sizeof line, fp))
    if (!strncmp(line, key, k) && line[k] == ':') {
      *val = strtol(line + k + 1, NULL, 10);
      found = 1;
    }
  fclose(fp);
  return found;
}

/* 1 when pid is in a different namespace of kind than kope. */
static int other_ns(pid_t pid, const char *kind)
{
  char a[64], b[64], pa[64], pb[64];
  ssize_t na, nb;

  snprintf(pa, sizeof pa, "/proc/%d/ns/%s", (int)pid, kind);
  snprintf(pb, sizeof pb, "/proc/self/ns/%s", kind);
  na = readlink(pa, a, sizeof a - 1);
  nb = readlink(pb, b, sizeof b - 1);
  return na > 0 && nb > 0 && (na != nb || memcmp(a, b, (size_t)na) != 0);
}

json_t *kope_sandbox_verify(pid_t pid, int landlock_abi)
{
  json_t *a = json_array();
  long v;
  char ll[32];

  if (status_field(pid, "NoNewPrivs", &v) && v == 1)
    json_array_append_new(a, json_string("no_new_privs"));
  if (status_field(pid, "Seccomp", &v) && v == SECCOMP_MODE_FILTER)
    json_array_append_new(a, json_string("seccomp_bpf"));
  if (other_ns(pid, "user"))
    json_array_append_new(a, json_string("user_namespace"));
  if (other_ns(pid, "net"))
    json_array_append_new(a, json_string("net_namespace"));
  if (landlock_abi > 0) {
    snprintf(ll, sizeof ll, "landlock_abi%d", landlock_abi);
    json_array_append_new(a, json_string(ll));
  }
  return a;
}

int kope_sandbox_death(const char *log, int exit_code, char *why, size_t size)
{
  const char *p = log ? strstr(log, "kope-sandbox: ") : NULL;
  char *name;
  int nr;

  if (!p || (exit_code != KOPE_SANDBOX_TRAP_EXIT && exit_code != KOPE_SANDBOX_SETUP_EXIT))
    return 0;
  if (exit_code == KOPE_SANDBOX_SETUP_EXIT) {
    snprintf(why, size, "%.*s", (int)strcspn(p, "\n"), p);
    return 1;
  }
  if (sscanf(p, "kope-sandbox: forbidden system call %d", &nr) != 1)
    return 0;
  name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  snprintf(why, size, "sandbox: system call %s (%d) is not allowed", name ? name : "?", nr);
  free(name);
  return 1;
}

json_t *kope_eval_sandbox_json(void)
{
  return kope_sandbox_caps_json(kope_sandbox_probe());
}
