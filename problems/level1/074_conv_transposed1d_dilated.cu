// Reference for level1/074_conv_transposed1d_dilated: transposed convolution, each output element gathering the inputs that reach it (no atomics);
// one thread per output element (grid-stride loop, 64-bit indices), exact float products
// summed in double.
extern "C" __global__ void conv_transpose1d_ref(const float *__restrict__ x,
                                                const float *__restrict__ w, float *__restrict__ y,
                                                int B, int CI, int CO, int L, int OL, int K, int S,
                                                int P, int DIL, int G)
{
    const int cig = CI / G, cog = CO / G;
    const long long cstride = (long long)cog * K; /* w[c+1, j, k] - w[c, j, k] */
    const long long n = (long long)B * CO * OL;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const int ol = (int)(idx % OL);
        const int co = (int)(idx / OL % CO);
        const long long b = idx / ((long long)OL * CO);
        const int g = co / cog, j = co % cog;
        const float *xg = x + (b * CI + (long long)g * cig) * L;      /* x[b, g*cig, 0] */
        const float *wj = w + ((long long)g * cig * cog + j) * K;     /* w[g*cig, j, 0] */
        double acc = 0.0;
        for (int k = 0; k < K; k++) {
            /* input position il contributes to ol = il*S - P + k*DIL */
            const int t = ol + P - k * DIL;
            if (t < 0 || t % S != 0)
                continue;
            const int il = t / S;
            if (il >= L)
                continue;
            for (int c = 0; c < cig; c++)
                acc += (double)xg[(long long)c * L + il] * (double)wj[c * cstride + k];
        }
        y[idx] = (float)acc;
    }
}
// @launch conv_transpose1d_ref<<<min(cdiv(B*CO*OL, 256), 65536), 256>>>(x, weight, y, B, CI, CO, L, OL, K, S, P, DIL, 1);
