/*
 * The command provider: run the user's command with /bin/sh -c in its own
 * process group (kope's environment, so the command finds its own
 * credentials), write the request JSON to its stdin, read its stdout
 * (capped) and stderr (tail kept for the error message), and kill the
 * whole group at the timeout. The reply is the stdout text, or — when
 * stdout is one JSON object — its "content" (or an OpenAI/Anthropic shaped
 * reply), with usage and finish/stop reason when given.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/proc.h"
#include "llm/llm_int.h"

typedef struct run {
  int in, out, errfd;          /* our ends; -1 when closed */
  const char *req;
  size_t req_len, req_off;
  kope_buf out_buf, err_buf;
  pid_t pid;
  int timed_out, status;
} run;

static char *request_json(kope_llm *l, const char *system, const char *user)
{
  /* the system prompt once, at the top level; messages hold the user turn */
  json_t *j = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s}], s:I}", "provider", "command", "model",
                        l->model, "system", system, "messages", "role", "user", "content", user,
                        "max_tokens", (json_int_t)l->o.max_tokens);
  char *s;

  if (l->o.temperature >= 0)
    json_object_set_new(j, "temperature", json_real(l->o.temperature));
  s = json_dumps(j, JSON_INDENT(1));
  json_decref(j);
  return s;
}

static void child(const char *cmd, int pin[2], int pout[2], int perr[2])
{
  static const kope_limits none = {0, 0, -1, 0};
  sigset_t all;

  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  dup2(pin[0], 0);
  dup2(pout[1], 1);
  dup2(perr[1], 2);
  kope_proc_child_setup(&none, 3);
  execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
  _exit(127);
}

static int start(run *r, const char *cmd, kope_err *err)
{
  int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};

  if (pipe(pin) || pipe(pout) || pipe(perr) || (r->pid = fork()) < 0) {
    kope_err_set(err, KOPE_EENV, "llm command: cannot start: %s", strerror(errno));
    r->pid = -1;
  } else if (r->pid == 0) {
    child(cmd, pin, pout, perr);
  }
  if (pin[0] >= 0) close(pin[0]);
  if (pout[1] >= 0) close(pout[1]);
  if (perr[1] >= 0) close(perr[1]);
  r->in = pin[1];
  r->out = pout[0];
  r->errfd = perr[0];
  if (r->in >= 0)
    fcntl(r->in, F_SETFL, O_NONBLOCK);
  return r->pid > 0 ? KOPE_OK : KOPE_EENV;
}

