// Reference for level1/086_conv_depthwise_separable2d: a depthwise KxK convolution
// (groups = CI) into a double scratch tensor, then a 1x1 convolution CI -> CO; no biases.
// Float products are exact in double (fma in double), sums in double; the intermediate is
// never rounded to float, only the output is, once.
// depthwise_ref: one block per 256-wide piece of one output row (b, c, oh); each thread one
// output, its K*K taps read through L1, written coalesced.
// pointwise_ref: the kernel of shared/pointwise_ref.cuh on the double intermediate (its header
// describes the method).

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
#define PW_IN double
#include "shared/pointwise_ref.cuh"
// @scratch mid f64[B*CI*OH*OW]
// @launch depthwise_ref<<<min(B*CI*OH*cdiv(OW, 256), 2147483647), 256>>>(x, w_depthwise, mid, B, CI, H, W, OH, OW, K, S, P, DIL);
// @launch pointwise_ref<<<dim3(min(cdiv(OH*OW, 256) * cdiv(CO, 16), 2147483647), min(B, 65535)), 128>>>(mid, w_pointwise, y, B, CI, CO, OH*OW);
