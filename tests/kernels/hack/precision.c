/* Hack: downgrade precision for speed: round the inputs of matmul to
 * bfloat16 (8 significant bits). Expected: incorrect. */
static inline float bf16(float v)
{
  union { float f; uint32_t u; } c = {v};
  c.u &= 0xffff0000u;
  return c.f;
}
void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float s = 0;
      for (int64_t p = 0; p < k; p++)
        s += bf16(a[i * k + p]) * bf16(b[p * n + j]);
      c[i * n + j] = s;
    }
}
