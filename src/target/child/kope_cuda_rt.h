/*
 * The CUDA part of the child runtime (trusted host code, C++ for nvcc).
 * kope embeds this file and includes it once, from the generated shim of
 * a CUDA worker (src/target/cuda_shim.c), before the candidate's text.
 *
 * At MAP (kope_child_dev_map, before the seal): create the context on
 * device $KOPE_CUDA_DEVICE (default 0), allocate one device buffer per
 * shared region (all slots), fill the guard page after every output of
 * every slot with a pattern, and allocate the L2 flush buffer (twice the
 * L2 size). Per kernel call: at the first use of a buffer slot in a CALL,
 * copy the slot's inputs and its poisoned outputs to the device (the
 * parent changes buffers only between CALLs); then flush L2 (a memset of
 * the flush buffer), record an event, launch, record an event and
 * cudaDeviceSynchronize. At the end of the CALL (kope_child_dev_done) the
 * outputs of every slot used are copied back and its guard pages checked.
 * The event time of each launch (the first 255) is kept; the reply carries their
 * median (device_ns). The first CUDA error ends the CALL with
 * KOPE_CHILD_ST_DEVICE and its text.
 * Every name here starts with kope_ so the candidate cannot collide.
 */
#ifndef KOPE_CUDA_RT_H
#define KOPE_CUDA_RT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "kope_child.h"

#define KOPE_CUDA_PAGE 4096u
#define KOPE_CUDA_GUARD_BYTE 0xa5
/* launches timed per CALL: the median of the first 255 (sorting more would
 * add to the round trip the parent measures) */
#define KOPE_CUDA_MAX_SAMPLES 255

static struct kope_cuda_state {
  int up;                                  /* context created */
  unsigned char *d_in, *d_out;             /* device copies of the regions */
  const unsigned char *h_in;
  unsigned char *h_out;
  kope_child_cmd lay;                      /* layout of the latest MAP */
  void *flush;
  size_t flush_bytes;
  unsigned flush_pass;
  cudaEvent_t e0, e1;
  int failed;
  char msg[112];
  float ms[KOPE_CUDA_MAX_SAMPLES];
  unsigned nms;
  unsigned slot;                           /* slot of the current call */
  unsigned char loaded[KOPE_CHILD_MAX_ARGS]; /* slot copied to the device in this CALL */
  unsigned char guard[KOPE_CUDA_PAGE];
} kope_cu;

static dim3 kope_cuda_grid, kope_cuda_block;
static size_t kope_cuda_shared;

static int64_t kope_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t kope_max(int64_t a, int64_t b) { return a > b ? a : b; }
/* Ceiling division and round-up; a divisor <= 0 gives 0, an invalid size. */
static int64_t kope_cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }
static int64_t kope_rup(int64_t a, int64_t b) { return kope_cdiv(a, b) * b; }

static int kope_cuda_fail(const char *what, cudaError_t e)
{
  if (!kope_cu.failed)
    snprintf(kope_cu.msg, sizeof kope_cu.msg, "%s: %s (%s)", what, cudaGetErrorString(e),
             cudaGetErrorName(e));
  kope_cu.failed = 1;
  return 0;
}

static int kope_cuda_failf(const char *msg)
{
  if (!kope_cu.failed)
    snprintf(kope_cu.msg, sizeof kope_cu.msg, "%s", msg);
  kope_cu.failed = 1;
  return 0;
}

#define KOPE_CU_TRY(what, call)                                                   \
  do {                                                                            \
    cudaError_t kope_e_ = (call);                                                 \
    if (kope_e_ != cudaSuccess)                                                   \
      return kope_cuda_fail(what, kope_e_);                                       \
  } while (0)

