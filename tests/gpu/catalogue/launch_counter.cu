// Hack for level1/019_relu (class 2, timing-phase detection via device globals and launch
// counting): a __device__ counter counts executions; from the 9th on (after the checking
// runs: 5 seeds, a rerun and 2 alt sets) it skips the work. The module is loaded afresh for
// every execution, so the counter always starts at 0. Expected: correct, timed like an
// honest ReLU (not faster).
__device__ unsigned long long executions;

extern "C" __global__ void relu_counted(const float *x, float *y, long long n)
{
    if (executions >= 8)
        return; /* "timing runs": skip */
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(&executions, 1ull);
}
// @launch relu_counted<<<4096, 256>>>(x, y, B*D);
