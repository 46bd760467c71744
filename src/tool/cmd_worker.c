/*
 * `kope worker`: run the jobs of a PostgreSQL store's work queue. The
 * worker claims the next job (kope_queue_claim: FOR UPDATE SKIP LOCKED,
 * or a job whose lease ran out because its worker died), runs it as a
 * child `kope optimize` (the store URL travels in KOPE_DB, not on the
 * command line, so no password shows in a process list), renews the lease
 * every third of it while the child runs, records the result and claims
 * the next. The child dies with the worker (PR_SET_PDEATHSIG), so a killed
 * worker leaves no orphan writing to the store; its job is reclaimed after
 * the lease. SIGINT (Ctrl-C) is passed to the child, which finishes the
 * Case being evaluated; the job then goes back to pending and the worker
 * exits. With no claimable job the worker waits while other jobs are
 * running (one may be reclaimed) and exits when none is left (--forever:
 * keeps waiting).
 */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kope/eval.h"
#include "kope/queue.h"
#include "cli.h"
#include "cmds.h"

static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig)
{
  (void)sig;
  stop_requested = 1;
}

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope worker --db URL [--target T] [--device D] [options]\n\n"
    "Run the jobs of a PostgreSQL store's work queue (`kope queue add`): claim the next\n"
    "job, run `kope optimize` for it against the same store, record the result, claim\n"
    "the next. A job whose worker died is reclaimed once its lease runs out. Ctrl-C\n"
    "finishes the Case being evaluated, gives the job back and exits. A worker whose\n"
    "harness version differs from the queued jobs' is refused.\n\n"
    "options:\n"
    "  --db URL        the store, postgresql://user@host/dbname (default $KOPE_DB);\n"
    "                  a password comes from the URL, PGPASSFILE or PGPASSWORD\n"
    "  --target T      claim only jobs for target T (default: any)\n"
    "  --device D      passed to `kope optimize --device` and recorded with the job\n"
    "  --lease S       lease in seconds, renewed every S/3 (default 60)\n"
    "  --poll S        wait between claims when nothing is claimable (default 2)\n"
    "  --forever       keep waiting for jobs instead of exiting when none is left\n"
    "  --max-jobs N    exit after N jobs\n"
    "  --ops-dir DIR   operator directory for the jobs (default: $KOPE_OPS or ./ops)\n"
    "  -h, --help      this help\n\n"
    "exit: 0 the queue is done (or stopped), 2 usage or not a PostgreSQL store,\n"
    "3 database unreachable or a harness version mismatch\n");
}

typedef struct wopts {
  const char *db, *target, *device, *ops_dir;
  double lease, poll;
  int forever;
  long max_jobs;
  char name[200];
} wopts;

/* The child's argv: kope optimize OP --target T --policy P --budget-evals N
 * [--device D] [--ops-dir DIR] --json OPTIONS... */
static char **child_argv(const wopts *w, const kope_job *j, char *evals)
{
  json_t *opts = json_loads(j->options ? j->options : "[]", 0, NULL);
  size_t n = json_is_array(opts) ? json_array_size(opts) : 0, i, k = 0;
  char **a = calloc(n + 20, sizeof *a);

  if (!a) {
    json_decref(opts);
    return NULL;
  }
  snprintf(evals, 32, "%lld", (long long)j->budget_evals);
  a[k++] = kope_strdup("kope");
  a[k++] = kope_strdup("optimize");
  a[k++] = kope_strdup(j->op);
  a[k++] = kope_strdup("--target");
  a[k++] = kope_strdup(j->target);
  a[k++] = kope_strdup("--policy");
  a[k++] = kope_strdup(j->policy);
  a[k++] = kope_strdup("--budget-evals");
  a[k++] = kope_strdup(evals);
  if (w->device) {
    a[k++] = kope_strdup("--device");
    a[k++] = kope_strdup(w->device);
  }
  if (w->ops_dir) {
    a[k++] = kope_strdup("--ops-dir");
    a[k++] = kope_strdup(w->ops_dir);
  }
  a[k++] = kope_strdup("--json");
  for (i = 0; i < n; i++)
    if (json_is_string(json_array_get(opts, i)))
      a[k++] = kope_strdup(json_string_value(json_array_get(opts, i)));
  json_decref(opts);
  for (i = 0; i < k && a[i]; i++)
    ;
  if (i < k) {   /* out of memory: no partial command line */
    for (i = 0; i < k; i++)
      free(a[i]);
    free(a);
    return NULL;
  }
  return a;
}

