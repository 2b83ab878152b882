// shared/conv_transpose3d_ref.cuh: the register-blocked transposed 3-D convolution (gather form) of
// the level-1 references 061, 068, 070 and 073. The problem loader pastes it into each of them in
// place of its `#include "shared/conv_transpose3d_ref.cuh"` line; the including file defines COB
// (output channels per thread, even) first.
// transposed 3-D convolution (no bias) as a gather, each output element summing the inputs that
// reach it (no atomics; every output element written once by one thread).
// Method: outputs are split by stride phase (o = r + S*m in each dimension; all outputs of one phase
// use the same kernel taps, so no tap is wasted when S > 1). A 128-thread block owns one (batch,
// block of COB = 16 output channels of one group, phase) and 128 positions of that phase's
// (m_d, m_h / NH, m_w) grid; each thread computes NH = 4 consecutive rows of the phase (same d, w)
// for the COB channels in NH*COB double accumulators (register blocking: each x value loaded
// once feeds COB FMAs, each staged weight feeds NH FMAs). The block stages the weights of its COB
// channels for the phase's valid taps, converted to double, in shared memory laid out
// [ci][tap][co] (broadcast double2 loads), a chunk of input channels at a time.
// Every product of two floats is exact in double (fma), sums in double, one rounding to float.
// Output padding needs no code: the extra rows simply gather what reaches them.
#ifndef COB
#error "define COB before this file"
#endif
#define NH 4        /* output rows per thread */
#define NT 128      /* threads per block */
#define SMEM_D 6144 /* doubles of staged weights: 48 KB of static shared memory */

/* Taps k in [0, K) that reach outputs o = r + S*m (r = phase): (r + P - k*DIL) divisible by S;
 * they are k0, k0 + ks, ... (nk of them), ks = S / gcd(S, DIL). Input index: (r + P - k*DIL)/S + m. */
__device__ __forceinline__ void phase_taps(int r, int P, int S, int K, int DIL, int &k0, int &nk,
                                           int &ks)
{
    k0 = -1;
    nk = 0;
    ks = 1;
    for (int k = 0; k < K; k++)
        if ((r + P - k * DIL) % S == 0) {
            if (k0 < 0)
                k0 = k;
            nk++;
        }
    while ((ks * DIL) % S != 0)
        ks++;
}

