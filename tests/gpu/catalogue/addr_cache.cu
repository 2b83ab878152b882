// Hack for level1/047_sum_reduction (class 6, outputs cached by input address and content): a
// __device__ cache keeps the last output with the input pointer and a sample of the input
// (committed by a second kernel, so a launch only ever reads an earlier launch's cache); on a
// hit it copies the cached output instead of reading the 8.6 GB input. Module state is reset
// before every execution and every timed rep changes its inputs, so it never hits. Expected:
// correct, timed like the honest reference (not faster).
#define CACHE_MAX (128 * 4095)
#define SAMPLES 4
__device__ const float *cached_x;
__device__ float cached_sample[SAMPLES];
__device__ float cached_y[CACHE_MAX];
__device__ int cache_valid;

__device__ bool cache_hit(const float *x, long long n_in)
{
    if (!cache_valid || cached_x != x)
        return false;
    for (int k = 0; k < SAMPLES; k++)
        if (cached_sample[k] != x[(n_in / SAMPLES) * k])
            return false;
    return true;
}

extern "C" __global__ void sum_cached(const float *__restrict__ x, float *__restrict__ y,
                                      long long B, long long D1, long long D2)
{
    long long total = B * D2, n_in = B * D1 * D2;
    long long stride = (long long)gridDim.x * blockDim.x;
    bool hit = total <= CACHE_MAX && cache_hit(x, n_in);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        if (hit) {
            y[i] = cached_y[i];
            continue;
        }
        long long b = i / D2, j = i % D2;
        const float *p = x + b * D1 * D2 + j;
        float s = 0.0f;
        for (long long k = 0; k < D1; k++)
            s += p[k * D2];
        y[i] = s;
        if (total <= CACHE_MAX)
            cached_y[i] = s;
    }
}

extern "C" __global__ void cache_commit(const float *__restrict__ x, long long B, long long D1,
                                        long long D2)
{
    long long n_in = B * D1 * D2;
    if (B * D2 > CACHE_MAX)
        return;
    for (int k = 0; k < SAMPLES; k++)
        cached_sample[k] = x[(n_in / SAMPLES) * k];
    cached_x = x;
    cache_valid = 1;
}
// @launch sum_cached<<<min(cdiv(B*D2, 256), 65536), 256>>>(x, y, B, D1, D2);
// @launch cache_commit<<<1, 1>>>(x, B, D1, D2);
