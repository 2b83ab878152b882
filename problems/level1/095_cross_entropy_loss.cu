// Reference for level1/095_cross_entropy_loss: mean over rows of
// logsumexp(logits[b, :]) - logits[b, target[b]]. One block per row computes the
// row max, then sum exp(x - max) in double, and writes the row's loss (double) to
// scratch; a single block then sums the B row losses in a fixed order and divides
// by B. Deterministic: no atomics.
#define THREADS 512
#define WARPS (THREADS / 32)

__device__ double block_sum(double v, double *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x % 32 == 0)
        shared[threadIdx.x / 32] = v;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < (int)(blockDim.x / 32); w++) /* every thread, same order */
        total += shared[w];
    __syncthreads();
    return total;
}

__device__ float block_max(float v, float *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
    if (threadIdx.x % 32 == 0)
        shared[threadIdx.x / 32] = v;
    __syncthreads();
    float m = shared[0];
    for (int w = 1; w < (int)(blockDim.x / 32); w++)
        m = fmaxf(m, shared[w]);
    __syncthreads();
    return m;
}

extern "C" __global__ void ce_rows(const float *__restrict__ logits, const long long *__restrict__ target,
                                   double *__restrict__ row_loss, long long B, long long C)
{
    __shared__ double dshared[WARPS];
    __shared__ float fshared[WARPS];
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
        const float *x = logits + row * C;
        float m = -__int_as_float(0x7f800000);
        for (long long i = threadIdx.x; i < C; i += THREADS)
            m = fmaxf(m, x[i]);
        m = block_max(m, fshared);
        double s = 0.0;
        for (long long i = threadIdx.x; i < C; i += THREADS)
            s += exp((double)x[i] - (double)m);
        s = block_sum(s, dshared);
        if (threadIdx.x == 0) {
            long long t = target[row];
            double picked = (t >= 0 && t < C) ? (double)x[t] : nan("");
            row_loss[row] = (double)m + log(s) - picked;
        }
    }
}

/* One block of 1024 threads: out[0] = (sum of part[0..n)) / denom. */
extern "C" __global__ void mean_finish(const double *__restrict__ part, float *__restrict__ out,
                                       long long n, long long denom)
{
    __shared__ double shared[32];
    double s = 0.0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x)
        s += part[i];
    s = block_sum(s, shared);
    if (threadIdx.x == 0)
        out[0] = (float)(s / (double)denom);
}
// @scratch row_loss f64[B]
// @launch ce_rows<<<min(B, 65535), 512>>>(predictions, targets, row_loss, B, C);
// @launch mean_finish<<<1, 1024>>>(row_loss, loss, B, B);
