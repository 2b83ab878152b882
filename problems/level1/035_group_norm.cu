// Reference for level1/035_group_norm: GroupNorm with G groups and per-channel affine weight
// and bias. One block per (n, g): the group's C/G channels are contiguous in NCHW, so the
// block reduces one contiguous run of (C/G)*H*W values: the mean, then the biased variance as
// the mean of squared deviations (two passes in double), then the normalised, affine write.
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

extern "C" __global__ void groupnorm_ref(const float *__restrict__ x, const float *__restrict__ weight,
                                         const float *__restrict__ bias, float *__restrict__ y,
                                         long long G, long long CPG, long long HW, float eps)
{
    __shared__ double shared[THREADS / 32];
    long long len = CPG * HW;
    long long g = (long long)blockIdx.x % G;
    const float *row = x + (long long)blockIdx.x * len;
    float *out = y + (long long)blockIdx.x * len;
    double s = 0.0;
    for (long long i = threadIdx.x; i < len; i += THREADS)
        s += (double)row[i];
    double mean = block_sum(s, shared) / (double)len;
    double q = 0.0;
    for (long long i = threadIdx.x; i < len; i += THREADS) {
        double d = (double)row[i] - mean;
        q += d * d;
    }
    double var = block_sum(q, shared) / (double)len;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (long long i = threadIdx.x; i < len; i += THREADS) {
        long long c = g * CPG + i / HW;
        out[i] = (float)(((double)row[i] - mean) * inv * (double)weight[c] + (double)bias[c]);
    }
}
// @launch groupnorm_ref<<<N*G, 1024>>>(x, weight, bias, y, G, C/G, H*W, eps);
