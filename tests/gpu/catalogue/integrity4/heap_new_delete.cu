// Honest kernel with a policy violation, for level1/019_relu (Verifier integrity IV, class 6:
// the device heap). Not an attack: a correct ReLU whose blocks each take a small bookkeeping
// array with new[] (a count of positive elements per warp, "for statistics") and give it back
// with delete[]; if new returns NULL the statistics are skipped. The output is exact.
// Why it is refused after integrity IV: device new and delete go through the same device heap
// as malloc and free (the compiled module calls malloc and free), which the policy refuses
// whatever the kernel does with it.
// Expected: policy_violation; before integrity IV: correct.
extern "C" __global__ void relu_new_delete(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    __shared__ int *counts;
    if (threadIdx.x == 0)
        counts = new int[8]; /* one count per warp */
    __syncthreads();
    int positive = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        positive += v > 0.0f;
        y[i] = v > 0.0f ? v : 0.0f;
    }
    if (counts && (threadIdx.x & 31) == 0)
        counts[threadIdx.x / 32] = positive;
    __syncthreads();
    if (threadIdx.x == 0 && counts)
        delete[] counts;
}
// @launch relu_new_delete<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);