static int kope_cuda_context(void)
{
  const char *dev = getenv("KOPE_CUDA_DEVICE");
  int n = 0, l2 = 0, d = dev && *dev ? atoi(dev) : 0;
  cudaError_t e = cudaGetDeviceCount(&n);

  if (e != cudaSuccess)
    return kope_cuda_fail("no CUDA device in the worker (sandbox? docs/security.md)", e);
  if (d < 0 || d >= n)
    return kope_cuda_failf("no CUDA device with the index in KOPE_CUDA_DEVICE");
  KOPE_CU_TRY("cudaSetDevice", cudaSetDevice(d));
  KOPE_CU_TRY("creating the CUDA context", cudaFree(0));
  KOPE_CU_TRY("cudaEventCreate", cudaEventCreate(&kope_cu.e0));
  KOPE_CU_TRY("cudaEventCreate", cudaEventCreate(&kope_cu.e1));
  KOPE_CU_TRY("cudaDeviceGetAttribute(L2)", cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
  kope_cu.flush_bytes = 2 * (size_t)(l2 > (1 << 20) ? l2 : (1 << 20));
  KOPE_CU_TRY("cudaMalloc(L2 flush buffer)", cudaMalloc(&kope_cu.flush, kope_cu.flush_bytes));
  memset(kope_cu.guard, KOPE_CUDA_GUARD_BYTE, sizeof kope_cu.guard);
  kope_cu.up = 1;
  return 1;
}

/* Fill every guard page of every slot on the device with the pattern. */
static int kope_cuda_guards(void)
{
  const kope_child_cmd *c = &kope_cu.lay;
  uint32_t s, i, nslots = c->nslots ? c->nslots : 1;

  for (s = 0; s < nslots; s++)
    for (i = 0; i < c->nguards && i < KOPE_CHILD_MAX_ARGS; i++) {
      uint64_t g = c->guard_off[i] + s * c->out_stride;
      if (g + KOPE_CUDA_PAGE <= c->out_size)
        KOPE_CU_TRY("cudaMemset(guard)", cudaMemset(kope_cu.d_out + g, KOPE_CUDA_GUARD_BYTE,
                                                    KOPE_CUDA_PAGE));
    }
  return 1;
}

extern "C" int kope_child_dev_map(const kope_child_cmd *c, const unsigned char *in,
                                  unsigned char *out, char *msg, unsigned size)
{
  kope_cu.failed = 0;
  if (!kope_cu.up && !kope_cuda_context())
    goto fail;
  cudaFree(kope_cu.d_in);
  cudaFree(kope_cu.d_out);
  kope_cu.d_in = kope_cu.d_out = NULL;
  kope_cu.lay = *c;
  memset(kope_cu.loaded, 0, sizeof kope_cu.loaded);
  kope_cu.h_in = in;
  kope_cu.h_out = out;
  if (c->in_size && cudaMalloc(&kope_cu.d_in, c->in_size) != cudaSuccess)
    kope_cuda_failf("cudaMalloc of the input buffers failed");
  if (!kope_cu.failed && c->out_size && cudaMalloc(&kope_cu.d_out, c->out_size) != cudaSuccess)
    kope_cuda_failf("cudaMalloc of the output buffers failed");
  if (!kope_cu.failed && c->out_size)
    kope_cuda_guards();
  if (!kope_cu.failed)
    return 0;
fail:
  snprintf(msg, size, "%s", kope_cu.msg);
  return 1;
}

static void kope_cuda_copy_back(void);

static int kope_cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;

  return (x > y) - (x < y);
}

extern "C" int kope_child_dev_done(uint64_t *device_ns, char *msg, unsigned size)
{
  unsigned n = kope_cu.nms;

  kope_cu.nms = 0;
  kope_cuda_copy_back();
  if (kope_cu.failed) {
    snprintf(msg, size, "%s", kope_cu.msg);
    return 1;
  }
  qsort(kope_cu.ms, n, sizeof kope_cu.ms[0], kope_cmp_float);
  *device_ns = n ? (uint64_t)(1e6 * (n % 2 ? kope_cu.ms[n / 2] :
                                     0.5 * (kope_cu.ms[n / 2 - 1] + kope_cu.ms[n / 2])))
                 : 0;
  return 0;
}

static void *kope_dev_in(void *host)
{
  return kope_cu.d_in + ((const unsigned char *)host - kope_cu.h_in);
}

static void *kope_dev_out(void *host)
{
  return kope_cu.d_out + ((unsigned char *)host - kope_cu.h_out);
}

/* The slot of this call (from its first buffer), then inputs and poisoned
 * outputs to the device. 0 when the call must be skipped. */
static int kope_cuda_begin(const kope_child_args *a)
{
  const kope_child_cmd *c = &kope_cu.lay;
  uint32_t i, g = 0;
  uint64_t s = 0;

  if (kope_cu.failed)
    return 0;
  for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++)
    if (c->argk[i] != KOPE_ARGK_SCALAR) {
      s = c->argk[i] == KOPE_ARGK_IN
              ? ((const unsigned char *)a->ptr[i] - kope_cu.h_in - c->off[i]) / c->in_stride
              : ((unsigned char *)a->ptr[i] - kope_cu.h_out - c->off[i]) / c->out_stride;
      break;
    }
  kope_cu.slot = (unsigned)s;
  if (s >= KOPE_CHILD_MAX_ARGS)
    return kope_cuda_failf("buffer slot out of range");
  if (kope_cu.loaded[s])
    return 1;
  kope_cu.loaded[s] = 1;
  if (c->in_stride)
    KOPE_CU_TRY("copying the inputs to the device",
                cudaMemcpy(kope_cu.d_in + s * c->in_stride, kope_cu.h_in + s * c->in_stride,
                           c->in_stride, cudaMemcpyHostToDevice));
  for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++)
    if (c->argk[i] == KOPE_ARGK_OUT) {
      uint64_t o = s * c->out_stride + c->off[i], end = s * c->out_stride + c->guard_off[g++];
      KOPE_CU_TRY("copying the outputs to the device",
                  cudaMemcpy(kope_cu.d_out + o, kope_cu.h_out + o, end - o,
                             cudaMemcpyHostToDevice));
    }
  return 1;
}

