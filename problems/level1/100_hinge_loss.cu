// Reference for level1/100_hinge_loss: mean over all B*D elements of
// max(0, 1 - predictions[b, j] * targets[j]); targets is a vector of D signs
// broadcast along the rows. Row sums in double into scratch, then one block adds
// them in a fixed order and divides by B*D. Deterministic.
#define THREADS 512
#define WARPS (THREADS / 32)

/* Sum over the block; every thread gets the total (warp totals added in a fixed order). */
__device__ double block_sum(double v, double *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x % 32 == 0)
        shared[threadIdx.x / 32] = v;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < (int)(blockDim.x / 32); w++)
        total += shared[w];
    __syncthreads();
    return total;
}

/* Row sums of the per-element term, in double: part[row] = sum_i term(row, i). */
extern "C" __global__ void hinge_rows(const float *__restrict__ predictions, const float *__restrict__ targets,
        double *__restrict__ part, long long B, long long D)
{
    __shared__ double shared[WARPS];
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
        const float *ar = predictions + row * D;
        double s = 0.0;
        for (long long i = threadIdx.x; i < D; i += THREADS) {
            double u = (double)ar[i], v = (double)targets[i];
            double h = 1.0 - u * v;
            s += h > 0.0 ? h : 0.0;
        }
        s = block_sum(s, shared);
        if (threadIdx.x == 0)
            part[row] = s;
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
// @scratch part f64[B]
// @launch hinge_rows<<<min(B, 65535), 512>>>(predictions, targets, part, B, D);
// @launch mean_finish<<<1, 1024>>>(part, loss, B, B*D);
