// shared/conv2d_ref.cuh: the register-blocked direct 2-D convolution of the level-1 references 055,
// 056, 062, 063 and 080. The problem loader pastes it into each of them in place of its `#include
// "shared/conv2d_ref.cuh"` line; the including file defines CC (input channels per chunk) first.
// Method: direct 2-D convolution (no bias; stride, padding, dilation and groups as in the
// manifest), register-blocked: a block of 128 threads computes 8 output rows x 64 output columns x
// 16 output channels of one group of one image, a thread 2 x 2 pixels x 16 channels in 64 double
// accumulators. The input channels go in chunks of CC: while the block computes one chunk from
// shared memory (inputs and weights converted to double; weights laid out [c][kh][kw][co] and read
// as double2 broadcasts: a weight load feeds 8 FMAs, an input load 16), cp.async brings the next
// chunk's raw floats (input tile with halo, zero padding as 0) into a second shared buffer. Every
// product of two floats is exact in double and summed in double; each output is stored once as
// float. 64-bit offsets; the grid loops over tiles. The launch line's dynamic shared memory is 12
// bytes * (CC*KH*KW*16 + CC*XR*XC), XR and XC as computed in the kernel (double + float copy of
// each staged value).
// Split over the input channels (level 3, where the maps are small and the channels many: a
// 7 x 7 map of 10 images made 20 blocks, each looping over up to 1,920 channels):
// conv2d_ref_split(..., KS, part) runs each tile KS times, split s summing chunks
// [s*n/KS, (s+1)*n/KS) of the n chunks in the same order as conv2d_ref, and stores its double sums
// in part[s][b][co][oh][ow]; conv2d_split_sum then adds the KS partial sums of each output in
// order s = 0, 1, ... in double and rounds once to float: the same exact products and double sums
// as conv2d_ref, grouped in a fixed order, so a dims set always gives the same outputs. With
// KS = 1 conv2d_ref_split stores floats into y as conv2d_ref does and conv2d_split_sum does
// nothing. Defined when the including file defines CONV2D_SPLIT (conv2d_ref is unchanged).
#ifndef CC
#error "define CC before this file"
#endif

#define COB 16 /* output channels per block (one group's; a partial last block is masked) */
#define TX 32  /* threads along W; a thread has PX columns TX apart (coalesced, conflict-free) */
#define TY 4   /* threads along H; a thread has PY rows TY apart */
#define PX 2
#define PY 2

/* asynchronous 4-byte copy global -> shared; ok == false stores 0 and reads nothing */
__device__ __forceinline__ void copy4(float *dst, const float *src, bool ok)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src),
                 "r"(ok ? 4 : 0));
}

/* The block's tiles, each over its split's chunks (SPLIT false: one split, all chunks, floats to
 * y; SPLIT true: KS splits, double partial sums to part unless KS is 1). */
