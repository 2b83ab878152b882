// Reference for level1/099_triplet_margin_loss: mean over the B rows of
// max(d(anchor, positive) - d(anchor, negative) + margin, 0) with the pairwise
// distance d(x, y) = ||x - y + eps||_2 (eps added to the difference, as torch's
// pairwise_distance). One block per row sums both squared norms in double into
// scratch; one block then adds the B row losses in a fixed order and divides by B.
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

/* part[row] = max(||a - p + eps|| - ||a - n + eps|| + margin, 0), norms summed in double. */
extern "C" __global__ void triplet_rows(const float *__restrict__ anchor, const float *__restrict__ positive,
        const float *__restrict__ negative, double *__restrict__ part, long long B, long long D,
        double margin, double eps)
{
    __shared__ double shared[WARPS];
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
        long long off = row * D;
        double sp = 0.0, sn = 0.0;
        for (long long i = threadIdx.x; i < D; i += THREADS) {
            double a = (double)anchor[off + i];
            double dp = a - (double)positive[off + i] + eps;
            double dn = a - (double)negative[off + i] + eps;
            sp += dp * dp;
            sn += dn * dn;
        }
        sp = block_sum(sp, shared);
        sn = block_sum(sn, shared);
        if (threadIdx.x == 0) {
            double l = sqrt(sp) - sqrt(sn) + margin;
            part[row] = l > 0.0 ? l : 0.0;
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
// @scratch part f64[B]
// @launch triplet_rows<<<min(B, 65535), 512>>>(anchor, positive, negative, part, B, D, margin, eps);
// @launch mean_finish<<<1, 1024>>>(part, loss, B, B);
