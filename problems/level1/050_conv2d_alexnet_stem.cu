// Reference for level1/050_conv2d_alexnet_stem: Conv2d (cross-correlation) with bias, kernel
// K, stride S, zero padding P, no groups or dilation. One thread per output element in a
// grid-stride loop; the CI*K*K products and the bias are accumulated in double.
extern "C" __global__ void conv2d_ref(const float *__restrict__ x, const float *__restrict__ weight,
                                      const float *__restrict__ bias, float *__restrict__ y,
                                      long long B, long long CI, long long H, long long W,
                                      long long CO, long long OH, long long OW, int K, int S, int P)
{
    long long total = B * CO * OH * OW;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long ow = i % OW, oh = (i / OW) % OH, co = (i / (OW * OH)) % CO;
        long long b = i / (OW * OH * CO);
        double s = (double)bias[co];
        for (long long ci = 0; ci < CI; ci++) {
            const float *plane = x + (b * CI + ci) * H * W;
            const float *wk = weight + (co * CI + ci) * K * K;
            for (int kh = 0; kh < K; kh++) {
                long long ih = oh * S - P + kh;
                if (ih < 0 || ih >= H)
                    continue;
                for (int kw = 0; kw < K; kw++) {
                    long long iw = ow * S - P + kw;
                    if (iw >= 0 && iw < W)
                        s += (double)plane[ih * W + iw] * (double)wk[kh * K + kw];
                }
            }
        }
        y[i] = (float)s;
    }
}
// @launch conv2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 65536), 256>>>(x, weight, bias, y, B, CI, H, W, CO, OH, OW, K, S, P);
