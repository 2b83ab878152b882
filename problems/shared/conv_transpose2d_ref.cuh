// shared/conv_transpose2d_ref.cuh: the register-blocked transposed 2-D convolution (gather form) of
// the level-1 references 057, 065, 069 and 064. The problem loader pastes it into each of them in
// place of its `#include "shared/conv_transpose2d_ref.cuh"` line; the including file defines KWF
// (kernel width of the fast path) first.
// Method: ConvTranspose2d (no bias).
// Method: gather form, no atomics: each output element is written once, by one thread, as the
// sum of x[b, ci, ih, iw] * w[ci, j, kh, kw] over the (ci, kh, kw) with oh = ih*SH - PH + kh*DH,
// ow = iw*SW - PW + kw*DW; every product of two floats is exact in double, summed in double
// (fma), rounded to float once. Register blocking: a thread computes R = 4 output columns of
// one row for COB = 16 consecutive output channels of one group (64 accumulators). The columns
// of a row are split by stride phase: phase q holds ow = q + SW*m, and a thread owns R
// consecutive m of one phase, so every one of its columns takes the same taps kw (those with
// q + PW - kw*DW divisible by SW) from R consecutive inputs; taps of other phases cost nothing
// (with SW = 1 there is one phase and the columns are consecutive). Its block (128 threads)
// stages the weights of those channels as double in shared memory, [ci, kh][kw][channel], in
// chunks of input channels, and reads them as broadcast double2 loads. With stride and
// dilation 1 along the row and KW = KWF (every dims set), the thread converts a window of
// R+KWF-1 inputs of a row once and uses each value for up to KWF*COB FMAs; any other stride,
// padding, dilation or groups value takes the general path (same blocking, one index check
// per tap). Each output sums its products in the same order, (ci, kh, kw) ascending, on both
// paths. Output padding needs no code. Grid: x = (column-chunk tiles of 128 threads) x
// (channel blocks, fastest), y = batch; both loops are grid-stride.
#ifndef KWF
#error "define KWF before this file"
#endif
#define COB 16    /* output channels per thread (all in one group): COB*R double accumulators */
#define R 4       /* consecutive output columns per thread */
#define NT 128    /* threads per block */
#define WCAP 4096 /* staged weights per block, in doubles (32 KB of static shared memory) */

/* acc[r][c] += xs[r] * w[c] for the COB weights of one tap; w[] is the same for the whole
   block, so each 16-byte shared load is a broadcast. */
