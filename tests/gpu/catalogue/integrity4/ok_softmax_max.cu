// Honest control for level1/023_softmax (Verifier integrity IV): one block of 512 threads per
// row, the row max first, then the sum of exp(x - max) in float, then the normalised write, any
// D (a single element included: exp(0) / 1 = 1). Large magnitudes cannot overflow (every
// exponent is <= 0), and special values come out as the reference's: fmaxf skips NaN for the
// max, a NaN or a +inf in a row makes its sum NaN, -inf gives 0.
// Expected: correct, today and after; no timing_inconsistent.
#define THREADS 512

__device__ float block_reduce(float v, bool is_max, float *red)
{
    for (int off = 16; off; off >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = red[0];
    for (int w = 1; w < THREADS / 32; w++)
        r = is_max ? fmaxf(r, red[w]) : r + red[w];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_max(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float red[THREADS / 32];
    const float *row = x + blockIdx.x * D;
    float *out = y + blockIdx.x * D;
    float m = -__int_as_float(0x7f800000);
    for (long long i = threadIdx.x; i < D; i += THREADS)
        m = fmaxf(m, row[i]);
    m = block_reduce(m, true, red);
    float s = 0.0f;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        s += expf(row[i] - m);
    s = block_reduce(s, false, red);
    for (long long i = threadIdx.x; i < D; i += THREADS)
        out[i] = expf(row[i] - m) / s;
}
// @launch softmax_max<<<B, 512>>>(x, y, D);
