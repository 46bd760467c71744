// @expect forbidden __device__ variable 'cache'
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG

__device__ float cache[1 << 24];

__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (cache[i] == 0)
      cache[i] = x[i] > 0 ? x[i] : 0;
    y[i] = cache[i];
  }
}