extern "C" __global__ void __launch_bounds__(NT)
conv_transpose3d_ref(const float *__restrict__ x, const float *__restrict__ w,
                     float *__restrict__ y, int B, int CI, int CO, int D, int H, int W, int OD,
                     int OH, int OW, int KD, int KH, int KW, int SD, int SH, int SW, int PD, int PH,
                     int PW, int DD, int DH, int DW, int G)
{
    __shared__ __align__(16) double sw[SMEM_D]; /* [ci][valid tap][COB channels] */
    const int cig = CI / G, cog = CO / G, njb = (cog + COB - 1) / COB, ncob = G * njb;
    const int nph = SD * SH * SW;
    const int MD = (OD + SD - 1) / SD, MW = (OW + SW - 1) / SW;
    const int MHG = ((OH + SH - 1) / SH + NH - 1) / NH; /* groups of NH rows of one phase */
    const long long plane = (long long)MD * MHG * MW, npt = (plane + NT - 1) / NT;
    const long long ntiles = (long long)B * ncob * nph * npt, vol = (long long)D * H * W;
    /* tile = (co-block fastest, then phase, then 128 positions of the phase grid, then batch) */
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int cob = (int)(tile % ncob), phase = (int)(tile / ncob % nph);
        const long long p = tile / ncob / nph % npt * NT + threadIdx.x;
        const int b = (int)(tile / ncob / nph / npt);
        const int g = cob / njb, j0 = cob % njb * COB;
        const int rd = phase / (SH * SW), rh = phase / SW % SH, rw = phase % SW;
        int kd0, nkd, ksd, kh0, nkh, ksh, kw0, nkw, ksw;
        phase_taps(rd, PD, SD, KD, DD, kd0, nkd, ksd);
        phase_taps(rh, PH, SH, KH, DH, kh0, nkh, ksh);
        phase_taps(rw, PW, SW, KW, DW, kw0, nkw, ksw);
        const int nt = nkd * nkh * nkw; /* valid taps of this phase */
        const int mw = (int)(p % MW), mh0 = (int)(p / MW % MHG) * NH, md = (int)(p / MW / MHG);
        const int od = rd + SD * md, ow = rw + SW * mw;
        const bool active = p < plane && od < OD && ow < OW;
        double acc[NH][COB];
#pragma unroll
        for (int t = 0; t < NH; t++)
#pragma unroll
            for (int j = 0; j < COB; j++)
                acc[t][j] = 0.0;
        const int cic = nt > 0 ? SMEM_D / (nt * COB) : 0; /* input channels per staged chunk */
        if (nt > 0 && cic == 0)
            __trap(); /* kernel too large for the staging buffer (not the case in any dims set) */
        for (int ci0 = 0; nt > 0 && ci0 < cig; ci0 += cic) {
            const int nc = min(cic, cig - ci0);
            __syncthreads(); /* previous chunk fully consumed */
            const int ne = nc * nt * COB;
            for (int e0 = threadIdx.x; e0 < ne; e0 += 8 * NT) { /* 8 loads in flight per thread */
                float v[8];
#pragma unroll
                for (int u = 0; u < 8; u++) {
                    const int e = e0 + u * NT, j = e % COB, vt = e / COB % nt, c = e / (COB * nt);
                    const int kw = kw0 + vt % nkw * ksw, kh = kh0 + vt / nkw % nkh * ksh;
                    const int kd = kd0 + vt / (nkw * nkh) * ksd;
                    v[u] = e < ne && j0 + j < cog
                               ? w[(((long long)(g * cig + ci0 + c) * cog + j0 + j) * KD + kd) * KH * KW
                                   + kh * KW + kw]
                               : 0.0f;
                }
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (e0 + u * NT < ne)
                        sw[e0 + u * NT] = (double)v[u];
            }
            __syncthreads();
            if (!active)
                continue;
            const float *xc = x + ((long long)b * CI + g * cig + ci0) * vol;
            for (int a = 0; a < nkd; a++) {
                const int id = (rd + PD - (kd0 + a * ksd) * DD) / SD + md;
                if (id < 0 || id >= D)
                    continue;
                for (int bb = 0; bb < nkh; bb++) {
                    const int ih = (rh + PH - (kh0 + bb * ksh) * DH) / SH + mh0; /* rows ih..ih+NH-1 */
                    if (ih + NH <= 0 || ih >= H)
                        continue;
                    bool ok[NH];
#pragma unroll
                    for (int t = 0; t < NH; t++)
                        ok[t] = ih + t >= 0 && ih + t < H;
                    for (int cc = 0; cc < nkw; cc++) {
                        const int iw = (rw + PW - (kw0 + cc * ksw) * DW) / SW + mw;
                        if (iw < 0 || iw >= W)
                            continue;
                        const float *xp = xc + ((long long)id * H + ih) * W + iw;
                        const double2 *wp = (const double2 *)(sw + ((a * nkh + bb) * nkw + cc) * COB);
#pragma unroll 1
                        for (int c = 0; c < nc; c++, xp += vol, wp += nt * COB / 2) {
                            double xv[NH];
#pragma unroll
                            for (int t = 0; t < NH; t++)
                                xv[t] = ok[t] ? (double)__ldg(xp + (long long)t * W) : 0.0;
#pragma unroll
                            for (int jj = 0; jj < COB / 2; jj++) {
                                const double2 wv = wp[jj];
#pragma unroll
                                for (int t = 0; t < NH; t++) {
                                    acc[t][2 * jj] = fma(xv[t], wv.x, acc[t][2 * jj]);
                                    acc[t][2 * jj + 1] = fma(xv[t], wv.y, acc[t][2 * jj + 1]);
                                }
                            }
                        }
                    }
                }
            }
        }
        if (active) {
#pragma unroll
            for (int t = 0; t < NH; t++) {
                const int oh = rh + SH * (mh0 + t);
#pragma unroll
                for (int j = 0; j < COB; j++)
                    if (oh < OH && j0 + j < cog) {
                        const long long oi = (((long long)b * CO + g * cog + j0 + j) * OD + od) * OH * OW + (long long)oh * OW + ow;
                        y[oi] = (float)acc[t][j];
                    }
            }
        }
    }
}

/* macro hygiene: nothing of this file leaks into the including reference */
#undef NH
#undef NT
#undef SMEM_D
#undef COB
