// Reference for level1/041_max_pool_1d: MaxPool1d with kernel K, stride S, padding P (implicit
// -inf) and dilation DIL; one thread per output element in a grid-stride loop with 64-bit
// indices. Out-of-range window taps are skipped, which equals padding with -inf.
extern "C" __global__ void maxpool1d_ref(const float *__restrict__ x, float *__restrict__ y,
                                         long long NC, long long L, long long OL, int K, int S,
                                         int P, int DIL)
{
    long long total = NC * OL;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long o = i % OL, nc = i / OL;
        const float *row = x + nc * L;
        float m = -__int_as_float(0x7f800000);
        for (int k = 0; k < K; k++) {
            long long t = o * S - P + (long long)k * DIL;
            if (t < 0 || t >= L)
                continue;
            float v = row[t];
            if (v > m || v != v)
                m = v;
        }
        y[i] = m;
    }
}
// @launch maxpool1d_ref<<<min(cdiv(N*C*OL, 256), 65536), 256>>>(x, y, N*C, L, OL, K, S, P, DIL);
