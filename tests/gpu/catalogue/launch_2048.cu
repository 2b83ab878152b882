// Bad kernel for level1/019_relu: 2048 threads per block exceed the limit of 1024.
// Expected: extract_error (the CPU-side launch check rejects it before any GPU work).
extern "C" __global__ void relu_big(const float *x, float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_big<<<cdiv(B*D, 2048), 2048>>>(x, y, B*D);
