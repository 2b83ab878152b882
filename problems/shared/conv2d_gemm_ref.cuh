// shared/conv2d_gemm_ref.cuh: 2-D convolution as an implicit matrix product on the FP64 tensor
// cores (mm_step of shared/matmul_tiled_ref.cuh, which must come first). EXPERIMENTAL: no
// reference launches it yet. tools/problems/unsplit_convs.py --gemm puts it in place of every
// convolution of a level-3 reference, and tests/gpu/test_conv_split.sh verifies that candidate
// against the reference (its verdict, and its time beside the reference's); a reference
// switches to it only once the GPU has shown both (docs/LEVEL3.md, "Convolutions on the tensor
// cores").
// Same contract and arguments as conv2d_ref (no bias; stride, padding, dilation, groups; every
// product of two floats exact in double, summed in double, rounded once to float). Per group g
// the convolution is C = A B^T with C[m][n] = y[b, g*cog + n, oh, ow] for m = (b*OH + oh)*OW + ow,
// A[m][k] = x[b, g*cig + ci, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW] (0 in the padding) for
// k = (ci*KH + kh)*KW + kw, and B^T[n][k] = w[g*cog + n, ci, kh, kw], which is w's own layout.
// Block (blockIdx.x, blockIdx.y, blockIdx.z = g) of 16 x 16 threads computes C's 64 x 64 tile as
// mm_tile does: 32 terms of k staged in shared memory as double while the next 32 load, warp w
// owning rows 32*(w/4).. and columns 16*(w%4).. of the tile on m8n8k4 FP64 MMAs. A thread loads
// one row of A, 8 consecutive terms of k a step (4 threads a row; a warp's loads of one term
// are 8 neighbouring output pixels), keeping the row's image, first input row and column across
// the k loop and stepping (ci, kh, kw) from term to term (B * CI and OH * OW below 2^31). Launch:
//   conv2d_gemm_ref<<<dim3(cdiv(B*OH*OW, 64), cdiv(CO/G, 64), G), dim3(16, 16)>>>(x, w, y, B, CI,
//       CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G)
#ifndef MM_TILE
#error "include shared/matmul_tiled_ref.cuh before this file"
#endif
#define CG_OUT (-(1 << 30)) /* a row past M: every input row it would read is outside */

extern "C" __global__ void __launch_bounds__(256, 2)
conv2d_gemm_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
                int B, int CI, int CO, int H, int W, int OH, int OW, int KH, int KW, int SH,
                int SW, int PH, int PW, int DH, int DW, int G)
{
    __shared__ double As[MM_TILE * MM_AS]; /* As[r][c] = A[row0 + r][k0 + c] */
    __shared__ double Bs[MM_K * MM_BS];    /* Bs[r][c] = B[k0 + r][col0 + c] */
    const int t = threadIdx.y * 16 + threadIdx.x, wp = t >> 5, lane = t & 31;
    const int gr = lane >> 2, tg = lane & 3, wr = 32 * (wp >> 2), wc = 16 * (wp & 3);
    const int cig = CI / G, cog = CO / G, taps = KH * KW, g = blockIdx.z;
    const long long plane = (long long)H * W, opix = (long long)OH * OW;
    const long long M = (long long)B * opix, K = (long long)cig * taps;
    const long long row0 = (long long)blockIdx.x * MM_TILE;
    const int col0 = blockIdx.y * MM_TILE;
    const float *wg = w + (long long)g * cog * K; /* B^T of group g: cog x K */

    /* thread t loads row m = row0 + t/4 of A, 8 consecutive terms (t%4)*8.. of each k step: its
     * image's input, first input row and column (a row past M reads nothing) */
    const long long m = row0 + t / 4;
    const int img = m < M ? (int)(m / opix) : 0, r = m < M ? (int)(m % opix) : 0;
    const int ih0 = m < M ? r / OW * SH - PH : CG_OUT, iw0 = m < M ? r % OW * SW - PW : CG_OUT;
    const float *xg = x + ((long long)img * CI + (long long)g * cig) * plane;
    double acc[4][2][2] = {};
    double ra[8], rb[8];
    for (long long k0 = 0; k0 < K + MM_K; k0 += MM_K) {
        if (k0 > 0) { /* the tile loaded last step goes to shared memory and is multiplied */
#pragma unroll
            for (int e = 0; e < 8; e++) {
                As[(t / 4) * MM_AS + t % 4 * 8 + e] = ra[e];
                Bs[(t % MM_K) * MM_BS + t / MM_K + 8 * e] = rb[e];
            }
            __syncthreads();
        }
        if (k0 < K) { /* this step's loads fly while the last one's tile is multiplied */
            long long k = k0 + t % 4 * 8;
            int ci = (int)(k / taps), tap = (int)(k % taps), kh = tap / KW, kw = tap % KW;
#pragma unroll
            for (int e = 0; e < 8; e++, k++) {
                const int ih = ih0 + kh * DH, iw = iw0 + kw * DW;
                const bool in = k < K && ih >= 0 && ih < H && iw >= 0 && iw < W;
                ra[e] = in ? (double)xg[(long long)ci * plane + (long long)ih * W + iw] : 0.0;
                if (++kw == KW) { /* the next term: the next tap, or the next channel's first */
                    kw = 0;
                    if (++kh == KH)
                        kh = 0, ci++;
                }
            }
            const long long kb = k0 + t % MM_K;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const int n = col0 + t / MM_K + 8 * e;
                rb[e] = kb < K && n < cog ? (double)wg[(long long)n * K + kb] : 0.0;
            }
        }
        if (k0 == 0)
            continue;
        mm_step(acc, As, Bs, wr, wc, gr, tg);
        __syncthreads();
    }
    mm_each_out(acc, wr, wc, gr, tg, [&](int r, int c, double v) {
        const long long mo = row0 + r;
        const int n = col0 + c;
        if (mo < M && n < cog)
            y[((mo / opix) * CO + (long long)g * cog + n) * opix + mo % opix] = (float)v;
    });
}

#undef CG_OUT
