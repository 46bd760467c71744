/*
 * The CUDA target: kernels in CUDA C++ (one __global__ kernel named after
 * the operator, launch geometry declared on a `// @launch grid=.. block=..`
 * line) built with nvcc. A worker program is one translation unit, the
 * generated host shim (cuda_shim.c, with the embedded CUDA runtime
 * kope_cuda_rt.h) followed by the candidate's text, linked with the
 * embedded child runtime (compiled once by gcc and cached) and the static
 * CUDA runtime library.
 *
 * Why one translation unit with the candidate at the END: the shim is
 * compiled before any of the candidate's text exists for the compiler, so
 * no macro, overload or declaration of the candidate can change it; the
 * shim's forward declaration `extern "C" __global__ void OP(...)` makes a
 * kernel with another signature a compile error; and no relocatable device
 * code (-rdc) is needed, so the kernel is compiled exactly as it would be
 * alone.
 *
 * The GPU architectures: kope_target_opts.cuda_arch, else $KOPE_CUDA_ARCH
 * (e.g. "sm_90" or "80,90"; the CLI's --cuda-arch sets the option), default SASS for sm_80 and sm_90 plus PTX of
 * sm_90 so newer GPUs can JIT. The trusted C reference stays the judge:
 * reference builds are delegated to the cpu target. Running anything needs
 * a device: kope_cuda_device_check runs a small probe program (built once,
 * cached) and reports "no CUDA device" with the CUDA error otherwise.
 *
 * The vendor baseline (op.json "vendor_cuda": host code calling cuBLAS or
 * cuDNN on device pointers) is trusted: no gate, nvcc compiles vendor.cu
 * with the operator's C prototype force-included and a generated shim
 * (cuda_shim.c) that gives it the candidate's device hooks, copies, L2
 * flush and event timing; the worker links -lcublas / -lcudnn and is
 * cached by content hash under <kope_home>/cache/build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/cuda_int.h"

#define CUDA_STD "-std=c++17"
#define CUDA_DEFAULT_ARCH "80,90"

static const char *const cuda_allowed[] = {
  "-O1", "-O2", "-O3", "--use_fast_math", "-use_fast_math", "--ftz=*", "--prec-div=*",
  "--prec-sqrt=*", "--fmad=*", "--extra-device-vectorization", "-Xptxas=-O*",
  "--maxrregcount=*", "-maxrregcount=*", "-lineinfo", NULL
};

/* $KOPE_NVCC, $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, then PATH. */
static int find_nvcc(char *out, size_t size)
{
  const char *env = getenv("KOPE_NVCC"), *home = getenv("CUDA_HOME");
  const char *path = getenv("PATH");
  char buf[512];

  if (env && *env) {
    snprintf(out, size, "%s", env);
    return access(out, X_OK) == 0;
  }
  if (home && *home) {
    snprintf(out, size, "%s/bin/nvcc", home);
    if (access(out, X_OK) == 0)
      return 1;
  }
  snprintf(out, size, "/usr/local/cuda/bin/nvcc");
  if (access(out, X_OK) == 0)
    return 1;
  while (path && *path) {
    size_t n = strcspn(path, ":");
    snprintf(buf, sizeof buf, "%.*s/nvcc", (int)n, path);
    if (n && access(buf, X_OK) == 0) {
      snprintf(out, size, "%s", buf);
      return 1;
    }
    path += n + (path[n] == ':');
  }
  return 0;
}

static char nvcc_path[512];

static int cuda_init(kope_target *t, kope_err *err)
{
  char cmd[600], line[256] = "", last[256] = "";
  FILE *p;

  if (!find_nvcc(nvcc_path, sizeof nvcc_path))
    return kope_err_set(err, KOPE_EENV, "target cuda: nvcc not found (set KOPE_NVCC or "
                        "CUDA_HOME, or install the CUDA toolkit under /usr/local/cuda)");
  snprintf(cmd, sizeof cmd, "'%s' --version 2>/dev/null", nvcc_path);
  if (!(p = popen(cmd, "r")))
    return kope_err_set(err, KOPE_EENV, "target cuda: cannot run %s", nvcc_path);
  while (fgets(line, sizeof line, p))
    if (strstr(line, "release"))
      snprintf(last, sizeof last, "%s", line);
  pclose(p);
  if (!*last)
    return kope_err_set(err, KOPE_EENV, "target cuda: '%s --version' failed", nvcc_path);
  last[strcspn(last, "\n")] = '\0';
  snprintf(t->compiler, sizeof t->compiler, "nvcc: %.*s", (int)sizeof t->compiler - 7, last);
  snprintf(t->default_flags, sizeof t->default_flags, "-O3 " CUDA_STD);
  return KOPE_OK;
}

