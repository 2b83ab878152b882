// Legitimate kernel for level1/047_sum_reduction using float atomics: correct
// within tolerance, but the summation order changes between runs.
// Expected: correct, flag nondeterministic.
extern "C" __global__ void zero(float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 0.0f;
}
extern "C" __global__ void atomic_sum(const float *x, float *y, long long B, long long D1, long long D2)
{
    long long total = B * D1 * D2;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long b = i / (D1 * D2), d2 = i % D2;
        atomicAdd(y + b * D2 + d2, x[i]);
    }
}
// @launch zero<<<cdiv(B*D2, 256), 256>>>(y, B*D2);
// @launch atomic_sum<<<8192, 256>>>(x, y, B, D1, D2);
