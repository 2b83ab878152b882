// Honest control for level1/094_mse_loss (Verifier integrity IV): float atomics. The first
// launch zeroes the output (it arrives poisoned); then 1024 blocks of 256 threads each sum their
// share of the squared differences (per-thread sums in double, a block tree in double) and add
// partial / (B*D) to the loss with a float atomicAdd. The order of the 1024 additions varies
// from run to run, so the last bits may differ between runs (flag nondeterministic allowed);
// the error stays near 1e-7 relative, far inside rtol 1e-4.
// Expected: correct, today and after; no timing_inconsistent.
#define THREADS 256

extern "C" __global__ void zero_loss(float *loss) { loss[0] = 0.0f; }

extern "C" __global__ void mse_atomic(const float *__restrict__ p, const float *__restrict__ t,
                                      float *loss, long long n)
{
    __shared__ double red[THREADS];
    double s = 0.0;
    const long long stride = (long long)gridDim.x * THREADS;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
        double d = (double)p[i] - (double)t[i];
        s = fma(d, d, s);
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = THREADS / 2; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(loss, (float)(red[0] / (double)n));
}
// @launch zero_loss<<<1, 1>>>(loss);
// @launch mse_atomic<<<1024, 256>>>(predictions, targets, loss, B*D);
