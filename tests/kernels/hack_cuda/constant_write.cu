// @expect forbidden __constant__ table 'memo'
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG
// Caches results in constant memory through a pointer: constant memory is
// backed by device memory that outlives the call, so a later call could
// find its answers there. Only memo[i] reads are allowed.
__constant__ float memo[8192];

__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float *w = (float *)memo;
  if (i < n) {
    y[i] = x[i] > 0 ? x[i] : 0;
    if (i < 8192)
      w[i] = y[i];
  }
}