__device__ __forceinline__ void tap(double (&acc)[R][COB], const double (&xs)[R], const double *wk)
{
#pragma unroll
    for (int c = 0; c < COB; c += 2) {
        const double2 wv = *reinterpret_cast<const double2 *>(wk + c);
#pragma unroll
        for (int r = 0; r < R; r++) {
            acc[r][c] = fma(xs[r], wv.x, acc[r][c]);
            acc[r][c + 1] = fma(xs[r], wv.y, acc[r][c + 1]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(NT, 2)
conv_transpose2d_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
                     int B, int CI, int CO, int H, int W, int OH, int OW, int KH, int KW, int SH,
                     int SW, int PH, int PW, int DH, int DW, int G)
{
    __shared__ __align__(16) double ws[WCAP]; /* ws[unit][kw][c], unit = (ci, kh) of one chunk */
    const int cig = CI / G, cog = CO / G, ncb = (cog + COB - 1) / COB, ncbt = G * ncb;
    const int nch = ((OW + SW - 1) / SW + R - 1) / R;    /* chunks of R columns per row phase */
    const long long npos = (long long)OH * SW * nch;     /* thread positions per (b, channel block) */
    const long long nblk = (long long)ncbt * ((npos + NT - 1) / NT);
    const int nu = cig * KH, uc = WCAP / (KW * COB);     /* units in all; units per staged chunk */
    const long long plane = (long long)H * W, oplane = (long long)OH * OW;
    const bool fast = KW == KWF && SW == 1 && DW == 1;
    if (uc == 0)
        __trap(); /* KW > WCAP/COB = 256: not supported */
    int scb = -1, su = -1;                               /* channel block and chunk held in ws */
    for (int b = blockIdx.y; b < B; b += gridDim.y)
        for (long long blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
            const int cb = (int)(blk % ncbt), g = cb / ncb, j0 = (cb % ncb) * COB;
            const long long p = blk / ncbt * NT + threadIdx.x;
            const bool act = p < npos;
            /* position p: row oh, phase q, columns ow0 + SW*r (ow0 = q + SW*R*chunk) */
            const int oh = act ? (int)(p / ((long long)SW * nch)) : 0;
            const int q = act ? (int)(p / nch % SW) : 0, ow0 = act ? q + (int)(p % nch) * R * SW : 0;
            const float *xg = x + ((long long)b * CI + (long long)g * cig) * plane; /* x[b, g*cig] */
            double acc[R][COB];
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int c = 0; c < COB; c++)
                    acc[r][c] = 0.0;
            for (int u0 = 0; u0 < nu; u0 += uc) {
                const int un = min(uc, nu - u0);
                if (cb != scb || u0 != su) { /* stage w[g*cig + u/KH, j0 + c, u%KH, kw] as double */
                    __syncthreads();
                    for (int i = threadIdx.x; i < un * KW * COB; i += NT) {
                        const int c = i % COB, kw = i / COB % KW, u = u0 + i / (COB * KW);
                        const int ci = g * cig + u / KH, kh = u % KH, j = j0 + c;
                        ws[i] = j < cog ? (double)w[(((long long)ci * cog + j) * KH + kh) * KW + kw] : 0.0;
                    }
                    __syncthreads();
                    scb = cb;
                    su = u0;
                }
                if (!act)
                    continue;
                int cl = u0 / KH, kh = u0 % KH;
                for (int ul = 0; ul < un; ul++) {
                    /* input row ih reaches output row oh = ih*SH - PH + kh*DH */
                    const int th = oh + PH - kh * DH;
                    if (th >= 0 && th % SH == 0 && th / SH < H) {
                        const float *xr = xg + cl * plane + (long long)(th / SH) * W; /* x[b, ci, ih] */
                        const double *wu = ws + ul * KW * COB;
                        if (fast) { /* iw = ow + PW - kw: one window of R+KWF-1 inputs serves all taps */
                            double xv[R + KWF - 1];
                            const int base = ow0 + PW - (KWF - 1);
#pragma unroll
                            for (int t = 0; t < R + KWF - 1; t++)
                                xv[t] = base + t >= 0 && base + t < W ? (double)xr[base + t] : 0.0;
#pragma unroll
                            for (int kw = 0; kw < KWF; kw++) {
                                double xs[R];
#pragma unroll
                                for (int r = 0; r < R; r++)
                                    xs[r] = xv[r + KWF - 1 - kw];
                                tap(acc, xs, wu + kw * COB);
                            }
                        } else { /* general: iw*SW = ow + PW - kw*DW, ow = ow0 + SW*r */
                            for (int kw = 0; kw < KW; kw++) {
                                const int tw = ow0 + PW - kw * DW;
                                if (tw % SW != 0)
                                    continue; /* this tap reaches other phases only */
                                const int iw0 = tw / SW; /* exact: inputs iw0 + r */
                                double xs[R];
#pragma unroll
                                for (int r = 0; r < R; r++)
                                    xs[r] = iw0 + r >= 0 && iw0 + r < W ? (double)xr[iw0 + r] : 0.0;
                                tap(acc, xs, wu + kw * COB);
                            }
                        }
                    }
                    if (++kh == KH) {
                        kh = 0;
                        cl++;
                    }
                }
            }
            if (act) {
                float *yp = y + ((long long)b * CO + (long long)g * cog + j0) * oplane + (long long)oh * OW + ow0;
#pragma unroll
                for (int c = 0; c < COB; c++)
#pragma unroll
                    for (int r = 0; r < R; r++)
                        if (j0 + c < cog && ow0 + r * SW < OW)
                            yp[c * oplane + r * SW] = (float)acc[r][c];
            }
        }
}

/* macro hygiene: nothing of this file leaks into the including reference */
#undef COB
#undef R
#undef NT
#undef WCAP
#undef KWF
