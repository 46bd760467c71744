/*
 * The opencl target: kernels in OpenCL C (one __kernel named after the
 * operator, geometry declared on a `// @launch` line, see launch.h and
 * docs/operator-format.md), run through any OpenCL platform; PoCL on the
 * CPU in CI. kope owns the whole host side. A candidate's worker program
 * is the child runtime linked with the OpenCL host runtime
 * (child/kope_ocl_host.c, kope_ocl_dev.c), kope's expression evaluator and
 * a generated spec table (kernel name, argument kinds and shapes from
 * op.json, launch expressions and knob values from the parsed @launch
 * line); the .cl text stays in kernel.cl next to it and is built by the
 * worker at its first MAP, before the seal. The build step compiles the
 * kernel once with the build-only helper (child/kope_ocl_build.c) so a
 * compiler error is a compile_error with the log, and fills the run's own
 * PoCL cache (POCL_CACHE_DIR inside the work directory).
 * The trusted C reference and the vendor baseline are built and run by
 * the cpu target: the judge is the same for every target. The device a
 * run uses (kope_target_device) is read from the helper's device list,
 * picked as the workers pick it.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/launch.h"
#include "target/target_int.h"

#define OCL_CC "gcc"
#define OCL_CFLAGS "-std=gnu11 -O2 -Wall"

static const char *const ocl_allowed[] = {NULL};
static const char *const ocl_keys[] = {"global", "local", NULL};
static const char *const ocl_required[] = {"global", NULL};

/* Embedded files every OpenCL build needs (headers are written under the
 * names the sources include). */
static const char *const ocl_files[] = {
  "kope_child.h", "kope_child.c", "kope_ocl.h", "kope_ocl_dev.c", "kope_ocl_host.c",
  "kope_ocl_build.c", "expr.h", "expr.c", NULL
};

/* Is an OpenCL ICD registered? The ICD loader reads OCL_ICD_FILENAMES,
 * else the *.icd files of OCL_ICD_VENDORS (a directory or one file), else
 * /etc/OpenCL/vendors. kope never loads OpenCL itself: the build helper
 * and the workers do, and the helper reports a platform that is listed but
 * does not work. */
static int icd_registered(void)
{
  const char *files = getenv("OCL_ICD_FILENAMES"), *v = getenv("OCL_ICD_VENDORS");
  const char *dir = v && *v ? v : "/etc/OpenCL/vendors";
  DIR *d;
  struct dirent *e;
  int n = 0;

  if (files && *files)
    return 1;
  if (kope_is_file(dir))
    return 1;
  if (!(d = opendir(dir)))
    return 0;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    n += l > 4 && !strcmp(e->d_name + l - 4, ".icd");
  }
  closedir(d);
  return n > 0;
}

static int ocl_init(kope_target *t, kope_err *err)
{
  FILE *p = popen(OCL_CC " --version 2>/dev/null", "r");
  char line[256] = "";

  if (!p || !fgets(line, sizeof line, p)) {
    if (p)
      pclose(p);
    return kope_err_set(err, KOPE_EENV, "target opencl: cannot run '%s' for the host side "
                        "(run scripts/setup.sh)", OCL_CC);
  }
  pclose(p);
  line[strcspn(line, "\n")] = '\0';
  /* the same compiler string as the cpu target: the reference and vendor
   * builds, which the cpu target does, share its cache */
  snprintf(t->compiler, sizeof t->compiler, "%s", line);
  snprintf(t->default_flags, sizeof t->default_flags, "-cl-std=CL1.2");
  if (!icd_registered())
    return kope_err_set(err, KOPE_EENV, "target opencl: no OpenCL platform (no ICD in "
                        "/etc/OpenCL/vendors or $OCL_ICD_VENDORS; install one such as "
                        "pocl-opencl-icd, see scripts/setup.sh)");
  return KOPE_OK;
}

/* Run argv in cwd with env; 1 exit 0, 0 other exit, -1 could not run.
 * *log gets the output (caller frees), *code the exit status. */
static int run(const char **argv, const char *cwd, const kope_env *env, double timeout,
               char **log, int *code, double *secs)
{
  kope_tool_run t = {argv, cwd, env, timeout, 120, 8192, 256L << 20, "build", NULL, NULL};

  return kope_target_run_tool(&t, log, code, secs);
}

/* Write the embedded sources and headers into dir. */
static int write_files(const char *dir, kope_err *err)
{
  static const char *const expr_h[] = {"expr.h", NULL};
  char *sub = kope_path_join(dir, "core");
  int rc = kope_mkdirs(sub, err);

  if (rc == KOPE_OK)
    rc = kope_target_write_embedded(dir, ocl_files, err);
  if (rc == KOPE_OK)
    rc = kope_target_write_embedded(sub, expr_h, err);   /* also as core/expr.h */
  free(sub);
  return rc;
}

