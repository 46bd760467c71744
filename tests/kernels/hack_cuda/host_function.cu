// @expect forbidden host function 'host_relu'
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG

float host_relu(float v) { return v > 0 ? v : 0; }

__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] > 0 ? x[i] : 0;
}
