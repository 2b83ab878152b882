// shared/depthwise_conv2d_ref.cuh: the direct depthwise 2-D convolution (one thread per output,
// float products summed in double), shared by the level-1 references 082, 083, 084 and 085. The
// problem loader pastes it into each of them in place of its `#include
// "shared/depthwise_conv2d_ref.cuh"` line; their launch lines say how it runs.
/* y[b, co, oh, ow] = sum over c < CI/G, kh, kw of
 *   x[b, g*(CI/G) + c, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW] * w[co, c, kh, kw],
 * g = co / (CO/G); positions outside the input are zero. */
extern "C" __global__ void conv2d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                      float *__restrict__ y, long long B, long long CI, long long H,
                                      long long W, long long CO, long long OH, long long OW,
                                      long long KH, long long KW, long long SH, long long SW,
                                      long long PH, long long PW, long long DH, long long DW,
                                      long long G)
{
    const long long cig = CI / G, cog = CO / G;
    const long long n = B * CO * OH * OW;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ow = idx % OW, oh = idx / OW % OH, co = idx / (OW * OH) % CO;
        const long long b = idx / (OW * OH * CO), g = co / cog;
        double acc = 0.0;
        for (long long c = 0; c < cig; c++) {
            const float *xp = x + ((b * CI + g * cig + c) * H) * W; /* x[b, g*cig + c, 0, 0] */
            const float *wp = w + ((co * cig + c) * KH) * KW;        /* w[co, c, 0, 0] */
            for (long long kh = 0; kh < KH; kh++) {
                const long long ih = oh * SH - PH + kh * DH;
                if (ih < 0 || ih >= H)
                    continue;
                for (long long kw = 0; kw < KW; kw++) {
                    const long long iw = ow * SW - PW + kw * DW;
                    if (iw >= 0 && iw < W)
                        acc += (double)xp[ih * W + iw] * (double)wp[kh * KW + kw];
                }
            }
        }
        y[idx] = (float)acc;
    }
}