static int cc(const char *dir, const char *const *args, char **log)
{
  const char *argv[24];
  char *hold = NULL;
  int n = 0, code, rc;

  argv[n++] = OCL_CC;
  if (kope_target_add_flags(argv, &n, 16, OCL_CFLAGS, &hold) != 0) {
    *log = kope_strdup("out of memory (compiler command line)");
    return -1;
  }
  argv[n++] = "-I.";
  while (*args && n < 23)
    argv[n++] = *args++;
  argv[n] = NULL;
  rc = run(argv, dir, NULL, 120, log, &code, NULL);
  free(hold);
  return rc;
}

/* Build the trusted objects (runtime, host, device, expr) and the
 * build-only helper kope-oclc into dir. */
static int fill_runtime(kope_target *t, const char *dir, void *ctx, kope_err *err)
{
  static const char *const steps[][8] = {
    {"-c", "kope_child.c", NULL}, {"-c", "kope_ocl_dev.c", NULL},
    {"-c", "kope_ocl_host.c", NULL}, {"-c", "kope_ocl_build.c", NULL}, {"-c", "expr.c", NULL},
    {"-o", "kope-oclc", "kope_ocl_build.o", "kope_ocl_dev.o", "-lOpenCL", NULL}};
  char *log = NULL;
  size_t i;
  int rc = write_files(dir, err);

  if (rc != KOPE_OK)
    rc = kope_err_set(err, KOPE_EENV, "target opencl: cannot create %s", dir);
  for (i = 0; rc == KOPE_OK && i < sizeof steps / sizeof steps[0]; i++) {
    free(log);
    log = NULL;
    if (cc(dir, steps[i], &log) != 1)
      rc = kope_err_set(err, KOPE_EENV, "target opencl: cannot build kope's OpenCL host runtime "
                        "(are ocl-icd-opencl-dev and opencl-c-headers installed?): %.600s",
                        log ? log : "");
  }
  free(log);
  return rc;
}

/* The trusted objects and the build-only helper, built once per content
 * hash under <cache>/obj/ocl-<hash>. Returns that directory (caller frees)
 * or NULL with err. */
static char *runtime_dir(kope_target *t, kope_err *err)
{
  char *entry, *dir;
  kope_buf blob;
  size_t i;

  kope_buf_init(&blob, 0);
  kope_buf_printf(&blob, "%s\n%s\n", t->compiler, OCL_CFLAGS);
  for (i = 0; ocl_files[i]; i++)
    kope_buf_printf(&blob, "%s\n%s\n", ocl_files[i], kope_embedded_file(ocl_files[i], NULL));
  entry = kope_target_cache_name(blob.data ? blob.data : "", "obj/ocl");
  kope_buf_release(&blob);
  dir = kope_target_cached_dir(t, entry, "kope-oclc", fill_runtime, NULL, "kope-oclc", err);
  free(entry);
  return dir;
}

/* text as a C string literal: every byte outside a safe set is escaped. */
static void put_cstr(kope_buf *b, const char *text)
{
  const unsigned char *p = (const unsigned char *)text;

  kope_buf_puts(b, "\"");
  for (; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr("_ +-*/%(),.", *p))
      kope_buf_printf(b, "%c", *p);
    else
      kope_buf_printf(b, "\\%03o", *p);
  kope_buf_puts(b, "\"");
}

static void put_exprs(kope_buf *b, const char *what, const kope_launch_key *k)
{
  int i;

  kope_buf_printf(b, "  .n%s = %d,\n  .%s = {", what, k ? k->n : 0, what);
  for (i = 0; k && i < k->n; i++) {
    put_cstr(b, k->expr[i]);
    kope_buf_puts(b, ", ");
  }
  kope_buf_puts(b, "},\n");
}

static int scalar_type(kope_dtype d)
{
  return d == KOPE_F32 ? 0 : d == KOPE_F64 ? 1 : d == KOPE_I32 ? 2 : 3;
}

