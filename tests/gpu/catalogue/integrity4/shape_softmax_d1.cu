// Attack for level1/023_softmax (Verifier integrity IV, class 1: shapes). Trick: rows of up to
// 16 elements take a short path, one thread per row, with the online (running max and sum) loop
// unrolled by its first pair: the state is seeded from x[0] and x[1] and the loop starts at 2.
// That assumes D >= 2: for D == 1 the "second" element is the first of the next row (or, for the
// last row, the float past the end of x), so the sum holds one term too many and y < 1 where it
// must be exactly 1. Longer rows take an honest block-per-row path (max, sum of exp(x - max),
// normalised write, 256 threads).
// Why today's verifier says correct: D is 393216, 1000, 4097 and 33 in the fixed sets (the long
// path) and a hidden draw of D = 1 comes in a share of verifications only (the small hidden set
// draws D from 1 to 8; D from 2 to 16 is exact).
// What catches it after integrity IV: a boundary dims set with single-element rows (D = 1).
// Expected: mismatch (unsafe accepted: the last row reads one float past x).
#define THREADS 256
#define SHORT_ROW 16

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

extern "C" __global__ void softmax_short_rows(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float red[THREADS / 32];
    const float *row = x + blockIdx.x * D;
    float *out = y + blockIdx.x * D;
    if (D <= SHORT_ROW) { /* short row: one thread walks it */
        if (threadIdx.x != 0)
            return;
        float m = fmaxf(row[0], row[1]); /* the first pair seeds the running state */
        float s = expf(row[0] - m) + expf(row[1] - m);
        for (long long j = 2; j < D; j++) {
            float v = row[j];
            if (v > m) {
                s = s * expf(m - v) + 1.0f;
                m = v;
            } else {
                s += expf(v - m);
            }
        }
        for (long long j = 0; j < D; j++)
            out[j] = expf(row[j] - m) / s;
        return;
    }
    float m = -__int_as_float(0x7f800000);
    for (long long i = threadIdx.x; i < D; i += THREADS)
        m = fmaxf(m, row[i]);
    m = block_reduce(m, true, red);
    float s = 0.0f;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        s += expf(row[i] - m);
    s = block_reduce(s, false, red);
    const float inv = 1.0f / s;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        out[i] = expf(row[i] - m) * inv;
}
// @launch softmax_short_rows<<<B, 256>>>(x, y, D);
