/*
 * The OpenCL host side of an opencl worker: the device hooks of the child
 * runtime (kope_child.h) and the per-call launch (kope_child_invoke).
 *
 * At every MAP (kope_child_dev_map) the case's launch geometry and buffer
 * sizes are evaluated from the command's dims with kope's expression
 * evaluator (the expressions come from the trusted spec kope generated,
 * kope_ocl_op). The first MAP opens the device, builds kernel.cl (from
 * PoCL's per-run cache, filled by the build-only helper) and runs one
 * warm-up launch, so the runtime has compiled and loaded everything before
 * the child runtime installs the seal. Each kernel call sets the
 * arguments and enqueues the one NDRange; a CALL's launches run in order
 * and are all finished (clFinish) in kope_child_dev_done, before the
 * runtime replies; their profiled times add up to the CALL's device_ns.
 *
 * Buffers: on a CPU device they are created over the shared regions
 * (CL_MEM_USE_HOST_PTR: no copy on PoCL; inputs read-only, so a write
 * faults); on other devices device buffers are filled from the regions
 * before each call and the outputs copied back after it. Either way they
 * are cached per (address, size) until the next MAP.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"
#include "kope_ocl.h"

#define MAX_BUFS 256
#define MAX_PEND 64   /* launches in flight before kope waits for them */

typedef struct buf_ent {
  void *ptr;
  size_t size;
  cl_mem mem;
} buf_ent;

static kope_ocl_dev dev;
static cl_program prog;
static cl_kernel kern;
static int opened, warmed;
static buf_ent bufs[MAX_BUFS];
static int nbufs;
static size_t gsize[3], lsize[3], bytes[KOPE_CHILD_MAX_ARGS];
static cl_uint work_dim;
static uint64_t dev_ns;
static cl_event pend[MAX_PEND];
static int npend;

static void settle(void);
static char err_msg[112];

static void set_err(const char *fmt, const char *a, const char *b)
{
  if (!err_msg[0])
    snprintf(err_msg, sizeof err_msg, fmt, a, b);
}

typedef struct scope {
  const kope_child_cmd *c;
} scope;

static int lookup(void *ctx, const char *name, int64_t *v)
{
  const scope *s = ctx;
  int i;

  for (i = 0; i < kope_ocl_op.nargs; i++)
    if (kope_ocl_op.arg[i].kind == KOPE_ARGK_SCALAR && !strcmp(kope_ocl_op.arg[i].name, name)) {
      *v = s->c->ival[i];
      return 0;
    }
  for (i = 0; i < kope_ocl_op.nknobs; i++)
    if (!strcmp(kope_ocl_op.knob[i], name)) {
      *v = kope_ocl_op.knob_val[i];
      return 0;
    }
  return -1;
}

static int eval(const scope *s, const char *e, int64_t *v, char *msg, unsigned size)
{
  char m[160];

  if (kope_expr_eval(e, lookup, (void *)s, v, m, sizeof m) == 0)
    return 0;
  snprintf(msg, size, "launch: %s", m);
  return -1;
}

/* Geometry and buffer sizes of the case in c. */
static int geometry(const kope_child_cmd *c, char *msg, unsigned size)
{
  scope s = {c};
  int64_t v;
  int i, k;

  work_dim = (cl_uint)kope_ocl_op.nglobal;
  for (i = 0; i < 3; i++)
    gsize[i] = lsize[i] = 1;
  for (i = 0; i < kope_ocl_op.nglobal; i++) {
    if (eval(&s, kope_ocl_op.global[i], &v, msg, size))
      return -1;
    gsize[i] = v > 0 ? (size_t)v : 0;
  }
  for (i = 0; i < kope_ocl_op.nlocal; i++) {
    if (eval(&s, kope_ocl_op.local[i], &v, msg, size))
      return -1;
    if (v <= 0) {
      snprintf(msg, size, "launch: local size %lld in dimension %d", (long long)v, i);
      return -1;
    }
    lsize[i] = (size_t)v;
  }
  for (i = 0; i < kope_ocl_op.nargs; i++) {
    const kope_ocl_arg *a = &kope_ocl_op.arg[i];
    int64_t n = 1;
    for (k = 0; a->kind != KOPE_ARGK_SCALAR && k < a->rank; k++) {
      if (eval(&s, a->shape[k], &v, msg, size))
        return -1;
      n *= v;
    }
    bytes[i] = a->kind == KOPE_ARGK_SCALAR ? 0 : (size_t)n * a->elem_size;
  }
  return 0;
}