/* -gencode flags for the target's architectures (caller frees). SASS for each, PTX
 * for the last. */
static char *gencode_flags(const kope_target *t)
{
  char *list = kope_strdup(t->cuda_arch ? t->cuda_arch : CUDA_DEFAULT_ARCH), *tok, *save = NULL;
  char last[16] = "";
  kope_buf b;

  if (!list)
    return NULL;
  kope_buf_init(&b, 0);
  for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    const char *num = !strncmp(tok, "sm_", 3) || !strncmp(tok, "compute_", 8)
                          ? strchr(tok, '_') + 1 : tok;
    if (strspn(num, "0123456789af") != strlen(num) || !*num || strlen(num) > 6) {
      kope_buf_printf(&b, "--gpu-architecture=%.32s ", tok);   /* nvcc says what is wrong */
      continue;
    }
    kope_buf_printf(&b, "-gencode=arch=compute_%s,code=sm_%s ", num, num);
    snprintf(last, sizeof last, "%s", num);
  }
  if (!*last) {
    kope_buf_puts(&b, "-gencode=arch=compute_90,code=sm_90 ");
    snprintf(last, sizeof last, "90");
  }
  kope_buf_printf(&b, "-gencode=arch=compute_%s,code=compute_%s", last, last);
  free(list);
  return kope_buf_steal(&b);
}

/* Run a tool in cwd; 1 succeeded, 0 failed (log says why), -1 could not run. */
static int run_tool(const char **argv, const char *cwd, double timeout, char **log, double *secs)
{
  kope_tool_run t = {argv, cwd, NULL, timeout, 180, 0, 512L << 20, "compiler", NULL, NULL};

  return kope_target_run_tool(&t, log, NULL, secs);
}

/* The headers every nvcc build includes, written beside its sources. */
static const char *const cuda_headers[] = {"kope_child.h", "kope_cuda_rt.h", NULL};

/* dir/name with text; a NULL text (a copy that failed) is KOPE_ENOMEM. */
static int write_text(const char *dir, const char *name, const char *text, kope_err *err)
{
  char *path = text ? kope_path_join(dir, name) : NULL;
  int rc = text ? kope_file_write_atomic(path, text, strlen(text), err)
                : kope_err_nomem(err, name);

  free(path);
  return rc;
}

/* gcc: the child runtime into dir/unit.o. */
static int fill_runtime(kope_target *t, const char *dir, void *ctx, kope_err *err)
{
  static const char *const files[] = {"kope_child.c", "kope_child.h", NULL};
  const char *argv[] = {"gcc", "-std=gnu11", "-O2", "-Wall", "-c", "kope_child.c", "-o",
                        "unit.o", NULL};
  char *log = NULL;
  int rc;

  if ((rc = kope_target_write_embedded(dir, files, err)) == KOPE_OK &&
      run_tool(argv, dir, 120, &log, NULL) != 1)
    rc = kope_err_set(err, KOPE_EENV, "target cuda: cannot build kope's child runtime: %s", log);
  free(log);
  return rc;
}

/* The path of the cached file marker of entry, filled by fill (caller
 * frees), or NULL with err. */
static char *cached_file(kope_target *t, const char *entry, const char *marker,
                         kope_cache_fill_fn fill, kope_err *err)
{
  char *dir, *path = NULL;

  if ((dir = kope_target_cached_dir(t, entry, marker, fill, NULL, marker, err)) &&
      !(path = kope_path_join(dir, marker)))
    kope_err_nomem(err, "cache path");
  free(dir);
  return path;
}

/* The child runtime compiled by gcc, cached by content (caller frees). */
static char *runtime_obj(kope_target *t, kope_err *err)
{
  const char *c = kope_embedded_file("kope_child.c", NULL), *h = kope_embedded_file("kope_child.h", NULL);
  char *blob = kope_sprintf("cuda-runtime\n%s\n%s", c, h), *entry, *obj;

  entry = kope_target_cache_name(blob, "obj/cuda-runtime");
  obj = cached_file(t, entry, "unit.o", fill_runtime, err);
  free(entry);
  free(blob);
  return obj;
}

