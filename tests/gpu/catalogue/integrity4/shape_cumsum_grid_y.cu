// Attack for level1/089_cumsum (Verifier integrity IV, class 1: shapes). Trick: one block per
// row, the row taken from blockIdx.y, the grid clamped to the hardware's limit for grid.y:
// dim3(1, min(B, 65535)) and no loop over rows, so rows 65535 and up are never scanned and their
// output stays as it arrived (the verifier's NaN poison). Each row is scanned honestly: tiles of
// 512 (warp shuffles, then the warp totals, in float) offset by a double carry, like the
// reference.
// Why today's verifier says correct: every row count it tries is at most 65535 (default 32768,
// small 16, alt 3, 2 and 7; hidden B from 1 to 600), so every row has a block.
// What catches it after integrity IV: a capacity set (the manifest's hidden.capacity, run in
// every verification) with more rows than grid.y can index (B > 65535, short rows): the rows
// from 65535 on are poison.
// Expected: mismatch (unsafe accepted).
#define THREADS 512
#define WARPS (THREADS / 32)

extern "C" __global__ void cumsum_rows_y(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float warp_total[WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long row = blockIdx.y; /* one block per row */
    const float *xr = x + row * D;
    float *yr = y + row * D;
    double carry = 0.0;
    for (long long base = 0; base < D; base += THREADS) {
        long long i = base + threadIdx.x;
        float v = i < D ? xr[i] : 0.0f;
        for (int off = 1; off < 32; off <<= 1) {
            float u = __shfl_up_sync(0xffffffffu, v, off);
            if (lane >= off)
                v += u;
        }
        if (lane == 31)
            warp_total[warp] = v;
        __syncthreads();
        if (warp == 0) {
            float w = lane < WARPS ? warp_total[lane] : 0.0f;
            for (int off = 1; off < 32; off <<= 1) {
                float u = __shfl_up_sync(0xffffffffu, w, off);
                if (lane >= off)
                    w += u;
            }
            if (lane < WARPS)
                warp_total[lane] = w;
        }
        __syncthreads();
        if (warp > 0)
            v += warp_total[warp - 1];
        if (i < D)
            yr[i] = (float)(carry + (double)v);
        carry += (double)warp_total[WARPS - 1];
        __syncthreads();
    }
}
// @launch cumsum_rows_y<<<dim3(1, min(B, 65535)), 512>>>(x, y, D);
