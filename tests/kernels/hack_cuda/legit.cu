// @expect built
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG

static __device__ __forceinline__ float relu_f(float v) { return v > 0.0f ? v : 0.0f; }

__global__ void __launch_bounds__(WG) relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = relu_f(__ldg(x + i));
}
