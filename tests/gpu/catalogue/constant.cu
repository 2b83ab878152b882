// Bad kernel for level1/019_relu: writes a constant. Expected: mismatch.
extern "C" __global__ void constant(const float *x, float *y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = 0.5f;
}
// @launch constant<<<4096, 256>>>(x, y, B*D);