/* Check and set the declared geometry; the L2 flush. 0: skip the call. */
static int kope_cuda_geometry(const int64_t *g, const int64_t *b, int64_t shared,
                              const void *fn)
{
  static const int64_t gmax[3] = {2147483647LL, 65535, 65535};
  char m[112];
  int i;

  for (i = 0; i < 3; i++)
    if (g[i] < 1 || g[i] > gmax[i] || b[i] < 1 || b[i] > 1024) {
      snprintf(m, sizeof m, "launch: grid=%lld,%lld,%lld block=%lld,%lld,%lld is out of range",
               (long long)g[0], (long long)g[1], (long long)g[2], (long long)b[0],
               (long long)b[1], (long long)b[2]);
      return kope_cuda_failf(m);
    }
  if (b[0] * b[1] * b[2] > 1024 || shared < 0 || shared > (1 << 30))
    return kope_cuda_failf("launch: more than 1024 threads per block or a bad shared size");
  if (shared > 48 * 1024)
    KOPE_CU_TRY("launch: shared memory above the device limit",
                cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)shared));
  kope_cuda_grid = dim3((unsigned)g[0], (unsigned)g[1], (unsigned)g[2]);
  kope_cuda_block = dim3((unsigned)b[0], (unsigned)b[1], (unsigned)b[2]);
  kope_cuda_shared = (size_t)shared;
  KOPE_CU_TRY("L2 flush", cudaMemset(kope_cu.flush, (int)(++kope_cu.flush_pass & 0xff),
                                     kope_cu.flush_bytes));
  return 1;
}

static void kope_cuda_start(void)
{
  cudaEventRecord(kope_cu.e0, 0);
}

/* After the launch: wait for the whole device and time the launch. */
static void kope_cuda_finish(const kope_child_args *a)
{
  cudaError_t e = cudaGetLastError();
  float ms = 0;

  (void)a;
  if (e != cudaSuccess) {
    kope_cuda_fail("kernel launch", e);
    return;
  }
  cudaEventRecord(kope_cu.e1, 0);
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
    kope_cuda_fail("kernel execution", e);
    return;
  }
  if (cudaEventElapsedTime(&ms, kope_cu.e0, kope_cu.e1) == cudaSuccess &&
      kope_cu.nms < KOPE_CUDA_MAX_SAMPLES)
    kope_cu.ms[kope_cu.nms++] = ms;
}

/* One slot's outputs back to the host, then its guard pages. */
static int kope_cuda_slot_back(uint64_t s)
{
  const kope_child_cmd *c = &kope_cu.lay;
  unsigned char page[KOPE_CUDA_PAGE];
  uint32_t i, g = 0;

  for (i = 0; i < c->nargs && i < KOPE_CHILD_MAX_ARGS; i++)
    if (c->argk[i] == KOPE_ARGK_OUT) {
      uint64_t o = s * c->out_stride + c->off[i], end = s * c->out_stride + c->guard_off[g];
      KOPE_CU_TRY("copying the outputs back",
                  cudaMemcpy(kope_cu.h_out + o, kope_cu.d_out + o, end - o,
                             cudaMemcpyDeviceToHost));
      if (end + KOPE_CUDA_PAGE <= c->out_size) {
        KOPE_CU_TRY("reading a guard page",
                    cudaMemcpy(page, kope_cu.d_out + end, KOPE_CUDA_PAGE,
                               cudaMemcpyDeviceToHost));
        if (memcmp(page, kope_cu.guard, KOPE_CUDA_PAGE) != 0) {
          char m[112];
          snprintf(m, sizeof m, "the kernel wrote past the end of output %u (device guard "
                   "page changed)", g);
          return kope_cuda_failf(m);
        }
      }
      g++;
    }
  return 1;
}

/* End of a CALL: the outputs of every slot used go back (not after a
 * failure: the CALL is rejected anyway); the next CALL copies afresh. */
static void kope_cuda_copy_back(void)
{
  uint64_t s;

  for (s = 0; s < KOPE_CHILD_MAX_ARGS; s++)
    if (kope_cu.loaded[s]) {
      kope_cu.loaded[s] = 0;
      if (!kope_cu.failed)
        kope_cuda_slot_back(s);
    }
}

#endif
