// @expect forbidden without a body
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG

__device__ unsigned calls(0);

__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    atomicAdd(&calls, 1u);
  if (i < n)
    y[i] = x[i] > 0 ? x[i] : 0;
}
