// Reference for level1/033_batch_norm: BatchNorm2d in training mode. Pass 1: one block per
// channel computes the batch mean over (N, H, W), then the biased variance as the mean of
// squared deviations (two passes over the data, accumulated in double). Pass 2: one thread
// per element normalises, scales and shifts in double.
#define THREADS 1024

__device__ double block_sum(double v, double *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? shared[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0)
            shared[0] = v;
    }
    __syncthreads();
    double total = shared[0];
    __syncthreads();
    return total;
}

extern "C" __global__ void bn_stats(const float *__restrict__ x, double *__restrict__ stats,
                                    long long N, long long C, long long HW)
{
    __shared__ double shared[THREADS / 32];
    long long c = blockIdx.x;
    double count = (double)N * (double)HW;
    double s = 0.0;
    for (long long n = 0; n < N; n++) {
        const float *plane = x + (n * C + c) * HW;
        for (long long r = threadIdx.x; r < HW; r += THREADS)
            s += (double)plane[r];
    }
    double mean = block_sum(s, shared) / count;
    double q = 0.0;
    for (long long n = 0; n < N; n++) {
        const float *plane = x + (n * C + c) * HW;
        for (long long r = threadIdx.x; r < HW; r += THREADS) {
            double d = (double)plane[r] - mean;
            q += d * d;
        }
    }
    double var = block_sum(q, shared) / count;
    if (threadIdx.x == 0) {
        stats[2 * c] = mean;
        stats[2 * c + 1] = var;
    }
}

extern "C" __global__ void bn_apply(const float *__restrict__ x, const float *__restrict__ weight,
                                    const float *__restrict__ bias, const double *__restrict__ stats,
                                    float *__restrict__ y, long long total, long long C, long long HW,
                                    float eps)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long c = (i / HW) % C;
        double mean = stats[2 * c], var = stats[2 * c + 1];
        double inv = 1.0 / sqrt(var + (double)eps);
        y[i] = (float)(((double)x[i] - mean) * inv * (double)weight[c] + (double)bias[c]);
    }
}
// @scratch stats f64[2*C]
// @launch bn_stats<<<C, 1024>>>(x, stats, N, C, H*W);
// @launch bn_apply<<<min(cdiv(N*C*H*W, 256), 65536), 256>>>(x, weight, bias, stats, y, N*C*H*W, C, H*W, eps);
