// shared/pointwise_ref.cuh: the register-blocked 1x1 convolution of the level-1 references 086
// (on its double depthwise intermediate) and 087. The problem loader pastes it into each of them
// in place of its `#include "shared/pointwise_ref.cuh"` line; the including file defines PW_IN,
// the input's element type (float or double), first.
// Method: y[b, co, p] = sum over c of x[b, c, p] * w[co, c] (p = h*W + w), no bias. A block of NT
// threads takes one batch entry, COB consecutive output channels and NT*PT pixels; each thread
// owns PT pixels (NT apart, so loads and stores coalesce) x COB channels in double accumulators.
// The block stages those channels' weights as double in shared memory, laid out [c][co] and read
// as broadcast double2 loads, so each input value loaded once feeds COB FMAs; the values of CU
// channels are loaded together to keep many loads in flight. Exact products (float or double
// input -> double, fma in double), summed in double over c in order, rounded to float once;
// 64-bit tensor offsets.
#ifndef PW_IN
#error "define PW_IN before this file"
#endif
#define COB 16  /* output channels per thread (a partial last block is masked) */
#define PT 2    /* pixels per thread */
#define CU 8    /* input channels whose values are loaded together */
#define NT 128  /* threads per block */
#define WC 256  /* input channels staged at a time: WC*COB*8 = 32 KB of shared memory */

extern "C" __global__ void __launch_bounds__(NT)
pointwise_ref(const PW_IN *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
              int B, int CI, int CO, long long HW)
{
    __shared__ double2 sw2[WC * COB / 2];
    double *sw = (double *)sw2;
    const int ncb = (CO + COB - 1) / COB;
    const long long nbx = (HW + NT * PT - 1) / (NT * PT) * ncb;
    for (long long b = blockIdx.y; b < B; b += gridDim.y)
        for (long long bx = blockIdx.x; bx < nbx; bx += gridDim.x) {
            const int co0 = (int)(bx % ncb) * COB, nco = min(COB, CO - co0); /* co0 .. co0+nco-1 */
            const long long p0 = bx / ncb * (NT * PT) + threadIdx.x;
            const PW_IN *xb = x + b * CI * HW + p0; /* x[b, 0, p0] */
            bool ok[PT];
            double acc[PT][COB];
#pragma unroll
            for (int j = 0; j < PT; j++) {
                ok[j] = p0 + j * NT < HW;
#pragma unroll
                for (int i = 0; i < COB; i++)
                    acc[j][i] = 0.0;
            }
            for (int c0 = 0; c0 < CI; c0 += WC) {
                const int cn = min(WC, CI - c0);
                __syncthreads(); /* the previous chunk's readers are done */
                for (int e = threadIdx.x; e < cn * COB; e += NT) {
                    const int i = e % COB, c = c0 + e / COB;
                    sw[e] = i < nco ? (double)w[(long long)(co0 + i) * CI + c] : 0.0;
                }
                __syncthreads();
                for (int cl = 0; cl < cn; cl += CU) {
                    PW_IN xf[CU][PT]; /* loaded together: many loads in flight */
#pragma unroll
                    for (int u = 0; u < CU; u++)
#pragma unroll
                        for (int j = 0; j < PT; j++)
                            xf[u][j] = (cl + u < cn && ok[j]) ? __ldg(xb + (long long)(c0 + cl + u) * HW + j * NT) : (PW_IN)0;
#pragma unroll
                    for (int u = 0; u < CU; u++) {
                        if (cl + u >= cn)
                            break;
                        const double2 *wc = sw2 + (cl + u) * (COB / 2);
#pragma unroll
                        for (int i = 0; i < COB / 2; i++) {
                            const double2 wv = wc[i];
#pragma unroll
                            for (int j = 0; j < PT; j++) {
                                acc[j][2 * i] = fma((double)xf[u][j], wv.x, acc[j][2 * i]);
                                acc[j][2 * i + 1] = fma((double)xf[u][j], wv.y, acc[j][2 * i + 1]);
                            }
                        }
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < PT; j++) {
                if (!ok[j])
                    continue;
                float *yp = y + (b * CO + co0) * HW + p0 + j * NT; /* y[b, co0, p] */
#pragma unroll
                for (int i = 0; i < COB; i++)
                    if (i < nco)
                        yp[(long long)i * HW] = (float)acc[j][i];
            }
        }
}
