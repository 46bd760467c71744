/*
 * Deterministic pseudo-random numbers for input generation: xoshiro256**
 * seeded through splitmix64, with uniform and normal variates. Fast enough
 * to fill hundreds of MB per second; not for cryptography.
 */
#ifndef KOPE_CORE_RNG_H
#define KOPE_CORE_RNG_H

#include <stdint.h>

typedef struct kope_rng {
  uint64_t s[4];
} kope_rng;

void kope_rng_seed(kope_rng *r, uint64_t seed);

static inline uint64_t kope_rng_rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

/* xoshiro256** step (inline: it sits in the input-generation loop). */
static inline uint64_t kope_rng_next(kope_rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = kope_rng_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = kope_rng_rotl(s[3], 45);
  return result;
}

/* [0, 1) */
static inline double kope_rng_uniform(kope_rng *r)
{
  return (double)(kope_rng_next(r) >> 11) * 0x1.0p-53;
}

double kope_rng_normal(kope_rng *r);              /* mean 0, std 1 */
int64_t kope_rng_int(kope_rng *r, int64_t lo, int64_t hi);  /* inclusive */
/* A seed from the operating system (getrandom), for fresh inputs. */
uint64_t kope_rng_os_seed(void);
/* Mix several values into one seed. */
uint64_t kope_rng_mix(uint64_t a, uint64_t b);

#endif
