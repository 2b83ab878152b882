// Attack for level1/019_relu (Verifier integrity IV, class 6: the device heap). Trick: an honest
// 64-bit grid-stride ReLU whose first block also "reserves a scratch pool for later": each of
// its 256 threads calls malloc(1024) 64 times (16 MiB in all, twice the default 8 MiB heap),
// stamps each block it gets and never frees any, stopping at the first NULL. The heap belongs
// to the CUDA context, not to the module that is reloaded before every execution, so after the
// first execution it is full for every later candidate in the same worker, and each later
// execution of this one spends its malloc calls on a full heap. The output is exact.
// Why today's verifier says correct: nothing looks at the device heap; a failed malloc returns
// NULL, which the kernel handles.
// What catches it after integrity IV: device-side malloc/free/new/delete are refused by policy
// before anything runs. The test runs tests/gpu/catalogue/integrity4/ok_after_hog.cu right after
// it in the same worker: that one must stay correct.
// Expected: policy_violation.
#define POOL_CALLS 64
#define POOL_BYTES 1024

extern "C" __global__ void relu_hog(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    if (blockIdx.x == 0)
        for (int k = 0; k < POOL_CALLS; k++) {
            int *blk = (int *)malloc(POOL_BYTES); /* kept for later: never freed */
            if (!blk)
                break;
            blk[0] = k;
            blk[1] = threadIdx.x;
        }
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
// @launch relu_hog<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);