/* The generated spec table of one candidate (see kope_ocl.h). */
static char *spec_source(const kope_op *op, const kope_launch *l)
{
  kope_buf b;
  size_t i;
  int k;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "/* Generated by kope for operator %s. */\n#include \"kope_ocl.h\"\n\n"
                  "const kope_ocl_spec kope_ocl_op = {\n  .kernel = ", kope_op_name(op));
  put_cstr(&b, kope_op_name(op));
  kope_buf_printf(&b, ",\n  .nargs = %zu,\n  .arg = {\n", kope_op_nargs(op));
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    int kind = a->role == KOPE_ROLE_IN ? 1 : a->role == KOPE_ROLE_OUT ? 2 : 0;
    kope_buf_puts(&b, "    {");
    put_cstr(&b, a->name);
    kope_buf_printf(&b, ", %d, %d, %zu, %d, {", kind, scalar_type(a->dtype),
                    kope_dtype_size(a->dtype), kind ? a->rank : 0);
    for (k = 0; kind && k < a->rank; k++) {
      put_cstr(&b, a->shape[k]);
      kope_buf_puts(&b, ", ");
    }
    kope_buf_puts(&b, "}},\n");
  }
  kope_buf_puts(&b, "  },\n");
  put_exprs(&b, "global", kope_launch_find(l, "global"));
  put_exprs(&b, "local", kope_launch_find(l, "local"));
  kope_buf_printf(&b, "  .nknobs = %d,\n  .knob = {", l->nknobs);
  for (k = 0; k < l->nknobs; k++) {
    put_cstr(&b, l->knob[k]);
    kope_buf_puts(&b, ", ");
  }
  kope_buf_puts(&b, "},\n  .knob_val = {");
  for (k = 0; k < l->nknobs; k++)
    kope_buf_printf(&b, "%lldLL, ", (long long)l->knob_val[k]);
  kope_buf_puts(&b, "},\n};\n");
  return kope_buf_steal(&b);
}

/* Compile the spec and link dir/worker against the runtime objects in rt.
 * 1 linked, 0 the compiler failed, -1 it could not run (*log says why). */
static int link_worker(const char *dir, const char *rt, const char *spec, char **log,
                       double *secs)
{
  static const char *const objs[] = {"kope_child.o", "kope_ocl_host.o", "kope_ocl_dev.o",
                                     "expr.o"};
  char *held[4], *path = kope_path_join(dir, "kope_spec.c"), *inc = kope_sprintf("-I%s", rt);
  const char *argv[20];
  int n = 0, code, rc;
  size_t i;
  kope_err e;

  kope_err_clear(&e);
  rc = kope_file_write_atomic(path, spec, strlen(spec), &e);
  argv[n++] = OCL_CC;
  argv[n++] = "-std=gnu11";
  argv[n++] = "-O2";
  argv[n++] = inc;
  argv[n++] = "-o";
  argv[n++] = "worker";
  argv[n++] = "kope_spec.c";
  for (i = 0; i < 4; i++)
    argv[n++] = held[i] = kope_path_join(rt, objs[i]);
  argv[n++] = "-lOpenCL";
  argv[n++] = "-lm";
  argv[n] = NULL;
  rc = rc == KOPE_OK ? run(argv, dir, NULL, 120, log, &code, secs) : -1;
  if (rc < 0 && !*log)
    *log = kope_strdup(e.msg);
  for (i = 0; i < 4; i++)
    free(held[i]);
  free(path);
  free(inc);
  return rc;
}

/* The environment of the build helper and the workers: the device kope
 * picks (kope_target_opts.device) is theirs as KOPE_OCL_DEVICE. */
static void ocl_env(const kope_target *t, kope_env *env, const char *dir)
{
  if (t->want_device)
    kope_env_add(env, "KOPE_OCL_DEVICE=%s", t->want_device);
  kope_env_pass(env, "OCL_ICD_VENDORS");
  kope_env_pass(env, "OCL_ICD_FILENAMES");
  kope_env_pass(env, "POCL_DEBUG");
  if (dir)
    kope_env_add(env, "POCL_CACHE_DIR=%s/pocl-cache", dir);
}

/* Build kernel.cl with the helper: 1 built, 0 refused (log), -1 no
 * device (log says why). */
static int build_only(const kope_target *t, const char *rt, const kope_build_req *req,
                      char **log, double *secs)
{
  char *helper = kope_path_join(rt, "kope-oclc"), nargs[16];
  const char *argv[6];
  kope_env env;
  int code, rc;

  snprintf(nargs, sizeof nargs, "%zu", kope_op_nargs(req->op));
  argv[0] = helper;
  argv[1] = "kernel.cl";
  argv[2] = kope_op_name(req->op);
  argv[3] = nargs;
  argv[4] = NULL;
  kope_env_init(&env, req->workdir);
  ocl_env(t, &env, req->workdir);
  rc = run(argv, req->workdir, &env, req->timeout_s, log, &code, secs);
  kope_env_free(&env);
  free(helper);
  if (rc < 0 || code == 3)
    return -1;
  return rc;
}

