// Bad kernel for level1/019_relu: correct output, but it writes into its input
// (an in-place trick). Expected: unsafe.
extern "C" __global__ void relu_inplace(float *x, float *y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v = x[i] > 0.0f ? x[i] : 0.0f;
        y[i] = v;
        x[i] = v;
    }
}
// @launch relu_inplace<<<4096, 256>>>(x, y, B*D);