template <bool SPLIT>
__device__ __forceinline__ void
conv2d_tiles(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
             double *__restrict__ part, int B, int CI, int CO, int H, int W, int OH, int OW, int KH,
             int KW, int SH, int SW, int PH, int PW, int DH, int DW, int G, int KS)
{
    extern __shared__ double2 smem[];
    const int taps = KH * KW, cig = CI / G, cog = CO / G, cbg = (cog + COB - 1) / COB;
    const int XR = (TY * PY - 1) * SH + (KH - 1) * DH + 1; /* input tile rows, halo included */
    const int XC = (TX * PX - 1) * SW + (KW - 1) * DW + 1; /* input tile columns */
    const int NW = CC * taps * COB, NX = CC * XR * XC;     /* weights, inputs of one chunk */
    double *ws = (double *)smem;    /* weights as double [CC][KH][KW][COB] */
    double *xs = ws + NW;           /* inputs as double [CC][XR][XC] */
    float *fw = (float *)(xs + NX); /* next chunk's raw weights in flight [COB][CC][KH*KW] */
    float *fx = fw + NW;            /* next chunk's raw inputs in flight [CC][XR][XC] */
    const int tw = (OW + TX * PX - 1) / (TX * PX), th = (OH + TY * PY - 1) / (TY * PY);
    const long long ntiles = (long long)B * G * cbg * tw * th;
    const int nchunks = (cig + CC - 1) / CC;
    const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
    const long long plane = (long long)H * W;

    for (long long u = blockIdx.x; u < (SPLIT ? ntiles * KS : ntiles); u += gridDim.x) {
        const long long t = SPLIT ? u % ntiles : u;
        const int s = SPLIT ? (int)(u / ntiles) : 0;                   /* the split */
        const int kb = SPLIT ? (int)((long long)s * nchunks / KS) : 0; /* its chunks [kb, ke) */
        const int ke = SPLIT ? (int)((long long)(s + 1) * nchunks / KS) : nchunks;
        /* tile order: co-block fastest (blocks sharing an input tile run together), then column,
         * row, image */
        const int cb = (int)(t % (G * cbg)), tc = (int)(t / (G * cbg) % tw);
        const int tr = (int)(t / ((long long)G * cbg * tw) % th);
        const int b = (int)(t / ((long long)G * cbg * tw * th));
        const int g = cb / cbg, co0 = g * cog + cb % cbg * COB;
        const int nco = min(COB, (g + 1) * cog - co0); /* channels of this block inside group g */
        const int oh0 = tr * TY * PY, ow0 = tc * TX * PX;
        const int ih0 = oh0 * SH - PH, iw0 = ow0 * SW - PW;
        const float *xg = x + ((long long)b * CI + (long long)g * cig) * plane; /* x[b, g*cig] */
        double acc[PY][PX][COB];
#pragma unroll
        for (int py = 0; py < PY; py++)
#pragma unroll
            for (int px = 0; px < PX; px++)
#pragma unroll
                for (int co = 0; co < COB; co++)
                    acc[py][px][co] = 0.0;

        /* step k fetches chunk k (asynchronously) while it computes chunk k - 1 */
        for (int k = kb; k <= ke; k++) {
            if (k > kb) {
                asm volatile("cp.async.wait_all;" ::: "memory");
                __syncthreads(); /* chunk k-1 is in fw/fx for all; ws/xs are no longer read */
                for (int i = threadIdx.x; i < NW; i += blockDim.x) {
                    const int co = i % COB, ct = i / COB; /* ct = c * taps + tap */
                    ws[i] = (double)fw[(co * CC + ct / taps) * taps + ct % taps];
                }
                for (int i = threadIdx.x; i < NX; i += blockDim.x)
                    xs[i] = (double)fx[i];
                __syncthreads(); /* ws/xs hold chunk k-1; fw/fx are free */
            }
            if (k < ke) {
                /* w[co0 + co, c0 + c, kh, kw] -> fw; x[b, g*cig + c0 + c, ih, iw] -> fx, a warp
                 * per row; channels outside the group, zero padding and masked channels as 0 */
                const int c0 = k * CC, ncc = min(CC, cig - c0);
                for (int i = threadIdx.x; i < NW; i += blockDim.x) {
                    const int tap = i % taps, c = i / taps % CC, co = i / (taps * CC);
                    const bool ok = co < nco && c < ncc;
                    const float *src = w + ((long long)(co0 + co) * cig + c0 + c) * taps + tap;
                    copy4(fw + i, ok ? src : w, ok);
                }
                for (int r = ty; r < CC * XR; r += TY) {
                    const int c = r / XR, ih = ih0 + r % XR;
                    const bool rowok = c < ncc && ih >= 0 && ih < H;
                    const float *xr = xg + (long long)(c0 + c) * plane + (long long)ih * W;
                    for (int col = tx; col < XC; col += TX) {
                        const int iw = iw0 + col;
                        const bool ok = rowok && iw >= 0 && iw < W;
                        copy4(fx + r * XC + col, ok ? xr + iw : x, ok);
                    }
                }
                asm volatile("cp.async.commit_group;" ::: "memory");
            }
            if (k == kb)
                continue;
            const int ncc = min(CC, cig - (k - 1) * CC);
            for (int c = 0; c < ncc; c++)
                for (int kh = 0; kh < KH; kh++) {
                    const double *xrow = xs + (c * XR + ty * SH + kh * DH) * XC + tx * SW;
                    const double2 *wrow = (const double2 *)(ws + (c * KH + kh) * KW * COB);
                    for (int kw = 0; kw < KW; kw++) {
                        double xv[PY][PX];
#pragma unroll
                        for (int py = 0; py < PY; py++)
#pragma unroll
                            for (int px = 0; px < PX; px++)
                                xv[py][px] = xrow[py * TY * SH * XC + px * TX * SW + kw * DW];
#pragma unroll
                        for (int j = 0; j < COB / 2; j++) {
                            const double2 wv = wrow[kw * (COB / 2) + j]; /* broadcast */
#pragma unroll
                            for (int py = 0; py < PY; py++)
#pragma unroll
                                for (int px = 0; px < PX; px++) {
                                    acc[py][px][2 * j] = fma(xv[py][px], wv.x, acc[py][px][2 * j]);
                                    acc[py][px][2 * j + 1] =
                                        fma(xv[py][px], wv.y, acc[py][px][2 * j + 1]);
                                }
                        }
                    }
                }
        }
#pragma unroll
        for (int py = 0; py < PY; py++)
#pragma unroll
            for (int px = 0; px < PX; px++) {
                const int oh = oh0 + ty + py * TY, ow = ow0 + tx + px * TX;
                if (oh >= OH || ow >= OW)
                    continue;
                const long long at = (((long long)b * CO + co0) * OH + oh) * OW + ow;
                if (SPLIT && KS > 1) {
                    double *pp = part + (long long)s * B * CO * OH * OW + at;
#pragma unroll
                    for (int co = 0; co < COB; co++)
                        if (co < nco)
                            pp[(long long)co * OH * OW] = acc[py][px][co];
                    continue;
                }
                float *yp = y + at;
#pragma unroll
                for (int co = 0; co < COB; co++)
                    if (co < nco)
                        yp[(long long)co * OH * OW] = (float)acc[py][px][co];
            }
    }
}

