/*
 * The CPU target: kernels in C (OpenMP, SIMD intrinsics) built with gcc.
 * A worker program is the kernel's object linked with the generated call
 * shim and the embedded child runtime. Candidates are compiled in their
 * own work directory with -O3 -march=native -fopenmp and the generated
 * prototype force-included, so a wrong signature is a compile error; the
 * preprocessed text and assembly are kept beside the object for the
 * evaluator's static gate (src/eval/gate.c).
 * Trusted builds (reference at -O2 single-thread, vendor baselines, the
 * runtime and shim objects) are cached under <kope_home>/cache by the hash
 * of everything that goes into them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/target_int.h"

#define CPU_CC "gcc"
#define CPU_STD "-std=gnu11"
#define CPU_REF_FLAGS "-O2"
#define CPU_VENDOR_FLAGS "-O2 -march=native -fopenmp"

static const char *const cpu_allowed[] = {
  "-O1", "-O2", "-O3", "-Os", "-funroll-loops", "-funroll-all-loops",
  "-fno-unroll-loops", "-ftree-vectorize", "-fno-tree-vectorize",
  "-ffp-contract=*", "-fno-math-errno", "-fno-trapping-math", "-fno-signed-zeros",
  "-freciprocal-math", "-fassociative-math", "-ffast-math", "-march=native",
  "-mtune=native", "-mavx", "-mavx2", "-mfma", "-mavx512f", "-mavx512bw",
  "-mavx512vl", "-mavx512dq", "-mprefer-vector-width=*", "-falign-loops=*",
  "-fprefetch-loop-arrays", "-fno-strict-aliasing", "-fomit-frame-pointer",
  "-fopenmp", "-fopenmp-simd", NULL
};

static int cpu_init(kope_target *t, kope_err *err)
{
  FILE *p = popen(CPU_CC " --version 2>/dev/null", "r");
  char line[256] = "";

  if (!p || !fgets(line, sizeof line, p)) {
    if (p)
      pclose(p);
    return kope_err_set(err, KOPE_EENV, "target cpu: cannot run '%s' (is gcc installed? "
                        "run scripts/setup.sh)", CPU_CC);
  }
  pclose(p);
  line[strcspn(line, "\n")] = '\0';
  snprintf(t->compiler, sizeof t->compiler, "%s", line);
  snprintf(t->default_flags, sizeof t->default_flags, "-O3 -march=native -fopenmp");
  return KOPE_OK;
}

/* Run the compiler with argv in cwd; output goes to *log (caller frees).
 * Returns 1 when it succeeded, 0 when it failed, -1 when it could not run. */
static int run_cc(const char **argv, const char *cwd, double timeout, char **log,
                  double *secs)
{
  kope_tool_run t = {argv, cwd, NULL, timeout, 120, 4096, 256L << 20, "compiler",
                     " (memory or CPU limit)", NULL};

  return kope_target_run_tool(&t, log, NULL, secs);
}

/* Compile source text to an object: cwd/name.c -> cwd/name.o. untrusted:
 * gcc and the assembler run in the compile sandbox (only the system
 * toolchain and cwd can be read), so `.include`/`.incbin` of another file
 * fails. */