static void close_fd(int *fd)
{
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

static void pump_in(run *r)
{
  ssize_t n = write(r->in, r->req + r->req_off, r->req_len - r->req_off);

  if (n > 0)
    r->req_off += (size_t)n;
  if ((n < 0 && errno != EAGAIN && errno != EINTR) || r->req_off == r->req_len)
    close_fd(&r->in);   /* all written, or the command does not read (EPIPE) */
}

static void pump_out(int *fd, kope_buf *b)
{
  char chunk[8192];
  ssize_t n = read(*fd, chunk, sizeof chunk);

  if (n > 0)
    kope_buf_append(b, chunk, (size_t)n);
  else if (n == 0 || (errno != EINTR && errno != EAGAIN))
    close_fd(fd);
}

/* Wait for the command to exit (it closed its output) until the deadline,
 * then kill what is left of its group. */
static void reap(run *r, double deadline)
{
  struct timespec ms10 = {0, 10 * 1000 * 1000};
  pid_t w;

  while ((w = waitpid(r->pid, &r->status, WNOHANG)) == 0 && kope_now() < deadline)
    nanosleep(&ms10, NULL);
  kill(-r->pid, SIGKILL);   /* leftovers of the group (background children) */
  if (w == 0) {
    r->timed_out = 1;
    while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
      ;
  }
}

/* Until stdout and stderr close or the deadline passes. */
static void pump(run *r, double deadline)
{
  while (r->out >= 0 || r->errfd >= 0) {
    struct pollfd p[3] = {{r->in, POLLOUT, 0}, {r->out, POLLIN, 0}, {r->errfd, POLLIN, 0}};
    double left = deadline - kope_now();
    if (left <= 0) {
      r->timed_out = 1;
      kill(-r->pid, SIGKILL);
      kill(r->pid, SIGKILL);
      break;
    }
    if (poll(p, 3, left > 0.2 ? 200 : (int)(left * 1000) + 1) <= 0)
      continue;
    if (r->in >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP)))
      pump_in(r);
    if (r->out >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
      pump_out(&r->out, &r->out_buf);
    if (r->errfd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
      pump_out(&r->errfd, &r->err_buf);
  }
  close_fd(&r->in);
  close_fd(&r->out);
  close_fd(&r->errfd);
  reap(r, deadline);
}

/* JSON on stdout: {"content": ...} or a provider-shaped reply. */
static void parse_reply(const char *text, kope_llm_reply *out)
{
  json_t *j = NULL, *c, *fr;
  const char *t = text;

  while (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t')
    t++;
  if (*t == '{')
    j = json_loads(t, JSON_DISABLE_EOF_CHECK, NULL);
  c = json_object_get(j, "content");
  if (!c)
    c = json_object_get(json_object_get(json_array_get(json_object_get(j, "choices"), 0),
                                        "message"), "content");
  if (json_is_array(c))
    c = json_object_get(json_array_get(c, 0), "text");
  if (!json_is_string(c)) {
    out->text = kope_strdup(text);
    json_decref(j);
    return;
  }
  out->text = kope_strdup(json_string_value(c));
  kope_llm_usage(json_object_get(j, "usage"), out);
  fr = json_object_get(j, "finish_reason");
  if (!fr)
    fr = json_object_get(j, "stop_reason");
  if (!fr)
    fr = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "finish_reason");
  if (json_is_string(fr)) {
    out->finish_reason = kope_strdup(json_string_value(fr));
    out->truncated = !strcmp(json_string_value(fr), "length") ||
                     !strcmp(json_string_value(fr), "max_tokens");
  }
  json_decref(j);
}

static int outcome(kope_llm *l, run *r, kope_llm_reply *out, kope_err *err)
{
  const char *e = r->err_buf.data ? r->err_buf.data : "";
  char ex[300];

  kope_llm_excerpt(r->err_buf.len > 280 ? e + r->err_buf.len - 280 : e, ex, sizeof ex);
  if (r->timed_out)
    return kope_err_set(err, KOPE_EREJECT, "llm command timed out after %.0f s (%zu bytes "
                        "of output)", l->o.cmd_timeout_s, r->out_buf.len);
  if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
    out->text = kope_strdup(r->out_buf.data ? r->out_buf.data : "");
    if (WIFSIGNALED(r->status))
      return kope_err_set(err, KOPE_EREJECT, "llm command killed by signal %d; stderr: %s",
                          WTERMSIG(r->status), *ex ? ex : "(empty)");
    return kope_err_set(err, KOPE_EREJECT, "llm command exited with status %d; stderr: %s",
                        WEXITSTATUS(r->status), *ex ? ex : "(empty)");
  }
  if (r->out_buf.truncated)
    return kope_err_set(err, KOPE_EREJECT, "llm command: the reply exceeded the response cap "
                        "of %zu bytes", l->o.max_reply_bytes);
  parse_reply(r->out_buf.data ? r->out_buf.data : "", out);
  return out->text ? KOPE_OK : kope_err_nomem(err, "llm command reply");
}

int kope_llm_command_run(kope_llm *l, const char *system, const char *user,
                         kope_llm_reply *out, kope_err *err)
{
  char *req = request_json(l, system, user);
  sigset_t pipe_set, old;
  struct timespec zero = {0, 0};
  run r;
  int rc;

  if (!req)
    return kope_err_nomem(err, "llm command request");
  memset(&r, 0, sizeof r);
  r.req = req;
  r.req_len = strlen(req);
  kope_buf_init(&r.out_buf, l->o.max_reply_bytes);
  kope_buf_init(&r.err_buf, 64 * 1024);
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigprocmask(SIG_BLOCK, &pipe_set, &old);
  out->attempts = 1;
  if ((rc = start(&r, l->cmd, err)) == KOPE_OK) {
    pump(&r, kope_now() + (l->o.cmd_timeout_s > 0 ? l->o.cmd_timeout_s : 600.0));
    rc = outcome(l, &r, out, err);
  }
  close_fd(&r.in);
  close_fd(&r.out);
  close_fd(&r.errfd);
  while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
    ;   /* a SIGPIPE from a command that did not read its stdin */
  sigprocmask(SIG_SETMASK, &old, NULL);
  kope_buf_release(&r.out_buf);
  kope_buf_release(&r.err_buf);
  free(req);
  return rc;
}
