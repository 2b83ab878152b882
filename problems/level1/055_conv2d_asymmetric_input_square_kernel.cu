// Reference for level1/055_conv2d_asymmetric_input_square_kernel: direct convolution;
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
extern "C" __global__ void conv2d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                      float *__restrict__ y, int B, int CI, int CO, int H, int W,
                                      int OH, int OW, int KH, int KW, int SH, int SW, int PH, int PW,
                                      int DH, int DW, int G)
{
    const int cig = CI / G, cog = CO / G;
    const long long plane = (long long)H * W, taps = (long long)KH * KW;
    const long long n = (long long)B * CO * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const int ow = (int)(idx % OW);
        const int oh = (int)(idx / OW % OH);
        const int co = (int)(idx / ((long long)OW * OH) % CO);
        const long long b = idx / ((long long)OW * OH * CO);
        const int g = co / cog;
        const float *xg = x + (b * CI + (long long)g * cig) * plane; /* x[b, g*cig, 0, 0] */
        const float *wo = w + (long long)co * cig * taps;            /* w[co, 0, 0, 0] */
        double acc = 0.0;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = oh * SH - PH + kh * DH;
            if (ih < 0 || ih >= H)
                continue; /* zero padding */
            for (int kw = 0; kw < KW; kw++) {
                const int iw = ow * SW - PW + kw * DW;
                if (iw < 0 || iw >= W)
                    continue;
                const float *xp = xg + (long long)ih * W + iw;
                const float *wp = wo + (long long)kh * KW + kw;
                for (int c = 0; c < cig; c++)
                    acc += (double)xp[c * plane] * (double)wp[c * taps];
            }
        }
        y[idx] = (float)acc;
    }
}
// @launch conv2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 65536), 256>>>(x, weight, y, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, DIL, DIL, G);