static int compile_obj(const char *cwd, const char *name, const char *src, const char *flags,
                       const char *include, int untrusted, double timeout, char **log,
                       double *secs)
{
  const char *argv[64];
  char *hold = NULL, *cfile = kope_sprintf("%s.c", name), *ofile = kope_sprintf("%s.o", name);
  char *path = kope_path_join(cwd, cfile);
  int n = 0, rc;
  kope_err e;

  if (kope_file_write_atomic(path, src, strlen(src), &e) != KOPE_OK) {
    *log = kope_strdup(e.msg);
    rc = -1;
    goto out;
  }
  argv[n++] = CPU_CC;
  argv[n++] = CPU_STD;
  if (!cfile || !ofile || kope_target_add_flags(argv, &n, 56, flags, &hold) != 0) {
    *log = kope_strdup("out of memory (compiler command line)");
    rc = -1;
    goto out;
  }
  argv[n++] = "-Wall";
  argv[n++] = "-Wno-unknown-pragmas";
  if (include) {
    argv[n++] = "-include";
    argv[n++] = include;
  }
  argv[n++] = "-c";
  argv[n++] = cfile;
  argv[n++] = "-o";
  argv[n++] = ofile;
  argv[n] = NULL;
  if (untrusted) {
    kope_tool_run t = {argv, cwd, NULL, timeout, 120, 4096, 256L << 20, "compiler",
                       " (memory or CPU limit)", cwd};
    rc = kope_target_run_tool(&t, log, NULL, secs);
  } else {
    rc = run_cc(argv, cwd, timeout, log, secs);
  }
out:
  free(hold);
  free(cfile);
  free(ofile);
  free(path);
  return rc;
}

typedef struct obj_fill {
  const char *tag, *src, *flags;
} obj_fill;

/* Compile a trusted unit into dir/unit.o (kope_child.h beside it). */
static int fill_obj(kope_target *t, const char *dir, void *ctx, kope_err *err)
{
  static const char *const child_h[] = {"kope_child.h", NULL};
  const obj_fill *f = ctx;
  char *log = NULL;
  int rc = kope_target_write_embedded(dir, child_h, err);

  if (rc == KOPE_OK && compile_obj(dir, "unit", f->src, f->flags, NULL, 0, 120, &log, NULL) != 1)
    rc = kope_err_set(err, KOPE_EENV, "target cpu: cannot build kope's %s object: %s", f->tag,
                      log ? log : "");
  free(log);
  return rc;
}

/* A cached object for trusted source text (runtime, shim): returns its path
 * (caller frees) or NULL with err set. */
static char *cached_obj(kope_target *t, const char *tag, const char *src, const char *flags,
                        kope_err *err)
{
  obj_fill f = {tag, src, flags};
  char what[96], *entry, *dir, *obj = NULL, *blob;
  const char *child_h = kope_embedded_file("kope_child.h", NULL);

  blob = kope_sprintf("%s\n%s\n%s\n%s\n%s", t->compiler, flags, tag, src, child_h);
  entry = kope_target_cache_name(blob, "obj/%s", tag);
  snprintf(what, sizeof what, "kope's %s object", tag);
  if ((dir = kope_target_cached_dir(t, entry, "unit.o", fill_obj, &f, what, err)) &&
      !(obj = kope_path_join(dir, "unit.o")))
    kope_err_nomem(err, "object path");
  free(dir);
  free(entry);
  free(blob);
  return obj;
}

static int link_exe(const char *cwd, const char *exe, const char *kobj, const char *shim,
                    const char *rt, int openmp, const kope_op *op, char **log, double *secs)
{
  const char *argv[32];
  int n = 0;
  size_t i;

  argv[n++] = CPU_CC;
  argv[n++] = "-o";
  argv[n++] = exe;
  argv[n++] = kobj;
  argv[n++] = shim;
  argv[n++] = rt;
  if (openmp)
    argv[n++] = "-fopenmp";
  for (i = 0; op && i < kope_op_vendor_nlibs(op) && n < 28; i++) {
    argv[n++] = kope_op_lib_flag(kope_op_vendor_lib(op, i));
  }
  argv[n++] = "-lm";
  argv[n] = NULL;
  return run_cc(argv, cwd, 120, log, secs);
}

/* The runtime and shim objects every worker of op links. */
static int common_objs(kope_target *t, const kope_op *op, char **rt, char **shim,
                       kope_err *err)
{
  const char *child_c = kope_embedded_file("kope_child.c", NULL);
  char *shim_src = kope_shim_source(op);

  *rt = *shim = NULL;
  if (!shim_src)
    return kope_err_nomem(err, "call shim");
  *rt = cached_obj(t, "runtime", child_c, "-O2", err);
  *shim = *rt ? cached_obj(t, "shim", shim_src, "-O2", err) : NULL;
  free(shim_src);
  return *rt && *shim ? KOPE_OK : KOPE_EENV;
}

