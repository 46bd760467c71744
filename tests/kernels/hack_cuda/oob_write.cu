// @expect built
#define WG 256  // @knob layer=parallel values=128,256 "threads per block"
// @launch grid=cdiv(n, WG) block=WG
// Writes one element past the end of y: the gate cannot see it; at run time
// the device guard page after every output (and the parent's check of the
// slack bytes) turns it into a crash / incorrect verdict.
__global__ void relu(const float *__restrict__ x, float *y, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    y[i] = i < n && x[i] > 0 ? x[i] : 0;
}
