// shared/conv_transpose2d_direct_ref.cuh: the transposed 2-D convolution as a per-output gather
// (one thread per output, exact float products summed in double), shared by the level-1 references
// 071 and 075. The problem loader pastes it into each of them in place of its `#include
// "shared/conv_transpose2d_direct_ref.cuh"` line; their launch lines say how it runs.
extern "C" __global__ void conv_transpose2d_ref(const float *__restrict__ x,
                                                const float *__restrict__ w, float *__restrict__ y,
                                                int B, int CI, int CO, int H, int W, int OH, int OW,
                                                int KH, int KW, int SH, int SW, int PH, int PW,
                                                int DH, int DW, int G)
{
    const int cig = CI / G, cog = CO / G;
    const long long plane = (long long)H * W, taps = (long long)KH * KW;
    const long long cstride = (long long)cog * taps; /* w[c+1, j, kh, kw] - w[c, j, kh, kw] */
    const long long n = (long long)B * CO * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const int ow = (int)(idx % OW);
        const int oh = (int)(idx / OW % OH);
        const int co = (int)(idx / ((long long)OW * OH) % CO);
        const long long b = idx / ((long long)OW * OH * CO);
        const int g = co / cog, j = co % cog;
        const float *xg = x + (b * CI + (long long)g * cig) * plane;   /* x[b, g*cig, 0, 0] */
        const float *wj = w + ((long long)g * cig * cog + j) * taps;   /* w[g*cig, j, 0, 0] */
        double acc = 0.0;
        for (int kh = 0; kh < KH; kh++) {
            /* input row ih contributes to oh = ih*SH - PH + kh*DH */
            const int th = oh + PH - kh * DH;
            if (th < 0 || th % SH != 0)
                continue;
            const int ih = th / SH;
            if (ih >= H)
                continue;
            for (int kw = 0; kw < KW; kw++) {
                const int tw = ow + PW - kw * DW;
                if (tw < 0 || tw % SW != 0)
                    continue;
                const int iw = tw / SW;
                if (iw >= W)
                    continue;
                const float *xp = xg + (long long)ih * W + iw;
                const float *wp = wj + (long long)kh * KW + kw;
                for (int c = 0; c < cig; c++)
                    acc += (double)xp[c * plane] * (double)wp[c * cstride];
            }
        }
        y[idx] = (float)acc;
    }
}