/* dir/kope_proto.h with op's prototype: its path (caller frees), NULL when
 * out of memory. */
static char *write_proto(const char *dir, const kope_op *op)
{
  char *proto = kope_op_prototype(op);
  char *text = kope_sprintf("/* Generated by kope: the kernel's required signature. */\n"
                            "#include <stdint.h>\n%s\n", proto);
  char *path = text ? kope_path_join(dir, "kope_proto.h") : NULL;

  if (path)
    kope_file_write_atomic(path, text, strlen(text), NULL);
  free(proto);
  free(text);
  return path;
}

/* Build source in dir: kernel.o, then link dir/worker. */
static int build_in(kope_target *t, const kope_build_req *req, const char *dir,
                    kope_build_out *out, kope_err *err)
{
  char *rt = NULL, *shim = NULL, *log = NULL, *log2 = NULL, *proto, *exe, *obj;
  const char *flags;
  char *fl = NULL;
  int rc, ok;

  if ((rc = common_objs(t, req->op, &rt, &shim, err)) != KOPE_OK)
    goto out;
  if (req->role == KOPE_BUILD_CANDIDATE)
    /* -save-temps=obj keeps kernel.i and kernel.s for the static gate */
    flags = fl = kope_sprintf("%s %s -save-temps=obj", t->default_flags,
                              req->extra_flags ? req->extra_flags : "");
  else
    flags = req->role == KOPE_BUILD_REFERENCE ? CPU_REF_FLAGS : CPU_VENDOR_FLAGS;
  if (!flags || !(proto = write_proto(dir, req->op))) {
    rc = kope_err_nomem(err, "compiler command line");
    goto out;
  }
  ok = compile_obj(dir, "kernel", req->source, flags, proto,
                   req->role == KOPE_BUILD_CANDIDATE, req->timeout_s, &log, &out->seconds);
  free(proto);
  exe = kope_path_join(dir, "worker");
  obj = kope_path_join(dir, "kernel.o");
  if (ok == 1)
    ok = link_exe(dir, exe, obj, shim, rt, req->role != KOPE_BUILD_REFERENCE,
                  req->role == KOPE_BUILD_VENDOR ? req->op : NULL, &log2, &out->seconds);
  if (ok < 0) {
    rc = kope_err_set(err, KOPE_EENV, "target cpu: compiler failed to run: %s", log);
  } else {
    char *all = kope_sprintf("%s%s", log ? log : "", log2 ? log2 : "");
    if (!all || !(out->diagnostics = kope_trim_diagnostics(all, dir, 40)))
      rc = kope_err_nomem(err, "compiler diagnostics");
    free(all);
  }
  out->ok = ok == 1;
  out->exe = exe;
  out->obj = obj;
out:
  free(fl);
  free(rt);
  free(shim);
  free(log);
  free(log2);
  return rc;
}

static int trusted_in(kope_target *t, const kope_build_req *req, const char *dir,
                      kope_build_out *out, kope_err *err, void *ctx)
{
  (void)ctx;
  return build_in(t, req, dir, out, err);
}

/* Trusted builds are cached by the hash of source, shim, runtime, flags and
 * compiler. */
static int build_trusted(kope_target *t, const kope_build_req *req, kope_build_out *out,
                         kope_err *err)
{
  char *blob, *name, *shim = kope_shim_source(req->op);
  int rc;
  size_t i;

  kope_buf libs;
  kope_buf_init(&libs, 0);
  for (i = 0; req->role == KOPE_BUILD_VENDOR && i < kope_op_vendor_nlibs(req->op); i++)
    kope_buf_printf(&libs, "%s ", kope_op_vendor_lib(req->op, i));
  blob = kope_sprintf("%s\n%d\n%s\n%s\n%s\n%s", t->compiler, (int)req->role, libs.data ? libs.data : "",
                      shim, kope_embedded_file("kope_child.c", NULL), req->source);
  name = kope_target_cache_name(blob, "%s-%s", kope_op_name(req->op),
                                req->role == KOPE_BUILD_REFERENCE ? "ref" : "vendor");
  rc = kope_target_cached_build(t, name, trusted_in, req, NULL, out, err);
  kope_buf_release(&libs);
  free(blob);
  free(name);
  free(shim);
  return rc;
}

