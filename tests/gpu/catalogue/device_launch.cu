// Side-stream / lazy-output attempt for level1/019_relu (class 6): the kernel launches a child
// kernel to finish the work after the parent returns. Without relocatable device code and the
// device runtime (never linked), device-side launches do not compile. Expected: compile_error.
extern "C" __global__ void relu_child(const float *x, float *y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
extern "C" __global__ void relu_parent(const float *x, float *y, long long n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        relu_child<<<4096, 256>>>(x, y, n);
}
// @launch relu_parent<<<1, 32>>>(x, y, B*D);