extern "C" __global__ void __launch_bounds__(TX * TY, 3)
conv2d_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int B,
           int CI, int CO, int H, int W, int OH, int OW, int KH, int KW, int SH, int SW, int PH,
           int PW, int DH, int DW, int G)
{
    conv2d_tiles<false>(x, w, y, nullptr, B, CI, CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW,
                        G, 1);
}

#ifdef CONV2D_SPLIT
/* part: KS * B * CO * OH * OW doubles (unused when KS is 1) */
extern "C" __global__ void __launch_bounds__(TX * TY, 3)
conv2d_ref_split(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
                 double *__restrict__ part, int B, int CI, int CO, int H, int W, int OH, int OW,
                 int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW, int G, int KS)
{
    conv2d_tiles<true>(x, w, y, part, B, CI, CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G,
                       KS);
}

/* y[i] = float(part[0][i] + part[1][i] + ... + part[KS-1][i]), in that order, for i < n; nothing
 * when KS is 1 (conv2d_ref_split wrote y) */
extern "C" __global__ void conv2d_split_sum(const double *__restrict__ part, float *__restrict__ y,
                                            long long n, int KS)
{
    if (KS <= 1)
        return;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double sum = part[i];
        for (int s = 1; s < KS; s++)
            sum += part[(long long)s * n + i];
        y[i] = (float)sum;
    }
}
#undef CONV2D_SPLIT
#endif

/* macro hygiene: nothing of this file leaks into the including reference */
#undef COB
#undef TX
#undef TY
#undef PX
#undef PY
#undef CC
