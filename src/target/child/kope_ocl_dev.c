/*
 * OpenCL device choice and program build for the opencl target's worker
 * and its build-only helper (see kope_ocl.h). Trusted host code, compiled
 * by kope with gcc at run time and linked with -lOpenCL.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope_ocl.h"

const char *kope_ocl_err(cl_int e)
{
  switch (e) {
  case CL_SUCCESS: return "CL_SUCCESS";
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
  case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
  case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
  case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform)";
  default: return "an OpenCL error";
  }
}

int kope_ocl_nplatforms(void)
{
  cl_uint n = 0;

  if (clGetPlatformIDs(0, NULL, &n) != CL_SUCCESS)
    return 0;
  return (int)n;
}

static int ci_contains(const char *hay, const char *needle)
{
  size_t i, j, n = strlen(needle);

  for (i = 0; hay[i]; i++) {
    for (j = 0; j < n && hay[i + j] &&
                tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]); j++)
      ;
    if (j == n)
      return 1;
  }
  return n == 0;
}

/* One device of a walk over every platform: its index among all devices,
 * its platform and that platform's name. */
typedef struct ocl_seen {
  int index;
  cl_platform_id platform;
  const char *pname;
  cl_device_id device;
} ocl_seen;

/* Hand every device of every platform (16 of each at most) to visit until
 * it returns non-zero (*stopped then 1). Returns the number of devices
 * handed over, or -1 when there is no platform. */
static int each_device(int (*visit)(void *ctx, const ocl_seen *s), void *ctx, int *stopped)
{
  cl_platform_id plats[16];
  cl_uint np = 0, p;
  ocl_seen s = {0, 0, NULL, 0};

  *stopped = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
    return -1;
  for (p = 0; p < np && p < 16; p++) {
    cl_device_id devs[16];
    cl_uint nd = 0, k;
    char pname[256] = "";
    clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
      continue;
    s.platform = plats[p];
    s.pname = pname;
    for (k = 0; k < nd && k < 16; k++, s.index++) {
      s.device = devs[k];
      if (visit(ctx, &s)) {
        *stopped = 1;
        return s.index + 1;
      }
    }
  }
  return s.index;
}

typedef struct ocl_want {
  kope_ocl_dev *d;
  const char *want;
  int numeric, target;
} ocl_want;

/* Whether s is the wanted device (then d holds it). */
static int pick_visit(void *ctx, const ocl_seen *s)
{
  ocl_want *w = ctx;
  kope_ocl_dev *d = w->d;
  char dname[120] = "";
  cl_device_type t = 0;

  clGetDeviceInfo(s->device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  snprintf(d->name, sizeof d->name, "%s / %s", s->pname, dname);
  if (!(w->numeric ? s->index == w->target : ci_contains(d->name, w->want)))
    return 0;
  clGetDeviceInfo(s->device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  d->platform = s->platform;
  d->device = s->device;
  d->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
  return 1;
}

/* Find the device that want names; 0 or -1. */
static int pick(kope_ocl_dev *d, const char *want, char *msg, size_t size)
{
  int numeric = want[0] && strspn(want, "0123456789") == strlen(want);
  ocl_want w = {d, want, numeric, numeric ? atoi(want) : -1};
  int stopped, n = each_device(pick_visit, &w, &stopped);

  if (n < 0) {
    snprintf(msg, size, "no OpenCL platform (install an ICD, e.g. pocl-opencl-icd)");
    return -1;
  }
  if (stopped)
    return 0;
  snprintf(msg, size, "no OpenCL device matches '%s' (%d devices; see clinfo -l)", want, n);
  return -1;
}

/* Print one line for s to the FILE ctx. */
static int list_visit(void *ctx, const ocl_seen *s)
{
  char dname[256] = "", ver[256] = "";   /* too small a buffer: the call fails, empty */
  cl_uint cus = 0;

  clGetDeviceInfo(s->device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  clGetDeviceInfo(s->device, CL_DEVICE_VERSION, sizeof ver, ver, NULL);
  clGetDeviceInfo(s->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
  fprintf(ctx, "%d: %s / %s (%s, %u compute units)\n", s->index, s->pname, dname, ver, cus);
  return 0;
}

int kope_ocl_list(FILE *f)
{
  int stopped, n = each_device(list_visit, f, &stopped);

  return n < 0 ? 0 : n;
}

int kope_ocl_open(kope_ocl_dev *d, char *msg, size_t size)
{
  const char *want = getenv("KOPE_OCL_DEVICE") ? getenv("KOPE_OCL_DEVICE")
                                                : getenv("KOPE_DEVICE");
  cl_int e;

  memset(d, 0, sizeof *d);
  if (!getenv("POCL_CACHE_DIR")) {
    char cwd[4096], dir[4200];
    if (getcwd(cwd, sizeof cwd)) {
      snprintf(dir, sizeof dir, "%s/pocl-cache", cwd);
      setenv("POCL_CACHE_DIR", dir, 1);
    }
  }
  if (pick(d, want ? want : "", msg, size) != 0)
    return -1;
  d->ctx = clCreateContext(NULL, 1, &d->device, NULL, NULL, &e);
  if (!d->ctx) {
    snprintf(msg, size, "clCreateContext on %s: %s", d->name, kope_ocl_err(e));
    return -1;
  }
  d->queue = clCreateCommandQueue(d->ctx, d->device, CL_QUEUE_PROFILING_ENABLE, &e);
  if (!d->queue) {
    snprintf(msg, size, "clCreateCommandQueue on %s: %s", d->name, kope_ocl_err(e));
    return -1;
  }
  return 0;
}

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long n;

  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) != NULL) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = '\0';
    }
  }
  fclose(f);
  return buf;
}

