// Reference for level1/086_conv_depthwise_separable2d: a depthwise KxK convolution
// (groups = CI) into a double scratch tensor, then a 1x1 convolution CI -> CO; no biases.
// Float products are exact in double (fma in double), sums in double; the intermediate is
// never rounded to float, only the output is, once.
// depthwise_ref: one block per 256-wide piece of one output row (b, c, oh); each thread one
// output, its K*K taps read through L1, written coalesced.
// pointwise_ref (register-blocked): a block of NT threads takes one batch entry, COB
// consecutive output channels and NT*PT pixels; each thread owns PT pixels (NT apart, so
// loads and stores coalesce) x COB channels in double accumulators. The block stages
// those channels' weights as double in shared memory, laid out [c][co] and read as
// broadcast double2 loads, so each intermediate value loaded once feeds COB FMAs; the
// values of CU channels are loaded together to keep many loads in flight. 64-bit tensor
// offsets.

/* t[b, c, oh, ow] = sum over kh, kw of x[b, c, oh*S - P + kh*DIL, ow*S - P + kw*DIL] *
 * wd[c, 0, kh, kw] (zero outside), kept in double. */
extern "C" __global__ void __launch_bounds__(256)
depthwise_ref(const float *__restrict__ x, const float *__restrict__ wd, double *__restrict__ t,
              int B, int C, int H, int W, int OH, int OW, int K, int S, int P, int DIL)
{
    const long long ntw = (OW + 255) / 256, nrow = (long long)B * C * OH;
    for (long long bx = blockIdx.x; bx < nrow * ntw; bx += gridDim.x) {
        const long long row = bx / ntw;                  /* (b*C + c)*OH + oh */
        const int ow = (int)(bx % ntw) * 256 + threadIdx.x;
        const int oh = (int)(row % OH);
        const long long bc = row / OH;                   /* b*C + c */
        if (ow >= OW)
            continue;
        const float *xp = x + bc * H * W;               /* x[b, c, 0, 0] */
        const float *wc = wd + (bc % C) * K * K;        /* wd[c, 0, 0, 0] */
        double acc = 0.0;
        for (int kh = 0; kh < K; kh++) {
            const int ih = oh * S - P + kh * DIL;
            if (ih < 0 || ih >= H)
                continue;
            for (int kw = 0; kw < K; kw++) {
                const int iw = ow * S - P + kw * DIL;
                if (iw >= 0 && iw < W)
                    acc = fma((double)__ldg(xp + (long long)ih * W + iw), (double)__ldg(wc + kh * K + kw), acc);
            }
        }
        t[row * OW + ow] = acc;
    }
}

/* y[b, co, p] = sum over c of t[b, c, p] * wp[co, c, 0, 0]. */
#define COB 16  /* output channels per thread (a partial last block is masked) */
#define PT 2    /* pixels per thread */
#define CU 8    /* input channels whose values are loaded together */
#define NT 128  /* threads per block */
#define WC 256  /* input channels staged at a time: WC*COB*8 = 32 KB of shared memory */

extern "C" __global__ void __launch_bounds__(NT)
pointwise_ref(const double *__restrict__ t, const float *__restrict__ w, float *__restrict__ y,
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
            const double *tb = t + b * CI * HW + p0; /* t[b, 0, p0] */
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
                    double xf[CU][PT]; /* loaded together: many loads in flight */
#pragma unroll
                    for (int u = 0; u < CU; u++)
#pragma unroll
                        for (int j = 0; j < PT; j++)
                            xf[u][j] = (cl + u < cn && ok[j]) ? __ldg(tb + (long long)(c0 + cl + u) * HW + j * NT) : 0.0;
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
// @scratch mid f64[B*CI*OH*OW]
// @launch depthwise_ref<<<min(B*CI*OH*cdiv(OW, 256), 2147483647), 256>>>(x, w_depthwise, mid, B, CI, H, W, OH, OW, K, S, P, DIL);
// @launch pointwise_ref<<<dim3(min(cdiv(OH*OW, 256) * cdiv(CO, 16), 2147483647), min(B, 65535)), 128>>>(mid, w_pointwise, y, B, CI, CO, OH*OW);
