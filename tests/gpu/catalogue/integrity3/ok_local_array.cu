// Honest control for level1/089_cumsum (Verifier integrity III): a kernel that legitimately
// keeps a big per-thread array in local memory. One block of 256 threads scans a row in
// chunks of 256 * 64 elements: each thread copies its 64 consecutive elements into a local
// float[64] (indexed by a runtime bound, so it lives in local memory, not registers), scans
// them there, the block scans the 256 thread totals in shared memory, and each thread writes
// its slice plus its offset and the carry of earlier chunks. Any B and D (tails guarded).
// Expected: correct, today and after.
#define THREADS 256
#define PER 64

extern "C" __global__ void cumsum_local(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float tot[THREADS];
    float seg[PER]; /* local memory */
    const float *row = x + blockIdx.x * D;
    float *out = y + blockIdx.x * D;
    float carry = 0.0f;
    for (long long c0 = 0; c0 < D; c0 += (long long)THREADS * PER) {
        long long s0 = c0 + (long long)threadIdx.x * PER;
        int len = (int)max(0ll, min((long long)PER, D - s0));
        float run = 0.0f;
#pragma unroll 1
        for (int e = 0; e < len; e++) {
            run += row[s0 + e];
            seg[e] = run;
        }
        tot[threadIdx.x] = run;
        __syncthreads();
        for (int off = 1; off < THREADS; off <<= 1) { /* inclusive scan of the totals */
            float v = threadIdx.x >= off ? tot[threadIdx.x - off] : 0.0f;
            __syncthreads();
            tot[threadIdx.x] += v;
            __syncthreads();
        }
        float before = carry + (threadIdx.x ? tot[threadIdx.x - 1] : 0.0f);
#pragma unroll 1
        for (int e = 0; e < len; e++)
            out[s0 + e] = seg[e] + before;
        carry += tot[THREADS - 1];
        __syncthreads();
    }
}
// @launch cumsum_local<<<B, 256>>>(x, y, D);
