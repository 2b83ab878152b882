// Reference for level1/044_avg_pool_1d: AvgPool1d with kernel K, stride S and zero padding P,
// count_include_pad = True (every window is divided by K, padded taps add 0); one thread per
// output element, the window summed in double.
extern "C" __global__ void avgpool1d_ref(const float *__restrict__ x, float *__restrict__ y,
                                         long long NC, long long L, long long OL, int K, int S, int P)
{
    long long total = NC * OL;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long o = i % OL, nc = i / OL;
        const float *row = x + nc * L;
        double s = 0.0;
        for (int k = 0; k < K; k++) {
            long long t = o * S - P + k;
            if (t >= 0 && t < L)
                s += (double)row[t];
        }
        y[i] = (float)(s / (double)K);
    }
}
// @launch avgpool1d_ref<<<min(cdiv(N*C*OL, 256), 65536), 256>>>(x, y, N*C, L, OL, K, S, P);
