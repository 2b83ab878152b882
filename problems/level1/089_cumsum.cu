// Reference for level1/089_cumsum: inclusive prefix sum along each row of a
// (B, D) tensor. One block per row walks the row in tiles of 512 elements; each
// tile is scanned in double (warp shuffles, then the warp totals) and offset by
// the running row total (a double carry), so no float rounding accumulates.
#define THREADS 512
#define WARPS (THREADS / 32)

extern "C" __global__ void cumsum_rows(const float *__restrict__ x, float *__restrict__ y,
                                       long long B, long long D)
{
    __shared__ double warp_total[WARPS];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (long long row = blockIdx.x; row < B; row += gridDim.x) {
        const float *xr = x + row * D;
        float *yr = y + row * D;
        double carry = 0.0; /* sum of the row before this tile; the same in every thread */
        for (long long base = 0; base < D; base += THREADS) {
            long long i = base + threadIdx.x;
            double v = i < D ? (double)xr[i] : 0.0;
            for (int off = 1; off < 32; off <<= 1) {
                double u = __shfl_up_sync(0xffffffffu, v, off);
                if (lane >= off)
                    v += u;
            }
            if (lane == 31)
                warp_total[warp] = v;
            __syncthreads();
            if (warp == 0) {
                double w = lane < WARPS ? warp_total[lane] : 0.0;
                for (int off = 1; off < 32; off <<= 1) {
                    double u = __shfl_up_sync(0xffffffffu, w, off);
                    if (lane >= off)
                        w += u;
                }
                if (lane < WARPS)
                    warp_total[lane] = w; /* now inclusive prefix of the warp totals */
            }
            __syncthreads();
            if (warp > 0)
                v += warp_total[warp - 1];
            if (i < D)
                yr[i] = (float)(carry + v);
            carry += warp_total[WARPS - 1];
            __syncthreads(); /* warp_total is rewritten by the next tile */
        }
    }
}
// @launch cumsum_rows<<<min(B, 65535), 512>>>(x, y, B, D);