static int cpu_build(kope_target *t, const kope_build_req *req, kope_build_out *out,
                     kope_err *err)
{
  memset(out, 0, sizeof *out);
  if (req->role == KOPE_BUILD_CANDIDATE)
    return build_in(t, req, req->workdir, out, err);
  return build_trusted(t, req, out, err);
}

/* Debian's OpenBLAS 0.3.21 does not recognise recent CPUs and falls back
 * to its SSE3 kernels (about 4x slower on sgemm); name the best core type
 * this CPU supports so the vendor bar is the real one. */
static const char *openblas_core(void)
{
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "Sandybridge";
  return "Nehalem";
#else
  return "ARMV8";
#endif
}

static void cpu_worker_env(kope_target *t, kope_build_role role, int threads, kope_env *env)
{
  (void)t;
  kope_env_add(env, "OMP_NUM_THREADS=%d", role == KOPE_BUILD_REFERENCE ? 1 : threads);
  kope_env_add(env, "OPENBLAS_NUM_THREADS=%d", threads);
  kope_env_add(env, "OMP_PROC_BIND=false");
  /* the runtime pins its pool, one thread per CPU (kope_child.c) */
  kope_env_add(env, "KOPE_PIN_THREADS=1");
  /* Idle workers must not spin on the cores while another one is timed. */
  kope_env_add(env, "GOMP_SPINCOUNT=10000");
  kope_env_pass(env, "OPENBLAS_L2_SIZE");
  if (getenv("OPENBLAS_CORETYPE"))
    kope_env_pass(env, "OPENBLAS_CORETYPE");
  else if (role == KOPE_BUILD_VENDOR)
    kope_env_add(env, "OPENBLAS_CORETYPE=%s", openblas_core());
}

static char *cpu_describe(kope_target *t, const kope_hw *hw)
{
  kope_buf b;
  char *h = hw ? kope_hw_describe(hw) : NULL;

  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "Target: cpu. Kernels are C11 (GNU dialect) functions compiled with "
                  "`gcc %s` (%s). OpenMP (`#pragma omp parallel for`, `simd`) and x86 "
                  "intrinsics (`#include <immintrin.h>`, guard with `#ifdef __AVX2__` / "
                  "`__AVX512F__`) are available; the kernel runs in its own process.\n",
                  t->default_flags, t->compiler);
  if (h)
    kope_buf_printf(&b, "\n%s\n", h);
  free(h);
  return kope_buf_steal(&b);
}

/* The CPU model, as the hardware profile reads it (detection only). */
static int cpu_device(kope_target *t, char *buf, size_t size, kope_err *err)
{
  kope_hw *hw = kope_hw_detect(err);

  (void)t;
  if (!hw)
    return err->code;
  snprintf(buf, size, "%s", kope_hw_cpu_model(hw));
  kope_hw_free(hw);
  return KOPE_OK;
}

const kope_target_vt kope_target_cpu = {
  .name = "cpu", .language = "C (OpenMP, SIMD intrinsics)", .ext = ".c",
  .allowed_flags = cpu_allowed, .init = cpu_init, .build = cpu_build,
  .worker_env = cpu_worker_env, .describe = cpu_describe, .device = cpu_device,
  .gate = KOPE_TARGET_GATE_C, .gate_artifacts = 1, .vendor = KOPE_OP_VENDOR_C,
  .mem_limited = 1, .worker_fsize = 0, .host_roofline = 1
};
