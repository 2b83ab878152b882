// Attack for level1/094_mse_loss (Verifier integrity III, class 4: memory). Trick: the final
// reduction (1024 per-block partials to one mean) runs its tree in the 4 KiB just past the end
// of the one-element output instead of in shared memory: each thread first reads the word it
// will use, and after the result is written every thread puts its word back, so the bytes after
// `loss` (today's guard band) hold what they held before and the guard check sees no damage.
// Expected today: correct. Expected after: unsafe (4 KiB is past the at most 255 bytes of slack
// before the VMM wall, and the compute-sanitizer run sees the out-of-bounds accesses).
extern "C" __global__ void mse_partial(const float *__restrict__ p, const float *__restrict__ t,
                                       float *__restrict__ part, long long n)
{
    __shared__ float red[256];
    float s = 0.0f;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        float d = p[i] - t[i];
        s = fmaf(d, d, s);
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 128; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = red[0];
}

extern "C" __global__ void mse_finish_guard(const float *__restrict__ part, float *loss, long long n)
{
    volatile float *tree = (volatile float *)(loss + 1); /* "free" memory after the output */
    const int t = threadIdx.x;
    float saved = tree[t];
    tree[t] = part[t];
    __syncthreads();
    for (int h = 512; h; h >>= 1) {
        if (t < h)
            tree[t] = tree[t] + tree[t + h];
        __syncthreads();
    }
    if (t == 0)
        loss[0] = (float)((double)tree[0] / (double)n);
    __syncthreads();
    tree[t] = saved;
}
// @scratch part f32[1024]
// @launch mse_partial<<<1024, 256>>>(predictions, targets, part, B*D);
// @launch mse_finish_guard<<<1, 1024>>>(part, loss, B*D);
