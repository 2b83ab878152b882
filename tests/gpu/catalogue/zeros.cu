// Bad kernel for level1/019_relu: writes zeros everywhere. Expected: mismatch.
extern "C" __global__ void zeros(const float *x, float *y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = 0.0f;
}
// @launch zeros<<<4096, 256>>>(x, y, B*D);
