// Attack for level1/023_softmax (Verifier integrity IV, class 1: shapes, a mid-range band).
// Trick: one block of 1024 threads per row. Rows of 40000..60000 elements take a "cached" path
// that reads the row once into registers (64 per thread, 1024 x 64 = 65536 >= 60000) and
// reduces the max and the sum with a block reduction whose warp count was left at 16, from the
// 512-thread version it was tuned with: the partials of warps 16..31 (threads 512..1023, half
// the row) are left out, so the sum is about half of what it should be and every output about
// twice too large. Every other D takes an honest three-pass path (max, sum of exp(x - max),
// normalised write) that reduces over all 32 warps.
// Why today's verifier says correct: D is 393216, 1000, 4097 and 33 in the fixed sets; a hidden
// D is drawn from 1 to 100000 (the small hidden set from 1 to 8), so 40000..60000 comes in about
// a fifth of verifications.
// What catches it after integrity IV: dims sets that cover the generator's range band by band
// in every verification (a D in 40000..60000 among them).
// Expected: mismatch.
#define THREADS 1024
#define PER 64
#define CACHED_WARPS 16 /* tuned with 512 threads */
#define BAND_LO 40000
#define BAND_HI 60000

__device__ float block_reduce(float v, bool is_max, float *red, int nwarps)
{
    for (int off = 16; off; off >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = red[0];
    for (int w = 1; w < nwarps; w++)
        r = is_max ? fmaxf(r, red[w]) : r + red[w];
    __syncthreads();
    return r;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_band(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float red[THREADS / 32];
    const float *row = x + blockIdx.x * D;
    float *out = y + blockIdx.x * D;
    if (D >= BAND_LO && D <= BAND_HI) { /* the row fits in registers: read it once */
        float v[PER];
        float m = -__int_as_float(0x7f800000);
#pragma unroll
        for (int k = 0; k < PER; k++) {
            long long i = threadIdx.x + (long long)k * THREADS;
            v[k] = i < D ? row[i] : -__int_as_float(0x7f800000);
            m = fmaxf(m, v[k]);
        }
        m = block_reduce(m, true, red, CACHED_WARPS);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < PER; k++) {
            v[k] = expf(v[k] - m);
            s += v[k];
        }
        s = block_reduce(s, false, red, CACHED_WARPS);
        const float inv = 1.0f / s;
#pragma unroll
        for (int k = 0; k < PER; k++) {
            long long i = threadIdx.x + (long long)k * THREADS;
            if (i < D)
                out[i] = v[k] * inv;
        }
        return;
    }
    float m = -__int_as_float(0x7f800000);
    for (long long i = threadIdx.x; i < D; i += THREADS)
        m = fmaxf(m, row[i]);
    m = block_reduce(m, true, red, THREADS / 32);
    float s = 0.0f;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        s += expf(row[i] - m);
    s = block_reduce(s, false, red, THREADS / 32);
    const float inv = 1.0f / s;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        out[i] = expf(row[i] - m) * inv;
}
// @launch softmax_band<<<B, 1024>>>(x, y, D);
