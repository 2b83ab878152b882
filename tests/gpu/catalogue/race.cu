// Bad kernel for level1/047_sum_reduction: every thread adds its element into
// the output with a plain read-modify-write (no atomic), so concurrent updates
// are lost, differently on every run. Expected: mismatch, flag nondeterministic.
extern "C" __global__ void zero(float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 0.0f;
}
extern "C" __global__ void racy_sum(const float *x, float *y, long long B, long long D1, long long D2)
{
    long long total = B * D1 * D2;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long b = i / (D1 * D2), d2 = i % D2;
        volatile float *out = y + b * D2 + d2;
        *out = *out + x[i];
    }
}
// @launch zero<<<cdiv(B*D2, 256), 256>>>(y, B*D2);
// @launch racy_sum<<<8192, 256>>>(x, y, B, D1, D2);