static void drop_bufs(void)
{
  int i;

  for (i = 0; i < nbufs; i++)
    clReleaseMemObject(bufs[i].mem);
  nbufs = 0;
}

/* The buffer over ptr (size bytes), created on first use. */
static cl_mem buffer(void *ptr, size_t size, int input)
{
  cl_mem_flags fl = input ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
  cl_int e;
  int i;

  for (i = 0; i < nbufs; i++)
    if (bufs[i].ptr == ptr && bufs[i].size == size)
      return bufs[i].mem;
  if (nbufs == MAX_BUFS)
    drop_bufs();
  if (dev.is_cpu)
    fl |= CL_MEM_USE_HOST_PTR;
  bufs[nbufs].mem = clCreateBuffer(dev.ctx, fl, size, dev.is_cpu ? ptr : NULL, &e);
  if (!bufs[nbufs].mem) {
    set_err("clCreateBuffer: %s%s", kope_ocl_err(e), "");
    return NULL;
  }
  bufs[nbufs].ptr = ptr;
  bufs[nbufs].size = size;
  return bufs[nbufs++].mem;
}

static int open_device(char *msg, unsigned size)
{
  char *log = NULL;
  int rc;

  if (kope_ocl_open(&dev, msg, size) != 0)
    return -1;
  rc = kope_ocl_build(&dev, KOPE_OCL_KERNEL_FILE, &prog, &log, msg, size);
  if (rc > 0)
    snprintf(msg, size, "the kernel does not build: %.80s", log ? log : "");
  free(log);
  if (rc != 0)
    return -1;
  if (kope_ocl_kernel(prog, kope_ocl_op.kernel, &kern, msg, size) != 0)
    return -1;
  opened = 1;
  return 0;
}

int kope_child_dev_map(const kope_child_cmd *c, const unsigned char *in, unsigned char *out,
                       char *msg, unsigned size)
{
  kope_child_args a;
  uint32_t i;

  if (!opened && open_device(msg, size) != 0)
    return -1;
  settle();
  drop_bufs();
  if (geometry(c, msg, size) != 0)
    return -1;
  if (warmed)
    return 0;
  /* one launch before the seal: the runtime compiles and loads the
   * kernel's code now, while it may still write files and map code */
  memset(&a, 0, sizeof a);
  for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++) {
    if (c->argk[i] == KOPE_ARGK_IN)
      a.ptr[i] = (void *)(in + c->off[i]);
    else if (c->argk[i] == KOPE_ARGK_OUT)
      a.ptr[i] = out + c->off[i];
    a.ival[i] = c->ival[i];
    a.fval[i] = c->fval[i];
  }
  kope_child_invoke(&a);
  settle();
  warmed = 1;
  dev_ns = 0;
  if (err_msg[0]) {
    snprintf(msg, size, "warm-up launch: %s", err_msg);
    err_msg[0] = '\0';
    return -1;
  }
  return 0;
}

int kope_child_dev_done(uint64_t *device_ns, char *msg, unsigned size)
{
  settle();
  *device_ns = dev_ns;
  dev_ns = 0;
  if (!err_msg[0])
    return 0;
  snprintf(msg, size, "%s", err_msg);
  err_msg[0] = '\0';
  return -1;
}

