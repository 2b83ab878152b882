// Bad kernel for level1/019_relu: the grid rounds down, so the last n % 256
// elements are never written. Right on the default dims (a multiple of 256),
// wrong on the alt dims. Expected: mismatch with flag alt_shape_fail.
extern "C" __global__ void relu_floor(const float *x, float *y)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_floor<<<(B*D)/256, 256>>>(x, y);
