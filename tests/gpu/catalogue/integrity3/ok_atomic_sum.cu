// Honest control for level1/047_sum_reduction (Verifier integrity III): y[b, 0, j] = sum over k
// of x[b, k, j] with split-k atomics: the first launch zeroes y (outputs arrive poisoned), then
// each block sums a 64-deep slice of k for 256 consecutive columns and adds its partial with
// atomicAdd. The order of the atomic additions varies, so the result may differ in the last
// bits between runs (flag nondeterministic allowed); any B, D1, D2.
// Expected: correct, today and after.
#define KSLICE 64

extern "C" __global__ void zero_out(float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 0.0f;
}

extern "C" __global__ void sum_splitk(const float *__restrict__ x, float *y, int B, int D1, int D2)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, k0 = blockIdx.y * KSLICE, b = blockIdx.z;
    if (j >= D2)
        return;
    const float *col = x + ((long long)b * D1) * D2 + j;
    float s = 0.0f;
    for (int k = k0; k < min(D1, k0 + KSLICE); k++)
        s += col[(long long)k * D2];
    atomicAdd(&y[(long long)b * D2 + j], s);
}
// @launch zero_out<<<cdiv(B*D2, 256), 256>>>(y, B*D2);
// @launch sum_splitk<<<dim3(cdiv(D2, 256), cdiv(D1, 64), B), 256>>>(x, y, B, D1, D2);
