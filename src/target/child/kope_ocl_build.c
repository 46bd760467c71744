/*
 * The opencl target's build-only helper: `kope-oclc FILE KERNEL NARGS`
 * builds FILE for the chosen device (kope_ocl_open) and checks that it
 * holds exactly one kernel, named KERNEL, with NARGS parameters. The build
 * log goes to stdout. Exit status: 0 built, 1 the compiler refused the
 * source, 2 the kernel is missing or has the wrong arity, 3 no usable
 * OpenCL platform or device (an environment problem, not the candidate's).
 * `kope-oclc --list` prints the devices (kope_ocl_list), exit 3 when none.
 * Trusted host code, compiled by kope with gcc and linked with -lOpenCL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope_ocl.h"

static int check_kernel(cl_program prog, const char *name, cl_uint nargs)
{
  cl_uint na = 0;
  cl_kernel k;
  char msg[256];
  int rc = 0;

  if (kope_ocl_kernel(prog, name, &k, msg, sizeof msg) != 0) {
    printf("error: %s\n", msg);
    return 2;
  }
  if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof na, &na, NULL) == CL_SUCCESS &&
      na != nargs) {
    printf("error: kernel '%s' has %u parameters; the operator has %u\n", name, na, nargs);
    rc = 2;
  }
  clReleaseKernel(k);
  return rc;
}

/* Ask for the program binaries: PoCL then compiles each kernel's generic
 * work-group function into its cache (POCL_CACHE_DIR), so the worker
 * only loads it, without running anything here. */
static void code_for_kernels(cl_program prog)
{
  size_t size = 0;
  unsigned char *bin;

  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      !size || !(bin = malloc(size)))
    return;
  clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  free(bin);
}

int main(int argc, char **argv)
{
  kope_ocl_dev d;
  cl_program prog = NULL;
  char msg[512], *log = NULL;
  int rc;

  if (argc == 2 && !strcmp(argv[1], "--list"))
    return kope_ocl_list(stdout) > 0 ? 0 : 3;
  if (argc != 4) {
    fprintf(stderr, "usage: kope-oclc FILE KERNEL NARGS | kope-oclc --list\n");
    return 3;
  }
  if (kope_ocl_open(&d, msg, sizeof msg) != 0) {
    printf("%s\n", msg);
    return 3;
  }
  rc = kope_ocl_build(&d, argv[1], &prog, &log, msg, sizeof msg);
  if (log && *log)
    printf("%s\n", log);
  if (rc < 0)
    printf("%s\n", msg);
  if (rc == 0)
    rc = check_kernel(prog, argv[2], (cl_uint)atoi(argv[3]));
  if (rc == 0)
    code_for_kernels(prog);
  else
    rc = rc > 0 ? 1 : 3;
  free(log);
  if (prog)
    clReleaseProgram(prog);
  return rc;
}
