// Reference for level1/045_avg_pool_2d: AvgPool2d with a K x K window, stride K (non-overlapping
// windows), no padding; one thread per output element, the window summed in double. The input
// has 4.3e9 elements: all indices are 64-bit.
extern "C" __global__ void avgpool2d_ref(const float *__restrict__ x, float *__restrict__ y,
                                         long long NC, long long H, long long W, long long OH,
                                         long long OW, int K)
{
    long long total = NC * OH * OW;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long ow = i % OW, oh = (i / OW) % OH, nc = i / (OW * OH);
        const float *win = x + nc * H * W + oh * K * W + ow * K;
        double s = 0.0;
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++)
                s += (double)win[(long long)kh * W + kw];
        y[i] = (float)(s / ((double)K * (double)K));
    }
}
// @launch avgpool2d_ref<<<min(cdiv(N*C*OH*OW, 256), 65536), 256>>>(x, y, N*C, H, W, OH, OW, K);