static char *build_log(kope_ocl_dev *d, cl_program prog)
{
  size_t n = 0;
  char *log;

  if (clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS)
    n = 0;
  log = malloc(n + 1);
  if (!log)
    return NULL;
  log[0] = '\0';
  if (n && clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS)
    log[n] = '\0';
  return log;
}

int kope_ocl_build(kope_ocl_dev *d, const char *path, cl_program *prog, char **log,
                   char *msg, size_t size)
{
  char *src = read_text(path);
  const char *srcs[1];
  cl_int e;
  int rc = 0;

  *log = NULL;
  *prog = NULL;
  if (!src) {
    snprintf(msg, size, "cannot read %s", path);
    return -1;
  }
  srcs[0] = src;
  *prog = clCreateProgramWithSource(d->ctx, 1, srcs, NULL, &e);
  if (!*prog) {
    snprintf(msg, size, "clCreateProgramWithSource: %s", kope_ocl_err(e));
    rc = -1;
    goto out;
  }
  e = clBuildProgram(*prog, 1, &d->device, "-cl-std=CL1.2", NULL, NULL);
  *log = build_log(d, *prog);
  if (e == CL_BUILD_PROGRAM_FAILURE || e == CL_INVALID_BUILD_OPTIONS ||
      e == CL_COMPILER_NOT_AVAILABLE) {
    rc = 1;
  } else if (e != CL_SUCCESS) {
    snprintf(msg, size, "clBuildProgram: %s", kope_ocl_err(e));
    rc = -1;
  }
out:
  free(src);
  return rc;
}

/* Is fn the kernel name, plain or as a runtime renames a kernel named like
 * an OpenCL built-in such as clamp (PoCL: "_cl_clamp"; mangled "_Z5clamp...")? */
static int same_name(const char *fn, const char *name)
{
  char prefix[160];

  if (!strcmp(fn, name) || (!strncmp(fn, "_cl_", 4) && !strcmp(fn + 4, name)))
    return 1;
  snprintf(prefix, sizeof prefix, "_Z%zu%s", strlen(name), name);
  return !strncmp(fn, prefix, strlen(prefix));
}

int kope_ocl_kernel(cl_program prog, const char *name, cl_kernel *kern, char *msg, size_t size)
{
  cl_kernel ks[8];
  cl_uint n = 0, i;
  char fn[160];
  cl_int e;

  *kern = NULL;
  e = clCreateKernelsInProgram(prog, 8, ks, &n);
  if (e != CL_SUCCESS) {
    snprintf(msg, size, "clCreateKernelsInProgram: %s", kope_ocl_err(e));
    return -1;
  }
  for (i = 0; i < n; i++) {
    fn[0] = '\0';
    clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof fn, fn, NULL);
    if (n == 1 && same_name(fn, name))
      *kern = ks[i];
    else
      clReleaseKernel(ks[i]);
  }
  if (n != 1)
    snprintf(msg, size, "the program defines %u kernels; exactly one (%s) is allowed", n, name);
  else if (!*kern)
    snprintf(msg, size, "no kernel named '%s' (the kernel is '%s')", name, fn);
  return *kern ? 0 : -1;
}
