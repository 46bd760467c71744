/*
 * Target registry and the target-neutral helpers: opening a target by
 * name, the flag allow-list check, compiler-output trimming, the generated
 * call shim and access to the embedded child runtime sources.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/target.h"
#include "target/target_int.h"
#include "eval/sandbox.h"

const char *const kope_target_names[] = {"cpu", "opencl", "cuda", NULL};

extern const kope_target_vt kope_target_opencl;   /* opencl.c */
static const kope_target_vt *const targets[] = {&kope_target_cpu, &kope_target_opencl,
                                                &kope_target_cuda, NULL};

struct kope_embedded_file {
  const char *name;
  const char *data;
  size_t size;
};
extern const struct kope_embedded_file kope_embedded[];

/* An option, else the first of the environment variables that is set
 * (a copy; NULL when none is, and *nomem set when the copy failed). */
static char *opt_or_env(const char *opt, const char *env1, const char *env2, int *nomem)
{
  const char *v = opt && *opt ? opt : getenv(env1);
  char *copy;

  if ((!v || !*v) && env2)
    v = getenv(env2);
  if (!v || !*v)
    return NULL;
  if (!(copy = kope_strdup(v)))
    *nomem = 1;
  return copy;
}

kope_target *kope_target_open_opts(const char *name, const kope_target_opts *o,
                                   kope_err *err)
{
  kope_target *t;
  char *home;
  int i, nomem = 0;

  for (i = 0; targets[i]; i++)
    if (!strcmp(targets[i]->name, name))
      break;
  if (!targets[i]) {
    kope_err_set(err, KOPE_EINPUT, "unknown target '%s' (available: cpu, opencl, cuda)",
                  name);
    return NULL;
  }
  if (!(t = calloc(1, sizeof *t))) {
    kope_err_nomem(err, "target");
    return NULL;
  }
  t->vt = targets[i];
  home = kope_home_dir();
  t->cache_dir = kope_path_join(home, "cache");
  free(home);
  t->want_device = opt_or_env(o ? o->device : NULL, "KOPE_OCL_DEVICE", "KOPE_DEVICE", &nomem);
  t->cuda_arch = opt_or_env(o ? o->cuda_arch : NULL, "KOPE_CUDA_ARCH", NULL, &nomem);
  if (nomem || !t->cache_dir) {
    kope_err_nomem(err, "target");
    kope_target_free(t);
    return NULL;
  }
  if (t->vt->init(t, err) != KOPE_OK) {
    kope_target_free(t);
    return NULL;
  }
  return t;
}

kope_target *kope_target_open(const char *name, kope_err *err)
{
  return kope_target_open_opts(name, NULL, err);
}

void kope_target_free(kope_target *t)
{
  if (!t)
    return;
  free(t->cache_dir);
  free(t->want_device);
  free(t->cuda_arch);
  free(t);
}

typedef struct tool_sandbox {
  const kope_sandbox_caps *caps;
  const char *dir;
} tool_sandbox;

static void tool_sandbox_enter(void *ctx)
{
  const tool_sandbox *s = ctx;

  kope_sandbox_enter_compile(s->caps, s->dir);
}

int kope_target_run_tool(const kope_tool_run *t, char **log, int *code, double *secs)
{
  tool_sandbox sb = {NULL, t->sandbox_dir};
  kope_proc_opts o;
  kope_proc_result r;
  kope_err e;

  memset(&o, 0, sizeof o);
  o.argv = t->argv;
  o.cwd = t->cwd;
  o.envp = t->env ? (const char *const *)t->env->vars : NULL;
  o.timeout_s = t->timeout_s > 0 ? t->timeout_s : t->default_s;
  o.limits.cpu_s = o.timeout_s;
  o.limits.mem_mb = t->mem_mb;
  o.limits.fsize_bytes = t->fsize_bytes;
  o.capture_limit = 256 * 1024;
  if (t->sandbox_dir) {
    sb.caps = kope_sandbox_probe();
    o.child_hook = tool_sandbox_enter;
    o.child_ctx = &sb;
  }
  kope_err_clear(&e);
  if (code)
    *code = -1;
  if (kope_proc_run(&o, &r, &e) != KOPE_OK) {
    *log = kope_strdup(e.msg);
    return -1;
  }
  if (r.timed_out)
    kope_buf_printf(&r.out, "error: %s killed after %.0f s (time limit)\n", t->what,
                    o.timeout_s);
  else if (r.signo)
    kope_buf_printf(&r.out, "error: %s killed by signal %d%s\n", t->what, r.signo,
                    t->signal_hint ? t->signal_hint : "");
  if (secs)
    *secs += r.wall_s;
  if (code)
    *code = r.exited ? r.exit_code : -1;
  *log = kope_buf_steal(&r.out);
  return r.exited && r.exit_code == 0 && !r.timed_out;
}

