// shared/conv1d_ref.cuh: the register-blocked direct 1-D convolution of the level-1 references 067
// and 076. The problem loader pastes it into each of them in place of its `#include
// "shared/conv1d_ref.cuh"` line; the including file defines COB (output channels per thread) first.
// Method: direct 1-D convolution (stride, padding, dilation, groups as torch), register-blocked. A
// block of NT threads takes one batch entry, COB consecutive output channels of one group and NT*PT
// output positions; each thread owns PT positions (NT apart, so loads and stores coalesce) x COB
// channels in double accumulators. The block stages those channels' weights as double in shared
// memory, laid out [c*K + k][co] and read as broadcast double2 loads, so each x value loaded once
// feeds COB FMAs; the x values of CU channels are loaded together to keep many loads in flight.
// Exact float products (float -> double, fma in double), summed in double in a fixed order, rounded
// to float once; 64-bit tensor offsets.
#ifndef COB
#error "define COB before this file"
#endif
#define PT 2    /* output positions per thread */
#define CU 8    /* input channels whose x values are loaded together */
#define NT 128  /* threads per block */
#define WQ 320  /* (c, k) weight pairs staged at a time (whole channels): WQ*COB*8 = 40 KB */

extern "C" __global__ void __launch_bounds__(NT)
conv1d_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
           int B, int CI, int CO, int L, int OL, int K, int S, int P, int DIL, int G)
{
    __shared__ double2 sw2[WQ * COB / 2];
    double *sw = (double *)sw2;
    const int cig = CI / G, cog = CO / G;
    const int cc = WQ / K; /* input channels per staged chunk */
    if (cc < 1)
        __trap(); /* a kernel this long does not fit: fail loudly (never the case here) */
    const int ncb = (cog + COB - 1) / COB;              /* channel blocks per group */
    const long long nblk = (long long)G * ncb;          /* channel blocks in all */
    const long long nbx = ((long long)OL + NT * PT - 1) / (NT * PT) * nblk;
    for (long long b = blockIdx.y; b < B; b += gridDim.y)
        for (long long bx = blockIdx.x; bx < nbx; bx += gridDim.x) {
            const int cb = (int)(bx % nblk), g = cb / ncb, cg0 = cb % ncb * COB;
            const int nco = min(COB, cog - cg0), co0 = g * cog + cg0; /* channels co0 .. co0+nco-1 */
            const long long ol0 = bx / nblk * (NT * PT) + threadIdx.x;
            const float *xg = x + (b * CI + (long long)g * cig) * L; /* x[b, g*cig, 0] */
            long long base[PT];
            bool ok[PT];
            double acc[PT][COB];
#pragma unroll
            for (int j = 0; j < PT; j++) {
                const long long ol = ol0 + j * NT;
                ok[j] = ol < OL;
                base[j] = ol * S - P;
#pragma unroll
                for (int i = 0; i < COB; i++)
                    acc[j][i] = 0.0;
            }
            for (int c0 = 0; c0 < cig; c0 += cc) {
                const int cn = min(cc, cig - c0);
                __syncthreads(); /* the previous chunk's readers are done */
                for (int e = threadIdx.x; e < cn * K * COB; e += NT) {
                    const int i = e % COB, r = e / COB; /* r = (c - c0)*K + k */
                    sw[e] = i < nco ? (double)w[((long long)(co0 + i) * cig + c0) * K + r] : 0.0;
                }
                __syncthreads();
                for (int cl = 0; cl < cn; cl += CU)
                    for (int k = 0; k < K; k++) {
                        float xf[CU][PT]; /* loaded together: many loads in flight */
#pragma unroll
                        for (int u = 0; u < CU; u++)
#pragma unroll
                            for (int j = 0; j < PT; j++) {
                                const long long il = base[j] + (long long)k * DIL;
                                xf[u][j] = (cl + u < cn && ok[j] && il >= 0 && il < L) /* zero padding */
                                               ? __ldg(xg + (long long)(c0 + cl + u) * L + il) : 0.0f;
                            }
#pragma unroll
                        for (int u = 0; u < CU; u++) {
                            if (cl + u >= cn)
                                break;
                            const double2 *wq = sw2 + ((cl + u) * K + k) * (COB / 2);
#pragma unroll
                            for (int i = 0; i < COB / 2; i++) {
                                const double2 wv = wq[i];
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
                float *yp = y + (b * CO + co0) * OL + ol0 + j * NT; /* y[b, co0, ol] */
#pragma unroll
                for (int i = 0; i < COB; i++)
                    if (i < nco)
                        yp[(long long)i * OL] = (float)acc[j][i];
            }
        }
}
