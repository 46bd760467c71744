/* Legitimate: OpenMP parallel for with a reduction, a named critical
 * section and an unnamed one (gcc emits the .gomp_critical_user_ lock and
 * GOMP_critical_* calls), and a combined parallel loop. Must be accepted. */
#include <stdint.h>
void relu(const float *x, float *y, int64_t n)
{
  int64_t positives = 0, done = 0;

#pragma omp parallel
  {
    int64_t mine = 0;
#pragma omp for reduction(+ : positives) schedule(static)
    for (int64_t i = 0; i < n; i++) {
      y[i] = x[i] > 0 ? x[i] : 0;
      positives += x[i] > 0;
      mine++;
    }
#pragma omp critical (tally)
    done += mine;
#pragma omp critical
    done += 0;
  }
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t i = 0; i < n; i++)
    if (done != n || positives < 0)
      y[i] = -1.0f;
}
