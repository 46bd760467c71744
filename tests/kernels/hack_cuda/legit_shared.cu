// @expect built
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG shared=WG*4

__constant__ float kope_zero[1] = {0.0f};

template <int N>
__device__ float clamp_low(float v) { return v > kope_zero[0] ? v : 0.0f * N; }

__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  extern __shared__ float tile[];
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 1; k++)
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n)
    y[i] = clamp_low<1>(tile[threadIdx.x]);
}
