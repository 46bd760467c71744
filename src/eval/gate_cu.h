/*
 * The static gate for CUDA candidates (target cuda). The host side is
 * kope's (src/target/cuda_shim.c), so the gate checks the source text:
 * exactly one `__global__` kernel named after the operator with the
 * operator's parameter count; no #include, #line or pragma other than
 * `#pragma unroll`/`nounroll`, no token pasting; no inline assembly, no
 * host functions (`__host__`, functions without `__device__`), no `main`,
 * no printf/malloc/new or other device-side library calls, no CUDA
 * runtime calls or launches from the kernel, no `extern` (except
 * `extern __shared__`), no file-scope or static variables that keep state
 * across calls (only `__constant__`, `const` and `__shared__` ones); and a
 * valid `// @launch grid=.. block=.. [shared=..]` line.
 */
#ifndef KOPE_EVAL_GATE_CU_H
#define KOPE_EVAL_GATE_CU_H

#include <stddef.h>
#include "kope/op.h"

/* 0 when src passes, or -1 with a one-line "cuda gate: detail" in why. */
int kope_gate_cu(const char *src, const kope_op *op, char *why, size_t size);

#endif
