// @expect built
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG
// Reads the output first, hoping a previous call left the answer there.
// The gate admits it (reading an output is legal); kope poisons every
// output before every call, so the skip path gives a wrong result.
__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float want = x[i] > 0 ? x[i] : 0;
  if (y[i] == want)
    return;
  y[i] = want;
}
