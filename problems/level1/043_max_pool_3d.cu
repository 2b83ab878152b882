// Reference for level1/043_max_pool_3d: MaxPool3d with a cubic kernel K, stride S, padding P
// (implicit -inf) and dilation DIL; one thread per output element in a grid-stride loop with
// 64-bit indices. Out-of-range window taps are skipped, which equals padding with -inf.
extern "C" __global__ void maxpool3d_ref(const float *__restrict__ x, float *__restrict__ y,
                                         long long NC, long long D, long long H, long long W,
                                         long long OD, long long OH, long long OW, int K, int S,
                                         int P, int DIL)
{
    long long total = NC * OD * OH * OW;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long ow = i % OW, oh = (i / OW) % OH, od = (i / (OW * OH)) % OD;
        long long nc = i / (OW * OH * OD);
        const float *vol = x + nc * D * H * W;
        float m = -__int_as_float(0x7f800000);
        for (int kd = 0; kd < K; kd++) {
            long long id = od * S - P + (long long)kd * DIL;
            if (id < 0 || id >= D)
                continue;
            for (int kh = 0; kh < K; kh++) {
                long long ih = oh * S - P + (long long)kh * DIL;
                if (ih < 0 || ih >= H)
                    continue;
                for (int kw = 0; kw < K; kw++) {
                    long long iw = ow * S - P + (long long)kw * DIL;
                    if (iw < 0 || iw >= W)
                        continue;
                    float v = vol[(id * H + ih) * W + iw];
                    if (v > m || v != v)
                        m = v;
                }
            }
        }
        y[i] = m;
    }
}
// @launch maxpool3d_ref<<<min(cdiv(N*C*OD*OH*OW, 256), 65536), 256>>>(x, y, N*C, D, H, W, OD, OH, OW, K, S, P, DIL);
