/*
 * The static gate for OpenCL C candidates (target opencl). The host side
 * is kope's, so the gate only checks the source text: exactly one kernel
 * (`__kernel` or `kernel`) named after the operator with the operator's
 * parameter count; no `#include`, `#line` or pragma other than
 * `#pragma OPENCL ...` and `#pragma unroll`/`nounroll`; no `printf`; a
 * valid `// @launch` line (src/target/launch.h). The worker's build
 * re-checks the kernel count, name and arity on the compiled program, so
 * a kernel hidden behind a macro cannot slip through.
 */
#ifndef KOPE_EVAL_GATE_CL_H
#define KOPE_EVAL_GATE_CL_H

#include <stddef.h>
#include "kope/op.h"

/* 0 when src passes, or -1 with a one-line "opencl gate: detail" in why. */
int kope_gate_cl(const char *src, const kope_op *op, char *why, size_t size);

#endif
