/*
 * xoshiro256** (Blackman & Vigna's published algorithm, written from its
 * description) seeded by splitmix64; Box-Muller normals.
 */
#include <math.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "core/rng.h"

static uint64_t splitmix(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void kope_rng_seed(kope_rng *r, uint64_t seed)
{
  int i;

  for (i = 0; i < 4; i++)
    r->s[i] = splitmix(&seed);
}

double kope_rng_normal(kope_rng *r)
{
  double u = kope_rng_uniform(r), v = kope_rng_uniform(r);

  if (u < 1e-300)
    u = 1e-300;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int64_t kope_rng_int(kope_rng *r, int64_t lo, int64_t hi)
{
  uint64_t span;

  if (hi <= lo)
    return lo;
  span = (uint64_t)(hi - lo) + 1;
  return lo + (int64_t)(span ? kope_rng_next(r) % span : kope_rng_next(r));
}

uint64_t kope_rng_os_seed(void)
{
  uint64_t s = 0;

  if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
  }
  return s;
}

uint64_t kope_rng_mix(uint64_t a, uint64_t b)
{
  uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ULL);
  return splitmix(&x);
}