const char *kope_target_name(const kope_target *t) { return t->vt->name; }
const char *kope_target_language(const kope_target *t) { return t->vt->language; }
const char *kope_target_source_ext(const kope_target *t) { return t->vt->ext; }
const char *kope_target_compiler(const kope_target *t) { return t->compiler; }
const char *kope_target_default_flags(const kope_target *t) { return t->default_flags; }

int kope_target_check_device(kope_target *t, kope_err *err)
{
  return t->vt->check_device ? t->vt->check_device(t, err) : KOPE_OK;
}

int kope_target_build(kope_target *t, const kope_build_req *req, kope_build_out *out,
                      kope_err *err)
{
  return t->vt->build(t, req, out, err);
}

void kope_target_worker_env(kope_target *t, kope_build_role role, int threads,
                            kope_env *env)
{
  t->vt->worker_env(t, role, threads, env);
}

kope_target_gate kope_target_gate_kind(const kope_target *t) { return t->vt->gate; }
int kope_target_gate_artifacts(const kope_target *t) { return t->vt->gate_artifacts; }
int kope_target_worker_mem_limited(const kope_target *t) { return t->vt->mem_limited; }
long kope_target_worker_fsize(const kope_target *t) { return t->vt->worker_fsize; }
int kope_target_host_roofline(const kope_target *t) { return t->vt->host_roofline; }
kope_op_vendor_lang kope_target_vendor_lang(const kope_target *t) { return t->vt->vendor; }
int kope_target_build_only_vendor(const kope_target *t) { return t->vt->build_only_vendor; }

const kope_op_vendor *kope_target_vendor(const kope_target *t, const kope_op *op)
{
  const kope_op_vendor *v = kope_op_vendor_for(op, t->vt->vendor);

  return v ? v : t->vt->borrows_c_vendor ? kope_op_vendor_for(op, KOPE_OP_VENDOR_C) : NULL;
}

const char *kope_target_device(kope_target *t)
{
  kope_err err;

  if (!t->device_state) {
    kope_err_clear(&err);
    t->device[0] = '\0';
    t->device_state = t->vt->device(t, t->device, sizeof t->device, &err) == KOPE_OK &&
                      t->device[0] ? 1 : -1;
  }
  return t->device_state > 0 ? t->device : NULL;
}

char *kope_target_describe(const kope_target *t, const kope_hw *hw)
{
  return t->vt->describe((kope_target *)t, hw);
}

static int flag_allowed(const kope_target *t, const char *f)
{
  const char *const *a;

  for (a = t->vt->allowed_flags; *a; a++) {
    size_t n = strlen(*a);
    if (n && (*a)[n - 1] == '*' ? !strncmp(*a, f, n - 1) : !strcmp(*a, f))
      return 1;
  }
  return 0;
}

int kope_target_write_embedded(const char *dir, const char *const *names, kope_err *err)
{
  int rc = KOPE_OK;

  for (; *names && rc == KOPE_OK; names++) {
    size_t n;
    const char *data = kope_embedded_file(*names, &n);
    char *path = kope_path_join(dir, *names);
    if (!data)
      rc = kope_err_set(err, KOPE_EINTERNAL, "embedded file %s missing", *names);
    else
      rc = kope_file_write_atomic(path, data, n, err);
    free(path);
  }
  return rc;
}

int kope_target_add_flags(const char **argv, int *n, int max, const char *flags, char **hold)
{
  char *tok, *save = NULL;

  if (!(*hold = kope_strdup(flags ? flags : "")))
    return -1;
  for (tok = strtok_r(*hold, " ", &save); tok && *n < max - 1; tok = strtok_r(NULL, " ", &save))
    argv[(*n)++] = tok;
  return 0;
}