static int set_scalar(cl_uint i, const kope_ocl_arg *a, const kope_child_args *v)
{
  float f = (float)v->fval[i];
  double d = v->fval[i];
  int32_t i32 = (int32_t)v->ival[i];
  cl_long i64 = (cl_long)v->ival[i];

  switch (a->type) {
  case 0: return clSetKernelArg(kern, i, sizeof f, &f);
  case 1: return clSetKernelArg(kern, i, sizeof d, &d);
  case 2: return clSetKernelArg(kern, i, sizeof i32, &i32);
  default: return clSetKernelArg(kern, i, sizeof i64, &i64);
  }
}

/* Set every argument; copy inputs (and the poisoned outputs) to a
 * non-CPU device. 0 or -1. */
static int set_args(const kope_child_args *v, cl_mem mems[])
{
  cl_int e = CL_SUCCESS;
  cl_uint i;

  for (i = 0; i < (cl_uint)kope_ocl_op.nargs && e == CL_SUCCESS; i++) {
    const kope_ocl_arg *a = &kope_ocl_op.arg[i];
    mems[i] = NULL;
    if (a->kind == KOPE_ARGK_SCALAR) {
      e = set_scalar(i, a, v);
      continue;
    }
    if (bytes[i] && !(mems[i] = buffer(v->ptr[i], bytes[i], a->kind == KOPE_ARGK_IN)))
      return -1;
    if (mems[i] && !dev.is_cpu)
      e = clEnqueueWriteBuffer(dev.queue, mems[i], CL_TRUE, 0, bytes[i], v->ptr[i], 0, NULL,
                               NULL);
    if (e == CL_SUCCESS)
      e = clSetKernelArg(kern, i, sizeof(cl_mem), mems[i] ? &mems[i] : NULL);
  }
  if (e != CL_SUCCESS)
    set_err("setting argument: %s%s", kope_ocl_err(e), "");
  return e == CL_SUCCESS ? 0 : -1;
}

/* Wait for the launches in flight and add their profiled times. */
static void settle(void)
{
  cl_ulong t0, t1;
  cl_int st;
  int i;

  if (npend && clFinish(dev.queue) != CL_SUCCESS)
    set_err("clFinish failed%s%s", "", "");
  for (i = 0; i < npend; i++) {
    t0 = t1 = 0;
    if (clGetEventInfo(pend[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
            CL_SUCCESS && st < 0)
      set_err("the kernel failed: %s%s", kope_ocl_err(st), "");
    if (clGetEventProfilingInfo(pend[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(pend[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) ==
            CL_SUCCESS && t1 > t0)
      dev_ns += t1 - t0;
    clReleaseEvent(pend[i]);
  }
  npend = 0;
}

/* One launch. On a CPU device launches are queued back to back (in order)
 * and waited for at the end of the CALL (kope_child_dev_done) or every
 * MAX_PEND launches; with copies, each launch is waited for and its
 * outputs copied back. */
void kope_child_invoke(const kope_child_args *v)
{
  cl_mem mems[KOPE_CHILD_MAX_ARGS];
  cl_int e;
  int i;

  if (err_msg[0] || set_args(v, mems) != 0)
    return;
  for (i = 0; i < (int)work_dim; i++)
    if (!gsize[i])
      return;   /* an empty NDRange: nothing to run */
  e = clEnqueueNDRangeKernel(dev.queue, kern, work_dim, NULL, gsize,
                             kope_ocl_op.nlocal ? lsize : NULL, 0, NULL, &pend[npend]);
  if (e != CL_SUCCESS) {
    set_err("clEnqueueNDRangeKernel: %s%s", kope_ocl_err(e),
            e == CL_INVALID_WORK_GROUP_SIZE ? " (the global size must be a multiple of the "
            "local size, which the device must support)" : "");
    return;
  }
  if (++npend == MAX_PEND || !dev.is_cpu)
    settle();
  for (i = 0; !dev.is_cpu && i < kope_ocl_op.nargs; i++)
    if (mems[i] && kope_ocl_op.arg[i].kind == KOPE_ARGK_OUT &&
        clEnqueueReadBuffer(dev.queue, mems[i], CL_TRUE, 0, bytes[i], v->ptr[i], 0, NULL,
                            NULL) != CL_SUCCESS)
      set_err("reading an output back%s%s", "", "");
}