/* nvcc: compile kope_main.cu to kernel.o, then link dir/worker. */
static int nvcc_build(kope_target *t, const kope_build_req *req, const char *dir,
                      const char *rt, kope_build_out *out, char **log)
{
  const char *argv[64];
  char *gen = gencode_flags(t), *h1 = NULL, *h2 = NULL, *h3 = NULL, *log2 = NULL;
  int n = 0, ok;

  argv[n++] = nvcc_path;
  if (!gen || kope_target_add_flags(argv, &n, 40, t->default_flags, &h1) ||
      kope_target_add_flags(argv, &n, 48, req->extra_flags, &h2) ||
      kope_target_add_flags(argv, &n, 56, gen, &h3)) {
    *log = kope_strdup("out of memory (nvcc command line)");
    ok = -1;
    goto out;
  }
  argv[n++] = "-c";
  argv[n++] = "kope_main.cu";
  argv[n++] = "-o";
  argv[n++] = "kernel.o";
  argv[n] = NULL;
  ok = run_tool(argv, dir, req->timeout_s, log, &out->seconds);
  if (ok == 1) {
    const char *largv[] = {nvcc_path, "-o", "worker", "kernel.o", rt, "-cudart", "static",
                           NULL};
    ok = run_tool(largv, dir, 120, &log2, &out->seconds);
    if (log2 && *log2) {
      char *all = kope_sprintf("%s%s", *log, log2);
      free(*log);
      *log = all;
    }
  }
out:
  free(gen);
  free(h1);
  free(h2);
  free(h3);
  free(log2);
  return ok;
}

/* A kernel with another signature is another C++ overload: the link
 * then misses the declared kernel. Say so first. */
static void explain_link(const kope_op *op, const char *log, char **diag)
{
  char *want = kope_sprintf("undefined reference to `%s'", kope_op_name(op)), *decl, *d;

  if (log && strstr(log, want)) {
    decl = kope_cuda_kernel_decl(op);
    d = kope_sprintf("kernel.cu: error: the kernel's signature does not match the operator's; "
                     "expected: %s\n%s", decl, *diag);
    free(*diag);
    *diag = d;
    free(decl);
  }
  free(want);
}

/* out from an nvcc run: ok 1 built, 0 failed (the trimmed log says why;
 * the whole log when trimming kept nothing, e.g. "nvcc fatal : ..."), -1
 * nvcc could not run (KOPE_EENV). */
static int nvcc_outcome(int ok, const char *log, const char *dir, kope_build_out *out,
                        kope_err *err)
{
  if (ok < 0)
    return kope_err_set(err, KOPE_EENV, "target cuda: nvcc failed to run: %s", log);
  out->ok = ok == 1;
  if (!(out->diagnostics = kope_trim_diagnostics(log, dir, 40)))
    return kope_err_nomem(err, "nvcc diagnostics");
  if (!out->ok && !*out->diagnostics) {
    free(out->diagnostics);
    out->diagnostics = kope_sprintf("error: %.2000s", log ? log : "nvcc failed");
  }
  return KOPE_OK;
}

/* dir/kernel.cu (the candidate) and dir/kope_main.cu (the call shim, then
 * the candidate), with the runtime headers beside them. */
static int write_candidate(const char *dir, const kope_build_req *req, const char *shim,
                           kope_err *err)
{
  char *main_src = kope_sprintf("%s%s\n", shim, req->source);
  int rc;

  if (!(rc = write_text(dir, "kernel.cu", req->source, err)) &&
      !(rc = write_text(dir, "kope_main.cu", main_src, err)))
    rc = kope_target_write_embedded(dir, cuda_headers, err);
  free(main_src);
  return rc;
}

static int build_candidate(kope_target *t, const kope_build_req *req, kope_build_out *out,
                           kope_err *err)
{
  const char *dir = req->workdir;
  char *rt = NULL, *shim = NULL, *log = NULL;
  kope_err lerr;
  int rc = KOPE_OK, ok;

  out->exe = kope_path_join(dir, "worker");
  out->obj = kope_path_join(dir, "kernel.o");
  if (!(rt = runtime_obj(t, err)))
    return KOPE_EENV;
  kope_err_clear(&lerr);
  if (!(shim = kope_cuda_shim_source(req->op, req->source, &lerr))) {
    out->diagnostics = kope_sprintf("kernel.cu: error: %s\n", lerr.msg);
    goto out;
  }
  if ((rc = write_candidate(dir, req, shim, err)))
    goto out;
  ok = nvcc_build(t, req, dir, rt, out, &log);
  if ((rc = nvcc_outcome(ok, log, dir, out, err)) == KOPE_OK && !out->ok)
    explain_link(req->op, log, &out->diagnostics);
out:
  if (!out->diagnostics)
    out->diagnostics = kope_strdup("");
  free(rt);
  free(shim);
  free(log);
  return rc;
}

