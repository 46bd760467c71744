/*
 * kope targets: where and how candidate kernels are built and run. A
 * target knows its language and toolchain, turns an operator's source
 * (candidate, reference or vendor baseline) into a worker program that
 * speaks kope's worker protocol, says which extra compiler flags it allows,
 * and describes its hardware for a prompt. The evaluator is target-neutral:
 * adding OpenCL or CUDA means adding a target, not changing the agent.
 */
#ifndef KOPE_TARGET_H
#define KOPE_TARGET_H

#include "kope/core.h"
#include "kope/hw.h"
#include "kope/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_target kope_target;

typedef enum kope_build_role {
  KOPE_BUILD_CANDIDATE = 0,   /* untrusted: target flags, prototype enforced */
  KOPE_BUILD_REFERENCE = 1,   /* trusted: -O2, single thread */
  KOPE_BUILD_VENDOR = 2       /* trusted: linked with the vendor libraries */
} kope_build_role;

/* Names of the available targets, NULL-terminated. */
extern const char *const kope_target_names[];

/* Options of a target (all NULL: the defaults). The strings are copied. */
typedef struct kope_target_opts {
  const char *device;     /* opencl: the device, an index or a case-insensitive
                           * substring of "platform / device"; NULL or "":
                           * $KOPE_OCL_DEVICE, else $KOPE_DEVICE, else the first */
  const char *cuda_arch;  /* cuda: GPU architectures, "sm_90" or "80,90"; NULL or
                           * "": $KOPE_CUDA_ARCH, else "80,90" */
} kope_target_opts;

/* Open a target by name ("cpu"). Checks the toolchain is usable: a missing
 * compiler is KOPE_EENV. o may be NULL (the defaults). Caller frees with
 * kope_target_free. */
kope_target *kope_target_open_opts(const char *name, const kope_target_opts *o,
                                   kope_err *err);
/* kope_target_open_opts with the defaults. */
kope_target *kope_target_open(const char *name, kope_err *err);
void kope_target_free(kope_target *t);

const char *kope_target_name(const kope_target *t);
const char *kope_target_language(const kope_target *t);    /* "C (OpenMP, intrinsics)" */
const char *kope_target_source_ext(const kope_target *t);  /* ".c" */
const char *kope_target_compiler(const kope_target *t);    /* version line */
/* Default compiler flags for candidates, e.g. "-O3 -march=native -fopenmp". */
const char *kope_target_default_flags(const kope_target *t);
/* Check user-supplied extra flags against the allow-list (space-separated).
 * KOPE_EINPUT naming the first refused flag. */
int kope_target_check_flags(const kope_target *t, const char *flags, kope_err *err);
/* Whether kernels can run here: KOPE_OK, or KOPE_EENV with the reason
 * (cuda: "no CUDA device (cudaGetDeviceCount: ...)"). The cpu target can
 * always run. Building needs no device (see kope_eval_opts.build_only). */
int kope_target_check_device(kope_target *t, kope_err *err);
/* The device kernels of this target run on, after the device check:
 * cpu the CPU model ("AMD EPYC 7B13"), opencl "platform / device" as the
 * OpenCL runtime names the device kope picks (kope_target_opts.device),
 * cuda "GPU name (sm_XY)" of the device
 * used. NULL when there is none (cuda without a GPU) or it cannot be
 * found. Asked once per handle; owned by t. */
const char *kope_target_device(kope_target *t);
/* The language of the target's own vendor baseline: cpu C, cuda CUDA,
 * opencl none (KOPE_OP_VENDOR_NONE). */
kope_op_vendor_lang kope_target_vendor_lang(const kope_target *t);
/* The vendor baseline the evaluator times on this target: its own, else
 * (a target that borrows the C one: opencl, whose C baseline the cpu
 * target builds and runs) the operator's C baseline; NULL when none (cuda
 * without a vendor_cuda: a CPU library is no bar for a GPU kernel). */
const kope_op_vendor *kope_target_vendor(const kope_target *t, const kope_op *op);
/* Whether a build-only evaluation builds the target's own vendor baseline
 * too (cuda: kope's nvcc vendor build is checked without a GPU). */
int kope_target_build_only_vendor(const kope_target *t);
/* Markdown description of the target for a prompt (hw may be NULL). Caller
 * frees. */
char *kope_target_describe(const kope_target *t, const kope_hw *hw);

#ifdef __cplusplus
}
#endif
#endif
