/*
 * The worker protocol between kope (the judge) and a child process that
 * runs one kernel. This header is shared by kope and by the child runtime
 * (kope_child.c), which kope embeds and compiles with the target's
 * toolchain. Buffers live in two shared-memory files that the parent owns:
 * inputs, which the child can only map read-only, and outputs. The child
 * reads commands on a pipe, calls the kernel, and answers on another pipe;
 * the clock, the reference results and the comparison stay in the parent.
 */
#ifndef KOPE_CHILD_H
#define KOPE_CHILD_H

#include <stdint.h>

#define KOPE_CHILD_MAGIC 0x6b6f7065u   /* "kope" */
#define KOPE_CHILD_PROTO 2
#define KOPE_CHILD_MAX_ARGS 24
/* File descriptors the child inherits. */
#define KOPE_CHILD_FD_CMD 3
#define KOPE_CHILD_FD_REPLY 4
#define KOPE_CHILD_FD_IN 5
#define KOPE_CHILD_FD_OUT 6
#define KOPE_CHILD_FD_FILTER 7   /* candidates: the seccomp filter (BPF) */

/* kope_child_cmd.flags */
#define KOPE_CMDF_SEAL 1u        /* MAP: then start OpenMP, install the filter */

/* kope_child_reply.status */
#define KOPE_CHILD_ST_OK 0
#define KOPE_CHILD_ST_BAD 1      /* bad or unknown command */
#define KOPE_CHILD_ST_MAP 2      /* mapping failed */
#define KOPE_CHILD_ST_FPSTATE 5  /* the kernel changed MXCSR or the x87 control word */
#define KOPE_CHILD_ST_SEAL 6     /* the sandbox could not be installed */
#define KOPE_CHILD_ST_DEVICE 7   /* a device (GPU) error; msg says which */
/* Exit status after a system call the filter refused (a line goes to fd 2). */
#define KOPE_CHILD_EXIT_TRAP 159

enum kope_child_cmd_kind {
  KOPE_CMD_PING = 1,   /* answer at once (round-trip calibration) */
  KOPE_CMD_MAP = 2,    /* (re)map the regions: in_size, out_size, guards per slot */
  KOPE_CMD_CALL = 3,   /* call the kernel iters times, rotating over nslots buffer sets */
  KOPE_CMD_EXIT = 4
};

enum kope_arg_kind { KOPE_ARGK_SCALAR = 0, KOPE_ARGK_IN = 1, KOPE_ARGK_OUT = 2 };

typedef struct kope_child_cmd {
  uint32_t magic;
  uint32_t kind;
  uint32_t iters;
  uint32_t nargs;
  uint64_t in_size, out_size;
  uint32_t nguards;
  uint32_t flags;                           /* KOPE_CMDF_* */
  uint32_t nslots;                          /* buffer sets: call i uses slot i % nslots */
  uint32_t pad;
  uint64_t in_stride, out_stride;           /* bytes between slots in each region */
  uint64_t guard_off[KOPE_CHILD_MAX_ARGS];  /* page offsets in the out region */
  uint64_t off[KOPE_CHILD_MAX_ARGS];        /* buffer offset within its region */
  uint8_t argk[KOPE_CHILD_MAX_ARGS];        /* enum kope_arg_kind */
  int64_t ival[KOPE_CHILD_MAX_ARGS];
  double fval[KOPE_CHILD_MAX_ARGS];
} kope_child_cmd;

typedef struct kope_child_reply {
  uint32_t magic;
  uint32_t status;       /* 0 ok, else an error of the runtime */
  uint64_t device_ns;    /* time measured on a device (GPU targets), else 0 */
  char msg[112];
} kope_child_reply;

/* Arguments ready for the kernel call. */
typedef struct kope_child_args {
  void *ptr[KOPE_CHILD_MAX_ARGS];
  int64_t ival[KOPE_CHILD_MAX_ARGS];
  double fval[KOPE_CHILD_MAX_ARGS];
} kope_child_args;

#ifdef __cplusplus
extern "C" {
#endif

/* Generated per operator by kope: calls the kernel with the arguments. */
void kope_child_invoke(const kope_child_args *a);

/* Optional device hooks, defined by the generated host shim of a GPU
 * target (the runtime declares them weak; the cpu target has none).
 * kope_child_dev_map runs after every MAP, before the seal, with the
 * command and the runtime's mappings of the two regions: it creates the
 * device context and buffers. kope_child_dev_done runs after the kernel
 * calls of a CALL and gives the device time to report (device_ns). Both
 * return 0, or nonzero with a message in msg (reply KOPE_CHILD_ST_DEVICE). */
int kope_child_dev_map(const kope_child_cmd *c, const unsigned char *in, unsigned char *out,
                       char *msg, unsigned size);
int kope_child_dev_done(uint64_t *device_ns, char *msg, unsigned size);

#ifdef __cplusplus
}
#endif

#endif