/* The trusted C reference is the judge on every target: the cpu target
 * builds it. */
static int build_reference(kope_target *t, const kope_build_req *req, kope_build_out *out,
                           kope_err *err)
{
  kope_target cpu = *t;
  int rc;

  cpu.vt = &kope_target_cpu;
  if ((rc = kope_target_cpu.init(&cpu, err)) != KOPE_OK)
    return rc;
  return kope_target_cpu.build(&cpu, req, out, err);
}

/* ---- the vendor baseline (vendor_cuda) ---- */

/* *log gets *part appended; *part is freed. */
static void append_log(char **log, char **part)
{
  char *all = kope_sprintf("%s%s", *log ? *log : "", *part ? *part : "");

  free(*log);
  free(*part);
  *log = all;
  *part = NULL;
}

/* nvcc in dir: vendor.cu (the operator's prototype force-included, so a
 * definition with another signature is a compile error) and the vendor
 * shim, linked with the child runtime, the static CUDA runtime and the
 * baseline's libraries. 1 built, 0 failed (log), -1 could not run. */
static int vendor_nvcc(kope_target *t, const kope_op_vendor *v, const char *dir,
                       const char *rt, double timeout, char **log, double *secs)
{
  const char *argv[64], *const objs[2] = {"vendor.o", "shim.o"};
  const char *const srcs[2] = {"vendor.cu", "kope_main.cu"};
  char *gen = gencode_flags(t), *h1 = NULL, *h2 = NULL, *part = NULL;
  int n, i, ok = 1;
  size_t k;

  for (i = 0; i < 2 && ok == 1; i++) {
    n = 0;
    argv[n++] = nvcc_path;
    if (!gen || kope_target_add_flags(argv, &n, 40, t->default_flags, &h1) ||
        kope_target_add_flags(argv, &n, 56, gen, &h2)) {
      free(h1);
      part = kope_strdup("out of memory (nvcc command line)");
      append_log(log, &part);
      ok = -1;
      break;
    }
    if (i == 0) {
      argv[n++] = "-include";
      argv[n++] = "kope_proto.h";
    }
    argv[n++] = "-c";
    argv[n++] = srcs[i];
    argv[n++] = "-o";
    argv[n++] = objs[i];
    argv[n] = NULL;
    ok = run_tool(argv, dir, timeout, &part, secs);
    append_log(log, &part);
    free(h1);
    free(h2);
    h1 = h2 = NULL;
  }
  if (ok == 1) {
    n = 0;
    argv[n++] = nvcc_path;
    argv[n++] = "-o";
    argv[n++] = "worker";
    argv[n++] = "shim.o";
    argv[n++] = "vendor.o";
    argv[n++] = rt;
    argv[n++] = "-cudart";
    argv[n++] = "static";
    for (k = 0; k < v->nlibs && n < 60; k++)
      argv[n++] = kope_op_vendor_lib_flag(KOPE_OP_VENDOR_CUDA, v->libs[k]);
    argv[n] = NULL;
    ok = run_tool(argv, dir, 120, &part, secs);
    append_log(log, &part);
  }
  free(gen);
  return ok;
}

/* dir/kope_proto.h: the vendor baseline's required signature (C linkage). */
static int write_vendor_proto(const char *dir, const kope_op *op, kope_err *err)
{
  char *proto = kope_op_prototype(op);
  char *text = proto ? kope_sprintf("/* Generated by kope: the vendor baseline's required "
                                    "signature. */\n#include <stdint.h>\nextern \"C\" %s\n",
                                    proto)
                     : NULL;
  int rc = write_text(dir, "kope_proto.h", text, err);

  free(proto);
  free(text);
  return rc;
}

