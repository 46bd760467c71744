// @expect forbidden has 2 parameters
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=1 block=WG
__global__ void relu(const float *__restrict__ x, float *y)
{
  y[threadIdx.x] = x[threadIdx.x];
}
