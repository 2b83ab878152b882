// Reference for level1/067_conv1d: direct convolution;
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
extern "C" __global__ void conv1d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                      float *__restrict__ y, int B, int CI, int CO, int L, int OL,
                                      int K, int S, int P, int DIL, int G)
{
    const int cig = CI / G, cog = CO / G;
    const long long n = (long long)B * CO * OL;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const int ol = (int)(idx % OL);
        const int co = (int)(idx / OL % CO);
        const long long b = idx / ((long long)OL * CO);
        const int g = co / cog;
        const float *xg = x + (b * CI + (long long)g * cig) * L;  /* x[b, g*cig, 0] */
        const float *wo = w + (long long)co * cig * K;            /* w[co, 0, 0] */
        double acc = 0.0;
        for (int k = 0; k < K; k++) {
            const int il = ol * S - P + k * DIL;
            if (il < 0 || il >= L)
                continue; /* zero padding */
            for (int c = 0; c < cig; c++)
                acc += (double)xg[(long long)c * L + il] * (double)wo[(long long)c * K + k];
        }
        y[idx] = (float)acc;
    }
}
// @launch conv1d_ref<<<min(cdiv(B*CO*OL, 256), 65536), 256>>>(x, weight, y, B, CI, CO, L, OL, K, S, P, DIL, G);