/* Write the vendor's sources into dir and build them there. */
static int vendor_build_in(kope_target *t, const kope_build_req *req, const char *dir,
                           kope_build_out *out, kope_err *err, void *shim)
{
  const kope_op_vendor *v = kope_op_vendor_for(req->op, KOPE_OP_VENDOR_CUDA);
  char *rt, *log = NULL;
  int rc, ok;

  if (!(rt = runtime_obj(t, err)))
    return KOPE_EENV;
  if (!(rc = write_text(dir, "vendor.cu", req->source, err)) &&
      !(rc = write_vendor_proto(dir, req->op, err)) &&
      !(rc = write_text(dir, "kope_main.cu", shim, err)) &&
      !(rc = kope_target_write_embedded(dir, cuda_headers, err))) {
    ok = vendor_nvcc(t, v, dir, rt, req->timeout_s, &log, &out->seconds);
    rc = nvcc_outcome(ok, log, dir, out, err);   /* log is set by vendor_nvcc */
  }
  free(rt);
  free(log);
  return rc;
}

/* The vendor baseline is trusted (no gate) and cached like the cpu
 * target's trusted builds: by the hash of compiler, architectures,
 * libraries, shim, runtime and source. */
static int build_vendor(kope_target *t, const kope_build_req *req, kope_build_out *out,
                        kope_err *err)
{
  const kope_op_vendor *v = kope_op_vendor_for(req->op, KOPE_OP_VENDOR_CUDA);
  char *shim, *gen, *name;
  kope_buf blob;
  size_t i;
  int rc;

  if (!v)
    return kope_err_set(err, KOPE_EINPUT, "target cuda: operator %s has no CUDA vendor "
                        "baseline (vendor_cuda in op.json)", kope_op_name(req->op));
  shim = kope_cuda_vendor_shim_source(req->op);
  gen = gencode_flags(t);
  kope_buf_init(&blob, 0);
  kope_buf_printf(&blob, "cuda-vendor\n%s\n%s\n%s\n", t->compiler, t->default_flags, gen);
  for (i = 0; i < v->nlibs; i++)
    kope_buf_printf(&blob, "%s ", v->libs[i]);
  kope_buf_printf(&blob, "\n%s\n%s\n%s\n%s\n%s", shim, kope_embedded_file("kope_child.c", NULL),
                  kope_embedded_file("kope_child.h", NULL),
                  kope_embedded_file("kope_cuda_rt.h", NULL), req->source);
  name = gen && shim ? kope_target_cache_name(blob.data, "%s-cuvendor", kope_op_name(req->op))
                     : NULL;
  kope_buf_release(&blob);
  free(gen);
  rc = kope_target_cached_build(t, name, vendor_build_in, req, shim, out, err);
  free(name);
  free(shim);
  return rc;
}

static int cuda_build(kope_target *t, const kope_build_req *req, kope_build_out *out,
                      kope_err *err)
{
  memset(out, 0, sizeof *out);
  if (req->role == KOPE_BUILD_CANDIDATE)
    return build_candidate(t, req, out, err);
  if (req->role == KOPE_BUILD_REFERENCE)
    return build_reference(t, req, out, err);
  return build_vendor(t, req, out, err);
}

static void cuda_worker_env(kope_target *t, kope_build_role role, int threads, kope_env *env)
{
  if (role == KOPE_BUILD_REFERENCE) {
    kope_target_cpu.worker_env(t, role, threads, env);
    return;
  }
  kope_env_pass(env, "KOPE_CUDA_DEVICE");
  kope_env_pass(env, "CUDA_VISIBLE_DEVICES");
  /* a candidate: every module is loaded when the context is created,
   * before the seal. The vendor worker is trusted and not sealed: cuBLAS
   * and cuDNN keep loading their many kernels lazily. No JIT cache is
   * written by either. */
  if (role == KOPE_BUILD_CANDIDATE)
    kope_env_add(env, "CUDA_MODULE_LOADING=EAGER");
  kope_env_add(env, "CUDA_CACHE_DISABLE=1");
}

static char *cuda_describe(kope_target *t, const kope_hw *hw)
{
  char *gen = gencode_flags(t);
  char *s = kope_sprintf(
      "Target: cuda. A kernel is CUDA C++ compiled with `nvcc %s %s` (%s): exactly one "
      "`__global__` kernel named after the operator (inputs `const T *__restrict__`, outputs "
      "`T *`, dims `long long`), `__device__` helpers allowed, no host code, no #include. The "
      "launch is declared, not coded: `// @launch grid=E[,E[,E]] block=E[,E[,E]] [shared=E]` "
      "with integer expressions over the dims, integer params and knob macros (+ - * / %% "
      "min max cdiv rup). kope copies the inputs to the GPU, flushes L2, launches once, "
      "synchronizes and copies the outputs back; the device time comes from CUDA events.\n",
      t->default_flags, gen, t->compiler);

  (void)hw;
  free(gen);
  return s;
}

