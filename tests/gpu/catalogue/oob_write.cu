// Bad kernel for level1/019_relu: an off-by-one bound writes y[n]. Expected: unsafe.
extern "C" __global__ void relu_oob(const float *x, float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    else if (i == n)
        y[i] = 0.0f;
}
// @launch relu_oob<<<cdiv(B*D + 1, 256), 256>>>(x, y, B*D);