/* The build log with the runtime's temporary file name shown as
 * kernel.cl and its "N errors generated." counts dropped. Caller frees. */
static char *clean_log(const char *log)
{
  kope_buf b;
  const char *p = log ? log : "";

  kope_buf_init(&b, 0);
  while (*p) {
    size_t n = strcspn(p, "\n");
    const char *t = strstr(p, "pocl-cache/tempfile_"), *end;
    int count = 0;
    sscanf(p, "%*d %*[a-z] generated.%n", &count);
    if (count > 0 && (size_t)count == n) {
      /* a count line: dropped */
    } else if (t && t < p + n && (end = strstr(t, ".cl")) && end < p + n) {
      kope_buf_printf(&b, "%.*skernel.cl%.*s\n", (int)(t - p), p, (int)(p + n - end - 3),
                      end + 3);
    } else {
      kope_buf_printf(&b, "%.*s\n", (int)n, p);
    }
    p += n + (p[n] == '\n');
  }
  return kope_buf_steal(&b);
}

static char *diagnostics(const char *raw, const char *dir)
{
  char *log = clean_log(raw), *d = kope_trim_diagnostics(log, dir, 40);

  if (d && !*d && log && *log) {
    free(d);
    d = kope_sprintf("error: %.2000s", log);
  }
  free(log);
  return d;
}

static int build_candidate(kope_target *t, const kope_build_req *req, kope_build_out *out,
                           kope_err *err)
{
  kope_launch l;
  kope_err lerr;
  char *rt = NULL, *spec = NULL, *log = NULL, *path = NULL;
  int rc = KOPE_OK, ok;

  kope_err_clear(&lerr);
  out->exe = kope_path_join(req->workdir, "worker");
  if (kope_launch_parse(req->source, req->op, ocl_keys, ocl_required, &l, &lerr) != KOPE_OK) {
    out->diagnostics = kope_sprintf("error: %s\n", lerr.msg);
    goto out;
  }
  if (!(rt = runtime_dir(t, err))) {
    rc = err->code;
    goto out;
  }
  path = kope_path_join(req->workdir, "kernel.cl");
  if ((rc = kope_file_write_atomic(path, req->source, strlen(req->source), err)))
    goto out;
  ok = build_only(t, rt, req, &log, &out->seconds);
  if (ok < 0) {
    rc = kope_err_set(err, KOPE_EENV, "target opencl: %s", log ? log : "no OpenCL device");
    goto out;
  }
  if (!(out->diagnostics = diagnostics(log, req->workdir))) {
    rc = kope_err_nomem(err, "OpenCL diagnostics");
    goto out;
  }
  if (!ok)
    goto out;
  free(log);
  log = NULL;
  spec = spec_source(req->op, &l);
  if (link_worker(req->workdir, rt, spec, &log, &out->seconds) != 1) {
    rc = kope_err_set(err, KOPE_EENV, "target opencl: cannot link the worker: %.600s",
                      log ? log : "");
    goto out;
  }
  out->ok = 1;
out:
  free(rt);
  free(spec);
  free(log);
  free(path);
  return rc;
}

static int ocl_build(kope_target *t, const kope_build_req *req, kope_build_out *out,
                     kope_err *err)
{
  if (req->role != KOPE_BUILD_CANDIDATE)
    return kope_target_cpu.build(t, req, out, err);   /* the C judge and baseline */
  memset(out, 0, sizeof *out);
  return build_candidate(t, req, out, err);
}

static void ocl_worker_env(kope_target *t, kope_build_role role, int threads, kope_env *env)
{
  if (role != KOPE_BUILD_CANDIDATE) {
    kope_target_cpu.worker_env(t, role, threads, env);
    return;
  }
  ocl_env(t, env, NULL);
  /* PoCL: one generic work-group function per kernel, compiled at the
   * warm-up launch, instead of one per local size (which a later case
   * would need after the seal) */
  kope_env_add(env, "POCL_WORK_GROUP_SPECIALIZATION=0");
  kope_env_add(env, "POCL_MAX_PTHREAD_COUNT=%d", threads > 0 ? threads : 1);
}

/* The helper's device list (caller frees), or NULL. */
static char *device_list(kope_target *t)
{
  kope_err err;
  char *rt, *helper, *log = NULL;
  const char *argv[3];
  kope_env env;
  int code;

  kope_err_clear(&err);
  if (!(rt = runtime_dir(t, &err)))
    return NULL;
  helper = kope_path_join(rt, "kope-oclc");
  argv[0] = helper;
  argv[1] = "--list";
  argv[2] = NULL;
  kope_env_init(&env, NULL);
  ocl_env(t, &env, NULL);
  if (run(argv, NULL, &env, 60, &log, &code, NULL) != 1) {
    free(log);
    log = NULL;
  }
  kope_env_free(&env);
  free(helper);
  free(rt);
  return log;
}