int kope_target_check_flags(const kope_target *t, const char *flags, kope_err *err)
{
  char *copy, *tok, *save = NULL;
  int rc = KOPE_OK;

  if (!flags || !*flags)
    return KOPE_OK;
  if (!(copy = kope_strdup(flags)))
    return kope_err_nomem(err, "compiler flags");
  for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
    if (!flag_allowed(t, tok)) {
      rc = kope_err_set(err, KOPE_EINPUT,
                        "compiler flag '%s' is not allowed for target %s (see kope eval --help)",
                        tok, t->vt->name);
      break;
    }
  free(copy);
  return rc;
}

/* A fill found the marker already in place, or rename lost a race to
 * another process that stored the same entry: either way it is there. */
static int entry_done(const char *dir, const char *marker)
{
  char *m = kope_path_join(dir, marker);
  int ok = kope_is_file(m);

  free(m);
  return ok;
}

int kope_target_cache_entry(kope_target *t, const char *entry, const char *marker,
                            kope_cache_fill_fn fill, void *ctx, char **dir, int *cached,
                            kope_err *err)
{
  char *path = entry ? kope_path_join(t->cache_dir, entry) : NULL, *tmp = NULL, *parent;
  int rc = KOPE_OK;

  *dir = NULL;
  if (cached)
    *cached = 0;
  if (path && entry_done(path, marker)) {
    if (cached)
      *cached = 1;
    *dir = path;
    return KOPE_OK;
  }
  parent = kope_strdup(path);
  tmp = path ? kope_sprintf("%s.tmpXXXXXX", path) : NULL;
  if (!parent || !tmp || !*tmp) {
    rc = kope_err_nomem(err, "cache entry");
    goto out;
  }
  *strrchr(parent, '/') = '\0';
  if ((rc = kope_mkdirs(parent, err)) == KOPE_OK && !mkdtemp(tmp))
    rc = kope_err_set(err, KOPE_EENV, "cannot create a build directory %s", tmp);
  if (rc == KOPE_OK && (rc = fill(t, tmp, ctx, err)) == KOPE_OK && entry_done(tmp, marker)) {
    if (rename(tmp, path) != 0 && !entry_done(path, marker))
      rc = kope_err_set(err, KOPE_EENV, "cannot store %s in the cache", path);
    else
      *dir = path, path = NULL;
  }
  if (kope_is_dir(tmp))
    kope_rmtree(tmp);
out:
  free(tmp);
  free(parent);
  free(path);
  return rc;
}

char *kope_target_cache_name(const char *blob, const char *fmt, ...)
{
  char key[65];
  kope_buf b;
  va_list ap;

  if (!blob)
    return NULL;
  kope_sha256_hex(blob, strlen(blob), key);
  kope_buf_init(&b, 0);
  va_start(ap, fmt);
  kope_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (kope_buf_printf(&b, "-%.16s", key) != 0) {
    kope_buf_release(&b);
    return NULL;
  }
  return kope_buf_steal(&b);
}

char *kope_target_cached_dir(kope_target *t, const char *entry, const char *marker,
                             kope_cache_fill_fn fill, void *ctx, const char *what,
                             kope_err *err)
{
  char *dir = NULL;

  if (kope_target_cache_entry(t, entry, marker, fill, ctx, &dir, NULL, err) == KOPE_OK && !dir)
    kope_err_set(err, KOPE_EENV, "target %s: %s was not built", t->vt->name, what);
  return dir;
}

typedef struct build_fill {
  kope_build_in_fn build_in;
  const kope_build_req *req;
  void *ctx;
  kope_build_out *out;
} build_fill;

static int fill_build(kope_target *t, const char *dir, void *ctx, kope_err *err)
{
  build_fill *f = ctx;
  int rc = f->build_in(t, f->req, dir, f->out, err, f->ctx);

  return rc == KOPE_OK && !f->out->ok ? KOPE_OK : rc;
}

