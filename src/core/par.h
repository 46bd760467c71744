/*
 * A small fork-join parallel loop on pthreads for kope's own bulk work
 * (input generation, comparison, hashing). Unlike an OpenMP pool, its
 * threads exit when the loop ends, so nothing of kope's spins on the cores
 * while a kernel is being timed.
 */
#ifndef KOPE_CORE_PAR_H
#define KOPE_CORE_PAR_H

#include <stdint.h>

/* Calls fn(ctx, lo, hi, part) for consecutive blocks covering [0, n), one
 * block per part, with up to nparts_max parts (<= 16) run on threads when
 * n >= min_parallel; part indexes per-part result slots. Returns the
 * number of parts used. */
int kope_par_for(int64_t n, int64_t min_parallel,
                 void (*fn)(void *ctx, int64_t lo, int64_t hi, int part), void *ctx);

#define KOPE_PAR_MAX 16

#endif
