// Reference for level1/024_log_softmax: one block per row (grid-stride over rows);
// the row max, then the sum of exp(x - max) accumulated in double, then
// y = x - max - log(sum) evaluated in double and rounded once.
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

__device__ float block_max(float v, float *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? shared[lane] : -__int_as_float(0x7f800000);
        for (int off = 16; off > 0; off >>= 1)
            v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
        if (lane == 0)
            shared[0] = v;
    }
    __syncthreads();
    float m = shared[0];
    __syncthreads();
    return m;
}

extern "C" __global__ void log_softmax_ref(const float *__restrict__ x, float *__restrict__ y,
                                           long long B, long long D)
{
    __shared__ double dshared[THREADS / 32];
    __shared__ float fshared[THREADS / 32];
    for (long long b = blockIdx.x; b < B; b += gridDim.x) {
        const float *row = x + b * D;
        float *out = y + b * D;
        float m = -__int_as_float(0x7f800000);
        for (long long i = threadIdx.x; i < D; i += THREADS)
            m = fmaxf(m, row[i]);
        m = block_max(m, fshared);
        double s = 0.0;
        for (long long i = threadIdx.x; i < D; i += THREADS)
            s += exp((double)row[i] - (double)m);
        s = block_sum(s, dshared);
        double shift = (double)m + log(s);
        for (long long i = threadIdx.x; i < D; i += THREADS)
            out[i] = (float)((double)row[i] - shift);
    }
}
// @launch log_softmax_ref<<<min(B, 65536), 512>>>(x, y, B, D);
