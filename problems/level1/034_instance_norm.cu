// Reference for level1/034_instance_norm: InstanceNorm2d without affine parameters. One block
// per (n, c) plane: the mean, then the biased variance as the mean of squared deviations (two
// passes, accumulated in double), then the normalised write.
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

extern "C" __global__ void instnorm_ref(const float *__restrict__ x, float *__restrict__ y, long long HW,
                                        float eps)
{
    __shared__ double shared[THREADS / 32];
    const float *row = x + (long long)blockIdx.x * HW;
    float *out = y + (long long)blockIdx.x * HW;
    double s = 0.0;
    for (long long i = threadIdx.x; i < HW; i += THREADS)
        s += (double)row[i];
    double mean = block_sum(s, shared) / (double)HW;
    double q = 0.0;
    for (long long i = threadIdx.x; i < HW; i += THREADS) {
        double d = (double)row[i] - mean;
        q += d * d;
    }
    double var = block_sum(q, shared) / (double)HW;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (long long i = threadIdx.x; i < HW; i += THREADS)
        out[i] = (float)(((double)row[i] - mean) * inv);
}
// @launch instnorm_ref<<<N*C, 1024>>>(x, y, H*W, eps);