/* The GPU kernels run on: the device probe's "NAME (sm_XY)". */
static int cuda_device(kope_target *t, char *buf, size_t size, kope_err *err)
{
  return kope_cuda_device_check(t, buf, size, err);
}

static int cuda_check_device(kope_target *t, kope_err *err)
{
  return kope_cuda_device_check(t, NULL, 0, err);
}

/* No address-space limit on workers: the CUDA driver reserves virtual
 * address space for all of the GPU's memory and more, and context creation
 * fails under one. No roofline: the hardware profile is the CPU's. */
const kope_target_vt kope_target_cuda = {
  .name = "cuda", .language = "CUDA C++", .ext = ".cu", .allowed_flags = cuda_allowed,
  .init = cuda_init, .build = cuda_build, .worker_env = cuda_worker_env,
  .describe = cuda_describe, .device = cuda_device, .check_device = cuda_check_device,
  .gate = KOPE_TARGET_GATE_CUDA, .vendor = KOPE_OP_VENDOR_CUDA, .build_only_vendor = 1,
  .mem_limited = 0, .worker_fsize = 256L << 20, .host_roofline = 0
};

/* ---- the device probe ---- */

static const char probe_src[] =
  "#include <stdio.h>\n#include <cuda_runtime.h>\n"
  "int main(void)\n{\n  int n = 0;\n  cudaError_t e = cudaGetDeviceCount(&n);\n"
  "  printf(\"%d\\n%s: %s\\n\", e == cudaSuccess ? n : 0, cudaGetErrorName(e),\n"
  "         cudaGetErrorString(e));\n"
  "  if (e == cudaSuccess && n > 0) {\n    struct cudaDeviceProp p;\n"
  "    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)\n"
  "      printf(\"%s (sm_%d%d)\\n\", p.name, p.major, p.minor);\n  }\n  return 0;\n}\n";

/* nvcc: the probe program into dir/probe. */
static int fill_probe(kope_target *t, const char *dir, void *ctx, kope_err *err)
{
  const char *argv[] = {nvcc_path, "-o", "probe", "probe.cu", "-cudart", "static", NULL};
  char *log = NULL;
  int rc = write_text(dir, "probe.cu", probe_src, err);

  if (rc == KOPE_OK && run_tool(argv, dir, 180, &log, NULL) != 1)
    rc = kope_err_set(err, KOPE_EENV, "target cuda: cannot build the device probe: %s", log);
  free(log);
  return rc;
}

/* The probe program, built once and cached (caller frees). */
static char *probe_exe(kope_target *t, kope_err *err)
{
  char *blob = kope_sprintf("%s\n%s", t->compiler, probe_src), *entry, *exe;

  entry = kope_target_cache_name(blob, "build/cuda-probe");
  exe = cached_file(t, entry, "probe", fill_probe, err);
  free(entry);
  free(blob);
  return exe;
}

int kope_cuda_device_check(kope_target *t, char *desc, size_t size, kope_err *err)
{
  static char found[160];   /* a device seen by this process: not probed again */
  char *exe, *log = NULL, *l2, *l3;
  const char *argv[2];
  int ok, rc = KOPE_OK;

  if (*found) {
    if (desc)
      snprintf(desc, size, "%s", found);
    return KOPE_OK;
  }
  if (!(exe = probe_exe(t, err)))
    return KOPE_EENV;
  argv[0] = exe;
  argv[1] = NULL;
  ok = run_tool(argv, NULL, 60, &log, NULL);
  if (ok < 0 || !log)
    rc = kope_err_set(err, KOPE_EENV, "target cuda: cannot run the device probe: %s",
                      log ? log : "");
  else if (ok == 0 || atoi(log) <= 0) {
    l2 = strchr(log, '\n');
    l2 = l2 ? l2 + 1 : log;
    l2[strcspn(l2, "\n")] = '\0';
    rc = kope_err_set(err, KOPE_EENV, "target cuda: no CUDA device (cudaGetDeviceCount: %s)",
                      *l2 ? l2 : "the probe failed");
  } else {
    l2 = strchr(log, '\n');
    l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
    snprintf(found, sizeof found, "%s", l3 && l3[1] ? l3 + 1 : "CUDA device 0");
    found[strcspn(found, "\n")] = '\0';
    if (desc)
      snprintf(desc, size, "%s", found);
  }
  free(log);
  free(exe);
  return rc;
}
