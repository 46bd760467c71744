/*
 * Internals of the CUDA target shared by its files: the generated host
 * shim (cuda_shim.c) and the target itself (cuda.c).
 */
#ifndef KOPE_TARGET_CUDA_INT_H
#define KOPE_TARGET_CUDA_INT_H

#include "target/launch.h"
#include "target/target_int.h"

/* `extern "C" __global__ void OP(const float *__restrict__ x, ...)` (no
 * semicolon): the kernel's required signature. Caller frees. */
char *kope_cuda_kernel_decl(const kope_op *op);
/* The host shim for op and a candidate's text (its @launch line is parsed
 * and translated). The candidate is to be appended after the returned
 * text, which ends with `#line 1 "kernel.cu"`. Caller frees; NULL with err
 * set (KOPE_EINPUT, "launch: ...") when the launch line is invalid. */
char *kope_cuda_shim_source(const kope_op *op, const char *candidate, kope_err *err);
/* The host shim of a vendor baseline (vendor_cuda): the same device
 * hooks, copies, L2 flush and event timing as a candidate's, around one
 * call of the baseline's host function `extern "C" <C prototype>` with
 * device pointers. A translation unit of its own. Caller frees. */
char *kope_cuda_vendor_shim_source(const kope_op *op);

#endif
