// Reference for level1/046_avg_pool_3d: AvgPool3d with a cubic kernel K, stride S and zero
// padding P, count_include_pad = True (every window is divided by K^3, padded taps add 0); one
// thread per output element, the window summed in double.
extern "C" __global__ void avgpool3d_ref(const float *__restrict__ x, float *__restrict__ y,
                                         long long NC, long long D, long long H, long long W,
                                         long long OD, long long OH, long long OW, int K, int S, int P)
{
    long long total = NC * OD * OH * OW;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long ow = i % OW, oh = (i / OW) % OH, od = (i / (OW * OH)) % OD;
        long long nc = i / (OW * OH * OD);
        const float *vol = x + nc * D * H * W;
        double s = 0.0;
        for (int kd = 0; kd < K; kd++) {
            long long id = od * S - P + kd;
            if (id < 0 || id >= D)
                continue;
            for (int kh = 0; kh < K; kh++) {
                long long ih = oh * S - P + kh;
                if (ih < 0 || ih >= H)
                    continue;
                for (int kw = 0; kw < K; kw++) {
                    long long iw = ow * S - P + kw;
                    if (iw >= 0 && iw < W)
                        s += (double)vol[(id * H + ih) * W + iw];
                }
            }
        }
        y[i] = (float)(s / ((double)K * (double)K * (double)K));
    }
}
// @launch avgpool3d_ref<<<min(cdiv(N*C*OD*OH*OW, 256), 65536), 256>>>(x, y, N*C, D, H, W, OD, OH, OW, K, S, P);