static void argv_free(char **a)
{
  size_t i;

  for (i = 0; a && a[i]; i++)
    free(a[i]);
  free(a);
}

/* In the forked child: this process's environment with KOPE_DB=db in
 * place of any KOPE_DB (unchanged when db is NULL or memory runs out). */
static char **child_env(const char *db)
{
  extern char **environ;
  size_t n = 0, i, k = 0;
  char **env;

  if (!db)
    return environ;
  while (environ[n])
    n++;
  if (!(env = calloc(n + 2, sizeof *env)) || !(env[k] = kope_sprintf("KOPE_DB=%s", db)))
    return environ;
  for (k = 1, i = 0; i < n; i++)
    if (strncmp(environ[i], "KOPE_DB=", 8))
      env[k++] = environ[i];
  return env;
}

static pid_t spawn(const wopts *w, const kope_job *j, const char *out_path)
{
  char evals[32], **a = child_argv(w, j, evals);
  pid_t pid;

  if (!a)
    return -1;
  if ((pid = fork()) == 0) {
    FILE *f = freopen(out_path, "w", stdout);
    (void)f;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
      _exit(127);
    signal(SIGINT, SIG_DFL);
    /* the store's URL (it may hold a password) reaches the child in its
     * environment, never on its command line */
    execve("/proc/self/exe", a, child_env(w->db));
    _exit(127);
  }
  argv_free(a);
  return pid;
}

/* Wait for the child, renewing the lease; forwards one SIGINT. */
static int wait_child(kope_queue *q, const wopts *w, const kope_job *j, pid_t pid)
{
  double last = kope_now();
  int status = 0, forwarded = 0, held = 1;
  kope_err err = {0};

  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return status;
    if (stop_requested && !forwarded) {
      kill(pid, SIGINT);
      forwarded = 1;
    }
    if (kope_now() - last >= w->lease / 3) {
      last = kope_now();
      if (kope_queue_heartbeat(q, j->id, w->name, w->lease, &held, &err) != KOPE_OK)
        fprintf(stderr, "kope worker: %s\n", err.msg);
      else if (!held)
        fprintf(stderr, "kope worker: job %lld is no longer ours (lease expired)\n",
                (long long)j->id);
    }
    usleep(100000);
  }
}

/* Fill the result from the child's JSON summary. */
static void read_result(const char *path, int status, kope_job *res)
{
  json_t *d = json_load_file(path, 0, NULL);
  const char *reason = json_string_value(json_object_get(d, "stop_reason"));

  res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  res->session_id = json_integer_value(json_object_get(d, "session"));
  res->passed = json_is_true(json_object_get(d, "passed"));
  res->best_speedup = json_real_value(json_object_get(d, "best_speedup_ref"));
  snprintf(res->stop_reason, sizeof res->stop_reason, "%s", reason ? reason : "");
  snprintf(res->state, sizeof res->state, "%s",
           d && (res->exit_code == 0 || res->exit_code == 1) ? "done" : "failed");
  json_decref(d);
}

