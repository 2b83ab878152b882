// Honest control for level1/089_cumsum (Verifier integrity IV): the row scan of
// shape_cumsum_grid_y.cu (tiles of 512 scanned with warp shuffles in float, a double carry
// between tiles) with the rows taken from blockIdx.x in a grid-stride loop over at most 4096
// blocks, so any number of rows is scanned, more than grid.y's 65535 included.
// Expected: correct, today and after; no timing_inconsistent.
#define THREADS 512
#define WARPS (THREADS / 32)

extern "C" __global__ void cumsum_rows_x(const float *__restrict__ x, float *__restrict__ y, long long B, long long D)
{
    __shared__ float warp_total[WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
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
}
// @launch cumsum_rows_x<<<min(B, 4096), 512>>>(x, y, B, D);