static char *ocl_describe(kope_target *t, const kope_hw *hw)
{
  kope_buf b;
  char *h = hw ? kope_hw_describe(hw) : NULL, *devs = device_list(t);
  const char *want = t->want_device;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "Target: opencl. A kernel is OpenCL C 1.2: exactly one "
                  "`__kernel void <op>(...)` with the operator's parameters in order (`in` "
                  "buffers `__global const T *`, `out` buffers `__global T *`, dims `long`, "
                  "params `float`/`double`/`int`/`long`); helper functions are allowed, no "
                  "`#include`, no `printf`. kope launches it once per call with the geometry "
                  "of the one line `// @launch global=E[,E[,E]] local=E[,E[,E]]` (integer "
                  "expressions over dims, integer params and the file's knob macros; "
                  "`cdiv(a,b)`, `rup(a,b)`, `min`, `max`); the global size must be a multiple "
                  "of the local size. Knobs are `#define NAME VALUE  // @knob layer=L "
                  "values=a,b \"text\"` lines.\n");
  kope_buf_printf(&b, "\nOpenCL devices (the kernel runs on %s%s):\n%s",
                  want && *want ? "the one matching " : "the first",
                  want && *want ? want : "", devs ? devs : "(could not be listed)\n");
  free(devs);
  if (h)
    kope_buf_printf(&b, "\n%s\n", h);
  free(h);
  return kope_buf_steal(&b);
}

/* Where the "(version, N compute units)" of a device list line starts:
 * the first " (" after the platform that opens "OpenCL..." or an empty
 * version (a name may hold "(R)" or "(TM)"). NULL when there is none. */
static const char *ocl_line_tail(const char *line)
{
  const char *p = strstr(line, " / ");

  while (p && (p = strstr(p + 1, " (")))
    if (!strncmp(p + 2, "OpenCL", 6) || p[2] == ',')
      return p;
  return NULL;
}

/* Does the device list line "N: platform / device (version, ...)" name
 * the device want picks, as the workers pick it (kope_ocl_dev.c): an
 * index, else a case-insensitive substring of "platform / device", else
 * the first? name gets "platform / device". */
static int ocl_line_matches(const char *line, const char *want, char *name, size_t size)
{
  const char *colon = strstr(line, ": "), *end = ocl_line_tail(line);
  size_t n, i, k, wl = strlen(want);

  if (!colon || !end || end < colon)
    return 0;
  n = (size_t)(end - colon - 2);
  snprintf(name, size, "%.*s", (int)n, colon + 2);
  if (!*want)
    return 1;
  if (strspn(want, "0123456789") == wl)
    return atoi(want) == atoi(line);
  for (i = 0; i + wl <= n; i++) {
    for (k = 0; k < wl && tolower((unsigned char)name[i + k]) ==
                             tolower((unsigned char)want[k]); k++)
      ;
    if (k == wl)
      return 1;
  }
  return 0;
}

static int ocl_device(kope_target *t, char *buf, size_t size, kope_err *err)
{
  const char *want = t->want_device;
  char *devs = device_list(t), *line, *save = NULL;
  int found = 0;

  for (line = devs ? strtok_r(devs, "\n", &save) : NULL; line && !found;
       line = strtok_r(NULL, "\n", &save))
    found = ocl_line_matches(line, want ? want : "", buf, size);
  free(devs);
  if (!found)
    return kope_err_set(err, KOPE_EENV, "target opencl: no OpenCL device%s%s",
                        want && *want ? " matches " : "", want && *want ? want : "");
  return KOPE_OK;
}

/* The C vendor baseline is borrowed: the cpu target builds and runs it.
 * The OpenCL runtime writes its compiled kernel into the run directory. */
const kope_target_vt kope_target_opencl = {
  .name = "opencl", .language = "OpenCL C 1.2", .ext = ".cl", .allowed_flags = ocl_allowed,
  .init = ocl_init, .build = ocl_build, .worker_env = ocl_worker_env,
  .describe = ocl_describe, .device = ocl_device, .gate = KOPE_TARGET_GATE_OPENCL,
  .vendor = KOPE_OP_VENDOR_NONE, .borrows_c_vendor = 1, .mem_limited = 1,
  .worker_fsize = 256L << 20, .host_roofline = 1
};
