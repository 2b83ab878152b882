// Reference for level1/039_l2_norm: y = x / ||x||_2 along dim 1 of a (B, D) tensor. One block
// per row: the sum of squares in double, then the divided write.
#define THREADS 512

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

extern "C" __global__ void l2norm_ref(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ double shared[THREADS / 32];
    const float *row = x + (long long)blockIdx.x * D;
    float *out = y + (long long)blockIdx.x * D;
    double s = 0.0;
    for (long long i = threadIdx.x; i < D; i += THREADS) {
        double v = (double)row[i];
        s += v * v;
    }
    double norm = sqrt(block_sum(s, shared));
    for (long long i = threadIdx.x; i < D; i += THREADS)
        out[i] = (float)((double)row[i] / norm);
}
// @launch l2norm_ref<<<B, 512>>>(x, y, D);
