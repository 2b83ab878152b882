// shared/conv3d_direct_ref.cuh: the direct 3-D convolution (one thread per output, exact float
// products summed in double), shared by the level-1 references 054, 059 and 066. The problem loader
// pastes it into each of them in place of its `#include "shared/conv3d_direct_ref.cuh"` line; their
// launch lines say how it runs.
extern "C" __global__ void conv3d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                      float *__restrict__ y, int B, int CI, int CO, int D, int H,
                                      int W, int OD, int OH, int OW, int KD, int KH, int KW,
                                      int SD, int SH, int SW, int PD, int PH, int PW,
                                      int DD, int DH, int DW, int G)
{
    const int cig = CI / G, cog = CO / G;
    const long long vol = (long long)D * H * W, taps = (long long)KD * KH * KW;
    const long long n = (long long)B * CO * OD * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const int ow = (int)(idx % OW);
        const int oh = (int)(idx / OW % OH);
        const int od = (int)(idx / ((long long)OW * OH) % OD);
        const int co = (int)(idx / ((long long)OW * OH * OD) % CO);
        const long long b = idx / ((long long)OW * OH * OD * CO);
        const int g = co / cog;
        const float *xg = x + (b * CI + (long long)g * cig) * vol; /* x[b, g*cig, 0, 0, 0] */
        const float *wo = w + (long long)co * cig * taps;          /* w[co, 0, 0, 0, 0] */
        double acc = 0.0;
        for (int kd = 0; kd < KD; kd++) {
            const int id = od * SD - PD + kd * DD;
            if (id < 0 || id >= D)
                continue; /* zero padding */
            for (int kh = 0; kh < KH; kh++) {
                const int ih = oh * SH - PH + kh * DH;
                if (ih < 0 || ih >= H)
                    continue;
                for (int kw = 0; kw < KW; kw++) {
                    const int iw = ow * SW - PW + kw * DW;
                    if (iw < 0 || iw >= W)
                        continue;
                    const float *xp = xg + ((long long)id * H + ih) * W + iw;
                    const float *wp = wo + ((long long)kd * KH + kh) * KW + kw;
                    for (int c = 0; c < cig; c++)
                        acc += (double)xp[c * vol] * (double)wp[c * taps];
                }
            }
        }
        y[idx] = (float)acc;
    }
}
