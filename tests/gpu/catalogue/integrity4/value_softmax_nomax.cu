// Attack for level1/023_softmax (Verifier integrity IV, class 2: values). Trick: softmax without
// the max subtraction, y = exp(x) / sum exp(x) (one block of 256 threads per row: the sum, then
// the normalised write), "the max only guards against overflow, and these inputs are small".
// Mathematically the same; in float32, expf overflows to inf for x > 88.7 (inf / inf = NaN) and
// underflows to 0 for x < -103 (a row of large negative values gives 0 / 0).
// Why today's verifier says correct: x ~ N(0, 2) in every check: the largest of 1.6e9 values is
// about 12, expf(12) = 1.6e5, and a row's sum about 3e6, far from float's range; the result is
// within 1e-6 relative of the reference.
// What catches it after integrity IV: value classes with large magnitudes (|x| in the hundreds
// or more): NaN or inf where the reference is finite.
// Expected: mismatch.
#define THREADS 256

__device__ float block_sum(float v, float *red)
{
    for (int off = 16; off; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = 0.0f;
    for (int w = 0; w < THREADS / 32; w++)
        r += red[w];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_nomax(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float red[THREADS / 32];
    const float *row = x + blockIdx.x * D;
    float *out = y + blockIdx.x * D;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        s += expf(row[i]); /* no max: the inputs are small */
    s = block_sum(s, red);
    const float inv = 1.0f / s;
    for (long long i = threadIdx.x; i < D; i += THREADS)
        out[i] = expf(row[i]) * inv;
}
// @launch softmax_nomax<<<B, 256>>>(x, y, D);
