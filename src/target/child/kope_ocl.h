/*
 * The OpenCL host side of a worker (target opencl), shared by the files
 * kope embeds and compiles with gcc at run time: kope_ocl_dev.c (device
 * choice and program build), kope_ocl_host.c (the device hooks of the
 * child runtime and the per-call launch) and kope_ocl_build.c (the
 * build-only helper that reports the compiler log), and by the per-
 * candidate spec kope generates (the kope_ocl_op table below). All of it is
 * trusted host code; the candidate only supplies the .cl text, which is
 * read from kernel.cl in the worker's directory.
 */
#ifndef KOPE_OCL_H
#define KOPE_OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stddef.h>
#include <stdio.h>
#include "kope_child.h"

#define KOPE_OCL_KERNEL_FILE "kernel.cl"
#define KOPE_OCL_MAX_KNOBS 32

/* One kernel argument in the operator's order. */
typedef struct kope_ocl_arg {
  const char *name;
  int kind;                 /* enum kope_arg_kind */
  int type;                 /* scalars: 0 f32, 1 f64, 2 i32, 3 i64 */
  unsigned elem_size;       /* buffers: bytes per element */
  int rank;
  const char *shape[6];     /* buffers: element count = product of these */
} kope_ocl_arg;

/* What kope generates for one candidate (trusted: from op.json and the
 * parsed @launch line). */
typedef struct kope_ocl_spec {
  const char *kernel;       /* the kernel's name (the operator's) */
  int nargs;
  kope_ocl_arg arg[KOPE_CHILD_MAX_ARGS];
  int nglobal, nlocal;      /* nlocal 0: the runtime picks the local size */
  const char *global[3], *local[3];
  int nknobs;
  const char *knob[KOPE_OCL_MAX_KNOBS];
  long long knob_val[KOPE_OCL_MAX_KNOBS];
} kope_ocl_spec;

extern const kope_ocl_spec kope_ocl_op;

typedef struct kope_ocl_dev {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;   /* with profiling */
  int is_cpu;               /* CL_DEVICE_TYPE_CPU: buffers over host memory */
  char name[256];           /* "platform / device" */
} kope_ocl_dev;

/* Open the device chosen by KOPE_OCL_DEVICE, else KOPE_DEVICE (kope's
 * --device option; unset or "": the first
 * device; a number: the index over all platforms' devices in order; else a
 * case-insensitive substring of "platform / device"). Sets POCL_CACHE_DIR
 * to ./pocl-cache unless it is set. 0, or -1 with msg. */
int kope_ocl_open(kope_ocl_dev *d, char *msg, size_t size);
/* Read path and build it for d. Returns 0 built, 1 the compiler refused it
 * (*log holds its output), -1 another failure (msg). *log is malloc'd or
 * NULL. */
int kope_ocl_build(kope_ocl_dev *d, const char *path, cl_program *prog, char **log,
                   char *msg, size_t size);
/* The program's one kernel, which must be named name (a kernel named like
 * a built-in is found under its mangled name). 0, or -1 with msg. */
int kope_ocl_kernel(cl_program prog, const char *name, cl_kernel *kern, char *msg,
                    size_t size);
/* Name of an OpenCL error code ("CL_INVALID_VALUE"). */
const char *kope_ocl_err(cl_int e);
/* Number of platforms (0 when none or the ICD loader finds none). */
int kope_ocl_nplatforms(void);
/* Print every device, one line each ("0: platform / device (version, N
 * compute units)"), in the order --device indexes them; returns the count. */
int kope_ocl_list(FILE *f);

#endif