static int run_job(kope_queue *q, const wopts *w, kope_job *j)
{
  char out[] = "/tmp/kope-worker.XXXXXX";
  int fd = mkstemp(out), status, held = 0;
  kope_err err = {0};
  pid_t pid;

  if (fd < 0)
    return kope_err_set(&err, KOPE_EENV, "cannot create a temporary file");
  close(fd);
  fprintf(stderr, "kope worker %s: job %lld: %s on %s (%s, %lld evaluations, claim %d)\n",
          w->name, (long long)j->id, j->op, j->target, j->policy, (long long)j->budget_evals,
          j->claims);
  if ((pid = spawn(w, j, out)) < 0) {
    unlink(out);
    return KOPE_EENV;
  }
  status = wait_child(q, w, j, pid);
  read_result(out, status, j);
  unlink(out);
  if (stop_requested || !strcmp(j->stop_reason, "interrupted"))
    return kope_queue_release(q, j->id, w->name, "interrupted; the worker stopped", &err);
  if (kope_queue_finish(q, j, w->name, &held, &err) != KOPE_OK)
    return kope_cli_fail("worker", &err);
  fprintf(stderr, "kope worker %s: job %lld %s (exit %d, session %lld)%s\n", w->name,
          (long long)j->id, j->state, j->exit_code, (long long)j->session_id,
          held ? "" : " -- not recorded: the job was reclaimed by another worker");
  return KOPE_OK;
}

static int work(kope_queue *q, const wopts *w)
{
  long done = 0;
  kope_err err = {0};

  while (!stop_requested && (w->max_jobs <= 0 || done < w->max_jobs)) {
    kope_job j;
    int64_t pending = 0, running = 0;
    int got = 0;
    if (kope_queue_claim(q, w->name, w->target, w->device, KOPE_HARNESS_VERSION, w->lease,
                         &j, &got, &err) != KOPE_OK)
      return kope_cli_fail("worker", &err);
    if (got) {
      int rc = run_job(q, w, &j);
      free(j.options);
      if (rc != KOPE_OK)
        return rc == KOPE_EENV ? 3 : 1;
      done++;
      continue;
    }
    if (kope_queue_open_jobs(q, &pending, &running, &err) != KOPE_OK)
      return kope_cli_fail("worker", &err);
    if (!w->forever && pending == 0 && running == 0)
      break;
    usleep((useconds_t)(w->poll * 1e6));
  }
  fprintf(stderr, "kope worker %s: %ld jobs run%s\n", w->name, done,
          stop_requested ? " (stopped)" : "");
  return 0;
}

int kope_cmd_worker(int argc, char **argv)
{
  static const struct option lo[] = {
    {"db", 1, 0, 'd'}, {"target", 1, 0, 't'}, {"device", 1, 0, 'D'}, {"lease", 1, 0, 'l'},
    {"poll", 1, 0, 'p'}, {"forever", 0, 0, 'f'}, {"max-jobs", 1, 0, 'm'},
    {"ops-dir", 1, 0, 'o'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  wopts w = {0};
  kope_queue *q;
  kope_err err = {0};
  char host[128] = "host";
  int c, rc;

  w.lease = 60;
  w.poll = 2;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    switch (c) {
    case 'd': w.db = optarg; break;
    case 't': w.target = optarg; break;
    case 'D': w.device = optarg; break;
    case 'l':
      if (kope_cli_double("worker", "lease", optarg, 1, 86400, &w.lease))
        return 2;
      break;
    case 'p':
      if (kope_cli_double("worker", "poll", optarg, 0.01, 3600, &w.poll))
        return 2;
      break;
    case 'f': w.forever = 1; break;
    case 'm':
      if (kope_cli_long("worker", "max-jobs", optarg, 1, 1000000000, &w.max_jobs))
        return 2;
      break;
    case 'o': w.ops_dir = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc || !(w.lease >= 1) || !(w.poll > 0)) {
    usage(stderr);
    return 2;
  }
  gethostname(host, sizeof host - 1);
  snprintf(w.name, sizeof w.name, "%s:%ld", host, (long)getpid());
  if (!(q = kope_queue_open(w.db, &err)))
    return kope_cli_fail("worker", &err);
  if (kope_queue_check_harness(q, KOPE_HARNESS_VERSION, &err) != KOPE_OK) {
    kope_queue_close(q);
    return kope_cli_fail("worker", &err);
  }
  signal(SIGINT, on_sigint);
  rc = work(q, &w);
  kope_queue_close(q);
  return rc;
}