int kope_target_cached_build(kope_target *t, const char *name, kope_build_in_fn build_in,
                             const kope_build_req *req, void *ctx, kope_build_out *out,
                             kope_err *err)
{
  build_fill f = {build_in, req, ctx, out};
  char *entry = name ? kope_sprintf("build/%s", name) : NULL, *dir = NULL;
  int rc = kope_target_cache_entry(t, entry, "worker", fill_build, &f, &dir, &out->cached, err);

  if (rc == KOPE_OK && dir) {
    out->ok = 1;
    if (out->cached && !out->diagnostics)
      out->diagnostics = kope_strdup("");
    free(out->exe);
    out->exe = kope_path_join(dir, "worker");
    if (out->obj) {
      free(out->obj);
      out->obj = kope_path_join(dir, "kernel.o");
    }
  }
  free(dir);
  free(entry);
  return rc;
}

void kope_build_out_release(kope_build_out *o)
{
  free(o->exe);
  free(o->obj);
  free(o->diagnostics);
  memset(o, 0, sizeof *o);
}

const char *kope_embedded_file(const char *name, size_t *size)
{
  int i;

  for (i = 0; kope_embedded[i].name; i++)
    if (!strcmp(kope_embedded[i].name, name)) {
      if (size)
        *size = kope_embedded[i].size;
      return kope_embedded[i].data;
    }
  return NULL;
}

static const char *shim_cast(const kope_arg *a)
{
  switch (a->role) {
  case KOPE_ROLE_IN:
    return a->dtype == KOPE_F32 ? "(const float *)a->ptr" : a->dtype == KOPE_F64 ?
           "(const double *)a->ptr" : a->dtype == KOPE_I32 ? "(const int32_t *)a->ptr" :
           "(const int64_t *)a->ptr";
  case KOPE_ROLE_OUT:
    return a->dtype == KOPE_F32 ? "(float *)a->ptr" : a->dtype == KOPE_F64 ?
           "(double *)a->ptr" : a->dtype == KOPE_I32 ? "(int32_t *)a->ptr" :
           "(int64_t *)a->ptr";
  default:
    return a->dtype == KOPE_F32 ? "(float)a->fval" : a->dtype == KOPE_F64 ?
           "(double)a->fval" : a->dtype == KOPE_I32 ? "(int32_t)a->ival" : "(int64_t)a->ival";
  }
}

char *kope_shim_source(const kope_op *op)
{
  kope_buf b;
  char *proto = kope_op_prototype(op);
  size_t i;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "/* Generated by kope for operator %s. */\n"
                      "#include <stdint.h>\n#include \"kope_child.h\"\n%s\n\n"
                      "void kope_child_invoke(const kope_child_args *a)\n{\n  %s(",
                  kope_op_name(op), proto, kope_op_name(op));
  for (i = 0; i < kope_op_nargs(op); i++)
    kope_buf_printf(&b, "%s%s[%zu]", i ? ", " : "", shim_cast(kope_op_arg(op, i)), i);
  kope_buf_puts(&b, ");\n}\n");
  free(proto);
  return kope_buf_steal(&b);
}

static int keep_line(const char *l)
{
  return strstr(l, "error") || strstr(l, "warning") || strstr(l, "Error:") ||
         strstr(l, "Warning:") || strstr(l, "note:") ||
         strstr(l, "undefined reference") || l[0] == ' ' || strstr(l, "In function");
}

char *kope_trim_diagnostics(const char *text, const char *workdir, int max_lines)
{
  kope_buf out;
  char *copy = kope_strdup(text ? text : ""), *line, *save = NULL;
  char *seen[256];
  int nseen = 0, nlines = 0, dropped = 0, i, dup;
  size_t wl = workdir ? strlen(workdir) : 0;

  if (!copy)
    return NULL;
  kope_buf_init(&out, 16384);
  for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *p;
    while (wl && (p = strstr(line, workdir))) {
      size_t skip = wl + (p[wl] == '/');
      memmove(p, p + skip, strlen(p + skip) + 1);
    }
    if (!keep_line(line))
      continue;
    for (dup = 0, i = 0; i < nseen; i++)
      dup |= !strcmp(seen[i], line);
    if (dup)
      continue;
    if (nseen < 256)
      seen[nseen++] = line;
    if (nlines >= max_lines) {
      dropped++;
      continue;
    }
    kope_buf_printf(&out, "%s\n", line);
    nlines++;
  }
  if (dropped)
    kope_buf_printf(&out, "... %d more lines omitted\n", dropped);
  free(copy);
  return kope_buf_steal(&out);
}
