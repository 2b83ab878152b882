// Reference for level1/076_conv1d_dilated_strided: direct 1-D convolution (no
// padding, no bias); one thread per output element in a grid-stride loop with
// 64-bit indices, float products summed in double.
extern "C" __global__ void conv1d_ref(const float *__restrict__ x, const float *__restrict__ w,
                                      float *__restrict__ y, long long B, long long CI, long long L,
                                      long long CO, long long OL, long long K, long long S,
                                      long long P, long long DIL)
{
    const long long n = B * CO * OL;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += step) {
        const long long ol = idx % OL, co = idx / OL % CO, b = idx / (OL * CO);
        double acc = 0.0;
        for (long long c = 0; c < CI; c++) {
            const float *xr = x + (b * CI + c) * L;      /* x[b, c, :] */
            const float *wr = w + (co * CI + c) * K;     /* w[co, c, :] */
            for (long long k = 0; k < K; k++) {
                const long long il = ol * S - P + k * DIL;
                if (il >= 0 && il < L) /* zero padding outside */
                    acc += (double)xr[il] * (double)wr[k];
            }
        }
        y[idx] = (float)acc;
    }
}
// @launch conv1d_ref<<<min(cdiv(B*CO*OL, 256), 1048576), 256>>>(x, weight, y, B, CI, L, CO, OL, K, S, 0, DIL);
