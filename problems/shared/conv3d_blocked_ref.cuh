// shared/conv3d_blocked_ref.cuh: the register-blocked direct 3-D convolution of the level-1
// reference 060 and the level-2 Conv3d chains that opt into it (tools/gen_level2.py, a spec's
// lead "blocked"). The problem loader pastes it in place of an `#include
// "shared/conv3d_blocked_ref.cuh"` line. Stride, padding, dilation and groups as torch. A block
// of NT threads takes one batch entry, COB consecutive output channels of one group and NT*PT
// output positions of the flattened (od, oh, ow) volume; each thread owns PT positions (NT apart,
// so loads and stores coalesce) x COB channels in double accumulators. The block stages those
// channels' weights as double in shared memory, for as many input channels as fit, laid out
// [c][kd][kh][kw][co] and read as broadcast double2 loads, so each x value loaded once (through
// L1) feeds COB FMAs; the x values of CU kernel columns are loaded together to keep many loads
// in flight. Exact float products (float -> double, fma in double), summed in double over
// (c, kd, kh, kw) in order, rounded to float once; 64-bit tensor offsets. Launch:
// grid (min(cdiv(OD*OH*OW, NT*PT) * G * cdiv(CO/G, COB), 2^31-1), min(B, 65535)), NT threads.
// Its macros are undefined at the end (macro hygiene beside the level-2 headers).
#define COB 16  /* output channels per thread (one group's; a partial last block is masked) */
#define PT 2    /* output positions per thread */
#define CU 8    /* kernel columns (kw) whose x values are loaded together */
#define NT 128  /* threads per block */
#define WT 320  /* kernel taps staged at a time (whole channels): WT*COB*8 = 40 KB of shared memory */

extern "C" __global__ void __launch_bounds__(NT)
conv3d_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
           int B, int CI, int CO, int D, int H, int W, int OD, int OH, int OW, int KD, int KH,
           int KW, int SD, int SH, int SW, int PD, int PH, int PW, int DD, int DH, int DW, int G)
{
    __shared__ double2 sw2[WT * COB / 2];
    double *sw = (double *)sw2;
    const int cig = CI / G, cog = CO / G, taps = KD * KH * KW;
    const int cc = WT / taps; /* input channels per staged chunk */
    if (cc < 1)
        __trap(); /* a kernel this large does not fit: fail loudly (never the case here) */
    const int ncb = (cog + COB - 1) / COB;                   /* channel blocks per group */
    const long long nblk = (long long)G * ncb, osp = (long long)OD * OH * OW;
    const long long vol = (long long)D * H * W, nbx = (osp + NT * PT - 1) / (NT * PT) * nblk;
    for (long long b = blockIdx.y; b < B; b += gridDim.y)
        for (long long bx = blockIdx.x; bx < nbx; bx += gridDim.x) {
            const int cb = (int)(bx % nblk), g = cb / ncb, cg0 = cb % ncb * COB;
            const int nco = min(COB, cog - cg0), co0 = g * cog + cg0; /* channels co0 .. co0+nco-1 */
            const long long s0 = bx / nblk * (NT * PT) + threadIdx.x;  /* flattened output position */
            const float *xg = x + (b * CI + (long long)g * cig) * vol; /* x[b, g*cig, 0, 0, 0] */
            int id0[PT], ih0[PT], iw0[PT]; /* input corner of each position's window */
            bool ok[PT];
            double acc[PT][COB];
#pragma unroll
            for (int j = 0; j < PT; j++) {
                const long long s = s0 + j * NT;
                ok[j] = s < osp;
                const int ow = (int)(s % OW), oh = (int)(s / OW % OH), od = (int)(s / ((long long)OW * OH));
                id0[j] = od * SD - PD;
                ih0[j] = oh * SH - PH;
                iw0[j] = ow * SW - PW;
#pragma unroll
                for (int i = 0; i < COB; i++)
                    acc[j][i] = 0.0;
            }
            for (int c0 = 0; c0 < cig; c0 += cc) {
                const int cn = min(cc, cig - c0);
                __syncthreads(); /* the previous chunk's readers are done */
                for (int e = threadIdx.x; e < cn * taps * COB; e += NT) {
                    const int i = e % COB, r = e / COB; /* r = (c - c0)*taps + tap */
                    sw[e] = i < nco ? (double)w[((long long)(co0 + i) * cig + c0) * taps + r] : 0.0;
                }
                __syncthreads();
                const double2 *wq = sw2;
                for (int cl = 0; cl < cn; cl++) {
                    const float *xc = xg + (long long)(c0 + cl) * vol;
                    for (int kd = 0; kd < KD; kd++)
                        for (int kh = 0; kh < KH; kh++) {
                            const float *xrow[PT]; /* x[b, c, id, ih, iw0] */
                            bool rok[PT];
#pragma unroll
                            for (int j = 0; j < PT; j++) {
                                const int id = id0[j] + kd * DD, ih = ih0[j] + kh * DH;
                                rok[j] = ok[j] && id >= 0 && id < D && ih >= 0 && ih < H;
                                xrow[j] = xc + ((long long)id * H + ih) * W + iw0[j];
                            }
                            for (int kw0 = 0; kw0 < KW; kw0 += CU) {
                                float xf[CU][PT]; /* loaded together: many loads in flight */
#pragma unroll
                                for (int u = 0; u < CU; u++)
#pragma unroll
                                    for (int j = 0; j < PT; j++) {
                                        const int iw = iw0[j] + (kw0 + u) * DW;
                                        xf[u][j] = (kw0 + u < KW && rok[j] && iw >= 0 && iw < W)
                                                       ? __ldg(xrow[j] + (kw0 + u) * DW) : 0.0f; /* zero padding */
                                    }
#pragma unroll
                                for (int u = 0; u < CU; u++, wq += COB / 2) {
                                    if (kw0 + u >= KW)
                                        break;
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
                }
            }
#pragma unroll
            for (int j = 0; j < PT; j++) {
                if (!ok[j])
                    continue;
                float *yp = y + (b * CO + co0) * osp + s0 + j * NT; /* y[b, co0, od, oh, ow] */
#pragma unroll
                for (int i = 0; i < COB; i++)
                    if (i < nco)
                        yp[(long long)i * osp] = (float)acc[j][i];
            }
        }
}
#undef COB
#undef PT
#undef CU
#undef NT
#undef WT
